"""One rule for every input form: repeated judgments (files, namedtuples, DataFrames), qrels given as
files on every entry point, the per-topic table as inference input, run names and the baseline."""
import gzip
import os
import pathlib

import ir_measures
import numpy as np
import pandas as pd
import pytest

from irmeasures_markov import MP, RelevanceEvaluator, experiments
from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io import read_trec_qrels

Qrel = ir_measures.Qrel
RUN = {"q": {"a": 2.0, "b": 1.0}}


# ---- item 8: a document judged twice ---------------------------------------------------------

def _forms(judgments):
    """The in-memory forms of a list of Qrel: a list, a generator, a DataFrame."""
    return {"list": lambda: list(judgments), "generator": lambda: (j for j in judgments),
            "DataFrame": lambda: pd.DataFrame(judgments)}


def _where(form: str) -> str:
    return r"qrels DataFrame, row 1" if form == "DataFrame" else r"qrels item 2"


@pytest.mark.parametrize("form", ["list", "generator", "DataFrame"])
@pytest.mark.parametrize("first,second", [(0, 1), (1, 0)])
def test_conflicting_judgments_in_memory_are_refused_on_every_entry_point(form, first, second, tmp_path):
    judgments = [Qrel("q", "a", first), Qrel("q", "a", second), Qrel("q", "b", 0)]
    make = _forms(judgments)[form]
    message = rf"document 'a' judged twice for query 'q' with different grades \({first} and {second}\)"
    # today's main: accepted, the last judgment wins (MP 0.0 one way, 1.0 the other)
    with pytest.raises(InputError, match=rf"^{_where(form)}: {message}$"):
        ir_measures.calc_aggregate([MP], make(), RUN)
    with pytest.raises(InputError, match=message):  # with a measure of pytrec_eval's in the same call
        ir_measures.calc_aggregate([ir_measures.AP, MP], make(), RUN)
    for measures in ({"MP"}, {"map"}, {"map", "MP"}):
        with pytest.raises(InputError, match=message):
            RelevanceEvaluator(make(), measures)
    with pytest.raises(InputError, match=message):
        experiments.evaluate([MP, "AP"], make(), {"r": RUN}, progress=False)
    # the file reader's rule, in its words
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{j.query_id} 0 {j.doc_id} {j.relevance}\n" for j in judgments))
    with pytest.raises(InputError, match=rf"qrels.txt:2: {message}"):
        read_trec_qrels(path)
    with pytest.raises(InputError, match=rf"qrels.txt:2: {message}"):
        experiments.evaluate([MP], path, {"r": RUN}, progress=False)


@pytest.mark.parametrize("form", ["list", "generator", "DataFrame"])
def test_a_repeated_judgment_with_its_grade_is_one_judgment_in_every_form(form, tmp_path):
    judgments = [Qrel("q", "a", 1), Qrel("q", "b", 0), Qrel("q", "a", 1)]
    make = _forms(judgments)[form]
    plain = {"q": {"a": 1, "b": 0}}
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{j.query_id} 0 {j.doc_id} {j.relevance}\n" for j in judgments))
    assert read_trec_qrels(path) == plain
    expected = ir_measures.calc_aggregate([MP], plain, RUN)
    assert ir_measures.calc_aggregate([MP], make(), RUN) == expected
    assert RelevanceEvaluator(make(), {"map", "MP"}).evaluate(RUN) == \
        RelevanceEvaluator(plain, {"map", "MP"}).evaluate(RUN)
    got = experiments.evaluate([MP, "AP"], make(), {"r": RUN}, progress=False)
    ref = experiments.evaluate([MP, "AP"], plain, {"r": RUN}, progress=False)
    np.testing.assert_array_equal(got.values, ref.values)


def test_conflicts_in_other_queries_and_later_rows_are_named():
    frame = pd.DataFrame({"query_id": ["q1", "q2", "q1", "q2"], "doc_id": ["a", "a", "a", "a"],
                          "relevance": [2, 1, 2, 3]})
    with pytest.raises(InputError, match=r"row 3: document 'a' judged twice for query 'q2' .*\(1 and 3\)"):
        ir_measures.calc_aggregate([MP], frame, {"q1": {"a": 1.0}})


# ---- item 17: qrels as files on every entry point --------------------------------------------

QRELS = {"1": {"a": 1, "b": 0, "c": 2, "d": 0}, "2": {"a": 0, "e": 1, "f": 1}, "3": {"g": 1, "h": 0}}
RUNS = {"r0": {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"e": 2.0, "a": 1.0}, "3": {"h": 1.0, "g": 0.5}},
        "r1": {"1": {"c": 3.0, "d": 2.0, "a": 1.0}, "2": {"f": 2.0, "e": 1.0}, "3": {"g": 1.0}},
        "r2": {"1": {"b": 3.0, "a": 2.0}, "2": {"a": 2.0, "f": 1.0}, "3": {"g": 2.0, "h": 1.0}}}
