"""The whole-run join (``flat_run``): ranking, tie groups and the judgments join of every query at once.

The reference is brute force, query by query, sharing nothing with the flat
path: Python's ``sorted`` on (score desc, docid desc) gives trec_eval's order,
tie groups are read off the stably sorted scores one neighbour at a time, and
every retrieved document is probed in its query's judgments.  A dict run is
made columns (``columns_of_dict``) and prepared; short rankings and long ones
both run, on scores full of ties with -0.0 beside 0.0.
"""
import numpy as np
import pytest
from measure_needs import Needs
from random_runs import tied_run

from irmeasures_markov._util._segments import segment_argsort_desc
from irmeasures_markov.ranking import UNJUDGED, PreparedRun, QrelsIndex
from irmeasures_markov.ranking import _join as flat_run
from irmeasures_markov.ranking import _order as order


def prepare_dict(qi, run, **options):
    """A dict run prepared as PreparedRun prepares it: made columns at the boundary, then joined."""
    columns, probed = flat_run.columns_of_dict(qi, run, probe=not options.get("judgments", False))
    return flat_run.prepare(qi, columns, probed=probed, **options)


def trec_order(scores):
    """The docids of one query in trec_eval order: score descending, then docid descending."""
    return sorted(sorted(scores, reverse=True), key=lambda d: -scores[d])


def stable_order(scores):
    """The docids of one query by score descending, ties in file order (what the sort gives before the tie-break)."""
    docs = list(scores)
    return [docs[i] for i in sorted(range(len(docs)), key=lambda i: -scores[docs[i]])]


def brute_tie_groups(scores):
    """Lists of the positions (0-based, in score order) of each group of >= 2 equal scores of one query."""
    ranked = [scores[d] for d in stable_order(scores)]
    groups, current = [], [0] if ranked else []
    for k in range(1, len(ranked)):
        if ranked[k] == ranked[k - 1]:   # -0.0 == 0.0: one score, as in the sort
            current.append(k)
        else:
            groups.append(current)
            current = [k]
    groups.append(current)
    return [g for g in groups if len(g) >= 2]


def evaluated(qrels, run):
    """The queries the flat layout keeps, in run order: retrieved something and judged."""
    return [q for q, d in run.items() if d and q in qrels]


def inputs(seed, long_rankings):
    length = 700 if long_rankings else 40
    qrels, run, _ = tied_run(seed, 5, length, scores=(-3, 3), step=0.5, grades=(-1, 3))
    run["unjudged-query"] = {"D00001": 1.0, "D00002": 1.0}   # not in the qrels: not evaluated
    run["q-empty"] = {}
    qrels["q-empty"] = {"D00001": 1}
    return qrels, run


