"""In-memory inputs at the boundary: one rule for ids and grades on every entry point,
native measures that would abort pytrec_eval, the provider alone, equal parameters, empty inputs."""
import subprocess
import sys
import textwrap
import warnings

import ir_measures
import numpy as np
import pytest
from measure_needs import Needs

from irmeasures_markov import M1, M2, M3, M4, MP, PH, PROVIDER, TBG, MPcont, RelevanceEvaluator
from irmeasures_markov._util._errors import InputError, InputTypeError
from irmeasures_markov.io._normalise import to_qrels_dict, to_run_dict
from irmeasures_markov.io._tokens import GRADE_MAX, GRADE_MIN
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import QrelsIndex

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
RUN = {"q1": {"a": 0.5, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 3.0}}


# ---- ids must be str -------------------------------------------------------------------------

BAD_ID_PAIRS = {
    "int docids both sides": ({"q": {1: 1}}, {"q": {1: 2.0}}, "document id 1 is int"),
    "int docid in the run": ({"q": {"1": 1}}, {"q": {1: 2.0}}, r"run: query 'q': document id 1 is int"),
    "int docid in the qrels": ({"q": {1: 1}}, {"q": {"1": 2.0}}, r"qrels: query 'q': document id 1 is int"),
    "int qid in the run": ({"1": {"a": 1}}, {1: {"a": 2.0}}, r"run: query id 1 is int"),
    "int qid in the qrels": ({1: {"a": 1}}, {"1": {"a": 2.0}}, r"qrels: query id 1 is int"),
    "float docid": ({"q": {"1": 1}}, {"q": {1.0: 2.0}}, r"document id 1.0 is float"),
    "bytes docid": ({"q": {"a": 1}}, {"q": {b"a": 2.0}}, r"document id b'a' is bytes"),
}


@pytest.mark.parametrize("qrels,run,match", list(BAD_ID_PAIRS.values()), ids=list(BAD_ID_PAIRS))
def test_non_str_ids_raise_type_error_on_the_ir_measures_path(qrels, run, match):
    # today's main: 0.0 for int docids on both sides (qrels ids were str()-ed, run ids not)
    with pytest.raises(TypeError, match=match) as info:
        ir_measures.calc_aggregate([MP], qrels, run)
    assert "convert them with str()" in str(info.value)
    assert isinstance(info.value, InputError)  # the command line reports it like any bad input


@pytest.mark.parametrize("qrels,run,match", list(BAD_ID_PAIRS.values()), ids=list(BAD_ID_PAIRS))
def test_non_str_ids_raise_type_error_in_relevance_evaluator(qrels, run, match):
    for measures in ({"map"}, {"MP"}, {"map", "MP", "nDCG@10"}):
        with pytest.raises(TypeError, match=match):
            RelevanceEvaluator(qrels, measures).evaluate(run)


def test_non_str_ids_raise_in_rankings_and_experiments():
    with pytest.raises(TypeError, match="qrels: query 'q': document id 1 is int"):
        QrelsIndex({"q": {1: 1}})
    index = QrelsIndex({"q": {"1": 1}})
    for join in (False, True):  # the docid join for per-document lookups checks them too
        with pytest.raises(TypeError, match="run: query 'q': document id 1 is int"):
            PreparedRun(index, {"q": {"0": 1.0, 1: 2.0}}, [Needs(document_values=join)])
    with pytest.raises(TypeError, match="run: query 'other': document id 7 is int"):
        PreparedRun(index, {"q": {"1": 1.0}, "other": {7: 1.0}})  # a run-only query too: one rule
    from irmeasures_markov.experiments import evaluate
    with pytest.raises(TypeError, match="document id 1 is int"):
        evaluate([MP], {"q": {"1": 1}}, {"r": {"q": {1: 2.0}}}, progress=False)


def test_str_subclasses_are_str():
    run = {np.str_("q1"): {np.str_(d): s for d, s in RUN["q1"].items()}}
    assert ir_measures.calc_aggregate([MP], {"q1": QRELS["q1"]}, run)[MP] == \
        ir_measures.calc_aggregate([MP], {"q1": QRELS["q1"]}, {"q1": RUN["q1"]})[MP]


def test_dataframes_with_int_ids_raise_with_astype_hint():
    import pandas as pd
    run = pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": [5], "relevance": [1]})
    # today's main: the run's ids were str()-ed, so this evaluated
    with pytest.raises(TypeError, match=r"run DataFrame, row 0: query_id 1 is int .*astype\(str\)"):
        to_run_dict(run)
    with pytest.raises(TypeError, match=r"qrels DataFrame, row 0: query '1', doc_id 5 is int .*astype\(str\)"):
        to_qrels_dict(qrels)
    with pytest.raises(TypeError, match="query_id 1 is int"):
        PROVIDER.calc_aggregate([MP], {"1": {"a": 1}}, run)
    good = run.assign(query_id=run["query_id"].astype(str))
    assert to_run_dict(good) == {"1": {"a": 1.0, "b": 2.0}}
    object_mixed = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", 2], "score": [1.0, 2.0]})
    with pytest.raises(TypeError, match=r"row 1: query '1', doc_id 2 is int"):
        to_run_dict(object_mixed)


