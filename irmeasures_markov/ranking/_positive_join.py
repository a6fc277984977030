"""The positive join: each query's ranking joined with its positive judgments only.

A long ranking (about 1,000 documents) holds few documents with a positive
grade (about 100).  Probing the ranking's dict with those judgments finds them,
and each is placed at its rank by a binary search on its score among the
ranked scores; inside a tie group of scores, by its docid (trec_eval order).
:func:`positive_hits` does it for every query of a run at once.  Why:
docs/design.md, "The positive join".
"""
from __future__ import annotations

from bisect import bisect_right
from itertools import chain
from operator import gt

import numpy as np

from irmeasures_markov._util._segments import segment_sum

__all__ = ["positive_hits"]

#: tied hits times their tie group's size above which :func:`positive_hits` places the tied hits with
#: one sorted docid list per tie group instead of comparing every hit with every member of its group
_TIE_COMPARE_MAX = 1 << 20
#: tied hits of :func:`positive_hits` in a group of at least _TIE_SORT_MIN_SIZE documents holding at least
#: _TIE_SORT_MIN_HITS hits are placed by sorting the group's docids once instead of comparing each hit with the group
_TIE_SORT_MIN_HITS = 3
_TIE_SORT_MIN_SIZE = 16


def positive_hits(positive: list[tuple[list[str], np.ndarray]], probed: np.ndarray, keys: list[str],
                  order: np.ndarray, ranked: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank and grade of every hit (a positive judgment the ranking retrieved) of every query (flat layout).

    Each hit is placed at its rank by a binary search on its score among its
    query's ranked scores; a hit inside a tie group of scores goes after the
    group members whose docid is larger (trec_eval order: docid descending
    within a tie).  Only as many numbers as there are hits: the array of one
    grade per rank (``out[rank] = grades``) can then be made once ``ranked``
    (which the placing reads) is freed.

    Parameters
    ----------
    positive : list of tuple
        Each query's positive judgments as ``(docids, grades)``
        (:meth:`~irmeasures_markov.ranking._qrels_index.QrelsIndex.positive_lists`).
    probed : numpy.ndarray
        The ranking's score of each of those docids, NaN where not retrieved
        (scores are finite).
    keys : list of str
        The docids in file order, query after query.
    order : numpy.ndarray
        Index into ``keys`` of the document at each rank; it only needs to be
        sorted by score (the order inside a tie group does not matter here).
    ranked : numpy.ndarray
        ``scores[order]``.
    starts : numpy.ndarray
        Query ``i`` occupies ``slice(starts[i], starts[i+1])``.

    Returns
    -------
    rank : numpy.ndarray
        int64, the rank (flat index) of each hit, distinct.
    grades : numpy.ndarray
        int64, the grade of each hit (> 0).
    """
    n = order.size
    judged_keys = [p[0] for p in positive]
    n_positive = np.fromiter(map(len, judged_keys), dtype=np.int64, count=len(judged_keys))
    found = np.flatnonzero(~np.isnan(probed))
    m = found.size
    if not m:
        return found, np.zeros(0, dtype=np.int64)
    hit_scores = probed[found]
    del probed
    hit_grades = np.concatenate([p[1] for p in positive])[found]
    positive_starts = np.zeros(n_positive.size + 1, dtype=np.int64)
    np.cumsum(n_positive, out=positive_starts[1:])
    counts = np.diff(np.searchsorted(found, positive_starts))     # hits per query
    # every hit's query bounds, then one bisection of all hits at once (no Python step per query, and no array
    # keyed over the whole run)
    query_of_hit = np.repeat(np.arange(counts.size), counts)
    query_end = starts[query_of_hit + 1]
    first = _bisect_descending(ranked, starts[query_of_hit], query_end, hit_scores, strict=False)
    past = first + 1
    # a hit tied with the next ranked document: where its tie group ends, by a second bisection
    nxt = np.minimum(past, n - 1)
    again = np.flatnonzero((past < query_end) & (ranked[nxt] == hit_scores))
    if again.size:
        past[again] = _bisect_descending(ranked, past[again], query_end[again], hit_scores[again], strict=True)
    tied = np.flatnonzero(past - first > 1)
    rank = first
    if tied.size:
        judged_flat = list(chain.from_iterable(judged_keys))
        sizes = past[tied] - first[tied]
        # a large group with several hits is sorted once (s log s C-level comparisons) rather than compared
        # with each of its hits (s per hit, each a Python-level step)
        _, group, hits_in_group = np.unique(first[tied], return_inverse=True, return_counts=True)
        by_sort = (hits_in_group[group] >= _TIE_SORT_MIN_HITS) & (sizes >= _TIE_SORT_MIN_SIZE)
        if int(sizes[~by_sort].sum()) > _TIE_COMPARE_MAX:
            by_sort[:] = True
        if by_sort.any():  # sort each such group's docids once
            groups: dict[int, list[str]] = {}
            for j in tied[by_sort].tolist():
                a, b = int(first[j]), int(past[j])
                group_keys = groups.get(a)
                if group_keys is None:
                    group_keys = groups[a] = sorted(map(keys.__getitem__, order[a:b].tolist()))
                rank[j] = a + (b - a) - bisect_right(group_keys, judged_flat[found[j]])
            tied, sizes = tied[~by_sort], sizes[~by_sort]
        total = int(sizes.sum())
        if total:
            # every tied hit against every member of its group: rank = first + members with a larger docid
            begin = np.repeat(first[tied] - np.cumsum(sizes) + sizes, sizes)
            members = order[begin + np.arange(total)].tolist()
            owner = found[np.repeat(tied, sizes)].tolist()         # each comparison's hit, in judged_flat
            larger = np.fromiter(map(gt, map(keys.__getitem__, members), map(judged_flat.__getitem__, owner)),
                                 dtype=bool, count=total)
            offsets = np.zeros(tied.size + 1, dtype=np.int64)
            np.cumsum(sizes, out=offsets[1:])
            rank[tied] += segment_sum(larger, offsets)
    return rank, hit_grades


def _bisect_descending(ranked: np.ndarray, lo: np.ndarray, hi: np.ndarray, needles: np.ndarray,
                       strict: bool) -> np.ndarray:
    """For each needle, the first index of ``ranked[lo:hi]`` (non-increasing) whose value is ``<= needle``
    (``< needle`` when ``strict``), ``hi`` when none: a binary search of every needle at once.

    The same index as ``searchsorted`` of the negated values (side left, or right when ``strict``):
    comparisons of the same floats (-0.0 equals 0.0).
    """
    lo = np.array(lo, dtype=np.int64)   # a new array even when no step runs
    if lo.size == 0:
        return lo
    last = ranked.size - 1
    for _ in range(int((hi - lo).max()).bit_length()):   # each step halves every interval at least
        mid = (lo + hi) >> 1
        value = ranked[np.minimum(mid, last)]
        right = (value >= needles) if strict else (value > needles)
        right &= lo < hi
        # lo moves past mid where the value there is still too large; elsewhere hi comes down to mid
        lo = np.where(right, mid + 1, lo)
        hi = np.where(right, hi, mid)
    return lo
