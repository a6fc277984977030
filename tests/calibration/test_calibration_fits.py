"""Calibration fits: parameter recovery on simulated logs, model selection, report and measure parameters.

Recovery: 20 seeds of 10,000 simulated sessions per family; the 95% intervals
must cover the generating value in >= 90% of seeds (18 of 20) and held-out
likelihood must pick the generating model in >= 95% (19 of 20).  The
simulators walk users step by step (calibration.simulate_ph, tests/user_model_sim.py), independently of the
closed-form likelihoods they test.
"""
import json

import numpy as np
import pytest
import user_model_sim as sim

from irmeasures_markov.calibration import FitReport, fit, simulate_ph
from irmeasures_markov.calibration import _carterette as cart
from irmeasures_markov.calibration import _mp as mp
from irmeasures_markov.calibration import _ph as ph
from irmeasures_markov.calibration._report import fit_candidate
from irmeasures_markov.calibration._walk import walk_data, walk_loglik

SEEDS = range(20)
N = 10_000


def _covers(fit_, name, truth):
    lo, hi = fit_.intervals[name]
    return lo <= truth <= hi


def _near(fit_, name, truth, z=3.3):
    """Single-seed check: within z standard errors (the 95% interval is about 2 x 1.96 of them)."""
    lo, hi = fit_.intervals[name]
    return abs(fit_.params[name] - truth) <= z * (hi - lo) / (2 * 1.96)


# ---------------------------------------------------------------------------------------------
# recovery
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow  # model fits on large simulated logs
def test_ph_rwbm_recovery_and_selection():
    cover = {"p": 0, "q": 0, "gamma": 0}
    picked = 0
    cands = {c.name: c for c in ph.candidates(False)}
    for seed in SEEDS:
        truth = {"p": 0.55 + 0.01 * (seed % 5), "q": 0.2, "gamma": 0.35}
        log, _ = simulate_ph(N, browse="RWBM", p=truth["p"], q=truth["q"], gamma=truth["gamma"], rng=seed)
        test, _ = simulate_ph(N // 2, browse="RWBM", p=truth["p"], q=truth["q"], gamma=truth["gamma"],
                                  rng=1000 + seed)
        tr, te = walk_data(log), walk_data(test)
        fits = {n: fit_candidate("ph", c, tr, te, bootstrap=0, rng=np.random.default_rng(seed))
                for n, c in cands.items() if n in ("RWBM", "SFBM", "RWBM(p=0.5,q=0.25)")}
        f = fits["RWBM"]
        for k in cover:
            cover[k] += _covers(f, k, truth[k])
        picked += max(fits.values(), key=lambda x: x.heldout_loglik).model == "RWBM"
    assert all(v >= 18 for v in cover.values()), cover
    assert picked >= 19


