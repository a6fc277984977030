r"""Order-1 quantities of birth–death chains: $E_s[\frac1H \sum_{n \le H} r(X_n) c^{k(n)-1}]$.

[`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward] integrates the generating function of
the
absorption time $H$ (cut where the walk is no longer reached, one
Gauss–Legendre rule sized by an a-priori error bound: `birth_death_quadrature`);
[`birth_death_average_reward_recursion`][irmeasures_markov.core.birth_death_average_reward_recursion] runs step
recursions on one
chain.  The solves they use are
`birth_death`'s.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._segments import expand_ranges, query_blocks
from irmeasures_markov.core._birth_death import (
    absorbed,
    birth_death_inverse_diagonal,
    birth_death_solve,
    birth_death_solve_pair,
    block_positions,
    block_starts,
    checked_discount,
    ill_conditioned,
    renumber,
    stable_average_reward,
    stable_parts_at_one,
    start_indicator,
    sub_offsets,
    uncoupled_blocks,
)
from irmeasures_markov.core._birth_death_quadrature import (
    MAX_GAUSS_NODES,
    gauss_nodes_for_bound,
    graded_gauss_legendre,
    identical_blocks,
    node_terms,
    quadrature_levels,
    reach_truncation,
    spectral_radius_bound,
)

__all__ = ["birth_death_average_reward", "birth_death_average_reward_recursion", "average_reward_groups",
           "average_reward_starts"]

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
#: kept states of the blocks handled together by the order-1 integral
ORDER1_GROUP_STATES = 1 << 17
#: states per group of the truncation's bounds (:func:`~.birth_death_quadrature.reach_truncation`)
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
    $|r_j|$; `birth_death_quadrature`).  Each node costs two
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
    """The order-1 integral of [`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward] without
    truncation, by the graded
    Gauss–Legendre rule ($\\log_2 \\max_i E_i[H] + 2$ pieces of 12 nodes, the integrand's pole
    lying beyond $1 + 1/\\max_i E_i[H]$): the method before the a-priori rule, kept for blocks
    that need more nodes than one rule allows and as an independent check."""
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

