"""Every judged grade at every rank (``_FlatRun.grades``, a run prepared for ``Needs(judgments=True)``) vs a
dict-probe reference.

The reference sorts each query alone with Python's ``sorted`` on (score desc,
docid desc) and probes every retrieved document in the query's judgments:
nothing shared with the flat path (segment sorts, pending docid tie-break
resolved only for tie groups of mixed grades, one join made while ranking).
"""
import numpy as np
import pytest
from measure_needs import Needs
from random_runs import tied_run

from irmeasures_markov.ranking import UNJUDGED, QrelsIndex
from irmeasures_markov.ranking import _order as order
from irmeasures_markov.ranking import _prepared as prepared_module
from irmeasures_markov.ranking._prepared import PreparedRun, run_needs


def make_inputs(seed, n_queries=5, length=1200, n_scores=9):
    """Rankings full of ties (-0.0 beside 0.0), negative and zero grades, docids shared across queries,
    a run query without judgments and a qrels query with no judgment at all."""
    qrels, run, universe = tied_run(seed, n_queries, length, scores=(-(n_scores // 2), n_scores // 2),
                                    grades=(-2, 3))
    run["unjudged-query"] = {universe[0]: 1.0, universe[1]: 2.0}      # no qrels: skipped
    qrels["empty"] = {}                                                # judged query with no judgment
    run["empty"] = {universe[2]: 0.5, universe[3]: 0.5}
    return qrels, run


def reference_grades(qrels, run):
    """``{qid: grades by rank}``, UNJUDGED where the document has no judgment."""
    out = {}
    for qid, doc_scores in run.items():
        if qid not in qrels or not doc_scores:
            continue
        docs = sorted(sorted(doc_scores, reverse=True), key=lambda d: -doc_scores[d])
        out[qid] = np.array([qrels[qid].get(d, UNJUDGED) for d in docs], dtype=np.int64)
    return out


def reference_batch(ref, rel, judged_only, cutoff):
    grades = []
    for g in ref.values():
        if judged_only:   # a negative grade is pooled but unjudged (trec_eval's rule): dropped too
            g = g[g >= 0]
        grades.append(g[:cutoff])
    return np.concatenate(grades), np.cumsum([0] + [g.size for g in grades])


@pytest.mark.parametrize("seed,n_scores", [(0, 9), (1, 3), (2, 4001)])
@pytest.mark.parametrize("judgments", [False, True])
@pytest.mark.parametrize("odd_compare_max", [None, 0, 10 ** 6])
def test_grades_match_dict_probe_reference(monkeypatch, seed, n_scores, judgments, odd_compare_max):
    if odd_compare_max is not None:   # every mixed tie group ordered by _fix_ties (0), or placed by comparisons
        monkeypatch.setattr(order, "_ODD_COMPARE_MAX", odd_compare_max)
    qrels, run = make_inputs(seed, n_scores=n_scores)
    prepared = PreparedRun(QrelsIndex(qrels), run, [Needs(judgments=judgments)])
    assert isinstance(prepared.queries, prepared_module._LazyQueries)     # the flat path
    ref = reference_grades(qrels, run)
    assert prepared.qids == list(ref)
    np.testing.assert_array_equal(prepared._flat.grades, np.concatenate(list(ref.values())))
    np.testing.assert_array_equal(prepared._flat.positive_grades, np.maximum(np.concatenate(list(ref.values())), 0))
    for rel in (1, 2, 0, -1):
        for judged_only in (False, True):
            for cutoff in (None, 10, 700):
                b = prepared.batch(rel=rel, judged_only=judged_only, cutoff=cutoff)
                want, offsets = reference_batch(ref, rel, judged_only, cutoff)
                np.testing.assert_array_equal(b.offsets, offsets)
                np.testing.assert_array_equal(b.grades, want)
                np.testing.assert_array_equal(b.relevant, want >= rel)
    # the per-query view agrees too (it joins on its own)
    for q in prepared.queries:
        np.testing.assert_array_equal(q.grades, ref[q.qid])


@pytest.mark.parametrize("judgments", [False, True])
def test_grades_leave_the_docid_tie_break_pending_when_groups_agree(judgments):
    """Tie groups whose members all have one grade need no docid order: ``order`` stays pending."""
    docs = [f"d{k:03d}" for k in range(600)]
    # every document of a query shares one score (one huge tie group per query), and all are unjudged
    # except a block of equal scores apart from the rest
    run = {"q": {d: (1.0 if k < 590 else 2.0) for k, d in enumerate(docs)}}
    qrels = {"q": {docs[-1]: 3, docs[-2]: 0, "other": 1}}
    prepared = PreparedRun(QrelsIndex(qrels), run, [Needs(judgments=judgments)])
    flat = prepared._flat
    assert flat._ties is not None
    grades = flat.grades
    assert flat._ties is not None        # the 590-document all-unjudged group was never sorted by docid
    ref = reference_grades(qrels, run)["q"]
    np.testing.assert_array_equal(grades, ref)
    assert ref[0] == 3 and ref[1] == 0   # the mixed group {d599: 3, d598: 0, ...}: docid descending


def test_judgments_and_depth_give_the_same_batches_as_without():
    """``judgments=True`` with a depth (short rankings: ranked fully, then cut) changes no value."""
    qrels, run = make_inputs(5, length=40)
    ref = reference_grades(qrels, run)
    for depth in (None, 5, 100):
        a = PreparedRun(QrelsIndex(qrels), run, [Needs(depth=depth, judgments=True)])
        b = PreparedRun(QrelsIndex(qrels), run, [Needs(depth=depth)])
        np.testing.assert_array_equal(a._flat.grades, b._flat.grades)
        np.testing.assert_array_equal(a._flat.positive_grades, b._flat.positive_grades)
        want = np.concatenate([g[:depth] for g in ref.values()])
        np.testing.assert_array_equal(a._flat.grades, want)


def test_run_scorer_asks_for_judgments_only_when_a_measure_reads_them():
    import ir_measures

    from irmeasures_markov.experiments._evaluation import RunScorer as _RunScorer
    qrels, run = make_inputs(3, n_queries=2, length=50)
    topics = sorted(qrels)
    with_bpref = _RunScorer([ir_measures.parse_measure(s) for s in ("AP", "Bpref")], qrels, topics)
    without = _RunScorer([ir_measures.parse_measure(s) for s in ("AP", "P@10")], qrels, topics)
    assert run_needs(with_bpref.readers)[2] and not run_needs(without.readers)[2]
    np.testing.assert_array_equal(with_bpref(run)[0], without(run)[0])   # AP unchanged by the join used
