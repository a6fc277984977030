"""Runs kept as columns (what ``load_run_dir`` gives) through every entry point that hands a run on:
``experiments.evaluate`` (native and ``ir_measures``/pytrec_eval measures) and the pytrec_eval-compatible
``RelevanceEvaluator`` give the values of the same file read as dicts, bit for bit.

pytrec_eval and ``ir_measures`` take only dicts: a :class:`RunColumns` reaches
them as its ``to_dict()`` (``io.pytrec.run_for_pytrec_eval``).
"""
import warnings

import numpy as np
import pytest
from random_runs import tied_run
from reference_readers import read_trec_run_lines  # byte-exact dicts, as the package evaluates them

from irmeasures_markov.experiments import evaluate
from irmeasures_markov.io._run_columns import RunColumns, read_run_columns
from irmeasures_markov.pytrec_eval import RelevanceEvaluator

#: native (float64 preparation), ir_measures/pytrec_eval only (R@100, Judged@10, NumRet), the package's families
MEASURES = ["AP", "nDCG@10", "Bpref", "P@5", "RR", "Rprec", "R@100", "Judged@10", "NumRet", "MP",
            "TBG(default_length=500)", "PH", "M1(dist='RBP')"]


def write_run(tmp_path, seed, ascii_ids):
    qrels, run, universe = tied_run(seed, 5, 30, scores=(-2, 2), grades=(-1, 2))
    suffix = "" if ascii_ids else "\u00e9\udcff"
    run = {q: {d + suffix: s for d, s in docs.items()} for q, docs in run.items()}
    qrels = {q: {d + suffix: g for d, g in docs.items()} for q, docs in qrels.items()}
    run["unjudged"] = {universe[0] + suffix: 1.0}
    path = tmp_path / f"input.r{seed}"
    lines = [f"{q} Q0 {d} {k} {s!r} t" for q, docs in run.items() for k, (d, s) in enumerate(docs.items())]
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    return qrels, path


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("ascii_ids", [True, False])
def test_evaluate_takes_columns_for_every_measure(tmp_path, native, ascii_ids):
    qrels, path = write_run(tmp_path, 3, ascii_ids)
    columns, dicts = read_run_columns(path), read_trec_run_lines(path)
    assert isinstance(columns, RunColumns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # a topic without a relevant document, named
        got = evaluate(MEASURES, qrels, {"r": columns, "s": dicts}, native=native, progress=False)
        want = evaluate(MEASURES, qrels, {"r": dicts, "s": dicts}, native=native, progress=False)
    assert got.values.tobytes() == want.values.tobytes()
    assert not np.isnan(got.values).all()


@pytest.mark.parametrize("ascii_ids", [True, False])
def test_the_pytrec_eval_compatible_evaluator_takes_columns(tmp_path, ascii_ids):
    qrels, path = write_run(tmp_path, 4, ascii_ids)
    evaluator = RelevanceEvaluator(qrels, {"map", "P.5", "ndcg_cut.10", "recall.100", "MP", "bpref"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = evaluator.evaluate(read_run_columns(path))
        want = evaluator.evaluate(read_trec_run_lines(path))
    assert got == want and list(got) == list(want) and len(got) == 5


def test_overlap_warning_of_columns_as_of_dicts_without_a_dict_per_query(monkeypatch):
    """A run kept as columns gets the overlap warnings of the same run as dicts, counted from its bounds: its
    mapping view (a dict per query) is never made (it cost 0.4 s of 1 s evaluating 20 TREC-8 runs)."""
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(5)}
    few = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"b": 1.0}}
    disjoint = {"x1": {"a": 1.0}}

    def caught(runs):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            evaluate(["AP"], qrels, runs, progress=False)
        return [str(w.message) for w in got if "run '" in str(w.message)]
    as_dicts = caught({"few": few, "disjoint": disjoint})
    assert len(as_dicts) == 2
    columns = {name: RunColumns(list(run), np.array([0, *np.cumsum([len(d) for d in run.values()])]),
                                "\n".join(d for docs in run.values() for d in docs),
                                np.array([s for docs in run.values() for s in docs.values()]))
               for name, run in (("few", few), ("disjoint", disjoint))}

    def no_dict(self, qid):
        raise AssertionError("a query's dict was made")
    monkeypatch.setattr(RunColumns, "__getitem__", no_dict)
    assert caught(columns) == as_dicts
