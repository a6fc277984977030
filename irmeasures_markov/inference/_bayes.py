r"""Bayesian models of IR evaluation (Carterette, "Model-based inference about IR systems", ICTIR 2011).

Requires PyMC: ``pip install "irmeasures-markov[bayes]"``.

**Linear model (§3.1)** — the t-test's model made explicit, with priors:

$$
y_{ij} \sim N(\mu + \beta_j + \alpha_i, \sigma^2),\quad
\mu \sim N(0, \sigma_{int}^2),\ \beta_j \sim N(0, \sigma_{run}^2),\ \alpha_i \sim N(0, \sigma_{topic}^2),
$$

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

``variant='paper'`` fits §3.2 as published, read where it is improper or
ambiguous (see `direct_relevance_model`): every scale (σ, σ_int, σ_run,
σ_topic) gets the paper's p(σ) ∝ 1/σ truncated to ``jeffreys_bounds``
(the untruncated posterior is improper), μ ~ N(0, σ_int²), and rank k's
Bernoulli log-likelihood counts with the paper's own weight p_k (1 on ranks
1..K for precision@K, θ^{k−1}(1−θ) for RBP: not rescaled).

**Extra effects (§3.3)** — `fit_linear_model` takes a long table with
any categorical columns (e.g. ``assessor``, ``corpus``) as effects plus named
two-way interactions, each a normal effect N(0, σ_e²) with its own scale σ_e
(half-Cauchy(0, 1), as for σ_run and σ_topic).

[`bayesian_linear_model`][irmeasures_markov.inference.bayesian_linear_model] samples the linear model by default with
`gibbs_linear_model` (blocked Gibbs with parameter expansion: exact
conditionals, no divergences, seconds).  The PyMC models use a non-centred
parametrisation (effect = scale · z, z ~ N(0, 1)), which removes most, not
all, of NUTS's divergent transitions on hierarchical scales: with few systems
(e.g. 3 runs × 10 topics) some remain.  Every result therefore reports
``divergences`` (divergent transitions after tuning) and ``max_rhat`` (the
largest split R-hat of the system contrasts and scales), and a
[`SamplingWarning`][irmeasures_markov.inference.SamplingWarning] is issued when there is any divergence or R-hat
exceeds 1.01: the posterior may then be biased (raise ``target_accept``
towards 0.99 and ``tune``, or use ``backend='gibbs'`` for the linear model).
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._progress import show_progress
from irmeasures_markov.inference._gibbs import gibbs_linear_model
from irmeasures_markov.inference._gibbs_crossed import gibbs_fit
from irmeasures_markov.inference._inputs import ScoresLike, check_choice, score_matrix
from irmeasures_markov.inference._posterior import EFFECT_SCALE_PRIOR, MU_PRIOR_SD, BayesResult, sampling_diagnostics

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["fit_linear_model", "bayesian_linear_model", "direct_relevance_model", "rank_weights", "direct_model",
           "direct_model_weights", "DIRECT_VARIANTS", "JEFFREYS_BOUNDS"]


def _pymc():
    try:
        import pymc as pm
    except ImportError:
        raise ImportError('the Bayesian models need PyMC: pip install "irmeasures-markov[bayes]"') from None
    return pm



def _effect(pm, name, n, dims=None, bounds=None):
    """A non-centred normal effect: its scale half-Cauchy, or the paper's truncated 1/σ within ``bounds``."""
    scale = _scale(pm, f"sigma_{name}", bounds)
    z = pm.Normal(f"z_{name}", 0.0, 1.0, shape=n)
    return pm.Deterministic(name, scale * z, dims=dims)


def _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept):
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