@pytest.mark.slow  # model fits on large simulated logs
def test_stopping_recovery_and_selection():
    """RBP stopping with theta; selection among the parametric distributions (the empirical one nests them)."""
    cover_t = cover_g = 0
    picked = 0
    cands = [c for c in cart.candidates(False) if c.name in ("RBP", "DCG", "RR")]
    for seed in SEEDS:
        theta = 0.6 + 0.01 * (seed % 7)
        P = (1 - theta) * theta ** np.arange(10)
        log = sim.simulate_stopping(N, P, gamma=0.4, rng=seed)
        test = sim.simulate_stopping(N // 2, P, gamma=0.4, rng=500 + seed)
        tr, te = walk_data(log, order="set"), walk_data(test, order="set")
        # this family's intervals are the bootstrap ones (200 replicates), the others' Wald
        fits = [fit_candidate("carterette", c, tr, te, bootstrap=200, rng=np.random.default_rng(seed))
                for c in cands]
        f = fits[0]
        cover_t += _covers(f, "theta", theta)
        cover_g += _covers(f, "gamma", 0.4)
        picked += max(fits, key=lambda x: x.heldout_loglik).model == "RBP"
    assert cover_t >= 18 and cover_g >= 18, (cover_t, cover_g)
    assert picked >= 19


@pytest.mark.slow  # model fits on large simulated logs
def test_mp_decay_recovery_and_selection():
    cover = 0
    picked = 0
    # the closest competitors on these logs (the LID kernel, and the chain on the clicked ranks only)
    names = ("GL_AD_ID", "GL_AD_LID", "GL_OR_ID")
    cands = [c for c in mp.candidates(10) if c.name in tuple(f"{m}(decay)" for m in names)]
    for seed in SEEDS:
        decay = 1.2 + 0.05 * (seed % 4)
        log = sim.simulate_mp(N, model="GL_AD_ID", decay=decay, rng=seed)
        test = sim.simulate_mp(N, model="GL_AD_ID", decay=decay, rng=700 + seed)
        tr, te = mp.MPData(log), mp.MPData(test)
        fits = [fit_candidate("mp", c, tr, te, bootstrap=0, rng=np.random.default_rng(seed)) for c in cands]
        f = fits[0]
        assert f.model == "GL_AD_ID(decay)"
        cover += _covers(f, "decay", decay)
        picked += max(fits, key=lambda x: x.heldout_loglik).model == "GL_AD_ID(decay)"
    assert cover >= 18
    assert picked >= 19


def test_bootstrap_agrees_with_wald():
    """Linearised bootstrap percentile intervals and sandwich Wald intervals: two computations, one answer."""
    log, _ = simulate_ph(N, browse="RWBM", p=0.6, q=0.2, gamma=0.4, rng=3)
    tr = walk_data(log)
    c = [c for c in ph.candidates(False) if c.name == "RWBM"][0]
    a = fit_candidate("ph", c, tr, bootstrap=0, rng=np.random.default_rng(0))
    b = fit_candidate("ph", c, tr, bootstrap=2000, rng=np.random.default_rng(1))
    for k in ("p", "q", "gamma"):
        wa = a.intervals[k][1] - a.intervals[k][0]
        wb = b.intervals[k][1] - b.intervals[k][0]
        assert abs(wa - wb) < 0.15 * wa, (k, a.intervals[k], b.intervals[k])


@pytest.mark.slow  # model fits on large simulated logs
def test_mpcont_rates_recovery():
    rates = np.linspace(1 / 20, 1 / 60, 10)
    cover = 0
    for seed in range(20):
        log, _ = simulate_ph(2000, browse="RWBM", p=0.6, q=0.2, gamma=0.5, rng=seed)
        timed = sim.simulate_times(log, rates=rates, rng=seed)
        r = mp.fit_rates(timed)
        cover += (r["rates_low"][0] <= rates[0] <= r["rates_high"][0])
    assert cover >= 18


@pytest.mark.slow  # model fits on large simulated logs
def test_tbg_times_recovery():
    from irmeasures_markov.calibration import _tbg as tbg
    cover_h = cover_t = 0
    for seed in range(20):
        log, _ = simulate_ph(2000, browse="RWBM", p=0.6, q=0.2, gamma=0.5, rng=seed)
        timed = sim.simulate_times(log, t_summary=4.0, halflife=90.0, rng=seed)
        lo, hi = tbg.fit_times(timed, bootstrap=300, rng=seed)["intervals"]["halflife"]
        cover_h += lo <= 90.0 <= hi
        # summary time from logs where leaving does not cut the clicks: a user who leaves between
        # two clicks hides the long gaps, so the estimate assumes leaving independent of scanning
        timed = sim.simulate_times(log, t_summary=4.0, rng=seed)
        lo, hi = tbg.fit_times(timed, bootstrap=300, rng=seed)["intervals"]["t_summary"]
        cover_t += lo <= 4.0 <= hi
    assert cover_h >= 18 and cover_t >= 18, (cover_h, cover_t)


# ---------------------------------------------------------------------------------------------
# likelihood identities
# ---------------------------------------------------------------------------------------------

def test_walk_likelihood_sums_to_one_over_sequences():
    """All click sequences of a 3-rank SFBM/RWBM user: probabilities (repeats merged) sum to 1."""
    from itertools import product

    from irmeasures_markov.calibration import ClickLog, Session
    seqs = [()]
    for m in range(1, 7):
        for s in product((1, 2, 3), repeat=m):
            if all(a != b for a, b in zip(s[:-1], s[1:])):
                seqs.append(s)
    log = ClickLog([Session("q", ("a", "b", "c"), np.array(s, dtype=np.int64)) for s in seqs])
    d = walk_data(log)
    for p, q in ((0.7, 0.0), (0.5, 0.3)):
        P = np.full(d.rel.shape, p)
        total = np.exp(walk_loglik(d, P, np.full_like(P, q), np.full_like(P, 0.4)))
        # sequences longer than 6 clicks carry the rest of the mass (RWBM): bounded below 1
        assert total.sum() == pytest.approx(1.0, abs=2e-3 if q else 1e-12)


def test_forward_model_cannot_explain_backward_clicks():
    from irmeasures_markov.calibration import ClickLog, Session
    log = ClickLog([Session("q", tuple("abcde"), np.array([3, 1]))])
    d = walk_data(log)
    P = np.full(d.rel.shape, 0.8)
    assert walk_loglik(d, P, np.zeros_like(P), np.full_like(P, 0.5))[0] == -np.inf


# ---------------------------------------------------------------------------------------------
# fit(), FitReport, measure parameters
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report():
    log, qrels = simulate_ph(3000, browse="RWBM", p=0.6, q=0.2, gamma=0.4, rng=11)
    test, _ = simulate_ph(1000, browse="RWBM", p=0.6, q=0.2, gamma=0.4, rng=12)
    return fit(log, test=test, qrels=qrels, bootstrap=50, seed=0)


@pytest.mark.slow  # model fits on large simulated logs
def test_report_table_frame_dict(report, tmp_path):
    text = str(report)
    assert "RWBM *" in text and "held-out" in text
    df = report.to_frame()
    assert set(df.family) == {"mp", "ph", "carterette", "tbg"}
    back = FitReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert [f.to_dict() for f in back.fits] == [f.to_dict() for f in report.fits]
    assert back.best("ph").model == report.best("ph").model == "RWBM"
    fig = report.plot()
    fig.savefig(tmp_path / "r.png")


def test_best_uses_aic_without_test():
    log, _ = simulate_ph(2000, browse="RWBM", p=0.6, q=0.2, gamma=0.4, rng=5)
    r = fit(log, families=("ph",), bootstrap=0)
    assert all(f.heldout_loglik is None for f in r.fits)
    assert r.best("ph").model == "RWBM"


@pytest.mark.slow  # model fits on large simulated logs
def test_measure_parameters(report):
    from irmeasures_markov.measures.markov_precision import markov_precision
    from irmeasures_markov.measures.stopping_time import path_at_h
    p = report.best("ph").measure_parameters()
    assert p["browse"] == "RWBM" and 0 < p["q"] < 1
    assert 0 <= path_at_h([1, 0, 1, 0, 0], **p) <= 1
    for f in report.family("mp"):
        if f.model == "GL_AD_ID(decay)":
            mpp = f.measure_parameters()
            # decay 1 is the paper's GL_AD_ID: the fitted kernel at decay 1 must give the same MP
            f1 = type(f).from_dict({**f.to_dict(), "params": {**f.params, "decay": 1.0}})
            k1 = f1.measure_parameters()["kernel"]
            rel = [1, 0, 1, 1, 0, 0, 1]
            assert markov_precision(rel, k1) == pytest.approx(markov_precision(rel, "GL_AD_ID"), rel=1e-10)
            assert mpp["states"] == "AD"
    c = [f for f in report.family("carterette") if f.model == "RBP"][0]
    sp = c.measure_parameters()["stop_probabilities"](5)
    th = c.params["theta"]
    np.testing.assert_allclose(sp, (1 - th) * th ** np.arange(5))
    t = report.best("tbg").measure_parameters()
    assert set(t) >= {"pc_rel", "pc_nonrel"}


def test_input_validation():
    log, _ = simulate_ph(100, rng=0)
    with pytest.raises(ValueError, match="unknown families"):
        fit(log, families=("xyz",))
    with pytest.raises(ValueError, match="`bootstrap`"):
        fit(log, bootstrap=-1)
    with pytest.raises(TypeError, match="ClickLog"):
        fit([1, 2])
    from irmeasures_markov.calibration import ClickLog, Session
    bad = ClickLog([Session("q7", ("a", "b"), np.array([1, 3]), session_id="s9")])
    with pytest.raises(ValueError, match="session 's9' .*rank 3"):
        fit(bad)
    with pytest.raises(TypeError, match="qrels: query 'q0' maps to a int, not a dict"):
        fit(log, qrels={"q0": 1})


def test_relevance_dependent_parameters_recovered():
    """With qrels: P@H's p_rel/q_rel and TBG's P(C|R) (one seed each, 10k sessions)."""
    from irmeasures_markov.calibration import _tbg as tbg
    log, qrels = simulate_ph(N, browse="RWBM", p=0.6, q=0.2, p_rel=0.35, q_rel=0.3, gamma=0.4, rng=21)
    c = [c for c in ph.candidates(True) if c.name == "RWBM"][0]
    f = fit_candidate("ph", c, walk_data(log, qrels), bootstrap=0)
    for k, v in (("p", 0.6), ("q", 0.2), ("p_rel", 0.35), ("q_rel", 0.3)):
        assert _near(f, k, v), (k, f.params[k], f.intervals[k])
    log, qrels = simulate_ph(N, browse="SFBM", p=0.7, q=0.0, gamma=(0.65, 0.3), rng=22)
    c = tbg.candidates()[0]
    f = fit_candidate("tbg", c, walk_data(log, qrels, order="set"), bootstrap=0)
    for k, v in (("p_continue", 0.7), ("pc_rel", 0.65), ("pc_nonrel", 0.3)):
        assert _near(f, k, v), (k, f.params[k], f.intervals[k])


def test_dynamic_stopping_matches_the_ph_users():
    """Carterette's AP stopping as continuation probabilities equals P@H's AP user (separate code)."""
    from irmeasures_markov.calibration import ClickLog, Session
    from irmeasures_markov.measures.stopping_time import browsing_model
    grades = [1, 0, 0, 1, 1, 0, 1, 0]
    shown = tuple(f"d{k}" for k in range(len(grades)))
    qrels = {"q": {d: g for d, g in zip(shown, grades)}}
    d = walk_data(ClickLog([Session("q", shown, np.array([1]))]), qrels, order="set")
    cont = cart.continuation(d, "AP", {})
    fwd = browsing_model(grades, user="AP").forward
    np.testing.assert_allclose(cont[:-1], fwd[:-1])


def test_empirical_stopping_distribution_recovered():
    P = np.array([0.3, 0.25, 0.15, 0.1, 0.08, 0.05, 0.03, 0.02, 0.01, 0.01])
    log = sim.simulate_stopping(N, P, gamma=0.5, rng=4)
    c = [c for c in cart.candidates(False) if c.name == "empirical"][0]
    f = fit_candidate("carterette", c, walk_data(log, order="set"), bootstrap=0)
    sp = f.measure_parameters()["stop_probabilities"](10)
    np.testing.assert_allclose(sp[:9], P[:9], atol=0.03)


def test_dwell_survival_diagnostic():
    """Kaplan-Meier of simulated dwells (last ones censored) follows the fitted exponential; with no
    censoring it is the empirical survival function."""
    from irmeasures_markov.calibration._mp import _dwell_survival
    log, _ = simulate_ph(3000, browse="RWBM", p=0.6, q=0.2, gamma=0.5, rng=9)
    r = mp.fit_rates(sim.simulate_times(log, rng=9))
    ds = r["dwell_survival"]
    assert np.max(np.abs(np.subtract(ds["dwell_km"], ds["dwell_fitted"]))) < 0.03
    d = np.array([3.0, 1.0, 2.0, 5.0])
    s = _dwell_survival(d, np.ones(4, dtype=bool), 1.0, points=6)
    emp = [(d > t).mean() for t in s["dwell_t"]]
    np.testing.assert_allclose(s["dwell_km"], emp, atol=1e-12)


def test_mp_likelihood_with_mixed_ranking_lengths():
    """Sessions over rankings of different lengths: the joint likelihood is the sum of the separate ones
    (the padded ranks of a short ranking are never entered)."""
    from irmeasures_markov.calibration import ClickLog
    a = sim.simulate_mp(400, n_docs=5, rng=1).sessions
    b = sim.simulate_mp(400, n_docs=10, rng=2).sessions
    for name in ("GL_AD_ID(decay)", "GL_OR_LID(decay)", "LO_OR_ID"):
        c = [c for c in mp.candidates(10) if c.name == name][0]
        th = np.array([1.3])[:len(c.x0)]
        both = c.loglik(mp.MPData(ClickLog(a + b)), th).sum()
        apart = c.loglik(mp.MPData(ClickLog(a)), th).sum() + c.loglik(mp.MPData(ClickLog(b)), th).sum()
        assert both == pytest.approx(apart, rel=1e-12) or both == apart == -np.inf


@pytest.mark.slow  # model fits on large simulated logs
@pytest.mark.parametrize("states", ["AD", "OR"])
def test_nonparametric_kernels_recovered(states):
    """Free kernels (one seed, 10k sessions): each weight within 3.3 standard errors of the truth."""
    if states == "AD":
        w = {d: s for d, s in zip(range(1, 10), [1.0, 0.4, 0.25, 0.15, 0.1, 0.08, 0.06, 0.05, 0.05])}
        weights = {**w, **{-d: v for d, v in w.items()}}
    else:
        weights = {**{d: 1.0 / d for d in range(1, 10)}, **{-d: 0.4 / d for d in range(1, 10)}}
    log = sim.simulate_mp(N, model=states, weights=weights, rng=31)
    c = [c for c in mp.candidates(10) if c.name == f"nonparametric_{states}"][0]
    f = fit_candidate("mp", c, mp.MPData(log), bootstrap=0)
    for d in (-1, 2, 3, -3) if states == "OR" else (2, 3, 4):
        est, (lo, hi) = f.params["weights"][f"{d:+d}"], f.intervals[f"weights[{d:+d}]"]
        assert abs(est - weights[d]) <= 3.3 * (hi - lo) / (2 * 1.96), (d, est, (lo, hi))


def test_nonparametric_scores_match_differences():
    """The closed-form scores of the free kernels equal central differences of the likelihood."""
    d = mp.MPData(sim.simulate_mp(2000, decay=1.3, rng=3))
    for c in (mp._nonparametric_ad(10), mp._nonparametric(10)):
        th = np.random.default_rng(0).normal(-1.0, 0.3, len(c.x0))
        h = 1e-6
        num = np.stack([(c.loglik(d, th + h * e) - c.loglik(d, th - h * e)) / (2 * h) for e in np.eye(th.size)],
                       axis=1)
        np.testing.assert_allclose(c.scores(d, th), num, atol=1e-5)
