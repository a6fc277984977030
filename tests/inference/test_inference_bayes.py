"""Bayesian models (PyMC): recovery of known effects, coverage, agreement with the t-test, direct model."""
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

pm = pytest.importorskip("pymc", reason='PyMC not installed: pip install "irmeasures-markov[bayes]"')

from irmeasures_markov.inference import paired_t_test  # noqa: E402
from irmeasures_markov.inference._bayes import (  # noqa: E402
    bayesian_linear_model,
    direct_relevance_model,
    fit_linear_model,
    rank_weights,
)

FAST = dict(draws=300, tune=300, chains=2, progress=False, cores=1)
PYMC = dict(FAST, backend="pymc")  # the linear model's NUTS fit (the default backend is the Gibbs sampler)
# the fits here are kept small for speed, so their R-hat is often above 1.01: the SamplingWarning
# that says so is tested on its own below
pytestmark = [pytest.mark.filterwarnings("ignore::irmeasures_markov.inference._posterior.SamplingWarning"),
              pytest.mark.slow]  # Bayesian sampling (PyMC, Gibbs)


def simulate(rng, n_topics=25, n_systems=6, sd_run=0.06, sd_topic=0.15, sd=0.07):
    beta = rng.normal(0, sd_run, n_systems)
    alpha = rng.normal(0, sd_topic, n_topics)
    y = 0.4 + alpha[:, None] + beta[None, :] + rng.normal(0, sd, (n_topics, n_systems))
    return y, beta


def centred(res):
    return res.system_effects - res.system_effects.mean(axis=1, keepdims=True)


def _chains(res, values):
    """``values`` (draws pooled over chains, as in ``system_effects``) back as chain × draw × ..."""
    n_chains = res.idata.posterior.sizes["chain"]
    return values.reshape((n_chains, -1) + values.shape[1:])


def _mcse_of_mean(x):
    """Monte Carlo standard error of the mean of each column of chain × draw × k draws: sd / sqrt(ESS),
    with ArviZ's effective sample size (autocorrelation within chains, rank-normalised)."""
    import arviz as az
    ess = az.ess(az.convert_to_dataset({"x": x}))["x"].values
    return x.reshape(-1, x.shape[-1]).std(axis=0) / np.sqrt(ess), ess


def _mcse_of_sd(x):
    """MC standard error of the sd of each column: the delta method on the mean of squared deviations."""
    sq = (x - x.mean(axis=(0, 1))) ** 2
    return _mcse_of_mean(sq)[0] / (2 * np.sqrt(sq.mean(axis=(0, 1))))


def test_gibbs_sampler_agrees_with_pymc():
    """The Gibbs sampler and PyMC's NUTS give the same posterior of the system contrasts β_j − β̄ (5 runs ×
    20 topics, where NUTS has no divergence): means, sds and P(A > B) each within 4 Monte Carlo standard
    errors, from the ESS of each sampler's own chains (a 4-sigma miss has probability 6e-5 per quantity)."""
    rng = np.random.default_rng(0)
    y, _ = simulate(rng, n_topics=20, n_systems=5)
    g = bayesian_linear_model(y, draws=2000, tune=500, chains=4, progress=False, seed=1)  # the default: Gibbs
    p = bayesian_linear_model(y, seed=1, **dict(PYMC, draws=500, tune=500))
    assert p.divergences == 0
    xg, xp = _chains(g, centred(g)), _chains(p, centred(p))
    (se_g, ess_g), (se_p, ess_p) = _mcse_of_mean(xg), _mcse_of_mean(xp)
    assert ess_g.min() > 2000 and ess_p.min() > 200   # the errors below are those of real sample sizes
    assert np.all(np.abs(xg.mean(axis=(0, 1)) - xp.mean(axis=(0, 1))) < 4 * np.hypot(se_g, se_p))
    se_sd = np.hypot(_mcse_of_sd(xg), _mcse_of_sd(xp))
    assert np.all(np.abs(xg.std(axis=(0, 1)) - xp.std(axis=(0, 1))) < 4 * se_sd)
    # P(β_a > β_b) for every pair: the MC error of a share, from the indicator's own ESS (at least 1/ESS)
    for a, b in combinations(range(5), 2):
        ind_g = _chains(g, (g.system_effects[:, a] > g.system_effects[:, b]).astype(float))[..., None]
        ind_p = _chains(p, (p.system_effects[:, a] > p.system_effects[:, b]).astype(float))[..., None]
        (sg, eg), (sp, ep) = _mcse_of_mean(ind_g), _mcse_of_mean(ind_p)
        tol = 4 * np.hypot(sg, sp)[0] + 1.0 / min(eg[0], ep[0])
        assert abs(g.prob_better(f"system{a}", f"system{b}") - p.prob_better(f"system{a}", f"system{b}")) < tol


