"""RelevanceEvaluator pauses the cyclic garbage collector while it indexes qrels and evaluates (and restores it)."""
import gc

import pytest

from irmeasures_markov.plugin import _pytrec
from irmeasures_markov.plugin._pytrec import RelevanceEvaluator


def _inputs(n: int = 3000):
    qrels = {f"q{i}": {"a": i % 3, "b": 1} for i in range(n)}
    run = {f"q{i}": {"a": 1.0, "b": 0.5, "c": 0.25} for i in range(n)}
    return qrels, run


def test_the_collector_is_paused_while_indexing_and_evaluating(monkeypatch):
    # probed from inside the work rather than by counting collections: a thread another test left behind
    # (Dask's comms pause and restore the collector themselves) can switch it on under our feet
    seen = []

    def probe(original):
        def probed(*args, **kwargs):
            seen.append(gc.isenabled())
            return original(*args, **kwargs)
        return probed
    monkeypatch.setattr(_pytrec, "qrels_index", probe(_pytrec.qrels_index))
    monkeypatch.setattr(_pytrec, "run_dict", probe(_pytrec.run_dict))
    qrels, run = _inputs()
    assert gc.isenabled()
    evaluator = RelevanceEvaluator(qrels, ["MP", "P@2"])
    results = evaluator.evaluate(run)
    assert seen == [False, False]
    assert gc.isenabled()
    assert len(results) == 3000 and results["q4"]["MP"] == RelevanceEvaluator({"q4": qrels["q4"]}, ["MP"]).evaluate(
        {"q4": run["q4"]})["q4"]["MP"]


def test_a_collector_the_caller_disabled_stays_disabled_and_errors_restore_it():
    qrels, run = _inputs(10)
    gc.disable()
    try:
        RelevanceEvaluator(qrels, ["MP"]).evaluate(run)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(TypeError):
        RelevanceEvaluator(qrels, ["MP"]).evaluate({"q1": {"a": 1.0, 5: 2.0}})
    assert gc.isenabled()
