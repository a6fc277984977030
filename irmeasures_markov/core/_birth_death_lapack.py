r"""Birth–death (tridiagonal) absorbing chains: the LAPACK solves and their condition check.

A birth–death chain moves only between neighbouring states: from state
:math:`i` to :math:`i+1` with probability ``forward[i]``, to :math:`i-1` with
``backward[i]``, and it is absorbed with the rest,
:math:`s_i = 1 - \mathrm{forward}_i - \mathrm{backward}_i` (mass that would
leave the range, ``forward[-1]`` and ``backward[0]``, is absorbed too).  Its
transient part :math:`Q` is tridiagonal, and so is :math:`M = D - zQ`
(:math:`D = I` unless a caller folds something into the diagonal).

Several independent chains can be laid end to end in one array: a zero
``forward`` at the last state of a block and a zero ``backward`` at the first
state of the next uncouple them, so :math:`M` is block diagonal and one O(n)
LAPACK call serves every block.  On such stacked chains:

- :func:`birth_death_solve`, :func:`birth_death_solve_pair`: solves with
  :math:`M` and :math:`M^T` (``?gtsv``; ``?gttrf``/``?gttrs``);
- :func:`birth_death_discounted_visits`: expected visits from a start state
  (a row of the fundamental matrix :math:`N = (I - Q)^{-1}`) and expected
  visits whose value decays geometrically with each revisit, from the row and
  the diagonal of :math:`N`;
- :func:`birth_death_inverse_diagonal`: the diagonal of :math:`M^{-1}` (``?pttrf``);
- :func:`start_indicator`, :func:`ill_conditioned`: the start vector and the
  per-block condition check shared with :mod:`.birth_death_order1`.

The order-1 quantities (:func:`~.birth_death_order1.birth_death_average_reward`,
:func:`~.birth_death_order1.birth_death_average_reward_recursion`) live in
:mod:`.birth_death_order1`, which builds on these solves.

Without pivoting, elimination is stable for (weakly) diagonally
dominant matrices; :math:`I - zQ` with :math:`Q` substochastic and
:math:`0 \le z \le 1` is one.  Stable is not exact, though: its relative
error grows with the condition number, about the expected absorption time,
which for a walk that rarely stops (p + q = 1 with the drift towards the top,
``top='forward'``: about :math:`(q/p)^N` steps) loses every digit and can
produce zero pivots for a chain that is absorbed.  So
:func:`birth_death_discounted_visits` and :func:`birth_death_average_reward`
check every uncoupled block (from the same LAPACK solve: the column or row
sums of :math:`N`) and send the blocks where they exceed
:data:`WELL_CONDITIONED_VISITS` to the subtraction-free elimination of
:mod:`.birth_death_stable`, exact to ~1e-13 relative however ill-conditioned,
for values down to the smallest double (order 1 integrates there in
:math:`w = 1 - z` with the pieces graded down to :math:`1/(4 \max_i E_i[H])`,
so absorption times up to ~1e300 are resolved).  The other functions here
(solves, rows, inverse diagonals) are the LAPACK path only.  A chain with
states that are never absorbed (e.g. forward 1 at rank i and backward 1 at
rank i+1) raises.

References
----------
.. [1] G. Meurant, "A review on the inverse of symmetric tridiagonal and block
   tridiagonal matrices", SIAM J. Matrix Anal. Appl. 13 (1992) 707–728
   (diagonal of the inverse from the two one-sided eliminations).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.core._birth_death_stable import (
    SINGULAR,
    block_positions,
    block_starts,
    stable_parts,
    stacked_chain,
    sub_offsets,
    uncoupled_blocks,
)

lapack = lazy_module("scipy.linalg.lapack")  # imported at the first call: `import irmeasures_markov` stays cheap

__all__ = ["birth_death_inverse_diagonal", "birth_death_solve", "birth_death_solve_pair",
           "birth_death_discounted_visits", "checked_discount", "start_indicator", "ill_conditioned",
           "WELL_CONDITIONED_VISITS"]

#: Blocks whose expected absorption time (from some state) exceeds this go through the
#: subtraction-free elimination of :mod:`.birth_death_stable`: the LAPACK path loses about
#: log10 of it in digits (measured: relative error below 1e-12 up to here).
WELL_CONDITIONED_VISITS = 1e3


def birth_death_inverse_diagonal(forward: ArrayLike, backward: ArrayLike, diag: ArrayLike | None = None) -> np.ndarray:
    r"""Diagonal of :math:`(D - Q)^{-1}` for a birth–death chain, with LAPACK (O(n)).

    ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``; ``diag`` defaults
    to ones.  The elimination pivots of a tridiagonal matrix depend on the
    off-diagonals only through the products ``forward[i] * backward[i+1]``, so
    they equal those of the symmetric matrix with off-diagonal
    :math:`-\sqrt{p_i q_{i+1}}`, which is positive definite when the chain is
    absorbing; ``?pttrf`` (:math:`LDL^T`, no pivoting) gives them from the top,
    and again on the reversed chain from the bottom.  Independent chains can
    be stacked into one array: a zero product uncouples them.

    Parameters
    ----------
    forward, backward : array_like, shape (n,)
        Probabilities of moving up and down at each state (stacked chains uncoupled by zeros).
    diag : array_like, shape (n,), optional
        The diagonal of :math:`D` (ones when None).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    ValueError
        If the chain is not absorbing (the matrix is singular).
    """
    forward = np.asarray(forward, dtype=np.float64)
    backward = np.asarray(backward, dtype=np.float64)
    n = forward.size
    d = np.ones(n) if diag is None else np.asarray(diag, dtype=np.float64)
    if n <= 1:
        if n == 1 and not d[0] > 0:
            raise ValueError(SINGULAR)
        return 1.0 / d
    e = -np.sqrt(forward[:-1] * backward[1:])
    top, _, info1 = lapack.dpttrf(d, e)
    bot, _, info2 = lapack.dpttrf(d[::-1], e[::-1])
    if info1 != 0 or info2 != 0:
        raise ValueError(SINGULAR)
    return 1.0 / (top + bot[::-1] - d)


# ----------------------------------------------------------------------------------------------
# stacked chains: one LAPACK call for all blocks
# ----------------------------------------------------------------------------------------------

def _chain(forward, backward, diag):
    """``(lower, diag, upper)`` of :math:`M = D - Q` in LAPACK's tridiagonal layout."""
    forward, backward, d = stacked_chain(forward, backward, diag)
    return -backward[1:], d, -forward[:-1]


