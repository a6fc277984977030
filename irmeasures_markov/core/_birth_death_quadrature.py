r"""Quadrature of the order-1 integral of birth–death chains, with a-priori error bounds.

`birth_death_average_reward` writes
$E_s[\frac1H \sum_{n \le H} r(X_n) c^{k(n)-1}]$ as $\int_0^1 G(z)\,dz$
with

$$
G(z) = \sum_j r_j \frac{N^z_{sj}\, \psi^z_j}{(1-c) N^z_{jj} + c}
= E_s\Big[\Big(\sum_{n \le H} r(X_n) c^{k(n)-1}\Big) z^{H-1}\Big],
$$

a power series in $z$ whose coefficients $a_h = E_s[\sum r c^{k-1};
H = h]$ are nonnegative when the rewards are.  Two facts make it cheap:

**Truncation** (`reach_truncation`).  A walk from $s$ reaches
state $j > s$ only through $s+1, \dots, j-1$, so
$P_s(\text{reach } j) = \prod_{s \le k < j} a_k$, $a_k$ the
probability of ever stepping from $k$ to $k+1$.  From the first step,
$a_k = p_k / (1 - q_k a_{k-1})$, hence $a_k \le p_k/(1 - q_k)$ and,
iterating once more with that bound, $a_k \le p_k / (1 - q_k
\bar a_{k-1})$.  Until the walk first reaches a state $D+1$ it is the
same walk as on the chain cut after $D$ (forward mass at $D$
stopping), and the averaged reward lies in $[0, \max_j |r_j|]$ on both, so
cutting where the bound on $P_s(\text{reach } D+1)$ falls below
``tol`` changes the expectation by at most ``tol`` $\cdot \max_j |r_j|$.

**Gauss–Legendre with an error bound** (`gauss_nodes_for_bound`).
$G$ is analytic in the disc $|z| < R$, $R \ge 1/\rho(Q)$
($N^z$ has its poles at the reciprocals of the eigenvalues of $Q$),
and $|G(z)| \le G(|z|)$ there (nonnegative coefficients, with
$|r_j|$ in place of $r_j$).  The Bernstein ellipse of
$[0, 1]$ with parameter $\varrho$ reaches out to
$|z| = \frac12 + \frac14(\varrho + \varrho^{-1})$; if that is
$\le \bar r < R$, the $n$-point Gauss–Legendre error is at most
$\frac{64}{15} \frac{M}{(\varrho^2 - 1)\varrho^{2n}}$ with
$M = G(\bar r)$ ([1], Theorem 19.3), which one evaluation of the
integrand at the real point $z = \bar r$ gives.  $\rho(Q)$ is
bounded without eigenvalues (`spectral_radius_bound`): $Q$ is
similar to the symmetric matrix with off-diagonal $\sqrt{p_i q_{i+1}}$,
so Gershgorin's discs of that matrix bound it, as do the row sums
$p_i + q_i$ and $1 - 1/\max_i E_i[H]$ (the norm of
$(I - Q)^{-1}$ is $\max_i E_i[H]$).

On a walk that stops with probability 1/4 per step (RWBM p = 0.5, q = 0.25)
this means about 75 ranks per query instead of 1000 and some 20 nodes instead
of 60, each node solving all queries together.

References
----------
[1] L. N. Trefethen, *Approximation Theory and Approximation Practice*,
   SIAM 2013, Chapter 19 (Gauss quadrature for functions analytic in a
   Bernstein ellipse).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._segments import expand_ranges, query_blocks, segment_sum

lapack = lazy_module("scipy.linalg.lapack")  # imported at the first call: `import irmeasures_markov` stays cheap

__all__ = ["graded_gauss_legendre", "quadrature_levels", "reach_truncation", "identical_blocks",
           "spectral_radius_bound", "gauss_nodes_for_bound", "node_terms"]

#: most Gauss–Legendre nodes of one rule; blocks that need more use the graded rule
MAX_GAUSS_NODES = 64


@functools.cache  # the rules are few (a level count, or one piece of up to MAX_GAUSS_NODES nodes)
def graded_gauss_legendre(levels: int, nodes_per_piece: int = 12, in_w: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights on [0, 1], refined geometrically towards 1.

    Pieces $[0, 1/2], [1/2, 3/4], \dots, [1 - 2^{-K}, 1]$ with
    ``levels`` = K, each with a Gauss–Legendre rule.  A function analytic in
    a disc of radius $1 + \varepsilon$ around 0 (a generating function
    with a pole just beyond 1) is integrated to near machine precision when
    $2^{-K} \lesssim \varepsilon / 4$: every piece then has its nearest
    singularity at least one piece-length away.

    Parameters
    ----------
    levels : int
        number K of geometric refinements towards 1.
    nodes_per_piece : int
        Gauss–Legendre nodes per piece.
    in_w : bool
        Give the nodes in $w = 1 - z$ instead (pieces $[1/2, 1], [1/4, 1/2], \dots,
        [0, 2^{-K}]$, in that order), computed in $w$ so that nodes next to $z = 1$ stay exact.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        the nodes in [0, 1] and their weights (cached: read them, never write).
    """
    x, w = np.polynomial.legendre.leggauss(int(nodes_per_piece))
    tail = 0.5 ** np.arange(int(levels) + 1)
    edges = np.concatenate([tail, [0.0]]) if in_w else np.concatenate([1.0 - tail, [1.0]])
    lo, hi = np.minimum(edges[:-1], edges[1:]), np.maximum(edges[:-1], edges[1:])
    return (np.concatenate([a + (b - a) * (x + 1) / 2 for a, b in zip(lo, hi)]),
            np.concatenate([w * (b - a) / 2 for a, b in zip(lo, hi)]))


