"""Click probabilities and click-vector likelihoods of the fitted user models (calibration/_result.py).

Every family with clicks: on rankings of 4 documents the 16 click vectors' probabilities sum to 1 and their
marginals are ``click_probabilities``; the probabilities equal an independent computation (the walk over
(rank, clicked set) states for a user who goes back; the fit's own likelihood for forward readers); perplexity
recomputed by hand matches ``click_metrics``; a saved and loaded fit predicts the same."""
import itertools
import math

import numpy as np
import pytest

from irmeasures_markov.calibration import FamilyFit, fit, load_fit, save_fit, simulate_ph
from irmeasures_markov.calibration._click_metrics import click_metrics, click_vector
from irmeasures_markov.calibration._logs import ClickLog, make_session
from irmeasures_markov.calibration._result import walk_click_vector_probability
from irmeasures_markov.calibration._walk import click_probability_by_rank, walk_data, walk_loglik

SHOWN = ["d1", "d2", "d3", "d4"]
QRELS = {"q": {"d2": 1, "d4": 2}}

#: (family, params) of every kind of user model with clicks
MODELS = [
    ("ph", {"browse": "DFBM", "p": 1.0, "q": 0.0, "gamma": 0.35}),
    ("ph", {"browse": "SFBM", "p": 0.7, "q": 0.0, "gamma": 0.4}),
    ("ph", {"browse": "RWBM", "p": 0.55, "q": 0.3, "gamma": 0.45}),
    ("ph", {"browse": "RWBM", "p": 0.5, "q": 0.2, "p_rel": 0.3, "q_rel": 0.5, "gamma_rel": 0.7,
            "gamma_nonrel": 0.2}),
    ("carterette", {"dist": "RBP", "theta": 0.8, "gamma": 0.3}),
    ("carterette", {"dist": "DCG", "gamma": 0.5}),
    ("carterette", {"dist": "RR", "gamma_rel": 0.6, "gamma_nonrel": 0.25}),
    ("carterette", {"dist": "empirical", "continuation": [0.9, 0.5], "continue_1": 0.9, "continue_2": 0.5,
                    "gamma": 0.4}),
    ("carterette", {"dist": "ERR", "theta": 0.5, "gamma_rel": 0.8, "gamma_nonrel": 0.3}),
    ("carterette", {"dist": "AP", "gamma_rel": 0.8, "gamma_nonrel": 0.3}),
    ("carterette", {"dist": "RRR", "gamma_rel": 0.8, "gamma_nonrel": 0.3}),
    ("tbg", {"p_continue": 0.75, "pc_rel": 0.64, "pc_nonrel": 0.39, "halflife": 200.0}),
]
IDS = [f"{fam}-{p.get('browse') or p.get('dist') or 'clicks'}-{'rel' if 'gamma_rel' in p or fam == 'tbg' else ''}"
       for fam, p in MODELS]


def _all_sessions(n=4):
    """One session per click vector of a ranking of n documents (clicks in an arbitrary order, with a repeat)."""
    out = []
    for c in itertools.product((0, 1), repeat=n):
        ranks = [r + 1 for r in range(n) if c[r]][::-1]
        out.append(make_session("q", SHOWN[:n], ranks + ranks[:1]))
    return out


@pytest.mark.parametrize("family,params", MODELS, ids=IDS)
def test_click_vectors_sum_to_one_and_their_marginals_are_the_click_probabilities(family, params):
    f = FamilyFit(family, "m", params)
    sessions = _all_sessions()
    probs = np.array([math.exp(f.session_loglik(s, qrels=QRELS)) for s in sessions])
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    marginal = sum(p * click_vector(s) for p, s in zip(probs, sessions))
    assert np.allclose(f.click_probabilities(sessions[0], qrels=QRELS), marginal, atol=1e-12)
    assert np.all(probs > 0)


def _brute_force(p, q, gamma):
    """P(clicked set) by the absorbing chain over (rank about to be visited, ranks clicked so far)."""
    T = len(p)
    p, q = np.array(p, float), np.array(q, float)
    p[-1], q[0] = 0.0, 0.0
    n_sets = 1 << T
    n = T * n_sets
    Q = np.zeros((n, n))
    R = np.zeros((n, n_sets))
    for r in range(T):
        for A in range(n_sets):
            s = r * n_sets + A
            for after, w in ((A | (1 << r), gamma[r]), (A, 1 - gamma[r])):
                if r + 1 < T:
                    Q[s, (r + 1) * n_sets + after] += w * p[r]
                if r > 0:
                    Q[s, (r - 1) * n_sets + after] += w * q[r]
                R[s, after] += w * (1 - p[r] - q[r])
    return np.linalg.solve(np.eye(n) - Q, R)[0]          # start: rank 1, nothing clicked


