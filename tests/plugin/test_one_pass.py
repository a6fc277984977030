"""Every entry point reads a run's scores once, ranks only as deep as its measures read, and reports
exactly what ir_measures' own Evaluator would."""
import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import providers as irm_providers
from measure_needs import Needs

import irmeasures_markov as imm
from irmeasures_markov import MP, PROVIDER, RelevanceEvaluator
from irmeasures_markov.ranking import UNJUDGED, QrelsIndex
from irmeasures_markov.ranking._prepared import PreparedRun, run_needs

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}, "q3": {"z": 1}}


class CountingDocs(dict):
    """A query's {docid: score} that counts how often its scores are read."""
    reads = 0

    def values(self):
        CountingDocs.reads += 1
        return super().values()


def counting_run():
    return {"q1": CountingDocs(a=0.5, b=2.0, c=1.0, u=0.1), "q2": CountingDocs(x=1.0, y=3.0),
            "q9": CountingDocs(x=1.0)}


@pytest.mark.parametrize("measures", [["MP"], ["MP", "map"], [MP @ 2, "nDCG@10", "P_5"]])
def test_relevance_evaluator_reads_each_score_once(measures):
    CountingDocs.reads = 0
    ours = RelevanceEvaluator(QRELS, measures).evaluate(counting_run())
    # q1 and q2 are evaluated; q9 has no judgments; pytrec_eval reads the dicts itself (not through .values())
    assert CountingDocs.reads == 2
    plain = {q: dict(d) for q, d in counting_run().items()}
    assert ours == RelevanceEvaluator(QRELS, measures).evaluate(plain)


def test_provider_reads_each_score_once():
    CountingDocs.reads = 0
    PROVIDER.evaluator([MP, MP @ 1], QRELS).values(counting_run())
    assert CountingDocs.reads == 2


@pytest.mark.parametrize("call", [
    lambda run: RelevanceEvaluator(QRELS, ["MP"]).evaluate(run),
    lambda run: RelevanceEvaluator(QRELS, ["map"]).evaluate(run),
    lambda run: PROVIDER.calc_aggregate([MP @ 1], QRELS, run),
    lambda run: ir_measures.calc_aggregate([MP], QRELS, run),
], ids=["evaluator-ours", "evaluator-pytrec", "provider", "ir_measures"])
@pytest.mark.parametrize("score", ["high", [1.0]])
def test_a_score_that_is_not_a_number_is_named_on_every_path(call, score):
    with pytest.raises(ValueError, match=r"query 'q2': document 'y' has score .*, which is not a number"):
        call({"q1": {"a": 1.0}, "q2": {"x": 1.0, "y": score}})


def test_ids_are_checked_before_scores():
    # a bad score in q1 and a bad docid in q2: the id rule (TypeError) speaks first, as it always did
    run = {"q1": {"a": float("nan")}, "q2": {7: 1.0}}
    with pytest.raises(TypeError, match="run: query 'q2': document id 7 is int"):
        RelevanceEvaluator(QRELS, ["MP"]).evaluate(run)


@st.composite
def tied_runs(draw):
    n_docs = draw(st.integers(1, 40))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels, run = {}, {}
    for q in ("1", "2", "3", "4"):
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
        qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
        run[q] = {d: float(draw(st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5]))) for d in retrieved}
    return qrels, run


@settings(max_examples=150, deadline=None)
@given(tied_runs(), st.integers(1, 45))
def test_ranking_to_a_depth_keeps_the_top_of_the_full_ranking(data, depth):
    qrels, run = data
    index = QrelsIndex(qrels)
    full, cut = PreparedRun(index, run), PreparedRun(index, run, [Needs(depth=depth)])
    assert full.qids == cut.qids
    for f, c in zip(full.queries, cut.queries):
        k = min(depth, len(f.docids))
        assert c.docids == f.docids[:k]
        np.testing.assert_array_equal(c.scores, f.scores[:k])
        np.testing.assert_array_equal(c.positive_grades, f.positive_grades[:k])
        np.testing.assert_array_equal(c.grades, f.grades[:k])
        assert UNJUDGED not in c.positive_grades
    for cutoff in {1, depth // 2 or 1, depth}:
        for judgments in (False, True):
            a = full.batch(rel=1, cutoff=cutoff, judgments=judgments, with_docids=True)
            b = cut.batch(rel=1, cutoff=cutoff, judgments=judgments, with_docids=True)
            np.testing.assert_array_equal(a.grades, b.grades)
            np.testing.assert_array_equal(a.offsets, b.offsets)
            np.testing.assert_array_equal(a.recall_base, b.recall_base)
            assert a.docids == b.docids


def test_depth_is_the_largest_cutoff_and_none_when_any_measure_reads_further():
    def depth(*measures):
        return run_needs(PROVIDER.evaluator(measures, QRELS).measures)[0]
    assert depth(MP @ 5, MP(recall=True) @ 20, imm.M2 @ 3) == 20
    assert depth(MP @ 5, MP) is None
    assert depth(MP(judged_only=True) @ 5) is None   # unjudged documents go before the cutoff applies


@pytest.mark.filterwarnings("ignore:.*no document with grade")
@pytest.mark.parametrize("measures", [[MP], [MP @ 2, MP(recall=True), imm.M4 @ 3], [MP, MP]])
@pytest.mark.parametrize("run", [
    {"q1": {"a": 0.5, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}},
    {"q3": {"z": 1.0}, "q1": {"c": 1.0}, "other": {"a": 1.0}},
    {},
    {"other": {"a": 1.0}},
])
def test_iter_calc_and_calc_aggregate_are_ir_measures_own(measures, run):
    qrels = {**QRELS, "q0": {"a": 1}, "q10": {"b": 0}}
    ev = PROVIDER.evaluator(measures, qrels)
    base = irm_providers.Evaluator
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(ev.iter_calc(run)) == list(base.iter_calc(ev, run))
        ours, theirs = ev.calc_aggregate(run), base.calc_aggregate(ev, run)
    assert list(ours) == list(theirs)
    assert all(ours[m] == theirs[m] for m in ours)   # bit for bit