def test_default_samples_the_readme_example_cleanly_in_seconds():
    """The default of bayesian_linear_model on the README's kind of example (AP of 3 runs × 10 topics of the
    bundled sample): no SamplingWarning, max R-hat < 1.01, and effective sample sizes in the thousands for
    the system contrasts and hundreds for every scale (NUTS, the old default, took a minute here with
    ~40 divergent transitions)."""
    import warnings

    import arviz as az

    from irmeasures_markov.inference import SamplingWarning
    ap = three_runs_of_the_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplingWarning)
        res = bayesian_linear_model(ap, seed=0, progress=False)
    assert res.divergences is None and res.max_rhat < 1.01
    post = res.idata.posterior
    contrasts = _chains(res, centred(res))
    assert _mcse_of_mean(contrasts)[1].min() > 2000
    for scale in ("sigma", "sigma_system", "sigma_topic"):
        assert float(az.ess(post[[scale]])[scale]) > 400, scale
        assert float(az.rhat(post[[scale]])[scale]) < 1.01, scale


def _shrinkage(res, n_topics):
    """Per draw, the factor λ = σ_run² / (σ_run² + σ²/n_topics) that the model applies to the contrasts of the
    column means given the variances (balanced design): E[β_a − β_b | y] = E[λ | y] (ȳ_a − ȳ_b) exactly."""
    post = res.idata.posterior
    s_b, s = post["sigma_system"].values.ravel(), post["sigma"].values.ravel()
    return s_b ** 2 / (s_b ** 2 + s ** 2 / n_topics)


@pytest.mark.parametrize("case", ["readme", "spread"])
def test_posterior_differences_agree_with_the_paired_means_and_t_intervals(case):
    """Checked against the classic analysis of the same scores.  The posterior mean of β_a − β_b is the paired
    mean difference ȳ_a − ȳ_b times the model's shrinkage E[λ | y] (an identity of the balanced model, within
    4 MC standard errors); where the systems differ clearly (λ ≈ 1) it is the paired mean itself and the 95%
    credible interval is as wide as the t interval of the same linear model fitted by least squares (the
    two-way ANOVA contrast: pooled residual variance, (n_t−1)(n_s−1) df, the flat-prior posterior) to within
    5%, and P(A > B) is 1 − its one-sided p-value to within 0.02."""
    from scipy import stats
    if case == "readme":
        ap = three_runs_of_the_sample()
        y, names = ap.values, ap.systems
        res = bayesian_linear_model(ap, seed=0, progress=False)
    else:
        rng = np.random.default_rng(8)
        y, _ = simulate(rng, n_topics=30, n_systems=4, sd_run=0.1, sd=0.05)
        names = [f"system{j}" for j in range(4)]
        res = bayesian_linear_model(y, seed=0, progress=False)
    n_t, n_s = y.shape
    lam = _shrinkage(res, n_t)
    df = (n_t - 1) * (n_s - 1)
    resid = y - y.mean(axis=0) - y.mean(axis=1, keepdims=True) + y.mean()
    pooled_se = np.sqrt(2 * (resid ** 2).sum() / df / n_t)
    for a, b in combinations(range(n_s), 2):
        d = y[:, a] - y[:, b]
        post = res.system_effects[:, a] - res.system_effects[:, b]
        se, _ = _mcse_of_mean(_chains(res, post)[..., None])
        assert abs(post.mean() - lam.mean() * d.mean()) < 4 * se[0] + 1e-12
        if case == "spread":
            assert lam.mean() > 0.98
            assert abs(post.mean() - d.mean()) < 4 * se[0] + 0.02 * abs(d.mean())
            half = stats.t.ppf(0.975, df) * pooled_se
            low, high = np.quantile(post, [0.025, 0.975])
            # width: MC error of a 2.5% quantile with ESS ~ 5000 is ~2% of the half-width; the centre is checked above
            assert abs((high - low) / (2 * half) - 1) < 0.05
            # the same interval by the t distribution of the pooled model, seen as a p-value: P(β_a > β_b | y)
            # is 1 − the one-sided ANOVA-contrast p-value (the paper's Figure 1 relation)
            p_one_sided = stats.t.sf(d.mean() / pooled_se, df)
            assert abs(res.prob_better(names[a], names[b]) - (1 - p_one_sided)) < 0.02


