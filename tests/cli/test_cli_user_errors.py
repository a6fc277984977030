"""The command line's answers to what users try: range limits, --debug everywhere, one-topic comparisons,
plain TBG without lengths, offline ir_datasets, measure names as the user spelled them."""
import json
import os
import pathlib
import subprocess
import sys
import traceback
import warnings

import numpy as np
import pytest

from irmeasures_markov.cli import SUBCOMMANDS, main
from irmeasures_markov.cli._errors import CliError

ERROR = "irmeasures-markov: error: "
WARNING = "irmeasures-markov: warning: "


def _files(tmp_path, qrels, runs):
    q = tmp_path / "t.qrels"
    q.write_text(qrels)
    paths = []
    for name, text in runs.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    return str(q), paths


ONE_TOPIC = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\n"
RUN_A = "q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\n"
RUN_B = "q1 Q0 b 1 3.0 t\nq1 Q0 a 2 2.0 t\n"


def error_line(err):
    lines = [line for line in err.splitlines() if line.startswith(ERROR)]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return lines[0]


# --- item 12: ranges are checked before they are expanded ---------------------------------------------------

def test_a_huge_seed_range_is_refused_before_it_is_expanded(tmp_path, capsys):
    from irmeasures_markov.cli._grid import MAX_LIST_VALUES
    q, runs = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "b.run": RUN_B})
    # 10^11 values: expanding them would need terabytes (MemoryError reported as an internal error before)
    assert main(["pool-reduction", q, *runs, "-m", "AP", "--seeds", "0-100000000000", "--no-progress"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "--seeds" in line and "100000000001 values" in line and str(MAX_LIST_VALUES) in line


def test_parse_list_counts_every_range_and_item_against_the_limit():
    from irmeasures_markov.cli._grid import parse_list
    assert parse_list("0-3,7", "--seeds", int) == [0, 1, 2, 3, 7]
    assert parse_list("0-9", "--seeds", int, limit=10) == list(range(10))
    with pytest.raises(CliError, match=r"--seeds: '0-5,7-10' holds 10 values; at most 9 are allowed"):
        parse_list("0-5,7-10", "--seeds", int, limit=9)
    with pytest.raises(CliError, match=r"at most 2 are allowed"):
        parse_list("10,20,30", "--percents", limit=2)
    with pytest.raises(CliError, match="lists a value twice"):
        parse_list("1,0-2", "--seeds", int)


def test_percents_times_seeds_is_bounded_too(tmp_path, capsys):
    q, runs = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "b.run": RUN_B})
    assert main(["pool-reduction", q, *runs, "-m", "AP", "--seeds", "0-4000", "--percents", "10,50,90",
                 "--no-progress"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "--percents x --seeds" in line and "12003 pool samples" in line


# --- item 13: every subcommand accepts --debug --------------------------------------------------------------

@pytest.mark.parametrize("command", [None, *sorted(SUBCOMMANDS)])
def test_every_command_accepts_debug(command, capsys):
    prefix = [] if command is None else [command]
    assert main([*prefix, "--debug", "--help"]) == 0
    assert "--debug" in capsys.readouterr().out
    main([*prefix, "--debug"])  # whatever else is missing, --debug itself is never the complaint
    assert "unrecognized arguments" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["fit", "pool-reduction"])
def test_debug_shows_the_traceback_of_an_internal_error_in_fit_and_pool_reduction(command, tmp_path, capsys,
                                                                                    monkeypatch):
    from irmeasures_markov.cli import _fit as fit
    from irmeasures_markov.cli import _grid as grid

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(fit, "_families", boom)
    monkeypatch.setattr(grid, "parse_list", boom)
    log = tmp_path / "log.tsv"
    log.write_text("x")
    args = [str(log)] if command == "fit" else [str(log), str(log), str(log), "-m", "AP"]
    assert main([command, *args, "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: boom" in err and "internal error" in err


# --- item 16: compare on one topic, and --test none -----------------------------------------------------------

def test_compare_on_one_topic_prints_the_means_and_says_no_test_is_possible(tmp_path, capsys):
    q, runs = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "b.run": RUN_B})
    assert main(["compare", q, *runs, "-m", "AP", "P@1"]) == 0
    captured = capsys.readouterr()
    assert "no test is possible" in captured.out  # the legend
    warned = [line for line in captured.err.splitlines() if line.startswith(WARNING)]
    assert len(warned) == 1 and "no significance test is possible" in warned[0], captured.err
    rows = {line.split()[1]: line.split()[2:] for line in captured.out.splitlines() if line.startswith("(")}
    # 2 relevant documents (a, c); run a finds a at rank 1: AP = 1/2; run b finds it at rank 2: AP = 1/4
    assert rows["a"] == ["0.5000", "1.0000"] and rows["b"] == ["0.2500", "0.0000"]


def test_compare_test_none_gives_the_means_only(tmp_path, capsys):
    qrels = ONE_TOPIC + "q2 0 a 1\nq2 0 b 1\n"
    q, runs = _files(tmp_path, qrels, {"a.run": RUN_A + "q2 Q0 a 1 1 t\n", "b.run": RUN_B})
    assert main(["compare", q, *runs, "-m", "AP", "--test", "none", "-o", "jsonl", "--pairs"]) == 0
    captured = capsys.readouterr()
    assert WARNING not in captured.err
    (rec,) = [json.loads(line) for line in captured.out.splitlines()]
    assert rec["test"] == "none" and rec["pvalue"] is None and rec["significant"] is False
    # AP per topic: run a (1/2, 1/2: q2's a at rank 1 of 2 relevant), run b (1/4, 0: b answers no q2)
    assert rec["mean_difference"] == pytest.approx(((0.5 - 0.25) + (0.5 - 0.0)) / 2)
    assert main(["compare", q, *runs, "-m", "AP", "--test", "none", "--correction", "holm"]) == 2
    assert "--test none" in error_line(capsys.readouterr().err)


def test_library_compare_on_one_topic_warns_and_keeps_the_means():
    from irmeasures_markov.comparison import compare
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}}
    runs = {"A": {"q1": {"a": 3.0, "b": 2.0}}, "B": {"q1": {"b": 3.0, "a": 2.0}}}
    with pytest.warns(UserWarning, match="no significance test is possible"):
        cmp = compare(qrels, runs, ["AP"], ci=0.95)
    assert cmp.test == "none" and not cmp.tests["significant"].any()
    assert cmp.table.loc["A", "AP"] == 0.5 and cmp.table.loc["B", "AP"] == 0.25
    assert np.isnan(cmp.tests["pvalue"]).all() and np.isnan(cmp.intervals.to_numpy()).all()
    assert "no test is possible" in cmp.to_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # test='none' asked for: no warning
        compare(qrels, runs, ["AP"], test="none", baseline="A")
    with pytest.raises(ValueError, match="takes no correction"):
        compare(qrels, runs, ["AP"], test="none", correction="holm")


