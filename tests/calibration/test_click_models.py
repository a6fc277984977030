"""Click models (calibration.click_models): exact click-vector probabilities, EM ascent, JSON round trip, errors.

The reference distributions come from click_model_sim.brute_force, which
enumerates every value of the hidden variables of the model's generative story,
independently of the closed forms and the EM code.
"""
import itertools
import json

import numpy as np
import pytest
from click_model_sim import brute_force, docs_of, simulate

from irmeasures_markov.calibration import click_metrics
from irmeasures_markov.calibration._logs import make_session
from irmeasures_markov.calibration.click_models import CLICK_MODELS, ClickModelFit, fit_click_model, fit_click_models


def _truth(n_queries=3, n_docs=5, seed=0):
    rng = np.random.default_rng(seed)
    attr = {(f"q{q}", d): float(rng.uniform(0.15, 0.85)) for q in range(n_queries) for d in docs_of(f"q{q}", n_docs)}
    sat = {k: float(rng.uniform(0.2, 0.8)) for k in attr}
    return attr, sat


def _ubm_exam(r, prev):
    return 0.95 * 0.8 ** (r - prev - 1) * (0.9 if prev else 1.0)


@pytest.fixture(scope="module")
def small_log():
    attr, sat = _truth(2, 4)
    return simulate("DBN", 1500, attr, sat=sat, gamma=0.8, rng=1, n_queries=2, n_docs=4)


@pytest.fixture(scope="module")
def fits(small_log):
    return {f.name: f for f in fit_click_models(small_log)}


def _ranking_params(f: ClickModelFit, shown, q="q0"):
    per = f.params["per_document"]
    a = [per["attractiveness"].get(q, {}).get(d, f.params["unseen"]["attractiveness"]) for d in shown]
    s = ([per["satisfaction"].get(q, {}).get(d, f.params["unseen"]["satisfaction"]) for d in shown]
         if "satisfaction" in per else None)
    return a, s


def _reference(f: ClickModelFit, shown):
    a, s = _ranking_params(f, shown)
    if f.name == "PBM":
        return brute_force("PBM", a, exam=f.params["examination"])
    if f.name == "UBM":
        g = f.params["examination"]
        return brute_force("UBM", a, exam=lambda r, prev: g[r - 1][prev])
    if f.name == "CM":
        return brute_force("CM", a)
    return brute_force("DBN", a, s=s, gamma=f.params["continuation"])


@pytest.mark.parametrize("name", CLICK_MODELS)
@pytest.mark.parametrize("shown", [("q0-d2", "q0-d0", "q0-d3", "q0-d1"),      # a permutation seen in training
                                   ("q0-d1", "unseen-doc", "q0-d0", "q0-d3"),  # with a pair never seen (prior)
                                   ("q0-d3", "q0-d0", "q0-d1")])               # shorter than the training depth
def test_click_vector_distribution_is_exact(fits, name, shown):
    """exp(session_loglik) over all 2^n click vectors sums to 1, equals the brute-force distribution, and
    click_probabilities are its marginals."""
    f = fits[name]
    n = len(shown)
    ref = _reference(f, shown)
    total, marg = 0.0, np.zeros(n)
    for c in itertools.product((0, 1), repeat=n):
        p = np.exp(f.session_loglik(make_session("q0", shown, [r + 1 for r in range(n) if c[r]])))
        # CM gives a second click probability 0: its log-likelihood clips at click_metrics.EPS per click
        assert p == pytest.approx(ref[c], abs=1e-9), c
        total += p
        marg += p * np.asarray(c)
    assert total == pytest.approx(1.0, abs=1e-8)
    probs = f.click_probabilities(make_session("q0", shown, []))
    assert probs.shape == (n,)
    np.testing.assert_allclose(probs, marg, atol=1e-8)
    np.testing.assert_allclose(probs, [sum(p for c, p in ref.items() if c[r]) for r in range(n)], atol=1e-12)


@pytest.mark.parametrize("name", CLICK_MODELS)
def test_ranking_longer_than_training(fits, name):
    """Ranks past the fitted depth reuse the deepest position parameters; still a distribution."""
    f = fits[name]
    shown = ("q0-d2", "q0-d0", "q0-d3", "q0-d1", "other")
    total, marg = 0.0, np.zeros(5)
    for c in itertools.product((0, 1), repeat=5):
        p = np.exp(f.session_loglik(make_session("q0", shown, [r + 1 for r in range(5) if c[r]])))
        total += p
        marg += p * np.asarray(c)
    assert total == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(f.click_probabilities(make_session("q0", shown, [])), marg, atol=1e-8)


def test_repeated_clicks_count_once(fits):
    """The click vector is 'clicked at least once': a repeated click changes nothing."""
    shown = ("q0-d2", "q0-d0", "q0-d3", "q0-d1")
    for f in fits.values():
        assert f.session_loglik(make_session("q0", shown, [2, 2, 4, 2])) == f.session_loglik(
            make_session("q0", shown, [2, 4]))


@pytest.mark.parametrize("name", ["PBM", "UBM", "DBN"])
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.0, 0.0)])
def test_em_never_decreases_the_objective(small_log, name, prior):
    """Every EM iterate's objective (log-likelihood plus log-prior; the log-likelihood itself with prior
    (0, 0)) is at least the previous one's, and the recorded final log-likelihood is the fit's."""
    f = fit_click_model(name, small_log, iterations=40, tol=0.0, prior=prior)
    assert len(f.history) == 41 and len(f.objective) == 41
    obj = np.asarray(f.objective)
    assert np.all(np.diff(obj) >= -1e-9 * np.abs(obj[1:])), np.diff(obj).min()
    if prior == (0.0, 0.0):
        np.testing.assert_array_equal(obj, f.history)
    assert f.history[-1] > f.history[0]
    assert f.loglik == f.history[-1]
    assert f.loglik == pytest.approx(sum(f.session_loglik(s) for s in small_log), rel=1e-9)