def test_credible_intervals_cover_the_true_differences():
    """Over repeated simulations the 90% intervals of β_j − β̄ cover the truth at the stated rate."""
    rng = np.random.default_rng(11)
    covered, total = 0, 0
    for rep in range(60):
        y, beta = simulate(rng)
        res = bayesian_linear_model(y, backend="gibbs", draws=600, tune=200, chains=2, progress=False, seed=rep)
        lo, hi = np.quantile(centred(res), [0.05, 0.95], axis=0)
        truth = beta - beta.mean()
        covered += int(np.sum((lo <= truth) & (truth <= hi)))
        total += truth.size
    rate = covered / total
    # 360 intervals: the binomial standard error at 90% is 1.6 points
    assert 0.85 <= rate <= 0.95, rate


def test_prob_better_is_monotone_with_the_t_test():
    rng = np.random.default_rng(5)
    y, _ = simulate(rng, n_topics=30, n_systems=8, sd_run=0.04)
    for res in (bayesian_linear_model(y, backend="gibbs", draws=3000, tune=500, chains=4, progress=False, seed=1),
                bayesian_linear_model(y, seed=1, **PYMC)):
        probs, pvals = [], []
        for a in range(8):
            for b in range(8):
                if a != b:
                    probs.append(res.prob_better(f"system{a}", f"system{b}"))
                    pvals.append(paired_t_test(y[:, a], y[:, b], "greater").pvalue)
        rho = stats.spearmanr(probs, pvals).statistic
        assert rho < -0.95  # higher P(A > B) goes with a smaller one-sided p-value
        m = res.prob_better_matrix()
        np.testing.assert_allclose(m + m.T, 1 - np.eye(8), atol=1e-9)
        assert res.summary().shape == (8, 3)


def test_reproducible_with_a_seed():
    rng = np.random.default_rng(2)
    y, _ = simulate(rng, n_topics=8, n_systems=3)
    tiny = dict(PYMC, draws=50, tune=50)
    r1 = bayesian_linear_model(y, seed=7, **tiny)
    r2 = bayesian_linear_model(y, seed=7, **tiny)
    np.testing.assert_array_equal(r1.system_effects, r2.system_effects)
    g1 = bayesian_linear_model(y, backend="gibbs", seed=7, progress=False)
    g2 = bayesian_linear_model(y, backend="gibbs", seed=7, progress=False)
    np.testing.assert_array_equal(g1.system_effects, g2.system_effects)


