"""Issue 27: splits by query, and the click metrics (held-out LL/session, click perplexity) on every report row.

Click models are stood in by small objects with the ClickModelFit interface, so these tests check the report
itself; the click models are tested with the click models.
"""
import json
import math

import numpy as np
import pytest

from irmeasures_markov.calibration import ClickLog, FitReport, Session, fit, load_fit, save_fit
from irmeasures_markov.calibration import _report as report_mod
from irmeasures_markov.calibration._click_metrics import click_vector
from irmeasures_markov.calibration._logs import split_by_query, split_log
from irmeasures_markov.calibration._report import RankCTR


def _log(n_sessions=1200, n_queries=40, n_docs=6, seed=3):
    """Sessions of many queries (a skewed query mix), clicks from a position-based model with per-document
    attractiveness."""
    rng = np.random.default_rng(seed)
    exam = 0.9 ** np.arange(n_docs)
    attract = rng.uniform(0.05, 0.7, size=(n_queries, n_docs))
    weights = rng.dirichlet(np.ones(n_queries) * 0.7)
    sessions = []
    for i in range(n_sessions):
        q = int(rng.choice(n_queries, p=weights))
        c = rng.random(n_docs) < exam * attract[q]
        sessions.append(Session(f"q{q}", tuple(f"q{q}d{r}" for r in range(n_docs)),
                                np.flatnonzero(c).astype(np.int64) + 1, session_id=str(i)))
    return ClickLog(sessions, "simulated PBM", "test")


LOG = _log()


# -- splits ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 7])
def test_split_by_query_keeps_each_query_on_one_side(seed):
    train, test = split_log(LOG, 0.3, seed=seed)
    assert {s.query_id for s in train}.isdisjoint({s.query_id for s in test})
    assert len(train) + len(test) == len(LOG) and len(test) > 0 and len(train) > 0
    ids = sorted(int(s.session_id) for s in list(train) + list(test))
    assert ids == list(range(len(LOG)))
    # the test share reaches the target and overshoots by less than one query's sessions
    per_query = {q: sum(s.query_id == q for s in LOG) for q in LOG.query_ids()}
    assert round(0.3 * len(LOG)) <= len(test) < round(0.3 * len(LOG)) + max(per_query.values())


def test_split_by_query_is_seeded():
    a = split_log(LOG, 0.3, seed=5)
    b = split_log(LOG, 0.3, seed=5)
    c = split_log(LOG, 0.3, seed=6)
    ids = [[s.session_id for s in part] for part in a]
    assert ids == [[s.session_id for s in part] for part in b]
    assert ids != [[s.session_id for s in part] for part in c]


def test_split_by_sessions_is_todays_split():
    for seed in (0, 4):
        old = LOG.split(0.25, seed=seed)
        new = split_log(LOG, 0.25, by="sessions", seed=seed)
        assert [[s.session_id for s in p] for p in old] == [[s.session_id for s in p] for p in new]
    # and it does put sessions of the same query on both sides
    train, test = new
    assert {s.query_id for s in train} & {s.query_id for s in test}


def test_split_errors():
    one = ClickLog([s for s in LOG if s.query_id == LOG.sessions[0].query_id])
    with pytest.raises(ValueError, match="at least two queries"):
        split_by_query(one, 0.3)
    with pytest.raises(ValueError, match="split must be one of query, sessions"):
        split_log(LOG, 0.3, by="queries")
    with pytest.raises(ValueError, match=r"test_fraction must be in \(0, 1\)"):
        split_log(LOG, 1.0)


def test_fit_splits_by_query_and_says_so():
    rep = fit(LOG, test_split=0.3, families="carterette", bootstrap=0, seed=2)
    assert rep.log["split"] == {"kind": "query", "fraction": 0.3, "seed": 2}
    train, test = split_log(LOG, 0.3, seed=2)
    assert rep.log["n_sessions"] == len(train) and rep.log["n_heldout"] == len(test)
    assert "split by query (all sessions of a query on one side), seed 2" in str(rep)
    rep2 = fit(LOG, test_split=0.3, split="sessions", families="carterette", bootstrap=0, seed=2)
    assert rep2.log["split"]["kind"] == "sessions" and "split by session" in str(rep2)
    assert rep2.log["n_heldout"] == len(LOG.split(0.3, seed=2)[1])
    rep3 = fit(train, test=test, families="carterette", bootstrap=0)
    assert rep3.log["split"]["kind"] == "file" and "held out: the test log" in str(rep3)
    with pytest.raises(ValueError, match="`split` must be one of query, sessions"):
        fit(LOG, test_split=0.3, split="random", families="carterette", bootstrap=0)
    with pytest.raises(ValueError, match="not both"):
        fit(train, test=test, test_split=0.3, families="carterette", bootstrap=0)


# -- click metrics on every row -------------------------------------------------------------------------------------

