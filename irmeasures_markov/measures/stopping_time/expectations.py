"""Expectation kernels shared by the single-ranking model and the batch (plugin) path.

Both work on stacked uncoupled chains (one block per query) and call the
chain algebra of :mod:`irmeasures_markov.core.birth_death`.
"""
from __future__ import annotations

import numpy as np

from ...core.birth_death import birth_death_average_reward, birth_death_discounted_visits


def _gain_and_steps_flat(fwd, bwd, diag, gain, offsets, loss, extra):
    """(E[Σ g], E[H]) per block of stacked uncoupled chains (visit-count formula, O(total)).

    ``fwd`` must be 0 at every block's last rank and ``bwd`` 0 at every first
    rank; ``extra[b]`` are expected tail visits per visit of block b's last rank.
    """
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    starts = offsets[:-1][nonempty]
    visits, discounted = birth_death_discounted_visits(fwd, bwd, starts, 1.0 - loss, diag=diag)
    nq = lengths.size
    eg = np.zeros(nq)
    eh = np.zeros(nq)
    eg[nonempty] = np.add.reduceat(gain * discounted, starts)
    eh[nonempty] = np.add.reduceat(visits, starts)
    eh[nonempty] += visits[offsets[1:][nonempty] - 1] * np.asarray(extra, dtype=np.float64)[nonempty]
    return eg, eh


def _order1_flat(forward, backward, gain, offsets, loss):
    """E[Σ g / H] per block of stacked uncoupled chains (generating function, all blocks per node)."""
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    out = np.zeros(lengths.size)
    if gain.size == 0:
        return out
    starts = offsets[:-1][nonempty]
    terms = birth_death_average_reward(forward, backward, gain, starts, 1.0 - loss)
    out[nonempty] = np.add.reduceat(terms, starts)
    return out
