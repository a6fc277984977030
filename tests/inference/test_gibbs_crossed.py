"""The Gibbs backend of fit_linear_model (crossed effects and interactions): recovery of known effects, REML's
variance components (statsmodels MixedLM) and PyMC's NUTS on the same small tables."""
import numpy as np
import pandas as pd
import pytest

from irmeasures_markov.inference import fit_linear_model
from irmeasures_markov.inference._gibbs_crossed import (
    MAX_DENSE_LEVELS,
    collapsed_scale,
    gaussian,
    location_blocks,
    sample_crossed_effects,
)

SCALES = ("sigma", "sigma_system", "sigma_topic", "sigma_corpus", "sigma_system_x_corpus", "sigma_topic_x_corpus")


def simulate(rng, n_systems=8, n_topics=15, n_corpora=3, sd=None, drop=0.0):
    """A long table system × topic × corpus with every effect of the model drawn from its scale (``sd``), and a
    share ``drop`` of the topic × corpus cells left out (every system's row of such a cell)."""
    sd = {**dict(system=0.05, topic=0.15, corpus=0.1, system_x_corpus=0.03, topic_x_corpus=0.08, sigma=0.05),
          **(sd or {})}
    b = {"system": rng.normal(0, sd["system"], n_systems), "topic": rng.normal(0, sd["topic"], n_topics),
         "corpus": rng.normal(0, sd["corpus"], n_corpora),
         "system_x_corpus": rng.normal(0, sd["system_x_corpus"], (n_systems, n_corpora)),
         "topic_x_corpus": rng.normal(0, sd["topic_x_corpus"], (n_topics, n_corpora))}
    s, t, c = (g.ravel() for g in np.meshgrid(np.arange(n_systems), np.arange(n_topics), np.arange(n_corpora),
                                              indexing="ij"))
    keep = rng.random((n_topics, n_corpora)) >= drop
    rows = keep[t, c]
    s, t, c = s[rows], t[rows], c[rows]
    y = (0.3 + b["system"][s] + b["topic"][t] + b["corpus"][c] + b["system_x_corpus"][s, c]
         + b["topic_x_corpus"][t, c] + rng.normal(0, sd["sigma"], s.size))
    df = pd.DataFrame({"system": [f"s{i}" for i in s], "topic": [f"t{i}" for i in t],
                       "corpus": [f"c{i}" for i in c], "value": y})
    return df, b


FULL = dict(effects=["corpus"], interactions=[("system", "corpus"), ("topic", "corpus")])


def test_backend_is_validated_and_nuts_stays_the_default():
    import inspect
    assert inspect.signature(fit_linear_model).parameters["backend"].default == "pymc"
    df, _ = simulate(np.random.default_rng(0), 3, 4, 2)
    with pytest.raises(ValueError, match=r"backend must be one of \['pymc', 'gibbs'\]"):
        fit_linear_model(df, backend="stan")


def test_dense_blocks_are_bounded_with_a_clear_message():
    n = 3 * MAX_DENSE_LEVELS
    idx = np.arange(n)
    factors = [("a", idx, n), ("b", idx, n)]
    with pytest.raises(ValueError, match="jointly.*more than 2000.*backend='pymc'"):
        sample_crossed_effects(np.zeros(n), factors, draws=1, tune=0)
    with pytest.raises(ValueError, match="at least one effect"):
        sample_crossed_effects(np.zeros(3), [], draws=1, tune=0)


@pytest.mark.parametrize("p", [5, 70])   # the batched path and the per-chain triangular solves
def test_gaussian_draws_have_the_stated_moments(p):
    """N(Q⁻¹ l, sd² Q⁻¹) per chain: sample means within 5 standard errors of Q⁻¹ l (numpy's solve)."""
    rng = np.random.default_rng(p)
    a = rng.normal(size=(2, p, p + 3))
    q, lin, sd = a @ a.transpose(0, 2, 1), rng.normal(size=(2, p)), np.array([1.0, 2.0])
    draws = np.array([gaussian(q, lin, sd, rng) for _ in range(1000)])
    mean = np.linalg.solve(q, lin[:, :, None])[:, :, 0]
    se = sd[:, None] * np.sqrt(np.diagonal(np.linalg.inv(q), axis1=1, axis2=2) / 1000)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)


@pytest.mark.slow
def test_collapsed_scale_leaves_its_target_invariant():
    """One effect with 3 levels, μ and σ² fixed apart: repeated collapsed draws of (s, μ, b) from a start in
    the far tail reach the same law of s as a brute-force grid of p(s | level sums) (median within 10%)."""
    rng = np.random.default_rng(0)
    rows, sums = np.array([4.0, 4.0, 4.0]), np.array([[2.0, -1.0, 0.4]])
    var = np.array([0.25])
    s, kept = np.array([1e4]), []
    for step in range(3000):
        s, _, _ = collapsed_scale(sums, rows, s, var, rng)
        kept.append(s[0]) if step >= 200 else None
    grid = np.exp(np.linspace(-12, 10, 20001))
    d = grid[:, None] + 0.25 / rows
    m = sums[0] / rows
    t = 1 + 100 * (1 / d).sum(1)
    log_p = (-np.log1p(grid) - 0.5 * (np.log(d).sum(1) + np.log(t) + (m ** 2 / d).sum(1)
                                      - 100 * (m / d).sum(1) ** 2 / t) - 0.5 * np.log(grid))
    w = np.exp(log_p - log_p.max()) * np.gradient(grid)
    median = grid[np.searchsorted(np.cumsum(w) / w.sum(), 0.5)]
    assert abs(np.median(kept) / median - 1) < 0.1


