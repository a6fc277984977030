"""Bayesian models (PyMC): recovery of known effects, coverage, agreement with the t-test, direct model."""
import numpy as np
import pytest
from scipy import stats

pm = pytest.importorskip("pymc", reason='PyMC not installed: pip install "irmeasures-markov[bayes]"')

from irmeasures_markov.inference import paired_t_test  # noqa: E402
from irmeasures_markov.inference.bayes import (bayesian_linear_model, direct_relevance_model,  # noqa: E402
                                               fit_linear_model, rank_weights)

FAST = dict(draws=300, tune=300, chains=2, progress=False, cores=1)
# the fits here are kept small for speed, so their R-hat is often above 1.01: the SamplingWarning
# that says so is tested on its own below
pytestmark = pytest.mark.filterwarnings("ignore::irmeasures_markov.inference.bayes.SamplingWarning")


def simulate(rng, n_topics=25, n_systems=6, sd_run=0.06, sd_topic=0.15, sd=0.07):
    beta = rng.normal(0, sd_run, n_systems)
    alpha = rng.normal(0, sd_topic, n_topics)
    y = 0.4 + alpha[:, None] + beta[None, :] + rng.normal(0, sd, (n_topics, n_systems))
    return y, beta


def centred(res):
    return res.system_effects - res.system_effects.mean(axis=1, keepdims=True)


def test_gibbs_sampler_agrees_with_pymc():
    """The conjugate Gibbs sampler and PyMC's NUTS give the same posterior of the system effects."""
    rng = np.random.default_rng(0)
    y, _ = simulate(rng, n_topics=20, n_systems=5)
    g = bayesian_linear_model(y, backend="gibbs", draws=4000, tune=500, chains=4, progress=False, seed=1)
    p = bayesian_linear_model(y, seed=1, **FAST)
    cg, cp = centred(g), centred(p)
    se = np.sqrt(cg.var(axis=0) / 1000 + cp.var(axis=0) / 200)  # generous effective sample sizes
    assert np.all(np.abs(cg.mean(axis=0) - cp.mean(axis=0)) < 4 * se + 1e-4)
    np.testing.assert_allclose(cg.std(axis=0), cp.std(axis=0), rtol=0.2)
    pg, pp = g.prob_better_matrix(), p.prob_better_matrix()
    assert np.max(np.abs(pg - pp)) < 0.1


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
                bayesian_linear_model(y, seed=1, **FAST)):
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
    tiny = dict(FAST, draws=50, tune=50)
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
    assert np.corrcoef(res_rbp.cell_estimates.ravel(), rbp.ravel())[0, 1] > 0.8
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
        res = bayesian_linear_model(y, seed=rep, **dict(FAST, draws=200, tune=200))
        lo, hi = np.quantile(centred(res), [0.05, 0.95], axis=0)
        truth = beta - beta.mean()
        covered += int(np.sum((lo <= truth) & (truth <= hi)))
        total += truth.size
    rate = covered / total
    # 120 intervals (binomial s.e. 2.7 points, more as they are correlated within a simulation; 0.875 observed)
    assert 0.80 <= rate <= 0.97, rate


def three_runs_of_the_sample():
    """AP of three runs on the bundled sample (10 topics): the sample run and two noisier versions of it."""
    import ir_measures
    from importlib import resources
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
    from irmeasures_markov.inference.bayes import SamplingWarning
    ap = three_runs_of_the_sample()
    with pytest.warns(SamplingWarning, match=r"divergent transitions.*target_accept") as record:
        res = bayesian_linear_model(ap, seed=0, draws=200, tune=200, chains=2, progress=False, cores=1)
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
    from irmeasures_markov.inference.bayes import SamplingWarning, _diagnostics
    import arviz as az
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