def quadrature_levels(max_visits: float, most: int = 45) -> int:
    r"""Pieces of `graded_gauss_legendre` for a chain with $\max_i E_i[H]$ = ``max_visits``
    (``most`` when that is not finite)."""
    # the integrand's pole lies beyond 1 + 1/max_i E_i[H]; pieces of length 2^-K <= 1/(4 max E_i[H])
    if not np.isfinite(max_visits):
        return most
    return int(np.clip(math.ceil(math.log2(max(max_visits, 1.0))) + 2, 2, most))


def _reach_keep(fwd, bwd, offsets, local_starts, tol):
    n = fwd.size
    if n == 0:
        return np.zeros(offsets.size - 1, dtype=np.intp)
    # a_k <= p_k / (1 - q_k), then once more through the recursion a_k = p_k / (1 - q_k a_{k-1})
    # (q_k = 0 at a block's first state, so the neighbour block's bound plays no part)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(fwd > 0, fwd / (1.0 - bwd), 0.0)
        prev = np.concatenate(([0.0], bound[:-1]))
        bound = np.where(fwd > 0, fwd / (1.0 - bwd * prev), 0.0)
        logb = np.log(np.clip(bound, 1e-300, 1.0))
    cum = np.concatenate(([0.0], np.cumsum(logb)))   # cum[j] = sum_{k<j} log bound_k
    lengths = np.diff(offsets)
    has = local_starts >= 0
    start = np.where(has, offsets[:-1] + local_starts, offsets[:-1])
    st = np.repeat(start, lengths)
    # within a block the log bound of reaching j from the start is cum[j] - cum[start], nonincreasing
    reached = (np.arange(n) <= st) | (cum[:-1] - cum[st] >= math.log(tol))
    return np.where(has, segment_sum(reached, offsets), 0)


def reach_truncation(gather: Callable[[np.ndarray], tuple], offsets: ArrayLike, local_starts: ArrayLike,
                     tol: float, window: int = 128, chunk: int = 1 << 17) -> np.ndarray:
    """Number of states to keep in each block so that the dropped ones are reached with probability < ``tol``.

    ``gather(idx) -> (fwd[idx], bwd[idx], ...)`` reads the chains at an
    increasing array of states (whole stretches of blocks; only the first two
    arrays returned are read), so the caller need not hold them.
    ``local_starts[b]`` is block b's start counted from its first state (-1:
    no start, keep nothing).  States up to the start are always kept; after
    it, the first state whose reach probability is bounded by ``tol`` (see the
    module doc) and every later one are dropped.  The bounds are first
    computed on the ``window`` states after each start, then on the whole of
    the blocks not settled there, so the cost follows the kept states; blocks
    are taken in groups of about ``chunk`` states, which bounds the memory.
    """
    lengths = np.diff(offsets)
    local_starts = np.asarray(local_starts, dtype=np.intp)
    has = local_starts >= 0
    span = np.where(has, np.minimum(lengths, local_starts + window), 0)
    keep = np.zeros(lengths.size, dtype=np.intp)
    _keep_in_groups(gather, offsets, local_starts, tol, np.flatnonzero(has), span, keep, chunk)
    # blocks still reached at the window's end: their whole length
    open_ = np.flatnonzero(has & (keep == span) & (span < lengths))
    _keep_in_groups(gather, offsets, local_starts, tol, open_, lengths, keep, chunk)
    return keep


def _keep_in_groups(gather, offsets, local_starts, tol, blocks, span, keep, chunk):
    """``keep[blocks]`` from the first ``span[blocks]`` states of each, in groups of about ``chunk`` states."""
    if blocks.size == 0:
        return
    sizes = span[blocks]
    for a, b in query_blocks(np.concatenate([[0], np.cumsum(sizes)]), max(int(chunk), 1)):
        ids = blocks[a:b]
        f, bw = gather(expand_ranges(offsets[ids], sizes[a:b]))[:2]
        keep[ids] = _reach_keep(f, bw, np.concatenate([[0], np.cumsum(sizes[a:b])]).astype(np.intp),
                                local_starts[ids], tol)


