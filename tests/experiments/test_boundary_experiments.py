"""experiments.evaluate at the boundary: trec_eval's conventions, float64 where pytrec_eval has float32.

Reference values come from pytrec_eval (trec_eval's C code) on inputs where
float32 cannot reorder anything (small integer scores), and from hand
computation where it can.
"""
import math
import pathlib
import subprocess
import sys
import textwrap
import warnings

import ir_measures
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmeasures_markov.experiments import evaluate, pool_reduction

pytrec_eval = pytest.importorskip("pytrec_eval")

REPO = pathlib.Path(__file__).resolve().parents[2]

# the example: run a, d, b, c, x, f, e by descending score
NEG_QRELS = {"1": {"a": 2, "b": 1, "c": 0, "d": -1, "e": 0, "f": 1}}
NEG_RUN = {"1": {d: float(10 - i) for i, d in enumerate("a d b c x f e".split())}}


def _values(measures, qrels, run, **kw):
    """{measure string: {topic: value}} for one run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ev = evaluate(measures, qrels, {"r": run}, progress=False, **kw)
    return {lab: dict(zip(ev.topics, ev.values[0, j].tolist())) for j, lab in enumerate(ev.labels)}


def _trec(qrels, run, names, **kw):
    return pytrec_eval.RelevanceEvaluator(qrels, set(names), **kw).evaluate(run)


# ----------------------------------------------------------------------------- bpref (item 6)

def test_bpref_leaves_negative_grades_out_like_trec_eval():
    ref = _trec(NEG_QRELS, NEG_RUN, ["bpref"])["1"]["bpref"]
    assert ref == pytest.approx(5 / 6, abs=1e-15)  # pytrec_eval is trec_eval here: d (grade -1) is skipped
    got = _values(["Bpref"], NEG_QRELS, NEG_RUN)["Bpref"]["1"]
    assert got == pytest.approx(5 / 6, abs=1e-15)
    # every negative grade means "in the pool, not judged" to trec_eval, not only -1
    for g in (-2, -7):
        qrels = {"1": dict(NEG_QRELS["1"], d=g)}
        assert _values(["Bpref"], qrels, NEG_RUN)["Bpref"]["1"] == pytest.approx(5 / 6, abs=1e-15)


def test_bpref_at_other_relevance_levels_matches_trec_eval():
    for rel in (2, 3):
        ref = _trec(NEG_QRELS, NEG_RUN, ["bpref"], relevance_level=rel)["1"]["bpref"]
        got = _values([f"Bpref(rel={rel})"], NEG_QRELS, NEG_RUN)[f"Bpref(rel={rel})"]["1"]
        assert got == pytest.approx(ref, abs=1e-14), rel
    # rel=0 (pytrec_eval refuses it; trec_eval -l0): every grade >= 0 is relevant, none judged non-relevant
    assert _values(["Bpref(rel=0)"], NEG_QRELS, NEG_RUN)["Bpref(rel=0)"]["1"] == 1.0


# ----------------------------------------------------------------------------- random cases vs pytrec_eval

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def qrels_and_run(draw):
    """Two topics, grades in -2..3 (negative: pooled but unjudged), distinct small-integer scores.

    Integers below 2**24 are exact in float32, so pytrec_eval sees the same
    ranking as float64 and is a valid reference.
    """
    qrels, run = {}, {}
    for q in ("1", "2"):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=10))
        qrels[q] = {d: draw(st.integers(-2, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
        scores = draw(st.lists(st.integers(-1000, 1000), unique=True, min_size=len(retrieved),
                               max_size=len(retrieved)))
        run[q] = {d: float(s) for d, s in zip(retrieved, scores)}
    qrels = {q: docs for q, docs in qrels.items() if docs}  # trec_eval has no judgment-less topic
    return qrels, run


PAIRS = [("Bpref", "bpref"), ("RR", "recip_rank"), ("nDCG", "ndcg"), ("nDCG@3", "ndcg_cut_3"),
         ("nDCG@10", "ndcg_cut_10"), ("AP", "map"), ("P@5", "P_5"), ("Rprec", "Rprec")]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run())
def test_native_measures_equal_pytrec_eval_on_float32_safe_scores(case):
    qrels, run = case
    if not qrels:
        return
    ours = _values([m for m, _ in PAIRS], qrels, run)
    # pytrec_eval aborts the process on a topic whose grades are all negative; trec_eval has nothing to score there
    safe = {q: docs for q, docs in qrels.items() if max(docs.values()) >= 0}
    ref = _trec(safe, run, [t for _, t in PAIRS]) if safe else {}
    for m, t in PAIRS:
        for q in qrels:
            expected = ref[q][t] if q in ref else 0.0
            assert ours[m][q] == pytest.approx(expected, abs=1e-12), (m, q, qrels, run)
    # RR@k: trec_eval's recip_rank on the top k documents
    for k in (1, 3):
        got = _values([f"RR@{k}"], qrels, run)[f"RR@{k}"]
        top = {q: dict(sorted(d.items(), key=lambda x: (-x[1], x[0]))[:k]) for q, d in run.items()}
        ref_k = _trec(safe, top, ["recip_rank"]) if safe else {}
        for q in qrels:
            assert got[q] == pytest.approx(ref_k[q]["recip_rank"] if q in ref_k else 0.0, abs=1e-12), (k, q)


# ----------------------------------------------------------------------------- float32 collisions (item 8)

# 1 + 1e-8 and 1 are the same float32: pytrec_eval ties them and puts docid "z" (descending order) first;
# in float64, "a" is ranked above "z".
COLLIDE_RUN = {"1": {"a": 1.0 + 1e-8, "z": 1.0, "b": 0.5}}
COLLIDE_QRELS = {"1": {"z": 2, "b": 1, "a": 0}}


def test_rr_and_ndcg_in_float64_where_pytrec_eval_reorders():
    ours = _values(["RR", "nDCG", "nDCG@2", "RR@2"], COLLIDE_QRELS, COLLIDE_RUN)
    # ranking a (0), z (2), b (1)
    rr = 1 / 2
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    dcg2, idcg2 = 2 / math.log2(3), idcg
    assert ours["RR"]["1"] == pytest.approx(rr, abs=1e-15)
    assert ours["RR@2"]["1"] == pytest.approx(rr, abs=1e-15)
    assert ours["nDCG"]["1"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert ours["nDCG@2"]["1"] == pytest.approx(dcg2 / idcg2, abs=1e-15)
    # the trap is real: pytrec_eval (float32) ranks z first
    ref = _trec(COLLIDE_QRELS, COLLIDE_RUN, ["recip_rank", "ndcg", "ndcg_cut_2"])["1"]
    assert ref["recip_rank"] == 1.0
    assert abs(ref["ndcg"] - dcg / idcg) > 0.1
    # native=False is the pytrec_eval route, kept for comparison
    via_pytrec = _values(["RR", "nDCG"], COLLIDE_QRELS, COLLIDE_RUN, native=False)
    assert via_pytrec["RR"]["1"] == 1.0


def test_ndcg_gain_is_the_grade_and_ideal_holds_every_judged_document():
    """The ideal ranking counts judged documents the run did not retrieve; grade 3 gains 3, not 2**3 - 1."""
    qrels = {"1": {"a": 3, "b": 1, "c": 2, "n": 0, "m": -1}}
    run = {"1": {"b": 3.0, "m": 2.0, "a": 1.0}}
    got = _values(["nDCG", "nDCG@2"], qrels, run)
    dcg = 1 / math.log2(2) + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got["nDCG"]["1"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert got["nDCG@2"]["1"] == pytest.approx(1 / (3 + 2 / math.log2(3)), abs=1e-15)


# ----------------------------------------------------------------------------- topic set (item 7)

def test_default_topics_average_in_judged_topics_without_relevant_documents():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 0}, "3": {"c": 1}}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"a": 2.0, "b": 1.0}}  # topic 3 unanswered
    with pytest.warns(RuntimeWarning, match=r"1 topic with judgments but no relevant.*: 2;"):
        ev = evaluate(["AP", "MP", "Bpref", "nDCG"], qrels, {"r": run}, progress=False)
    assert ev.topics == ["1", "2", "3"]
    assert ev.values[0, :, 1].tolist() == [0.0] * 4 and ev.values[0, :, 2].tolist() == [0.0] * 4
    # trec_eval -c: topic 2 is evaluated (pytrec_eval reports it, at 0) and topic 3 scores 0
    ref = _trec(qrels, run, ["map"])
    assert set(ref) == {"1", "2"} and ref["2"]["map"] == 0.0
    assert ev.column_array("AP")[0] == pytest.approx(np.mean([ref["1"]["map"], ref["2"]["map"], 0.0]), abs=1e-15)
    # ir_measures.calc_aggregate (and so the CLI) averages over the same three topics
    agg = ir_measures.calc_aggregate([ir_measures.AP], qrels, run)
    assert ev.column_array("AP")[0] == pytest.approx(agg[ir_measures.AP], abs=1e-15)
    with pytest.raises(ValueError, match="no topics to evaluate: the qrels are empty"):
        evaluate(["AP"], {}, {"r": run}, progress=False)
    # explicit topics still select
    sub = evaluate(["AP"], qrels, {"r": run}, topics=["1"], progress=False)
    assert sub.topics == ["1"] and sub.column_array("AP")[0] == pytest.approx(1.0)


def test_pool_reduction_keeps_the_full_topic_set():
    qrels = {str(q): {f"d{i}": int(i < 3) if q != 9 else 0 for i in range(20)} for q in range(1, 10)}
    runs = {f"r{k}": {q: {f"d{i}": float((i * (k + 3)) % 20) for i in range(20)} for q in qrels}
            for k in range(4)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = pool_reduction(["AP"], qrels, runs, percents=(50,), progress=False)
    assert all(e.topics == [str(q) for q in range(1, 10)] for e in res.evaluations)


def test_topic_with_only_negative_grades_never_reaches_pytrec_eval():
    """trec_eval writes out of bounds on such a topic (segfault with several measures); it scores 0."""
    code = textwrap.dedent("""
        import warnings
        warnings.simplefilter("ignore")
        from irmeasures_markov.experiments import evaluate
        ev = evaluate(["R@5", "infAP", "AP", "nDCG", "Bpref", "RR", "P@5", "Rprec"],
                      {"1": {"a": -1}, "2": {"b": 1}}, {"r": {"1": {"a": 1.0, "x": 2.0}, "2": {"b": 1.0}}},
                      progress=False, native=False)
        print(ev.values[0, :, 0].tolist(), ev.values[0, :, 1].tolist())
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-500:])
    assert proc.stdout.split("] [")[0] == "[" + ", ".join(["0.0"] * 8)


