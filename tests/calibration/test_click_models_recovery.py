"""Click models recover the parameters of simulated logs (click_model_sim.simulate walks one user at a time).

Three seeds of 20,000 sessions each (the slow tier): 3 queries x 5 documents, every session a
random permutation (so position and document effects separate).  Tolerances
are 5 binomial standard errors of the counts that inform each parameter
(``_se``): a document's examined shows for attractiveness, its clicks for
satisfaction, the shows of a rank (cell) for examination.  PBM and UBM are
identified only up to a common scale (examination x c, attractiveness / c), so
their examination is compared as ratios to the first rank's (UBM: cell (1, 0)).
SDBN's counting estimate is not consistent for a DBN user (it treats the last
click as satisfying); test_click_models.test_sdbn_and_cm_counts checks its counts.
"""
import numpy as np
import pytest
from click_model_sim import docs_of, simulate

from irmeasures_markov.calibration.click_models import fit_click_model

pytestmark = pytest.mark.slow  # model fits on large simulated logs
N = 20_000
SEEDS = (0, 1, 2)
Z = 5.0


def _truth(seed=0, n_queries=3, n_docs=5):
    rng = np.random.default_rng(100 + seed)
    attr = {(f"q{q}", d): float(rng.uniform(0.15, 0.85)) for q in range(n_queries) for d in docs_of(f"q{q}", n_docs)}
    sat = {k: float(rng.uniform(0.2, 0.8)) for k in attr}
    return attr, sat


def _se(p, n):
    return np.sqrt(np.asarray(p) * (1 - np.asarray(p)) / np.maximum(n, 1))


def _examined_shows(log, until):
    """Shows of each (query, doc) at ranks down to until(session) (the ranks known to be examined)."""
    out = {}
    for s in log:
        for d in s.shown[:until(s)]:
            out[(s.query_id, d)] = out.get((s.query_id, d), 0) + 1
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_pbm_examination_recovered(seed):
    attr, _ = _truth(seed)
    exam = np.array([1.0, 0.7, 0.5, 0.35, 0.25])
    log = simulate("PBM", N, attr, exam=exam, rng=seed)
    g = np.asarray(fit_click_model("PBM", log, iterations=400, tol=1e-7).params["examination"])
    # each rank is shown N times; the ratio to rank 1 carries both ranks' errors
    tol = Z * np.sqrt(_se(exam, N) ** 2 + (exam * _se(exam[0] * 0.5, N)) ** 2) / 0.5
    assert np.all(np.abs(g / g[0] - exam) <= tol), (g / g[0], exam, tol)


@pytest.mark.parametrize("seed", SEEDS)
def test_ubm_examination_recovered(seed):
    attr, _ = _truth(seed)

    def exam(r, prev):
        return 0.95 * 0.8 ** (r - prev - 1) * (0.9 if prev else 1.0)

    log = simulate("UBM", N, attr, exam=exam, rng=seed)
    f = fit_click_model("UBM", log, iterations=400, tol=1e-7)
    g = np.asarray(f.params["examination"])
    truth = np.array([[exam(r, p) if p < r else 0.0 for p in range(6)] for r in range(1, 6)])
    # shows of each cell (rank, previous click), from the log
    shows = np.zeros_like(truth)
    for s in log:
        prev, clicked = 0, set(s.clicks.tolist())
        for r in range(1, s.n_shown + 1):
            shows[r - 1, prev] += 1
            prev = r if r in clicked else prev
    ok = shows >= 500                         # cells seen often enough to say anything
    assert ok.sum() >= 12
    # attractiveness averages about 0.5: a cell's click rate g * a has SE ~ _se(0.5 g, n), so g's is twice it
    tol = Z * 2 * _se(0.5 * truth, shows) / truth[0, 0] + Z * 2 * _se(0.5 * truth[0, 0], N) / truth[0, 0]
    err = np.abs(g / g[0, 0] - truth / truth[0, 0])
    assert np.all(err[ok] <= tol[ok]), (err[ok].max(), tol[ok].min())


