"""Expectation kernels shared by the single-ranking model and the batch (plugin) path.

Both work on stacked uncoupled chains (one block per query) and call the
chain algebra of :mod:`irmeasures_markov.core`.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.core._birth_death import birth_death_discounted_visits
from irmeasures_markov.core._birth_death_order1 import birth_death_average_reward

__all__ = ["GROUP_RANKS", "gain_and_steps_flat", "order1_flat"]


#: ranks per call of the visit-count formula (its LAPACK path holds ~15 arrays of this size)
GROUP_RANKS = 1 << 17


def gain_and_steps_flat(fwd: np.ndarray, bwd: np.ndarray, diag: np.ndarray, gain: np.ndarray, offsets: np.ndarray,
                        loss: float, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E[Σ g], E[H]) per block of stacked uncoupled chains (visit-count formula, O(total)).

    ``fwd`` must be 0 at every block's last rank and ``bwd`` 0 at every first
    rank; ``extra[b]`` are expected tail visits per visit of block b's last rank.
    Queries are taken in groups of about :data:`GROUP_RANKS` ranks, which
    bounds the memory of the solves.
    """
    lengths = np.diff(offsets)
    nq = lengths.size
    eg = np.zeros(nq)
    eh = np.zeros(nq)
    extra = np.asarray(extra, dtype=np.float64)
    group = offsets[:-1] // GROUP_RANKS
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(group)) + 1, [nq]]) if nq else np.zeros(1, np.intp)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        lo, hi = int(offsets[a]), int(offsets[b])
        sub = offsets[a:b + 1] - lo
        nonempty = np.diff(sub) > 0
        if not nonempty.any():
            continue
        starts = sub[:-1][nonempty]
        visits, discounted = birth_death_discounted_visits(fwd[lo:hi], bwd[lo:hi], starts, 1.0 - loss,
                                                           diag=diag[lo:hi])
        eg[a:b][nonempty] = np.add.reduceat(gain[lo:hi] * discounted, starts)
        eh[a:b][nonempty] = np.add.reduceat(visits, starts) + visits[sub[1:][nonempty] - 1] * extra[a:b][nonempty]
    return eg, eh


def order1_flat(forward: np.ndarray, backward: np.ndarray, gain: np.ndarray, offsets: np.ndarray,
                loss: float) -> np.ndarray:
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
