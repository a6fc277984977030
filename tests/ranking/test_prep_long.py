"""Flat preparation of long rankings against a straightforward reference, on inputs full of ties.

The reference ranks each query with Python's ``sorted`` on (score desc,
docid desc) and joins every document with one dict probe: nothing shared
with the flat path (segment sorts, lazy docid tie-break, the intersection
join by a lookup per document).
"""
import numpy as np
import pytest
from measure_needs import Needs
from random_runs import tied_run
from run_references import as_columns

from irmeasures_markov.ranking import UNJUDGED, PreparedRun, QrelsIndex
from irmeasures_markov.ranking import _join as join
from irmeasures_markov.ranking import _order as order
from irmeasures_markov.ranking import _prepared as prepared_module


def tied_inputs(seed, n_queries=6, length=1500, n_scores=7):
    """Long rankings with few distinct scores (huge tie groups), -0.0 beside 0.0, docids shared across queries."""
    qrels, run, _ = tied_run(seed, n_queries, length, scores=(-(n_scores // 2), n_scores // 2), step=0.25,
                             grades=(-1, 3))
    return qrels, run


def reference(qrels, run):
    """``{qid: (docids, positive grades, grades)}`` by sorting and probing each query alone."""
    out = {}
    for qid, doc_scores in run.items():
        if qid not in qrels or not doc_scores:
            continue
        # score desc, then docid desc: sort by docid desc first, then stably by score desc
        docs = sorted(sorted(doc_scores, reverse=True), key=lambda d: -doc_scores[d])
        grades = np.array([qrels[qid].get(d, UNJUDGED) for d in docs], dtype=np.int64)
        out[qid] = (docs, np.where(grades > 0, grades, 0), grades)
    return out


@pytest.mark.parametrize("seed,n_scores", [(0, 7), (1, 7), (2, 301), (3, 2001)])
@pytest.mark.parametrize("pairwise_max_group", [None, 1, 10 ** 6])
def test_long_flat_preparation_matches_sorted_reference(monkeypatch, seed, n_scores, pairwise_max_group):
    if pairwise_max_group is not None:   # every tie group sorted (1), or every one ordered pairwise
        monkeypatch.setattr(order, "_PAIRWISE_MAX_GROUP", pairwise_max_group)
    qrels, run = tied_inputs(seed, n_scores=n_scores)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    assert isinstance(prepared.queries, prepared_module._LazyQueries)   # the flat path, not the per-query loop
    ref = reference(qrels, run)
    flat = prepared._flat
    assert flat.qids == list(ref)
    # positive grades first: they are made without the docid tie-break of the order
    np.testing.assert_array_equal(flat.positive_grades, np.concatenate([ref[q][1] for q in flat.qids]))
    assert flat.docids == [d for q in flat.qids for d in ref[q][0]]
    np.testing.assert_array_equal(flat.grades, np.concatenate([ref[q][2] for q in flat.qids]))
    for _i, q in enumerate(prepared.queries):
        assert q.docids == ref[q.qid][0]
        np.testing.assert_array_equal(q.scores, [run[q.qid][d] for d in ref[q.qid][0]])


def test_long_flat_join_in_blocks_of_queries(monkeypatch):
    monkeypatch.setattr(join, "LOOKUP_BLOCK", 2000)   # blocks of 1-2 queries, some with no hits
    qrels, run = tied_inputs(4, n_queries=7, n_scores=31)
    qrels["q3"] = {"nothing": 1}
    ref = reference(qrels, run)
    flat = PreparedRun(QrelsIndex(qrels), run)._flat
    np.testing.assert_array_equal(flat.positive_grades, np.concatenate([ref[q][1] for q in flat.qids]))
    assert flat.docids == [d for q in flat.qids for d in ref[q][0]]


def test_long_preparation_with_depth_and_flat_document_values():
    qrels, run = tied_inputs(5, n_queries=3, length=900)
    ref = reference(qrels, run)
    prepared = PreparedRun(QrelsIndex(qrels), run, [Needs(depth=40)])
    b = prepared.batch(judgments=False)
    np.testing.assert_array_equal(b.grades, np.concatenate([ref[q][1][:40] for q in b.qids]))
    full = PreparedRun(QrelsIndex(qrels), run)
    values = full.document_values(lambda segments, joined: np.array([float(d[1:]) for s in segments for d in s]))
    np.testing.assert_array_equal(values, [float(d[1:]) for q in full.qids for d in ref[q][0]])


def test_single_score_everywhere_and_no_hits():
    docs = [f"x{k}" for k in range(800)]
    run = {"a": dict.fromkeys(docs, -0.0), "b": {d: 0.0 for d in docs}}
    qrels = {"a": {"x5": 2, "x799": 1, "nope": 3}, "b": {"zzz": 1}}
    prepared = PreparedRun(QrelsIndex(qrels), run)
    ref = reference(qrels, run)
    np.testing.assert_array_equal(prepared._flat.positive_grades, np.concatenate([ref[q][1] for q in "ab"]))
    assert prepared._flat.docids == ref["a"][0] + ref["b"][0]


@pytest.mark.parametrize("seed", [6, 10, 11])
def test_tbg_with_registered_lengths_same_on_dicts_and_columns(seed):
    """Dicts (joined through the positive judgments) against columns (every document probed).  TBG sums the
    lengths of a tie group without a positive grade in file order: equal up to rounding, and bit for bit wherever the
    exact order is kept (per-grade probabilities, rel < 1, a cutoff that cuts, judged_only) and for MP."""
    import irmeasures_markov as imm
    qrels, run = tied_inputs(seed, n_queries=4, length=700, n_scores=151)
    lengths = {d: float(10 + int(d[1:]) % 500) + 0.1 for docs in run.values() for d in docs}
    imm.register_lengths("test-prep-long", lengths)
    summed = [imm.TBG(lengths="test-prep-long"), imm.TBG(lengths="test-prep-long", halflife=20.0),
              imm.TBG(lengths="test-prep-long", rel=2)]
    exact = [imm.MP(model="GL_AD_ID"), imm.TBG(lengths="test-prep-long", pc_by_grade="0:0.1,2:0.9"),
             imm.TBG(lengths="test-prep-long", rel=0), imm.TBG(lengths="test-prep-long") @ 300,
             imm.TBG(lengths="test-prep-long", judged_only=True),
             imm.MPcont(model="GL_AD_ID", time="tbg", lengths="test-prep-long")]
    measures = summed + exact
    flat = imm.PROVIDER.evaluator(measures, qrels).values(run)      # docids joined once for the whole run
    ref = imm.PROVIDER.evaluator(measures, qrels).values(as_columns(run))
    assert all(len(v) == 4 for v in ref.values())
    for m in exact:
        assert flat[m] == ref[m], m
    for m in summed:
        assert flat[m].keys() == ref[m].keys()
        np.testing.assert_allclose([flat[m][q] for q in ref[m]], list(ref[m].values()), rtol=1e-12, atol=1e-15)
    prepared = PreparedRun(QrelsIndex(qrels), run, [Needs(document_values=True)])
    for m in summed:
        m.compute(prepared)
    assert prepared._flat._ties is not None     # the file-order sums were in use: no whole docid tie-break
    exact[3].compute(prepared)
    assert prepared._flat._ties is None


@pytest.mark.parametrize("seed", [8, 9])
def test_positive_tie_order_orders_the_groups_that_hold_a_positive_grade(seed):
    qrels, run = tied_inputs(seed, n_queries=5, length=1200, n_scores=201)
    ref = reference(qrels, run)
    flat = PreparedRun(QrelsIndex(qrels), run)._flat
    assert flat._ties is not None                       # the docid tie-break is still pending
    partial = flat.positive_tie_order
    assert flat._ties is not None                       # and still is: only some groups were ordered
    assert flat.positive_tie_order is partial           # made once
    # every grade in rank order, joined while the order is partial (a judged_only measure after TBG)
    np.testing.assert_array_equal(flat.grades, np.concatenate([ref[q][2] for q in flat.qids]))
    assert flat._ties is not None
    exact = flat.order
    keys = flat.keys
    query = np.repeat(np.arange(len(flat.qids)), np.diff(flat.starts))
    place = [(flat.qids[i], run[flat.qids[i]][keys[k]]) for i, k in zip(query.tolist(), partial.tolist())]
    ranked = [(q, run[q][d]) for q in flat.qids for d in ref[q][0]]
    assert sorted(partial.tolist()) == sorted(exact.tolist())
    assert place == ranked                              # every document in its tie group's place
    positive = flat.positive_grades > 0
    ranked_docs = np.array([d for q in flat.qids for d in ref[q][0]], dtype=object)
    assert [keys[k] for k in partial[positive].tolist()] == ranked_docs[positive].tolist()
    # the groups holding a positive grade are in docid order throughout, the others as listed in the file
    holds_positive = {}
    for (q, s), p in zip(ranked, positive.tolist()):
        holds_positive[q, s] = holds_positive.get((q, s), False) or p
    ordered = np.array([holds_positive[qs] for qs in ranked])
    assert [keys[k] for k in partial[ordered].tolist()] == ranked_docs[ordered].tolist()
    assert (partial[~ordered] != exact[~ordered]).any()
    for i, q in enumerate(flat.qids):   # file order: the run's listing order within each group
        in_file = {d: j for j, d in enumerate(run[q])}
        a, b = int(flat.starts[i]), int(flat.starts[i + 1])
        for (qq, s) in {ranked[j] for j in range(a, b) if not ordered[j]}:
            members = [keys[k] for j, k in zip(range(a, b), partial[a:b].tolist()) if ranked[j] == (qq, s)]
            assert members == sorted(members, key=in_file.__getitem__)
    assert flat.positive_tie_order is exact             # once the order is final, it is that order
    # the whole tie-break, started from the partial order that replaced the pending one, is trec_eval's order
    assert [keys[k] for k in exact.tolist()] == ranked_docs.tolist()
    assert flat._ties is None


@pytest.mark.parametrize("length", [60, 1500])          # short rankings (ties fixed at once) and long ones (lazily)
@pytest.mark.parametrize("pairwise_max_group", [None, 1, 10 ** 6])
def test_tie_groups_listed_in_docid_order(monkeypatch, length, pairwise_max_group):
    """Runs written in rank order with each tie group ascending by docid (most TREC-8 runs), descending
    (trec_eval's order) or mixed: the groups found already ordered are reversed or kept, the others ordered."""
    if pairwise_max_group is not None:
        monkeypatch.setattr(order, "_PAIRWISE_MAX_GROUP", pairwise_max_group)
    qrels, run, _ = tied_run(7, 9, length, scores=(-4, 4), step=0.5)
    rng = np.random.default_rng(7)
    for i, (qid, doc_scores) in enumerate(list(run.items())):
        by_score = sorted(doc_scores, key=lambda d: -doc_scores[d])      # stable: ties keep their file order
        groups = {}
        for d in by_score:
            groups.setdefault(doc_scores[d], []).append(d)
        docs = []
        for k, members in enumerate(groups.values()):
            how = (i + k) % 3
            if how == 0:
                members = sorted(members)                                 # ascending: reversed by the prep
            elif how == 1:
                members = sorted(members, reverse=True)                   # descending: kept
            else:
                members = sorted(members)
                j = int(rng.integers(0, len(members)))                    # ascending but one member out of place
                members.insert(0, members.pop(j))
            docs.extend(members)
        run[qid] = {d: doc_scores[d] for d in docs}
    prepared = PreparedRun(QrelsIndex(qrels), run)
    assert isinstance(prepared.queries, prepared_module._LazyQueries)
    ref = reference(qrels, run)
    flat = prepared._flat
    assert flat.docids == [d for q in flat.qids for d in ref[q][0]]
    np.testing.assert_array_equal(flat.positive_grades, np.concatenate([ref[q][1] for q in flat.qids]))
    np.testing.assert_array_equal(flat.grades, np.concatenate([ref[q][2] for q in flat.qids]))