def test_em_stops_at_tolerance(small_log):
    f = fit_click_model("PBM", small_log, iterations=500, tol=1e-4)
    o, tol = f.objective, 1e-4 * len(small_log)
    assert 4 < len(o) < 501
    # the last M-step rose by less than tol per session, the one before by more
    assert o[-2] - o[-3] < tol <= o[-3] - o[-4]


@pytest.mark.parametrize("name", CLICK_MODELS)
def test_to_dict_from_dict_round_trip(fits, small_log, name):
    f = fits[name]
    g = ClickModelFit.from_dict(json.loads(json.dumps(f.to_dict())))
    assert (g.name, g.family, g.n_params, g.n_sessions, g.loglik) == (f.name, "clickmodel", f.n_params,
                                                                     f.n_sessions, f.loglik)
    extra = [make_session("q0", ("q0-d1", "new", "q9-x"), [2]), make_session("zz", ("a", "b"), [])]
    for s in list(small_log)[:50] + extra:
        assert g.session_loglik(s) == f.session_loglik(s)
        np.testing.assert_array_equal(g.click_probabilities(s), f.click_probabilities(s))


def test_unseen_value_follows_the_prior_and_survives_a_record(small_log):
    """prior (1, 3): unseen pairs get 1/4; a record keeping "unseen" under "per_document" predicts the same."""
    f = fit_click_model("DBN", small_log, prior=(1.0, 3.0), iterations=5)
    assert f.params["unseen"] == {"attractiveness": 0.25, "satisfaction": 0.25}
    s = make_session("q0", ("new-a", "new-b"), [1])
    assert f.click_probabilities(s)[0] == 0.25
    d = json.loads(json.dumps(f.to_dict()))
    d["params"]["per_document"]["unseen"] = d["params"].pop("unseen")
    g = ClickModelFit.from_dict(d)
    assert g.session_loglik(s) == f.session_loglik(s)
    np.testing.assert_array_equal(g.click_probabilities(s), f.click_probabilities(s))


def test_params_keys(fits, small_log):
    d = max(s.n_shown for s in small_log)
    assert len(fits["PBM"].params["examination"]) == d
    u = np.asarray(fits["UBM"].params["examination"])
    assert u.shape == (d, d + 1)
    assert np.all(u[np.triu_indices(d, 1, d + 1)] == 0)       # column r' >= row's rank r cannot occur
    assert 0 < fits["DBN"].params["continuation"] < 1
    assert fits["SDBN"].params["continuation"] == 1.0
    assert "examination" not in fits["CM"].params
    for f in fits.values():
        assert f.family == "clickmodel" and f.n_sessions == len(small_log)
        assert f.params["unseen"]["attractiveness"] == 0.5
        assert "attractiveness_by_grade" not in f.params
        json.dumps(f.params)


def test_click_metrics_scores_a_fit(fits, small_log):
    m = click_metrics(fits["DBN"], small_log, depth=4)
    assert m.n_sessions == len(small_log)
    assert m.loglik == pytest.approx(fits["DBN"].loglik, rel=1e-9)
    assert 1.0 < m.perplexity < 2.0


def test_sdbn_and_cm_counts():
    """SDBN: ranks down to the last click examined (all of them without a click), the last click satisfies;
    CM: ranks down to the first click examined. Prior (0, 0) leaves the plain ratios."""
    shown = ("a", "b", "c")
    log = [make_session("q", shown, [2]), make_session("q", shown, [1, 3]), make_session("q", shown, []),
           make_session("q", ("b", "a", "c"), [1, 2])]
    sd = fit_click_model("SDBN", log, prior=(0.0, 0.0)).params["per_document"]
    # a: shown-and-examined 4 times (rank 1 x3, rank 2 x1), clicked twice; b: 4 examined, 2 clicks; c: 2 / 1
    assert sd["attractiveness"]["q"] == {"a": 2 / 4, "b": 2 / 4, "c": 1 / 2}
    # satisfied: b once (session 1) of 2 clicks; c once of 1; a once (session 4) of 2
    assert sd["satisfaction"]["q"] == {"a": 1 / 2, "b": 1 / 2, "c": 1.0}
    cm = fit_click_model("CM", log, prior=(0.0, 0.0)).params["per_document"]["attractiveness"]["q"]
    # a: examined in sessions 1-3 (in 4 it is below the first click), clicked in 2; b: 1, 3, 4, clicked in 1
    # and 4; c: only in 3 (the session without a click)
    assert cm == {"a": 1 / 3, "b": 2 / 3, "c": 0 / 1}


def test_input_errors(small_log):
    with pytest.raises(ValueError, match="one of PBM, CM, UBM, DBN, SDBN; got 'XYZ'"):
        fit_click_model("XYZ", small_log)
    with pytest.raises(ValueError, match="no session"):
        fit_click_model("PBM", [])
    with pytest.raises(ValueError, match="iterations must be"):
        fit_click_model("PBM", small_log, iterations=0)
    with pytest.raises(ValueError, match="prior must be"):
        fit_click_model("PBM", small_log, prior=(-1, 1))
    with pytest.raises(ValueError, match="among PBM"):
        fit_click_models(small_log, names=("PBM", "pbm"))
    with pytest.raises(ValueError, match="lacks params"):
        ClickModelFit.from_dict({"name": "PBM", "loglik": 0, "n_params": 1, "n_sessions": 1})
