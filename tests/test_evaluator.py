"""The pytrec_eval-compatible evaluator."""
import pytest
import pytrec_eval

import irmeasures_markov
from irmeasures_markov import MP, RelevanceEvaluator, markov_precision

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}, "q3": {"z": 1}}
RUN = {"q1": {"a": 0.5, "b": 2.0, "c": 1.0, "u": 0.1}, "q2": {"x": 1.0, "y": 3.0}, "q9": {"x": 1.0}}


def test_same_keys_as_pytrec_eval_for_trec_names():
    ours = RelevanceEvaluator(QRELS, {"map", "P_5", "ndcg_cut_10", "recip_rank"}).evaluate(RUN)
    ref = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "P_5", "ndcg_cut_10", "recip_rank"}).evaluate(RUN)
    assert ours == ref


def test_our_measures_keyed_by_canonical_string():
    ev = RelevanceEvaluator(QRELS, {"map", "MP(model='GL_AD_ID')", MP(model="LO_OR_ID", recall=True) @ 3,
                                    "nDCG@10"})
    res = ev.evaluate(RUN)
    assert set(res) == {"q1", "q2"}  # like pytrec_eval: queries in both qrels and run
    assert set(res["q1"]) == {"map", "MP", "MP(model='LO_OR_ID',recall=True)@3", "nDCG@10"}
    # q1 ranking: b (0), c (2 -> rel), a (1 -> rel), u
    assert res["q1"]["MP"] == pytest.approx(markov_precision([0, 1, 1, 0], "GL_AD_ID"))
    assert res["q1"]["MP(model='LO_OR_ID',recall=True)@3"] == pytest.approx(
        markov_precision([0, 1, 1], "LO_OR_ID", recall_base=2))


def test_relevance_level_applies_to_our_measures():
    res = RelevanceEvaluator(QRELS, {"MP(model='UNIFORM',recall=True)", "map"}, relevance_level=2).evaluate(RUN)
    assert res["q1"]["MP(model='UNIFORM',recall=True)"] == pytest.approx(res["q1"]["map"])


def test_module_is_a_drop_in():
    assert irmeasures_markov.RelevanceEvaluator is RelevanceEvaluator


def test_bad_measure():
    with pytest.raises(NameError):
        RelevanceEvaluator(QRELS, {"NoSuchMeasure"})
