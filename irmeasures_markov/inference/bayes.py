r"""Bayesian models of IR evaluation (Carterette, "Model-based inference about IR systems", ICTIR 2011).

Requires PyMC: ``pip install "irmeasures-markov[bayes]"``.

**Linear model (§3.1)** — the t-test's model made explicit, with priors:

.. math::

    y_{ij} \sim N(\mu + \beta_j + \alpha_i, \sigma^2),\quad
    \mu \sim N(0, \sigma_{int}^2),\ \beta_j \sim N(0, \sigma_{run}^2),\ \alpha_i \sim N(0, \sigma_{topic}^2),

and Jeffreys priors p(σ) ∝ 1/σ on every scale (a flat prior on log σ).
Two deviations from the paper, both because the Jeffreys prior makes the
posterior improper where a scale is informed by few draws or can collapse:
a single intercept cannot inform its own scale σ_int, so μ gets a wide fixed
prior N(0, 10²); and for the scales of the random effects (σ_run, σ_topic,
extra effects) p(σ) ∝ 1/σ puts infinite posterior mass near σ = 0 (the
marginal likelihood stays positive there), so they get the weakly
informative half-Cauchy(0, 1) prior recommended by Gelman (2006) for
hierarchical scales.  The residual σ of the linear model keeps the
Jeffreys prior (it is informed by every observation); in the direct model
below σ is the scale of the latent y_ij, a random effect, so it gets the
half-Cauchy prior too.
Inference about systems uses the posterior of β: P(A > B) = P(β_A > β_B | y).

**Direct model of relevance (§3.2)** — judgments x_ijk of the document that
system j ranks at k for topic i are Bernoulli(p_ij) with
p_ij = logistic(y_ij) and y_ij the linear model above; a user-model rank
distribution p_k weights rank k's evidence (weighted likelihood
Σ_k w_k log Bernoulli(x_ijk | p_ij), w_k ∝ p_k scaled to the distribution's
effective sample size (Σ p_k)² / Σ p_k²).  The weighted maximum-likelihood
p_ij is Σ_k p_k x_ijk / Σ_k p_k: precision@K for p_k uniform on 1..K,
RBP for geometric p_k = θ^{k−1}(1−θ) (normalised over the judged depth).

**Extra effects (§3.3)** — :func:`fit_linear_model` takes a long table with
any categorical columns (e.g. ``assessor``, ``corpus``) as effects plus named
two-way interactions, each a normal effect N(0, σ_e²) with its own scale σ_e
(half-Cauchy(0, 1), as for σ_run and σ_topic).

:func:`bayesian_linear_model` samples the linear model by default with
:func:`gibbs_linear_model` (blocked Gibbs with parameter expansion: exact
conditionals, no divergences, seconds).  The PyMC models use a non-centred
parametrisation (effect = scale · z, z ~ N(0, 1)), which removes most, not
all, of NUTS's divergent transitions on hierarchical scales: with few systems
(e.g. 3 runs × 10 topics) some remain.  Every result therefore reports
``divergences`` (divergent transitions after tuning) and ``max_rhat`` (the
largest split R-hat of the system contrasts and scales), and a
:class:`SamplingWarning` is issued when there is any divergence or R-hat
exceeds 1.01: the posterior may then be biased (raise ``target_accept``
towards 0.99 and ``tune``, or use ``backend='gibbs'`` for the linear model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import warnings

from .inputs import ScoreMatrix, score_matrix

__all__ = ["BayesResult", "SamplingWarning", "ImproperPosteriorError", "fit_linear_model", "bayesian_linear_model",
           "gibbs_linear_model", "prob_better_pairs", "direct_relevance_model", "rank_weights", "MAX_RHAT"]

#: R-hat above this (Vehtari et al. 2021) means the chains have not mixed.
MAX_RHAT = 1.01


class SamplingWarning(RuntimeWarning):
    """The sampler's diagnostics (divergences, R-hat) say the posterior draws may not be trustworthy."""


class ImproperPosteriorError(ValueError):
    """The scores are exactly μ + β_j + α_i (no residual variation): under p(σ) ∝ 1/σ the posterior is improper.

    Every pair of runs then differs by the same amount on every topic."""