# --- item 21: plain TBG without lengths ----------------------------------------------------------------------

def test_plain_tbg_through_ir_measures_ends_in_a_short_traceback_with_one_line_saying_how(tmp_path):
    q, (r,) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A})
    script = ("import irmeasures_markov, ir_measures\n"
              f"qrels = list(ir_measures.read_trec_qrels({q!r})); run = list(ir_measures.read_trec_run({r!r}))\n"
              "ir_measures.calc_aggregate([ir_measures.parse_measure('TBG'), ir_measures.parse_measure('AP')], "
              "qrels, run)\n")
    env = {k: v for k, v in os.environ.items() if k != "IRMEASURES_MARKOV_DEBUG"}
    env["PYTHONPATH"] = str(pathlib.Path(__file__).resolve().parents[2])
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    last = lines[-1]
    assert last.startswith("irmeasures_markov.documents._lengths.UnknownLengthError: no document lengths were given")
    assert "lengths='FILE'" in last and "default_length=" in last
    # the frames inside the evaluation (down to the length lookup) are gone: ir_measures' own and the
    # evaluator's entry remain (38 lines before)
    assert len(lines) <= 20, p.stderr
    assert "lookup_segments" not in p.stderr and "During handling" not in p.stderr


def test_an_input_error_inside_the_evaluation_is_raised_from_the_evaluators_entry(tmp_path):
    import ir_measures

    import irmeasures_markov as imm
    from irmeasures_markov._util._errors import InputError
    rates = tmp_path / "rates.tsv"
    rates.write_text("a\tnot-a-number\n")
    m = ir_measures.parse_measure(f"MPcont(rates='{rates}')")
    with pytest.raises(InputError, match="rates.tsv") as e:
        imm.PROVIDER.calc_aggregate([m], {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    frames = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    assert "compute" not in frames and "prepared_values" not in frames, frames


# --- item 22: offline ir_datasets, P_0, measures AP ----------------------------------------------------------

class NameResolutionError(Exception):
    """What urllib3 raises when a host name cannot be resolved (offline)."""


def _offline_error():
    """requests' ConnectionError as ir_datasets meets it: a long message around a nested one, chained."""
    try:
        try:
            raise NameResolutionError("HTTPSConnection(host='ciir.cs.umass.edu', port=443): Failed to resolve")
        except NameResolutionError as inner:
            raise OSError("HTTPSConnectionPool(host='ciir.cs.umass.edu', port=443): Max retries exceeded with url: "
                          "/downloads/Antique/antique-test.qrel (Caused by NameResolutionError(\"HTTPSConnection("
                          "host='ciir.cs.umass.edu', port=443): Failed to resolve 'ciir.cs.umass.edu' ([Errno -2] "
                          "Name or service not known)\"))") from inner
    except OSError as outer:
        return outer


def test_offline_ir_datasets_qrels_name_the_dataset_the_cause_and_where_the_file_goes(tmp_path, monkeypatch, capsys):
    from fake_ir_datasets import FakeDataset, FakeIrDatasets
    cache = tmp_path / "irds" / "antique" / "test" / "qrels"

    class Download:
        mirrors = [type("Mirror", (), {"url": "https://example.org/antique-test.qrel"})()]
        _cache_path = str(cache)

    class Dataset(FakeDataset):
        def qrels_handler(self):
            return type("Handler", (), {"_qrels_dlc": type("Cache", (), {"_streamer": Download()})()})()

    FakeIrDatasets({"antique/test": Dataset(error=_offline_error())}).install(monkeypatch)
    _, (r,) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A})
    assert main(["antique/test", r, "AP"]) == 2
    line = error_line(capsys.readouterr().err)
    assert line.startswith(ERROR + "antique/test: ir_datasets could not provide the qrels")
    assert "offline" in line and "Give a TREC qrels file instead" in line
    assert f"downloaded from https://example.org/antique-test.qrel at {cache}" in line
    assert "HTTPSConnection" not in line and "host=" not in line  # no piece of the nested message