def _perplexity_by_hand(probs_of, sessions, depth=10):
    """Per-rank 2^(-mean log2 P(C_r = c_r)) averaged over the ranks shown, written out again."""
    per_rank = []
    for r in range(depth):
        terms = []
        for s in sessions:
            if s.n_shown > r:
                p = float(probs_of(s)[r])
                c = r + 1 in set(s.clicks.tolist())
                terms.append(math.log2(p if c else 1 - p))
        if terms:
            per_rank.append(2 ** (-sum(terms) / len(terms)))
    return sum(per_rank) / len(per_rank), per_rank


class StandInPBM:
    """A click model with the ClickModelFit interface: P(click at r) = examination[r] * attractiveness[q, d]."""

    family = "clickmodel"

    def __init__(self, name, sessions):
        self.name = name
        depth = max(s.n_shown for s in sessions)
        self.exam = 0.9 ** np.arange(depth)
        shown, clicked = {}, {}
        for s in sessions:
            c = click_vector(s)
            for r, d in enumerate(s.shown):
                shown[(s.query_id, d)] = shown.get((s.query_id, d), 0) + self.exam[r]
                clicked[(s.query_id, d)] = clicked.get((s.query_id, d), 0) + c[r]
        self.attr = {k: min(0.99, (clicked[k] + 1) / (shown[k] + 2)) for k in shown}
        self.params = {"examination": self.exam.tolist()}
        self.n_params = depth + len(self.attr)
        self.n_sessions = len(sessions)
        self.loglik = float(sum(self.session_loglik(s) for s in sessions))

    def click_probabilities(self, s):
        return np.array([self.exam[r] * self.attr.get((s.query_id, d), 0.5) for r, d in enumerate(s.shown)])

    def session_loglik(self, s):
        p, c = self.click_probabilities(s), click_vector(s)
        return float(np.sum(np.where(c == 1, np.log(p), np.log1p(-p))))

    def to_dict(self):
        return {"family": self.family, "name": self.name, "params": self.params}


@pytest.fixture(scope="module")
def report():
    mp = pytest.MonkeyPatch()
    mp.setattr(report_mod, "fit_click_models", lambda train, qrels=None: [StandInPBM("PBM", list(train))])
    try:
        yield fit(LOG, test_split=0.3, families="all", bootstrap=0, seed=1)
    finally:
        mp.undo()


def test_every_row_has_the_click_metrics_of_its_model(report):
    train, test = split_log(LOG, 0.3, seed=1)
    rows = {(r["family"], r["model"]): r for r in report.rows()}
    car = report.best("carterette")
    ppl, per_rank = _perplexity_by_hand(lambda s: car.click_probabilities(s), list(test))
    row = rows[("carterette", car.model)]
    assert row["click_perplexity"] == pytest.approx(ppl, rel=1e-9)
    assert row["perplexity_per_rank"][:len(per_rank)] == pytest.approx(per_rank, rel=1e-9)
    ll = sum(car.session_loglik(s) for s in test)
    assert row["ll_per_session"] == pytest.approx(ll / len(test), rel=1e-9)
    assert car.heldout_metrics["loglik"] == pytest.approx(ll, rel=1e-9)
    assert car.train_metrics["n_sessions"] == len(train)
    # the stand-in click model and the rank-CTR baseline: the same yardstick
    pbm = report.click_models["PBM"]
    ppl, _ = _perplexity_by_hand(pbm.click_probabilities, list(test))
    assert rows[("clickmodel", "PBM")]["click_perplexity"] == pytest.approx(ppl, rel=1e-9)
    assert rows[("clickmodel", "PBM")]["heldout_loglik"] == pytest.approx(sum(pbm.session_loglik(s) for s in test))
    base = report.baselines[0]
    ppl, _ = _perplexity_by_hand(base.click_probabilities, list(test))
    assert rows[("baseline", "rank-CTR")]["click_perplexity"] == pytest.approx(ppl, rel=1e-9)
    # MP models no clicked set: its rows show "—"
    mp_rows = [r for r in report.rows() if r["family"] == "mp"]
    assert mp_rows and all(r["click_perplexity"] is None and r["ll_per_session"] is None for r in mp_rows)
    # the families' candidates first, then the click models, then the baseline
    fams = [r["family"] for r in report.rows()]
    assert fams.index("clickmodel") > max(i for i, f in enumerate(fams) if f in ("mp", "ph", "carterette"))
    assert fams[-1] == "baseline"


def test_report_text_shows_the_columns_and_rank_tables(report):
    text = str(report)
    head = text.splitlines()[0]
    assert "held-out ll" in head and "LL/session" in head and "click ppl" in head
    mp_line = next(line for line in text.splitlines() if line.startswith("mp "))
    assert mp_line.split()[-1] == "—" or "—" in mp_line
    assert "click perplexity by rank (held-out sessions)" in text
    assert "click-through rate by rank (held-out sessions): observed" in text
    assert any(line.startswith("clickmodel/PBM") for line in text.splitlines())
    assert any(line.startswith("baseline/rank-CTR") for line in text.splitlines())
    assert "split by query" in text