#: Standard deviation of the intercept's prior (see the module docstring).
MU_PRIOR_SD = 10.0


def _pymc():
    try:
        import pymc as pm
    except ImportError:
        raise ImportError('the Bayesian models need PyMC: pip install "irmeasures-markov[bayes]"') from None
    return pm


@dataclass
class BayesResult:
    """Posterior of a fitted model.

    ``system_effects``: draws × systems array of β_j (all chains pooled);
    ``idata``: the ArviZ InferenceData (every parameter, diagnostics);
    ``cell_estimates``: for the direct model, draws-averaged p_ij (topics × systems);
    ``divergences``: NUTS divergent transitions after tuning, all chains (``None``
    for the Gibbs sampler, which has none); ``max_rhat``: the largest split
    R-hat over the identified quantities, i.e. the system contrasts β_j − β̄,
    every scale σ and the direct model's p_ij (μ, β_j and α_i are only
    identified through their sum); ``None`` with one chain, where it is not defined.
    Any divergence, or ``max_rhat`` above :data:`MAX_RHAT`, issues a
    :class:`SamplingWarning` when the model is fitted.
    """
    systems: List[str]
    system_effects: np.ndarray
    idata: object
    topics: List[str] = field(default_factory=list)
    cell_estimates: Optional[np.ndarray] = None
    cell_intervals: Optional[np.ndarray] = None
    divergences: Optional[int] = None
    max_rhat: Optional[float] = None

    def prob_better(self, a, b) -> float:
        """P(system a better than system b | data) = P(β_a > β_b)."""
        ia, ib = self.systems.index(str(a)), self.systems.index(str(b))
        return float(np.mean(self.system_effects[:, ia] > self.system_effects[:, ib]))

    def prob_better_matrix(self) -> np.ndarray:
        """``M[a, b] = P(β_a > β_b)`` for every pair."""
        s = self.system_effects
        return (s[:, :, None] > s[:, None, :]).mean(axis=0)

    def credible_intervals(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed credible intervals of the system effects: systems × (low, high)."""
        lo = (1 - level) / 2
        return np.quantile(self.system_effects, [lo, 1 - lo], axis=0).T

    def summary(self, level: float = 0.95):
        import pandas as pd
        ci = self.credible_intervals(level)
        return pd.DataFrame({"mean": self.system_effects.mean(axis=0), "low": ci[:, 0], "high": ci[:, 1]},
                            index=self.systems)


def _jeffreys_scale(pm, name):
    """σ with p(σ) ∝ 1/σ: a flat prior on log σ."""
    log_s = pm.Flat(f"log_{name}")
    return pm.Deterministic(name, pm.math.exp(log_s))


#: Scale of the half-Cauchy prior on random-effect scales (see the module docstring).
EFFECT_SCALE_PRIOR = 1.0


def _effect(pm, name, n, dims=None):
    scale = pm.HalfCauchy(f"sigma_{name}", EFFECT_SCALE_PRIOR)
    z = pm.Normal(f"z_{name}", 0.0, 1.0, shape=n)
    return pm.Deterministic(name, scale * z, dims=dims)


def _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept):
    import logging
    from ..progress import show_progress
    shown = show_progress(progress)
    logger = logging.getLogger("pymc")
    level = logger.level
    if not shown:  # PyMC's own "Sampling 4 chains ..." lines are progress too; its warnings still show
        logger.setLevel(max(level, logging.WARNING))
    try:
        with model:
            return pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=shown,
                             cores=cores, target_accept=target_accept, compute_convergence_checks=False)
    finally:
        logger.setLevel(level)


def _identified(posterior):
    """The identified quantities whose mixing R-hat checks: the system contrasts β_j − β̄ (what
    ``prob_better`` and the intervals of centred effects use), every scale σ, and the cell
    probabilities p_ij of the direct model.  μ, β_j and α_i are left out: only μ + β_j + α_i is
    identified, so their levels drift along a ridge without harming any contrast."""
    out = []
    if "system" in posterior:
        beta = posterior["system"]
        dim = [d for d in beta.dims if d not in ("chain", "draw")][-1]
        out.append((beta - beta.mean(dim)).to_dataset(name="system_contrast"))
    names = [v for v in posterior.data_vars if str(v).startswith("sigma") or v == "p"]
    if names:
        out.append(posterior[names])
    return out or [posterior]


def _diagnostics(idata, sampler: str = "nuts", target_accept: Optional[float] = None):
    """``(divergences, max_rhat)`` of a fit, with a :class:`SamplingWarning` when either is bad."""
    divergences = None
    stats = getattr(idata, "sample_stats", None) if sampler == "nuts" else None
    if stats is not None and "diverging" in stats:
        divergences = int(np.asarray(stats["diverging"].values).sum())
    max_rhat = None
    posterior = idata.posterior
    if posterior.sizes.get("chain", 1) > 1 and posterior.sizes.get("draw", 0) >= 4:
        import arviz as az
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # constant parameters give NaN R-hat
            values = np.concatenate([np.ravel(az.rhat(v).to_array().values)
                                     for v in _identified(posterior)]).astype(np.float64)
        values = values[np.isfinite(values)]
        max_rhat = float(values.max()) if values.size else None
    problems = []
    if divergences:
        hint = f"raise target_accept (it is {target_accept}; try 0.99) and tune" if target_accept else \
            "raise target_accept (try 0.99) and tune"
        problems.append(f"{divergences} divergent transitions after tuning ({hint}; divergences mean "
                        f"the sampler missed part of the posterior)")
    if max_rhat is not None and max_rhat > MAX_RHAT:
        problems.append(f"max R-hat {max_rhat:.3f} > {MAX_RHAT} (the chains have not mixed: "
                        f"raise draws and tune, or chains)")
    if problems:
        warnings.warn(f"{sampler.upper() if sampler == 'nuts' else sampler.capitalize()} sampling: "
                      + "; ".join(problems) + ". The posterior summaries may be biased.",
                      SamplingWarning, stacklevel=3)
    return divergences, max_rhat


def _codes(values) -> Tuple[np.ndarray, List[str]]:
    labels = [str(v) for v in values]
    levels = list(dict.fromkeys(labels))
    index = {l: i for i, l in enumerate(levels)}
    return np.array([index[l] for l in labels], dtype=np.int64), levels


def fit_linear_model(data, *, value: str = "value", system: str = "system", topic: str = "topic",
                     effects: Sequence[str] = (), interactions: Sequence[Tuple[str, str]] = (),
                     draws: int = 1000, tune: int = 1000, chains: int = 4, seed: Optional[int] = 0,
                     progress: Optional[bool] = None, cores: Optional[int] = None,
                     target_accept: float = 0.9) -> BayesResult:
    """The Bayesian linear model with optional extra effects and interactions (§3.1, §3.3).

    ``data`` is a long table (pandas DataFrame or mapping of columns): one row
    per observation with columns ``system``, ``topic``, ``value`` and any extra
    categorical ``effects`` (e.g. ``'assessor'``).  ``interactions`` names
    pairs among ``'system'``, ``'topic'`` and the extra effects, e.g.
    ``[('topic', 'assessor'), ('system', 'assessor')]``.  Every effect and
    interaction is N(0, σ_e²) with σ_e ~ half-Cauchy(0, 1); μ ~ N(0, 10²); the
    residual σ has the Jeffreys prior p(σ) ∝ 1/σ.  Rows may be unbalanced
    (any number per cell, missing cells).
    """
    pm = _pymc()
    import pandas as pd
    df = pd.DataFrame(data)
    for col in (value, system, topic, *effects):
        if col not in df.columns:
            raise ValueError(f"column {col!r} not in the data (columns: {list(df.columns)})")
    y = df[value].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("values must be finite (NaN or inf found)")
    names = {"system": system, "topic": topic, **{e: e for e in effects}}
    codes = {k: _codes(df[c]) for k, c in names.items()}
    if len(codes["topic"][1]) < 2:
        raise ValueError("the model needs at least 2 topics")
    for a, b in interactions:
        for x in (a, b):
            if x not in names:
                raise ValueError(f"interaction {a}×{b}: unknown effect {x!r}; effects: {list(names)}")
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, MU_PRIOR_SD)
        mean = mu
        for k, (idx, levels) in codes.items():
            eff = _effect(pm, k, len(levels))
            mean = mean + eff[idx]
        for a, b in interactions:
            ia, la = codes[a]
            ib, lb = codes[b]
            eff = _effect(pm, f"{a}_x_{b}", len(la) * len(lb))
            mean = mean + eff[ia * len(lb) + ib]
        sigma = _jeffreys_scale(pm, "sigma")
        pm.Normal("y", mean, sigma, observed=y)
    idata = _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept)
    divergences, max_rhat = _diagnostics(idata, "nuts", target_accept)
    beta = idata.posterior["system"].values.reshape(-1, len(codes["system"][1]))
    return BayesResult(codes["system"][1], beta, idata, topics=codes["topic"][1], divergences=divergences,
                       max_rhat=max_rhat)


def bayesian_linear_model(scores, measure=None, *, backend: str = "gibbs", **kwargs) -> BayesResult:
    """§3.1 on a topics × systems score matrix (anything :func:`score_matrix` accepts).

    ``backend='gibbs'`` (default) uses :func:`gibbs_linear_model`, a blocked
    Gibbs sampler with exact conditionals (numpy only, no divergences; about a
    second for 4 chains × 2000 draws on a few runs, a few seconds on 129 runs ×
    50 topics), whose max R-hat and effective sample sizes are reported in
    ``max_rhat`` and ``idata``.  ``backend='pymc'`` samples the same model with
    PyMC's NUTS (``draws``, ``tune``, ``chains``, ``cores``, ``target_accept``;
    tens of seconds): it is not free of divergent transitions on this model
    with few systems (3 runs × 10 topics of the bundled sample give about 40 in
    4 × 1000 draws at ``target_accept=0.9``, 12 at 0.99).  Either way the
    result's ``divergences`` and ``max_rhat`` report the diagnostics, and a
    :class:`SamplingWarning` says when they are bad.  Both are checked against
    each other and against the paired t-test in tests/test_inference_bayes.py.
    """
    sm = score_matrix(scores, measure)
    if backend == "gibbs":
        return gibbs_linear_model(sm, **kwargs)
    if backend != "pymc":
        raise ValueError(f"backend must be 'pymc' or 'gibbs', got {backend!r}")
    t_idx, s_idx = np.meshgrid(np.arange(sm.n_topics), np.arange(sm.n_systems), indexing="ij")
    data = {"system": [sm.systems[j] for j in s_idx.ravel()], "topic": [sm.topics[i] for i in t_idx.ravel()],
            "value": sm.values.ravel()}
    return fit_linear_model(data, **kwargs)


def gibbs_linear_model(scores, measure=None, *, draws: int = 2000, tune: int = 1000, chains: int = 4,
                       seed: Optional[int] = 0, progress: Optional[bool] = None, **_ignored) -> BayesResult:
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
    only when standard error is a terminal (:func:`irmeasures_markov.progress.show_progress`).
    """
    from ..progress import progress_bar
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
    max_rhat = _diagnostics(idata, "gibbs")[1] if idata is not None else None
    return BayesResult(sm.systems, keep.reshape(-1, n_s), idata, topics=sm.topics, max_rhat=max_rhat)


