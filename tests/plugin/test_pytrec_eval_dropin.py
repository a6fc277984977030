"""irmeasures_markov.pytrec_eval as a drop-in for pytrec_eval (issue #24, item 15).

Each case of pytrec_eval's own test file (terrierteam/pytrec_eval,
tests/pytrec_eval_tests.py: nDCG with and without judged_docs_only_flag,
nicknames, ndcg_cut spellings, empty inputs, measure parameters, and the
trec_eval comparison through parse_qrel/parse_run, prefix matching of
trec_eval's output names and compute_aggregated_measure) is run here on the
same kind of inputs through pytrec_eval itself and through our module, and the
results must be identical.  Then the rest of the drop-in surface: dotted
spellings next to our measures, a cutoff of 0 in every spelling refused with a
ValueError instead of aborting the process, and prefix matching over
``supported_measures`` that does not depend on PYTHONHASHSEED.
"""
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

import irmeasures_markov
import irmeasures_markov.pytrec_eval as ours

REPO = Path(__file__).resolve().parents[2]

QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}


def same(a, b):
    """Equal results, NaN equal to NaN (trec_eval gives NaN for some measures of empty rankings)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def both(qrels, measures, run, **kwargs):
    """(pytrec_eval's result, ours) for one run."""
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    with np.errstate(all="ignore"):
        mine = ours.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
    return theirs, mine


# ----------------------------------------------------------------------------- pytrec_eval's own cases

NDCG_RUNS = [
    {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}},           # relevant document third
    {"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.5}, "q2": {}},           # first
    {"q1": {"d1": 4.0, "d2": 2.0, "d3": 1.5}, "q2": {}},           # second
    {"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.5}},                     # no entry for q2
    {"q1": {}, "q2": {"d1": 1.0, "d2": 0.0, "d3": 1.5}},           # q2 with an unjudged document on top
    {"q1": {}, "q2": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q10": {"d1": 1.0}},   # q10 judged nothing
]


@pytest.mark.filterwarnings("ignore:the run answers:RuntimeWarning")  # runs answering 1 of 3 queries on purpose
@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("run", NDCG_RUNS)
def test_ndcg_and_map_as_pytrec_eval(run, judged_only):
    qrels = {**QRELS, "q10": {}}   # a topic without judgments, which pytrec_eval leaves out
    theirs, mine = both(qrels, {"map", "ndcg"}, run, judged_docs_only_flag=judged_only)
    assert same(mine, theirs), (mine, theirs)
    assert "q10" not in mine


def test_ndcg_values_of_pytrec_eval_tests():
    """The values pytrec_eval's test expects, from our evaluator (a relevant document at rank 2: 1/log2(3))."""
    ev = ours.RelevanceEvaluator(QRELS, {"map", "ndcg"})
    assert ev.evaluate(NDCG_RUNS[0])["q1"]["ndcg"] == pytest.approx(0.5)
    assert ev.evaluate(NDCG_RUNS[2])["q1"]["ndcg"] == pytest.approx(1 / math.log2(3))
    judged = ours.RelevanceEvaluator(QRELS, {"map", "ndcg"}, judged_docs_only_flag=True)
    assert judged.evaluate(NDCG_RUNS[4])["q2"]["ndcg"] == pytest.approx(1.0)


@pytest.mark.parametrize("nicknames", [{"all_trec"}, {"set"}, {"official"}, {"official", "set", "ndcg"}])
def test_nicknames_as_pytrec_eval(nicknames):
    with pytest.warns(RuntimeWarning, match="the run holds no document"):
        theirs, mine = both(QRELS, nicknames, {"q1": {}, "q2": {}})
    assert same(mine, theirs)
    expected = set()
    for name in nicknames:
        expected |= {k for k in theirs["q1"]} if name in ours.supported_nicknames else {name}
    assert set(mine["q1"]) == expected
    assert ours.supported_nicknames == {k: set(v) for k, v in pytrec_eval.supported_nicknames.items()}


@pytest.mark.parametrize("measure,keys", [
    ("ndcg_cut.3", {"ndcg_cut_3"}),
    ("ndcg_cut.1", {"ndcg_cut_1"}),
    ("ndcg_cut.1,2,3,1000", {"ndcg_cut_1", "ndcg_cut_2", "ndcg_cut_3", "ndcg_cut_1000"}),
])
def test_ndcg_cut_dotted_spellings_as_pytrec_eval(measure, keys):
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    pe = pytrec_eval.RelevanceEvaluator(QRELS, {measure})
    ev = ours.RelevanceEvaluator(QRELS, {measure})
    for _ in range(2):   # the same result when evaluated again (pytrec_eval issue 38)
        theirs, mine = pe.evaluate(run), ev.evaluate(run)
        assert same(mine, theirs) and set(mine["q1"]) == keys


EMPTY_CASES = [
    ("empty run", QRELS, {"map", "ndcg"}, {}),
    ("empty measure set", QRELS, set(), {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}),
    ("empty qrels", {}, {"map", "ndcg"}, {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}),
    ("empty qrels and run", {}, {"map", "ndcg"}, {}),
    ("empty measures and run", QRELS, set(), {}),
    ("empty qrels and measures", {}, set(), {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}),
    ("empty everything (measures as a dict)", {}, {}, {}),
]


@pytest.mark.filterwarnings("ignore:.*:RuntimeWarning")
@pytest.mark.parametrize("label,qrels,measures,run", EMPTY_CASES, ids=[c[0] for c in EMPTY_CASES])
def test_empty_inputs_as_pytrec_eval(label, qrels, measures, run):
    theirs, mine = both(qrels, measures, run)
    assert mine == theirs


def test_empty_measure_set_gives_one_empty_row_per_query():
    run = {"q1": {"d1": 1.0}, "q2": {}, "q3": {"d1": 1.0}}   # q3 is not judged
    assert ours.RelevanceEvaluator(QRELS, set()).evaluate(run) == {"q1": {}, "q2": {}}


def test_measure_parameters_as_pytrec_eval():
    measures = ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"]
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    theirs, mine = both(QRELS, measures, run)
    assert same(mine, theirs)
    assert set(mine["q1"]) == {"ndcg_cut_1", "ndcg_cut_4", "ndcg_cut_15", "ndcg_cut_20", "recall_1000",
                               *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000))}


def _trec_files(tmp_path, seed=7):
    """A small graded qrels and run in TREC format: ties, unjudged documents, a topic without grade 2."""
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    for q in ("301", "302", "303"):
        docs = [f"D{q}-{i:03d}" for i in range(60)]
        top = 1 if q == "303" else 2
        for d in docs[:40]:
            qrels_lines.append(f"{q} 0 {d} {int(rng.integers(0, top + 1))}\n")
        ranked = rng.permutation(docs)[:50]
        scores = np.round(rng.normal(size=ranked.size), 1)   # rounded: tied scores
        for rank, (d, s) in enumerate(zip(ranked, scores), 1):
            run_lines.append(f"{q} Q0 {d} {rank} {s} STANDARD\n")
    (tmp_path / "qrels.test").write_text("".join(qrels_lines))
    (tmp_path / "results.test").write_text("".join(run_lines))
    return tmp_path / "qrels.test", tmp_path / "results.test"


def best_prefix(name, names):
    """The family of a trec_eval output name as pytrec_eval's test finds it: the longest common prefix."""
    return max(names, key=lambda n: len(os.path.commonprefix([n, name])))


@pytest.mark.parametrize("kwargs", [{}, {"relevance_level": 2}])
def test_trec_eval_comparison_as_pytrec_eval(tmp_path, kwargs):
    """parse_qrel/parse_run, prefix-matched trec_eval output names, per-query results and aggregates."""
    qrels_path, run_path = _trec_files(tmp_path)
    names = set(pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {"all_trec"}).evaluate({"q": {"d": 1.0}})["q"])
    results = {}
    for module in (pytrec_eval, ours):
        with open(qrels_path) as f:
            qrels = module.parse_qrel(f)
        with open(run_path) as f:
            run = module.parse_run(f)
        measures = {n if n in module.supported_measures else best_prefix(n, module.supported_measures)
                    for n in names}
        per_query = module.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)
        aggregated = {n: module.compute_aggregated_measure(n, [v[n] for v in per_query.values()]) for n in names}
        results[module.__name__] = (qrels, run, measures, per_query, aggregated)
    theirs, mine = results["pytrec_eval"], results["irmeasures_markov.pytrec_eval"]
    assert mine[0] == theirs[0] and mine[1] == theirs[1]            # the parsed files
    assert mine[2] == theirs[2]                                       # the prefix-matched families
    assert same(mine[3], theirs[3]) and same(mine[4], theirs[4])      # per query and aggregated