def fit_linear_model(data: pd.DataFrame | Mapping[str, Sequence[Any]], *, value: str = "value",
                     system: str = "system", topic: str = "topic",
                     effects: Sequence[str] = (), interactions: Sequence[tuple[str, str]] = (),
                     draws: int = 1000, tune: int = 1000, chains: int = 4, seed: int | None = 0,
                     progress: bool | None = None, cores: int | None = None,
                     target_accept: float = 0.9, backend: str = "pymc") -> BayesResult:
    """The Bayesian linear model with optional extra effects and interactions (§3.1, §3.3).

    ``data`` is a long table (pandas DataFrame or mapping of columns): one row
    per observation with columns ``system``, ``topic``, ``value`` and any extra
    categorical ``effects`` (e.g. ``'assessor'``).  ``interactions`` names
    pairs among ``'system'``, ``'topic'`` and the extra effects, e.g.
    ``[('topic', 'assessor'), ('system', 'assessor')]``.  Every effect and
    interaction is N(0, σ_e²) with σ_e ~ half-Cauchy(0, 1); μ ~ N(0, 10²); the
    residual σ has the Jeffreys prior p(σ) ∝ 1/σ.  Rows may be unbalanced
    (any number per cell, missing cells).

    Parameters
    ----------
    data : DataFrame or mapping of columns
        The long table.
    value : str
        Names of the score, system and topic columns.
    system : str
        Names of the score, system and topic columns.
    topic : str
        Names of the score, system and topic columns.
    effects : sequence of str
        Extra categorical columns, each a random effect.
    interactions : sequence of (str, str)
        Two-way interactions among ``'system'``, ``'topic'`` and ``effects``.
    draws : int
        Draws kept per chain (either sampler).
    tune : int
        NUTS's tuning steps, or the Gibbs sweeps discarded before the kept draws.
    chains : int
        Independent chains.
    seed : int or None
        ``random_seed`` of ``pymc.sample``, or the Gibbs sampler's seed.
    progress : bool or None
        The sampler's progress bar (None: only when standard error is a terminal).
    cores : int, optional
        Processes sampling chains in parallel (PyMC's default when None).
    target_accept : float
        NUTS's target acceptance rate (raise it towards 0.99 against divergences).
    backend : {'pymc', 'gibbs'}
        The sampler: PyMC's NUTS (default, non-centred effects), or ``'gibbs'``, a blocked Gibbs sampler of the
        same model (`sample_crossed_effects`: numpy only, exact conditional draws, no divergent transitions;
        ``cores`` and ``target_accept`` do not apply).  NUTS stays the default so that existing fits keep
        their draws; with extra effects or interactions on large tables it often does not converge, where
        ``'gibbs'`` does (docs/inference.md, "Other evidence").  With ``'gibbs'`` and an effect in no
        interaction, μ is drawn jointly with the levels of a block of effects (all of them, or each interaction
        with its two main effects), and the levels of a block but its largest effect's are limited to 2,000.

    Returns
    -------
    BayesResult
        With ``'gibbs'``, ``divergences`` is None and ``idata`` holds ``mu``, every effect, its scale
        ``sigma_<effect>`` and ``sigma``, as with NUTS (without the non-centred ``z_<effect>``).

    Raises
    ------
    ValueError
        A missing column, a value that is not finite, fewer than 2 topics, an interaction naming an
        unknown effect, an unknown backend, or (``'gibbs'``) more than 2,000 jointly drawn levels.
    ImportError
        PyMC is not installed (``'pymc'``), or ArviZ is not installed (``'gibbs'``).

    Warns
    -----
    SamplingWarning
        Divergent transitions, or R-hat above `MAX_RHAT`.
    """
    check_choice("backend", backend, ("pymc", "gibbs"))
    pm = _pymc() if backend == "pymc" else None
    import pandas as pd
    df = pd.DataFrame(data)
    for col in (value, system, topic, *effects):
        if col not in df.columns:
            raise ValueError(f"column {col!r} not in the data (columns: {list(df.columns)})")
    y = df[value].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("values must be finite (NaN or inf found)")
    names = {"system": system, "topic": topic, **{e: e for e in effects}}
    # each effect's level per row and its levels, in the order they first appear
    codes = {k: pd.factorize(np.array([str(v) for v in df[c]], dtype=object)) for k, c in names.items()}
    systems, topics = list(codes["system"][1]), list(codes["topic"][1])
    if len(topics) < 2:
        raise ValueError("the model needs at least 2 topics")
    # (name, level per row, levels) of every effect, then of every interaction (level i_a * levels_b + i_b), and
    # (its position, those of its two effects) for each interaction
    factors = [(k, idx, len(levels)) for k, (idx, levels) in codes.items()]
    pairs = []
    position = {k: i for i, k in enumerate(codes)}   # each effect's place in factors
    for a, b in interactions:
        for x in (a, b):
            if x not in names:
                raise ValueError(f"interaction {a}×{b}: unknown effect {x!r}; effects: {list(names)}")
        (ia, la), (ib, lb) = codes[a], codes[b]
        pairs.append((len(factors), position[a], position[b]))
        factors.append((f"{a}_x_{b}", ia * len(lb) + ib, len(la) * len(lb)))
    if backend == "gibbs":
        return gibbs_fit(y, factors, pairs, systems, topics, draws=draws, tune=tune, chains=chains, seed=seed,
                         progress=progress)
    with pm.Model() as model:
        mean = pm.Normal("mu", 0.0, MU_PRIOR_SD)
        for name, idx, n_levels in factors:
            mean = mean + _effect(pm, name, n_levels)[idx]
        sigma = pm.Deterministic("sigma", pm.math.exp(pm.Flat("log_sigma")))  # p(σ) ∝ 1/σ: flat on log σ
        pm.Normal("y", mean, sigma, observed=y)
    idata = _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept)
    divergences, max_rhat = sampling_diagnostics(idata, "nuts", target_accept)
    beta = idata.posterior["system"].values.reshape(-1, len(systems))
    return BayesResult(systems, beta, idata, topics=topics, divergences=divergences, max_rhat=max_rhat)


