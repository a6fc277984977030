"""``irmeasures-markov fit``: reading logs, splitting, calling calibration.fit, printing, writing the fit file.

``calibration.fit`` is replaced by a stub that records its arguments and returns a stub report, so these tests
check the command line itself; the fits are tested with the fits.
"""
import gzip
import json

import numpy as np
import pytest

from irmeasures_markov import calibration
from irmeasures_markov.calibration import FamilyFit, load_fit
from irmeasures_markov.cli import main
from irmeasures_markov.cli._fit import guess_format

WSCD = "q1\td1,d2,d3 : d2 , d1; q1\td1,d2,d3 :; q1\td1,d2,d3 : d3;\nq2\td4,d5,d6 : d6; q2\td4,d5,d6 :;\n"


#: valid parameters of each family (a fit file is checked against the family's schema when read)
STUB_PARAMS = {"mp": {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": 1.0},
               "ph": {"browse": "SFBM", "p": 0.5}, "carterette": {"dist": "RBP", "theta": 0.8},
               "tbg": {"halflife": 100.0, "t_summary": 4.0}}


class StubReport:
    def __init__(self, families):
        self.fits = [FamilyFit(f, "stub", dict(STUB_PARAMS[f]), loglik=-1.0, n_sessions=3) for f in families
                     if f in STUB_PARAMS]  # 'clickmodels' (part of 'all'): no stub row

    def best(self, family):
        return next(f for f in self.fits if f.family == family)

    def __str__(self):
        return "family\tmodel\n" + "".join(f"{f.family}\t{f.model}\n" for f in self.fits)


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def fake_fit(train, *, test=None, families=("mp", "ph", "carterette", "tbg"), qrels=None, bootstrap=200,
                 seed=0, progress=False):
        seen.append(dict(train=train, test=test, families=families, qrels=qrels, bootstrap=bootstrap, seed=seed,
                         progress=progress))
        return StubReport(families)

    monkeypatch.setattr(calibration, "fit", fake_fit, raising=False)
    return seen


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "train.txt"
    p.write_text(WSCD)
    return str(p)


def test_fit_prints_the_table_and_writes_the_file(calls, log, tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert main(["fit", log, "-o", str(out), "--family", "mp,carterette", "--bootstrap", "50", "--seed", "3"]) == 0
    cap = capsys.readouterr()
    assert cap.out == "family\tmodel\nmp\tstub\ncarterette\tstub\n"
    assert f"wrote {out}" in cap.err and "MP(model='file:" in cap.err
    (call,) = calls
    assert len(call["train"]) == 5 and call["test"] is None
    assert call["families"] == ("mp", "carterette") and call["bootstrap"] == 50 and call["seed"] == 3
    assert call["progress"] is False  # stderr is not a terminal under pytest
    saved = load_fit(out)
    assert saved.families == ("mp", "carterette")
    assert saved.log["description"] == f"WSCD 2012 click log {log}" and saved.log["source"] == log


def test_test_log_and_split(calls, log, tmp_path):
    test = tmp_path / "test.jsonl.gz"
    with gzip.open(test, "wt") as fh:
        fh.write(json.dumps({"query_id": "q1", "shown": ["d1"], "clicks": [{"rank": 1}]}) + "\n")
    assert main(["fit", log, "--test", str(test), "--format", "wscd", "--no-progress"]) == 2  # --format for both
    assert main(["fit", log, "--test", str(test)]) == 0
    assert len(calls[-1]["test"]) == 1
    assert calls[-1]["families"] == ("mp", "ph", "carterette", "tbg", "clickmodels")
    assert main(["fit", log, "--test-split", "0.4", "--split", "sessions", "--seed", "1", "--progress"]) == 0
    call = calls[-1]
    assert (len(call["train"]), len(call["test"])) == (3, 2) and call["progress"] is True
    ids = {s.session_id for s in call["train"]} | {s.session_id for s in call["test"]}
    assert ids == {"1", "2", "3", "4", "5"}


def test_progress_bar(monkeypatch, log, capsys):
    """fit(progress=True) prints a line per candidate; the command line turns them into a tqdm bar."""
    import sys

    def chatty_fit(train, *, test=None, families=(), qrels=None, bootstrap=200, seed=0, progress=False):
        for f in families:
            print(f"fitted {f}/stub: loglik -1.0", file=sys.stderr)
        print("a warning", file=sys.stderr)
        return StubReport(families)

    monkeypatch.setattr(calibration, "fit", chatty_fit, raising=False)
    assert main(["fit", log, "--progress", "--family", "mp,ph"]) == 0
    err = capsys.readouterr().err
    assert "fitting: " in err and "2 candidates" in err and "ph/stub" in err
    assert "fitted mp/stub" not in err and "a warning\n" in err
    assert sys.stderr is not None and not hasattr(sys.stderr, "bar")  # restored


def test_qrels(calls, log, tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    assert main(["fit", log, "--qrels", str(q), "--family", "ph"]) == 0
    assert calls[-1]["qrels"] == {"q1": {"d1": 1, "d2": 0}}


@pytest.mark.parametrize("argv, message", [
    (["--family", "mp,xx"], "--family: xx is not a family"),
    (["--test-split", "1.5"], r"--test-split must be in \(0, 1\)"),
    (["--bootstrap", "-1"], "--bootstrap must be >= 0"),
    (["--test", "a", "--test-split", "0.3"], "not allowed with argument"),
    (["--format", "csv"], "invalid choice: 'csv'"),
])
def test_usage_errors(calls, log, capsys, argv, message):
    import re
    assert main(["fit", log, *argv]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not calls


def test_input_errors(calls, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q", "shown": ["a"]}\n{"query_id": "q", "shown": ["a"], "clicks": [{"rank": 2}]}\n')
    assert main(["fit", str(bad)]) == 2
    assert f"irmeasures-markov: error: {bad}:2: click on rank 2, outside the ranking shown" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt: no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert main(["fit", str(empty)]) == 2
    assert "the log holds no session" in capsys.readouterr().err
    assert not calls


def test_guess_format():
    assert [guess_format(n) for n in ("a.jsonl", "a.JSONL.gz", "a.tsv.xz", "train.txt", "-")] == \
        ["jsonl", "jsonl", "tsv", "wscd", "wscd"]


def test_help(capsys):
    assert main(["fit", "--help"]) == 0
    assert "--test-split" in capsys.readouterr().out


@pytest.mark.skipif(not hasattr(calibration, "fit"), reason="calibration.fit is not on this branch")
def test_real_fit_to_measure(tmp_path, capsys, monkeypatch):
    """Fit a log simulated from RBP(0.7) stopping, write the fit file, evaluate M1 with it on the command line."""
    import numpy as np

    from irmeasures_markov.calibration import ClickLog
    from irmeasures_markov.calibration.readers import make_session, write_log
    from irmeasures_markov.cli._inputs import sample_path
    rng = np.random.default_rng(0)
    sessions = []
    for i in range(3000):
        stop = min(int(rng.geometric(0.3)), 10)  # users scan ranks 1..stop, clicking each with probability 1/2
        clicks = [k for k in range(1, stop + 1) if rng.random() < 0.5] or [stop]
        sessions.append(make_session("q", [f"d{k}" for k in range(10)], clicks, session_id=str(i)))
    write_log(ClickLog(sessions, "simulated"), tmp_path / "sim.jsonl")
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "sim.jsonl", "--family", "carterette", "--bootstrap", "0", "-o", "sim.json"]) == 0
    assert "RBP" in capsys.readouterr().out
    q, r = sample_path("sample.qrels"), sample_path("sample.run")
    assert main([q, r, "M1(dist='fit:sim')", "-p", "-1"]) == 0
    value = float(capsys.readouterr().out.split("\t")[1])
    # the same fit, loaded and registered in this process, through ir_measures
    import ir_measures

    from irmeasures_markov.calibration import load_fit, register_fitted, unregister_fitted
    from irmeasures_markov.io import read_trec_qrels, read_trec_run
    register_fitted("simulated", load_fit("sim.json"))
    try:
        m = ir_measures.parse_measure("M1(dist='fit:simulated')")
        want = ir_measures.calc_aggregate([m], read_trec_qrels(q), read_trec_run(r))[m]
    finally:
        unregister_fitted("simulated")
    assert 0 < value < 1 and value == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the real fit: what is fitted, what is not, and what the command says about it (issue #24 items 10, 14)
# ---------------------------------------------------------------------------------------------

ONE_DOC = "q1\td1 : d1; q1\td1 :; q1\td1 : d1; q2\td2 :; q2\td2 : d2;\n"


def test_one_document_rankings_fit_what_can_be_fitted(tmp_path, capsys):
    """Every ranking shows one document: only the click probability can be fitted; no internal error."""
    p = tmp_path / "one.txt"
    p.write_text(ONE_DOC)
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--bootstrap", "0", "-o", str(out), "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert "internal error" not in cap.err
    assert "ph: every ranking shown has one document" in cap.out and "(SFBM and RWBM left out)" in cap.out
    assert "carterette: every ranking shown has one document" in cap.out
    saved = load_fit(out)
    assert saved.families == ("ph", "carterette", "clickmodel")  # 'all' includes the click models
    models = {f.model for f in saved.fits}
    assert {"SFBM", "RWBM", "RBP", "empirical"}.isdisjoint(models) and {"DFBM", "DCG"} <= models
    assert saved.best("ph").params["gamma"] == pytest.approx(3 / 5, abs=1e-6)   # 3 clicks in 5 sessions
    assert any("one document" in n for n in saved.notes)


def test_nothing_fitted_exits_2_and_says_why(tmp_path, capsys):
    p = tmp_path / "log.txt"
    p.write_text(WSCD)
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--family", "tbg", "--bootstrap", "0", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nothing could be fitted (tbg)" in err and "need qrels" in err and "no click timestamps" in err
    assert not out.exists()
    p.write_text("q1\td1,d2 : d1; q1\td1,d2 : d2 , d2;\n")
    assert main(["fit", str(p), "--family", "mp", "--bootstrap", "0"]) == 2
    assert "no session clicks two different ranks" in capsys.readouterr().err


def test_advice_names_only_the_families_in_the_file(tmp_path, capsys):
    p = tmp_path / "log.txt"
    p.write_text(WSCD)
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--family", "ph,tbg", "--bootstrap", "0", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("# wrote")]
    assert f"PH(browse='file:{out}')" in line and "TBG(" not in line and "(no tbg fit in it)" in line
    assert load_fit(out).families == ("ph",)


def test_dropped_clicks_are_reported_and_stored(tmp_path, capsys):
    """Clicks on documents that were not shown: counted on standard error and in the fit file's log."""
    p = tmp_path / "log.txt"
    p.write_text("q1\td1,d2,d3 : d2 , dX , d1; q1\td1,d2,d3 : dY; q1\td1,d2,d3 : d3;\n")
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--family", "ph", "--bootstrap", "0", "-o", str(out)]) == 0
    assert f"# {p}: 2 clicks on documents not in the ranking shown dropped" in capsys.readouterr().err
    assert load_fit(out).log["dropped_clicks"] == 2
    # a split counts the dropped clicks of each part's own sessions
    assert main(["fit", str(p), "--family", "ph", "--bootstrap", "0", "--test-split", "0.34", "--split", "sessions",
                 "--seed", "0", "-o", str(out)]) == 0
    log = load_fit(out).log
    assert log["dropped_clicks"] + log["heldout_dropped_clicks"] == 2 and log["n_heldout"] == 1


def test_no_start_values_stored_for_impossible_models(tmp_path, capsys):
    """Backward clicks: DFBM and SFBM give them probability 0; their start values are no estimate."""
    from irmeasures_markov.calibration import fit as real_fit
    from irmeasures_markov.calibration.readers import read_wscd
    p = tmp_path / "log.txt"
    p.write_text("q1\td1,d2,d3 : d3 , d1; q1\td1,d2,d3 : d2; q1\td1,d2,d3 :;\n")
    report = real_fit(read_wscd(str(p)), families=("ph",), bootstrap=0)
    assert {f.model for f in report.unfitted} == {"DFBM", "SFBM", "SFBM(p=0.8)", "SFBM(p=0.5)"}
    assert all(np.isfinite(f.loglik) for f in report.fits)
    sfbm = next(f for f in report.unfitted if f.model == "SFBM")
    assert "p" not in sfbm.params and "gamma" not in sfbm.params and sfbm.heldout_loglik is None
    assert any("DFBM, SFBM" in n and "probability 0" in n for n in report.notes)
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--family", "ph", "--bootstrap", "0", "-o", str(out)]) == 0
    assert "no estimate" in capsys.readouterr().out           # the table still lists them
    assert {f.model for f in load_fit(out).fits} == {"RWBM", "RWBM(p=0.5,q=0.25)"}


def test_time_parameters_the_log_cannot_estimate_are_not_stored(tmp_path, capsys):
    """Timestamps but no observed session end: the half-life is infinite, so it is noted, not written."""
    p = tmp_path / "log.jsonl"
    rows = [{"query_id": "q1", "shown": ["a", "b", "c"],
             "clicks": [{"rank": 1, "time": 1.0, "dwell": 5.0}, {"rank": 3, "time": 10.0}]},
            {"query_id": "q1", "shown": ["a", "b", "c"], "clicks": [{"rank": 2, "time": 4.0}]}]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "fit.json"
    assert main(["fit", str(p), "--family", "tbg", "--bootstrap", "0", "-o", str(out)]) == 0
    assert "tbg: halflife not fitted: no session has an observed end" in capsys.readouterr().out
    saved = load_fit(out)
    # summary time: 1 s to rank 1, then 10 - 1 - 5 = 4 s for 2 ranks; 4 s to rank 2: 9 s / 5 ranks
    assert saved.best("tbg").params == {"t_summary": pytest.approx(9 / 5)}
    assert "halflife" not in json.loads(out.read_text())["fits"][0]["params"]