MEASURES = ["AP", "P@2", MP]


def _qrels_text(qrels) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())


@pytest.fixture
def qrels_paths(tmp_path):
    plain = tmp_path / "qrels.txt"
    plain.write_text(_qrels_text(QRELS))
    packed = tmp_path / "qrels.gz"
    packed.write_bytes(gzip.compress(_qrels_text(QRELS).encode()))
    return [str(plain), plain, str(packed), packed]


def test_evaluate_takes_a_qrels_file(qrels_paths):
    ref = experiments.evaluate(MEASURES, QRELS, RUNS, progress=False)
    for path in qrels_paths:  # today's main: TypeError inside evaluate
        got = experiments.evaluate(MEASURES, path, RUNS, progress=False)
        assert got.topics == ref.topics and got.runs == ref.runs
        np.testing.assert_array_equal(got.values, ref.values)


def test_pool_reduction_and_grids_take_a_qrels_file(qrels_paths):
    from irmeasures_markov.experiments import EvaluationGrid, evaluate_grid
    kw = dict(percents=(50,), progress=False)
    ref = experiments.pool_reduction(MEASURES, QRELS, RUNS, **kw)
    grid_ref, _ = evaluate_grid(MEASURES, QRELS, RUNS, pools=[100, 50], progress=False)
    for path in qrels_paths:
        got = experiments.pool_reduction(MEASURES, path, RUNS, **kw)
        np.testing.assert_array_equal(got.mean_scores, ref.mean_scores)
        np.testing.assert_array_equal(got.tau, ref.tau)
        full = experiments.evaluate(MEASURES, path, RUNS, progress=False)
        again = experiments.pool_reduction(MEASURES, path, RUNS, full=full, **kw)
        np.testing.assert_array_equal(again.mean_scores, ref.mean_scores)
        grid, _ = evaluate_grid(MEASURES, path, RUNS, pools=[100, 50], progress=False)
        for pool in grid_ref:
            np.testing.assert_array_equal(grid[pool].values, grid_ref[pool].values)
        g = EvaluationGrid()
        block = g.add(MEASURES, path, RUNS)
        np.testing.assert_array_equal(g.run(progress=False).evaluations(block)[(100.0, 0)].values,
                                      grid_ref[(100.0, 0)].values)


def test_compare_and_ph_compare_take_a_qrels_file(qrels_paths):
    from irmeasures_markov.comparison import compare
    from irmeasures_markov.experiments._ph_compare import compare_runs
    ref = compare(QRELS, RUNS, MEASURES, baseline="r1", test="t")
    ref_rows = compare_runs(QRELS, RUNS["r0"], RUNS["r1"], user="RBP", p=0.5, n_users=200)
    for path in qrels_paths:
        got = compare(path, RUNS, MEASURES, baseline="r1", test="t")
        pd.testing.assert_frame_equal(got.table, ref.table)
        pd.testing.assert_frame_equal(got.tests, ref.tests)
        # today's main: the ph-compare library call read a path as a dict (AttributeError)
        rows = compare_runs(path, RUNS["r0"], RUNS["r1"], user="RBP", p=0.5, n_users=200)
        assert [r[:5] for r in rows] == [r[:5] for r in ref_rows]


def test_qrels_helpers_take_a_qrels_file(qrels_paths):
    from irmeasures_markov.io._datasets import binarize, downsample_qrels
    for path in qrels_paths:
        assert binarize(path, rel=2) == binarize(QRELS, rel=2)
        assert downsample_qrels(path, 50, seed=3, min_nonrelevant=0) == \
            downsample_qrels(QRELS, 50, seed=3, min_nonrelevant=0)


def test_calibration_fit_takes_a_qrels_file(tmp_path):
    from irmeasures_markov.calibration import fit, simulate_ph
    log, qrels = simulate_ph(300, browse="RWBM", p=0.6, q=0.2, gamma=0.4, rng=3)
    path = tmp_path / "sim.qrels"
    path.write_text(_qrels_text(qrels))
    ref = fit(log, families=("ph",), qrels=qrels, bootstrap=0)
    got = fit(log, families=("ph",), qrels=path, bootstrap=0)  # today's main: TypeError
    assert [f.to_dict() for f in got.fits] == [f.to_dict() for f in ref.fits]


# ---- item 19: the per-topic table as inference input -----------------------------------------

