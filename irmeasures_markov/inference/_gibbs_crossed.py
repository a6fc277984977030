r"""Crossed normal random effects (§3.1 with the extra effects of §3.3) sampled by a blocked Gibbs sampler.

The model of `fit_linear_model` (stated in `irmeasures_markov.inference._bayes`): for row r of a long table,

$$
y_r \sim N\Big(\mu + \sum_{k} b_k[\ell_k(r)],\ \sigma^2\Big),\quad b_k \sim N(0, s_k I),\quad
\sqrt{s_k} \sim \text{half-Cauchy}(0, 1),\quad \mu \sim N(0, 10^2),\quad p(\sigma) \propto 1/\sigma,
$$

where k runs over the effects (system, topic, extra columns) and the two-way interactions (one level per pair
of levels), and ℓ_k(r) is row r's level of effect k.

When every effect is in an interaction, one sweep is: for each interaction ab and each of its main effects a,
(s_a, s_ab) drawn with μ, b_a and b_ab integrated out, then μ, b_a, b_ab given them (`NestedScales`: a main
effect's scale given its interaction's levels crawls when it is the smaller, as σ_topic beside σ_topic×corpus
on TREC-8 P@10); then σ² (step 4 below).  Otherwise one sweep, each step an exact conditional draw:

1. μ and the levels of a block of effects jointly given the scales and the other effects — a Gaussian linear
   model whose precision is X'X/σ² + prior: the block's effect with most levels (its block of X'X is diagonal) is
   integrated out, the rest drawn through one Cholesky factor, then that effect given the rest.  One block holds
   every effect when that dense part is small (`JOINT_LEVELS`); else there is one block per interaction with its
   two main effects (`location_blocks`).  Drawing μ, the main effects and their interactions together removes
   the ridges (μ against an effect's mean, a main effect against its interactions' means) along which
   one-effect-at-a-time Gibbs crawls;
2. each scale s_k given its effect, through the half-Cauchy's inverse-gamma mixture (Wand et al. 2011), then
   each (s_k, μ, b_k) jointly given the rest: s_k from its law with μ and b_k integrated out (`collapsed_scale`:
   slice sampling on log s_k), μ and b_k given it;
3. a parameter-expanded move of all the scales at once (Gelman 2006; Gelman, van Dyk, Huang & Boscardin 2008),
   b_k = ξ_k η_k with (ξ_1..ξ_K) drawn jointly as a regression, which keeps a scale whose effect the data hardly
   inform from sticking near 0;
4. σ² ~ InvGamma(N/2, Σ residual²/2) (the Jeffreys prior).

The same construction as `gibbs_linear_model` (complete topics × systems matrix, two effects), for any number of
effects on an unbalanced table (cells with several rows or none).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg
import scipy.sparse

from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov.inference._posterior import EFFECT_SCALE_PRIOR, MU_PRIOR_SD, BayesResult, sampling_diagnostics

__all__ = ["MAX_DENSE_LEVELS", "gibbs_fit", "sample_crossed_effects"]

#: A block of step 1 whose dense part (μ and the levels of its effects but the largest) is larger is refused: its
#: Cholesky factor, once per draw and chain, would take seconds.
MAX_DENSE_LEVELS = 2000
#: Up to this many levels besides the largest effect's, every location is drawn in one block (step 1).
JOINT_LEVELS = 300


def sample_crossed_effects(y: np.ndarray, factors: Sequence[tuple[str, np.ndarray, int]],
                           interactions: Sequence[tuple[int, int, int]] = (), *, draws: int = 1000,
                           tune: int = 1000, chains: int = 4, seed: int | None = 0,
                           progress: bool | None = None) -> dict[str, np.ndarray]:
    """Posterior draws of the crossed random-effects model (module docstring), chains × draws × levels.

    Parameters
    ----------
    y : numpy.ndarray
        The N observations.
    factors : sequence of (str, numpy.ndarray, int)
        Each effect: its name, its level index per row (0..levels−1) and its number of levels (levels without a
        row allowed: their draws follow the prior).
    interactions : sequence of (int, int, int)
        ``(k, a, b)``: ``factors[k]`` is the interaction of ``factors[a]`` and ``factors[b]`` (it decides the
        blocks of step 1, `location_blocks`).
    draws : int
        Kept draws per chain.
    tune : int
        Discarded draws before them.
    chains : int
        Independent chains, drawn at once; they start from scattered scales.
    seed : int or None
        Seed of the chains.
    progress : bool or None
        A progress bar on standard error (None: only when it is a terminal).

    Returns
    -------
    dict of str to numpy.ndarray
        ``mu`` and ``sigma`` (chains × draws), each effect by its name and ``sigma_<name>`` its scale.

    Raises
    ------
    ValueError
        No effect, fewer than 2 rows, or a dense block larger than `MAX_DENSE_LEVELS`.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    names = [str(f[0]) for f in factors]
    idx = [np.asarray(f[1], dtype=np.int64) for f in factors]
    sizes = np.array([int(f[2]) for f in factors], dtype=np.int64)
    n_k = len(factors)
    if n_k == 0 or n < 2:
        raise ValueError(f"the model needs at least one effect and 2 rows (got {n_k} effects, {n} rows)")
    c, draws, tune = int(chains), int(draws), int(tune)
    level_rows = [np.bincount(idx[k], minlength=sizes[k]).astype(np.float64) for k in range(n_k)]
    nested_steps = []
    for k, *pair in interactions:
        for a in dict.fromkeys(pair):
            parent = np.zeros(int(sizes[k]), dtype=np.int64)
            parent[idx[k]] = idx[a]
            nested_steps.append((k, a, NestedScales(parent, level_rows[k], int(sizes[a]))))
    a2 = EFFECT_SCALE_PRIOR ** 2
    rng = np.random.default_rng(seed)

    def inv_gamma(shape, scale):
        return scale / rng.gamma(shape, 1.0, size=np.shape(scale))

    spread = np.exp(rng.normal(0.0, 1.0, (c, n_k)))    # overdispersed starts, so that R-hat can see non-mixing
    var0 = float(np.var(y)) + 1e-6
    s = 0.1 * var0 * spread
    var = var0 * np.exp(rng.normal(0.0, 0.5, c))
    mu = np.zeros(c)
    eff = [np.zeros((c, int(sizes[k]))) for k in range(n_k)]
    keep = {name: np.empty((c, draws, int(sizes[k]))) for k, name in enumerate(names)}
    keep_mu, keep_sigma = np.empty((c, draws)), np.empty((c, draws))
    keep_scale = np.empty((c, draws, n_k))
    level_of = [scipy.sparse.csr_matrix((np.ones(n), (idx[k], np.arange(n))), shape=(int(sizes[k]), n))
                for k in range(n_k)]
    covered = {j for k, a, _ in nested_steps for j in (k, a)}
    # every effect in an interaction: the nested steps draw every location and scale, with the slow directions
    # integrated out, and the blocks and the expanded move only cost time (P@10 on TREC-8's sub-collections)
    lean = covered == set(range(n_k))
    blocks = [] if lean else [LocationBlock(b, idx, sizes, names) for b in location_blocks(sizes, interactions)]

    def at_rows(k, levels):
        return np.take(levels, idx[k], axis=1)

    def level_sums(k, r):
        return (level_of[k] @ r.T).T

    def residual():
        r = y[None, :] - mu[:, None]
        for k in range(n_k):
            r -= at_rows(k, eff[k])
        return r

    resid = residual()
    for step in progress_bar(range(tune + draws), progress, desc="Gibbs", unit="iter"):
        # 1. μ and the locations of each block jointly, given the other blocks' effects and the variances
        if not lean:
            for block in blocks:
                rest = resid + mu[:, None]
                for k in block.effects:
                    rest += at_rows(k, eff[k])
                mu, drawn = block.draw(rest, s, var, rng)
                for k, e in drawn.items():
                    eff[k] = e
                    rest -= at_rows(k, e)
                resid = rest - mu[:, None]
        # 2. centred scale updates through the half-Cauchy mixture s | a ~ InvGamma(1/2, 1/a), a ~ InvGamma(1/2, 1/A²)
        ss = np.column_stack([(e ** 2).sum(axis=1) for e in eff])
        s = inv_gamma((sizes + 1) / 2.0, ss / 2.0 + 1.0 / inv_gamma(np.ones_like(s), 1.0 / s + 1.0 / a2))
        #    then each (s_k, μ, b_k) given the rest: s_k from its law with μ and b_k integrated out (a few levels
        #    pin s_k only loosely, and given b_k it moves slowly along the ridge of μ and b_k's mean), then μ, b_k
        for k in range(n_k):
            if k in covered:
                continue
            sums = level_sums(k, resid) + level_rows[k][None, :] * (mu[:, None] + eff[k])
            s[:, k], new_mu, new_b = collapsed_scale(sums, level_rows[k], s[:, k], var, rng)
            resid -= (new_mu - mu)[:, None] + at_rows(k, new_b - eff[k])
            mu, eff[k] = new_mu, new_b
        #    then each main effect a and each of its interactions ab: (s_a, s_ab, μ, b_a, b_ab) jointly
        for k, a, nested in nested_steps:
            sums = level_sums(k, resid) + level_rows[k][None, :] * (mu[:, None] + eff[a][:, nested.parent] + eff[k])
            s[:, a], s[:, k], new_mu, new_a, new_ab = nested.draw(sums, s[:, a], s[:, k], var, rng)
            resid -= at_rows(k, (new_mu - mu)[:, None] + (new_a - eff[a])[:, nested.parent] + new_ab - eff[k])
            mu, eff[a], eff[k] = new_mu, new_a, new_ab
        # 3. expanded move: ξ_k | s_k has density ∝ |ξ| exp(−ξ² (1/s_k + 1/A²)/2) (ξ² exponential); η_k = b_k/ξ_k,
        #    τ_k² = s_k/ξ_k²; then (ξ_1..ξ_K) | η, μ, σ²: a regression of y − μ on the columns η_k[ℓ_k(r)]
        if not lean:
            xi = np.sqrt(rng.exponential(2.0 / (1.0 / s + 1.0 / a2))) * rng.choice((-1.0, 1.0), size=s.shape)
            eta = [eff[k] / xi[:, k:k + 1] for k in range(n_k)]
            z = np.stack([at_rows(k, eta[k]) for k in range(n_k)], axis=2)      # chains × rows × effects
            gram = np.swapaxes(z, 1, 2) @ z / var[:, None, None]
            gram[:, np.arange(n_k), np.arange(n_k)] += 1.0 / a2
            h = (np.swapaxes(z, 1, 2) @ (y[None, :] - mu[:, None])[:, :, None])[:, :, 0] / var[:, None]
            xi = gaussian(gram, h, np.ones(c), rng)
            eta_ss = np.column_stack([(e ** 2).sum(axis=1) for e in eta])
            tau2 = inv_gamma((1.0 + sizes) / 2.0, (1.0 + eta_ss) / 2.0)
            eff = [xi[:, k:k + 1] * eta[k] for k in range(n_k)]
            s = xi ** 2 * tau2
        # 4. σ² | · ~ InvGamma(N/2, Σ residual²/2); the residual recomputed, so that rounding does not accumulate
        resid = residual()
        var = inv_gamma(np.full(c, n / 2.0), (resid ** 2).sum(axis=1) / 2.0)
        if step >= tune:
            t = step - tune
            for k, name in enumerate(names):
                keep[name][:, t] = eff[k]
            keep_mu[:, t], keep_sigma[:, t], keep_scale[:, t] = mu, np.sqrt(var), np.sqrt(s)
    out = {"mu": keep_mu, **keep, "sigma": keep_sigma}
    out.update({f"sigma_{name}": keep_scale[:, :, k] for k, name in enumerate(names)})
    return out


