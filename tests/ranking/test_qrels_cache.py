"""Qrels indexed once per qrels object, reused across ir_measures calls only while the qrels are unchanged."""
import gc
import weakref

import ir_measures
import numpy as np
import pandas as pd
import pytest

import irmeasures_markov as imm
from irmeasures_markov import MP, PROVIDER, RelevanceEvaluator, markov_precision
from irmeasures_markov._util._errors import InputError
from irmeasures_markov.ranking import PreparedRun, QrelsIndex
from irmeasures_markov.ranking import _cache as qrels_cache

MEASURES = [MP @ 3, MP(model="LO_OR_LID", recall=True), MP(model="UNIFORM", recall=True) @ 5]


def make_qrels():
    return {"q1": {"a": 1, "b": 0, "c": 2, "d": 1},
            "q2": {"x": 1, "y": 0},
            "q3": {"z": 1}}


def make_run():
    return {"q1": {"a": 0.5, "b": 2.0, "c": 1.0, "u": 0.1, "d": 1.0, "e": 3.0},
            "q2": {"x": 1.0, "y": 3.0, "w": 3.0},
            "q3": {"z": 0.2, "v": 0.4},
            "q9": {"x": 1.0}}


def trec_ranking(docs):
    """trec_eval's order, written out: score descending, then docid descending."""
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def by_hand(qrels, run, measure):
    """The measure's mean over the qrels queries, from rankings sorted in Python and markov_precision()."""
    values = []
    for q, judged in qrels.items():
        ranking = trec_ranking(run.get(q, {}))[:measure.cutoff]
        if not ranking:
            values.append(0.0)
            continue
        relevant = [judged.get(d, 0) >= 1 for d in ranking]
        rb = sum(g >= 1 for g in judged.values()) if measure["recall"] else None
        values.append(markov_precision(relevant, measure["model"], recall_base=rb) if any(relevant) else 0.0)
    return sum(values) / len(values)


def fresh(qrels, run, measures=MEASURES):
    """calc_aggregate with the cache emptied first: the judgments are checked and indexed anew."""
    qrels_cache.clear()
    return ir_measures.calc_aggregate(measures, qrels, run)


@pytest.fixture(autouse=True)
def empty_cache():
    qrels_cache.clear()
    yield
    qrels_cache.clear()


def test_calls_with_the_same_qrels_index_them_once():
    qrels, run = make_qrels(), make_run()
    first = ir_measures.calc_aggregate(MEASURES, qrels, run)
    assert qrels_cache.cache_info() == (0, 1, 1)
    for _ in range(3):
        assert ir_measures.calc_aggregate(MEASURES, qrels, run) == first
        list(ir_measures.iter_calc(MEASURES, qrels, run))
    assert qrels_cache.cache_info() == (6, 1, 1)
    # and the index is the one object every evaluator shares
    assert PROVIDER.evaluator([MP], qrels).qrels_index is PROVIDER.evaluator([MP @ 5], qrels).qrels_index
    for m in MEASURES:
        assert first[m] == pytest.approx(by_hand(qrels, run, m), abs=1e-15)


def _mutations():
    def add_query(q):
        q["q4"] = {"x": 1}

    def remove_query(q):
        del q["q3"]

    def add_judgment(q):
        q["q1"]["e"] = 1

    def remove_judgment(q):
        del q["q1"]["c"]

    def change_grade(q):
        q["q1"]["b"] = 1

    def lower_grade(q):
        q["q2"]["x"] = 0

    def rename_document(q):
        q["q2"]["w"] = q["q2"].pop("x")

    def replace_query_dict(q):
        q["q2"] = {"y": 1}

    def reorder_queries(q):
        q["q1"] = q.pop("q1")

    return [add_query, remove_query, add_judgment, remove_judgment, change_grade, lower_grade, rename_document,
            replace_query_dict, reorder_queries]


