r"""Subtraction-free elimination for nearly non-absorbing birth–death chains.

The LAPACK path of :mod:`.birth_death_lapack` eliminates
:math:`M = D - zQ` with pivots such as :math:`\delta_i = 1 - p_{i-1} q_i /
\delta_{i-1}` and takes the diagonal of :math:`M^{-1}` from
:math:`\delta_i + \epsilon_i - M_{ii}`.  Both subtract numbers of similar size
when the chain is rarely absorbed (e.g. :math:`p + q = 1` with the drift
towards the top and ``top='forward'``: the walk only stops past rank N, after
about :math:`(q/p)^N` steps): relative errors then grow like the expected
absorption time, and the pivots can even vanish in floating point although the
exact ones do not.

Here every quantity is a ratio of sums of nonnegative terms, so it keeps full
relative precision however small it is.  With :math:`w = 1 - z` given
directly (so :math:`z` arbitrarily close to 1 is represented exactly) and the
*slack* :math:`\sigma_i = D_{ii} - p_i - q_i \ge 0` of each row (the stop
probability when :math:`D = I`), the row sum of :math:`M` at :math:`z` is
:math:`\sigma_i + w (p_i + q_i)`, and for a start state :math:`s`:

- :math:`\bar a_j = 1 - a_j`, :math:`a_j` the (z-weighted) probability of
  ever stepping from :math:`j+1` down to :math:`j`:
  :math:`\bar a_j = (\sigma' + w(p' + q') + z p' \bar a_{j+1}) / d_j`,
  :math:`d_j = \sigma' + q' + w p' + z p' \bar a_{j+1}` (primes: state j+1);
- :math:`\bar b_j`, :math:`b_j` the same from :math:`j-1` up to :math:`j`;
- the escape probability :math:`e_j = 1/N_{jj} = \sigma_j + w(p_j + q_j) + z p_j
  \bar a_j + z q_j \bar b_j`;
- :math:`h_j = N_{sj} / N_{jj}`, the probability of ever reaching :math:`j`
  from :math:`s`, a product of :math:`b` (right of :math:`s`) or :math:`a`
  (left of it);
- :math:`g_j = \psi_j / N_{jj}`, :math:`\psi = M^{-1}\sigma` (absorption),
  from the analogous sums :math:`\alpha, \beta` of absorption before
  returning.

Costs O(n) per node, in a Python loop over the ranks of the longest block
(vectorised over blocks and nodes), so :mod:`.birth_death_lapack` and
:mod:`.birth_death_order1` use it only for the blocks whose expected absorption
time makes the LAPACK path inexact.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov.core._birth_death_quadrature import graded_gauss_legendre, quadrature_levels

__all__ = ["uncoupled_blocks", "stable_parts", "stable_average_reward", "SINGULAR"]

SINGULAR = "singular birth–death system: some states are never absorbed (from them the walk never stops)."
#: nodes x states held at once by the subtraction-free quadrature
STABLE_CELLS = 1 << 20


def uncoupled_blocks(forward: ArrayLike, backward: ArrayLike) -> np.ndarray:
    """Offsets of the uncoupled blocks of stacked chains (``forward[i-1] == backward[i] == 0`` cuts)."""
    n = forward.size
    cuts = np.flatnonzero((forward[:-1] == 0) & (backward[1:] == 0)) + 1
    return np.concatenate([[0], cuts, [n]]).astype(np.intp)


def _padded(values, offsets, fill):
    lengths = np.diff(offsets)
    out = np.full((lengths.size, int(lengths.max()) if lengths.size else 0), fill, dtype=np.float64)
    for b, (lo, hi) in enumerate(zip(offsets[:-1].tolist(), offsets[1:].tolist())):
        out[b, :hi - lo] = values[lo:hi]
    return out


def stable_parts(forward: ArrayLike, backward: ArrayLike, slack: ArrayLike, offsets: ArrayLike, local_starts: ArrayLike,
                 w: ArrayLike, need_absorption: bool = False) -> tuple:
    r"""``(h, e, g)`` of the blocks ``offsets`` at the nodes :math:`z = 1 - w`, each shaped (nodes, n).

    ``h[:, j]`` is the probability of reaching state j from its block's start
    (``local_starts[b]``, counted from the block's first state; -1: the block
    has no start and h is 0 there), ``e[:, j] = 1/N_jj`` the escape
    probability, ``g[:, j] = ψ_j / N_jj`` (``None`` unless
    ``need_absorption``); ``N = (D - zQ)^{-1}``, ``ψ = N slack``.  So the row
    of N from the start is ``h / e`` and :math:`\psi_j = g_j / e_j`.  A state
    that is never absorbed gives e = 0 (or NaN): the caller raises.
    """
    fwd = _padded(forward, offsets, 0.0)
    bwd = _padded(backward, offsets, 0.0)
    slk = _padded(slack, offsets, 1.0)          # padding states are isolated and absorbing
    n_blocks, width = fwd.shape
    w = np.asarray(w, dtype=np.float64).reshape(-1, 1)
    z = 1.0 - w
    shape = (w.shape[0], n_blocks, width)
    local_start = np.asarray(local_starts, dtype=np.intp)
    abar = np.ones(shape)
    alpha = np.zeros(shape)
    h_left = np.zeros(shape)                    # reaching j from the start on its left (products of a)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(width - 2, -1, -1):
            p, q, s = fwd[:, j + 1], bwd[:, j + 1], slk[:, j + 1]
            zp = z * p
            den = s + q + w * p + zp * abar[:, :, j + 1]
            abar[:, :, j] = (s + w * (p + q) + zp * abar[:, :, j + 1]) / den
            if need_absorption:
                alpha[:, :, j] = (s + zp * alpha[:, :, j + 1]) / den
            a = z * q / den
            h_left[:, :, j] = np.where(local_start == j, 0.0, a * np.where(local_start == j + 1, 1.0,
                                                                         h_left[:, :, j + 1]))
        bbar = np.ones(shape)
        beta = np.zeros(shape)
        h_right = np.zeros(shape)               # reaching j from the start on its right (products of b)
        h_right[:, :, 0] = local_start == 0
        for j in range(1, width):
            p, q, s = fwd[:, j - 1], bwd[:, j - 1], slk[:, j - 1]
            zq = z * q
            den = s + p + w * q + zq * bbar[:, :, j - 1]
            bbar[:, :, j] = (s + w * (p + q) + zq * bbar[:, :, j - 1]) / den
            if need_absorption:
                beta[:, :, j] = (s + zq * beta[:, :, j - 1]) / den
            b = z * p / den
            h_right[:, :, j] = np.where(local_start == j, 1.0, b * h_right[:, :, j - 1])
        e = slk + w[:, :, None] * (fwd + bwd) + z[:, :, None] * (fwd * abar + bwd * bbar)
        g = slk + z[:, :, None] * (fwd * alpha + bwd * beta) if need_absorption else None
    h = h_left + h_right
    valid = np.arange(width)[None, :] < np.diff(offsets)[:, None]
    out = [x[:, valid] if x is not None else None for x in (h, e, g)]
    return tuple(out)


# ----------------------------------------------------------------------------------------------
# selecting blocks of stacked chains, and the order-1 integral
# ----------------------------------------------------------------------------------------------

def absorbed(forward: ArrayLike, backward: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``(forward, backward)`` of one length with the out-of-range moves absorbed (``forward[-1]`` and
    ``backward[0]`` zero), copied only when that changes them (the plugin passes large arrays that need none)."""
    fwd = np.asarray(forward, dtype=np.float64)
    bwd = np.asarray(backward, dtype=np.float64)
    if fwd.ndim != 1 or fwd.shape != bwd.shape:
        raise ValueError(f"`forward` and `backward` must be 1-D of one length, got shapes "
                         f"{fwd.shape} and {bwd.shape}.")
    if fwd.size and (fwd[-1] != 0 or bwd[0] != 0):
        fwd, bwd = fwd.copy(), bwd.copy()
        fwd[-1] = 0.0
        bwd[0] = 0.0
    return fwd, bwd