def bayesian_linear_model(scores: ScoresLike, measure: Any = None, *, backend: str = "gibbs",
                          **kwargs: Any) -> BayesResult:
    """§3.1 on a topics × systems score matrix (anything [`score_matrix`][irmeasures_markov.inference.score_matrix]
    accepts).

    ``backend='gibbs'`` (default) uses `gibbs_linear_model`, a blocked
    Gibbs sampler with exact conditionals (numpy only, no divergent
    transitions), whose max R-hat and effective sample sizes are reported in
    ``max_rhat`` and ``idata``.  ``backend='pymc'`` samples the same model with
    PyMC's NUTS (``draws``, ``tune``, ``chains``, ``cores``, ``target_accept``):
    it is not free of divergent transitions on this model with few systems
    (raising ``target_accept`` towards 0.99 reduces them).  Either way the
    result's ``divergences`` and ``max_rhat`` report the diagnostics, and a
    [`SamplingWarning`][irmeasures_markov.inference.SamplingWarning] says when they are bad.  docs/inference.md gives
    the samplers' times.

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems.
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.
    backend : {'gibbs', 'pymc'}
        The sampler.
    **kwargs
        For the sampler: `gibbs_linear_model` or `fit_linear_model`.

    Returns
    -------
    BayesResult

    Raises
    ------
    ValueError
        An unknown backend, or scores [`score_matrix`][irmeasures_markov.inference.score_matrix] refuses.
    ImproperPosteriorError
        Scores that are exactly a topic effect plus a system effect (Gibbs).
    ImportError
        ``backend='pymc'`` without PyMC.
    """
    sm = score_matrix(scores, measure)
    check_choice("backend", backend, ("gibbs", "pymc"))
    if backend == "gibbs":
        return gibbs_linear_model(sm, **kwargs)
    # the long table in the order of sm.values.ravel(): topic by topic, every system in each
    data = {"system": sm.systems * sm.n_topics, "topic": [t for t in sm.topics for _ in sm.systems],
            "value": sm.values.ravel()}
    return fit_linear_model(data, **kwargs)


