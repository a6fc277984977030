"""Ranking preparation: the positive-grade join used by measures that read only grade >= rel."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.ranking import UNJUDGED, PreparedRun, QrelsIndex


@st.composite
def judged_runs(draw):
    """Qrels with grades -1..3 (negative and zero grades included) and runs with unjudged documents."""
    n_docs = draw(st.integers(1, 30))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels, run = {}, {}
    for q in ("1", "2", "3"):
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
        qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, max_size=n_docs))
        run[q] = {d: float(draw(st.integers(0, 5))) for d in retrieved}   # many score ties
    return qrels, run


@settings(max_examples=150, deadline=None)
@given(judged_runs(), st.sampled_from([None, 1, 3, 10]))
def test_positive_join_equals_full_join(data, cutoff):
    qrels, run = data
    prepared = PreparedRun(QrelsIndex(qrels), run)
    for q in prepared.queries:
        full = np.array([qrels[q.qid].get(d, UNJUDGED) for d in q.docids], dtype=np.int64)
        np.testing.assert_array_equal(q.grades, full)
        np.testing.assert_array_equal(q.positive_grades, np.where(full > 0, full, 0))
    for rel in (1, 2, 3):
        fast = prepared.batch(rel=rel, cutoff=cutoff, judgments=False)
        full = prepared.batch(rel=rel, cutoff=cutoff)
        assert not fast.judgments and full.judgments
        np.testing.assert_array_equal(fast.relevant, full.relevant)
        np.testing.assert_array_equal(fast.offsets, full.offsets)
        np.testing.assert_array_equal(fast.recall_base, full.recall_base)
        np.testing.assert_array_equal(fast.grades, np.where(full.grades > 0, full.grades, 0))
    # what the positive grades cannot tell apart always gets the full join
    assert prepared.batch(rel=0, judgments=False).judgments
    assert prepared.batch(rel=1, judged_only=True, judgments=False).judgments


def test_per_grade_tbg_tells_judged_nonrelevant_from_unjudged():
    """pc_by_grade may name grade 0: a judged non-relevant document is then read differently from an unjudged one."""
    qrels = {"q": {"judged0": 0, "rel": 1}}
    run = {"q": {"judged0": 3.0, "unjudged": 2.0, "rel": 1.0}}
    imm.register_lengths("test-rankings-lengths", {"judged0": 100, "unjudged": 100, "rel": 100})
    m = imm.TBG(lengths="test-rankings-lengths", pc_by_grade="0:0.1")
    assert m.needs_judgments() and not imm.TBG(lengths="test-rankings-lengths").needs_judgments()
    got = imm.PROVIDER.evaluator([m], qrels).values(run)[m]["q"]
    t_doc = 0.018 * 100 + 7.8
    t_rel = 4.4 + t_doc * 0.1 + 4.4 + t_doc * 0.39   # judged grade 0 clicks with 0.1, unjudged with pc_nonrel
    assert got == pytest.approx(0.64 * 0.77 * math.exp(-t_rel * math.log(2) / 224), rel=1e-12)


def test_positive_grades_placed_inside_tie_groups():
    # one big tie group (with -0.0 == 0.0) holding relevant documents at both ends and inside
    run = {"q": {"a": 0.0, "z": -0.0, "m": 0.0, "b": 2.0, "y": 0.0, "c": 1.0}}
    qrels = {"q": {"a": 1, "z": 2, "m": 3, "b": 1, "nope": 4, "y": 0}}
    q = PreparedRun(QrelsIndex(qrels), run).queries[0]
    assert q.docids == ["b", "c", "z", "y", "m", "a"]
    assert q.positive_grades.tolist() == [1, 0, 2, 0, 3, 1]