@pytest.fixture
def evaluation():
    rng = np.random.default_rng(4)
    topics = [str(t) for t in (3, 11, 2, 40, 7, 5, 19, 8)]
    return experiments.Evaluation(["bm25", "dph", "qld", "rm3"], ["AP", "MP"], topics,
                                  rng.uniform(size=(4, 2, len(topics))))


def _long(ev, label):
    """The long form of ev.per_topic(label): one row per (topic, run)."""
    return ev.per_topic(label).reset_index().melt(id_vars="topic", var_name="run", value_name="value")


def test_score_matrix_takes_the_per_topic_table(evaluation):
    from irmeasures_markov.inference import score_matrix
    wide = evaluation.per_topic("AP")
    # today's main: "a DataFrame of several systems needs a system column"
    got, ref = score_matrix(wide), score_matrix(_long(evaluation, "AP"))
    assert got.topics == ref.topics and got.systems == ref.systems == evaluation.runs
    np.testing.assert_array_equal(got.values, ref.values)
    # against the evaluation itself: topic t, run r
    order = [evaluation.topics.index(t) for t in got.topics]
    np.testing.assert_array_equal(got.values, evaluation.values[:, 0, order].T)
    sub = score_matrix(wide, topics=["2", "3"], systems=["qld", "bm25"])
    np.testing.assert_array_equal(sub.values, wide.loc[["2", "3"], ["qld", "bm25"]].to_numpy())


def test_all_pairs_and_discriminative_power_take_the_per_topic_table(evaluation):
    from irmeasures_markov.inference import all_pairs, discriminative_power, pairwise
    for test in ("t", "randomization"):
        got = all_pairs(evaluation.per_topic("MP"), test, n_resamples=200)
        ref = all_pairs(_long(evaluation, "MP"), test, n_resamples=200)
        np.testing.assert_array_equal(got.pvalue, ref.pvalue)
        assert got.systems == ref.systems
    got = pairwise(evaluation.per_topic("AP"), [("bm25", "rm3")])
    ref = pairwise(_long(evaluation, "AP"), [("bm25", "rm3")])
    np.testing.assert_array_equal(got.pvalue, ref.pvalue)
    kw = dict(tests=("t", "bootstrap"), n_resamples=200, progress=False)
    wide = discriminative_power({m: evaluation.per_topic(m) for m in ("AP", "MP")}, **kw)
    long = discriminative_power({m: _long(evaluation, m) for m in ("AP", "MP")}, **kw)
    pd.testing.assert_frame_equal(wide, long)


def test_a_wide_table_with_a_repeated_topic_or_a_missing_score_is_refused(evaluation):
    from irmeasures_markov.inference import score_matrix
    wide = evaluation.per_topic("AP")
    twice = pd.concat([wide, wide.iloc[:1]])
    with pytest.raises(ValueError, match="lists the topic \\(index\\) '3' twice"):
        score_matrix(twice)
    hole = wide.copy()
    hole.iloc[2, 1] = np.nan
    with pytest.raises(ValueError, match="score of system 'dph' on topic '2' is nan"):
        score_matrix(hole)


# ---- item 20: run names and the baseline -----------------------------------------------------

@pytest.mark.parametrize("file,name", [
    ("bm25.run", "bm25"), ("bm25.run.gz", "bm25"), ("bm25.txt", "bm25"), ("BM25.TREC", "BM25"),
    ("dph.res.bz2", "dph"), ("dph.xz", "dph"), ("dph.zst", "dph"), ("input.uwmt8a0.gz", "uwmt8a0"),
    ("input.uwmt8a0", "uwmt8a0"), ("input.bm25.run.gz", "bm25"), ("runs/bm25.v2.run", "bm25.v2"),
    ("bm25", "bm25"), (".run", ".run"), ("bm25.run.run", "bm25.run"), ("input.", "input."),
])
def test_run_name_strips_compression_then_run_suffixes_then_input(file, name):
    from irmeasures_markov.io._run_files import run_name
    assert run_name(file) == name
    assert run_name(pathlib.Path(file)) == name


