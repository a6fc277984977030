"""Issue 34, items 2 and 3: what is judged, in every family, and the residual of a query with nothing relevant.

* A negative grade is trec_eval's "pooled but unjudged" document (form_res_rels.c: RELVALUE_UNJUDGED).
  ``judged_only`` drops it like any unjudged document (trec_eval ``-J``), ``unjudged='rel'|'range'`` and
  ``residual`` judge it like one: every family evaluates a document graded -1 as a document without judgment.
* ``residual=True`` is the value with ``unjudged='rel'`` minus the value with ``'nonrel'`` in every family,
  also for a query without any relevant judgment: the reading with ``'rel'`` finds relevant documents (the
  unjudged ones, and the unseen ones past the ranking), so it is no query without relevant documents.

The trec_eval figures are worked out by hand from trec_eval's definitions (m_map.c, m_rbp.c, m_rbp_resid.c
with ``-J`` and p = 0.9) and, for topic 303, taken from trec_eval's own test suite (see below).
"""
from __future__ import annotations

import re

import ir_measures
import pytest
from test_ties_and_holes import MEASURES
from ties_brute import POOL, plain, register_inputs

from irmeasures_markov.measures import standard_measure, standard_values
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

pytestmark = pytest.mark.filterwarnings("ignore:.*no document with grade.*:RuntimeWarning")

#: issue 34 item 2: a is pooled but unjudged (grade -1), d is not in the qrels at all, e is never retrieved
QRELS = {"q1": {"a": -1, "b": 1, "c": 0, "e": 1}}
RUN = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
#: the same judgments with a absent instead of graded -1
QRELS_ABSENT = {"q1": {"b": 1, "c": 0, "e": 1}}


def one(measure, qrels=QRELS, run=RUN, qid="q1"):
    """The value of one query, through ir_measures (the standard measures have another provider)."""
    return {m.query_id: m.value for m in ir_measures.iter_calc([plain(measure)], qrels, run)}[qid]


def test_judged_only_drops_a_negative_grade_as_trec_eval_minus_j_does():
    # -J: the ranking is b (1), c (0); 2 relevant judged; map = 1/2, rbp(0.9) = (1 - 0.9) * 1
    assert one("AP(judged_only=True)") == pytest.approx(0.5, abs=1e-12)
    assert one("M4(dist='AP',judged_only=True)") == pytest.approx(0.5, abs=1e-12)
    assert one("M1(theta=0.9,judged_only=True)") == pytest.approx(0.1, abs=1e-12)
    assert one("M1(theta=0.9,unjudged='drop')") == pytest.approx(0.1, abs=1e-12)


def test_residual_treats_a_negative_grade_as_unjudged_as_trec_eval_rbp_resid_does():
    # rbp_resid: p^N + (1 - p) * sum over unjudged ranks k of p^(k-1), unjudged ranks 1 (a, -1) and 4 (d)
    want = 0.9 ** 4 + 0.1 * (1 + 0.9 ** 3)
    assert want == pytest.approx(0.829, abs=1e-12)
    assert one("M1(theta=0.9,residual=True)") == pytest.approx(want, abs=1e-12)
    assert one("M1(theta=0.9,unjudged='range')") == pytest.approx(want, abs=1e-12)


#: trec_eval's test/out.test.aql (``-m all_trec -q -l2 test/qrels.rel_level test/results.test``), topic 303:
#: rbp_resid 0.4226.  Of its 500 ranked documents, these ranks up to 100 are graded -1 in qrels.rel_level;
#: every other of the first 100 is judged (grade 0 or 2; relevance does not enter the residual).  The ranks
#: past 100 weigh at most 0.9**100 < 3e-5 together, below the 4 printed decimals.
TOPIC_303_POOLED_UNJUDGED = [5, 6, 7, 8, 9, 12, 13, 15, 17, 20, 23, 25, 28, 29, 34, 36, 40, 49, 50, 52, 53, 55,
                             58, 59, 60, 75, 79, 80, 89, 92, 93, 96, 99]


def test_trec_eval_suite_topic_303_rbp_resid():
    qrels = {"303": {f"d{k:03d}": (-1 if k in TOPIC_303_POOLED_UNJUDGED else 0) for k in range(1, 101)}}
    qrels["303"]["r"] = 2
    run = {"303": {f"d{k:03d}": float(1000 - k) for k in range(1, 101)}}
    got = one("M1(theta=0.9,rel=2,residual=True)", qrels, run, "303")
    assert abs(got - 0.4226) < 1e-4


VARIANTS = [{}, {"judged_only": True}, {"unjudged": "rel"}, {"unjudged": "range"}, {"residual": True}]