# ----------------------------------------------------------------------------- the module surface

def test_module_surface_is_reachable_both_ways():
    names = ["RelevanceEvaluator", "compute_aggregated_measure", "supported_measures", "supported_nicknames",
             "parse_run", "parse_qrel"]
    assert set(names) <= set(ours.__all__)
    for name in ("RelevanceEvaluator", "supported_measures"):  # also on the top level
        assert getattr(ours, name) is getattr(irmeasures_markov, name)
    assert set(pytrec_eval.__all__) <= set(dir(ours))
    assert set(pytrec_eval.supported_measures) < ours.supported_measures
    assert {"MP", "PH", "M1"} <= ours.supported_measures


def test_compute_aggregated_measure_follows_each_measure():
    assert ours.compute_aggregated_measure("num_rel", [1.0, 2.0]) == 3.0
    assert ours.compute_aggregated_measure("gm_map", [math.log(0.5), math.log(0.125)]) == pytest.approx(0.25)
    assert ours.compute_aggregated_measure("P_5", [0.2, 0.4]) == pytest.approx(0.3)
    assert ours.compute_aggregated_measure("MP", [0.5, 0.25]) == pytest.approx(0.375)
    assert ours.compute_aggregated_measure("NumRet", [3.0, 4.0]) == 7.0           # ir_measures' sum
    assert ours.compute_aggregated_measure("MP", []) == 0.0                         # our measures' default