def test_location_blocks():
    """One block when the dense part is small; else each interaction with its main effects, and the rest."""
    assert location_blocks(np.array([5, 10, 3, 15]), [(3, 0, 2)]) == [[0, 1, 2, 3]]
    big = np.array([129, 50, 4, 516, 200, 7])
    assert location_blocks(big, [(3, 0, 2), (4, 1, 2)]) == [[0, 2, 3], [1, 2, 4], [5]]


def test_sampler_is_reproducible_and_unbalanced_tables_are_fine():
    """Same seed, same draws; cells with several rows and cells with none (levels without rows follow the
    prior) are accepted; numpy only (no ArviZ needed for the draws)."""
    rng = np.random.default_rng(1)
    df, _ = simulate(rng, 4, 6, 2, drop=0.3)
    df = pd.concat([df, df.iloc[:5]], ignore_index=True)       # repeated cells
    codes = {k: pd.factorize(df[k])[0] for k in ("system", "topic", "corpus")}
    factors = [(k, v, int(v.max()) + 1) for k, v in codes.items()]
    factors.append(("topic_x_corpus", codes["topic"] * 2 + codes["corpus"], 12))
    kw = dict(draws=30, tune=10, chains=2, seed=3, progress=False)
    a = sample_crossed_effects(df["value"].to_numpy(), factors, [(3, 1, 2)], **kw)
    b = sample_crossed_effects(df["value"].to_numpy(), factors, [(3, 1, 2)], **kw)
    assert set(a) == {"mu", "system", "topic", "corpus", "topic_x_corpus", "sigma", "sigma_system", "sigma_topic",
                      "sigma_corpus", "sigma_topic_x_corpus"}
    assert a["topic_x_corpus"].shape == (2, 30, 12) and a["sigma"].shape == (2, 30)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        assert np.all(np.isfinite(a[k]))


@pytest.mark.slow
def test_gibbs_recovers_known_effects():
    """Simulated table with every effect of the model, 30% of the topic × corpus cells missing: the posterior
    means of the system contrasts and corpus contrasts are close to the truth (within 3 posterior sds, and
    correlated > 0.9), the residual σ within 10%, and no SamplingWarning (R-hat <= 1.01)."""
    import warnings

    from irmeasures_markov.inference import SamplingWarning
    rng = np.random.default_rng(7)
    df, b = simulate(rng, n_systems=10, n_topics=20, n_corpora=4, drop=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplingWarning)
        res = fit_linear_model(df, **FULL, backend="gibbs", draws=1000, tune=500, progress=False)
    assert res.divergences is None and res.max_rhat <= 1.01
    post = res.idata.posterior
    beta = res.system_effects - res.system_effects.mean(axis=1, keepdims=True)
    order = [int(name[1:]) for name in res.systems]       # levels in order of first appearance
    truth = b["system"][order] - b["system"][order].mean() + b["system_x_corpus"][order].mean(axis=1) \
        - b["system_x_corpus"][order].mean()
    assert np.all(np.abs(beta.mean(0) - truth) < 3 * beta.std(0))
    assert np.corrcoef(beta.mean(0), truth)[0, 1] > 0.9
    sigma = float(post["sigma"].mean())
    assert abs(sigma - 0.05) < 0.005
    corpus = post["corpus"].values.reshape(-1, 4)
    corpus = corpus - corpus.mean(axis=1, keepdims=True)
    corpus_levels = [int(c[1:]) for c in pd.unique(df["corpus"])]
    true_corpus = (b["corpus"] + b["topic_x_corpus"].mean(0) + b["system_x_corpus"].mean(0))[corpus_levels]
    true_corpus -= true_corpus.mean()
    assert np.all(np.abs(corpus.mean(0) - true_corpus) < 3 * corpus.std(0) + 0.01)


