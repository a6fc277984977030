"""Click models as user models of M1–M4 on TREC-8 runs (skips without the shared data).

A PBM fitted to the Yandex WSCD train log (skips without the log) and a DBN fitted with qrels evaluate three
TREC-8 runs through measure strings (``M1(dist='file:pbm.json')``, ``M2(dist='file:dbn.json')``, ...).  Every
per-query value is recomputed here by a loop over the run in trec_eval's order from the fit's parameters:
the PBM's examination probabilities (made non-increasing by pool-adjacent-violators written here, scaled to
g_1 = 1, geometric tail below rank 10) and the DBN's continuation gamma with a(g), s(g) per grade.

The Yandex sample has no relevance labels, so a DBN fitted to it has no parameters per grade and is refused
with that reason; the by-grade DBN is fitted to a log simulated from a DBN whose parameters depend on the grade.
"""
import json

import ir_measures
import numpy as np
import pytest

from irmeasures_markov.calibration import save_fit
from irmeasures_markov.calibration._logs import ClickLog, make_session
from irmeasures_markov.calibration.click_models import fit_click_model
from irmeasures_markov.testing import shared_data_dir

DATA = shared_data_dir()
LOGS = DATA / "logs" / "yandex-wscd2012-sample" if DATA is not None else None
RUNS = ("8manexT3D1N0", "CL99XT", "Dm8Nbn")


def trec_order(scores):
    return sorted(scores, key=lambda d: (scores[d], d), reverse=True)


def isotonic_decreasing(g):
    """Pool adjacent violators for a non-increasing least-squares fit (written here, independently)."""
    out = []
    for x in g:
        out.append([x, 1])
        while len(out) > 1 and out[-2][0] < out[-1][0]:
            (m2, n2), (m1, n1) = out.pop(), out.pop()
            out.append([(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2])
    return [m for m, n in out for _ in range(n)]


def per_query(measure, qrels, run):
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)], qrels, run)}


def chosen_runs(trec8):
    qrels, runs = trec8
    chosen = {name: runs[name] for name in RUNS if name in runs}
    assert len(chosen) == len(RUNS), sorted(runs)[:5]
    return qrels, chosen


@pytest.fixture(scope="module")
def yandex_train():
    if LOGS is None or not (LOGS / "train.txt").is_file():
        pytest.skip("Yandex WSCD sample not found under the shared data directory")
    from irmeasures_markov.calibration.readers import read_wscd
    return read_wscd(LOGS / "train.txt")


def test_pbm_fitted_on_yandex_evaluates_trec8(trec8, yandex_train, tmp_path):
    pbm = fit_click_model("PBM", yandex_train)
    path = tmp_path / "pbm.json"
    save_fit(path, pbm)
    g = isotonic_decreasing(json.loads(path.read_text())["fits"][0]["params"]["examination"])
    g = [x / g[0] for x in g]
    rho = g[-1] / g[-2]

    def examined(k):          # 1-based rank
        return g[k - 1] if k <= len(g) else g[-1] * rho ** (k - len(g))

    qrels, runs = chosen_runs(trec8)
    for name, run in runs.items():
        m1 = per_query(f"M1(dist='file:{path}')", qrels, run)
        m2 = per_query(f"M2(dist='file:{path}',norm=False)", qrels, run)
        rbp = per_query("M1(dist='RBP')", qrels, run)
        for q, scores in run.items():
            if q not in m1:
                continue
            rel = [qrels.get(q, {}).get(d, 0) >= 1 for d in trec_order(scores)]
            want1 = sum(examined(k) - examined(k + 1) for k, r in enumerate(rel, 1) if r)
            want2 = sum(examined(k) for k, r in enumerate(rel, 1) if r)
            assert m1[q] == pytest.approx(want1, rel=1e-9, abs=1e-15), (name, q)
            assert m2[q] == pytest.approx(want2, rel=1e-9, abs=1e-15), (name, q)
        assert len(m1) == 50
        assert any(abs(m1[q] - rbp[q]) > 1e-3 for q in m1)       # not RBP's distribution under another name


def test_dbn_fitted_on_yandex_has_no_grades(yandex_train, tmp_path, trec8):
    dbn = fit_click_model("DBN", yandex_train, iterations=5)
    path = tmp_path / "dbn.json"
    save_fit(path, dbn)
    qrels, runs = chosen_runs(trec8)
    with pytest.raises(ValueError, match=r"click model \(DBN\) is not a user model"):
        per_query(f"M1(dist='file:{path}')", qrels, next(iter(runs.values())))


def simulated_dbn_log(n_sessions=4000, seed=11):
    """Sessions of a DBN user: a(g), s(g) by grade (0, 1), continuation 0.8; qrels of the simulated documents."""
    rng = np.random.default_rng(seed)
    a, s, gamma = {0: 0.25, 1: 0.7}, {0: 0.15, 1: 0.6}, 0.8
    qrels = {f"q{q}": {f"q{q}-d{k}": int(rng.random() < 0.4) for k in range(10)} for q in range(20)}
    sessions = []
    for i in range(n_sessions):
        q = f"q{rng.integers(20)}"
        shown = list(rng.permutation(sorted(qrels[q])))
        clicks = []
        for r, d in enumerate(shown, 1):
            g = qrels[q][d]
            if rng.random() < a[g]:
                clicks.append(r)
                if rng.random() < s[g]:
                    break
            if rng.random() >= gamma:
                break
        sessions.append(make_session(q, shown, clicks, session_id=str(i)))
    return ClickLog(sessions), qrels


def test_dbn_with_grades_evaluates_trec8(trec8, tmp_path):
    log, log_qrels = simulated_dbn_log()
    dbn = fit_click_model("DBN", log, qrels=log_qrels)
    path = tmp_path / "dbn.json"
    save_fit(path, dbn)
    p = json.loads(path.read_text())["fits"][0]["params"]
    gamma = p["continuation"]
    a = {int(k): v for k, v in p["attractiveness_by_grade"].items()}
    s = {int(k): v for k, v in p["satisfaction_by_grade"].items()}
    assert 0.7 < gamma < 0.9 and a[1] > a[0] and s[1] > s[0]          # the simulated user, roughly
    stop = {g: 1 - gamma * (1 - a[g] * s[g]) for g in a}
    qrels, runs = chosen_runs(trec8)
    for name, run in runs.items():
        got = {m: per_query(f"{m}(dist='file:{path}')", qrels, run) for m in ("M1", "M2", "M3", "M4")}
        for q, scores in run.items():
            if q not in got["M1"]:
                continue
            reach, want, seen = 1.0, dict.fromkeys(got, 0.0), 0
            for k, d in enumerate(trec_order(scores), 1):
                g = min(max(qrels.get(q, {}).get(d, 0), 0), 1)
                stop_k = reach * stop[g]
                seen += g >= 1
                want["M1"] += stop_k * (g >= 1)
                want["M2"] += reach * (g >= 1)
                want["M3"] += stop_k / k
                want["M4"] += stop_k * seen / k
                reach *= 1 - stop[g]
            for m in got:
                assert got[m][q] == pytest.approx(want[m], rel=1e-9, abs=1e-15), (name, q, m)
        assert len(got["M1"]) == 50