def _write_run(path, run):
    path.write_text("".join(f"{q} Q0 {d} {i} {s} tag\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), start=1)))


@pytest.fixture
def run_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(_qrels_text(QRELS))
    rdir = tmp_path / "runs"
    rdir.mkdir()
    for name, suffix in (("r0", ".run"), ("r1", ".txt"), ("r2", ".res")):
        _write_run(rdir / f"{name}{suffix}", RUNS[name])
    return qrels, rdir


def test_compare_baseline_by_name_or_file_and_first_in_the_tables(run_files, monkeypatch):
    from irmeasures_markov.comparison import compare
    qrels, rdir = run_files
    ref = compare(QRELS, {"r2": RUNS["r2"], "r0": RUNS["r0"], "r1": RUNS["r1"]}, MEASURES, baseline="r2")
    assert list(ref.table.index) == ["r2", "r0", "r1"]
    monkeypatch.chdir(rdir)
    # today's main: names 'r0.run', 'r1.txt', 'r2.res', and 'r2' is not a run
    for baseline in ("r2", "r2.res", str(rdir / "r2.res"), pathlib.Path("r2.res")):
        cmp = compare(qrels, str(rdir), MEASURES, baseline=baseline)
        assert cmp.baseline == "r2" and list(cmp.table.index) == ["r2", "r0", "r1"]
        assert list(cmp.evaluation.runs) == ["r2", "r0", "r1"]
        pd.testing.assert_frame_equal(cmp.table, ref.table)
        pd.testing.assert_frame_equal(cmp.tests, ref.tests)
        assert cmp.to_text().splitlines()[2].startswith("r2 (baseline)")
    # runs given as {name: path}: the path names the baseline too
    cmp = compare(qrels, {"x": rdir / "r0.run", "y": rdir / "r1.txt"}, ["AP"], baseline=rdir / "r1.txt")
    assert cmp.baseline == "y" and list(cmp.table.index) == ["y", "x"]
    for bad in ("r9", "other/r2.res", "bm25.run"):
        with pytest.raises(ValueError, match=f"`baseline` '{bad}' is not one of the runs \\(r0, r1, r2\\)"):
            compare(qrels, str(rdir), MEASURES, baseline=bad)


def test_compare_evaluation_puts_the_baseline_first(evaluation):
    from irmeasures_markov.comparison import compare_evaluation
    cmp = compare_evaluation(evaluation, baseline="qld")
    assert list(cmp.table.index) == ["qld", "bm25", "dph", "rm3"]
    assert list(cmp.tests.run_a.unique()) == ["bm25", "dph", "rm3"] and set(cmp.tests.run_b) == {"qld"}
    np.testing.assert_array_equal(cmp.table.loc["dph"].to_numpy(), evaluation.means().loc["dph"].to_numpy())
    assert list(compare_evaluation(evaluation, baseline="qld.run").table.index)[0] == "qld"


def test_plot_takes_the_baseline_as_compare_does(evaluation):
    import matplotlib
    matplotlib.use("Agg")
    from irmeasures_markov.comparison import compare_evaluation
    cmp = compare_evaluation(evaluation)
    fig = cmp.plot("AP", baseline="dph.run")
    assert [ax.get_title().split(":")[0] for ax in fig.axes[:3]] == ["bm25 − dph", "qld − dph", "rm3 − dph"]
    with pytest.raises(ValueError, match="`baseline` 'bm9' is not one of the runs"):
        cmp.plot("AP", baseline="bm9")


def test_two_files_giving_one_run_name_are_an_error_naming_both(tmp_path):
    from irmeasures_markov.comparison import compare
    from irmeasures_markov.io._run_files import list_run_files, load_run_dir, run_names
    _write_run(tmp_path / "bm25.run", RUNS["r0"])
    _write_run(tmp_path / "bm25.txt.gz", RUNS["r1"])
    a, b = str(tmp_path / "bm25.run"), str(tmp_path / "bm25.txt.gz")
    message = f"{b}: gives the run name 'bm25', as {a} does"
    with pytest.raises(InputError, match=message):
        run_names([a, b])
    with pytest.raises(InputError, match=message):
        list_run_files(tmp_path)
    with pytest.raises(InputError, match=message):
        load_run_dir(tmp_path, progress=False)
    with pytest.raises(InputError, match=message):
        compare(QRELS, [a, b], ["AP"])


def test_cli_baseline_by_name_or_file_first_row(run_files, capsys):
    from irmeasures_markov.cli import main
    qrels, rdir = run_files
    for baseline in ("r2", "r2.res", str(rdir / "r2.res")):
        # today's main: "--baseline r2: not one of the runs (r0.run, r1.txt, r2.res)"
        assert main(["compare", str(qrels), str(rdir), "-m", "AP", "--baseline", baseline, "-o", "csv",
                     "--no-progress"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert [line.split(",")[0] for line in out[1:]] == ["r2", "r0", "r1"]
    assert main(["compare", str(qrels), str(rdir), "-m", "AP", "--baseline", "bm25"]) == 2
    err = capsys.readouterr().err
    assert "--baseline bm25: not one of the runs (r0, r1, r2)" in err
    _write_run(rdir / "r0.trec", RUNS["r0"])
    assert main(["compare", str(qrels), str(rdir), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert f"gives the run name 'r0', as {os.path.join(str(rdir), 'r0.run')} does" in err