def _rhs(rhs, n, name="rhs"):
    b = np.asarray(rhs, dtype=np.float64)
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"`{name}` must have shape ({n},) or ({n}, k), got {b.shape}.")
    return b


def birth_death_solve(forward: ArrayLike, backward: ArrayLike, rhs: ArrayLike, *, diag: ArrayLike | None = None,
                      transpose: bool = False) -> np.ndarray:
    r"""Solve :math:`M x = b` (or :math:`M^T x = b`), :math:`M = D - Q`, for a birth–death chain.

    Parameters
    ----------
    forward, backward : array_like, shape (n,)
        ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``;
        ``forward[-1]`` and ``backward[0]`` are not used.  Stacked chains
        (see the module doc) are solved together.
    rhs : array_like, shape (n,) or (n, k)
    diag : array_like, shape (n,), optional
        the diagonal :math:`D` (default ones).
    transpose : bool
        solve with :math:`M^T`.  With ``rhs`` the indicator of a start state,
        :math:`x` is that row of the fundamental matrix :math:`M^{-1}`.

    Returns
    -------
    ndarray, the shape of ``rhs``.

    Notes
    -----
    LAPACK ``?gtsv`` (Gaussian elimination with partial pivoting), O(n k).
    A singular :math:`M` (states from which the chain is never absorbed)
    raises ``ValueError``.
    """
    lower, d, upper = _chain(forward, backward, diag)
    b = _rhs(rhs, d.size)
    if d.size <= 1:
        # f2py's ?gtsv wrapper rejects empty off-diagonals
        if d.size == 1 and d[0] == 0:
            raise ValueError(SINGULAR)
        return b / d[0] if d.size else b.copy()
    if transpose:
        lower, upper = upper, lower
    _, _, _, x, info = lapack.dgtsv(lower, d, upper, b if b.ndim == 2 else b[:, None])
    if info != 0 or not np.all(np.isfinite(x)):
        raise ValueError(SINGULAR)
    return x if b.ndim == 2 else x[:, 0]