def identical_blocks(fwd: ArrayLike, bwd: ArrayLike, offsets: ArrayLike, local_starts: ArrayLike) -> np.ndarray:
    """For every block, the first block with the same forward and backward probabilities and start.

    Blocks are grouped by a key (length, start and two weighted sums of the
    probabilities), then compared state by state with their group's first
    block; a block that differs after all (a key collision) is its own
    representative.  O(n).
    """
    lengths = np.diff(offsets)
    nb = lengths.size
    if nb <= 1:
        return np.arange(nb)
    pos = np.arange(fwd.size) - np.repeat(offsets[:-1], lengths)
    weight = 1.0 + 0.6180339887498949 * pos
    keys = np.stack([lengths.astype(np.float64), np.asarray(local_starts, dtype=np.float64),
                     np.add.reduceat(fwd * weight, offsets[:-1]), np.add.reduceat(bwd / weight, offsets[:-1])],
                    axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    rep = first[np.ravel(inverse)]
    other = np.arange(fwd.size) + np.repeat(offsets[rep] - offsets[:-1], lengths)
    same = np.logical_and.reduceat((fwd == fwd[other]) & (bwd == bwd[other]), offsets[:-1])
    return np.where(same, rep, np.arange(nb))


def spectral_radius_bound(fwd: ArrayLike, bwd: ArrayLike, offsets: ArrayLike, max_visits: ArrayLike) -> np.ndarray:
    r"""Upper bound on $\rho(Q)$ of every block (see the module doc); ``max_visits[b]`` is
    $\max_i E_i[H]$ over block b."""
    n = fwd.size
    g = np.sqrt(fwd[:-1] * bwd[1:]) if n > 1 else np.zeros(0)
    sym = np.zeros(n)
    sym[:-1] += g
    sym[1:] += g
    starts = offsets[:-1]
    # each bound holds on its own (max over the block); a row-wise minimum of the two would not
    gersh = np.maximum.reduceat(sym, starts)
    rows = np.maximum.reduceat(fwd + bwd, starts)
    norm = 1.0 - 1.0 / np.maximum(np.asarray(max_visits, dtype=np.float64), 1.0)
    return np.minimum(np.minimum(gersh, rows), norm)


def gauss_nodes_for_bound(radius: ArrayLike, bound_value: ArrayLike, tol: float) -> np.ndarray:
    r"""Gauss–Legendre nodes needed on [0, 1] for an error below ``tol`` given $|G| \le$
    ``bound_value`` on the disc of ``radius`` (> 1) about 0 (Trefethen's bound, module doc)."""
    x = 2.0 * np.asarray(radius, dtype=np.float64) - 1.0       # the ellipse reaching |z| = radius
    rho = x + np.sqrt(np.maximum(x * x - 1.0, 0.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        need = np.log(64.0 * np.maximum(bound_value, 1e-300) / (15.0 * (rho * rho - 1.0) * tol)) \
            / (2.0 * np.log(rho))
    # a radius at 1 (or a bound that is not finite) admits no finite rule: "too many"
    need = np.where(np.isfinite(need) & (rho > 1.0), need, 1e9)
    return np.clip(np.ceil(need), 1, 1e9).astype(np.int64)


def node_terms(fwd: ArrayLike, bwd: ArrayLike, stop: ArrayLike, e_start: ArrayLike, z: ArrayLike,
               c: float) -> np.ndarray | None:
    r"""$N^z_{sj} \psi^z_j / ((1-c) N^z_{jj} + c)$ at every state of stacked chains, with ``z`` per state.

    $M = I - zQ$ is an M-matrix for $z \rho(Q) < 1$, so elimination
    needs no pivoting and its pivots are those of the symmetric matrix with
    off-diagonal $-z\sqrt{p_i q_{i+1}}$ (LAPACK ``?pttrf``, from the top
    and, reversed, from the bottom).  The top pivots give the LU factors that
    ``?gttrs`` takes for $M \psi = s$ and $M^T x = e_s$; both
    pivot sweeps give the diagonal of $M^{-1}$.  Returns ``None`` when a
    factorisation fails (the caller then uses a pivoting path).
    """
    zf = z * fwd
    zb = z * bwd
    n = zf.size
    ones = np.ones(n)
    e = -np.sqrt(zf[:-1] * zb[1:])
    top, _, info = lapack.dpttrf(ones, e)
    if info != 0:
        return None
    # LU of M without pivoting: multipliers M[i+1, i] / top[i], U = (top, M[i, i+1])
    dl = -zb[1:] / top[:-1]
    du = -zf[:-1]
    du2 = np.zeros(max(n - 2, 0))
    ipiv = np.arange(1, n + 1, dtype=np.int32)
    # right-hand sides as fresh (n, 1) columns, which the solves overwrite
    psi, info1 = lapack.dgttrs(dl, top, du, du2, ipiv, np.array(stop[:, None]), overwrite_b=True)
    row, info2 = lapack.dgttrs(dl, top, du, du2, ipiv, np.array(e_start[:, None]), trans="T", overwrite_b=True)
    if info1 != 0 or info2 != 0:
        return None
    term = psi[:, 0] * row[:, 0]
    if c < 1.0:
        bot, _, info = lapack.dpttrf(ones, e[::-1])
        if info != 0:
            return None
        n_jj = 1.0 / (top + bot[::-1] - 1.0)
        term /= (1.0 - c) * n_jj + c
    return term