def stacked_chain(forward: ArrayLike, backward: ArrayLike, diag: ArrayLike) -> tuple[np.ndarray, np.ndarray,
                  np.ndarray]:
    """:func:`absorbed` chains and their diagonal (default ones)."""
    fwd, bwd = absorbed(forward, backward)
    d = np.ones(fwd.size) if diag is None else np.array(diag, dtype=np.float64)
    if d.shape != fwd.shape:
        raise ValueError(f"`diag` must have shape ({fwd.size},), got {d.shape}.")
    return fwd, bwd, d


def block_positions(offsets: ArrayLike, block_mask: ArrayLike) -> np.ndarray:
    return np.repeat(block_mask, np.diff(offsets))


def renumber(indices: ArrayLike, mask: ArrayLike) -> np.ndarray:
    """Positions ``indices`` (all inside ``mask``) renumbered within ``positions[mask]``."""
    return (np.cumsum(mask) - 1)[indices]


def sub_offsets(offsets: ArrayLike, block_mask: ArrayLike) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.diff(offsets)[block_mask])]).astype(np.intp)


def block_starts(starts: ArrayLike, offsets: ArrayLike, block_mask: ArrayLike) -> np.ndarray:
    """The start state of every selected block, counted from the block's first state."""
    block_of = np.searchsorted(offsets, starts, side="right") - 1
    if np.unique(block_of).size != block_of.size:
        raise ValueError("at most one start state per block of stacked chains.")
    # -1: no start in the block (it is never reached: its row entries are 0)
    chosen = np.full(offsets.size - 1, -1, dtype=np.intp)
    chosen[block_of] = starts - offsets[block_of]
    return chosen[block_mask]


def stable_average_reward(fwd: ArrayLike, bwd: ArrayLike, stop: ArrayLike, offsets: ArrayLike,
                          local_starts: ArrayLike, c: float) -> np.ndarray:
    r"""Per-state integrals :math:`\int_0^1 N^z_{sj} \psi^z_j / ((1-c) N^z_{jj} + c)\, dz` by the
    subtraction-free elimination, in :math:`w = 1 - z` (nodes graded towards w = 0, down to
    a quarter of :math:`1/\max_i E_i[H]`, which bounds the integrand's pole away from [0, 1])."""
    _, e1, _ = stable_parts(fwd, bwd, stop, offsets, local_starts, np.zeros(1))
    e1 = e1[0]
    if not np.all(e1 > 0):
        raise ValueError(SINGULAR)
    with np.errstate(over="ignore"):
        # max_i E_i[H] <= max over blocks of sum_j N_jj (N_ij <= N_jj)
        bound = float(np.max(np.add.reduceat(1.0 / e1, offsets[:-1])))
    w_nodes, w_weights = graded_gauss_legendre(quadrature_levels(bound, most=1070), in_w=True)
    total = np.zeros(fwd.size)
    chunk = max(1, STABLE_CELLS // max(1, fwd.size))
    for k in range(0, w_nodes.size, chunk):
        h, e, g = stable_parts(fwd, bwd, stop, offsets, local_starts, w_nodes[k:k + chunk], need_absorption=True)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            term = h * g / (e * ((1.0 - c) + c * e))
        term = np.where(h > 0, term, 0.0)       # unreachable states add nothing (even with e = 0)
        if not np.all(np.isfinite(term)):
            raise ValueError(SINGULAR)
        total += w_weights[k:k + chunk] @ term
    return total