def test_extra_effects_and_interactions():
    """§3.3: an assessor effect shared by half of the observations is recovered."""
    rng = np.random.default_rng(3)
    rows = []
    for t in range(8):
        for s in range(3):
            for assessor in ("nist", "waterloo"):
                shift = 0.15 if assessor == "waterloo" else 0.0
                rows.append({"topic": f"t{t}", "system": f"s{s}", "assessor": assessor,
                             "value": 0.3 + 0.05 * s + shift + rng.normal(0, 0.03)})
    import pandas as pd
    df = pd.DataFrame(rows)
    res = fit_linear_model(df, effects=["assessor"], interactions=[("system", "assessor")], seed=0,
                           draws=200, tune=300, chains=1, progress=False, cores=1)
    post = res.idata.posterior
    diff = (post["assessor"].values[..., 1] - post["assessor"].values[..., 0]).ravel()
    assert abs(diff.mean() - 0.15) < 0.03
    assert "system_x_assessor" in post
    with pytest.raises(ValueError, match="unknown effect"):
        fit_linear_model(df, effects=["assessor"], interactions=[("system", "corpus")], **FAST)
    with pytest.raises(ValueError, match="column 'corpus'"):
        fit_linear_model(df, effects=["corpus"], **FAST)


def test_direct_model_estimates_precision_and_rbp():
    rng = np.random.default_rng(4)
    truth = np.array([0.2, 0.5, 0.7])
    x = (rng.random((10, 3, 20)) < truth[None, :, None]).astype(float)
    res = direct_relevance_model(x, user="precision", seed=0, **FAST)
    precision = x.mean(axis=2)
    assert np.corrcoef(res.cell_estimates.ravel(), precision.ravel())[0, 1] > 0.9
    np.testing.assert_allclose(res.cell_estimates.mean(axis=0), truth, atol=0.08)
    assert res.prob_better("system2", "system0") > 0.99
    w = rank_weights(20, "rbp", 0.8)
    rbp = np.tensordot(x, w, axes=([2], [0])) / w.sum()
    res_rbp = direct_relevance_model(x, user="rbp", theta=0.8, seed=0, **FAST)
    # one judgment's worth per cell (the weights add up to 1 − 0.8⁴⁰): p_ij leans on the additive model (0.64 here)
    assert np.corrcoef(res_rbp.cell_estimates.ravel(), rbp.ravel())[0, 1] > 0.5
    with pytest.raises(ValueError, match="0/1"):
        direct_relevance_model(x * 2, **FAST)
    with pytest.raises(ValueError, match="at least 2 topics"):
        direct_relevance_model(x[:1], **FAST)


def test_pymc_credible_intervals_cover_the_truth():
    """The PyMC model itself (not only the Gibbs sampler checked against it) is calibrated: over 3 simulations of
    40 systems × 10 topics, the 90% intervals of β_j − β̄ cover the true centred effects at about 90%."""
    rng = np.random.default_rng(21)
    covered, total = 0, 0
    for rep in range(3):
        y, beta = simulate(rng, n_topics=10, n_systems=40)
        res = bayesian_linear_model(y, seed=rep, **dict(PYMC, draws=200, tune=200))
        lo, hi = np.quantile(centred(res), [0.05, 0.95], axis=0)
        truth = beta - beta.mean()
        covered += int(np.sum((lo <= truth) & (truth <= hi)))
        total += truth.size
    rate = covered / total
    # 120 intervals (binomial s.e. 2.7 points, more as they are correlated within a simulation; 0.875 observed)
    assert 0.80 <= rate <= 0.97, rate


def three_runs_of_the_sample():
    """AP of three runs on the bundled sample (10 topics): the sample run and two noisier versions of it."""
    from importlib import resources

    import ir_measures

    from irmeasures_markov.inference import score_matrix
    data = resources.files("irmeasures_markov") / "data"
    qrels = list(ir_measures.read_trec_qrels(str(data / "sample.qrels")))
    run = list(ir_measures.read_trec_run(str(data / "sample.run")))
    rng = np.random.default_rng(0)
    runs = {"runA": run,
            "runB": [r._replace(score=r.score + rng.normal(0, 0.5)) for r in run],
            "runC": [r._replace(score=r.score + rng.normal(0, 1.0)) for r in run]}
    return score_matrix({name: list(ir_measures.iter_calc([ir_measures.AP], qrels, r)) for name, r in runs.items()})