@pytest.mark.slow
# REML may put the corpus component (3 levels) on its boundary 0, and says so; that component is not compared
@pytest.mark.filterwarnings("ignore:The MLE may be on the boundary")
def test_gibbs_variance_components_agree_with_reml():
    """Balanced table (12 systems × 20 topics × 3 corpora, one row a cell): REML estimates of the variance
    components (statsmodels MixedLM, one group with a variance component per effect) against the posterior
    medians of the scales; each within one posterior sd of the scale (the priors differ: REML is flat on the
    variances, the model half-Cauchy on the sds — they agree where the data inform a scale, i.e. all but the
    corpus effect with its 3 levels, which is left out)."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(11)
    df, _ = simulate(rng, n_systems=12, n_topics=20, n_corpora=3)
    df["sc"] = df["system"] + ":" + df["corpus"]
    df["tc"] = df["topic"] + ":" + df["corpus"]
    vc = {"system": "0 + C(system)", "topic": "0 + C(topic)", "corpus": "0 + C(corpus)", "sc": "0 + C(sc)",
          "tc": "0 + C(tc)"}
    model = sm.MixedLM.from_formula("value ~ 1", groups=np.ones(len(df)), vc_formula=vc, re_formula="0", data=df)
    reml = model.fit(reml=True, method="lbfgs")
    names = dict(zip(model.exog_vc.names, np.sqrt(reml.vcomp)))
    res = fit_linear_model(df, **FULL, backend="gibbs", draws=1000, tune=500, progress=False)
    post = res.idata.posterior
    pairs = {"sigma": np.sqrt(reml.scale), "sigma_system": names["system"], "sigma_topic": names["topic"],
             "sigma_system_x_corpus": names["sc"], "sigma_topic_x_corpus": names["tc"]}
    for scale, ref in pairs.items():
        draws = post[scale].values.ravel()
        assert abs(np.median(draws) - ref) < draws.std(), (scale, np.median(draws), ref)


@pytest.mark.slow
def test_gibbs_agrees_with_nuts_on_a_small_table():
    """10 systems × 10 topics × 2 rows a cell, simulated with μ + system + topic + system×topic (every scale
    informed by 10 levels or more, every effect in the interaction: the Gibbs sampler's nested steps alone).
    PyMC's NUTS (the package's non-centred model, target_accept 0.95; no divergence, R-hat <= 1.01) and the
    Gibbs backend give posterior means within 4 Monte Carlo standard errors (ArviZ's, both fits combined) for
    μ, every scale and every system and topic effect."""
    pytest.importorskip("pymc")
    import arviz as az
    rng = np.random.default_rng(5)
    n_s, n_t = 10, 10
    s, t, _ = (g.ravel() for g in np.meshgrid(np.arange(n_s), np.arange(n_t), np.arange(2), indexing="ij"))
    y = (0.3 + rng.normal(0, 0.1, n_s)[s] + rng.normal(0, 0.15, n_t)[t] + rng.normal(0, 0.08, (n_s, n_t))[s, t]
         + rng.normal(0, 0.05, s.size))
    df = pd.DataFrame({"system": [f"s{i}" for i in s], "topic": [f"t{i}" for i in t], "value": y})
    model = dict(interactions=[("system", "topic")], seed=1, progress=False)
    nuts = fit_linear_model(df, **model, draws=600, tune=500, chains=2, cores=1, target_accept=0.95)
    assert nuts.divergences == 0 and nuts.max_rhat <= 1.01
    gibbs = fit_linear_model(df, **model, backend="gibbs", draws=1000, tune=300)
    for name in ("mu", "sigma", "sigma_system", "sigma_topic", "sigma_system_x_topic", "system", "topic"):
        a, b = nuts.idata.posterior[[name]], gibbs.idata.posterior[[name]]
        se = np.hypot(np.ravel(az.mcse(a)[name].values), np.ravel(az.mcse(b)[name].values))
        gap = np.abs(np.ravel((a[name].mean(("chain", "draw")) - b[name].mean(("chain", "draw"))).values))
        assert np.all(gap < 4 * se), (name, gap / se)


def test_nested_scales_density_is_the_dense_gaussian():
    """NestedScales's closed form (Sherman–Morrison per level of the main effect, then for μ) against the dense
    N(0, blocks diag(s_ab + σ²/n) + s_a 11' + 10² 11') of scipy, for cell means of an unbalanced layout (a level
    of a without rows, a cell without rows); differences across scales agree (the constant −k/2 log 2π aside)."""
    from scipy.stats import multivariate_normal

    from irmeasures_markov.inference._gibbs_crossed import NestedScales
    rng = np.random.default_rng(3)
    parent = np.array([0, 0, 0, 1, 1, 3, 3, 3])           # level 2 of a has no cells
    rows = np.array([3.0, 1.0, 2.0, 5.0, 0.0, 2.0, 2.0, 4.0])
    nested = NestedScales(parent, rows, 4)
    m = rng.normal(size=(1, int((rows > 0).sum())))
    var = np.array([0.3])
    has = rows > 0
    same = parent[has][:, None] == parent[has][None, :]

    def dense(s_a, s_ab):
        cov = np.diag(s_ab + var[0] / rows[has]) + s_a * same + 100.0
        return multivariate_normal(np.zeros(m.shape[1]), cov).logpdf(m[0])

    def closed(s_a, s_ab):
        _, big_w, big_m, cell_part = nested.cells(m, np.array([s_ab]), var)
        return nested.log_density(np.array([s_a]), big_w, big_m, cell_part)[0][0]

    for s_a, s_ab in [(0.5, 0.2), (2.0, 0.01), (0.01, 3.0)]:
        assert closed(s_a, s_ab) - closed(1.0, 1.0) == pytest.approx(dense(s_a, s_ab) - dense(1.0, 1.0), abs=1e-9)