def _applicable(measure, variant):
    """Whether ``variant`` is a setting ``measure`` takes (judged_only where it is not set already and is a
    parameter; unjudged='range' without expected ties)."""
    m = plain(measure)
    if "judged_only" in variant and (m.params.get("judged_only") or "judged_only" not in type(m).SUPPORTED_PARAMS):
        return False
    return not (variant.get("unjudged") == "range" and m.params.get("ties") == "expected")


@pytest.mark.parametrize("measure,variant", [(m, v) for m in MEASURES for v in VARIANTS if _applicable(m, v)])
def test_every_family_evaluates_a_negative_grade_as_no_judgment(measure, variant):
    m = plain(measure)
    params = {**m.params, **variant}
    mv = type(m)(**params)
    register_inputs()
    # the pool's document ids: their lengths are registered
    name = dict(zip("abcde", POOL))
    run = {"q1": {name[d]: s for d, s in RUN["q1"].items()}}
    try:
        want = one(mv, {"q1": {name[d]: g for d, g in QRELS_ABSENT["q1"].items()}}, run)
    except ValueError as e:      # e.g. a user who reads an endless tail needs a cutoff: the same refusal
        with pytest.raises(ValueError, match=re.escape(str(e)[:30])):
            one(mv, {"q1": {name[d]: g for d, g in QRELS["q1"].items()}}, run)
        return
    assert one(mv, {"q1": {name[d]: g for d, g in QRELS["q1"].items()}}, run) == pytest.approx(want, abs=1e-12), mv


#: issue 34 item 3: nothing relevant, one judged non-relevant document retrieved
NOTHING_QRELS = {"q": {"a": 0}}
NOTHING_RUN = {"q": {"a": 1.0}}


def test_residual_when_nothing_is_relevant_is_the_weight_past_the_ranking():
    # rbp_eval: residual = theta^N with N = 1 judged document, theta = 0.8
    assert one("M1(residual=True)", NOTHING_QRELS, NOTHING_RUN, "q") == pytest.approx(0.8, abs=1e-12)
    assert one("M1(unjudged='rel')", NOTHING_QRELS, NOTHING_RUN, "q") == pytest.approx(0.8, abs=1e-12)
    assert one("M1", NOTHING_QRELS, NOTHING_RUN, "q") == 0.0
    assert one("PH(user='RBP',tail='inf',residual=True)", NOTHING_QRELS, NOTHING_RUN, "q") == pytest.approx(
        0.8, abs=1e-12)


@pytest.mark.parametrize("measure", ["M1(residual=True)", "M2(dist='RBP',residual=True)",
                                     "PH(user='RBP',tail='inf',residual=True)", "PH(residual=True)@5",
                                     "TBG(default_length=100,residual=True)", "MP(residual=True)",
                                     "M1(residual=True)@3"])
@pytest.mark.parametrize("qrels, run", [(NOTHING_QRELS, NOTHING_RUN),
                                        ({"q": {"a": 0}}, {"q": {"a": 2.0, "b": 1.0}}),
                                        ({"q": {"a": -1}}, {"q": {"a": 2.0, "b": 1.0}})])
def test_residual_is_rel_minus_nonrel_when_nothing_is_relevant(measure, qrels, run):
    m = ir_measures.parse_measure(measure)
    params = {k: v for k, v in m.params.items() if k != "residual"}
    rel = one(type(m)(**params, unjudged="rel"), qrels, run, "q")
    nonrel = one(type(m)(**params), qrels, run, "q")
    assert nonrel == 0.0
    assert one(m, qrels, run, "q") == pytest.approx(rel - nonrel, abs=1e-12)


@pytest.mark.parametrize("measure", ["AP", "P@3", "nDCG", "nDCG@2", "RR", "Bpref"])
@pytest.mark.parametrize("setting", [{"unjudged": "drop"}, {"unjudged": "rel"}, {"residual": True},
                                     {"ties": "optimistic"}, {"ties": "expected", "unjudged": "rel"}])
def test_standard_measures_evaluate_a_negative_grade_as_no_judgment(measure, setting):
    s = standard_measure(ir_measures.parse_measure(measure))

    def value(qrels):
        return standard_values(s, PreparedRun(QrelsIndex(qrels), RUN), **setting).tolist()

    assert value(QRELS) == pytest.approx(value(QRELS_ABSENT), abs=1e-12)


def test_standard_unjudged_rel_judges_a_negative_grade():
    # a and d judged relevant: a(1) b(1) c(0) d(1), 4 relevant: AP = (1 + 1 + 3/4) / 4
    s = standard_measure(ir_measures.parse_measure("AP"))
    got = standard_values(s, PreparedRun(QrelsIndex(QRELS), RUN), unjudged="rel")
    assert got.tolist() == pytest.approx([0.6875], abs=1e-12)