def prob_better_pairs(scores, a, b, *, draws: int = 2000, tune: int = 1000, chains: int = 4,
                      seed: Optional[int] = 0, progress: Optional[bool] = None) -> Tuple[np.ndarray, np.ndarray]:
    """``(P(β_a > β_b | y), P(β_a < β_b | y))`` for the column indices ``a[k]``, ``b[k]`` of a topics × systems
    matrix, from one :func:`gibbs_linear_model` fit of all its columns.

    Scores that are exactly μ + β_j + α_i (e.g. identical runs) have an improper
    posterior; every pair then differs by the same amount on every topic, and the
    probabilities are their limit as σ → 0: 1 and 0 for a positive difference,
    1/2 each for none.
    """
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    sm = score_matrix(scores)
    try:
        fit = gibbs_linear_model(sm, draws=draws, tune=tune, chains=chains, seed=seed, progress=progress)
    except ImproperPosteriorError:
        d = (sm.values[:, a] - sm.values[:, b]).mean(axis=0)
        p_ab = np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
        return p_ab, 1.0 - p_ab
    prob = fit.prob_better_matrix()
    return prob[a, b], prob[b, a]


def rank_weights(depth: int, user: str = "precision", theta: float = 0.8) -> np.ndarray:
    """User-model rank distribution p_k for k = 1..depth: ``'precision'`` (uniform) or ``'rbp'`` (geometric)."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    k = np.arange(1, depth + 1)
    if user == "precision":
        return np.full(depth, 1.0 / depth)
    if user == "rbp":
        if not 0 < theta < 1:
            raise ValueError(f"theta must be in (0, 1), got {theta}")
        return theta ** (k - 1) * (1 - theta)
    raise ValueError(f"user must be 'precision' or 'rbp', got {user!r}")


def direct_relevance_model(judgments, *, systems: Optional[Sequence[str]] = None,
                           topics: Optional[Sequence[str]] = None, user: str = "precision", theta: float = 0.8,
                           draws: int = 1000, tune: int = 1000, chains: int = 4, seed: Optional[int] = 0,
                           progress: Optional[bool] = None, cores: Optional[int] = None,
                           target_accept: float = 0.9) -> BayesResult:
    """§3.2: judgments x_ijk ~ Bernoulli(logistic(y_ij)), y_ij ~ N(μ + β_j + α_i, σ²), ranks weighted by p_k.

    ``judgments``: array topics × systems × depth of 0/1 (unjudged as 0).
    ``user``: ``'precision'`` (p_ij estimates precision@depth) or ``'rbp'``
    (geometric p_k with ``theta``; p_ij estimates RBP normalised over the depth).
    ``cell_estimates`` of the result are the posterior means of p_ij.
    """
    pm = _pymc()
    x = np.asarray(judgments, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"judgments must be topics × systems × depth, got shape {x.shape}")
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("judgments must be 0/1")
    n_t, n_s, depth = x.shape
    if n_t < 2:
        raise ValueError("the model needs at least 2 topics")
    pk = rank_weights(depth, user, theta)
    w = pk * (pk.sum() ** 2 / np.sum(pk ** 2)) / pk.sum()  # scaled to the effective sample size
    hits = np.tensordot(x, w, axes=([2], [0]))             # Σ_k w_k x_ijk
    total = w.sum()
    systems = [str(s) for s in systems] if systems is not None else [f"system{j}" for j in range(n_s)]
    topics = [str(t) for t in topics] if topics is not None else [str(i) for i in range(n_t)]
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, MU_PRIOR_SD)
        beta = _effect(pm, "system", n_s)
        alpha = _effect(pm, "topic", n_t)
        sigma = pm.HalfCauchy("sigma", EFFECT_SCALE_PRIOR)  # latent scale: p(σ) ∝ 1/σ would be improper here
        z = pm.Normal("z_cell", 0.0, 1.0, shape=(n_t, n_s))
        y = mu + beta[None, :] + alpha[:, None] + sigma * z
        p = pm.Deterministic("p", pm.math.sigmoid(y))
        # weighted Bernoulli log-likelihood: Σ_k w_k [x log p + (1 − x) log(1 − p)]
        pm.Potential("relevance", pm.math.sum(hits * pm.math.log(p) + (total - hits) * pm.math.log(1.0 - p)))
    idata = _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept)
    divergences, max_rhat = _diagnostics(idata, "nuts", target_accept)
    beta_draws = idata.posterior["system"].values.reshape(-1, n_s)
    p_draws = idata.posterior["p"].values.reshape(-1, n_t, n_s)
    return BayesResult(systems, beta_draws, idata, topics, p_draws.mean(axis=0),
                       np.quantile(p_draws, [0.025, 0.975], axis=0), divergences=divergences, max_rhat=max_rhat)