def test_divergences_and_rhat_are_reported_and_warned():
    """3 runs x 10 topics: NUTS diverges on this hierarchical model; the result counts it and a SamplingWarning
    says what to do (it used to be silent while the docstring promised no divergences)."""
    from irmeasures_markov.inference import SamplingWarning
    ap = three_runs_of_the_sample()
    with pytest.warns(SamplingWarning, match=r"divergent transitions.*target_accept") as record:
        res = bayesian_linear_model(ap, backend="pymc", seed=0, draws=200, tune=200, chains=2, progress=False,
                                    cores=1)
    assert res.divergences == int(res.idata.sample_stats["diverging"].values.sum()) > 0
    assert f"{res.divergences} divergent" in str(record[0].message)
    import arviz as az
    beta = res.idata.posterior["system"]
    contrast = (beta - beta.mean(beta.dims[-1])).to_dataset(name="c")
    rhats = [az.rhat(contrast).to_array().values.max(),
             az.rhat(res.idata.posterior[["sigma", "sigma_system", "sigma_topic"]]).to_array().values.max()]
    assert res.max_rhat == pytest.approx(float(max(rhats)))
    assert "without divergences" not in bayesian_linear_model.__doc__


def test_clean_fits_do_not_warn_and_gibbs_reports_rhat():
    import warnings

    import arviz as az

    from irmeasures_markov.inference import SamplingWarning
    from irmeasures_markov.inference._posterior import sampling_diagnostics as _diagnostics
    rng = np.random.default_rng(1)
    good = az.from_dict(posterior={"x": rng.normal(size=(4, 500))},
                        sample_stats={"diverging": np.zeros((4, 500), dtype=bool)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplingWarning)
        assert _diagnostics(good) == (0, pytest.approx(float(az.rhat(good).x), abs=0))
    stuck = az.from_dict(posterior={"x": rng.normal(size=(2, 500)) + np.array([[0.0], [5.0]])},
                         sample_stats={"diverging": np.zeros((2, 500), dtype=bool)})
    with pytest.warns(SamplingWarning, match="R-hat .* > 1.01"):
        divergences, rhat = _diagnostics(stuck)
    assert divergences == 0 and rhat > 1.5
    y, _ = simulate(np.random.default_rng(3), n_topics=20, n_systems=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplingWarning)
        g = bayesian_linear_model(y, backend="gibbs", draws=1000, tune=300, chains=4, progress=False, seed=0)
    assert g.divergences is None and 0.99 < g.max_rhat <= 1.01


def test_exactly_additive_scores_are_refused_and_compare_reports_the_certain_difference():
    """Scores that are exactly μ + β_j + α_i (identical runs, a run shifted by a constant) leave no residual, where
    the posterior under p(σ) ∝ 1/σ is improper: a clear error instead of a LinAlgError or NaN draws, and
    compare(test='bayes') reports the limit: P(A > B) = 1 for a constant positive difference, 1/2 for none."""
    from irmeasures_markov.comparison import compare
    from irmeasures_markov.inference._gibbs import gibbs_linear_model
    from irmeasures_markov.inference._posterior import ImproperPosteriorError
    y = np.add.outer(np.linspace(0.1, 0.9, 8), [0.0, 0.1, 0.1])
    with pytest.raises(ImproperPosteriorError, match="no residual variation"):
        gibbs_linear_model(y, progress=False)
    with pytest.raises(ValueError, match="no residual variation"):
        bayesian_linear_model(np.zeros((5, 3)), progress=False)
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "d4": 2.0}}
    cmp = compare(qrels, {"a": run, "b": dict(run)}, ["AP"], baseline="a", test="bayes")
    row = cmp.tests.iloc[0]
    assert row["statistic"] == 0.5 and row["pvalue"] == 1.0  # was P = 0, p = 0: "significant"
    from irmeasures_markov.inference import pyterrier_test
    x = np.linspace(0.1, 0.5, 6)
    assert tuple(pyterrier_test("bayes")(x + 0.05, x)) == (1.0, 0.0)
    assert tuple(pyterrier_test("bayes")(x, x)) == (0.5, 1.0)


