"""Readings of a prepared run (ranking/_scenarios.py, ranking/_arrangements.py) against direct constructions."""
import itertools
from math import factorial

import numpy as np
import pytest
from random_runs import tied_run

from irmeasures_markov.ranking import UNJUDGED, PreparedRun, QrelsIndex
from irmeasures_markov.ranking._arrangements import arrangement_counts, iter_arrangements, reorder_ties, sample_orders
from irmeasures_markov.ranking._holes import fill_ranks, judge_unjudged, judgment_patterns
from irmeasures_markov.ranking._scenarios import FILLED, identity_reading, query_rng, tie_groups_flat


def _prepared(seed, n_queries=3, length=7):
    qrels, run, _ = tied_run(seed, n_queries, length, scores=(-1, 1), step=1.0)
    return PreparedRun(QrelsIndex(qrels), run), qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_the_identity_reading_is_the_prepared_run(seed):
    prepared, _, _ = _prepared(seed)
    reading = identity_reading(prepared)
    for key in [dict(), dict(rel=2), dict(judged_only=True), dict(cutoff=3), dict(rel=0, judged_only=True, cutoff=2)]:
        a, b = prepared.batch(**key), reading.batch(**key)
        assert np.array_equal(a.grades, b.grades) and np.array_equal(a.offsets, b.offsets)
        assert np.array_equal(a.recall_base, b.recall_base)


@pytest.mark.parametrize("seed", range(5))
def test_tie_groups_are_runs_of_equal_scores_within_a_query(seed):
    prepared, _, run = _prepared(seed)
    gid, start = tie_groups_flat(prepared)
    expected = []
    g = -1
    for qid in prepared.qids:
        docs = sorted(run[qid].items(), key=lambda x: (x[1], x[0]), reverse=True)
        last = None
        for _, s in docs:
            if s != last:
                g += 1
                last = s
            expected.append(g)
    assert gid.tolist() == expected
    assert start.tolist() == [i for i in range(len(expected)) if i == 0 or expected[i] != expected[i - 1]]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("descending", [True, False])
def test_reordering_sorts_grades_inside_each_group_and_keeps_docid_order_otherwise(seed, descending):
    prepared, qrels, run = _prepared(seed)
    reading = identity_reading(prepared)
    keys = np.where(reading.grades > 0, reading.grades, 0)
    got = reorder_ties(reading, keys, descending).batch(judgments=True).grades.tolist()
    expected = []
    for qid in prepared.qids:
        docs = sorted(run[qid], key=lambda d: (run[qid][d], d), reverse=True)
        for _, grp in itertools.groupby(docs, key=lambda d: run[qid][d]):
            grp = list(grp)
            sign = -1 if descending else 1
            grp.sort(key=lambda d: sign * max(qrels[qid].get(d, 0), 0))   # stable: docid order kept
            expected.extend(qrels[qid].get(d, UNJUDGED) for d in grp)
    assert got == expected


def _multiset_permutations(keys):
    return set(itertools.permutations(keys))


@pytest.mark.parametrize("seed", range(6))
def test_every_distinct_arrangement_once(seed):
    prepared, _, _ = _prepared(seed, n_queries=2, length=6)
    reading = identity_reading(prepared)
    keys = np.where(reading.grades > 0, reading.grades, 0)
    log_counts, groups = arrangement_counts(reading, keys)
    gid = reading.group_ids
    for p in range(len(reading.qids)):
        a, b = reading.offsets[p], reading.offsets[p + 1]
        expected = 1
        for g in np.unique(gid[a:b]):
            members = keys[a:b][gid[a:b] == g]
            expected *= len(_multiset_permutations(members.tolist()))
        assert np.isclose(np.exp(log_counts[p]), expected)
        if expected == 1:
            continue
        seen = set()
        for chunk, owner in iter_arrangements(reading, keys, [p], groups, max_ranks=17):
            assert (owner == p).all()
            grades = chunk.grades.reshape(-1, b - a)
            for row in grades:
                t = tuple(np.where(row > 0, row, 0).tolist())
                assert t not in seen
                seen.add(t)
        assert len(seen) == expected
        # every arrangement keeps the documents outside the mixed groups in place
        mixed = np.concatenate(groups[p])
        for row in grades:
            still = np.setdiff1d(np.arange(a, b), mixed) - a
            assert np.array_equal(row[still], reading.grades[a:b][still])


def test_sampled_orders_are_uniform_over_the_group():
    prepared, _, _ = _prepared(3, n_queries=1, length=4)
    reading = identity_reading(prepared)
    # one group of 4 distinct documents: every keyed permutation, as often as the others
    keys = np.arange(reading.grades.size)
    reading._groups = np.zeros(reading.grades.size, dtype=np.int64)
    _, groups = arrangement_counts(reading, keys)
    chunk = sample_orders(reading, 0, groups[0], 24_000, query_rng(0, "q0"))
    rows = chunk.source.reshape(-1, 4)
    _, counts = np.unique(rows, axis=0, return_counts=True)
    assert counts.size == factorial(4)
    assert counts.min() > 800 and counts.max() < 1200   # 1000 expected each; 6 sd of a binomial is ~190


def test_query_rng_depends_on_the_seed_and_the_query_only():
    assert query_rng(1, "q").random() == query_rng(1, "q").random()
    assert query_rng(1, "q").random() != query_rng(2, "q").random()
    assert query_rng(1, "q").random() != query_rng(1, "r").random()


def test_judging_and_filling():
    qrels = {"q": {"a": 2, "b": 0}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0, "y": 0.5}}
    prepared = PreparedRun(QrelsIndex(qrels), run)
    reading = identity_reading(prepared)
    judged = judge_unjudged(reading, np.array([True, True, True, False]))
    assert judged.grades.tolist() == [2, 2, 0, UNJUDGED]          # x relevant at the highest grade; y not read
    assert judged.recall_bases(1).tolist() == [2] and judged.recall_bases(3).tolist() == [0]
    assert dict(judged.qrels_index.qrels[judged.qids[0]]) == {"a": 2, "b": 0, "x": 2}
    filled = fill_ranks(judged, np.array([6]))
    assert filled.grades.tolist() == [2, 2, 0, UNJUDGED, 2, 2]
    assert filled.source.tolist()[-2:] == [FILLED, FILLED]
    assert filled.recall_bases(1).tolist() == [2]                # filled ranks join no recall base
    assert np.isnan(filled.scores[-2:]).all() and len(set(filled.group_ids[-2:].tolist())) == 2


def test_judgment_patterns_enumerate_every_judgment_and_the_fill_block():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "y": 1.0}}
    prepared = PreparedRun(QrelsIndex(qrels), run)
    full = fill_ranks(identity_reading(prepared), np.array([5]))
    targets = np.array([1, 2])
    patterns, exact = judgment_patterns(full, 0, targets, 3, 16, 0, query_rng(0, "q"))
    assert exact
    rows = {tuple(patterns.grades[a:b].tolist())
            for a, b in zip(patterns.offsets[:-1].tolist(), patterns.offsets[1:].tolist())}
    assert rows == {(1, gx, gy) + fill for gx in (0, 1) for gy in (0, 1) for fill in ((), (1, 1))}
