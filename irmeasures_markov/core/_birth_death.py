r"""Birth–death (tridiagonal) absorbing chains: the LAPACK solves, their condition check, and the
subtraction-free elimination for the blocks where LAPACK is inexact.

A birth–death chain moves only between neighbouring states: from state
$i$ to $i+1$ with probability ``forward[i]``, to $i-1$ with
``backward[i]``, and it is absorbed with the rest,
$s_i = 1 - \mathrm{forward}_i - \mathrm{backward}_i$ (mass that would
leave the range, ``forward[-1]`` and ``backward[0]``, is absorbed too).  Its
transient part $Q$ is tridiagonal, and so is $M = D - zQ$
($D = I$ unless a caller folds something into the diagonal).

Several independent chains can be laid end to end in one array: a zero
``forward`` at the last state of a block and a zero ``backward`` at the first
state of the next uncouple them, so $M$ is block diagonal and one O(n)
LAPACK call serves every block.  On such stacked chains:

- [`birth_death_solve`][irmeasures_markov.core.birth_death_solve],
[`birth_death_solve_pair`][irmeasures_markov.core.birth_death_solve_pair]: solves with
  $M$ and $M^T$ (``?gtsv``; ``?gttrf``/``?gttrs``);
- [`birth_death_discounted_visits`][irmeasures_markov.core.birth_death_discounted_visits]: expected visits from a start
state
  (a row of the fundamental matrix $N = (I - Q)^{-1}$) and expected
  visits whose value decays geometrically with each revisit, from the row and
  the diagonal of $N$;
- [`birth_death_inverse_diagonal`][irmeasures_markov.core.birth_death_inverse_diagonal]: the diagonal of $M^{-1}$
(``?pttrf``);
- `start_indicator`, `ill_conditioned`: the start vector and the
  per-block condition check shared with `_birth_death_order1`.

The order-1 quantities (`birth_death_average_reward`,
`birth_death_average_reward_recursion`) live in
`_birth_death_order1`, which builds on these solves.

Without pivoting, elimination is stable for (weakly) diagonally
dominant matrices; $I - zQ$ with $Q$ substochastic and
$0 \le z \le 1$ is one.  Stable is not exact, though: its relative
error grows with the condition number, about the expected absorption time,
which for a walk that rarely stops (p + q = 1 with the drift towards the top,
``top='forward'``: about $(q/p)^N$ steps) loses every digit and can
produce zero pivots for a chain that is absorbed.  So
[`birth_death_discounted_visits`][irmeasures_markov.core.birth_death_discounted_visits] and
[`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward]
check every uncoupled block (from the same LAPACK solve: the column or row
sums of $N$) and send the blocks where they exceed
`WELL_CONDITIONED_VISITS` to the subtraction-free elimination below,
exact to ~1e-13 relative however ill-conditioned, for values down to the smallest double (order 1 integrates there in
$w = 1 - z$ with the pieces graded down to $1/(4 \max_i E_i[H])$,
so absorption times up to ~1e300 are resolved).  The other functions here
(solves, rows, inverse diagonals) are the LAPACK path only.  A chain with
states that are never absorbed (e.g. forward 1 at rank i and backward 1 at
rank i+1) raises.

Subtraction-free elimination
----------------------------
The LAPACK path above eliminates
$M = D - zQ$ with pivots such as $\delta_i = 1 - p_{i-1} q_i /
\delta_{i-1}$ and takes the diagonal of $M^{-1}$ from
$\delta_i + \epsilon_i - M_{ii}$.  Both subtract numbers of similar size
when the chain is rarely absorbed (e.g. $p + q = 1$ with the drift
towards the top and ``top='forward'``: the walk only stops past rank N, after
about $(q/p)^N$ steps): relative errors then grow like the expected
absorption time, and the pivots can even vanish in floating point although the
exact ones do not.

Here every quantity is a ratio of sums of nonnegative terms, so it keeps full
relative precision however small it is.  With $w = 1 - z$ given
directly (so $z$ arbitrarily close to 1 is represented exactly) and the
*slack* $\sigma_i = D_{ii} - p_i - q_i \ge 0$ of each row (the stop
probability when $D = I$), the row sum of $M$ at $z$ is
$\sigma_i + w (p_i + q_i)$, and for a start state $s$:

- $\bar a_j = 1 - a_j$, $a_j$ the (z-weighted) probability of
  ever stepping from $j+1$ down to $j$:
  $\bar a_j = (\sigma' + w(p' + q') + z p' \bar a_{j+1}) / d_j$,
  $d_j = \sigma' + q' + w p' + z p' \bar a_{j+1}$ (primes: state j+1);
- $\bar b_j$, $b_j$ the same from $j-1$ up to $j$;
- the escape probability $e_j = 1/N_{jj} = \sigma_j + w(p_j + q_j) + z p_j
  \bar a_j + z q_j \bar b_j$;
- $h_j = N_{sj} / N_{jj}$, the probability of ever reaching $j$
  from $s$, a product of $b$ (right of $s$) or $a$
  (left of it);
- $g_j = \psi_j / N_{jj}$, $\psi = M^{-1}\sigma$ (absorption),
  from the analogous sums $\alpha, \beta$ of absorption before
  returning.

Costs O(n) per node, in a Python loop over the ranks of the longest block
(vectorised over blocks and nodes), so the LAPACK path and
`_birth_death_order1` use it only for the blocks whose expected absorption
time makes the LAPACK path inexact.

References
----------
[1] G. Meurant, "A review on the inverse of symmetric tridiagonal and block
   tridiagonal matrices", SIAM J. Matrix Anal. Appl. 13 (1992) 707–728
   (diagonal of the inverse from the two one-sided eliminations).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module

lapack = lazy_module("scipy.linalg.lapack")  # imported at the first call: `import irmeasures_markov` stays cheap

__all__ = ["birth_death_inverse_diagonal", "birth_death_solve", "birth_death_solve_pair",
           "birth_death_discounted_visits", "checked_discount", "start_indicator", "ill_conditioned",
           "WELL_CONDITIONED_VISITS", "uncoupled_blocks", "stable_parts", "stable_parts_at_one",
           "SINGULAR"]

#: Blocks whose expected absorption time (from some state) exceeds this go through the
#: subtraction-free elimination (module doc): the LAPACK path loses about
#: log10 of it in digits (measured: relative error below 1e-12 up to here).
WELL_CONDITIONED_VISITS = 1e3
SINGULAR = "singular birth–death system: some states are never absorbed (from them the walk never stops)."


def birth_death_inverse_diagonal(forward: ArrayLike, backward: ArrayLike, diag: ArrayLike | None = None) -> np.ndarray:
    r"""Diagonal of $(D - Q)^{-1}$ for a birth–death chain, with LAPACK (O(n)).

    ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``; ``diag`` defaults
    to ones.  The elimination pivots of a tridiagonal matrix depend on the
    off-diagonals only through the products ``forward[i] * backward[i+1]``, so
    they equal those of the symmetric matrix with off-diagonal
    $-\sqrt{p_i q_{i+1}}$, which is positive definite when the chain is
    absorbing; ``?pttrf`` ($LDL^T$, no pivoting) gives them from the top,
    and again on the reversed chain from the bottom.  Independent chains can
    be stacked into one array: a zero product uncouples them.

    Parameters
    ----------
    forward : array_like, shape (n,)
        Probability of moving up (to the next state) at each state (stacked chains uncoupled by zeros).
    backward : array_like, shape (n,)
        Probability of moving down (to the previous state) at each state (stacked chains uncoupled by zeros).
    diag : array_like, shape (n,), optional
        The diagonal of $D$ (ones when None).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    ValueError
        If the chain is not absorbing (the matrix is singular).
    """
    forward, backward, d = stacked_chain(forward, backward, diag)
    n = forward.size
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
    """``(lower, diag, upper)`` of $M = D - Q$ in LAPACK's tridiagonal layout."""
    forward, backward, d = stacked_chain(forward, backward, diag)
    return -backward[1:], d, -forward[:-1]