def _paper_point(model, rng):
    """A seeded point of the model's free variables (on their sampling scale) for evaluating its log density."""
    return {name: rng.normal(0.0, 0.3, np.shape(value)) for name, value in model.initial_point().items()}


@pytest.mark.parametrize("user", ["precision", "rbp"])
def test_paper_variant_likelihood_by_hand(user):
    """variant='paper' on a 2 topics × 2 systems × 3 ranks table: the model's likelihood term equals
    Σ_ijk w_k [x log p + (1 − x) log(1 − p)] computed by hand with the paper's p_k (1, 1, 1 for precision;
    0.2, 0.16, 0.128 for RBP θ = 0.8), p_ij = logistic(μ + β_j + α_i + σ z_ij); every scale's prior is flat
    on log σ within the bounds; and the package's weights are the effective-sample-size rescaling."""
    from irmeasures_markov.inference._bayes import JEFFREYS_BOUNDS, direct_model, direct_model_weights
    x = np.array([[[1, 0, 1], [0, 0, 1]], [[1, 1, 1], [0, 1, 0]]], dtype=float)
    w = {"precision": [1.0, 1.0, 1.0], "rbp": [0.2, 0.16, 0.128]}[user]
    np.testing.assert_allclose(direct_model_weights(3, user, 0.8, "paper"), w, rtol=1e-12)
    pk = {"precision": np.full(3, 1 / 3), "rbp": np.array([0.2, 0.16, 0.128])}[user]
    ess = pk.sum() ** 2 / (pk ** 2).sum()
    np.testing.assert_allclose(direct_model_weights(3, user, 0.8), pk / pk.sum() * ess, rtol=1e-12)
    model = direct_model(x, user=user, theta=0.8, variant="paper")
    names = ["mu", "system", "topic", "sigma", "z_cell", "p"]
    # the deterministics as functions of the free variables' values (model[n] alone would draw from the prior)
    outs = model.replace_rvs_by_values([model[n] for n in names])
    f = model.compile_fn(outs + [model.logp(vars=model.potentials)], inputs=model.value_vars,
                         on_unused_input="ignore", point_fn=True)
    for seed in range(3):
        mu, beta, alpha, sigma, z, p, loglik = f(_paper_point(model, np.random.default_rng(seed)))
        by_hand = 1 / (1 + np.exp(-(mu + beta[None, :] + alpha[:, None] + sigma * z)))
        np.testing.assert_allclose(p, by_hand, rtol=1e-9)
        ll = sum(w[k] * (x[i, j, k] * np.log(by_hand[i, j]) + (1 - x[i, j, k]) * np.log(1 - by_hand[i, j]))
                 for i in range(2) for j in range(2) for k in range(3))
        assert float(loglik) == pytest.approx(ll, rel=1e-9)
    # p(σ) ∝ 1/σ on the bounds: log σ uniform, density 1 / log(high / low) whatever the value
    flat = -np.log(np.log(JEFFREYS_BOUNDS[1] / JEFFREYS_BOUNDS[0]))
    for scale in ("log_sigma", "log_sigma_int", "log_sigma_system", "log_sigma_topic"):
        g = model.compile_fn(model.logp(vars=[model[scale]], jacobian=False), inputs=model.value_vars,
                             on_unused_input="ignore", point_fn=True)
        for seed in range(3):
            assert float(g(_paper_point(model, np.random.default_rng(seed)))) == pytest.approx(flat, rel=1e-9)