def test_download_failure_reads_the_errors_ir_datasets_lists_per_mirror():
    from irmeasures_markov.io._downloads import download_failure
    listed = RuntimeError("All download sources failed", [("mirror-1", _offline_error())])
    assert download_failure(listed) == "the download failed: this machine seems to be offline (NameResolutionError)"
    checksum = RuntimeError("Expected md5 abc, got def")
    assert download_failure(checksum) == "the download failed (RuntimeError: Expected md5 abc, got def)"


def test_a_cutoff_error_names_the_measure_as_the_user_spelled_it(tmp_path, capsys):
    q, (r,) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A})
    assert main([q, r, "P_0"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "P_0" in line and "P@0" not in line and "positive integer" in line
    assert main([q, r, "P@0"]) == 2
    assert "P@0" in error_line(capsys.readouterr().err)


def test_measures_of_ir_measures_are_named_as_such_and_unknown_ones_get_suggestions(capsys):
    assert main(["measures", "AP", "MP", "map"]) == 0
    out = capsys.readouterr().out
    ap, = [line for line in out.splitlines() if line.startswith("AP:")]
    assert "ir_measures' own measure" in ap and "works" in ap and "RAP" not in out
    assert any(line.startswith("MP:") for line in out.splitlines())
    assert any(line.startswith("map: trec_eval's name for AP") for line in out.splitlines())
    assert main(["measures", "APX"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "'APX' is not a measure" in line and "did you mean AP" in line


def test_ph_compare_users_are_bounded_before_the_simulation(tmp_path, capsys):
    from irmeasures_markov.cli._ph_compare import MAX_USERS
    q, runs = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "b.run": RUN_B})
    assert main(["ph-compare", q, *runs, "--browse", "RWBM", "--q", "0.2", "--users", str(10 ** 11)]) == 2
    line = error_line(capsys.readouterr().err)
    assert "--users" in line and str(MAX_USERS) in line


def test_running_out_of_memory_is_not_reported_as_a_bug(tmp_path, capsys, monkeypatch):
    import irmeasures_markov.cli._evaluate as evaluate

    def too_big(*args, **kwargs):
        raise MemoryError("Unable to allocate 745. GiB for an array with shape (100000000000,)")

    monkeypatch.setattr(evaluate, "report", too_big)
    q, (r,) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A})
    assert main([q, r, "AP"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "out of memory" in line and "745. GiB" in line


# --- issue 34 item 10: messages that name the cause --------------------------------------------------------------

def test_gdeval_measure_on_non_numeric_query_ids_names_gdeval(tmp_path, capsys):
    """ERR@10 is gdeval's, which reads numeric query ids only: exit 2 saying so (it was exit 1, "a bug")."""
    q, (a, b) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "b.run": RUN_B})
    for argv in ([q, a, "AP", "ERR@10"], ["compare", q, a, b, "-m", "ERR@10"],
                 ["pool-reduction", q, a, b, "-m", "ERR@10", "--percents", "50", "--no-progress"]):
        assert main(argv) == 2
        assert error_line(capsys.readouterr().err) == (
            f"{ERROR}ERR@10: ir_measures computes it with gdeval, which reads numeric query ids only (digits after "
            "the last '-'), and query 'q1' is not one; number the queries, in qrels and run alike")
    q, (a,) = _files(tmp_path, ONE_TOPIC.replace("q1", "401"), {"n.run": RUN_A.replace("q1", "401")})
    assert main([q, a, "ERR@10"]) == 0


