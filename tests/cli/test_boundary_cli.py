"""The command line at the boundary: every user mistake is one line on stderr and a non-zero exit, never a
traceback; output order and formats are stable.

Exceptions' wording is owned by the readers and measures, so these tests check the prefix
``irmeasures-markov: error:``, the exit status and the file (or id) named, not the rest of the message.
"""
import gzip
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import warnings

import pytest
from fake_ir_datasets import FakeDataset, FakeIrDatasets

import irmeasures_markov
from irmeasures_markov.cli import main
from irmeasures_markov.documents import _lengths as lengths_module

ROOT = pathlib.Path(__file__).resolve().parents[2]
ERROR = "irmeasures-markov: error: "
QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 a 1\nq2 0 d 2\n"
RUN = "q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 1.0 t\nq2 Q0 d 1 2.0 t\nq2 Q0 x 2 1.0 t\n"


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "t.qrels", tmp_path / "t.run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def cli(*args, stdin=None, env=None):
    """The console command in a child process: (exit status, stdout bytes, stderr text)."""
    full_env = {k: v for k, v in os.environ.items() if k != "IRMEASURES_MARKOV_DEBUG"}
    full_env.update(PYTHONPATH=str(ROOT), **(env or {}))
    p = subprocess.run([sys.executable, "-m", "irmeasures_markov.cli", *args], input=stdin, capture_output=True,
                       env=full_env, timeout=300)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def fails_cleanly(capsys, argv, *named, status=2):
    """main(argv) exits with ``status``, one error line with the prefix naming every string of ``named``."""
    assert main(argv) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert ERROR in err, err
    line = next(ln for ln in err.splitlines() if ln.startswith(ERROR))
    for text in named:
        assert text in line, (text, err)
    return err


