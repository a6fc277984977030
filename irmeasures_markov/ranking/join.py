"""Whole-run preparation: every query of a run ranked and joined with its judgments as one set of arrays.

:class:`~irmeasures_markov.rankings.PreparedRun` prepares a run here when it
can (every id a str, every score a finite number): the scores of all queries
are sorted segment by segment at once, ties are broken by docid only where a
measure needs it, and the judgments are joined without Python code per query
or document (:func:`_prepare_flat`).  The result, :class:`_FlatRun`, is the
same as preparing each query alone (tests/test_batching.py,
tests/test_prep_long.py, tests/test_grades_join.py).
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import chain, islice, repeat
from operator import attrgetter, gt, itemgetter, lt, methodcaller
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np

from .docid_table import SEPARATOR
from .rankings import UNJUDGED, QrelsIndex, RankedQuery
from .segments import segment_argsort_desc, segment_sum, within_segments


class _FlatRun:
    """Every evaluated query of a run in one flat layout: what :class:`PreparedRun` keeps.

    Query ``i`` occupies ``slice(starts[i], starts[i+1])`` of every array.
    ``keys`` holds the docids in file order (query after query); ``order``
    the index into ``keys`` of the document at each rank (trec_eval order),
    ``positive_grades`` the positive grade at each rank.  ``runs`` holds the
    run's own mapping of each query, from which :meth:`query` reads the
    scores again (the flat layout keeps no copy of them: 8 bytes per
    document less).  The arrays are read-only: batches share them instead
    of copying.
    """
    __slots__ = ("qids", "judged", "keys", "starts", "key_starts", "_state", "runs", "positive_grades",
                 "joined", "joins", "_grades", "_docids")

    def __init__(self, qids, judged, keys, starts, order, runs, positive_grades, joined, joins=False,
                 key_starts=None, ties=None, grades=None):
        self.qids: List[str] = qids
        self.judged: List[Mapping[str, int]] = judged
        self.keys: List[str] = keys
        self.starts = _frozen(starts)
        #: where each query's docids start in ``keys``: ``starts`` unless the rankings were cut at a depth
        self.key_starts = self.starts if key_starts is None else _frozen(key_starts)
        #: ``(order, ties, positive_ties_ordered)``, replaced whole (so a reader in another thread always sees
        #: a consistent triple): ``ties``, the ``(slots, scores)`` of the tie groups (:func:`_tie_slots`) while
        #: ``order`` may still list them in file order (the docid tie-break is made on first use of ``order``,
        #: which many measures never need), None once it is final; ``positive_ties_ordered``: the groups that
        #: hold a positive grade are in docid order already (:attr:`positive_tie_order`)
        self._state = (_frozen(order), ties, ties is None)
        self.runs: Optional[List[Mapping[str, float]]] = runs
        self.positive_grades = _frozen(positive_grades)
        #: all docids in file order joined by newlines, when the run was prepared with join_docids
        self.joined: Optional[str] = joined
        #: whether the run was prepared with join_docids (each RankedQuery then has its joined_keys)
        self.joins = joins or joined is not None
        self._grades = None if grades is None else _frozen(grades)
        self._docids = None

    @classmethod
    def from_queries(cls, queries: List[RankedQuery]) -> "_FlatRun":
        """The flat layout of rankings prepared one query at a time."""
        key_starts = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([len(q._keys) for q in queries], out=key_starts[1:])
        starts = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([q._order.size for q in queries], out=starts[1:])
        keys = list(chain.from_iterable(q._keys for q in queries))
        # no whole-run joined string: document_values joins the docids block by block, in bounded memory
        joins = bool(queries) and all(q.joined_keys is not None for q in queries)
        cat = (lambda arrays, dtype: np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype))
        order = cat([q._order + s for q, s in zip(queries, key_starts.tolist())], np.int64)
        return cls([q.qid for q in queries], [q._judged for q in queries], keys, starts, order, None,
                   cat([q.positive_grades for q in queries], np.int64), None, joins, key_starts=key_starts)

    @property
    def _ties(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        return self._state[1]

    @property
    def order(self) -> np.ndarray:
        """Index into ``keys`` of the document at each rank (trec_eval order), read-only."""
        order, ties, _ = self._state
        if ties is not None:
            # fixed in a copy, published whole: a reader in another thread never sees a half-sorted order
            # (any order of each tie group will do as the start: _fix_ties orders each group by docid alone)
            order = _frozen(_fix_ties(order.copy(), self.keys, self.key_starts, *ties))
            self._state = (order, None, True)
        return order

    @property
    def positive_tie_order(self) -> np.ndarray:
        """``order`` with the docid tie-break made only in the tie groups that hold a positive grade, read-only.

        In the other tie groups (every member's positive grade 0) the members
        keep file order.  What such a group holds, and where it sits, is the
        same as in ``order``, and at every rank with a positive grade the
        document is the one of ``order``: enough for a consumer that reads
        per-document values at positive ranks and only sums the others.
        Why: on TREC-8, 21% of the tied documents share a tie group with a
        positive grade, so the tie-break costs a fifth.  Once ``order`` is
        final, this is ``order``.  This order replaces the pending one (no
        second array per document): the tie break of ``order``, if it comes,
        starts from it.
        """
        order, ties, positive_ordered = self._state
        if positive_ordered:
            return order
        slots, slot_scores = ties
        kept = self.in_positive_tie_groups(ties)
        if kept.any():
            order = _frozen(_fix_ties(order.copy(), self.keys, self.key_starts, slots[kept], slot_scores[kept]))
        self._state = (order, ties, True)
        return order

    def in_positive_tie_groups(self, ties: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """For each tied slot of ``ties`` (:func:`_tie_slots`), whether its tie group holds a positive grade."""
        slots, slot_scores = ties
        new, group_start = _tie_groups(slots, slot_scores, self.key_starts)
        return np.logical_or.reduceat(self.positive_grades[slots] > 0, group_start)[np.cumsum(new) - 1]

    @property
    def n_documents(self) -> int:
        return len(self.keys)

    @property
    def grades(self) -> np.ndarray:
        """Every grade at every rank, ``UNJUDGED`` where there is no judgment (joined on first use)."""
        if self._grades is None:
            n = len(self.keys)
            getters = [d.get for d in self.judged]
            lengths = np.diff(self.key_starts).tolist()
            # one C-level dict probe per document: chained maps, no Python code per query or document
            per_query = map(map, getters, _segments(self.keys, lengths), repeat(repeat(UNJUDGED)))
            full = np.fromiter(chain.from_iterable(per_query), dtype=np.int64, count=n)
            order, ties, _ = self._state   # one consistent pair, whatever another thread publishes meanwhile
            self._grades = _frozen(_in_rank_order(full, order, self.keys, self.key_starts, ties))
        return self._grades

    @property
    def docids(self) -> List[str]:
        """The docids in rank order, query after query."""
        if self._docids is None:
            self._docids = list(map(self.keys.__getitem__, self.order.tolist()))
        return self._docids

    def query(self, i: int) -> RankedQuery:
        a, b = int(self.starts[i]), int(self.starts[i + 1])
        ka, kb = int(self.key_starts[i]), int(self.key_starts[i + 1])
        keys = self.keys[ka:kb]
        order = self.order[a:b] - ka
        scores = np.fromiter(self.runs[i].values(), dtype=np.float64, count=kb - ka)[order]
        return RankedQuery(self.qids[i], keys, order, scores, self.positive_grades[a:b], self.judged[i],
                           SEPARATOR.join(keys) if self.joins else None)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _segments(keys: List[str], lengths: List[int]) -> Iterator[Iterator[str]]:
    """``keys`` cut into consecutive runs of the given lengths (each to be read in turn, once)."""
    return map(islice, repeat(iter(keys)), lengths)


class _LazyQueries(Sequence):
    """``PreparedRun.queries`` for a run prepared flat: each :class:`RankedQuery` is made on first access."""

    def __init__(self, flat: _FlatRun):
        self._flat = flat
        self._made: Dict[int, RankedQuery] = {}

    def __len__(self) -> int:
        return len(self._flat.qids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("query index out of range")
        i %= n
        q = self._made.get(i)
        if q is None:
            q = self._made[i] = self._flat.query(i)
        return q


def _break_ties_flat(order: np.ndarray, keys: List[str], scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Reorder tie groups by docid descending, all queries at once (see :func:`_trec_order`)."""
    ties = _tie_slots(scores[order], starts)
    return order if ties is None else _fix_ties(order, keys, starts, *ties)


def _tie_slots(ranked: np.ndarray, starts: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """``(slots, scores)`` of the ranked positions inside a tie group of scores (flat layout), or None."""
    tie = within_segments(ranked[1:] == ranked[:-1], starts)
    if not tie.any():
        return None
    in_group = np.zeros(ranked.size, dtype=bool)
    in_group[1:] = tie
    in_group[:-1] |= tie
    slots = np.flatnonzero(in_group)
    return slots, ranked[slots]


def _tie_groups(slots: np.ndarray, slot_scores: np.ndarray, starts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(new, group_start)`` of the tie groups of :func:`_tie_slots`: consecutive tied slots of one query with
    one score (-0.0 and 0.0 are one score, as in the sort); ``new`` marks each group's first slot."""
    query = np.searchsorted(starts, slots, side="right") - 1
    new = np.ones(slots.size, dtype=bool)
    new[1:] = (slot_scores[1:] != slot_scores[:-1]) | (query[1:] != query[:-1])
    return new, np.flatnonzero(new)


def _fix_ties(order: np.ndarray, keys: List[str], starts: np.ndarray, slots: np.ndarray,
              slot_scores: np.ndarray) -> np.ndarray:
    """Sort the tie groups of a stable score order by docid descending, in place (see :func:`_tie_slots`).

    Runs often list a tie group in docid order already (TREC-8: 88% of the
    tied documents ascending, 3% descending): one comparison of each member
    with the next finds those groups, which are reversed or kept as they are.
    The other groups are ordered as follows.  Most tie groups are small (on
    TREC-8 runs, half have 2 documents, 99% at most 16), so a member's place
    is found by comparing it with each other member of its group (C-level
    string comparisons, s*(s-1)/2 per group of s) for a fraction of the
    comparisons of a sort of every tied docid together; groups larger than
    ``_PAIRWISE_MAX_GROUP`` are sorted, and only their members.
    """
    members = order[slots]
    m = slots.size
    # a tuple from one C-level call (itemgetter of one index gives the item itself)
    member_keys = itemgetter(*members.tolist())(keys) if m > 1 else tuple(map(keys.__getitem__, members.tolist()))
    new, group_start = _tie_groups(slots, slot_scores, starts)
    group_size = np.diff(np.append(group_start, m))
    # rises[j]: member j's docid is smaller than member j+1's (docids of a query are distinct)
    rises = np.fromiter(map(lt, member_keys[:-1], member_keys[1:]), dtype=bool, count=m - 1)
    rises &= ~new[1:]                                           # only pairs inside a group
    n_rises = np.add.reduceat(rises, group_start) if m > 1 else np.zeros(0, dtype=np.int64)
    ascending = n_rises == group_size - 1
    dest = np.arange(m, dtype=np.int64)  # where, among the slots, each member goes: kept where descending
    if ascending.any():
        g0, gs = group_start[ascending], group_size[ascending]
        idx = _expand(g0, gs)
        dest[idx] = np.repeat(2 * g0 + gs - 1, gs) - idx        # reversed: g0 + (g0 + gs - 1 - idx)
    other = (n_rises > 0) & ~ascending
    small = other & (group_size <= _PAIRWISE_MAX_GROUP)
    if small.any():
        g0, gs = group_start[small], group_size[small]
        idx = _expand(g0, gs)                                    # the members of small groups
        after = np.repeat(g0 + gs, gs) - idx - 1                 # members of its group after each member
        this = np.repeat(idx, after)
        other_member = _expand(idx + 1, after)                   # every pair of a group once, this < other
        larger = np.fromiter(map(gt, map(member_keys.__getitem__, other_member.tolist()),
                                 map(member_keys.__getitem__, this.tolist())), dtype=bool, count=this.size)
        # members with a larger docid go first: each pair counts once for one of its two members
        above = np.bincount(this[larger], minlength=m) + np.bincount(other_member[~larger], minlength=m)
        dest[idx] = np.repeat(g0, gs) + above[idx]
    big = other & ~small
    if big.any():
        big_start, big_size = group_start[big], group_size[big]
        idx = _expand(big_start, big_size)
        big_keys = list(map(member_keys.__getitem__, idx.tolist()))
        by_key = np.fromiter(sorted(range(idx.size), key=big_keys.__getitem__, reverse=True), dtype=np.int64,
                             count=idx.size)
        group = np.repeat(np.arange(big_start.size), big_size)
        # docid descending within each group (a stable sort by group keeps the docid order)
        dest[idx[by_key[np.argsort(group[by_key], kind="stable")]]] = idx
    order[slots[dest]] = members
    return order


def _in_rank_order(values: np.ndarray, order: np.ndarray, keys: List[str], key_starts: np.ndarray,
                   ties: Optional[Tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``values`` (one per document of ``keys``) at each rank: ``values[order]`` once ``order``'s ties are broken.

    ``ties`` (:func:`_tie_slots`, or None when ``order`` is final) are the
    tie groups still in file order.  Only the groups whose members have
    different values are ordered by docid: a group of equal values reads the
    same in any order, and ordering every tie group costs more than the join
    itself on runs with many ties (docs/benchmarks.md).
    ``order`` itself is left as it is, for the measures that never need it.

    Most mixed groups are many unjudged documents and a few judged ones: in
    a group where at most ``_ODD_COMPARE_MAX`` members differ from the
    group's smallest value, each of those is placed by counting the members
    with a larger docid (as :func:`_join_positive_flat` places tied hits),
    and the others all read the smallest value; other mixed groups are
    ordered by :func:`_fix_ties`.
    """
    out = values[order]
    if ties is None:
        return out
    slots, slot_scores = ties
    m = slots.size
    new, group_start = _tie_groups(slots, slot_scores, key_starts)
    group = np.cumsum(new) - 1
    member = out[slots]
    low = np.minimum.reduceat(member, group_start)
    mixed = low != np.maximum.reduceat(member, group_start)
    if not mixed.any():
        return out
    odd = member != low[group]
    few = mixed & (np.add.reduceat(odd, group_start) <= _ODD_COMPARE_MAX)
    many = mixed & ~few
    if many.any():
        keep = many[group]
        kept = slots[keep]
        fixed = _fix_ties(order.copy(), keys, key_starts, kept, slot_scores[keep])
        out[kept] = values[fixed[kept]]
    if few.any():
        placed = few[group]
        mover = np.flatnonzero(odd & placed)              # members (indices into slots) to place
        begin = group_start[group[mover]]
        size = np.append(group_start[1:], m)[group[mover]] - begin
        others = _expand(begin, size)                     # every member of each mover's group
        movers = np.repeat(mover, size)
        ranked_keys = itemgetter(*order[slots].tolist())(keys)      # slots: at least one group of two
        larger = np.fromiter(map(gt, map(ranked_keys.__getitem__, others.tolist()),
                                 map(ranked_keys.__getitem__, movers.tolist())), dtype=bool, count=others.size)
        offsets = np.zeros(mover.size + 1, dtype=np.int64)
        np.cumsum(size, out=offsets[1:])
        out[slots[placed]] = low[group[placed]]
        # docids are distinct within a query: a mover goes after the members with a larger docid
        out[slots[begin + segment_sum(larger, offsets)]] = member[mover]
    return out


def _expand(begin: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``concatenate([arange(b, b + s) for b, s in zip(begin, size)])`` without a Python step per range."""
    total = int(size.sum())
    return np.repeat(begin - np.cumsum(size) + size, size) + np.arange(total, dtype=np.int64)


#: runs whose rankings hold this many documents on average are joined with their judgments by probing each
#: query's ranking with its positive judgments (about 100 of 1000 documents on TREC-8) instead of probing the
#: judgments with every retrieved document (measured crossover: 300-1000)
_FLAT_MAX_MEAN_LENGTH = 512
#: tied hits times their tie group's size above which :func:`_join_positive_flat` places the tied hits with
#: one sorted docid list per tie group instead of comparing every hit with every member of its group
_TIE_COMPARE_MAX = 1 << 20
#: mixed-grade tie groups with at most this many members off the group's smallest grade place those members by
#: comparing each with the whole group, instead of ordering the group (:func:`_in_rank_order`)
_ODD_COMPARE_MAX = 4
#: tied hits of :func:`_join_positive_flat` in a group of at least _TIE_SORT_MIN_SIZE documents holding at least
#: _TIE_SORT_MIN_HITS hits are placed by sorting the group's docids once instead of comparing each hit with the group
_TIE_SORT_MIN_HITS = 3
_TIE_SORT_MIN_SIZE = 16
#: tie groups of at most this many documents are ordered by comparing every pair of members (:func:`_fix_ties`)
_PAIRWISE_MAX_GROUP = 8
#: documents per block where a whole-run step would otherwise hold a copy of the run (the docid check,
#: the per-document lookups of document_values)
_CHECK_BLOCK = 1 << 16
_LOOKUP_BLOCK = 1 << 18


def _read_long_rankings(dicts: List[Mapping[str, float]], positive: List[Tuple[List[str], np.ndarray]], n: int,
                        check_ids: bool, join: bool = False):
    """``(keys, scores, probed, joined)`` of a run of long rankings, query by query; None when an input check fails.

    ``keys`` are the docids in file order, ``scores`` their scores, and
    ``probed`` the score of each positive judgment of ``positive`` (each
    query's ``(docids, grades)``), NaN where not retrieved.  Why query by
    query: the three reads of a ranking's dict (about 100 KB for 1,000
    documents) then follow one another while it is in cache, where three
    passes over the whole run fetched every dict from memory three times.
    ``check_ids``: check that every docid is a str;
    ``join``: also give ``joined``, every docid joined by newlines (checked
    so), else ``joined`` is None.
    """
    keys: List[str] = []
    extend = keys.extend
    scores = np.empty(n)
    probes = []
    parts: List[str] = []
    a = 0
    nan = np.nan
    try:
        for d, (judged, _) in zip(dicts, positive):
            b = a + len(d)
            extend(d)
            if join:
                parts.append(SEPARATOR.join(d))
            elif check_ids:
                "".join(d)
            scores[a:b] = np.fromiter(d.values(), dtype=np.float64, count=b - a)
            probes.append(np.fromiter(map(d.get, judged, repeat(nan)), dtype=np.float64, count=len(judged)))
            a = b
    except (TypeError, ValueError):
        return None
    if a != n:
        return None
    joined = SEPARATOR.join(parts) if join else None
    return keys, scores, (np.concatenate(probes) if probes else np.zeros(0)), joined


def _join_positive_flat(positive: List[Tuple[List[str], np.ndarray]], probed: np.ndarray, keys: List[str],
                        order: np.ndarray, ranked: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Positive grade at every rank of every query (flat layout), joined through the positive judgments only.

    Why: probing every retrieved document costs a dict lookup per document
    (in a dict of all ~1700 judgments of a TREC-8 topic, often a cache miss);
    a query has ~100 positive judgments, so probing the ranking's dict with
    each of those (C-level, the score or NaN) finds the hits and their
    scores for a tenth of the probes.  Each hit is then placed at its
    rank by binary search on its score among its query's ranked scores.
    A hit inside a tie group of scores goes after the group members whose
    docid is larger (trec_eval order: docid descending within a tie).
    ``ranked`` is ``scores[order]``; ``order`` only needs to be sorted by
    score: the order inside a tie group does not matter here.
    ``positive`` holds each query's positive judgments as ``(docids, grades)``
    and ``probed`` the ranking's score of each of those docids, NaN where not
    retrieved (scores are finite), both as :func:`_read_long_rankings` reads them.
    """
    n = order.size
    out = np.zeros(n, dtype=np.int64)
    judged_keys = [p[0] for p in positive]
    n_positive = np.fromiter(map(len, judged_keys), dtype=np.int64, count=len(judged_keys))
    found = np.flatnonzero(~np.isnan(probed))
    m = found.size
    if not m:
        return out
    hit_scores = probed[found]
    del probed
    hit_grades = np.concatenate([p[1] for p in positive])[found]
    positive_starts = np.zeros(n_positive.size + 1, dtype=np.int64)
    np.cumsum(n_positive, out=positive_starts[1:])
    counts = np.diff(np.searchsorted(found, positive_starts))     # hits per query
    # every hit's query bounds, then one bisection of all hits at once: a step per query (two searchsorted
    # calls, ~50 per TREC-8 run) cost more than the whole-array steps of a bisection (log2 of the longest
    # ranking, each on one entry per hit), and no array is keyed over the whole run
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
        # with each of its hits (s per hit, each a Python-level step): TREC-8's heavily tied runs made up to
        # 200k such comparisons per run
        _, group, hits_in_group = np.unique(first[tied], return_inverse=True, return_counts=True)
        by_sort = (hits_in_group[group] >= _TIE_SORT_MIN_HITS) & (sizes >= _TIE_SORT_MIN_SIZE)
        if int(sizes[~by_sort].sum()) > _TIE_COMPARE_MAX:
            by_sort[:] = True
        if by_sort.any():  # sort each such group's docids once
            groups: Dict[int, List[str]] = {}
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
    out[rank] = hit_grades
    return out


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


def _prepare_flat(qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], join_docids: bool,
                  ids_checked: bool = False, depth: Optional[int] = None,
                  judgments: bool = False) -> Optional[_FlatRun]:
    """Rank and join every query of ``run`` at once, with no Python code per query or document.

    Returns None when an input check fails (a non-str id, a score that is not
    a finite number, a mapping whose length disagrees with its items), and
    :class:`PreparedRun` then prepares query by query, which names the culprit.
    Long rankings (``_FLAT_MAX_MEAN_LENGTH``) are joined through their
    positive judgments (:func:`_join_positive_flat`), short ones by probing
    every document; long rankings ranked to a ``depth`` give None (the
    per-query partial sort is cheaper).  With ``judgments``, every
    retrieved document is probed in the query's judgments at once (the
    grades every ``judgments=True`` batch reads), and the positive grades
    are read from those instead of a second join.
    The result is the same as preparing each query alone (tests/test_batching.py).
    """
    if not ids_checked and not all(map(isinstance, run, repeat(str))):
        return None
    judged_all = qrels.qrels
    qids = [q for q, d in run.items() if len(d) and q in judged_all]
    dicts = list(map(run.__getitem__, qids))
    if len(qids) != len(run) and not ids_checked:
        kept = set(qids)
        skipped = [d for q, d in run.items() if q not in kept]
        if not set(map(type, chain.from_iterable(skipped))) <= {str}:
            return None
    lengths = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    long_rankings = int(lengths.sum()) >= _FLAT_MAX_MEAN_LENGTH * max(1, len(dicts))
    if long_rankings and depth is not None:
        return None  # a partial sort and a probe per ranked document, query by query, cost less (measured 2x)
    n = int(lengths.sum())
    # a run of one lookup block keeps its docids joined (document_values reads them from there)
    join = join_docids and n <= _LOOKUP_BLOCK
    joined = None
    if long_rankings and not judgments:
        # each query's dict read once while it is in cache: its docids, its scores and its positive judgments
        positive_lists = list(map(qrels.positive_lists, qids))
        read = _read_long_rankings(dicts, positive_lists, n, check_ids=not ids_checked, join=join)
        if read is None:
            return None
        keys, scores, probed, joined = read
    else:
        keys = list(chain.from_iterable(dicts))
        if n != len(keys):
            return None
        try:
            if join:
                joined = SEPARATOR.join(keys)  # the same C-level join checks the ids
            else:
                # the join checks that every docid is a str at C speed; in blocks, so it never holds a copy of
                # the run
                for a in range(0, 0 if ids_checked else n, _CHECK_BLOCK):
                    "".join(keys[a:a + _CHECK_BLOCK])
            scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), dicts)), dtype=np.float64, count=n)
        except (TypeError, ValueError):
            return None
    if not np.isfinite(scores).all():
        return None
    starts = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    order = segment_argsort_desc(scores, starts)
    ranked = scores[order]
    del scores
    ties = _tie_slots(ranked, starts)
    cut = depth is not None and lengths.size and int(lengths.max()) > depth
    judged = list(map(judged_all.__getitem__, qids))
    grades = None
    if long_rankings and not judgments:
        # the join needs only which documents tie, not their order: the docid tie-break waits for a use
        positive = _join_positive_flat(positive_lists, probed, keys, order, ranked, starts)
    else:
        if ties is not None and not long_rankings:
            order, ties = _fix_ties(order, keys, starts, *ties), None
        # one C-level probe of the query's judgments per retrieved document: across a run of short rankings
        # this costs less than probing each query's ranking with its positive judgments and placing the hits
        # by binary search (a few Python steps per query)
        getters = list(map(attrgetter("get"), judged))
        missing = UNJUDGED if judgments else 0
        full = np.fromiter(chain.from_iterable(map(map, getters, dicts, repeat(repeat(missing)))), dtype=np.int64,
                           count=n)
        # long rankings keep their docid tie-break pending: only tie groups of mixed grades are ordered
        positive = _in_rank_order(full, order, keys, starts, ties)
        del full
        if judgments:
            grades = positive.copy()
        np.maximum(positive, 0, out=positive)  # grade where > 0, else 0 (judged non-relevant or unjudged)
    del ranked
    key_starts = starts
    if cut:
        if ties is not None:
            order, ties = _fix_ties(order, keys, starts, *ties), None
        # ranked to a depth: the first min(depth, n) documents of each full ranking (a full sort of short
        # rankings costs less than a partial sort per query)
        top = np.arange(n, dtype=np.int64) - np.repeat(starts[:-1], lengths) < depth
        order, positive = order[top], positive[top]
        if grades is not None:
            grades = grades[top]
        starts = np.zeros_like(key_starts)
        np.cumsum(np.minimum(lengths, depth), out=starts[1:])
    # a larger run is not joined whole: document_values joins its docids block by block, which bounds its memory
    return _FlatRun(qids, judged, keys, starts, order, dicts, positive, joined, join_docids, key_starts, ties,
                    grades)