def _rhs(rhs, n, name="rhs"):
    b = np.asarray(rhs, dtype=np.float64)
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"`{name}` must have shape ({n},) or ({n}, k), got {b.shape}.")
    return b


def birth_death_solve(forward: ArrayLike, backward: ArrayLike, rhs: ArrayLike, *, diag: ArrayLike | None = None,
                      transpose: bool = False) -> np.ndarray:
    r"""Solve $M x = b$ (or $M^T x = b$), $M = D - Q$, for a birth–death chain.

    Parameters
    ----------
    forward : array_like, shape (n,)
        ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``;
        ``forward[-1]`` and ``backward[0]`` are not used.  Stacked chains
        (see the module doc) are solved together.
    backward : array_like, shape (n,)
        ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``;
        ``forward[-1]`` and ``backward[0]`` are not used.  Stacked chains
        (see the module doc) are solved together.
    rhs : array_like, shape (n,) or (n, k)
    diag : array_like, shape (n,), optional
        the diagonal $D$ (default ones).
    transpose : bool
        solve with $M^T$.  With ``rhs`` the indicator of a start state,
        $x$ is that row of the fundamental matrix $M^{-1}$.

    Returns
    -------
    ndarray, the shape of ``rhs``.

    Notes
    -----
    LAPACK ``?gtsv`` (Gaussian elimination with partial pivoting), O(n k).
    A singular $M$ (states from which the chain is never absorbed)
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
    r"""``(x, y)`` with $M x = b$ and $M^T y = b'$ from one LU factorisation.

    Same arguments as [`birth_death_solve`][irmeasures_markov.core.birth_death_solve]; LAPACK ``?gttrf`` then two
    ``?gttrs``, cheaper than two separate solves on long chains.

    Parameters
    ----------
    forward : array_like, shape (n,)
        ``Q[i, i+1] = forward[i]`` (``forward[-1]`` not used).
    backward : array_like, shape (n,)
        ``Q[i+1, i] = backward[i+1]`` (``backward[0]`` not used).
    rhs : array_like, shape (n,) or (n, k)
        Right-hand side $b$ of $M x = b$.
    rhs_transposed : array_like, shape (n,) or (n, k)
        Right-hand side $b'$ of $M^T y = b'$.
    diag : array_like, shape (n,), optional
        The diagonal $D$ (default ones).

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

    The $k$-th visit to state $j$ counts $c^{k-1}$
    ($c$ = ``discount``).  With $h_j = N_{sj}/N_{jj}$ the
    probability of ever reaching $j$ and $f_j = 1 - 1/N_{jj}$ that
    of returning to it, the visit count $V_j$ has
    $P(V_j \ge k) = h_j f_j^{k-1}$, so

    $$
    E\Big[\sum_{k=1}^{V_j} c^{k-1}\Big] = \frac{h_j}{1 - c f_j}
    = \frac{N_{sj}}{(1-c) N_{jj} + c}.
    $$

    The row of $N$ comes from one transposed solve with the indicator of
    the starts, its diagonal from [`birth_death_inverse_diagonal`][irmeasures_markov.core.birth_death_inverse_diagonal];
    O(n) in all.  Needs at
    most one start per block of stacked chains.

    Parameters
    ----------
    forward : array_like, shape (n,)
        Probability of moving up (to the next state) at each state (stacked chains uncoupled by zeros).
    backward : array_like, shape (n,)
        Probability of moving down (to the previous state) at each state (stacked chains uncoupled by zeros).
    starts : array_like of int
        Start states (at most one per block).
    discount : float
        $c$, the value of a revisit relative to the visit before.
    diag : array_like, shape (n,), optional
        The diagonal of $D$ (ones when None).

    Returns
    -------
    visits : ndarray, shape (n,)
        ``discounted is visits`` when ``discount == 1``.
    discounted : ndarray, shape (n,)
        ``discounted is visits`` when ``discount == 1``.
    """
    c = checked_discount(discount)
    fwd, bwd, d = stacked_chain(forward, backward, diag)
    n = d.size
    if n == 0:
        return np.zeros(0), np.zeros(0)
    starts = np.asarray(starts, dtype=np.intp).ravel()
    offsets = uncoupled_blocks(fwd, bwd)
    visits, ill = None, np.ones(offsets.size - 1, dtype=bool)
    if n > 1:
        # one transposed solve gives the row of N from the starts and N's column sums 1^T N, whose
        # largest entry (the norm |N|_1, a condition number of M up to a factor 2) tells each block's
        # path apart
        rhs = np.ones((n, 2), order="F")          # LAPACK's column-major layout: no copy
        rhs[:, 0] = start_indicator(starts, n)
        _, _, _, both, info = lapack.dgtsv(-fwd[:-1], d, -bwd[1:], rhs, overwrite_b=True)   # M^T
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
        n_jj = birth_death_inverse_diagonal(fwd, bwd, d)
        return visits, visits / ((1.0 - c) * n_jj + c)
    good = block_positions(offsets, ~ill)
    visits = np.where(good, visits, 0.0) if visits is not None else np.zeros(n)
    discounted = visits if c == 1.0 else np.zeros(n)
    if good.any() and c < 1.0:
        discounted[good] = visits[good] / ((1.0 - c) * birth_death_inverse_diagonal(fwd[good], bwd[good], d[good])
                                           + c)
    bad = ~good
    h, e = stable_parts_at_one(fwd[bad], bwd[bad], np.clip(d - fwd - bwd, 0.0, None)[bad],
                               sub_offsets(offsets, ill), block_starts(starts, offsets, ill))
    visits[bad] = h / e
    if c < 1.0:
        discounted[bad] = h / ((1.0 - c) + c * e)
    return visits, discounted


def ill_conditioned(offsets: np.ndarray, load: np.ndarray) -> np.ndarray:
    """Mask of the blocks that the LAPACK path cannot solve exactly.

    ``load`` holds expected visit counts summed over start states or over
    targets (row or column sums of N) from a LAPACK solve: a block is
    ill-conditioned when one exceeds `WELL_CONDITIONED_VISITS`, or is
    not finite or below 1 (the solve already failed), since the LAPACK
    path's relative error grows with it.
    """
    starts = offsets[:-1]
    if starts.size == 0:
        return np.zeros(0, dtype=bool)
    worst = np.maximum.reduceat(np.where(np.isfinite(load), load, np.inf), starts)
    lowest = np.minimum.reduceat(np.where(np.isfinite(load), load, -np.inf), starts)
    return ~((worst <= WELL_CONDITIONED_VISITS) & (lowest >= 1.0 - 1e-9))


# ----------------------------------------------------------------------------------------------
# the subtraction-free elimination (module doc)
# ----------------------------------------------------------------------------------------------


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
    r"""``(h, e, g)`` of the blocks ``offsets`` at the nodes $z = 1 - w$, each shaped (nodes, n).

    ``h[:, j]`` is the probability of reaching state j from its block's start
    (``local_starts[b]``, counted from the block's first state; -1: the block
    has no start and h is 0 there), ``e[:, j] = 1/N_jj`` the escape
    probability, ``g[:, j] = ψ_j / N_jj`` (``None`` unless
    ``need_absorption``); ``N = (D - zQ)^{-1}``, ``ψ = N slack``.  So the row
    of N from the start is ``h / e`` and $\psi_j = g_j / e_j$.  A state
    that is never absorbed gives e = 0 (or NaN): the caller raises.
    """
    fwd = _padded(forward, offsets, 0.0)
    bwd = _padded(backward, offsets, 0.0)
    slk = _padded(slack, offsets, 1.0)          # padding states are isolated and absorbing
    width = fwd.shape[1]
    w = np.asarray(w, dtype=np.float64).reshape(-1, 1)
    z = 1.0 - w
    local_start = np.asarray(local_starts, dtype=np.intp)
    with np.errstate(divide="ignore", invalid="ignore"):
        # a (from j+1 down to j) is b of the mirrored chain: the same sweep on the reversed arrays, forward and
        # backward swapped; its reach counts the start, which the sum below takes from the upward sweep
        abar, alpha, reach_down = (x[:, :, ::-1] for x in _sweep(bwd[:, ::-1], fwd[:, ::-1], slk[:, ::-1], z, w,
                                                                 width - 1 - local_start, need_absorption))
        bbar, beta, reach_up = _sweep(fwd, bwd, slk, z, w, local_start, need_absorption)
        e = slk + w[:, :, None] * (fwd + bwd) + z[:, :, None] * (fwd * abar + bwd * bbar)
        g = slk + z[:, :, None] * (fwd * alpha + bwd * beta) if need_absorption else None
    h = np.where(np.arange(width) == local_start[:, None], 0.0, reach_down) + reach_up
    valid = np.arange(width)[None, :] < np.diff(offsets)[:, None]
    return tuple(x[:, valid] if x is not None else None for x in (h, e, g))


def _sweep(toward, away, slack, z, w, local_start, need_absorption):
    """One elimination of `stable_parts`, from each block's first state up: ``b̄``, the sums β of absorption
    and the probabilities of reaching each state from the start (1 there); written once for both directions."""
    shape = (w.shape[0],) + toward.shape
    bar, absorption, reach = np.ones(shape), np.zeros(shape), np.zeros(shape)
    reach[:, :, 0] = local_start == 0
    for j in range(1, toward.shape[1]):
        p, q, s = toward[:, j - 1], away[:, j - 1], slack[:, j - 1]
        zq = z * q
        den = s + p + w * q + zq * bar[:, :, j - 1]
        bar[:, :, j] = (s + w * (p + q) + zq * bar[:, :, j - 1]) / den
        if need_absorption:
            absorption[:, :, j] = (s + zq * absorption[:, :, j - 1]) / den
        b = z * p / den
        reach[:, :, j] = np.where(local_start == j, 1.0, b * reach[:, :, j - 1])
    return bar, absorption, reach


def stable_parts_at_one(forward: ArrayLike, backward: ArrayLike, slack: ArrayLike, offsets: ArrayLike,
                        local_starts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(h, e)`` of `stable_parts` at z = 1 (one node, w = 0), refusing a chain with states that are never
    absorbed (an escape probability e that is not positive)."""
    h, e, _ = stable_parts(forward, backward, slack, offsets, local_starts, np.zeros(1))
    if not np.all(e[0] > 0):
        raise ValueError(SINGULAR)
    return h[0], e[0]


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
    """`absorbed` chains and their diagonal (default ones)."""
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