def rank_weights(depth: int, user: str = "precision", theta: float = 0.8) -> np.ndarray:
    """User-model rank distribution p_k for k = 1..depth: ``'precision'`` (uniform) or ``'rbp'`` (geometric).

    Parameters
    ----------
    depth : int
        The deepest rank, at least 1.
    user : {'precision', 'rbp'}
        Uniform 1/depth, or θ^{k−1}(1 − θ).
    theta : float
        RBP's persistence θ, in (0, 1).

    Returns
    -------
    numpy.ndarray
        p_1..p_depth.

    Raises
    ------
    ValueError
        ``depth < 1``, an unknown ``user``, or ``theta`` outside (0, 1).
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    k = np.arange(1, depth + 1)
    check_choice("user", user, ("precision", "rbp"))
    if user == "precision":
        return np.full(depth, 1.0 / depth)
    if not 0 < theta < 1:
        raise ValueError(f"theta must be in (0, 1), got {theta}")
    return theta ** (k - 1) * (1 - theta)


#: Variants of `direct_relevance_model`: the package's (default) and the paper's as published.
DIRECT_VARIANTS = ("package", "paper")
#: Truncation of the paper's p(σ) ∝ 1/σ in ``variant='paper'`` (logit scale): six orders of magnitude
#: around 1, wide enough that σ_run, σ_topic and σ_int sit well inside on TREC data.
JEFFREYS_BOUNDS = (1e-3, 1e3)


def _scale(pm, name, bounds=None):
    """A scale's prior: half-Cauchy, or within ``bounds`` the paper's p(σ) ∝ 1/σ, flat on log σ (truncated, it is
    proper; the paper's is not)."""
    if bounds is None:
        return pm.HalfCauchy(name, EFFECT_SCALE_PRIOR)
    return pm.Deterministic(name, pm.math.exp(pm.Uniform(f"log_{name}", np.log(bounds[0]), np.log(bounds[1]))))


def direct_model_weights(depth: int, user: str = "precision", theta: float = 0.8,
                         variant: str = "package") -> np.ndarray:
    """w_k, the weight of rank k's log Bernoulli(x_ijk | p_ij) in the likelihood of `direct_relevance_model`.

    ``'package'``: p_k of `rank_weights` scaled to the distribution's effective sample size
    (Σ p_k)² / Σ p_k²; ``'paper'``: the paper's own p_k (§3.2), 1 on ranks 1..depth for precision (as the
    paper writes it, not the distribution 1/depth) and θ^{k−1}(1 − θ) for RBP (adding up to 1 − θ^depth).
    """
    check_choice("variant", variant, DIRECT_VARIANTS)
    pk = rank_weights(depth, user, theta)
    if variant == "paper":
        return np.ones(depth) if user == "precision" else pk
    return pk * (pk.sum() ** 2 / np.sum(pk ** 2)) / pk.sum()  # scaled to the effective sample size


def direct_model(judgments: ArrayLike, *, user: str = "precision", theta: float = 0.8, variant: str = "package",
                 jeffreys_bounds: tuple[float, float] = JEFFREYS_BOUNDS):
    """The PyMC model of `direct_relevance_model` (unsampled; its arguments), for checking its log density."""
    pm = _pymc()
    x = np.asarray(judgments, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"judgments must be topics × systems × depth, got shape {x.shape}")
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("judgments must be 0/1")
    n_t, n_s, depth = x.shape
    if n_t < 2:
        raise ValueError("the model needs at least 2 topics")
    low, high = (float(b) for b in jeffreys_bounds)
    if not 0 < low < high < np.inf:
        raise ValueError(f"jeffreys_bounds must be 0 < low < high < inf, got {jeffreys_bounds!r}")
    w = direct_model_weights(depth, user, theta, variant)
    hits = np.tensordot(x, w, axes=([2], [0]))             # Σ_k w_k x_ijk
    total = w.sum()
    # the paper's priors: μ ~ N(0, σ_int²) and every σ ~ 1/σ, truncated (see the docstring); the package's: the latent
    # scale σ half-Cauchy as the effects' (p(σ) ∝ 1/σ would be improper here)
    bounds = None if variant == "package" else (low, high)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, MU_PRIOR_SD if bounds is None else _scale(pm, "sigma_int", bounds))
        beta = _effect(pm, "system", n_s, bounds=bounds)
        alpha = _effect(pm, "topic", n_t, bounds=bounds)
        sigma = _scale(pm, "sigma", bounds)
        z = pm.Normal("z_cell", 0.0, 1.0, shape=(n_t, n_s))
        y = mu + beta[None, :] + alpha[:, None] + sigma * z
        p = pm.Deterministic("p", pm.math.sigmoid(y))
        # weighted Bernoulli log-likelihood: Σ_k w_k [x log p + (1 − x) log(1 − p)]
        pm.Potential("relevance", pm.math.sum(hits * pm.math.log(p) + (total - hits) * pm.math.log(1.0 - p)))
    return model