def test_namedtuples_with_int_ids_raise():
    with pytest.raises(TypeError, match=r"run item 2: query 'q': document id 3 is int"):
        to_run_dict([ir_measures.ScoredDoc("q", "a", 1.0), ir_measures.ScoredDoc("q", 3, 1.0)])
    with pytest.raises(TypeError, match=r"run item 1: query id 3 is int"):
        to_run_dict([ir_measures.ScoredDoc(3, "a", 1.0)])
    with pytest.raises(TypeError, match=r"qrels: query 'q': document id 3 is int"):
        to_qrels_dict([ir_measures.Qrel("q", 3, 1)])


def test_input_type_error_is_a_type_error_and_an_input_error():
    assert issubclass(InputTypeError, TypeError) and issubclass(InputTypeError, InputError)
    assert issubclass(InputError, ValueError)


# ---- grades: integers in int32 ---------------------------------------------------------------

@pytest.mark.parametrize("grade", [2 ** 31, 4294967297, -2 ** 31 - 1, 2 ** 70])
def test_grades_outside_int32_raise_input_error_everywhere(grade):
    qrels = {"q": {"a": grade, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    # today's main: pytrec_eval reads 4294967297 as 0 (map 0.5) while MP counted it relevant;
    # above int64 an OverflowError
    match = rf"qrels: query 'q', document 'a': grade {grade} is outside the signed 32-bit range"
    with pytest.raises(InputError, match=match):
        RelevanceEvaluator(qrels, {"map"})
    with pytest.raises(InputError, match=match):
        ir_measures.calc_aggregate([MP], qrels, run)
    with pytest.raises(InputError, match=match):
        QrelsIndex(qrels)


def test_grades_at_the_int32_bounds_are_accepted():
    qrels = {"q": {"a": GRADE_MAX, "b": GRADE_MIN, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    # (not through pytrec_eval here: it allocates per grade level, ~40 s for a grade of 2**31 - 1)
    res = RelevanceEvaluator(qrels, {"MP(model='UNIFORM',recall=True)"}).evaluate(run)["q"]
    ref = RelevanceEvaluator({"q": {"a": 1, "b": -1, "c": 1}}, {"map"}).evaluate(run)["q"]
    assert res["MP(model='UNIFORM',recall=True)"] == pytest.approx(ref["map"])


@pytest.mark.parametrize("grade", [1.5, 1.0, "1", None, np.float64(1.0)])
def test_non_integer_grades_raise_type_error(grade):
    qrels = {"q": {"a": grade}}
    # today's main: int(1.5) == 1 for our measures, a TypeError from pytrec_eval for map
    with pytest.raises(TypeError, match=r"qrels: query 'q', document 'a': grade .* not an integer"):
        ir_measures.calc_aggregate([MP], qrels, {"q": {"a": 1.0}})
    with pytest.raises(TypeError, match="not an integer"):
        RelevanceEvaluator(qrels, {"map"})


def test_numpy_and_bool_grades_are_integers():
    qrels = {"q": {"a": np.int64(1), "b": np.int8(0), "c": True}}
    run = {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}
    plain = {"q": {"a": 1, "b": 0, "c": 1}}
    # today's main: pytrec_eval refuses numpy grades ("Expected relevance to be integer")
    assert RelevanceEvaluator(qrels, {"map", "MP"}).evaluate(run) == \
        RelevanceEvaluator(plain, {"map", "MP"}).evaluate(run)
    assert to_qrels_dict(qrels) == plain and all(type(g) is int for g in to_qrels_dict(qrels)["q"].values())


def test_dataframe_grades_are_checked_too():
    import pandas as pd
    big = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [2 ** 40]})
    with pytest.raises(InputError, match="qrels DataFrame: query 'q', document 'a': grade 1099511627776"):
        to_qrels_dict(big)
    floats = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1.0]})
    with pytest.raises(TypeError, match="not an integer"):
        to_qrels_dict(floats)
    ints = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert to_qrels_dict(ints) == {"q": {"a": 1, "b": 0}}


def test_to_qrels_dict_copies_and_leaves_the_input_alone():
    qrels = {"q": {"a": np.int64(1)}}
    out = to_qrels_dict(qrels)
    assert out is not qrels and type(qrels["q"]["a"]) is np.int64


# ---- native measures that would abort pytrec_eval -------------------------------------------