@pytest.mark.filterwarnings("ignore:.*no document with grade")
@pytest.mark.parametrize("mutate", _mutations(), ids=lambda f: f.__name__)
def test_a_mutated_dict_is_indexed_again(mutate):
    qrels, run = make_qrels(), make_run()
    before = ir_measures.calc_aggregate(MEASURES, qrels, run)
    mutate(qrels)
    after = ir_measures.calc_aggregate(MEASURES, qrels, run)
    assert qrels_cache.cache_info().hits == 0
    assert after == fresh(qrels, run)
    for m in MEASURES:
        assert after[m] == pytest.approx(by_hand(qrels, run, m), abs=1e-15)
    if mutate.__name__ != "reorder_queries":
        assert after != before   # each mutation changes a value: the test would see a stale index
    # the evaluator's own index is rebuilt, and later calls hit again
    ir_measures.calc_aggregate(MEASURES, qrels, run)
    assert qrels_cache.cache_info().hits == 1


def test_a_grade_changed_to_an_equal_float_raises_as_on_a_first_call():
    qrels, run = make_qrels(), make_run()
    ir_measures.calc_aggregate(MEASURES, qrels, run)
    qrels["q1"]["a"] = 1.0    # == 1, so only the type tells
    with pytest.raises(TypeError, match=r"query 'q1', document 'a': grade 1.0 is float"):
        ir_measures.calc_aggregate(MEASURES, qrels, run)
    qrels["q1"]["a"] = np.float64(1)
    with pytest.raises(TypeError, match="not an integer"):
        ir_measures.calc_aggregate(MEASURES, qrels, run)
    qrels["q1"]["a"] = np.True_
    with pytest.raises(TypeError, match="not an integer"):
        RelevanceEvaluator(qrels, ["MP"])
    # integer types check_qrels accepts are accepted on a hit too
    qrels["q1"]["a"] = np.int64(1)
    qrels["q2"]["x"] = True
    assert ir_measures.calc_aggregate(MEASURES, qrels, run) == fresh(qrels, run)


def test_a_grade_out_of_range_raises_after_a_hit():
    qrels, run = make_qrels(), make_run()
    ir_measures.calc_aggregate(MEASURES, qrels, run)
    qrels["q1"]["a"] = 2 ** 31
    with pytest.raises(InputError, match="outside the signed 32-bit range"):
        ir_measures.calc_aggregate(MEASURES, qrels, run)


def test_the_cache_keeps_no_qrels_dict_alive_and_is_bounded():
    class Qrels(dict):   # a dict (cached as one) that can be weakly referenced, to watch it die
        pass

    qrels, run = Qrels(make_qrels()), make_run()
    alive = weakref.ref(qrels)
    value = ir_measures.calc_aggregate(MEASURES, qrels, run)
    del qrels
    gc.collect()
    assert alive() is None
    # a new dict, maybe at the same address, with other judgments: the comparison decides, never the address
    other = make_qrels()
    other["q1"]["b"] = 3
    assert ir_measures.calc_aggregate(MEASURES, other, run) == fresh(other, run) != value
    many = [make_qrels() for _ in range(qrels_cache.MAX_ENTRIES + 3)]
    for q in many:
        ir_measures.calc_aggregate([MP], q, run)
    assert qrels_cache.cache_info().size == qrels_cache.MAX_ENTRIES


def frame(qrels):
    return pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                        columns=["query_id", "doc_id", "relevance"])