def direct_relevance_model(judgments: ArrayLike, *, systems: Sequence[str] | None = None,
                           topics: Sequence[str] | None = None, user: str = "precision", theta: float = 0.8,
                           draws: int = 1000, tune: int = 1000, chains: int = 4, seed: int | None = 0,
                           progress: bool | None = None, cores: int | None = None,
                           target_accept: float = 0.9, variant: str = "package",
                           jeffreys_bounds: tuple[float, float] = JEFFREYS_BOUNDS) -> BayesResult:
    r"""§3.2: judgments x_ijk ~ Bernoulli(logistic(y_ij)), y_ij ~ N(μ + β_j + α_i, σ²), ranks weighted by p_k.

    ``judgments``: array topics × systems × depth of 0/1 (unjudged as 0).
    ``user``: ``'precision'`` (p_ij estimates precision@depth) or ``'rbp'``
    (geometric p_k with ``theta``; p_ij estimates RBP normalised over the depth).
    ``cell_estimates`` of the result are the posterior means of p_ij.  The
    log-likelihood is

    $$
    \sum_{i,j,k} w_k \left[x_{ijk} \log p_{ij} + (1 - x_{ijk}) \log(1 - p_{ij})\right],
    $$

    maximised at p_ij = Σ_k w_k x_ijk / Σ_k w_k, the user-model measure, in both variants.

    **``variant='package'``** (default): μ ~ N(0, 10²); σ_run, σ_topic and the
    latent σ ~ half-Cauchy(0, 1); w_k = p_k of `rank_weights` scaled to the
    distribution's effective sample size (Σ p_k)² / Σ p_k² (precision@K: w_k = 1;
    RBP θ = 0.8: Σ w_k ≈ 9).

    **``variant='paper'``**: Carterette (2011, §3.2) as published, with its two
    gaps filled by the closest proper reading, named here:

    * *Priors.* The paper gives μ ~ N(0, σ_int²) and p(σ) ∝ 1/σ for σ_int,
      σ_run, σ_topic and σ. That posterior is improper: the likelihood stays
      positive as a scale goes to 0, where ∫ dσ/σ diverges. *Truncated-Jeffreys
      reading:* each scale has density ∝ 1/σ on ``jeffreys_bounds`` (flat on
      log σ; default 10⁻³ to 10³).  Where the data inform a scale the bounds do
      not matter; where they barely do (the latent σ under RBP's weights, which
      add up to one judgment per cell), the posterior mass near the lower bound
      depends on it.
    * *Likelihood.* The paper writes P(x_ijk) = p_ij p_k with p_k = 1 on ranks
      1..K for precision@K and p_k = θ^{k−1}(1−θ) for RBP, and says p_ij then
      estimates precision@K and RBP. Read literally (x_ijk ~ Bernoulli(p_ij p_k))
      the maximum-likelihood p_ij is not RBP (it exceeds 1 as soon as a
      relevant document is found below the first ranks). *Power-likelihood
      reading:* rank k's Bernoulli term counts p_k times, w_k = p_k
      (`direct_model_weights`), under which the paper's claim holds. For
      precision@K this is the plain Bernoulli model and equals the package's
      likelihood; for RBP the weights add up to 1 − θ^K (about one judgment per
      cell), not to the effective sample size.

    Parameters
    ----------
    judgments : array_like
        0/1, shape topics × systems × depth (unjudged as 0).
    systems : sequence of str, optional
        Labels (default ``system0, ...`` and ``0, 1, ...``).
    topics : sequence of str, optional
        Labels (default ``system0, ...`` and ``0, 1, ...``).
    user : {'precision', 'rbp'}
        The rank distribution p_k (`rank_weights`).
    theta : float
        RBP's persistence, in (0, 1).
    draws : int
        NUTS draws kept per chain, tuning steps, chains.
    tune : int
        NUTS draws kept per chain, tuning steps, chains.
    chains : int
        NUTS draws kept per chain, tuning steps, chains.
    seed : int or None
        ``random_seed`` of ``pymc.sample``.
    progress : bool or None
        PyMC's progress bar (None: only when standard error is a terminal).
    cores : int, optional
        Processes sampling chains in parallel (PyMC's default when None).
    target_accept : float
        NUTS's target acceptance rate (raise it towards 0.99 against divergences).
    variant : {'package', 'paper'}
        The package's model (default) or the paper's as published (above).
    jeffreys_bounds : (float, float)
        ``variant='paper'``: the range (low, high) of every scale's truncated p(σ) ∝ 1/σ
        (default `JEFFREYS_BOUNDS`, 10⁻³ to 10³); ignored by the package's variant.

    Returns
    -------
    BayesResult
        With ``cell_estimates`` (posterior means of p_ij) and ``cell_intervals`` (95% equal-tailed).

    Raises
    ------
    ValueError
        Judgments that are not 0/1 or not 3-D, fewer than 2 topics, a bad ``user``/``theta``, an unknown
        ``variant``, or ``jeffreys_bounds`` not 0 < low < high < ∞.
    ImportError
        PyMC is not installed.

    Warns
    -----
    SamplingWarning
        Divergent transitions, or R-hat above `MAX_RHAT`.
    """
    pm = _pymc()
    check_choice("variant", variant, DIRECT_VARIANTS)
    model = direct_model(judgments, user=user, theta=theta, variant=variant, jeffreys_bounds=jeffreys_bounds)
    n_t, n_s, _ = np.shape(judgments)
    systems = [str(s) for s in systems] if systems is not None else [f"system{j}" for j in range(n_s)]
    topics = [str(t) for t in topics] if topics is not None else [str(i) for i in range(n_t)]
    idata = _sample(pm, model, draws, tune, chains, seed, progress, cores, target_accept)
    divergences, max_rhat = sampling_diagnostics(idata, "nuts", target_accept)
    beta_draws = idata.posterior["system"].values.reshape(-1, n_s)
    p_draws = idata.posterior["p"].values.reshape(-1, n_t, n_s)
    return BayesResult(systems, beta_draws, idata, topics, p_draws.mean(axis=0),
                       np.quantile(p_draws, [0.025, 0.975], axis=0), divergences=divergences, max_rhat=max_rhat)