@pytest.mark.parametrize("seed", SEEDS)
def test_cm_attractiveness_recovered(seed):
    attr, _ = _truth(seed)
    log = simulate("CM", N, attr, rng=seed)
    f = fit_click_model("CM", log, prior=(0.0, 0.0))
    a = f.params["per_document"]["attractiveness"]
    n = _examined_shows(log, lambda s: int(s.clicks[0]) if s.n_clicks else s.n_shown)
    for (q, d), t in attr.items():
        assert abs(a[q][d] - t) <= Z * _se(t, n[(q, d)]), (q, d, a[q][d], t)


@pytest.mark.parametrize("seed", SEEDS)
def test_dbn_recovered(seed):
    attr, sat = _truth(seed)
    gamma = 0.85
    log = simulate("DBN", N, attr, sat=sat, gamma=gamma, rng=seed)
    f = fit_click_model("DBN", log, iterations=400, tol=1e-9, prior=(0.0, 0.0))
    # gamma: every session makes about two observed or inferred continuation steps
    assert abs(f.params["continuation"] - gamma) <= Z * _se(gamma, 2 * N)
    a, s = f.params["per_document"]["attractiveness"], f.params["per_document"]["satisfaction"]
    examined = _examined_shows(log, lambda s_: int(s_.clicks.max()) if s_.n_clicks else 1)
    clicks = {}
    for x in log:
        for r in set(x.clicks.tolist()):
            clicks[(x.query_id, x.shown[r - 1])] = clicks.get((x.query_id, x.shown[r - 1]), 0) + 1
    for k, t in attr.items():
        q, d = k
        assert abs(a[q][d] - t) <= Z * _se(t, examined[k]), ("attractiveness", k, a[q][d], t)
        assert abs(s[q][d] - sat[k]) <= Z * _se(sat[k], clicks[k]), ("satisfaction", k, s[q][d], sat[k])


def test_by_grade_parameters_recovered_and_unjudged_left_out():
    """With qrels, DBN's and CM's attractiveness (and DBN's satisfaction) tied by grade match the grade's
    generating values; an unjudged document (attractiveness 0.9) is left out of every grade."""
    grades = {0: (0.2, 0.3), 1: (0.6, 0.7)}
    qrels, attr, sat = {}, {}, {}
    for q in ("q0", "q1", "q2"):
        qrels[q] = {}
        for k, d in enumerate(docs_of(q, 5)):
            if k == 4:                                   # unjudged
                attr[(q, d)], sat[(q, d)] = 0.9, 0.5
                continue
            g = k % 2
            qrels[q][d] = g
            attr[(q, d)], sat[(q, d)] = grades[g]
    log = simulate("DBN", N, attr, sat=sat, gamma=0.9, rng=7)
    f = fit_click_model("DBN", log, qrels=qrels, iterations=300)
    ab, sb = f.params["attractiveness_by_grade"], f.params["satisfaction_by_grade"]
    assert set(ab) == set(sb) == {"0", "1"}
    # each grade pools 6 documents: about 8,000 shows examined, 1,600-4,800 clicks
    for g, (a, s) in grades.items():
        assert abs(ab[str(g)] - a) <= 0.03 and abs(sb[str(g)] - s) <= 0.04, (g, ab, sb)
    log_cm = simulate("CM", N, attr, rng=8)
    ab = fit_click_model("CM", log_cm, qrels=qrels).params["attractiveness_by_grade"]
    assert abs(ab["0"] - 0.2) <= 0.03 and abs(ab["1"] - 0.6) <= 0.03, ab
    # PBM: scale-free ratio of the grades' attractiveness
    log_pbm = simulate("PBM", N, attr, exam=[1.0, 0.7, 0.5, 0.35, 0.25], rng=9)
    ab = fit_click_model("PBM", log_pbm, qrels=qrels, iterations=300).params["attractiveness_by_grade"]
    assert abs(ab["1"] / ab["0"] - 3.0) <= 0.3, ab
