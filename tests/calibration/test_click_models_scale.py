"""A click model's stored parameters are on one scale, and they recover simulated users within 3 standard errors.

With qrels, the by-grade values are fitted on the per-document fit's position
parameters (click_models docstring), so ``examination[r-1] * attractiveness_by_grade[g]``
is the fitted P(click) of a grade-g document at rank r, and DBN's
``continuation`` goes with its a(g), s(g).  Fitted separately, PBM's two fits
landed on different scales: on a log of many queries, each seen by few users,
the product overstated the clicks by 9-16% (issue 34, item 11).  DBN is identified, so its two fits'
continuations were close on these logs; its test checks the same property.

Recovery, one seed each (test tier): PBM and DBN by grade (tests/user_model_sim.simulate_graded_clicks),
an RBP user (simulate_stopping) and a P@H walk (calibration.simulate_ph).  The
click models' standard errors are the binomial ones of the counts that inform
each parameter; the families' are those of their Wald intervals.
"""
import numpy as np
import pytest
import user_model_sim as sim

from irmeasures_markov.calibration import _carterette as cart
from irmeasures_markov.calibration import _ph as ph
from irmeasures_markov.calibration import simulate_ph
from irmeasures_markov.calibration._report import fit_candidate
from irmeasures_markov.calibration._walk import walk_data
from irmeasures_markov.calibration.click_models import _dbn as dbn
from irmeasures_markov.calibration.click_models import _examination as examination
from irmeasures_markov.calibration.click_models import fit_click_model
from irmeasures_markov.calibration.click_models._core import encode

Z = 3.0
EXAM = np.array([0.95, 0.8, 0.65, 0.55, 0.45])
ATTR = {0: 0.1, 1: 0.4, 2: 0.8}
SAT = {0: 0.2, 1: 0.4, 2: 0.7}


def _by_grade_cells(f, log, qrels):
    """The stored by-grade parameters as a per-cell attractiveness (and satisfaction) array of the log."""
    index = {(q, d): k for q, docs in qrels.items() for k, d in enumerate(docs)}
    enc = encode(list(log), index)
    grade = np.array([[qrels[s.query_id][d] for d in s.shown] for s in log])
    a = np.vectorize(lambda g: f.params["attractiveness_by_grade"][str(g)])(grade)
    s = np.vectorize(lambda g: f.params.get("satisfaction_by_grade", {}).get(str(g), 1.0))(grade)
    return enc, grade, a, s


def _observed_vs_fitted(p, enc, grade):
    """Per grade: (clicks seen, clicks the stored parameters give, their binomial standard error)."""
    return {g: (enc.clicks[grade == g].sum(), p[grade == g].sum(), np.sqrt((p * (1 - p))[grade == g].sum()))
            for g in np.unique(grade)}


def test_pbm_products_are_the_fitted_click_probabilities():
    """Many queries, few users each: examination x attractiveness_by_grade gives the clicks seen, per grade."""
    log, qrels = sim.simulate_graded_clicks(6000, "PBM", ATTR, examination=EXAM, n_queries=150, by_grade=True,
                                            rng=1)
    f = fit_click_model("PBM", log, qrels=qrels)
    enc, grade, a, _ = _by_grade_cells(f, log, qrels)
    p = examination.probabilities("PBM", np.asarray(f.params["examination"]), a, enc)
    for g, (seen, fitted, se) in _observed_vs_fitted(p, enc, grade).items():
        assert abs(seen - fitted) <= Z * se, (g, seen, fitted, se)


def test_dbn_continuation_and_by_grade_values_are_one_model():
    log, qrels = sim.simulate_graded_clicks(6000, "DBN", ATTR, satisfaction=SAT, continuation=0.8, n_queries=150,
                                            n_docs=8, by_grade=True, rng=2)
    f = fit_click_model("DBN", log, qrels=qrels)
    enc, grade, a, s = _by_grade_cells(f, log, qrels)
    p = dbn.probabilities(a, s, f.params["continuation"], enc)
    for g, (seen, fitted, se) in _observed_vs_fitted(p, enc, grade).items():
        assert abs(seen - fitted) <= Z * se, (g, seen, fitted, se)


