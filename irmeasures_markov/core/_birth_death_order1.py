r"""Order-1 quantities of birth–death chains: $E_s[\frac1H \sum_{n \le H} r(X_n) c^{k(n)-1}]$.

[`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward] integrates the generating function of
the absorption time $H$ (cut where the walk is no longer reached, one Gauss–Legendre rule sized by an a-priori error
bound: below); [`birth_death_average_reward_recursion`][irmeasures_markov.core.birth_death_average_reward_recursion]
runs step recursions on one chain.  The solves they use, and the subtraction-free elimination, are `_birth_death`'s.

Truncation and quadrature, with a-priori error bounds
-----------------------------------------------------
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
from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._segments import expand_ranges, query_blocks, segment_sum
from irmeasures_markov.core._birth_death import (
    SINGULAR,
    absorbed,
    birth_death_inverse_diagonal,
    birth_death_solve,
    birth_death_solve_pair,
    block_positions,
    block_starts,
    checked_discount,
    ill_conditioned,
    renumber,
    stable_parts,
    stable_parts_at_one,
    start_indicator,
    sub_offsets,
    uncoupled_blocks,
)

lapack = lazy_module("scipy.linalg.lapack")  # imported at the first call: `import irmeasures_markov` stays cheap

__all__ = ["birth_death_average_reward", "birth_death_average_reward_recursion", "average_reward_groups",
           "average_reward_starts", "graded_gauss_legendre", "quadrature_levels", "reach_truncation",
           "identical_blocks", "spectral_radius_bound", "gauss_nodes_for_bound", "node_terms",
           "stable_average_reward"]

#: the step recursion refuses chains whose expected absorption time exceeds this (it would take
#: about that many steps)
MAX_RECURSION_VISITS = 1e6
#: the order-1 integral drops states reached with probability below this (times the largest |reward|)
ORDER1_TRUNCATION_TOL = 1e-16
#: a-priori bound on the order-1 quadrature error (times the largest |reward| of a block)
ORDER1_QUADRATURE_TOL = 1e-15
#: where the bound of the order-1 integrand is taken: r = 1 + this * (1/rho(Q) - 1)
ORDER1_BOUND_POSITION = 0.75
#: nodes x states solved at once by the order-1 Gauss rule (about 20 arrays of this many doubles)
ORDER1_CELLS = 1 << 18
#: nodes x states held at once by the subtraction-free quadrature
STABLE_CELLS = 1 << 20
#: kept states of the blocks handled together by the order-1 integral
ORDER1_GROUP_STATES = 1 << 17
#: states per group of the truncation's bounds (`reach_truncation`)
ORDER1_REACH_CHUNK = 1 << 17


def _chain_inputs(forward, backward, reward, discount):
    """The validated inputs of every order-1 method: ``(forward, backward, stop, reward, c)``, the out-of-range
    moves turned into absorption, a reward per state and the visit discount c in [0, 1]."""
    fwd, bwd = absorbed(forward, backward)
    lo = min(float(fwd.min()), float(bwd.min())) if fwd.size else 0.0
    hi = float(np.max(fwd + bwd)) if fwd.size else 0.0
    if not (lo >= 0 and hi <= 1 + 1e-12):          # NaN fails both comparisons
        raise ValueError("`forward` and `backward` must be probabilities with forward + backward <= 1.")
    reward = np.asarray(reward, dtype=np.float64)
    if reward.shape != fwd.shape:
        raise ValueError(f"`reward` must have shape ({fwd.size},), got {reward.shape}.")
    return fwd, bwd, np.clip(1.0 - fwd - bwd, 0.0, 1.0), reward, checked_discount(discount)


def birth_death_average_reward(forward: ArrayLike, backward: ArrayLike, reward: ArrayLike, starts: ArrayLike,
                               discount: float = 1.0) -> np.ndarray:
    r"""Terms of $E_s[\frac1H \sum_{n=1}^{H} r(X_n)\, c^{k(n)-1}]$ by the generating function of H.

    $H$ is the number of states visited before absorption (the
    absorption time), $X_n$ the $n$-th state and $k(n)$ how
    many times it has been visited so far; $c$ = ``discount``.  Since
    $1/H = \int_0^1 z^{H-1} dz$,

    $$
    E_s\Big[\frac1H \sum_{n \le H} r(X_n) c^{k(n)-1}\Big] = \int_0^1 \sum_j r_j\,
    \frac{N^z_{sj}\, \psi^z_j}{(1-c) N^z_{jj} + c}\, dz,
    \qquad N^z = (I - zQ)^{-1},\ \psi^z = N^z s,
    $$

    where $N^z_{sj}$ carries $z$ per step up to a visit of
    $j$, $\psi^z_j$ per remaining step after it, and the
    denominator discounts revisits as in
    [`birth_death_discounted_visits`][irmeasures_markov.core.birth_death_discounted_visits].

    Each block is first cut where the walk from its start is reached with
    probability below `ORDER1_TRUNCATION_TOL` (a bound from the forward
    and backward probabilities alone), then integrated by one Gauss–Legendre
    rule with as many nodes as Trefethen's a-priori bound asks for an error
    below `ORDER1_QUADRATURE_TOL` (both relative to the block's largest
    $|r_j|$; module doc).  Each node costs two
    ``?pttrf`` and two ``?gttrs``, O(n) for all blocks and all nodes stacked
    together.  Blocks that need more than
    `MAX_GAUSS_NODES` nodes take the graded
    rule (pieces refined towards 1, `graded_gauss_legendre`), nearly
    non-absorbing ones the subtraction-free elimination (module doc).

    Parameters
    ----------
    forward : array_like, shape (n,)
        transition probabilities (out-of-range moves are absorbed); stacked
        chains need zero couplings at their block boundaries.
    backward : array_like, shape (n,)
        transition probabilities (out-of-range moves are absorbed); stacked
        chains need zero couplings at their block boundaries.
    reward : array_like, shape (n,)
    starts : array_like of int
        the start state of every block (one per block).
    discount : float in [0, 1]

    Returns
    -------
    ndarray, shape (n,)
        per-state terms: their sum over a block is that block's expectation
        (0 beyond the truncation depth).

    See Also
    --------
    birth_death_average_reward_recursion : the same expectation by step recursions.
    """
    fwd, bwd, _, reward, c = _chain_inputs(forward, backward, reward, discount)
    n = fwd.size
    if n == 0:
        return np.zeros(0)
    starts = np.asarray(starts, dtype=np.intp).ravel()
    if starts.size and (starts.min() < 0 or starts.max() >= n):
        raise ValueError(f"`starts` must be states in [0, {n}).")
    offsets = uncoupled_blocks(fwd, bwd)
    local = average_reward_starts(offsets, starts, reward)
    total = np.zeros(n)
    for mask, values, _ in average_reward_groups(lambda idx: (fwd[idx], bwd[idx]), offsets, local, c):
        total[mask] = values * reward[mask]
    return total


def average_reward_starts(offsets: ArrayLike, starts: ArrayLike, reward: ArrayLike) -> np.ndarray:
    """The start of every uncoupled block (``offsets``) counted from its first state; -1 where the block has
    no start or no reward (it adds nothing).  ``starts`` are states of the stacked chains."""
    local = block_starts(starts, offsets, np.ones(offsets.size - 1, dtype=bool))
    scale = np.maximum(np.maximum.reduceat(reward, offsets[:-1]), -np.minimum.reduceat(reward, offsets[:-1]))
    local[scale == 0] = -1                   # a block without reward adds nothing: drop it whole
    return local


def average_reward_groups(gather: Callable[[np.ndarray], tuple], offsets: ArrayLike, local_starts: ArrayLike,
                          discount: float = 1.0) -> Iterator[tuple[np.ndarray, np.ndarray, list]]:
    """[`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward]'s per-state integrals (reward
    excluded), group by group.

    ``offsets`` are the uncoupled blocks of the stacked chains and
    ``local_starts`` their starts (`average_reward_starts`);
    ``gather(idx) -> (fwd[idx], bwd[idx], *extra)`` reads the chains (after
    `_chain_inputs`) at an increasing array of states, so the caller
    need not hold them.  Yields ``(states, values, extra)`` for groups of about
    `ORDER1_GROUP_STATES` kept states (0 elsewhere), in order of state;
    ``extra`` is what ``gather`` returned for ``states`` besides the chains.
    The groups, hence the quadrature rule of each, depend on ``offsets`` and
    the kept states only: the same values as one pass over the chains.
    """
    c = float(discount)
    keep = reach_truncation(gather, offsets, local_starts, ORDER1_TRUNCATION_TOL, chunk=ORDER1_REACH_CHUNK)
    kept = np.flatnonzero(keep > 0)
    # groups of about ORDER1_GROUP_STATES kept states bound the memory of everything below
    for a, b in query_blocks(np.concatenate([[0], np.cumsum(keep[kept])]), ORDER1_GROUP_STATES):
        blocks = kept[a:b]
        mask = expand_ranges(offsets[blocks], keep[blocks])
        f, bw, *extra = gather(mask)
        yield mask, _average_reward_kept(f, bw, keep[blocks], local_starts[blocks], c), extra


def _average_reward_kept(f_t, b_t, keep, local, c):
    """Per-state integrals on the kept states of some blocks (``keep[k]`` states each, start
    ``local[k]``): the cut applied, identical blocks integrated once."""
    s_t = np.clip(1.0 - f_t - b_t, 0.0, 1.0)
    sub = np.concatenate([[0], np.cumsum(keep)]).astype(np.intp)
    last = sub[1:] - 1
    s_t[last] += f_t[last]                   # the cut: forward mass at the last kept state stops
    f_t[last] = 0.0
    # the integrals depend on the chain only: blocks with the same transitions and start (every
    # query, when p and q do not depend on relevance) are integrated once
    rep = identical_blocks(f_t, b_t, sub, local)
    unique = rep == np.arange(rep.size)
    if unique.all():
        return _average_reward_cut(f_t, b_t, s_t, sub, sub[:-1] + local, c)
    at = block_positions(sub, unique)
    once = np.zeros(f_t.size)
    once[at] = _average_reward_cut(f_t[at], b_t[at], s_t[at], sub_offsets(sub, unique),
                                   sub_offsets(sub, unique)[:-1] + local[unique], c)
    return once[np.arange(f_t.size) + np.repeat(sub[rep] - sub[:-1], np.diff(sub))]


def _expected_steps(fwd, bwd, offsets):
    """``(E_i[H] per state, ill-conditioned flag per block)``; every block is ill when the solve fails
    (the steps are then None and only the subtraction-free path is used)."""
    try:
        with np.errstate(all="ignore"):
            steps = birth_death_solve(fwd, bwd, np.ones(fwd.size))
        return steps, ill_conditioned(offsets, steps)
    except ValueError:
        return None, np.ones(offsets.size - 1, dtype=bool)


def _average_reward_cut(fwd, bwd, stop, offsets, starts, c):
    """Per-state integrals of [`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward] (reward
    excluded) on cut blocks,
    one start per block: one Gauss rule for all well-conditioned blocks, the other paths for the rest."""
    n = fwd.size
    e_start = start_indicator(starts, n)
    steps, ill = _expected_steps(fwd, bwd, offsets)
    total = np.zeros(n)
    if ill.any():
        bad = block_positions(offsets, ill)
        total[bad] = stable_average_reward(fwd[bad], bwd[bad], stop[bad], sub_offsets(offsets, ill),
                                           block_starts(starts, offsets, ill), c)
    good = ~ill
    if not good.any():
        return total
    # (fancy indexing copies; the usual case, every block well-conditioned, needs none)
    at = block_positions(offsets, good) if ill.any() else slice(None)
    f, b, s, e1 = (fwd[at], bwd[at], stop[at], e_start[at]) if ill.any() else (fwd, bwd, stop, e_start)
    offs = sub_offsets(offsets, good) if ill.any() else offsets
    lengths = np.diff(offs)
    # the bound M = G(r) of the integrand on the disc |z| <= r, r between 1 and 1/rho(Q)
    rho = spectral_radius_bound(f, b, offs, np.maximum.reduceat(steps[at], offs[:-1]))
    with np.errstate(divide="ignore"):
        r = 1.0 + ORDER1_BOUND_POSITION * np.minimum(1.0 / rho - 1.0, 8.0)
    g_r = node_terms(f, b, s, e1, np.repeat(r, lengths), c) if f.size > 2 else None
    if g_r is None:
        need = np.full(lengths.size, MAX_GAUSS_NODES + 1)
    else:
        # |sum_j r_j T_j(z)| <= max |r| sum_j T_j(|z|): the bound relative to the largest reward
        with np.errstate(invalid="ignore", over="ignore"):
            bound = 2.0 * np.add.reduceat(g_r, offs[:-1])          # 2: headroom for rounding
        need = gauss_nodes_for_bound(r, bound, ORDER1_QUADRATURE_TOL)
        need[~np.isfinite(bound) | (bound < 0)] = MAX_GAUSS_NODES + 1
    fast = need <= MAX_GAUSS_NODES
    positions = np.arange(n)[at]
    if not fast.all():
        # too close to non-absorbing for one rule: the graded rule
        slow_at = block_positions(offs, ~fast)
        sub_starts = offs[:-1][~fast] + block_starts(np.flatnonzero(e1), offs, ~fast)
        total[positions[slow_at]] = _birth_death_average_reward_graded(f[slow_at], b[slow_at],
                                                                       np.ones(slow_at.sum()),
                                                                       renumber(sub_starts, slow_at), c)
    if fast.all():
        total[at] = _gauss_integral(f, b, s, e1, offs, int(need.max()), c)
    elif fast.any():
        fast_at = block_positions(offs, fast)
        total[positions[fast_at]] = _gauss_integral(f[fast_at], b[fast_at], s[fast_at], e1[fast_at],
                                                    sub_offsets(offs, fast), int(need[fast].max()), c)
    return total


def _gauss_integral(fwd, bwd, stop, e_start, offsets, n_nodes: int, c: float):
    """Per-state integrals over [0, 1] with an ``n_nodes``-point Gauss–Legendre rule.

    The nodes of a group of blocks are stacked as uncoupled copies of the
    chain, so one ``?pttrf``/``?gttrs`` sequence serves them all; groups hold
    about `ORDER1_CELLS` states x nodes, which bounds the memory.
    """
    z, w = graded_gauss_legendre(0, n_nodes)           # one piece: [0, 1]
    total = np.zeros(fwd.size)
    for a, b in query_blocks(offsets, max(1, ORDER1_CELLS // n_nodes)):
        lo, hi = int(offsets[a]), int(offsets[b])
        size = hi - lo
        per = max(1, ORDER1_CELLS // size)            # nodes at once (all of them unless a block is huge)
        f, b, s, e = fwd[lo:hi], bwd[lo:hi], stop[lo:hi], e_start[lo:hi]
        for k in range(0, n_nodes, per):
            zk = z[k:k + per]
            m = zk.size
            terms = node_terms(np.tile(f, m), np.tile(b, m), np.tile(s, m), np.tile(e, m), np.repeat(zk, size),
                               c) if m * size > 2 else None
            if terms is None:
                # a factorisation without pivoting failed (it cannot for an absorbing chain): pivot
                for zz, ww in zip(zk.tolist(), w[k:k + per].tolist()):
                    total[lo:hi] += ww * _node_term(zz, f, b, s, e, c)
                continue
            total[lo:hi] += w[k:k + per] @ terms.reshape(m, size)
    return total


def _node_term(z, fwd, bwd, stop, e_start, c):
    """The integrand at node ``z`` by two tridiagonal solves (where the stacked node terms do not apply)."""
    zf, zb = z * fwd, z * bwd
    psi, row = birth_death_solve_pair(zf, zb, stop, e_start)
    term = row * psi
    if c < 1.0:
        term /= (1.0 - c) * birth_death_inverse_diagonal(zf, zb) + c
    return term


def _birth_death_average_reward_graded(forward, backward, reward, starts, discount: float = 1.0) -> np.ndarray:
    """The order-1 integral without truncation by the graded rule (`quadrature_levels` pieces): the method
    before the a-priori rule, kept for blocks that need more nodes than one rule allows and as a check."""
    fwd, bwd, stop, reward, c = _chain_inputs(forward, backward, reward, discount)
    n = fwd.size
    if n == 0:
        return np.zeros(0)
    starts = np.asarray(starts, dtype=np.intp).ravel()
    e_start = start_indicator(starts, n)
    offsets = uncoupled_blocks(fwd, bwd)
    steps, ill = _expected_steps(fwd, bwd, offsets)
    if ill.any():
        good = block_positions(offsets, ~ill)
        total = np.zeros(n)
        if good.any():
            total[good] = _birth_death_average_reward_graded(fwd[good], bwd[good], np.ones(good.sum()),
                                                             renumber(starts[good[starts]], good), c)
        total[~good] = stable_average_reward(fwd[~good], bwd[~good], stop[~good], sub_offsets(offsets, ill),
                                              block_starts(starts, offsets, ill), c)
        return reward * total
    max_visits = float(steps.max())
    nodes, weights = graded_gauss_legendre(quadrature_levels(max_visits))
    total = np.zeros(n)
    for z, w in zip(nodes.tolist(), weights.tolist()):
        total += w * _node_term(z, fwd, bwd, stop, e_start, c)
    return reward * total


def birth_death_average_reward_recursion(forward: ArrayLike, backward: ArrayLike, reward: ArrayLike, start: int = 0,
                                         discount: float = 1.0, *,
                                         average: bool = True, tol: float = 1e-12) -> float:
    r"""$E_s[\frac1H \sum_{n=1}^{H} r(X_n)\, c^{k(n)-1}]$ on one chain by step recursions.

    Notation of [`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward].  By the Markov
    property at
    step $n$,

    $$
    E\Big[\frac1H \sum_{n \le H} r(X_n) c^{k(n)-1}\Big] = \sum_j r_j \sum_{n \ge 1}
    w_n(j)\, \phi_n(j),
    $$

    with $w_n(j) = E[1\{X_n = j\}\, c^{k(n)-1}]$ and $\phi_n(j) =
    E[1/H \mid X_n = j, H \ge n]$.  For every target $j$ with
    $r_j \ne 0$, a forward recursion carries the distribution of
    $X_n$ with mass discounted by $c$ at each pass through
    $j$ (so $w_n(j)$ is its mass at $j$); a backward
    recursion gives $\phi_n = s/n + Q \phi_{n+1}$.  The steps stop at
    the first $T$ with $P(H > T) <$ ``tol`` (the stopping rule: surviving
    mass below 1e-12) and start the backward recursion from
    $\phi_{T+1} = 0$, which makes $\phi_n(j) = E[1\{H \le T\}/H
    \mid X_n = j, H \ge n]$: the result is exactly the expectation restricted
    to $\{H \le T\}$, so it differs by at most $\max_j |r_j| \cdot$
    ``tol``.  With ``average=False`` the neglected part is at most
    $\max_j |r_j|\, E[H; H > T] \le \max_j |r_j|\, P(H > T)\, (T + m)$,
    $m = \max_i E_i[H]$, so the steps stop when $P(H > T)(T + m)
    <$ ``tol``.  O(n · targets · T) with discounting, O(n · T) without (every
    target shares one distribution); no quadrature.

    Parameters
    ----------
    forward : array_like, shape (n,)
        one chain (out-of-range moves are absorbed).
    backward : array_like, shape (n,)
        one chain (out-of-range moves are absorbed).
    reward : array_like, shape (n,)
        one chain (out-of-range moves are absorbed).
    start : int
        the start state.
    discount : float in [0, 1]
    average : bool
        ``False`` drops the $1/H$ (then $\phi \equiv 1$ up to the
        truncation): $E_s[\sum_{n \le H} r(X_n) c^{k(n)-1}]$.
    tol : float
        truncation: surviving mass $P(H > T)$ below which steps stop.

    Returns
    -------
    float
    """
    fwd, bwd, stop, reward, c = _chain_inputs(forward, backward, reward, discount)
    n = fwd.size
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ValueError(f"`tol` must be in (0, 1), got {tol!r}.")
    if n == 0:
        return 0.0
    if not (isinstance(start, (int, np.integer)) and 0 <= start < n):
        raise ValueError(f"`start` must be a state in [0, {n}), got {start!r}.")
    targets = np.flatnonzero(reward)
    if targets.size == 0:
        return 0.0
    # P(H > 2m) <= 1/2 from any state (Markov's inequality), m = max_i E_i[H]: the
    # surviving mass halves every 2m steps, which bounds T (and raises on singular chains)
    steps, _ = _expected_steps(fwd, bwd, np.array([0, n]))
    m = math.inf if steps is None else float(steps.max())
    if not m <= MAX_RECURSION_VISITS:
        # nearly non-absorbing (or singular): the recursion would need about m steps
        _, e = stable_parts_at_one(fwd, bwd, stop, np.array([0, n]), np.array([start]))
        with np.errstate(over="ignore"):
            m = float(np.sum(1.0 / e))
        raise ValueError(f"the step recursion would take about {m:.3g} steps (the expected absorption time "
                         f"reaches that order); use the generating function (method='generating'), which "
                         f"is exact here.")
    max_steps = math.ceil(2 * m) * (math.ceil(math.log2(1 / tol) + math.log2(m + 1)) + 9)
    # rows: one per target (discounted at its own state), plus the undiscounted distribution
    # when revisits are discounted, whose mass is P(H >= n)
    shared = c == 1.0
    rows = 1 if shared else targets.size + 1
    v = np.zeros((rows, n))
    v[:, start] = 1.0
    at_target = (np.zeros(targets.size, dtype=np.intp) if shared else np.arange(targets.size),
                 targets)
    w = []
    for step in range(1, max_steps + 1):
        # without 1/H the neglected part is E[H; H > T] <= P(H > T) (T + m), not P(H > T)
        if v[-1].sum() * (1.0 if average else step + m) < tol:
            break
        w.append(v[at_target])
        if not shared:
            v[at_target] *= c
        nxt = np.zeros_like(v)
        nxt[:, 1:] = v[:, :-1] * fwd[:-1]
        nxt[:, :-1] += v[:, 1:] * bwd[1:]
        v = nxt
    acc = np.zeros(targets.size)
    phi = np.zeros(n)
    for step in range(len(w), 0, -1):
        back = np.zeros(n)
        back[:-1] = fwd[:-1] * phi[1:]
        back[1:] += bwd[1:] * phi[:-1]
        phi = (stop / step if average else stop) + back
        acc += w[step - 1] * phi[targets]
    return float(reward[targets] @ acc)


#: most Gauss–Legendre nodes of one rule; blocks that need more use the graded rule
MAX_GAUSS_NODES = 64


@functools.cache  # the rules are few (a level count, or one piece of up to MAX_GAUSS_NODES nodes)
def graded_gauss_legendre(levels: int, nodes_per_piece: int = 12, in_w: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights on [0, 1], refined geometrically towards 1 (cached: read them, never write).

    Pieces $[0, 1/2], [1/2, 3/4], \dots, [1 - 2^{-K}, 1]$ with ``levels`` = K, each with a
    ``nodes_per_piece``-point Gauss–Legendre rule.  A function analytic in a disc of radius
    $1 + \varepsilon$ around 0 (a generating function with a pole just beyond 1) is integrated to near
    machine precision when $2^{-K} \lesssim \varepsilon / 4$: every piece then has its nearest
    singularity at least one piece-length away.  ``in_w``: the nodes in $w = 1 - z$ instead (pieces
    $[1/2, 1], [1/4, 1/2], \dots, [0, 2^{-K}]$, in that order), computed in $w$ so that nodes next to
    $z = 1$ stay exact.
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


def stable_average_reward(fwd: ArrayLike, bwd: ArrayLike, stop: ArrayLike, offsets: ArrayLike,
                          local_starts: ArrayLike, c: float) -> np.ndarray:
    r"""Per-state integrals $\int_0^1 N^z_{sj} \psi^z_j / ((1-c) N^z_{jj} + c)\, dz$ by the
    subtraction-free elimination, in $w = 1 - z$ (nodes graded towards w = 0, down to
    a quarter of $1/\max_i E_i[H]$, which bounds the integrand's pole away from [0, 1])."""
    _, e1 = stable_parts_at_one(fwd, bwd, stop, offsets, local_starts)
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