def test_paper_variant_recovers_known_probabilities():
    """Judgments simulated from the paper's model (12 topics × 4 systems × 40 ranks, known μ, β, α and latent
    σ): variant='paper' recovers the true p_ij (mean absolute error below 0.05, about the binomial standard
    error √(p(1−p)/40) ≈ 0.07 shrunk by the model; 95% intervals covering at least 85% of the 48 cells) and
    orders the systems as simulated."""
    rng = np.random.default_rng(12)
    beta = np.array([-1.0, -0.3, 0.3, 1.0])
    alpha = rng.normal(0, 0.7, 12)
    y = -0.5 + beta[None, :] + alpha[:, None] + rng.normal(0, 0.3, (12, 4))
    p_true = 1 / (1 + np.exp(-y))
    x = (rng.random((12, 4, 40)) < p_true[..., None]).astype(float)
    res = direct_relevance_model(x, variant="paper", seed=0, **dict(FAST, draws=500, tune=500))
    assert np.mean(np.abs(res.cell_estimates - p_true)) < 0.05
    lo, hi = res.cell_intervals
    assert np.mean((lo <= p_true) & (p_true <= hi)) >= 0.85
    assert res.prob_better("system3", "system0") > 0.99 and res.prob_better("system2", "system1") > 0.9
    # the RBP reading: p_ij still tracks the RBP of each cell (normalised over the depth), if less closely
    w = rank_weights(40, "rbp", 0.8)
    rbp = np.tensordot(x, w, axes=([2], [0])) / w.sum()
    res_rbp = direct_relevance_model(x, variant="paper", user="rbp", seed=0, **FAST)
    # one judgment's worth per cell (the weights add up to 1 − 0.8⁴⁰): p_ij leans on the additive model (0.64 here)
    assert np.corrcoef(res_rbp.cell_estimates.ravel(), rbp.ravel())[0, 1] > 0.5


def test_default_direct_model_is_the_package_variant():
    """The default is variant='package' draw for draw (the model every earlier release fitted: half-Cauchy
    scales, μ ~ N(0, 10²), weights rescaled to the effective sample size); bad variants and bounds are refused."""
    rng = np.random.default_rng(4)
    x = (rng.random((4, 3, 5)) < 0.4).astype(float)
    tiny = dict(FAST, draws=30, tune=30)
    default = direct_relevance_model(x, user="rbp", seed=3, **tiny)
    package = direct_relevance_model(x, user="rbp", seed=3, variant="package", jeffreys_bounds=(1e-6, 1e6), **tiny)
    np.testing.assert_array_equal(default.system_effects, package.system_effects)
    np.testing.assert_array_equal(default.cell_estimates, package.cell_estimates)
    assert {"sigma_system", "sigma_topic", "sigma"} <= set(default.idata.posterior.data_vars)
    assert "sigma_int" not in default.idata.posterior
    with pytest.raises(ValueError, match="variant must be one of"):
        direct_relevance_model(x, variant="jags", **tiny)
    with pytest.raises(ValueError, match="jeffreys_bounds"):
        direct_relevance_model(x, variant="paper", jeffreys_bounds=(1.0, 0.1), **tiny)


@pytest.mark.parametrize(("target_accept", "hint"), [(None, r"raise target_accept \(try 0.99\)"),
                                                     (0.9, r"it is 0.9; try 0.99"),
                                                     (0.99, r"already 0.99: reparameterise")])
def test_divergence_hint_fits_the_target_accept_in_use(target_accept, hint):
    """The warning never tells a user at target_accept 0.99 to try 0.99."""
    import arviz as az

    from irmeasures_markov.inference import SamplingWarning
    from irmeasures_markov.inference._posterior import sampling_diagnostics
    diverging = np.zeros((4, 200), dtype=bool)
    diverging[0, :3] = True
    fit = az.from_dict(posterior={"x": np.random.default_rng(0).normal(size=(4, 200))},
                       sample_stats={"diverging": diverging})
    with pytest.warns(SamplingWarning, match=hint):
        sampling_diagnostics(fit, target_accept=target_accept)