ABORTING = ["P_0", "P_5,0", "P_0.5", "ndcg_cut_0", "map_cut_0", "recall_0", "success_0", "relative_P_0",
            "P_,", "ndcg_5", "ndcg_1=2", "G_1", "Rndcg_1", "ndcg_rel_1"]


def test_native_measures_that_abort_pytrec_eval_raise_value_error():
    # today's main: pytrec_eval's assertion aborts the process (SIGABRT, rc 134) on the first of them
    code = textwrap.dedent(f"""
        import ir_measures
        from irmeasures_markov import RelevanceEvaluator
        qrels, run = {{"q": {{"a": 1}}}}, {{"q": {{"a": 1.0}}}}
        for spec in {ABORTING!r} + [ir_measures.P@0, "nDCG@0", "AP@0", "R@0", "Success@0"]:
            try:
                RelevanceEvaluator(qrels, [spec]).evaluate(run)
            except ValueError as exc:
                print("refused", exc)
            else:
                print("evaluated", spec)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(ABORTING) + 5 and all(line.startswith("refused") for line in lines), proc.stdout
    assert "refused measure 'P_0': the cutoffs of P must be positive integers" in lines[0]
    assert "refused measure 'ndcg_5': pytrec_eval evaluates ndcg without a parameter" in proc.stdout
    assert ("refused measure P@0: the cutoff must be a positive integer (the number of top-ranked documents kept), "
            "got 0") in proc.stdout


def test_valid_parameterised_native_measures_still_work():
    names = {"P_5,10", "ndcg_cut_5,", "set_F_0", "iprec_at_recall_0.5", "Rprec_mult_0.5", "success_1,5"}
    import pytrec_eval
    assert RelevanceEvaluator(QRELS, names).evaluate(RUN) == pytrec_eval.RelevanceEvaluator(QRELS, names).evaluate(RUN)


# ---- the provider alone ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: PROVIDER.calc_aggregate([ir_measures.AP], QRELS, RUN),
    lambda: PROVIDER.calc_aggregate([MP, ir_measures.AP], QRELS, RUN),
    lambda: list(PROVIDER.iter_calc([ir_measures.nDCG @ 10], QRELS, RUN)),
    lambda: PROVIDER.evaluator([ir_measures.P @ 5], QRELS),
    lambda: PROVIDER.calc([ir_measures.AP], QRELS, RUN),
], ids=["calc_aggregate", "mixture", "iter_calc", "evaluator", "calc"])
def test_provider_refuses_other_measures_with_a_pointer_to_ir_measures(call):
    # today's main: AttributeError ('_AP' object has no attribute 'compute')
    with pytest.raises(ValueError, match=r"not an irmeasures_markov measure: .*ir_measures\.calc_aggregate"):
        call()


def test_provider_refuses_strings_and_mixtures_work_through_ir_measures():
    with pytest.raises(TypeError, match="parse strings with ir_measures.parse_measure"):
        PROVIDER.calc_aggregate(["MP"], QRELS, RUN)
    res = ir_measures.calc_aggregate([MP, ir_measures.AP], QRELS, RUN)
    assert res[MP] == PROVIDER.calc_aggregate([MP], QRELS, RUN)[MP] and ir_measures.AP in res


# ---- equal parameters make the same measure ---------------------------------------------------

EQUAL_PAIRS = {
    "MP order and numpy cutoff": (MP(recall=True, model="LO_OR_ID") @ np.int64(10),
                                  MP(model="LO_OR_ID", recall=True) @ 10),
    "MPcont": (MPcont(time="tbg", default_length=100), MPcont(default_length=100.0, time="tbg")),
    "PH p": (PH(p=1), PH(p=1.0)),
    "PH numpy and order": (PH(q=np.float32(0.25), browse="RWBM", p=np.int64(0)), PH(browse="RWBM", p=0.0, q=0.25)),
    "PH b": (PH(user="DCG", b=3), PH(user="DCG", b=3.0)),
    "TBG": (TBG(default_length=100, halflife=100), TBG(halflife=100.0, default_length=100.0)),
    "M1": (M1(theta=0.25, dist="ERR"), M1(dist="ERR", theta=np.float64(0.25))),
    "M2": (M2(theta=0.25, dist="RBP") @ 5, M2(dist="RBP", theta=np.float32(0.25)) @ 5),
    "M3": (M3(theta=0.3, dist="RBP"), M3(dist="RBP", theta=0.3)),
    "M4": (M4(theta=0.25, dist="ERR"), M4(dist="ERR", theta=0.25)),
}


@pytest.mark.parametrize("a,b", list(EQUAL_PAIRS.values()), ids=list(EQUAL_PAIRS))
def test_equal_parameter_values_make_the_same_measure(a, b):
    # today's main: PH(p=1) printed 'PH(p=1)' and PH(p=1.0) 'PH(p=1.0)': different measures and keys
    assert a == b and hash(a) == hash(b) and str(a) == str(b)
    assert ir_measures.parse_measure(str(a)) == a


def test_parsed_strings_with_equal_values_are_one_measure_and_one_key():
    one, one_f = ir_measures.parse_measure("PH(p=1)"), ir_measures.parse_measure("PH(p=1.0)")
    assert one == one_f == PH(p=1) and str(one) == "PH(p=1.0)"
    res = ir_measures.calc_aggregate([one], QRELS, RUN)
    assert res[one_f] == res[PH(p=1)] == res[one]
    assert len(ir_measures.calc_aggregate([one, one_f], QRELS, RUN)) == 1
    by_key = RelevanceEvaluator(QRELS, ["PH(p=1)", "PH(p=1.0)", "PH(p = 1.00)"]).evaluate(RUN)
    assert set(by_key["q1"]) == {"PH(p=1.0)"}
    assert str(ir_measures.parse_measure("PH(user='RBP', tail='inf', p=0.5)")) == "PH(p=0.5,tail='inf',user='RBP')"


def test_canonical_form_keeps_defaults_out_and_values_unchanged():
    assert MP(model="GL_AD_ID") == MP and str(MP(model="GL_AD_ID", recall=False)) == "MP"
    assert str(PH(p=0.8)) == "PH" and str(TBG(halflife=224)) == "TBG"
    assert ir_measures.calc_aggregate([PH(browse="RWBM", p=1, q=0)], QRELS, RUN)[PH(browse="RWBM", p=1.0)] == \
        pytest.approx(ir_measures.calc_aggregate([PH(browse="RWBM", p=1.0)], QRELS, RUN)[PH(browse="RWBM", p=1.0)])


def test_bool_is_not_a_number_parameter():
    with pytest.raises(ValueError, match="`halflife` must be a number, got True"):
        TBG(halflife=True).validate_params()


# ---- empty or disjoint inputs: a warning, never NaN -------------------------------------------

def _calc_with_warnings(qrels, run, measures=(MP, PH)):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ir_measures.calc_aggregate(list(measures), qrels, run)
    return res, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("qrels,run,match", [
    ({}, RUN, "the qrels hold no query"),
    (QRELS, {}, "the run holds no document: no query can be evaluated"),
    (QRELS, {"q1": {}, "q2": {}}, "the run holds no document"),
    (QRELS, {"401": {"a": 1.0}}, "the run and the qrels share no query: no query can be evaluated (a qrels "
                                 "query the run does not answer scores 0); run queries: '401'; qrels queries: "
                                 "'q1', 'q2'"),
], ids=["empty qrels", "empty run", "run without documents", "disjoint"])
def test_nothing_to_evaluate_warns_once_and_never_gives_nan(qrels, run, match):
    # today's main: empty qrels gave NaN, and no case warned
    res, messages = _calc_with_warnings(qrels, run)
    assert res == {MP: 0.0, PH: 0.0}
    assert len([m for m in messages if match in m]) == 1, messages


def test_shared_queries_do_not_warn_and_relevance_evaluator_warns_too():
    _, messages = _calc_with_warnings(QRELS, {"q1": RUN["q1"], "zz": {"a": 1.0}})
    assert not [m for m in messages if "share no query" in m or "holds no" in m or "hold no" in m]
    for measures in ({"map"}, {"MP"}, {"map", "MP"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert RelevanceEvaluator(QRELS, measures).evaluate({"x": {"a": 1.0}}) == {}
        assert len([w for w in caught if "share no query" in str(w.message)]) == 1


def test_a_run_answering_less_than_half_of_the_qrels_warns_with_the_counts():
    """ir_measures through our provider and the pytrec_eval drop-in: 1 of 3 qrels queries answered is not a quiet
    number (it was), and each says what its values are over; half of them is enough to stay quiet."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    res, messages = _calc_with_warnings(qrels, {"q1": {"a": 1.0}})
    assert res == {MP: pytest.approx(1 / 3), PH: pytest.approx(1 / 3)}
    assert [m for m in messages if "the run answers 1 of the 3 qrels queries" in m] == [
        "the run answers 1 of the 3 qrels queries (less than half: is it the right qrels for this run?); means "
        "are over all 3 (trec_eval -c), the other 2 scoring 0"]
    for measures in ({"map"}, {"MP"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert list(RelevanceEvaluator(qrels, measures).evaluate({"q1": {"a": 1.0}})) == ["q1"]
        assert [str(w.message) for w in caught if "1 of the 3" in str(w.message)] == [
            "the run answers 1 of the 3 qrels queries (less than half: is it the right qrels for this run?); "
            "values are given for those 1 only, as pytrec_eval does (trec_eval -c averages over all 3)"]
    _, messages = _calc_with_warnings({"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}})
    assert not [m for m in messages if "qrels queries" in m]