@pytest.mark.parametrize("long_rankings", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_join_against_brute_force_sort_and_probe(seed, long_rankings):
    qrels, run = inputs(seed, long_rankings)
    flat = prepare_dict(QrelsIndex(qrels), run, join_docids=False)
    assert flat is not None
    qids = evaluated(qrels, run)
    assert flat.qids == qids
    ref_docs = [trec_order(run[q]) for q in qids]
    # positive grades are made before (and without) the docid tie-break of the order
    pairs = list(zip(qids, ref_docs, strict=True))
    positive = np.concatenate([[max(qrels[q].get(d, 0), 0) for d in docs] for q, docs in pairs])
    np.testing.assert_array_equal(flat.positive_grades, positive)
    assert flat.docids == [d for docs in ref_docs for d in docs]
    grades = np.concatenate([[qrels[q].get(d, UNJUDGED) for d in docs] for q, docs in pairs])
    np.testing.assert_array_equal(flat.grades, grades)
    np.testing.assert_array_equal(np.diff(flat.starts), [len(run[q]) for q in qids])
    for i, q in enumerate(qids):
        ranked = flat.query(i)
        assert ranked.qid == q and ranked.docids == ref_docs[i]
        np.testing.assert_array_equal(ranked.scores, [run[q][d] for d in ref_docs[i]])
    # the kept scores are the scores in stable score order, bit for bit (signed zeros included)
    kept = prepare_dict(QrelsIndex(qrels), run, join_docids=False, keep_scores=True).ranked_scores
    stable = np.array([run[q][d] for q in qids for d in stable_order(run[q])])
    np.testing.assert_array_equal(kept.view(np.int64), stable.view(np.int64))


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_tie_slots_and_groups_are_the_brute_force_tie_groups(seed, compact):
    """The same groups with the compact form (int32 slots, first-slot marks for scores), -0.0 beside 0.0."""
    qrels, run, _ = tied_run(seed, 6, 60, scores=(-2, 2), step=0.5)
    qids = evaluated(qrels, run)
    scores = np.array([s for q in qids for s in run[q].values()])
    starts = np.concatenate([[0], np.cumsum([len(run[q]) for q in qids])])
    ranked = scores[segment_argsort_desc(scores, starts)]
    slots, slot_scores = order.tie_slots(ranked, starts, compact=compact)
    assert slots.dtype == (np.int32 if compact else np.int64)
    new, group_start = order.tie_groups(slots, slot_scores, starts)
    groups = [slots[a:b].tolist() for a, b in zip(group_start, [*group_start[1:], slots.size], strict=True)]
    expected = [[int(starts[i]) + k for k in g] for i, q in enumerate(qids) for g in brute_tie_groups(run[q])]
    assert groups == expected
    assert int(new.sum()) == len(expected)


@pytest.mark.parametrize("seed", range(4))
def test_compact_ties_select_and_order_whole_groups_as_the_scores_do(seed):
    """Any selection of whole groups: the same groups, and fix_ties the same order, compact or not."""
    qrels, run, _ = tied_run(seed, 6, 80, scores=(-3, 3), step=0.5)
    qids = evaluated(qrels, run)
    keys = [d for q in qids for d in run[q]]
    scores = np.array([s for q in qids for s in run[q].values()])
    starts = np.concatenate([[0], np.cumsum([len(run[q]) for q in qids])])
    stable = segment_argsort_desc(scores, starts)
    ranked = scores[stable]
    full, compact = order.tie_slots(ranked, starts), order.tie_slots(ranked, starts, compact=True)
    new, group_start = order.tie_groups(*full, starts)
    rng = np.random.default_rng(seed)
    for keep_group in (np.ones(group_start.size, dtype=bool), rng.random(group_start.size) < 0.5):
        keep = keep_group[np.cumsum(new) - 1]
        a, b = (full[0][keep], full[1][keep]), (compact[0][keep], compact[1][keep])
        for x, y in zip(order.tie_groups(*a, starts), order.tie_groups(*b, starts), strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(order.fix_ties(stable.copy(), keys, starts, *a),
                                      order.fix_ties(stable.copy(), keys, starts, *b))


def test_no_tie_at_all_is_none():
    ranked = np.array([3.0, 2.0, 1.0, 3.0, 2.0])   # equal scores in two queries are not a tie
    assert order.tie_slots(ranked, np.array([0, 3, 5])) is None


def test_a_tie_does_not_cross_queries_and_signed_zeros_tie():
    ranked = np.array([1.0, 0.0, 0.0, -0.0, 5.0, 0.0])
    slots, slot_scores = order.tie_slots(ranked, np.array([0, 4, 6]))
    assert slots.tolist() == [1, 2, 3]
    new, _ = order.tie_groups(slots, slot_scores, np.array([0, 4, 6]))
    assert new.tolist() == [True, False, False]


@pytest.mark.parametrize("seed", range(4))
def test_positive_tie_order_orders_only_the_groups_with_a_positive_grade(seed):
    # many distinct scores: small tie groups, some with a positive grade and some without
    qrels, run, _ = tied_run(seed, 5, 700, scores=(-300, 300), step=0.5, grades=(-1, 3))
    flat = prepare_dict(QrelsIndex(qrels), run, join_docids=False)
    qids = evaluated(qrels, run)
    ties = flat._ties
    assert ties is not None   # long rankings keep the docid tie-break pending
    in_positive = flat.in_positive_tie_groups(ties)
    partial = [flat.keys[k] for k in flat.positive_tie_order.tolist()]
    start = 0
    n_kept = n_file = 0
    for q in qids:
        scores, judged = run[q], qrels[q]
        stable, final = stable_order(scores), trec_order(scores)
        mine = partial[start:start + len(scores)]
        positive_groups = set()
        for g in brute_tie_groups(scores):
            has_positive = any(judged.get(stable[k], 0) > 0 for k in g)
            expected = [final[k] for k in g] if has_positive else [stable[k] for k in g]
            assert [mine[k] for k in g] == expected
            n_kept, n_file = n_kept + has_positive, n_file + (not has_positive)
            if has_positive:
                positive_groups.update(start + k for k in g)
        # every rank with a positive grade holds the document of the final order
        for k, d in enumerate(final):
            if judged.get(d, 0) > 0:
                assert mine[k] == d
        # in_positive_tie_groups marks exactly the tied slots of the groups with a positive grade
        slots = ties[0]
        here = (slots >= start) & (slots < start + len(scores))
        assert set(slots[here & in_positive].tolist()) == positive_groups
        start += len(scores)
    assert n_kept and n_file   # both kinds of tie group occur
    # the final order, asked for afterwards, breaks the remaining ties too
    assert flat.docids == [d for q in qids for d in trec_order(run[q])]
    assert flat.positive_tie_order is flat.order


@pytest.mark.parametrize("long_rankings", [False, True])
def test_depth_keeps_the_top_of_each_full_ranking(long_rankings):
    qrels, run = inputs(7, long_rankings)
    flat = prepare_dict(QrelsIndex(qrels), run, join_docids=False, depth=25)
    qids = evaluated(qrels, run)
    assert flat.docids == [d for q in qids for d in trec_order(run[q])[:25]]
    assert np.diff(flat.key_starts).tolist() == [len(run[q]) for q in qids]


@pytest.mark.parametrize("bad", [{"q0": {"D1": float("nan")}}, {"q0": {"D1": float("inf")}}, {"q0": {1: 1.0}},
                                 {0: {"D1": 1.0}}])
def test_inputs_the_flat_path_refuses_fall_back_with_none(bad):
    qrels = {"q0": {"D1": 1}}
    assert flat_run._checked_columns(QrelsIndex(qrels), bad, True) is None


def test_expand_is_the_concatenated_ranges():
    from irmeasures_markov._util._segments import expand_ranges
    begin, size = np.array([5, 0, 9, 3]), np.array([2, 0, 3, 1])
    assert expand_ranges(begin, size).tolist() == [5, 6, 9, 10, 11, 3]


@pytest.mark.parametrize("block", [1 << 18, 500, 64])
@pytest.mark.parametrize("depth", [None, 25])
@pytest.mark.parametrize("long_rankings", [False, True])
def test_values_in_rank_order_is_the_lookup_gathered_in_rank_order(monkeypatch, long_rankings, depth, block):
    """Blocks of whole queries (one block, or many: a ranking of 700 is longer than a block of 500 or 64),
    rankings cut at a depth, and the partial tie order: ``lookup(keys)[order]`` bit for bit."""
    monkeypatch.setattr(flat_run, "LOOKUP_BLOCK", block)
    qrels, run = inputs(5, long_rankings)
    flat = prepare_dict(QrelsIndex(qrels), run, join_docids=block > 1000, depth=depth)
    value = {d: (int(d[1:]) * 0.37) % 11.0 - 5.0 for q in run for d in run[q]}
    calls = []

    def lookup(segments, joined):
        (docids,) = segments
        calls.append(len(docids))
        if joined is not None:
            assert joined == [flat_run.SEPARATOR.join(docids)]
        return np.array([value[d] for d in docids])

    every = np.array([value[d] for d in flat.keys])
    for order_ in (flat.positive_tie_order, flat.order):
        calls.clear()
        got = flat.values_in_rank_order(lookup, order_)
        np.testing.assert_array_equal(got.view(np.int64), every[order_].view(np.int64))
        assert sum(calls) == len(flat.keys)   # every docid looked up once, the ones past the depth included
        assert len(calls) == 1 if len(flat.keys) <= block else len(calls) > 1


@pytest.mark.parametrize("fix_block", [1, 7, 64])
@pytest.mark.parametrize("long_rankings", [False, True])
def test_fix_ties_in_blocks_of_whole_groups_is_trec_order(monkeypatch, long_rankings, fix_block):
    """The docid tie-break made block by block (a block of 1 slot still holds its whole group)."""
    monkeypatch.setattr(order, "_FIX_BLOCK", fix_block)
    qrels, run = inputs(3, long_rankings)
    flat = prepare_dict(QrelsIndex(qrels), run, join_docids=False)
    qids = evaluated(qrels, run)
    assert flat.docids == [d for q in qids for d in trec_order(run[q])]


class _ShortLength(dict):
    """A ranking whose ``len`` is one less than the items it holds."""

    def __len__(self):
        return dict.__len__(self) - 1


def test_long_rankings_whose_length_disagrees_with_their_items_fall_back_with_none():
    qrels, run = inputs(2, True)
    assert flat_run._checked_columns(QrelsIndex(qrels), run, True) is not None
    run["q1"] = _ShortLength(run["q1"])
    assert flat_run._checked_columns(QrelsIndex(qrels), run, True) is None
    with pytest.raises(ValueError, match="query 'q1': its mapping lists 700 documents but has length 699"):
        PreparedRun(QrelsIndex(qrels), run)


def test_docids_holding_a_newline_or_a_lone_surrogate_stay_whole():
    """A dict run's docids are kept as a list when made columns: a newline inside one splits nothing."""
    run = {"q1": {"a\nb": 2.0, "a": 1.0, "b": 1.0, "\ud800": 1.0, "c\n": 0.5}, "q2": {"x\ny": 1.0, "x": 1.0}}
    qrels = {"q1": {"a\nb": 1, "b": 2, "\ud800": 1}, "q2": {"x": 1, "x\ny": 0}}
    for needs in ([], [Needs(document_values=True, judgments=True)]):
        prepared = PreparedRun(QrelsIndex(qrels), run, needs)
        assert prepared.ranked_docids == [d for q in run for d in trec_order(run[q])]
        np.testing.assert_array_equal(prepared.full_grades, [qrels[q].get(d, UNJUDGED) for q in run
                                                             for d in trec_order(run[q])])
        assert [q.joined_keys for q in prepared.queries] == (["\n".join(run[q]) for q in run] if needs
                                                             else [None, None])
        values = prepared.document_values(lambda segments, joined: np.array([len(d) for s in segments for d in s]))
        assert values.tolist() == [len(d) for d in prepared.ranked_docids]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("decimals", [1, 2, 6])
def test_probing_the_mappings_with_the_positive_judgments_is_the_lookup(seed, decimals):
    """A dict run's positive grades found from its mappings (hits placed by score, tied hits by docid) equal
    the lookup of every docid in the positive tables put in rank order, also in a run whose tied hits' groups
    hold more documents than the run (one decimal: groups of dozens, each sorted once instead)."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(6):
        docs = [f"D{d}" for d in rng.choice(5000, size=400, replace=False).tolist()]
        scores = np.round(rng.normal(0, 1, size=400), decimals)
        scores[scores == 0] = rng.choice([0.0, -0.0], size=int((scores == 0).sum()))
        run[f"q{q}"] = dict(zip(docs, scores.tolist()))
        picks = rng.choice(docs + [f"X{k}" for k in range(50)], size=80, replace=False).tolist()
        qrels[f"q{q}"] = dict(zip(picks, rng.integers(-1, 4, size=80).tolist()))
    qi = QrelsIndex(qrels)
    columns, probed = flat_run.columns_of_dict(qi, run, probe=True)
    starts, scores = columns.bounds, columns.scores
    order_ = segment_argsort_desc(scores, starts)
    keys, qids = columns.docids, columns.qids
    ranked = scores[order_]
    got = flat_run._probe_positives(list(map(qi.positive_lists, qids)), probed, keys, order_, ranked, starts)
    index, tables = flat_run.judgment_tables(qi, positive=True)
    table_of = np.array([index[q] for q in qids])
    want = order.in_rank_order(flat_run._lookup(columns, table_of, tables, 0, None), order_, keys, starts,
                               order.tie_slots(ranked, starts))
    if decimals == 1:   # groups of dozens of documents, each holding hits: more than the run to compare
        ranks = np.flatnonzero(ranked[1:] == ranked[:-1])
        assert ranks.size > 1000
    np.testing.assert_array_equal(got, want)