def test_dotted_spellings_beside_our_measures():
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d2": 2.0, "d3": 1.0, "d9": 0.5}}
    mine = ours.RelevanceEvaluator(QRELS, {"P.5", "recall.1000", "map_cut.10", "ndcg_cut.1,4", "MP"}).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(QRELS, {"P.5", "recall.1000", "map_cut.10", "ndcg_cut.1,4"}).evaluate(run)
    for q in theirs:
        assert {k: v for k, v in mine[q].items() if k != "MP"} == theirs[q]
    mp = irmeasures_markov.PROVIDER.evaluator([irmeasures_markov.MP], QRELS)
    assert {m.query_id: m.value for m in mp.iter_calc(run)} == {q: mine[q]["MP"] for q in mine}


@pytest.mark.filterwarnings("ignore:.*:RuntimeWarning")
def test_rows_are_pytrec_eval_rows_and_every_measure_has_a_value_in_each():
    """Rows: judged queries with a run entry, an empty ranking included; our measures and ir_measures' score
    an empty ranking as an unanswered query (iter_calc's value), pytrec_eval's as pytrec_eval does."""
    qrels = {**QRELS, "q10": {}}
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}, "q10": {"d1": 1.0}, "q11": {"d1": 1.0}}
    mine = ours.RelevanceEvaluator(qrels, {"map", "P.5", "MP", "PH", "nDCG@5"}).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5"}).evaluate(run)
    assert mine.keys() == theirs.keys() == {"q1", "q2"}
    for q in mine:
        assert set(mine[q]) == {"map", "P_5", "MP", "PH", "nDCG@5"}
        assert {k: mine[q][k] for k in theirs[q]} == theirs[q]
    for name, m in (("MP", irmeasures_markov.MP), ("PH", irmeasures_markov.PH)):
        expected = {x.query_id: x.value for x in irmeasures_markov.PROVIDER.evaluator([m], QRELS).iter_calc(run)}
        assert {q: mine[q][name] for q in mine} == {q: expected[q] for q in mine}
    assert mine["q2"]["nDCG@5"] == 0.0