@pytest.mark.parametrize("measure,message", [
    ("PH(p=-0.1)", "PH(p=-0.1): PH: `p` must be in [0, 1], got -0.1."),
    ("TBG(halflife=-1,default_length=10)", "TBG(halflife=-1,default_length=10): TBG: halflife must be > 0 seconds, "
                                           "got -1.0"),
])
def test_a_negative_value_says_what_is_out_of_range(tmp_path, capsys, measure, message):
    """ir_measures' parser reads no negative number: the measure's own range check speaks (it was "problem
    parsing measure values")."""
    q, (a,) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A})
    assert main([q, a, measure]) == 2
    assert error_line(capsys.readouterr().err) == f"{ERROR}bad measure: {message}"


def test_header_lines_and_swapped_files_are_named(tmp_path, capsys):
    q, (a, hq, hr) = _files(tmp_path, ONE_TOPIC, {"a.run": RUN_A, "h.qrels": "qid iter docno relevance\n" + ONE_TOPIC,
                                                   "h.run": "qid Q0 docno rank score tag\n" + RUN_A})
    cases = [([hq, a, "AP"], "relevance grade 'relevance' is not an integer (a header line? qrels lines are 'qid "
                             "iter docid grade', with no header)"),
             ([q, hr, "AP"], "score 'score' is not a number (a header line? run lines are 'qid Q0 docid rank "
                             "score tag', with no header)"),
             ([a, q, "AP"], "(a run? give the qrels first, then the run)"),
             ([q, q, "AP"], "(a qrels file? give the qrels first, then the run)"),
             (["compare", q, q, a, "-m", "AP"], "(a qrels file? give the qrels first, then the run)")]
    for argv, end in cases:
        assert main(argv) == 2
        assert error_line(capsys.readouterr().err).endswith(end), argv


def test_an_empty_run_directory_is_quoted(tmp_path, capsys, monkeypatch):
    q, _ = _files(tmp_path, ONE_TOPIC, {})
    (tmp_path / "emptydir").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["compare", q, "emptydir", "-m", "AP"]) == 2
    assert error_line(capsys.readouterr().err) == f"{ERROR}no run files in 'emptydir'"