# ----------------------------------------------------------------------------- cutoffs (item 11)

@pytest.mark.parametrize("measure", ["P@0", "RR@0", "nDCG@0", "AP@0", ir_measures.P @ 0, "P@1.5"])
def test_bad_cutoff_is_a_value_error(measure):
    with pytest.raises(ValueError, match=r"cutoff must be a positive integer"):
        evaluate([measure], NEG_QRELS, {"r": NEG_RUN}, progress=False)


def test_bad_cutoff_never_reaches_pytrec_eval():
    """pytrec_eval aborts the process (SIGABRT) on P_0: the check must come first, also with native=False."""
    code = textwrap.dedent("""
        from irmeasures_markov.experiments import evaluate
        try:
            evaluate(["P@0"], {"1": {"a": 1}}, {"r": {"1": {"a": 1.0}}}, progress=False, native=False)
        except ValueError as e:
            print("ValueError:", e)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "ValueError: measure P@0: the cutoff must be a positive integer" in proc.stdout


# ----------------------------------------------------------------------------- docs and metadata (item 25)

def _doc_files():
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_docs_cite_no_spec_outside_the_repository():
    files = _doc_files() + sorted((REPO / "irmeasures_markov").rglob("*.py"))
    cited = [f"{p.relative_to(REPO)}:{i}" for p in files
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "SPEC" in line]
    assert not cited, cited
    assert (REPO / "docs" / "conventions.md").is_file()


def test_docs_show_no_machine_paths():
    bad = [f"{p.relative_to(REPO)}:{i}" for p in _doc_files()
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if any(s in line for s in ("/work/", "/root/", "/tmp/", "site-packages", "/home/"))]
    assert not bad, bad


def test_readme_collections_snippet_runs_from_anywhere(tmp_path, monkeypatch):
    """The README's loading lines find the runs by the same data-directory rule as load_qrels."""
    import gzip
    data = tmp_path / "data"
    (data / "qrels").mkdir(parents=True)
    (data / "runs" / "trec8").mkdir(parents=True)
    (data / "qrels" / "trec8.qrels.gz").write_bytes(gzip.compress(b"401 0 d1 1\n401 0 d2 0\n"))
    (data / "runs" / "trec8" / "input.r1.gz").write_bytes(gzip.compress(b"401 Q0 d1 1 2.0 r1\n"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("IRMEASURES_MARKOV_DATA", str(data))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Collections and experiments", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    lines = []
    for line in block.splitlines():
        if "experiments.evaluate" in line:
            break
        lines.append(line)
    ns = {}
    exec("\n".join(lines), ns)
    assert list(ns["runs"]) == ["r1"] and ns["qrels"] == {"401": {"d1": 1, "d2": 0}}


def test_license_and_citation():
    assert "MIT License" in (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "2026 The irmeasures_markov developers" in (REPO / "LICENSE").read_text(encoding="utf-8")
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["message"] and cff["authors"]
    assert cff["license"] == "MIT"
    refs = cff["references"]
    assert len(refs) == 5
    for r in refs:
        assert r["type"] in ("conference-paper", "article") and r["title"] and r["authors"] and r["year"]
    assert {r["year"] for r in refs} == {2011, 2012, 2014, 2020}


def test_evaluate_and_pool_reduction_warn_of_a_run_answering_few_topics():
    """experiments.evaluate and pool_reduction name the run answering less than half of the topics, with the
    counts and what the mean is over (they gave the mean without a word)."""
    import warnings as _warnings

    from irmeasures_markov.comparison import compare
    from irmeasures_markov.experiments import evaluate, pool_reduction
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(5)}
    runs = {"few": {"q1": {"a": 1.0}, "q2": {"b": 1.0}}, "full": {f"q{i}": {"a": 1.0} for i in range(5)}}
    want = ("run 'few': the run answers 2 of the 5 qrels queries (less than half: is it the right qrels for this "
            "run?); means are over all 5 (trec_eval -c), the other 3 scoring 0")
    for call in (lambda: evaluate(["AP", "MP"], qrels, runs),
                 lambda: pool_reduction(["AP"], qrels, runs, percents=[50]),
                 lambda: compare(qrels, runs, ["AP", "MP"], ties="optimistic", holes=True)):  # once, not per variant
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            call()
        assert [str(w.message) for w in caught if "qrels queries" in str(w.message)] == [want]


def test_overlap_warning_for_every_run_form(tmp_path):
    """A run answering less than half of the qrels' topics gets the one OverlapWarning of every front end, whatever
    form it is given in (issue 34 item 8: only dict runs were checked)."""
    import pandas as pd

    from irmeasures_markov.experiments import pool_reduction
    from irmeasures_markov.io import load_run_dir, read_run_columns
    from irmeasures_markov.io._normalise import OverlapWarning, overlap_problem

    qrels = {q: {"a": 1, "b": 0} for q in ("1", "2", "3", "4", "5")}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"b": 2.0, "a": 1.0}}
    rdir = tmp_path / "runs"
    rdir.mkdir()
    path = rdir / "input.r"
    path.write_text("".join(f"{q} Q0 {d} {i} {s} r\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(docs.items())))
    frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    want = f"run 'r': {overlap_problem(set(qrels), run)}"
    assert "answers 2 of the 5 qrels queries" in want
    forms = {"dict": {"r": run}, "path": {"r": str(path)}, "PathLike": {"r": path},
             "RunColumns": {"r": read_run_columns(path)}, "DataFrame": {"r": frame},
             "run directory": load_run_dir(rdir)}
    expected = None
    for form, runs in forms.items():
        with pytest.warns(OverlapWarning) as record:
            ev = evaluate(["AP"], qrels, runs, progress=False)
        assert [str(w.message) for w in record if w.category is OverlapWarning] == [want], form
        expected = ev.values if expected is None else expected
        np.testing.assert_array_equal(ev.values, expected, err_msg=form)
        if form == "DataFrame":   # pool_reduction's runs are dicts or paths
            continue
        with pytest.warns(OverlapWarning) as record:   # before, path runs went unwarned (the workers read them)
            reduced = pool_reduction(["AP"], qrels, {**runs, "other": run}, percents=(50,), progress=False)
        assert [str(w.message) for w in record if w.category is OverlapWarning] == [want, want.replace("'r'",
                                                                                                        "'other'")]
        assert reduced.mean_scores[0, 0] == expected.mean()


def test_gdeval_restriction_on_every_front_end():
    """ERR@10 goes to gdeval.pl, which reads numeric query ids only: every front end refuses other ids with gdeval's
    restriction (issue 34 item 10: evaluate, compare and RelevanceEvaluator died in gdeval, CalledProcessError)."""
    import irmeasures_markov
    from irmeasures_markov.comparison import compare
    from irmeasures_markov.experiments import evaluate_grid
    from irmeasures_markov.io import InputError

    qrels = {"qa": {"d1": 1, "d2": 0}, "qb": {"d1": 1}}
    run, other = {"qa": {"d1": 1.0, "d2": 0.5}, "qb": {"d1": 2.0}}, {"qa": {"d2": 1.0}, "qb": {"d1": 1.0}}
    message = ("ERR@10: ir_measures computes it with gdeval, which reads numeric query ids only (digits after the "
               "last '-'), and query 'qa' is not one; number the queries, in qrels and run alike")
    calls = {"evaluate": lambda: evaluate(["ERR@10"], qrels, {"a": run}, progress=False),
             "evaluate_grid": lambda: evaluate_grid(["ERR@10"], qrels, {"a": run}, progress=False),
             "compare": lambda: compare(qrels, {"a": run, "b": other}, ["ERR@10"], progress=False),
             "RelevanceEvaluator": lambda: irmeasures_markov.RelevanceEvaluator(qrels, ["ERR@10"]).evaluate(run)}
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # ERR@10 is computed by ir_measures: said in a warning
            with pytest.raises(InputError) as info:
                call()
        assert str(info.value) == message, name
    # the run's ids too, once the qrels' are numeric
    numeric = {"401": qrels["qa"]}
    evaluator = irmeasures_markov.RelevanceEvaluator(numeric, ["ERR@10"])
    with pytest.raises(InputError, match="query 'x1' is not one"):
        evaluator.evaluate({"401": {"d1": 1.0}, "x1": {"d1": 1.0}})