def test_pbm_by_grade_recovered():
    """Examination as ratios to rank 1 (PBM's scale is free) and the products, the click probabilities."""
    n = 8000
    log, qrels = sim.simulate_graded_clicks(n, "PBM", ATTR, examination=EXAM, rng=3)
    f = fit_click_model("PBM", log, qrels=qrels, iterations=300, tol=1e-8, prior=(0.0, 0.0))
    g = np.asarray(f.params["examination"])
    enc, grade, _, _ = _by_grade_cells(f, log, qrels)
    click_rate = enc.clicks.mean(axis=0)            # every rank shown n times, documents in random order
    rel_se = np.sqrt((1 - click_rate) / (n * click_rate))
    truth = EXAM / EXAM[0]
    assert np.all(np.abs(g / g[0] - truth) <= Z * truth * np.hypot(rel_se, rel_se[0])), (g / g[0], truth)
    for k, a in f.params["attractiveness_by_grade"].items():
        for r in range(EXAM.size):
            t = EXAM[r] * ATTR[int(k)]
            shows = (grade[:, r] == int(k)).sum()
            assert abs(g[r] * a - t) <= Z * np.sqrt(t * (1 - t) / shows), (k, r, g[r] * a, t)


def test_dbn_by_grade_recovered():
    n, gamma = 8000, 0.8
    log, qrels = sim.simulate_graded_clicks(n, "DBN", ATTR, satisfaction=SAT, continuation=gamma, rng=4)
    f = fit_click_model("DBN", log, qrels=qrels, iterations=300, tol=1e-9, prior=(0.0, 0.0))
    enc, grade, _, _ = _by_grade_cells(f, log, qrels)
    last = enc.last_click()
    examined = np.arange(1, enc.depth + 1)[None, :] <= np.maximum(last, 1)[:, None]   # known to be examined
    # continuation: about one observed or inferred step per session
    assert abs(f.params["continuation"] - gamma) <= Z * np.sqrt(gamma * (1 - gamma) / n)
    for k, a in f.params["attractiveness_by_grade"].items():
        g = int(k)
        shows, clicks = (examined & (grade == g)).sum(), (enc.clicks[grade == g] > 0).sum()
        assert abs(a - ATTR[g]) <= Z * np.sqrt(ATTR[g] * (1 - ATTR[g]) / shows), (k, a)
        s = f.params["satisfaction_by_grade"][k]
        assert abs(s - SAT[g]) <= Z * np.sqrt(SAT[g] * (1 - SAT[g]) / clicks), (k, s)


def _near(fit_, name, truth):
    lo, hi = fit_.intervals[name]
    return abs(fit_.params[name] - truth) <= Z * (hi - lo) / (2 * 1.96)


def test_rbp_user_recovered():
    theta, gamma = 0.7, 0.4
    log = sim.simulate_stopping(4000, (1 - theta) * theta ** np.arange(10), gamma=gamma, rng=5)
    rbp = next(c for c in cart.candidates(False) if c.name == "RBP")
    f = fit_candidate("carterette", rbp, walk_data(log, order="set"))
    assert _near(f, "theta", theta) and _near(f, "gamma", gamma), (f.params, f.intervals)


def test_ph_walk_recovered():
    truth = {"p": 0.6, "q": 0.2, "gamma": 0.4}
    log, _ = simulate_ph(4000, browse="RWBM", rng=6, **truth)
    rwbm = next(c for c in ph.candidates(False) if c.name == "RWBM")
    f = fit_candidate("ph", rwbm, walk_data(log))
    assert all(_near(f, k, v) for k, v in truth.items()), (f.params, f.intervals)


@pytest.mark.parametrize("model", ["SDBN", "CM"])
def test_counting_models_by_grade_are_their_counts(model):
    """SDBN (continuation 1) and CM (none) have no position parameter to share: their by-grade values are the
    counts of the grade-tied log, as before."""
    log, qrels = sim.simulate_graded_clicks(500, "DBN", ATTR, satisfaction=SAT, rng=7)
    f = fit_click_model(model, log, qrels=qrels, prior=(0.0, 0.0))
    enc, grade, _, _ = _by_grade_cells(f, log, qrels)
    stop = enc.last_click() if model == "SDBN" else enc.first_click()
    seen = np.arange(1, enc.depth + 1)[None, :] <= np.where(stop > 0, stop, enc.lengths)[:, None]
    for k, a in f.params["attractiveness_by_grade"].items():
        cells = seen & (grade == int(k))
        assert a == pytest.approx(enc.clicks[cells].sum() / cells.sum())