def birth_death_solve_pair(forward: ArrayLike, backward: ArrayLike, rhs: ArrayLike, rhs_transposed: ArrayLike, *,
                           diag: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""``(x, y)`` with :math:`M x = b` and :math:`M^T y = b'` from one LU factorisation.

    Same arguments as :func:`birth_death_solve`; LAPACK ``?gttrf`` then two
    ``?gttrs``, cheaper than two separate solves on long chains.

    Parameters
    ----------
    forward : array_like, shape (n,)
        ``Q[i, i+1] = forward[i]`` (``forward[-1]`` not used).
    backward : array_like, shape (n,)
        ``Q[i+1, i] = backward[i+1]`` (``backward[0]`` not used).
    rhs : array_like, shape (n,) or (n, k)
        Right-hand side :math:`b` of :math:`M x = b`.
    rhs_transposed : array_like, shape (n,) or (n, k)
        Right-hand side :math:`b'` of :math:`M^T y = b'`.
    diag : array_like, shape (n,), optional
        The diagonal :math:`D` (default ones).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(x, y)``, each shaped like its right-hand side.

    Raises
    ------
    ValueError
        If the chain is not absorbing (the matrix is singular).
    """
    lower, d, upper = _chain(forward, backward, diag)
    n = d.size
    b, bt = _rhs(rhs, n), _rhs(rhs_transposed, n, "rhs_transposed")
    if n <= 2:
        # f2py's ?gttrf wrapper rejects an empty second superdiagonal
        return (birth_death_solve(forward, backward, b, diag=diag),
                birth_death_solve(forward, backward, bt, diag=diag, transpose=True))
    dl, du_, dd, du2, ipiv, info = lapack.dgttrf(lower, d, upper)
    if info != 0:
        raise ValueError(SINGULAR)
    x, info1 = lapack.dgttrs(dl, du_, dd, du2, ipiv, b if b.ndim == 2 else b[:, None])
    y, info2 = lapack.dgttrs(dl, du_, dd, du2, ipiv, bt if bt.ndim == 2 else bt[:, None], trans="T")
    if info1 != 0 or info2 != 0 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError(SINGULAR)
    return (x if b.ndim == 2 else x[:, 0]), (y if bt.ndim == 2 else y[:, 0])


def start_indicator(starts: ArrayLike, n: int) -> np.ndarray:
    """Start vector: how many of ``starts`` sit at each of the ``n`` states.

    Parameters
    ----------
    starts : array_like of int
        Start states, each in ``[0, n)``.
    n : int
        Number of states.

    Returns
    -------
    numpy.ndarray
        float64 counts of length ``n`` (``np.bincount`` of ``starts``).

    Raises
    ------
    ValueError
        If a start state is outside ``[0, n)``.
    """
    starts = np.asarray(starts, dtype=np.intp).ravel()
    if starts.size and (starts.min() < 0 or starts.max() >= n):
        raise ValueError(f"`starts` must be states in [0, {n}).")
    return np.bincount(starts, minlength=n).astype(np.float64)


def checked_discount(discount: float) -> float:
    """The discount of a revisit as a float, checked to lie in [0, 1] (every solver that discounts takes it)."""
    c = float(discount)
    if not 0.0 <= c <= 1.0:
        raise ValueError(f"`discount` must be in [0, 1], got {discount!r}.")
    return c


def birth_death_discounted_visits(forward: ArrayLike, backward: ArrayLike, starts: ArrayLike, discount: float = 1.0,
                                  *, diag: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Expected visits and expected *discounted* visits to every state, from ``starts``.

    The :math:`k`-th visit to state :math:`j` counts :math:`c^{k-1}`
    (:math:`c` = ``discount``).  With :math:`h_j = N_{sj}/N_{jj}` the
    probability of ever reaching :math:`j` and :math:`f_j = 1 - 1/N_{jj}` that
    of returning to it, the visit count :math:`V_j` has
    :math:`P(V_j \ge k) = h_j f_j^{k-1}`, so

    .. math::

        E\Big[\sum_{k=1}^{V_j} c^{k-1}\Big] = \frac{h_j}{1 - c f_j}
        = \frac{N_{sj}}{(1-c) N_{jj} + c}.

    The row of :math:`N` comes from one transposed solve with the indicator of
    the starts, its diagonal from :func:`birth_death_inverse_diagonal`; O(n) in all.  Needs at
    most one start per block of stacked chains.

    Parameters
    ----------
    forward, backward : array_like, shape (n,)
        Probabilities of moving up and down at each state (stacked chains uncoupled by zeros).
    starts : array_like of int
        Start states (at most one per block).
    discount : float
        :math:`c`, the value of a revisit relative to the visit before.
    diag : array_like, shape (n,), optional
        The diagonal of :math:`D` (ones when None).

    Returns
    -------
    visits, discounted : ndarray, shape (n,)
        ``discounted is visits`` when ``discount == 1``.
    """
    c = checked_discount(discount)
    lower, d, upper = _chain(forward, backward, diag)
    n = d.size
    if n == 0:
        return np.zeros(0), np.zeros(0)
    starts = np.asarray(starts, dtype=np.intp).ravel()
    offsets = uncoupled_blocks(np.asarray(forward, dtype=np.float64), np.asarray(backward, dtype=np.float64))
    visits, ill = None, np.ones(offsets.size - 1, dtype=bool)
    if n > 1:
        # one transposed solve gives the row of N from the starts and N's column sums 1^T N, whose
        # largest entry (the norm |N|_1, a condition number of M up to a factor 2) tells each block's
        # path apart
        rhs = np.ones((n, 2), order="F")          # LAPACK's column-major layout: no copy
        rhs[:, 0] = start_indicator(starts, n)
        _, _, _, both, info = lapack.dgtsv(upper, d, lower, rhs, overwrite_b=True)
        if info == 0:
            visits = np.ascontiguousarray(both[:, 0])
            # an overflow in one block can reach its neighbour through a zero coupling (0 * inf)
            ill = ill_conditioned(offsets, np.where(np.isfinite(visits), both[:, 1], np.inf))
    elif n == 1 and d[0] > 0:
        visits = start_indicator(starts, n) / d
        ill = ill_conditioned(offsets, 1.0 / d)
    if not ill.any():
        if c == 1.0:
            return visits, visits
        n_jj = birth_death_inverse_diagonal(forward, backward, d)
        return visits, visits / ((1.0 - c) * n_jj + c)
    fwd, bwd, d = stacked_chain(forward, backward, d)
    good = block_positions(offsets, ~ill)
    visits = np.where(good, visits, 0.0) if visits is not None else np.zeros(n)
    discounted = visits if c == 1.0 else np.zeros(n)
    if good.any() and c < 1.0:
        discounted[good] = visits[good] / ((1.0 - c) * birth_death_inverse_diagonal(fwd[good], bwd[good], d[good])
                                           + c)
    bad = ~good
    h, e, _ = stable_parts(fwd[bad], bwd[bad], np.clip(d - fwd - bwd, 0.0, None)[bad], sub_offsets(offsets, ill),
                           block_starts(starts, offsets, ill), np.zeros(1))
    h, e = h[0], e[0]
    if not np.all(e > 0):
        raise ValueError(SINGULAR)
    visits[bad] = h / e
    if c < 1.0:
        discounted[bad] = h / ((1.0 - c) + c * e)
    return visits, discounted


def ill_conditioned(offsets: np.ndarray, load: np.ndarray) -> np.ndarray:
    """Mask of the blocks that the LAPACK path cannot solve exactly.

    ``load`` holds expected visit counts summed over start states or over
    targets (row or column sums of N) from a LAPACK solve: a block is
    ill-conditioned when one exceeds :data:`WELL_CONDITIONED_VISITS`, or is
    not finite or below 1 (the solve already failed), since the LAPACK
    path's relative error grows with it.
    """
    starts = offsets[:-1]
    if starts.size == 0:
        return np.zeros(0, dtype=bool)
    worst = np.maximum.reduceat(np.where(np.isfinite(load), load, np.inf), starts)
    lowest = np.minimum.reduceat(np.where(np.isfinite(load), load, -np.inf), starts)
    return ~((worst <= WELL_CONDITIONED_VISITS) & (lowest >= 1.0 - 1e-9))