def test_a_user_who_goes_back_matches_the_chain_over_clicked_sets():
    """RWBM: the inclusion-exclusion formula against the absorbing chain, and the marginals against the
    fit diagnostics' click_probability_by_rank (a third computation)."""
    params = {"browse": "RWBM", "p": 0.5, "q": 0.2, "p_rel": 0.3, "q_rel": 0.5, "gamma_rel": 0.7,
              "gamma_nonrel": 0.2}
    f = FamilyFit("ph", "RWBM", params)
    rel = np.array([False, True, False, True])
    p, q, g = np.where(rel, 0.3, 0.5), np.where(rel, 0.5, 0.2), np.where(rel, 0.7, 0.2)
    brute = _brute_force(p, q, g)
    for s in _all_sessions():
        c = click_vector(s)
        mask = int(sum(1 << r for r in range(4) if c[r]))
        assert math.exp(f.session_loglik(s, qrels=QRELS)) == pytest.approx(brute[mask], rel=1e-10)
    data = walk_data(ClickLog([make_session("q", SHOWN, [])]), QRELS)
    by_rank = click_probability_by_rank(data, p, q, g)
    assert np.allclose(f.click_probabilities(make_session("q", SHOWN, []), qrels=QRELS), by_rank, atol=1e-12)


@pytest.mark.parametrize("family,params", MODELS, ids=IDS)
def test_the_inclusion_exclusion_sum_agrees_with_every_models_session_loglik(family, params):
    """The sum over subsets (written for users who go back) against the forward readers' walk likelihood
    and, for RWBM, against the same sum: one formula checked on every family's arrays."""
    f = FamilyFit(family, "m", params)
    for s in _all_sessions():
        _, p, q, g = f.click_model(QRELS).ranking(s)
        pr = walk_click_vector_probability(p, q, g, click_vector(s))
        assert math.exp(f.session_loglik(s, qrels=QRELS)) == pytest.approx(pr, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("family,params", [m for m in MODELS if m[0] != "ph"],
                         ids=[i for i, m in zip(IDS, MODELS) if m[0] != "ph"])
def test_forward_readers_session_loglik_is_the_fits_own_likelihood(family, params):
    """Carterette and TBG are fitted on the set of clicked ranks: that likelihood is the click-vector one."""
    from irmeasures_markov.calibration._carterette import continuation
    f = FamilyFit(family, "m", params)
    sessions = _all_sessions()
    data = walk_data(ClickLog(sessions), QRELS, order="set")
    if family == "tbg":
        p = np.full(data.n_ranks, params["p_continue"])
        g = np.where(data.rel, params["pc_rel"], params["pc_nonrel"])
    else:
        p = continuation(data, params["dist"], params)
        g = (np.where(data.rel, params["gamma_rel"], params["gamma_nonrel"]) if "gamma_rel" in params
             else np.full(data.n_ranks, params["gamma"]))
    own = walk_loglik(data, p, np.zeros_like(p), g)[data.inverse]
    ours = [f.session_loglik(s, qrels=QRELS) for s in sessions]
    assert np.allclose(ours, own, atol=1e-12)


def test_perplexity_by_hand_from_click_probabilities_matches_click_metrics():
    f = FamilyFit("ph", "RWBM", {"browse": "RWBM", "p": 0.6, "q": 0.25, "gamma": 0.4})
    sessions = [make_session("q", SHOWN, [2, 1]), make_session("q", SHOWN, []),
                make_session("q", SHOWN[:3], [3]), make_session("q", SHOWN, [4, 1, 4])]
    depth = 4
    m = click_metrics(f, sessions, depth=depth)
    per_rank = []
    for r in range(depth):
        logs = []
        for s in sessions:
            if r < s.n_shown:
                pr = f.click_probabilities(s)[r]
                logs.append(math.log2(pr if r + 1 in s.clicks.tolist() else 1 - pr))
        per_rank.append(2 ** (-sum(logs) / len(logs)))
    assert m.perplexity_per_rank == pytest.approx(per_rank)
    assert m.perplexity == pytest.approx(sum(per_rank) / depth)
    assert m.loglik == pytest.approx(sum(f.session_loglik(s) for s in sessions))


def test_mp_and_a_times_only_tbg_fit_say_why_they_have_no_click_probabilities():
    s = make_session("q", SHOWN, [1])
    mp = FamilyFit("mp", "GL_AD_ID", {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": 1.0})
    with pytest.raises(NotImplementedError, match="order of the moves between the clicked ranks"):
        mp.click_probabilities(s)
    with pytest.raises(NotImplementedError, match="MP models"):
        mp.session_loglik(s)
    times = FamilyFit("tbg", "times", {"halflife": 200.0, "t_summary": 4.0})
    with pytest.raises(NotImplementedError, match="time parameters"):
        times.click_probabilities(s)


def test_a_fit_with_relevance_needs_qrels():
    f = FamilyFit("carterette", "RBP", {"dist": "RBP", "theta": 0.8, "gamma_rel": 0.6, "gamma_nonrel": 0.3})
    with pytest.raises(ValueError, match="qrels"):
        f.click_probabilities(make_session("q", SHOWN, [1]))


def test_the_cache_follows_changed_parameters():
    f = FamilyFit("carterette", "RBP", {"dist": "RBP", "theta": 0.8, "gamma": 0.3})
    s = make_session("q", SHOWN, [1])
    before = f.click_probabilities(s)
    f.params["gamma"] = 0.6
    assert np.allclose(f.click_probabilities(s), 2 * before)


@pytest.mark.slow  # model fits
def test_fitted_models_saved_and_loaded_predict_the_same(tmp_path):
    log, qrels = simulate_ph(400, browse="RWBM", p=0.6, q=0.2, gamma=0.5, n_docs=4, n_queries=5, rng=3)
    report = fit(log, families=("ph", "carterette", "tbg", "mp"), qrels=qrels, bootstrap=0, progress=False)
    path = tmp_path / "fit.json"
    save_fit(path, report)
    loaded = load_fit(path)
    assert len(loaded.fits) == len(report.fits)
    checked = 0
    for a, b in zip(report.fits, loaded.fits):
        assert (a.family, a.model) == (b.family, b.model)
        if a.family == "mp" or "pc_rel" not in a.params and a.family == "tbg":
            with pytest.raises(NotImplementedError):
                b.click_probabilities(log[0], qrels=qrels)
            continue
        for s in log.sessions[:40]:
            assert np.array_equal(a.click_probabilities(s, qrels=qrels), b.click_probabilities(s, qrels=qrels))
            assert a.session_loglik(s, qrels=qrels) == b.session_loglik(s, qrels=qrels)
        checked += 1
    assert checked >= 8
    # the report's CTR diagnostics are the click probabilities averaged over the training sessions
    for key in ("ph/RWBM", "carterette/RBP", "tbg/clicks"):
        family, model = key.split("/")
        f = next(x for x in report.fits if (x.family, x.model) == (family, model))
        mean = np.mean([f.click_probabilities(s, qrels=qrels) for s in log], axis=0)
        assert np.allclose(report.diagnostics[key]["ctr_predicted"], mean, atol=1e-12), key
    # the loaded best P@H model scores the log through click_metrics
    m = click_metrics(loaded.best("ph").click_model(qrels), log, depth=4)
    assert 1.0 < m.perplexity < 2.0 and np.isfinite(m.loglik)


def test_long_rankings_cost_linear_solves_and_agree_with_the_walk_diagnostics():
    """200 documents (past the walk code's dense limit): marginals equal click_probability_by_rank's
    tridiagonal path; a session's click-vector probability lies between 0 and its sequence probability's sum."""
    T = 200
    shown = [f"d{k}" for k in range(T)]
    params = {"browse": "RWBM", "p": 0.6, "q": 0.3, "gamma": 0.3}
    f = FamilyFit("ph", "RWBM", params)
    s = make_session("q", shown, [1, 3, 2])
    data = walk_data(ClickLog([s]))
    by_rank = click_probability_by_rank(data, np.full(T, 0.6), np.full(T, 0.3), np.full(T, 0.3))
    assert np.allclose(f.click_probabilities(s), by_rank, atol=1e-12)
    own = walk_loglik(data, np.full(T, 0.6), np.full(T, 0.3), np.full(T, 0.3))[0]    # the order 1, 3, 2
    assert own < f.session_loglik(s) < 0


def test_too_many_clicked_ranks_for_a_user_who_goes_back_is_refused():
    from irmeasures_markov.calibration._result import MAX_CLICKED_RANKS
    shown = [f"d{k}" for k in range(30)]
    f = FamilyFit("ph", "RWBM", {"browse": "RWBM", "p": 0.6, "q": 0.3, "gamma": 0.3})
    with pytest.raises(ValueError, match=f"at most {MAX_CLICKED_RANKS} clicked ranks"):
        f.session_loglik(make_session("q", shown, list(range(1, MAX_CLICKED_RANKS + 2))))
    sfbm = FamilyFit("ph", "SFBM", {"browse": "SFBM", "p": 0.9, "q": 0.0, "gamma": 0.5})
    assert np.isfinite(sfbm.session_loglik(make_session("q", shown, list(range(1, 25)))))


def test_qrels_that_judge_no_shown_document_relevant_fit_and_predict():
    """The relevance-dependent click probabilities are chosen by the fitted parameters, not by whether some
    shown document is relevant (a KeyError 'gamma' before)."""
    log, _ = simulate_ph(200, browse="RWBM", p=0.6, q=0.2, gamma=0.5, n_docs=4, n_queries=3, rng=5)
    report = fit(log, families=("ph", "carterette"), qrels={"elsewhere": {"x": 1}}, bootstrap=0, progress=False)
    best = report.best("ph")
    assert "gamma_rel" in best.params
    m = click_metrics(best.click_model(qrels={}), log, depth=4)
    assert np.isfinite(m.loglik) and m.n_sessions == 200


def test_a_fit_pickles_without_its_cached_click_model():
    import pickle
    f = FamilyFit("carterette", "RBP", {"dist": "RBP", "theta": 0.8, "gamma": 0.3})
    s = make_session("q", SHOWN, [2])
    expected = f.session_loglik(s)
    g = pickle.loads(pickle.dumps(f))
    assert (g.family, g.params) == (f.family, f.params) and "_click_model_cache" not in g.__dict__
    assert g.session_loglik(s) == expected