def test_rank_ctr_baseline_is_the_training_ctr():
    train, _ = split_log(LOG, 0.3, seed=1)
    base = RankCTR(train)
    obs = np.mean([click_vector(s) for s in train], axis=0)  # every ranking shows 6 documents
    assert base.ctr == pytest.approx(obs)
    s = train.sessions[0]
    c = click_vector(s)
    assert base.session_loglik(s) == pytest.approx(sum(math.log(p if k else 1 - p) for p, k in zip(obs, c)))


def test_fit_file_keeps_the_metrics(report, tmp_path):
    own = FitReport([f for f in report.fits if f.family != "clickmodel"], log=report.log)
    save_fit(tmp_path / "fit.json", own)
    raw = json.loads((tmp_path / "fit.json").read_text())
    assert raw["log"]["split"] == {"kind": "query", "fraction": 0.3, "seed": 1}
    back = load_fit(tmp_path / "fit.json")
    for f, g in zip(own.fits, back.fits):
        assert g.heldout_metrics == f.heldout_metrics and g.train_metrics == f.train_metrics
    car = back.best("carterette")
    assert car.heldout_metrics["perplexity"] == pytest.approx(report.best("carterette").heldout_metrics["perplexity"])
    assert set(car.heldout_metrics) >= {"loglik_per_session", "perplexity", "perplexity_per_rank", "ctr_observed",
                                        "ctr_predicted"}
    assert [f for f in back.fits if f.family == "mp"][0].heldout_metrics is None
    # the click model's row is a fit of family 'clickmodel' with its metrics, in the report's dict form too
    full = FitReport.from_dict(json.loads(json.dumps(report.to_dict())))
    (pbm,) = [f for f in full.fits if f.family == "clickmodel"]
    assert pbm.model == "PBM" and pbm.heldout_metrics == report.click_models["PBM"].heldout_metrics
    assert pbm.heldout_loglik == pytest.approx(pbm.heldout_metrics["loglik"])
    assert pbm.n_heldout == report.log["n_heldout"]
    # a report's dict form round-trips through JSON (NaN stored as null)
    again = FitReport.from_dict(json.loads(json.dumps(own.to_dict(), allow_nan=False)))
    assert [f.to_dict() for f in again.fits] == [f.to_dict() for f in own.fits]


def test_click_plot(report, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    fig = report.plot_clicks()
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert any(t.startswith("clickmodel/PBM (") for t in labels) and any("baseline/rank-CTR" in t for t in labels)
    fig.savefig(tmp_path / "clicks.png")
    with pytest.raises(ValueError, match="unknown model 'clickmodel/XYZ'"):
        report.plot_clicks(["clickmodel/XYZ"])


class Refuses(StandInPBM):
    """A click model that cannot score some session (as a walk with too many clicked ranks refuses)."""

    def session_loglik(self, s):
        if s.n_clicks > 2 and hasattr(self, "loglik"):  # fitted: scoring refuses such sessions
            raise ValueError("too many clicked ranks")
        return super().session_loglik(s)


def test_a_model_that_cannot_score_a_session_shows_a_dash_and_a_note(monkeypatch):
    monkeypatch.setattr(report_mod, "fit_click_models",
                        lambda train, qrels=None: [StandInPBM("PBM", list(train)), Refuses("DBN", list(train))])
    rep = fit(LOG, test_split=0.3, families=["carterette", "clickmodels"], bootstrap=0)
    rows = {(r["family"], r["model"]): r for r in rep.rows()}
    assert rows[("clickmodel", "DBN")]["click_perplexity"] is None
    assert rows[("clickmodel", "PBM")]["click_perplexity"] is not None
    assert "click metrics of clickmodel/DBN not computed: too many clicked ranks" in rep.notes


def test_a_click_model_row_read_back_from_a_fit_file_predicts_as_the_click_model(tmp_path):
    """A report's click-model row, saved and loaded, gives the click model's own probabilities."""
    from irmeasures_markov.calibration import load_fit, save_fit
    from irmeasures_markov.calibration._logs import make_session
    from irmeasures_markov.calibration._report import click_model_record
    from irmeasures_markov.calibration.click_models import fit_click_model

    rng = np.random.default_rng(0)
    docs = ["a", "b", "c", "d"]
    sessions = [make_session(f"q{i % 3}", docs, sorted({int(r) for r in rng.integers(1, 5, size=rng.integers(0, 3))}))
                for i in range(300)]
    for name in ("PBM", "UBM", "DBN"):
        cm = fit_click_model(name, sessions)
        path = tmp_path / f"{name}.json"
        save_fit(path, click_model_record(cm))
        row = load_fit(path).fits[0]
        for s in sessions[:5] + [make_session("new", ["x", "a", "y"], [2])]:
            assert np.allclose(row.click_probabilities(s), cm.click_probabilities(s), rtol=0, atol=1e-12)
            assert row.session_loglik(s) == pytest.approx(cm.session_loglik(s), abs=1e-12)
