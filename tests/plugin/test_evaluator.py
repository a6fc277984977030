"""The pytrec_eval-compatible evaluator."""
import json
import warnings

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
    with pytest.warns(RuntimeWarning, match="2 qrels queries have no document with grade >= 2"):
        res = RelevanceEvaluator(QRELS, {"MP(model='UNIFORM',recall=True)", "map"}, relevance_level=2).evaluate(RUN)
    assert res["q1"]["MP(model='UNIFORM',recall=True)"] == pytest.approx(res["q1"]["map"])


def test_module_is_a_drop_in():
    assert irmeasures_markov.RelevanceEvaluator is RelevanceEvaluator


def test_bad_measure():
    with pytest.raises(NameError):
        RelevanceEvaluator(QRELS, {"NoSuchMeasure"})


class TestScoreValidation:
    @pytest.mark.parametrize("measures", [{"map"}, {"P_5", "ndcg_cut_10"}, {"MP"}, {"nDCG@10"}, {"map", "MP"}])
    @pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
    def test_non_finite_score_names_query_and_document(self, measures, bad):
        run = {"q1": {"a": 0.5, "b": bad, "c": 1.0}, "q2": {"x": 1.0}}
        with pytest.raises(ValueError, match=r"query 'q1': document 'b' has a non-finite score"):
            RelevanceEvaluator(QRELS, measures).evaluate(run)

    @pytest.mark.parametrize("measures", [{"map"}, {"MP"}])
    @pytest.mark.parametrize("bad", [None, "nan", "inf"])
    def test_none_or_text_score_is_named_as_given(self, measures, bad):
        # numpy reads None (and 'nan') as NaN: the message names what the run holds
        run = {"q1": {"a": 0.5, "b": bad, "c": 1.0}}
        with pytest.raises(ValueError, match=rf"query 'q1': document 'b' has score {bad!r}, which is not a number"):
            RelevanceEvaluator(QRELS, measures).evaluate(run)

    def test_non_finite_score_message_shows_the_value(self):
        with pytest.raises(ValueError, match=r"has a non-finite score \(inf\); scores must be finite numbers"):
            RelevanceEvaluator(QRELS, {"MP"}).evaluate({"q1": {"a": float("inf")}})

    def test_non_numeric_score(self):
        with pytest.raises(ValueError, match=r"query 'q2': document 'x' has score 'high', which is not a number"):
            RelevanceEvaluator(QRELS, {"map"}).evaluate({"q2": {"x": "high"}})

    def test_queries_without_judgments_are_not_checked(self):
        # like our Measures: run queries absent from the qrels are skipped, whatever their scores
        res = RelevanceEvaluator(QRELS, {"map"}).evaluate({**RUN, "q9": {"x": float("nan")}})
        assert res == pytrec_eval.RelevanceEvaluator(QRELS, {"map"}).evaluate(RUN)


class TestPytrecEvalArguments:
    MEASURES = {"map", "P_5", "ndcg_cut_10", "recip_rank", "bpref"}

    @pytest.mark.parametrize("level", [1, 2])
    @pytest.mark.parametrize("judged", [False, True])
    @pytest.mark.filterwarnings("ignore:.*no document with grade")
    def test_keywords_pass_through(self, level, judged):
        kw = dict(relevance_level=level, judged_docs_only_flag=judged)
        ours = RelevanceEvaluator(QRELS, self.MEASURES | {"MP(model='UNIFORM',recall=True)"}, **kw).evaluate(RUN)
        ref = pytrec_eval.RelevanceEvaluator(QRELS, self.MEASURES, **kw).evaluate(RUN)
        for q in ref:
            assert {k: v for k, v in ours[q].items() if k in self.MEASURES} == ref[q]
            # MP(UNIFORM, recall) is AP, so it follows both the level and the flag
            assert ours[q]["MP(model='UNIFORM',recall=True)"] == pytest.approx(ref[q]["map"], abs=1e-15)

    @pytest.mark.filterwarnings("ignore:the run answers:RuntimeWarning")  # one of the qrels' queries, on purpose
    def test_judged_only_for_our_measures(self):
        # q1 ranking: u (unjudged), b (0), c (2), a (1); condensed: b, c, a
        res = RelevanceEvaluator(QRELS, {"MP(model='LO_OR_ID')", "MP(judged_only=False)"},
                                 judged_docs_only_flag=True).evaluate({"q1": {**RUN["q1"], "u": 9.0}})
        assert res["q1"]["MP(model='LO_OR_ID')"] == pytest.approx(markov_precision([0, 1, 1], "LO_OR_ID"))
        # a measure that sets judged_only itself keeps it
        assert res["q1"]["MP"] == pytest.approx(markov_precision([0, 0, 1, 1], "GL_AD_ID"))

    def test_positional_and_type_errors(self):
        ev = RelevanceEvaluator(QRELS, {"map"}, 2, True)
        assert ev.evaluate(RUN) == pytrec_eval.RelevanceEvaluator(QRELS, {"map"}, 2, True).evaluate(RUN)
        with pytest.raises(TypeError, match="relevance_level"):
            RelevanceEvaluator(QRELS, {"map"}, relevance_level="1")
        with pytest.raises(TypeError, match="judged_docs_only_flag"):
            RelevanceEvaluator(QRELS, {"map"}, judged_docs_only_flag=1)


class TestSupportedMeasures:
    def test_is_pytrec_eval_set_plus_ours(self):
        assert isinstance(irmeasures_markov.supported_measures, set)
        assert pytrec_eval.supported_measures <= irmeasures_markov.supported_measures
        assert {"MP", "M1", "M4", "RBTR", "PH"} <= irmeasures_markov.supported_measures
        # these need data (rates, document lengths) and are accepted only with parameters
        assert not {"MPcont", "TBG"} & irmeasures_markov.supported_measures

    def test_every_name_is_accepted_as_is(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = RelevanceEvaluator(QRELS, irmeasures_markov.supported_measures).evaluate(RUN)
        ref = pytrec_eval.RelevanceEvaluator(QRELS, pytrec_eval.supported_measures).evaluate(RUN)
        assert set(res) == set(ref)
        for q in ref:
            assert {k: res[q][k] for k in ref[q]} == ref[q]
            assert res[q]["MP"] == pytest.approx(markov_precision(
                [QRELS[q].get(d, 0) >= 1 for d in sorted(RUN[q], key=lambda d: (RUN[q][d], d), reverse=True)]))


SCRIPT = """
import json
import pytrec_eval

qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1, "y": 0}}
run = {"q1": {"a": 0.5, "b": 2.0, "c": 1.0, "u": 0.1}, "q2": {"x": 1.0, "y": 3.0}}
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg", "P"}, relevance_level=2,
                                           judged_docs_only_flag=True)
print(json.dumps(evaluator.evaluate(run), sort_keys=True))
everything = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures)
print(json.dumps(everything.evaluate(run), sort_keys=True))
"""


def test_one_import_swap_in_a_script(capsys):
    def run_script(text):
        exec(compile(text, "script.py", "exec"), {"__name__": "__main__"})
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    original = run_script(SCRIPT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        swapped = run_script(SCRIPT.replace("import pytrec_eval\n", "import irmeasures_markov as pytrec_eval\n"))
    assert swapped[0] == original[0]
    for q, values in original[1].items():
        assert {k: swapped[1][q][k] for k in values} == values
        assert "MP" in swapped[1][q]