def test_dataframes_are_cached_weakly_and_checked_column_by_column():
    run = make_run()
    df = frame(make_qrels())
    expected = fresh(make_qrels(), run)
    qrels_cache.clear()
    assert ir_measures.calc_aggregate(MEASURES, df, run) == expected
    assert ir_measures.calc_aggregate(MEASURES, df, run) == expected
    assert qrels_cache.cache_info() == (1, 1, 1)
    df.loc[df["doc_id"] == "b", "relevance"] = 1       # a grade
    changed = make_qrels()
    changed["q1"]["b"] = 1
    assert ir_measures.calc_aggregate(MEASURES, df, run) == fresh(changed, run)
    df.loc[df["doc_id"] == "x", "doc_id"] = "w"         # a docid
    changed["q2"]["w"] = changed["q2"].pop("x")
    assert ir_measures.calc_aggregate(MEASURES, df, run) == fresh(changed, run)
    df.loc[len(df)] = ["q3", "v", 1]                    # a row
    changed["q3"]["v"] = 1
    assert ir_measures.calc_aggregate(MEASURES, df, run) == fresh(changed, run)
    alive = weakref.ref(df)
    qrels_cache.clear()
    ir_measures.calc_aggregate(MEASURES, df, run)
    assert qrels_cache.cache_info().size == 1
    del df
    gc.collect()
    assert alive() is None and qrels_cache.cache_info().size == 0


def test_a_dataframe_whose_grades_become_floats_raises():
    run = make_run()
    df = frame(make_qrels())
    ir_measures.calc_aggregate(MEASURES, df, run)
    df["relevance"] = df["relevance"].astype(float)
    with pytest.raises(TypeError, match="grade 1.0 is float"):
        ir_measures.calc_aggregate(MEASURES, df, run)


def test_qrels_that_can_be_read_once_are_read_on_every_call():
    run = make_run()
    expected = fresh(make_qrels(), run)
    qrels_cache.clear()
    records = [ir_measures.Qrel(q, d, g) for q, docs in make_qrels().items() for d, g in docs.items()]
    assert ir_measures.calc_aggregate(MEASURES, records, run) == expected
    assert ir_measures.calc_aggregate(MEASURES, iter(records), run) == expected
    assert PROVIDER.calc_aggregate(MEASURES, (r for r in records), run) == expected
    assert qrels_cache.cache_info() == (0, 0, 0)


def test_every_call_still_warns_about_queries_without_relevant_documents():
    qrels, run = make_qrels(), make_run()
    qrels["q3"] = {"z": 0}
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="1 qrels query has no document with grade >= 1.*: q3"):
            ir_measures.calc_aggregate([MP], qrels, run)
    assert qrels_cache.cache_info().hits == 1


def test_relevance_evaluators_share_the_index_but_not_the_results():
    qrels, run = make_qrels(), make_run()
    a = RelevanceEvaluator(qrels, ["MP", "map"]).evaluate(run)
    qrels["q1"]["b"] = 2
    b = RelevanceEvaluator(qrels, ["MP", "map"]).evaluate(run)
    assert a != b and b == RelevanceEvaluator(make_qrels() | {"q1": qrels["q1"]}, ["MP", "map"]).evaluate(run)


def test_uncached_index_gives_bit_identical_values():
    """The cached, depth-limited evaluator path against a fresh QrelsIndex and a full ranking."""
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(-1, 3)) for j in rng.choice(60, 25, replace=False)}
             for i in range(12)}
    runs = [{q: {f"d{j}": float(rng.integers(0, 6)) for j in rng.choice(60, int(rng.integers(0, 40)),
                                                                       replace=False)}
             for q in list(qrels)[:10] + ["extra"]} for _ in range(4)]
    measures = [MP @ 5, MP(model="GL_AD_LID", recall=True) @ 20, MP(model="LO_OR_ID") @ 1,
                imm.M1 @ 7, imm.PH(order=2) @ 4]
    assert PROVIDER.evaluator(measures, qrels).prepare(runs[0]).depth == 20   # the largest cutoff
    assert max(len(docs) for run in runs for docs in run.values()) > 20
    for run in runs:
        got = ir_measures.calc_aggregate(measures, qrels, run)
        prepared = PreparedRun(QrelsIndex(qrels), run)
        assert prepared.depth is None
        for m in measures:
            vals = np.asarray(m.compute(prepared), dtype=np.float64).tolist()
            mean = 0.0
            for v in vals + [m.DEFAULT] * (len(qrels) - len(vals)):
                mean += v
            assert got[m] == mean / len(qrels), m
    assert qrels_cache.cache_info().hits == len(runs)   # the PROVIDER.evaluator above indexed the qrels