def truncated_gz(path, text):
    data = gzip.compress(text.encode() * 50)
    path.write_bytes(data[:len(data) // 2])
    return str(path)


# --- item 11: user errors are messages, not tracebacks ------------------------------------------------------

def test_truncated_gz_run_and_qrels(files, tmp_path, capsys):
    q, r = files
    bad_run = truncated_gz(tmp_path / "cut.run.gz", RUN)
    bad_qrels = truncated_gz(tmp_path / "cut.qrels.gz", QRELS)
    fails_cleanly(capsys, [q, bad_run, "AP"], "cut.run.gz")
    fails_cleanly(capsys, [bad_qrels, r, "AP"], "cut.qrels.gz")
    fails_cleanly(capsys, ["ph-compare", q, r, bad_run], "cut.run.gz")
    fails_cleanly(capsys, ["ph-compare", bad_qrels, r, r], "cut.qrels.gz")


def test_tbg_without_lengths(files, capsys):
    fails_cleanly(capsys, [*files, "TBG"])


def test_tbg_with_an_unknown_ir_datasets_id(files, capsys):
    fails_cleanly(capsys, [*files, "TBG(lengths='irds:unknown/x')"], "unknown/x")


@pytest.fixture
def offline_irds(monkeypatch):
    """An ir_datasets whose 'fake/offline' qrels cannot be downloaded."""
    offline = FakeDataset(error=RuntimeError("All download sources failed"))
    FakeIrDatasets({"fake/offline": offline}).install(monkeypatch)


def test_ir_datasets_qrels_offline(offline_irds, files, capsys):
    fails_cleanly(capsys, ["fake/offline", files[1], "AP"], "fake/offline")
    fails_cleanly(capsys, ["fake/nothing", files[1], "AP"], "fake/nothing")


def test_ph_compare_with_a_directory_or_a_missing_file(files, tmp_path, capsys):
    q, r = files
    fails_cleanly(capsys, ["ph-compare", q, str(tmp_path), r], str(tmp_path))
    fails_cleanly(capsys, ["ph-compare", q, r, str(tmp_path / "missing.run")], "missing.run")
    fails_cleanly(capsys, ["ph-compare", str(tmp_path), r, r], str(tmp_path))
    fails_cleanly(capsys, [q, str(tmp_path / "missing.run"), "AP"], "missing.run")


@pytest.mark.parametrize("grade", ["4294967297", "2147483648", "-2147483649", "100000000000000000000000"])
def test_grade_outside_int32(files, tmp_path, capsys, grade):
    q = tmp_path / "big.qrels"
    q.write_text(QRELS + f"q2 0 e {grade}\n")
    fails_cleanly(capsys, [str(q), files[1], "AP", "MP"], "big.qrels")


@pytest.mark.parametrize("grade", [2 ** 31, -2 ** 31 - 1, 1.5])
def test_grade_from_ir_datasets_outside_int32_or_not_an_integer(files, monkeypatch, capsys, grade):
    dataset = FakeDataset(qrels=[("q1", "a", 1), ("q2", "e", grade)])
    FakeIrDatasets({"fake/big": dataset}).install(monkeypatch)
    fails_cleanly(capsys, ["fake/big", files[1], "AP", "MP"], "fake/big", "'q2'", "'e'")


@pytest.mark.parametrize("measure", ["P@0", "ndcg_cut_0"] + [pytest.param(m, marks=pytest.mark.slow)
                                                            for m in ("nDCG@0", "P_0", "P@-1", "AP@x")])
def test_bad_cutoff_of_a_native_measure_is_refused_before_pytrec_eval(files, measure):
    # pytrec_eval aborts the process (status 134) on a cutoff of 0: hence a child process
    status, out, err = cli(*files, "AP", measure)
    assert status == 2 and out == b"", err
    assert "Traceback" not in err and err.startswith(ERROR) and measure in err


def clear_length_caches():
    """Forget the lengths read so far (every lru_cache of irmeasures_markov.documents._lengths)."""
    for f in vars(lengths_module).values():
        if hasattr(f, "cache_clear"):
            f.cache_clear()


@pytest.fixture
def fake_docs_irds(monkeypatch, tmp_path):
    """An ir_datasets with one docs store, 'fake/docs', and the length cache in tmp_path."""
    docs = {"a": "one two", "b": "three", "c": "four five six", "d": "", "x": "seven"}
    FakeIrDatasets({"fake/docs": FakeDataset(docs=docs.items())}).install(monkeypatch)
    monkeypatch.setenv("IRMEASURES_MARKOV_CACHE", str(tmp_path / "cache"))

    clear_length_caches()
    yield tmp_path / "cache"
    clear_length_caches()


def test_corrupt_length_cache_is_rebuilt_or_named(files, fake_docs_irds, capsys):
    measure = "TBG(lengths='irds:fake/docs')"
    assert main([*files, measure]) == 0
    good = capsys.readouterr().out
    caches = [p for p in fake_docs_irds.rglob("*") if p.is_file()]
    assert caches
    for path in caches:
        path.write_bytes(path.read_bytes()[:12])  # truncated gzip
    clear_length_caches()
    status = main([*files, measure])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if status == 0:  # rebuilt from the collection
        assert out == good
    else:
        assert status == 2 and ERROR in err


# --- item 12: one exit-code scheme, one prefix, measure strings as people type them -----------------------

def test_internal_error_is_status_1_with_a_report_hint_and_debug_shows_the_traceback(files, capsys, monkeypatch):
    import ir_measures

    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(ir_measures, "calc_aggregate", broken)
    monkeypatch.delenv("IRMEASURES_MARKOV_DEBUG", raising=False)
    assert main([*files, "MP"]) == 1
    err = capsys.readouterr().err
    assert "irmeasures-markov: internal error: RuntimeError: boom" in err
    assert "report" in err and "Traceback" not in err
    assert main([*files, "MP", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("IRMEASURES_MARKOV_DEBUG", "1")
    assert main([*files, "MP"]) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["ph-compare"], ["demo", "--bogus"], ["measures", "--bogus"],
                                  ["x.qrels", "x.run", "AP", "--places", "two"]])
def test_usage_errors_share_status_2_and_the_prefix(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert ERROR in err and "Traceback" not in err


def test_help_is_status_0(capsys):
    for argv in (["--help"], ["ph-compare", "--help"], ["demo", "--help"], ["measures", "--help"]):
        assert main(argv) == 0
    assert "exit status" in capsys.readouterr().out


def test_measure_with_a_space_after_a_comma(files, capsys):
    assert main([*files, "MP(model='GL_AD_LID', recall=True)@100", "AP  P@10"]) == 0
    spaced = capsys.readouterr().out
    assert main([*files, "MP(model='GL_AD_LID',recall=True)@100", "AP", "P@10"]) == 0
    assert spaced == capsys.readouterr().out
    assert spaced.count("\n") == 3


def test_unquoted_string_value_gets_a_hint(files, capsys):
    err = fails_cleanly(capsys, [*files, "MP(model=GL_AD_LID)"])
    assert "model='GL_AD_LID'" in err


def test_unknown_name_gets_close_matches(files, capsys):
    err = fails_cleanly(capsys, [*files, "mp"], "'mp'")
    assert "MP" in err.replace("'mp'", "")
    err = fails_cleanly(capsys, [*files, "nDGC@10"])
    assert "nDCG" in err


# --- item 13: empty inputs -----------------------------------------------------------------------------------

def test_empty_qrels_is_an_error(files, tmp_path, capsys):
    empty = tmp_path / "empty.qrels"
    empty.write_text("\n")
    fails_cleanly(capsys, [str(empty), files[1], "AP", "MP"], "empty.qrels")


def test_empty_run_warns(files, tmp_path, capsys):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    assert main([files[0], str(empty), "AP", "MP"]) == 0
    out, err = capsys.readouterr()
    assert "irmeasures-markov: warning: " in err and "empty.run" in err and "empty" in err.replace("empty.run", "")
    assert out == "AP\t0.0000\nMP\t0.0000\n"


def test_no_shared_topic_warns(files, tmp_path, capsys):
    other = tmp_path / "other.run"
    other.write_text("q9 Q0 a 1 1.0 t\n")
    assert main([files[0], str(other), "AP"]) == 0
    err = capsys.readouterr().err
    assert "irmeasures-markov: warning: " in err and "other.run" in err and "share no query" in err


def test_json_output_has_no_nan(files, capsys, monkeypatch):
    import ir_measures
    real = ir_measures.calc_aggregate
    monkeypatch.setattr(ir_measures, "calc_aggregate",
                        lambda ms, q, r: {m: float("nan") for m in real(ms, q, r)})
    assert main([*files, "infAP", "MP", "-o", "jsonl"]) == 0  # both through calc_aggregate (AP: float64 path)
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(ln)["value"] for ln in lines] == [None, None]
    assert "NaN" not in "".join(lines)


# --- item 18: standard input, byte-exact ids ------------------------------------------------------------------

def test_run_from_stdin(files, capsys):
    status, out, err = cli(files[0], "-", "AP", "P@2", "-q", stdin=RUN.encode())
    assert status == 0, err
    assert main([*files, "AP", "P@2", "-q"]) == 0  # the same as from the file
    assert out.decode() == capsys.readouterr().out
    assert out.decode().endswith("all\tAP\t0.6667\nall\tP@2\t0.5000\n")


def test_error_in_stdin_names_stdin(files):
    status, out, err = cli(files[0], "-", "AP", stdin=b"q1 Q0 a 1 oops t\n")
    assert status == 2 and err.startswith(ERROR) and "<stdin>:1" in err and "Traceback" not in err


@pytest.mark.skipif(importlib.util.find_spec("irmeasures_markov.io") is None,
                    reason="needs the byte-exact (surrogateescape) file readers of irmeasures_markov.io")
def test_ids_that_are_not_utf8_print_back_byte_exactly(tmp_path):
    q, r = tmp_path / "b.qrels", tmp_path / "b.run"
    q.write_bytes(b"q\xff1 0 d\xfe 1\nq\xff1 0 e 0\n")
    r.write_bytes(b"q\xff1 Q0 d\xfe 1 2.0 t\nq\xff1 Q0 e 2 1.0 t\n")
    # AP goes to pytrec_eval, which crashes on undecodable ids, MP to this package
    status, out, err = cli(str(q), str(r), "AP", "MP", "-q", "-n")
    assert status == 0, err
    assert out == b"q\xff1\tAP\t1.0000\nq\xff1\tMP\t1.0000\n"
    status, out, err = cli(str(q), str(r), "AP", "-q", "-n", "-o", "jsonl")
    assert status == 0 and out.startswith(b'{"query_id": "q\xff1"'), (out, err)


# --- item 19: version and the measure catalogue ---------------------------------------------------------------

def test_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("irmeasures-markov ") and out.split()[1][0].isdigit()


def test_measures_lists_every_measure_and_alias(capsys):
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    catalogue = irmeasures_markov.list_measures()
    assert {"MP", "MPcont", "PH", "TBG", "M1", "M4", "RBTR", "RRAP"} <= {m.name for m in catalogue}
    for info in catalogue:
        assert any(ln.startswith(f"{info.name}") for ln in out.splitlines()), info.name
        for alias in info.aliases:
            assert alias in out
    assert "PatH" in out
    assert "model: str='GL_AD_ID'" in out and "p: int|float=0.8" in out  # parameters, types, defaults


def test_measures_name_shows_parameters_types_defaults_and_meanings(capsys):
    assert main(["measures", "MP"]) == 0
    out = capsys.readouterr().out
    assert "model: str, default 'GL_AD_ID'; one of " in out and "'LO_OR_ID'" in out
    assert "recall: bool, default False" in out
    assert main(["measures", "PatH"]) == 0
    assert "p: int or float, default 0.8" in capsys.readouterr().out
    fails_cleanly(capsys, ["measures", "mp"], "'mp'")


def test_list_measures_matches_supported_params():
    mp = next(m for m in irmeasures_markov.list_measures() if m.name == "MP")
    assert [p.name for p in mp.parameters] == list(irmeasures_markov.MP.SUPPORTED_PARAMS)
    model = mp.parameter("model")
    assert model.type == "str" and model.default == "GL_AD_ID" and "UNIFORM" in model.choices
    assert model.meaning and "\n" not in model.meaning
    assert mp.parameter("cutoff").default is None and not mp.parameter("cutoff").required
    ph = next(m for m in irmeasures_markov.list_measures() if m.name == "PH")
    assert ph.aliases == ("PatH",) and ph.parameter("p").type == "int or float"


# --- item 20: stable output order -----------------------------------------------------------------------------

def test_by_query_order_is_stable_and_grouped(tmp_path):
    q, r = tmp_path / "o.qrels", tmp_path / "o.run"
    qids = ["10", "2", "q10", "q2", "1", "b", "a"]
    q.write_text("".join(f"{t} 0 d{i} {i % 2}\n" for t in qids for i in range(4)))
    r.write_text("".join(f"{t} Q0 d{i} {i + 1} {9 - i}.0 t\n" for t in reversed(qids) for i in range(4)))
    measures = ["MP", "P@10", "AP", "MP(model='LO_OR_ID')"]
    outs = set()
    for seed in ("0", "1", "4242"):
        status, out, err = cli(str(q), str(r), *measures, "-q", env={"PYTHONHASHSEED": seed})
        assert status == 0, err
        outs.add(out)
    assert len(outs) == 1
    rows = [ln.split("\t") for ln in outs.pop().decode().splitlines()]
    order = ["1", "2", "10", "a", "b", "q2", "q10", "all"]
    assert [row[:2] for row in rows] == [[t, m] for t in order
                                         for m in ["MP", "P@10", "AP", "MP(model='LO_OR_ID')"]]


# --- item 21: ph-compare ---------------------------------------------------------------------------------------

def test_ph_compare_refuses_p_and_q_with_a_fixed_user(files, capsys):
    q, r = files
    fails_cleanly(capsys, ["ph-compare", q, r, r, "--user", "AP", "--p", "0.5"], "'p'")
    fails_cleanly(capsys, ["ph-compare", q, r, r, "--user", "P", "--q", "0.2"], "'q'")
    assert main(["ph-compare", q, r, r, "--user", "RBP", "--p", "0.5"]) == 0


def test_ph_compare_output_options(files, capsys):
    q, r = files
    assert main(["ph-compare", q, r, r, "--user", "RBP", "-o", "jsonl", "-p", "6"]) == 0
    records = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [x["topic"] for x in records[:-1]] == ["q1", "q2"] and "summary" in records[-1]
    assert records[0]["order3"] == "="
    assert main(["ph-compare", q, r, r, "--user", "RBP", "-p", "6", "--judged_only"]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("q1\t")).split("\t")
    assert len(row[1].split(".")[1]) == 6


def test_ph_compare_has_help_for_every_option():
    from irmeasures_markov.cli._ph_compare import _parser
    assert all(action.help for action in _parser()._actions)


def test_kebab_and_underscore_spellings(files, capsys):
    assert main([*files, "AP", "--by-query", "--no-summary", "--output-format", "tsv"]) == 0
    kebab = capsys.readouterr().out
    assert main([*files, "AP", "--by_query", "--no_summary", "--output_format", "tsv"]) == 0
    assert kebab == capsys.readouterr().out


# --- item 22: main() leaves the warnings machinery as it found it ------------------------------------------------

def test_main_restores_warning_display(files, capsys):
    before = (warnings.formatwarning, warnings.showwarning)
    q = pathlib.Path(files[0]).with_name("norel.qrels")
    q.write_text("q1 0 a 0\nq2 0 a 1\n")
    assert main([str(q), files[1], "MP"]) == 0
    assert "irmeasures-markov: warning: " in capsys.readouterr().err  # the no-relevant warning, our format
    assert (warnings.formatwarning, warnings.showwarning) == before


def test_a_run_answering_few_qrels_queries_warns_once_in_every_command(tmp_path, capsys):
    """The main command, compare and pool-reduction each say it once per run, naming the files (the main command
    said nothing: the mean was over every qrels query, most of them 0)."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"q{i} 0 a 1\nq{i} 0 b 0\n" for i in range(5)))
    few, full = tmp_path / "few.run", tmp_path / "full.run"
    few.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\n")
    full.write_text("".join(f"q{i} Q0 a 1 2.0 t\n" for i in range(5)))
    want = (f"irmeasures-markov: warning: {few} and {qrels}: the run answers 2 of the 5 qrels queries (less than "
            "half: is it the right qrels for this run?); means are over all 5 (trec_eval -c), the other 3 scoring 0\n")
    for argv in ([str(qrels), str(few), "AP", "MP"], ["compare", str(qrels), str(few), str(full), "-m", "AP", "MP"],
                 ["pool-reduction", str(qrels), str(few), str(full), "-m", "AP", "MP", "--percents", "50",
                  "--no-progress"]):
        assert main(argv) == 0
        assert capsys.readouterr().err == want, argv


def test_empty_run_warns_once(files, tmp_path, capsys):
    """One warning, not the command's and the library's both."""
    empty = tmp_path / "empty.run"
    empty.write_text("")
    assert main([files[0], str(empty), "AP", "MP"]) == 0
    assert capsys.readouterr().err.count("warning") == 1