# ----------------------------------------------------------------------------- cutoffs in every spelling

ZERO_CUTOFFS = ["map_cut.0", "map_cut.5,0", "map_cut_0", "P.0", "P_5,0", "ndcg_cut.0,5", "recall.0",
                "success.0", "relative_P.0", "ndcg.3", "G.1", "P.0.5"]


def test_zero_cutoffs_in_every_spelling_cannot_abort_the_process():
    # on the code before this change 'map_cut.0' ended the interpreter (trec_eval assertion, SIGABRT, rc 134)
    code = textwrap.dedent(f"""
        import irmeasures_markov.pytrec_eval as pytrec_eval
        for spec in {ZERO_CUTOFFS!r}:
            try:
                pytrec_eval.RelevanceEvaluator({{"q": {{"a": 1}}}}, {{spec}}).evaluate({{"q": {{"a": 1.0}}}})
            except ValueError as exc:
                print("refused", exc)
            else:
                print("evaluated", spec)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stdout.splitlines()
    assert len(lines) == len(ZERO_CUTOFFS) and all(line.startswith("refused measure") for line in lines), lines
    assert lines[0].startswith("refused measure 'map_cut.0': the cutoffs of map_cut must be positive integers")
    assert "pytrec_eval evaluates ndcg without a parameter only" in lines[ZERO_CUTOFFS.index("ndcg.3")]


def test_no_spelling_of_any_pytrec_eval_family_aborts_the_process():
    """Every family with a range of parameters, in both spellings, in one child process: each is evaluated or
    refused with a ValueError; pytrec_eval itself aborts on about a hundred of them."""
    code = textwrap.dedent("""
        import pytrec_eval
        import irmeasures_markov.pytrec_eval as ours
        refused = 0
        for family in sorted(pytrec_eval.supported_measures):
            for param in ("0", "1", "5", "0.5", "2.0", "1000000", "1,0", "5,", ","):
                for sep in "_.":
                    try:
                        ours.RelevanceEvaluator({"q": {"a": 1, "b": 0}}, {family + sep + param}).evaluate(
                            {"q": {"a": 1.0, "b": 2.0}})
                    except ValueError:
                        refused += 1
        print("done", refused)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("done ")


def test_one_cutoff_rule_for_values_and_names():
    from irmeasures_markov._util._cutoffs import check_cutoff, check_measure_cutoffs, trec_measure_parts
    assert trec_measure_parts("map_cut.5,0") == ("map_cut", "5,0")
    assert trec_measure_parts("ndcg_cut_10") == ("ndcg_cut", "10")
    assert trec_measure_parts("map") == ("map", None)
    assert trec_measure_parts("MP") == (None, None)
    assert check_cutoff(np.int64(5), "x") == 5 and check_cutoff(None, "x") is None
    for bad in (0, -1, True, np.bool_(True), 2.0, "5"):
        with pytest.raises(ValueError, match="x: the cutoff must be a positive integer"):
            check_cutoff(bad, "x")
    for measure in (irmeasures_markov.MP @ 0, "MP@0"):
        with pytest.raises(ValueError, match="cutoff must be a positive integer"):
            ours.RelevanceEvaluator(QRELS, [measure])
    check_measure_cutoffs("map_cut.5,10")   # accepted
    check_measure_cutoffs("ndcg_cut_5,")    # pytrec_eval skips the empty item


def test_the_cutoff_rule_lives_in_one_place():
    """No other module of the package states the rule itself: each calls irmeasures_markov._util._cutoffs."""
    package = REPO / "irmeasures_markov"
    stating = [str(p.relative_to(REPO)) for p in package.rglob("*.py")
               if p.name != "_cutoffs.py" and "cutoff must be a positive integer" in p.read_text(encoding="utf-8")]
    assert stating == []


# ----------------------------------------------------------------------------- prefix matching and hash seeds

@pytest.mark.slow  # eight child interpreters, one per hash seed
def test_our_names_never_capture_pytrec_eval_prefix_matching():
    """For every trec_eval output name the longest-common-prefix match over our supported_measures picks
    pytrec_eval's family, whatever PYTHONHASHSEED is (a plain set handed 'P_5' to 'PatH' or 'PH' under some)."""
    code = textwrap.dedent("""
        import os, pytrec_eval
        import irmeasures_markov.pytrec_eval as ours
        names = set(pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {"all_trec"}).evaluate({"q": {"d": 1.0}})["q"])
        def best(name, pool):
            return max(pool, key=lambda n: len(os.path.commonprefix([n, name])))
        wrong = sorted((n, best(n, ours.supported_measures)) for n in names
                       if best(n, ours.supported_measures) != best(n, pytrec_eval.supported_measures))
        first = next(iter(ours.supported_measures))
        print(wrong, first in pytrec_eval.supported_measures)
    """)
    outputs = set()
    for seed in ("0", "1", "2", "3", "7", "11", "42", "123"):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.add(proc.stdout.strip())
    assert outputs == {"[] True"}


def test_supported_measures_lists_pytrec_eval_names_first():
    listed = list(ours.supported_measures)
    n = len(pytrec_eval.supported_measures)
    assert listed[:n] == [m for m in pytrec_eval.supported_measures]
    assert listed[n:] == sorted(ours.supported_measures - pytrec_eval.supported_measures)
    assert len(listed) == len(ours.supported_measures)


# what pytrec_eval itself does with unusual cutoff spellings: evaluates (reading the cutoffs at the start of the
# parameter, each as its integer part), refuses (ValueError), or aborts the process; singles and pairs
PARITY_CASES = [
    ["ndcg_cut.10,20,23.4"], ["P_5abc"], ["P_1.9"], ["P_1e2"], ["P_5,,10"], ["P_5,"], ["P_007"], ["P_2,1,2"],
    ["P_5;6"], ["P_5,abc"], ["P_5,6x,7"], ["P.5,6"], ["ndcg_cut_5x"], ["P_10,9"], ["P_5", "P.5"],
    ["official", "P_05"], ["recall_5,5"], ["P_99999999999999999999"],
    ["P_0.5"], ["P_0x10"], ["P_5,0"], ["P_1,01"], ["P_5", "P_05"], ["P_5", "P_5.0"], ["P_5.7", "P_5.2"],
    ["ndcg_5"], ["recall.5,00"], ["success_1,00001"], ["map_cut_1,0.5"], ["ndcg_cut_5", "P_5,5.5"],
    ["P_ 5"], ["P_+5"], ["P_-5"], ["P_,5"], ["P_abc"],
]
_CASE = """
import json, sys
import {module} as pytrec_eval
qrels, run = {{"q": {{"a": 1, "b": 0, "c": 1}}}}, {{"q": {{"a": 3.0, "b": 2.0, "c": 1.0}}}}
for names in json.loads(sys.argv[1]):
    try:
        print(json.dumps(sorted(pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)["q"].items())))
    except ValueError:
        print("refused")
    sys.stdout.flush()
"""


@pytest.mark.slow  # a child process per case for pytrec_eval (it aborts on some)
def test_the_drop_in_accepts_what_pytrec_eval_accepts_and_refuses_what_would_abort_it():
    """Each case: pytrec_eval's values where it evaluates, a ValueError where it refuses or would abort."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(module, cases):
        proc = subprocess.run([sys.executable, "-c", _CASE.format(module=module), json.dumps(cases)],
                              capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
        return proc.returncode, proc.stdout.splitlines()

    theirs = []
    for case in PARITY_CASES:
        rc, out = run("pytrec_eval", [case])
        theirs.append(out[0] if rc == 0 else "aborted")
    rc, ours = run("irmeasures_markov.pytrec_eval", PARITY_CASES)
    assert rc == 0 and len(ours) == len(PARITY_CASES)
    for case, mine, native in zip(PARITY_CASES, ours, theirs):
        assert mine == (native if native != "aborted" else "refused"), (case, mine, native)
    assert theirs.count("aborted") >= 10 and sum(t.startswith("[") for t in theirs) >= 15