def gibbs_fit(y: np.ndarray, factors: Sequence[tuple[str, np.ndarray, int]],
              interactions: Sequence[tuple[int, int, int]], systems: list[str], topics: list[str], *, draws: int,
              tune: int, chains: int, seed: int | None, progress: bool | None) -> BayesResult:
    """`fit_linear_model`'s ``backend='gibbs'``: its validated effects (`sample_crossed_effects`'s ``factors`` and
    ``interactions``, system and topic first, named as in the PyMC model) to a `BayesResult`."""
    try:
        import arviz as az
    except ImportError:
        raise ImportError('backend="gibbs" reports its draws through ArviZ: pip install "irmeasures-markov[bayes]"') \
            from None
    posterior = sample_crossed_effects(y, factors, interactions, draws=draws, tune=tune, chains=chains, seed=seed,
                                       progress=progress)
    idata = az.from_dict(posterior=posterior)
    max_rhat = sampling_diagnostics(idata, "gibbs")[1]
    return BayesResult(systems, posterior["system"].reshape(-1, len(systems)), idata, topics=topics,
                       max_rhat=max_rhat)


def gaussian(precision: np.ndarray, linear: np.ndarray, sd: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draws of N(precision⁻¹ linear, sd² precision⁻¹), one per chain, through the Cholesky factor L: L'⁻¹(L⁻¹
    linear + sd z).  Small systems at once through L⁻¹ (the calls, not the flops, cost there); large ones one
    chain at a time through triangular solves (L⁻¹ would cost a factorisation's flops again)."""
    z = rng.standard_normal(linear.shape)
    if linear.shape[1] <= 64:
        inv_l = np.linalg.inv(np.linalg.cholesky(precision))
        w = (inv_l @ linear[:, :, None])[:, :, 0] + sd[:, None] * z
        return (np.swapaxes(inv_l, 1, 2) @ w[:, :, None])[:, :, 0]
    out = np.empty_like(linear)
    for i in range(linear.shape[0]):
        chol = scipy.linalg.cholesky(precision[i], lower=True, check_finite=False)
        w = scipy.linalg.solve_triangular(chol, linear[i], lower=True, check_finite=False)
        out[i] = scipy.linalg.solve_triangular(chol, w + sd[i] * z[i], lower=True, trans="T", check_finite=False)
    return out


def location_blocks(sizes: np.ndarray, interactions: Sequence[tuple[int, int, int]]) -> list[list[int]]:
    """The effects drawn jointly with μ in step 1: all of them when the dense part (every effect but the largest)
    is small, else one block per interaction with its two main effects, and one of the effects in no
    interaction — the ridges a block must hold are those of an interaction against its main effects and of μ
    against every effect's mean; crossed effects in different blocks are nearly orthogonal."""
    everything = list(range(len(sizes)))
    if int(sizes.sum() - sizes.max()) + 1 <= JOINT_LEVELS or not interactions:
        return [everything]
    blocks = [list(dict.fromkeys((a, b, k))) for k, a, b in interactions]
    covered = {k for block in blocks for k in block}
    alone = [k for k in everything if k not in covered]
    return blocks + ([alone] if alone else [])


class LocationBlock:
    """Step 1 for one block of effects: μ and their levels jointly given the variances and the other effects.

    With Q = X'X/σ² + prior, the block's effect with most levels (its X'X part is diagonal) is integrated out;
    the Schur complement of the rest, times σ², is C_dd + σ² prior_d − C_db diag(1/(n_b + σ²/s_b)) C_db' and its
    linear term X_d'r − C_db (X_b'r/(n_b + σ²/s_b)) for the partial residual r."""

    def __init__(self, effects: list[int], idx: list[np.ndarray], sizes: np.ndarray, names: list[str]):
        import scipy.sparse as sp

        n = idx[0].size
        self.effects = effects
        self.big = max(effects, key=lambda k: sizes[k])
        self.dense = [k for k in effects if k != self.big]
        self.offset, p = {}, 1
        for k in self.dense:
            self.offset[k] = p
            p += int(sizes[k])
        if p > MAX_DENSE_LEVELS:
            raise ValueError(f"the Gibbs sampler draws μ and the levels of {[names[k] for k in self.dense]} "
                             f"jointly, {p} of them: more than {MAX_DENSE_LEVELS}; drop an interaction or use "
                             f"backend='pymc'")
        self.sizes = sizes
        cols = np.column_stack([np.zeros(n, dtype=np.int64)] + [self.offset[k] + idx[k] for k in self.dense])
        rows = np.repeat(np.arange(n), cols.shape[1])
        self.x_d = sp.csr_matrix((np.ones(rows.size), (cols.ravel(), rows)), shape=(p, n))
        n_big = int(sizes[self.big])
        self.x_b = sp.csr_matrix((np.ones(n), (idx[self.big], np.arange(n))), shape=(n_big, n))
        self.c_dd = (self.x_d @ self.x_d.T).toarray()
        self.c_db = (self.x_d @ self.x_b.T).toarray()
        self.n_b = np.asarray(self.x_b.sum(axis=1)).ravel()
        # C_db diag(w) C_db' with w constant on the levels that share a row count: one fixed product per distinct
        # count (cells are mostly of one or a few sizes), else one product per draw
        self.counts, group = np.unique(self.n_b, return_inverse=True)
        self.products = ([self.c_db[:, group == g] @ self.c_db[:, group == g].T for g in range(self.counts.size)]
                         if self.counts.size <= 8 else None)
        self.slots = np.concatenate([np.full(int(sizes[k]), k) for k in self.dense]) if self.dense else \
            np.zeros(0, np.int64)

    def draw(self, rest: np.ndarray, s: np.ndarray, var: np.ndarray,
             rng: np.random.Generator) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """(μ, {effect: levels}) drawn given the partial residual ``rest`` (chains × rows), scales and σ²."""
        c = rest.shape[0]
        ratio = var / s[:, self.big]
        w_b = 1.0 / (self.n_b[None, :] + ratio[:, None])
        if self.products is not None:
            prec = self.c_dd[None] - sum(m[None] / (self.counts[g] + ratio)[:, None, None]
                                         for g, m in enumerate(self.products))
        else:
            prec = self.c_dd[None] - np.einsum("pb,cb,qb->cpq", self.c_db, w_b, self.c_db)
        prior = np.empty((c, self.c_dd.shape[0]))
        prior[:, 0] = 1.0 / MU_PRIOR_SD ** 2
        prior[:, 1:] = 1.0 / s[:, self.slots]
        diag = np.arange(prior.shape[1])
        prec[:, diag, diag] += var[:, None] * prior
        r_d = np.asarray(self.x_d @ rest.T).T
        r_b = np.asarray(self.x_b @ rest.T).T
        theta = gaussian(prec, r_d - (r_b * w_b) @ self.c_db.T, np.sqrt(var), rng)
        drawn = {k: theta[:, self.offset[k]:self.offset[k] + int(self.sizes[k])] for k in self.dense}
        drawn[self.big] = (w_b * (r_b - theta @ self.c_db)
                           + np.sqrt(var[:, None] * w_b) * rng.standard_normal(r_b.shape))
        return theta[:, 0], drawn


def collapsed_scale(sums: np.ndarray, rows: np.ndarray, s: np.ndarray, var: np.ndarray,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s_k, μ, b_k) drawn given the partial residual of the other effects (its level ``sums``, ``rows`` per
    level), σ² and the current s_k (chains first): s_k from p(s_k | ·) with μ ~ N(0, 10²) and b_k ~ N(0, s_k)
    integrated out, by slice sampling on u = log s_k (Neal 2003, stepping out); then μ, then b_k.

    With m_ℓ the level means and d_ℓ = s + σ²/n_ℓ over the levels with rows, m ~ N(0, diag(d) + v 11') with
    v = 10², whose density Sherman–Morrison gives per level; the half-Cauchy(0, A) prior on √s is
    ∝ √s/(1 + s/A²) in u."""
    c = sums.shape[0]
    has = rows > 0
    n_l = rows[has]
    m = sums[:, has] / n_l[None, :]
    v = MU_PRIOR_SD ** 2
    a2 = EFFECT_SCALE_PRIOR ** 2

    def log_density(u):
        e = np.exp(u)
        d = e[:, None] + var[:, None] / n_l[None, :]
        inv = 1.0 / d
        t = 1.0 + v * inv.sum(axis=1)
        quad = (m ** 2 * inv).sum(axis=1) - v * (m * inv).sum(axis=1) ** 2 / t
        return 0.5 * u - np.log1p(e / a2) - 0.5 * (np.log(d).sum(axis=1) + np.log(t) + quad)

    s = np.exp(slice_log_scale(log_density, np.log(s), rng))
    d = s[:, None] + var[:, None] / n_l[None, :]
    precision = 1.0 / v + (1.0 / d).sum(axis=1)
    mu = (m / d).sum(axis=1) / precision + rng.standard_normal(c) / np.sqrt(precision)
    level_precision = rows[None, :] / var[:, None] + 1.0 / s[:, None]
    b = ((sums - rows[None, :] * mu[:, None]) / var[:, None] / level_precision
         + rng.standard_normal((c, rows.size)) / np.sqrt(level_precision))
    return s, mu, b


def slice_log_scale(log_density, u: np.ndarray, rng: np.random.Generator, width: float = 2.0) -> np.ndarray:
    """One slice-sampling update of u = log s per chain (Neal 2003: stepping out, then shrinkage), for the
    collapsed scale steps, whose targets have no closed form."""
    c = u.size
    level = log_density(u) - rng.exponential(size=c)
    lo = u - width * rng.random(c)
    hi = lo + width
    for _ in range(20):    # step out until both ends are below the slice (or 40 widths: a far tail)
        out = log_density(lo) > level
        if not out.any():
            break
        lo = np.where(out, lo - width, lo)
    for _ in range(20):
        out = log_density(hi) > level
        if not out.any():
            break
        hi = np.where(out, hi + width, hi)
    new = u.copy()
    todo = np.ones(c, dtype=bool)
    for _ in range(100):   # shrinkage: each rejected point narrows the interval towards u
        cand = lo + (hi - lo) * rng.random(c)
        ok = todo & (log_density(cand) > level)
        new = np.where(ok, cand, new)
        todo &= ~ok
        if not todo.any():
            break
        hi = np.where(todo & (cand > u), cand, hi)
        lo = np.where(todo & (cand <= u), cand, lo)
    return new


class NestedScales:
    """(s_a, s_ab, μ, b_a, b_ab) drawn jointly given the other effects and σ², for a main effect a and an
    interaction ab of a with another effect: each level of ab lies in one level of a, so with its partial
    residual's level means m (n rows each) and d = s_ab + σ²/n, the means of a's level p are
    N(μ1, diag(d) + s_a 11'), and μ ~ N(0, 10²) adds v 11' over all of them.  Both scales are drawn from their
    law with μ, b_a and b_ab integrated out (slice sampling on log s, one scale given the other), then μ, b_a,
    b_ab.  Given b_ab, s_a is pinned by a few cells per level (a topic's 3 or 4 corpora) and mixes slowly when
    s_a is small beside s_ab; given b_a, b_ab's means carry b_a."""

    def __init__(self, parent: np.ndarray, rows: np.ndarray, n_parent: int):
        self.rows = rows
        self.has = rows > 0
        self.n_l = rows[self.has]
        self.parent = parent                               # a's level of each level of ab
        cells = int(self.has.sum())
        # sums over the cells of each level of a, as a sparse product (a system × topic interaction has thousands)
        self.members = scipy.sparse.csr_matrix((np.ones(cells), (parent[self.has], np.arange(cells))),
                                               shape=(n_parent, cells))
        # slice widths near 2.5 posterior sds of log s (about √(2/levels)): fewer shrinkage steps; any width is valid
        self.width_a = min(2.0, 3.5 / np.sqrt(max(np.unique(parent[self.has]).size, 1)))
        self.width_ab = min(2.0, 3.5 / np.sqrt(max(cells, 1)))

    def cells(self, m, s_ab, var):
        """What does not depend on s_a: w = 1/d per cell, W and M (Σ w, Σ w m per level of a), Σ log d + w m²."""
        d = s_ab[:, None] + var[:, None] / self.n_l[None, :]
        w = 1.0 / d
        return w, (self.members @ w.T).T, (self.members @ (w * m).T).T, (np.log(d) + w * m * m).sum(axis=1)

    @staticmethod
    def log_density(s_a, big_w, big_m, cell_part):
        """The log density of the cell means m with μ, b_a and b_ab integrated out (up to a constant), from
        `cells`'s sums, and 1'A⁻¹1, 1'A⁻¹m for μ's draw, with A = blocks diag(d) + s_a 11' (Sherman–Morrison per
        level of a, then once more for μ's v 11'): closed forms instead of a dense factor per evaluation."""
        v = MU_PRIOR_SD ** 2
        g = 1.0 + s_a[:, None] * big_w
        one_one, one_m = (big_w / g).sum(axis=1), (big_m / g).sum(axis=1)
        t = 1.0 + v * one_one
        quad_log = cell_part + np.log(g).sum(axis=1) + np.log(t) - (s_a[:, None] * big_m ** 2 / g).sum(axis=1) \
            - v * one_m ** 2 / t
        return -0.5 * quad_log, one_one, one_m

    def draw(self, sums, s_a, s_ab, var, rng):
        """(s_a, s_ab, μ, b_a, b_ab) given the partial residual's sums per level of ab (chains × levels)."""
        a2 = EFFECT_SCALE_PRIOR ** 2
        m = sums[:, self.has] / self.n_l[None, :]

        def prior(u):
            return 0.5 * u - np.log1p(np.exp(u) / a2)

        _, big_w, big_m, cell_part = self.cells(m, s_ab, var)
        u_a = slice_log_scale(lambda u: prior(u) + self.log_density(np.exp(u), big_w, big_m, cell_part)[0],
                              np.log(s_a), rng, self.width_a)
        s_a = np.exp(u_a)

        def given_a(u):
            return prior(u) + self.log_density(s_a, *self.cells(m, np.exp(u), var)[1:])[0]

        s_ab = np.exp(slice_log_scale(given_a, np.log(s_ab), rng, self.width_ab))
        _, big_w, big_m, cell_part = self.cells(m, s_ab, var)
        _, one_one, one_m = self.log_density(s_a, big_w, big_m, cell_part)
        c = sums.shape[0]
        precision = 1.0 / MU_PRIOR_SD ** 2 + one_one
        mu = one_m / precision + rng.standard_normal(c) / np.sqrt(precision)
        a_precision = 1.0 / s_a[:, None] + big_w
        b_a = (big_m - mu[:, None] * big_w) / a_precision + rng.standard_normal(big_w.shape) / np.sqrt(a_precision)
        level_precision = self.rows[None, :] / var[:, None] + 1.0 / s_ab[:, None]
        fixed = mu[:, None] + b_a[:, self.parent]
        b_ab = ((sums - self.rows[None, :] * fixed) / var[:, None] / level_precision
                + rng.standard_normal(sums.shape) / np.sqrt(level_precision))
        return s_a, s_ab, mu, b_a, b_ab
