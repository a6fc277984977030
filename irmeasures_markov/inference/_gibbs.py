r"""The Bayesian linear model (Carterette 2011, §3.1) sampled by a blocked Gibbs sampler (numpy only).

`gibbs_linear_model` is the default sampler of
[`bayesian_linear_model`][irmeasures_markov.inference.bayesian_linear_model] and the one
behind ``compare(test='bayes')`` (`bayes_pair_tests`).  The model and
its priors are stated in `irmeasures_markov.inference._bayes`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov.inference._inputs import ScoresLike, score_matrix
from irmeasures_markov.inference._posterior import (
    EFFECT_SCALE_PRIOR,
    MU_PRIOR_SD,
    BayesResult,
    ImproperPosteriorError,
    sampling_diagnostics,
)

__all__ = ["bayes_pair_tests", "gibbs_linear_model"]


def gibbs_linear_model(scores: ScoresLike, measure: Any = None, *, draws: int = 2000, tune: int = 1000, chains: int = 4,
                       seed: int | None = 0, progress: bool | None = None, **_ignored: Any) -> BayesResult:
    r"""The §3.1 linear model sampled by a blocked Gibbs sampler with parameter expansion (numpy only).

    Same model as the PyMC version: y_ij ~ N(μ + β_j + α_i, σ²), β_j ~ N(0, σ_run²),
    α_i ~ N(0, σ_topic²), μ ~ N(0, 10²), p(σ) ∝ 1/σ, σ_run and σ_topic half-Cauchy(0, 1).
    Every step draws from an exact conditional; one sweep is

    1. (μ, β, α) jointly given the variances (a Gaussian linear model): the
       effect with more levels is integrated out and the rest drawn through a
       Cholesky factor of order 1 + min(systems, topics), then the other effect;
    2. each effect's scale σ_e² given the effect, through the half-Cauchy's
       inverse-gamma mixture σ_e² | a ~ InvGamma(1/2, 1/a), a ~ InvGamma(1/2, 1/A²)
       (Wand et al. 2011);
    3. a parameter-expanded move (Gelman 2006, §5.2; Gelman, van Dyk, Huang &
       Boscardin 2008): each effect written e = ξ η with η ~ N(0, τ²),
       τ² ~ InvGamma(1/2, 1/2), ξ ~ N(0, A²) — σ_e = |ξ| τ is then half-Cauchy(0, A)
       exactly — ξ drawn given σ_e, then (ξ_β, ξ_α) jointly and τ² given η;
    4. σ² ~ InvGamma(N/2, Σ residual²/2) (the Jeffreys prior).

    Step 1 moves μ and the effects' levels together (the data identify only
    μ + β_j + α_i); steps 2 and 3 interweave a centred and an expanded update
    of each scale, so a scale mixes whether the data pin its effects down
    (many topics) or hardly at all (2-4 systems, where σ_run alone gets stuck
    near 0).  Needs a complete topics × systems matrix.  ``chains`` independent
    chains are drawn at once, seeded by ``seed``.

    ``progress``: a progress bar on standard error; ``None`` (default) shows it
    only when standard error is a terminal (`irmeasures_markov._util._progress.show_progress`).

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems (a complete topics × systems matrix).
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.
    draws : int
        Kept draws per chain, discarded draws before them, and independent chains.
    tune : int
        Kept draws per chain, discarded draws before them, and independent chains.
    chains : int
        Kept draws per chain, discarded draws before them, and independent chains.
    seed : int or None
        Seed of the chains.
    progress : bool or None
        A progress bar on standard error.
    **_ignored
        Options of the PyMC sampler (``cores``, ``target_accept``), which do not apply here.

    Returns
    -------
    BayesResult
        ``system_effects`` (chains × draws pooled), ``idata`` (when ArviZ is installed) and ``max_rhat``.

    Raises
    ------
    ImproperPosteriorError
        Scores that are exactly a topic effect plus a system effect (no residual variation).
    ValueError
        Scores `score_matrix` refuses.
    """
    sm = score_matrix(scores, measure)
    y = sm.values
    n_t, n_s = y.shape
    n = y.size
    additive = y - y.mean(axis=0) - y.mean(axis=1, keepdims=True) + y.mean()
    if not np.sum(additive ** 2) > 1e-20 * max(1.0, float(np.sum((y - y.mean()) ** 2))):
        raise ImproperPosteriorError("the scores are exactly a topic effect plus a system effect (no residual "
                                     "variation: e.g. identical or constant runs), where the linear model's "
                                     "posterior is improper; compare the runs' means directly")
    rng = np.random.default_rng(seed)
    c = int(chains)
    draws, tune = int(draws), int(tune)
    a2 = EFFECT_SCALE_PRIOR ** 2
    # u: the effect with fewer levels (the dense block), w: the other (integrated out, then drawn given u)
    systems_are_w = n_s >= n_t
    Y = y if systems_are_w else y.T                # rows: u levels, columns: w levels
    n_u, n_w = Y.shape
    row, col, total_y = Y.sum(axis=1), Y.sum(axis=0), Y.sum()
    p = 1 + n_u
    diag = np.arange(1, p)
    # state per chain: effect variances s_u, s_w (start 0.01), residual variance (start var(y))
    s_u, s_w = np.full(c, 0.01), np.full(c, 0.01)
    var = np.full(c, y.var() + 1e-6)
    keep = np.empty((c, draws, n_s))
    keep_mu = np.empty((c, draws))
    keep_sd = np.empty((c, draws, 3))

    def inv_gamma(shape, scale):
        return scale / rng.gamma(shape, 1.0, size=c)

    def gaussian(precision, linear):
        """Draws of N(precision⁻¹ linear, precision⁻¹), one per chain."""
        # precision = L L': the draw is L'⁻¹ (L⁻¹ linear + z)
        inv_l = np.linalg.inv(np.linalg.cholesky(precision))
        w = (inv_l @ linear[:, :, None])[:, :, 0] + rng.standard_normal(linear.shape)
        return (np.swapaxes(inv_l, 1, 2) @ w[:, :, None])[:, :, 0]

    for step in progress_bar(range(tune + draws), progress, desc="Gibbs", unit="iter"):
        # 1. (μ, e_u, e_w) | s_u, s_w, σ²: precision X'X/σ² + prior; the e_w block is diagonal (d_w) and each
        #    of its columns couples to (μ, e_u) through the same vector v, so integrating e_w out leaves
        #    Q − n_w v v'/d_w
        d_w = n_u / var + 1.0 / s_w
        v = np.empty((c, p))
        v[:, 0] = n_u / var
        v[:, 1:] = (1.0 / var)[:, None]
        Q = np.zeros((c, p, p))
        Q[:, 0, 0] = n / var + 1.0 / MU_PRIOR_SD ** 2
        Q[:, 0, 1:] = Q[:, 1:, 0] = (n_w / var)[:, None]
        Q[:, diag, diag] = (n_w / var + 1.0 / s_u)[:, None]
        b_u = np.empty((c, p))
        b_u[:, 0] = total_y / var
        b_u[:, 1:] = row[None, :] / var[:, None]
        b_w = col[None, :] / var[:, None]
        Q -= n_w * v[:, :, None] * v[:, None, :] / d_w[:, None, None]
        u = gaussian(Q, b_u - v * (b_w.sum(axis=1) / d_w)[:, None])
        mu, e_u = u[:, 0], u[:, 1:]
        e_w = ((b_w - (v * u).sum(axis=1)[:, None]) / d_w[:, None]
               + rng.standard_normal((c, n_w)) / np.sqrt(d_w)[:, None])
        # 2. centred scale updates through the half-Cauchy mixture
        s_u = inv_gamma((n_u + 1) / 2.0, (e_u ** 2).sum(axis=1) / 2.0 + 1.0 / inv_gamma(1.0, 1.0 / s_u + 1.0 / a2))
        s_w = inv_gamma((n_w + 1) / 2.0, (e_w ** 2).sum(axis=1) / 2.0 + 1.0 / inv_gamma(1.0, 1.0 / s_w + 1.0 / a2))
        # 3. expanded move: ξ | σ_e has density ∝ |ξ| exp(−ξ² (1/σ_e² + 1/A²) / 2), so ξ² is exponential;
        #    then η = e/ξ, τ² = σ_e²/ξ²; (ξ_u, ξ_w) | η: a two-coefficient regression; τ² | η: inverse-gamma
        xi = np.sqrt(rng.exponential(2.0 / (1.0 / np.column_stack([s_u, s_w]) + 1.0 / a2)))
        xi *= rng.choice((-1.0, 1.0), size=xi.shape)
        eta_u, eta_w = e_u / xi[:, :1], e_w / xi[:, 1:]
        G = np.empty((c, 2, 2))
        G[:, 0, 0] = n_w * (eta_u ** 2).sum(axis=1) / var + 1.0 / a2
        G[:, 1, 1] = n_u * (eta_w ** 2).sum(axis=1) / var + 1.0 / a2
        G[:, 0, 1] = G[:, 1, 0] = eta_u.sum(axis=1) * eta_w.sum(axis=1) / var
        h = np.column_stack([(eta_u * (row[None, :] - n_w * mu[:, None])).sum(axis=1),
                             (eta_w * (col[None, :] - n_u * mu[:, None])).sum(axis=1)]) / var[:, None]
        xi = gaussian(G, h)
        tau2_u = inv_gamma((1.0 + n_u) / 2.0, (1.0 + (eta_u ** 2).sum(axis=1)) / 2.0)
        tau2_w = inv_gamma((1.0 + n_w) / 2.0, (1.0 + (eta_w ** 2).sum(axis=1)) / 2.0)
        e_u, e_w = xi[:, :1] * eta_u, xi[:, 1:] * eta_w
        s_u, s_w = xi[:, 0] ** 2 * tau2_u, xi[:, 1] ** 2 * tau2_w
        # 4. σ² | · ~ InvGamma(N/2, Σ residual²/2)
        resid = Y[None] - mu[:, None, None] - e_u[:, :, None] - e_w[:, None, :]
        var = inv_gamma(n / 2.0, (resid ** 2).sum(axis=(1, 2)) / 2.0)
        if step >= tune:
            k = step - tune
            keep[:, k] = e_w if systems_are_w else e_u
            keep_mu[:, k] = mu
            sd_s, sd_t = (np.sqrt(s_w), np.sqrt(s_u)) if systems_are_w else (np.sqrt(s_u), np.sqrt(s_w))
            keep_sd[:, k] = np.column_stack([np.sqrt(var), sd_s, sd_t])
    idata = None
    try:
        import arviz as az
        idata = az.from_dict(posterior={"system": keep, "mu": keep_mu, "sigma": keep_sd[..., 0],
                                        "sigma_system": keep_sd[..., 1], "sigma_topic": keep_sd[..., 2]})
    except ImportError:  # pragma: no cover - arviz comes with the bayes extra
        pass
    max_rhat = sampling_diagnostics(idata, "gibbs")[1] if idata is not None else None
    return BayesResult(sm.systems, keep.reshape(-1, n_s), idata, topics=sm.topics, max_rhat=max_rhat)


def bayes_pair_tests(scores: ScoresLike, a: ArrayLike, b: ArrayLike, alternative: str, *, draws: int = 2000,
                     chains: int = 4, seed: int | None = 0,
                     progress: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The Bayesian test of the column pairs ``a[k]``, ``b[k]`` of a topics × systems matrix, from one
    `gibbs_linear_model` fit of all its columns (``draws`` after as many tuning steps): the statistic
    $P(\beta_a > \beta_b \mid y)$ and what stands for a p-value, two-sided $2\min(P(\beta_a > \beta_b),
    P(\beta_a < \beta_b))$ (at most 1), one-sided the posterior probability that A is not better.

    Scores that are exactly μ + β_j + α_i (e.g. identical runs) have an improper
    posterior; every pair then differs by the same amount on every topic, and the
    probabilities are their limit as σ → 0: 1 and 0 for a positive difference,
    1/2 each for none.

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores (topics × systems).
    a : array_like of int
        Column indices of the pairs.
    b : array_like of int
        Column indices of the pairs.
    alternative : {'two-sided', 'greater', 'less'}
        About A − B.
    draws, chains, seed, progress
        As for `gibbs_linear_model`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``P(β_a > β_b | y)`` and the p-value of each pair.
    """
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    sm = score_matrix(scores)
    try:
        fit = gibbs_linear_model(sm, draws=int(draws), tune=int(draws), chains=int(chains), seed=seed,
                                 progress=progress)
        prob = fit.prob_better_matrix()
        p_ab, p_ba = prob[a, b], prob[b, a]
    except ImproperPosteriorError:
        d = (sm.values[:, a] - sm.values[:, b]).mean(axis=0)
        p_ab = np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
        p_ba = 1.0 - p_ab
    if alternative == "two-sided":
        return p_ab, np.minimum(1.0, 2.0 * np.minimum(p_ab, p_ba))
    return p_ab, 1.0 - (p_ab if alternative == "greater" else p_ba)
