"""Normalised rankings: the one place where documents are joined with judgments.

Every measure family consumes :class:`RelevanceBatch` objects: per query, the
grades of the retrieved documents in trec_eval order (score descending, ties
broken by docid descending), already joined with the qrels, plus the recall
base.  Doing the join and the sort once per (run, query) is what lets many
measures share one pass over a run (docs/conventions.md).
"""
from __future__ import annotations

import warnings
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import and_, attrgetter, gt, methodcaller
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np

from .docid_table import SEPARATOR
from .inputs import check_document_ids, check_qrels, check_query_id, join_document_ids
# the flat-layout kernels live in .segments; measures import segment_cumsum and segment_sum from here
from .segments import segment_argsort_desc, segment_cumsum, segment_sum  # noqa: F401

__all__ = [
    "UNJUDGED",
    "QrelsIndex",
    "RankedQuery",
    "RelevanceBatch",
    "PreparedRun",
    "rank_documents",
    "read_scores",
]

#: Grade given to retrieved documents that have no judgment.  Smaller than any
#: real grade, so ``grade >= rel`` is False for every sensible ``rel``.
UNJUDGED = np.iinfo(np.int64).min

def _trec_order(keys: List[str], scores: np.ndarray) -> np.ndarray:
    """Indices ordering documents as trec_eval does: score desc, then docid desc."""
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    tie = ranked[1:] == ranked[:-1]
    if tie.any():
        # Only documents inside tie groups need the docid tie-break.  Tie groups are
        # contiguous in score order, so sorting just those documents by (score desc,
        # docid desc) and writing them back into the same slots gives trec_eval's
        # order.  Python orders str by code point, like strcmp on ASCII docnos;
        # ranking the member docids with one C-level sort is cheaper than building
        # a numpy string array for np.lexsort.
        in_group = np.zeros(ranked.size, dtype=bool)
        in_group[1:] = tie
        in_group[:-1] |= tie
        slots = np.flatnonzero(in_group)
        members = order[slots]
        member_keys = [keys[i] for i in members.tolist()]
        m = len(member_keys)
        key_rank = np.empty(m, dtype=np.int64)
        key_rank[np.fromiter(sorted(range(m), key=member_keys.__getitem__), dtype=np.int64, count=m)] = \
            np.arange(m)
        order[slots] = members[np.lexsort((key_rank, ranked[slots]))[::-1]]
    return order


def _top_order(keys: List[str], scores: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` indices of :func:`_trec_order` (``k < len(keys)``), without sorting the rest.

    Every document of the top k scores at least the k-th largest score t,
    so ranking just the documents scoring >= t (a whole tie group at t
    included) and keeping the first k gives the same k documents in the same
    order as the full ranking.
    """
    n = scores.size
    t = np.partition(scores, n - k)[n - k]
    candidates = np.flatnonzero(scores >= t)
    if candidates.size == n:
        return _trec_order(keys, scores)[:k]
    sub = _trec_order([keys[i] for i in candidates.tolist()], scores[candidates])
    return candidates[sub[:k]]


def _positive_grades(keys: List[str], doc_scores: Mapping[str, float], order: np.ndarray, ranked: np.ndarray,
                     positive: Mapping[str, int]) -> np.ndarray:
    """Grade > 0 of the document at each rank (0 elsewhere), for one query ranked by :func:`_trec_order`.

    Why not one dict probe per retrieved document: a query has ~100 positive
    judgments against ~1000 retrieved documents, so the retrieved documents
    that are judged positive are found by probing the run's dict with the
    judgments instead (C-level set intersection), and each one is placed at
    its rank by its score: a binary search in the ranked scores, and for a
    tie group, in the group's docids, which trec_eval order sorts descending.
    """
    out = np.zeros(len(keys), dtype=np.int64)
    common = list(positive.keys() & doc_scores.keys())
    m = len(common)
    if not m:
        return out
    neg_score = -np.fromiter(map(doc_scores.__getitem__, common), dtype=np.float64, count=m)
    ascending = -ranked
    first = np.searchsorted(ascending, neg_score, side="left")
    past = np.searchsorted(ascending, neg_score, side="right")
    rank = first
    tied = np.flatnonzero(past - first > 1)
    if tied.size:
        groups: Dict[int, List[str]] = {}
        for j in tied.tolist():
            a, b = int(first[j]), int(past[j])
            members = groups.get(a)
            if members is None:  # the group's docids, ascending (ranked descending)
                members = groups[a] = [keys[i] for i in order[a:b][::-1].tolist()]
            rank[j] = b - 1 - bisect_left(members, common[j])
    out[rank] = np.fromiter(map(positive.__getitem__, common), dtype=np.int64, count=m)
    return out


def _check_finite(keys, scores: np.ndarray, qid: str):
    if not np.all(np.isfinite(scores)):
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise ValueError(f"query {qid!r}: document {keys[bad]!r} has a non-finite score "
                         f"({scores[bad]!r}); scores must be finite numbers.")


def read_scores(doc_scores: Mapping[str, float], qid: str, keys: Optional[List[str]] = None) -> np.ndarray:
    """The scores of one query as float64, in the dict's order: the one pass that reads and checks them.

    A score that is not a number, or is NaN or infinite, raises
    ``ValueError`` naming the query and the document.  ``keys`` (the dict's
    keys, as a list) only serves the message; they are listed if needed.
    """
    try:
        scores = np.fromiter(doc_scores.values(), dtype=np.float64, count=len(doc_scores))
    except (TypeError, ValueError):
        for docid, score in doc_scores.items():
            try:
                float(score)
            except (TypeError, ValueError):
                raise ValueError(f"query {qid!r}: document {docid!r} has score {score!r}, "
                                 "which is not a number.") from None
        raise
    if not np.isfinite(scores).all():
        _check_finite(list(doc_scores) if keys is None else keys, scores, qid)
    return scores


def rank_documents(doc_scores: Mapping[str, float], qid: str = "?") -> Tuple[List[str], np.ndarray]:
    """Order one query's documents as trec_eval does: score desc, then docid desc.

    Scores are read as float64.  NaN or infinite scores raise ``ValueError``
    naming the query and document.
    """
    keys = list(doc_scores)
    scores = read_scores(doc_scores, qid, keys)
    order = _trec_order(keys, scores)
    return [keys[i] for i in order.tolist()], scores[order]


class QrelsIndex:
    """Judgments by query, with recall bases cached per relevance level.

    ``qrels`` is ``{qid: {docid: grade}}`` with str ids and integer grades
    in the signed 32-bit range; anything else raises (a ``TypeError`` for
    types, naming query and document: see :mod:`irmeasures_markov.inputs`).
    The index holds a checked copy: later changes to ``qrels`` do not reach
    it.  :func:`irmeasures_markov.qrels_cache.qrels_index` gives one index
    per qrels object, for callers that are handed the same qrels many times.
    """

    def __init__(self, qrels: Mapping[str, Mapping[str, int]]):
        self._set(check_qrels(qrels))

    @classmethod
    def from_checked(cls, qrels: Dict[str, Dict[str, int]]) -> "QrelsIndex":
        """An index over the result of :func:`~irmeasures_markov.inputs.check_qrels` (not checked again)."""
        index = cls.__new__(cls)
        index._set(qrels)
        return index

    def _set(self, qrels: Dict[str, Dict[str, int]]):
        self.qrels: Dict[str, Dict[str, int]] = qrels
        self._grades_desc: Dict[str, np.ndarray] = {}
        self._positive: Dict[str, Dict[str, int]] = {}
        self._recall_base: Dict[Tuple[str, int], int] = {}
        self._no_relevant: Dict[int, List[str]] = {}
        self._warned_empty = set()

    @property
    def query_ids(self) -> List[str]:
        return list(self.qrels)

    def judged_grades(self, qid: str) -> np.ndarray:
        """All judged grades of the query, sorted descending (the ideal ranking)."""
        g = self._grades_desc.get(qid)
        if g is None:
            g = np.sort(np.fromiter(self.qrels.get(qid, {}).values(), dtype=np.int64))[::-1]
            self._grades_desc[qid] = g
        return g

    def positive(self, qid: str) -> Dict[str, int]:
        """The query's documents with a grade > 0, ``{docid: grade}``.

        Every measure with ``rel >= 1`` needs only these: joining a ranking
        with this small dict instead of all judgments keeps the join in CPU
        cache, which is most of the cost of ranking many runs.
        """
        d = self._positive.get(qid)
        if d is None:
            d = self._positive[qid] = {doc: g for doc, g in self.qrels.get(qid, {}).items() if g > 0}
        return d

    def recall_base(self, qid: str, rel: int = 1) -> int:
        """Number of the query's judgments with grade >= ``rel`` (cached: asked once per query and run)."""
        rb = self._recall_base.get((qid, rel))
        if rb is None:
            # descending order: count of grades >= rel
            rb = self._recall_base[(qid, rel)] = int(np.count_nonzero(self.judged_grades(qid) >= rel))
        return rb

    def queries_without_relevant(self, rel: int = 1) -> List[str]:
        """The qrels queries with no judgment of grade >= ``rel``, in qrels order (computed once per ``rel``)."""
        empty = self._no_relevant.get(rel)
        if empty is None:
            empty = self._no_relevant[rel] = [q for q in self.qrels if self.recall_base(q, rel) == 0]
        return empty

    def warn_if_no_relevant(self, qids=None, rel: int = 1, warned: Optional[set] = None):
        """Warn once about the queries of ``qids`` (default: every qrels query) that have nothing relevant.

        ``warned`` holds the ``(qid, rel)`` pairs already reported (default:
        this index's own set); an evaluator passes its own, so that every
        evaluator warns once, even when it shares a cached index.
        """
        if warned is None:
            warned = self._warned_empty
        if qids is None:
            candidates = self.queries_without_relevant(rel)
        else:
            candidates = [q for q in qids if self.recall_base(q, rel) == 0]
        empty = [q for q in candidates if (q, rel) not in warned]
        if empty:
            warned.update((q, rel) for q in empty)
            warnings.warn(f"{len(empty)} qrels quer{'y has' if len(empty) == 1 else 'ies have'} no document "
                          f"with grade >= {rel}; they score 0 (as in trec_eval): {', '.join(map(str, empty[:20]))}"
                          f"{' ...' if len(empty) > 20 else ''}", RuntimeWarning, stacklevel=2)


class RankedQuery:
    """One query of a run in trec_eval order, joined with its judgments.

    ``positive_grades[k]``, ``grades[k]`` and ``scores[k]`` belong to the
    document at rank k+1.  ``positive_grades`` holds the grade where it is
    > 0 and 0 otherwise (judged non-relevant and unjudged alike): all that a
    measure with ``rel >= 1`` needs.  ``grades`` tells every judgment apart
    (``UNJUDGED`` where there is none) and is joined on first use, as is
    ``docids``.
    """
    __slots__ = ("qid", "scores", "positive_grades", "joined_keys", "_keys", "_order", "_docids", "_judged",
                 "_grades")

    def __init__(self, qid: str, keys: List[str], order: np.ndarray, scores: np.ndarray,
                 positive_grades: np.ndarray, judged: Mapping[str, int], joined_keys: Optional[str] = None):
        self.qid = qid
        #: the docids in file order joined by newlines, when the run was prepared with join_docids
        self.joined_keys = joined_keys
        self.scores = scores
        self.positive_grades = positive_grades
        self._keys = keys
        self._order = order
        self._judged = judged
        self._docids = None
        self._grades = None

    @property
    def grades(self) -> np.ndarray:
        if self._grades is None:
            keys = self._keys
            n = len(keys)
            if self._order.size < n:  # ranked to a depth (PreparedRun): only the ranked documents are joined
                keys, n = self.docids, self._order.size
                # map() with the dict's own get keeps the join in C: one lookup per document
                self._grades = np.fromiter(map(self._judged.get, keys, repeat(UNJUDGED, n)), dtype=np.int64,
                                           count=n)
            else:
                full = np.fromiter(map(self._judged.get, keys, repeat(UNJUDGED, n)), dtype=np.int64, count=n)
                self._grades = full[self._order]
        return self._grades

    @property
    def docids(self) -> List[str]:
        if self._docids is None:
            keys = self._keys
            self._docids = [keys[i] for i in self._order.tolist()]
        return self._docids


@dataclass
class RelevanceBatch:
    """Rankings of all evaluated queries of one run, flattened for vectorised kernels.

    Query ``i`` occupies ``slice(offsets[i], offsets[i+1])`` of the flat arrays.
    ``relevant`` is ``grades >= rel``; ``judged_only`` rankings have unjudged
    documents removed before the cutoff is applied.  With ``judgments``
    False, ``grades`` is 0 wherever the grade is not positive (judged
    non-relevant and unjudged alike; see :meth:`PreparedRun.batch`).
    """
    qids: List[str]
    offsets: np.ndarray
    grades: np.ndarray
    relevant: np.ndarray
    recall_base: np.ndarray
    rel: int
    docids: Optional[List[List[str]]] = None
    judgments: bool = True
    _positions: Optional[np.ndarray] = field(default=None, repr=False)
    _query_index: Optional[np.ndarray] = field(default=None, repr=False)
    #: per-batch memo for kernels (e.g. MP caches its per-model values so the
    #: recall-rescaled variant costs one multiplication)
    cache: Dict[object, object] = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def ranks(self) -> np.ndarray:
        """1-based rank of every flat position within its query."""
        if self._positions is None:
            idx = np.arange(self.offsets[-1], dtype=np.int64)
            self._positions = idx - np.repeat(self.offsets[:-1], self.lengths) + 1
        return self._positions

    @property
    def query_index(self) -> np.ndarray:
        """Query number (0-based) of every flat position."""
        if self._query_index is None:
            self._query_index = np.repeat(np.arange(self.n_queries), self.lengths)
        return self._query_index

    def segments(self) -> Iterator[Tuple[str, np.ndarray, np.ndarray, int]]:
        """Yield ``(qid, relevant, grades, recall_base)`` per query."""
        for i, q in enumerate(self.qids):
            s = slice(self.offsets[i], self.offsets[i + 1])
            yield q, self.relevant[s], self.grades[s], int(self.recall_base[i])


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
    __slots__ = ("qids", "judged", "keys", "starts", "key_starts", "_order", "_ties", "runs", "positive_grades",
                 "joined", "joins", "_grades", "_docids")

    def __init__(self, qids, judged, keys, starts, order, runs, positive_grades, joined, joins=False,
                 key_starts=None, ties=None, grades=None):
        self.qids: List[str] = qids
        self.judged: List[Mapping[str, int]] = judged
        self.keys: List[str] = keys
        self.starts = _frozen(starts)
        #: where each query's docids start in ``keys``: ``starts`` unless the rankings were cut at a depth
        self.key_starts = self.starts if key_starts is None else _frozen(key_starts)
        #: ``(slots, scores)`` of the tie groups (:func:`_tie_slots`) while ``order`` still has them in file
        #: order: the docid tie-break is made on first use of ``order``, which many measures never need
        self._ties = ties
        self._order = _frozen(order)
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
    def order(self) -> np.ndarray:
        """Index into ``keys`` of the document at each rank (trec_eval order), read-only."""
        ties = self._ties
        if ties is not None:
            # fixed in a copy, published whole: a reader in another thread never sees a half-sorted order
            self._order = _frozen(_fix_ties(self._order.copy(), self.keys, self.key_starts, *ties))
            self._ties = None
        return self._order

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
            self._grades = _frozen(_in_rank_order(full, self._order, self.keys, self.key_starts, self._ties))
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
    tie = ranked[1:] == ranked[:-1]
    inner = starts[1:-1]
    tie[inner[(inner > 0) & (inner < ranked.size)] - 1] = False  # never across a query boundary
    if not tie.any():
        return None
    in_group = np.zeros(ranked.size, dtype=bool)
    in_group[1:] = tie
    in_group[:-1] |= tie
    slots = np.flatnonzero(in_group)
    return slots, ranked[slots]


def _fix_ties(order: np.ndarray, keys: List[str], starts: np.ndarray, slots: np.ndarray,
              slot_scores: np.ndarray) -> np.ndarray:
    """Sort the tie groups of a stable score order by docid descending, in place (see :func:`_tie_slots`).

    Why not one sort of all tied docids: most tie groups are small (on
    TREC-8 runs, half have 2 documents, 99% at most 16), so a member's place
    is found by comparing it with each other member of its group (C-level
    string comparisons, s*(s-1)/2 per group of s) for a fraction of the
    comparisons of a sort of every tied docid together; groups larger than
    ``_PAIRWISE_MAX_GROUP`` are sorted, and only their members.
    """
    members = order[slots]
    m = slots.size
    member_keys = list(map(keys.__getitem__, members.tolist()))
    query = np.searchsorted(starts, slots, side="right") - 1
    # a group: consecutive tied slots of one query with one score (-0.0 and 0.0 are one score, as in the sort)
    new = np.ones(m, dtype=bool)
    new[1:] = (slot_scores[1:] != slot_scores[:-1]) | (query[1:] != query[:-1])
    group_start = np.flatnonzero(new)
    group_size = np.diff(np.append(group_start, m))
    dest = np.empty(m, dtype=np.int64)  # where, among the slots, each member goes
    small = group_size <= _PAIRWISE_MAX_GROUP
    if small.any():
        g0, gs = group_start[small], group_size[small]
        idx = _expand(g0, gs)                                    # the members of small groups
        after = np.repeat(g0 + gs, gs) - idx - 1                 # members of its group after each member
        this = np.repeat(idx, after)
        other = _expand(idx + 1, after)                          # every pair of a group once, this < other
        larger = np.fromiter(map(gt, map(member_keys.__getitem__, other.tolist()),
                                 map(member_keys.__getitem__, this.tolist())), dtype=bool, count=this.size)
        # members with a larger docid go first: each pair counts once for one of its two members
        above = np.bincount(this[larger], minlength=m) + np.bincount(other[~larger], minlength=m)
        dest[idx] = np.repeat(g0, gs) + above[idx]
    if not small.all():
        big_start, big_size = group_start[~small], group_size[~small]
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
    itself on runs with many ties (TREC-8: ~7 ms of a 50k-document run).
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
    query = np.searchsorted(key_starts, slots, side="right") - 1
    # the groups as _fix_ties delimits them: consecutive tied slots of one query with one score
    new = np.ones(m, dtype=bool)
    new[1:] = (slot_scores[1:] != slot_scores[:-1]) | (query[1:] != query[:-1])
    group_start = np.flatnonzero(new)
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
        ranked_keys = list(map(keys.__getitem__, order[slots].tolist()))
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


#: runs whose rankings hold this many documents on average are joined with their judgments by intersecting
#: each query's positive judgments with its ranking (about 100 of 1000 documents on TREC-8) instead of
#: probing every retrieved document (measured crossover: 300-1000)
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


def _join_positive_flat(qrels: QrelsIndex, qids: List[str], dicts: List[Mapping[str, float]], keys: List[str],
                        order: np.ndarray, ranked: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Positive grade at every rank of every query (flat layout), joined through the positive judgments only.

    Why: probing every retrieved document costs a dict lookup per document
    (in a dict of all ~1700 judgments of a TREC-8 topic, often a cache miss);
    a query has ~100 positive judgments, so intersecting those with the
    query's retrieved docids (one C-level set operation per query) finds
    the hits for a tenth of the probes.  Each hit is then placed at its
    rank by binary search on (query, -score) over the whole run at once:
    complex numbers sort lexicographically by (real, imaginary), so the
    ranked run, as ``query + 1j * -score``, is one sorted array (exact:
    query numbers are small integers, scores are float64 as they are).
    A hit inside a tie group of scores goes after the group members whose
    docid is larger (trec_eval order: docid descending within a tie).
    ``ranked`` is ``scores[order]``; ``order`` only needs to be sorted by
    score: the order inside a tie group does not matter here.
    """
    n = order.size
    out = np.zeros(n, dtype=np.int64)
    positive = list(map(qrels.positive, qids))
    # dict_keys & dict_keys iterates the smaller side (the positive judgments) and probes the other
    # (sets: iterated three times below, unchanged, so in the same order each time)
    commons = list(map(and_, map(methodcaller("keys"), positive), map(methodcaller("keys"), dicts)))
    counts = np.fromiter(map(len, commons), dtype=np.int64, count=len(commons))
    m = int(counts.sum())
    if not m:
        return out
    hits = list(chain.from_iterable(commons))
    hit_scores = np.fromiter(chain.from_iterable(map(map, map(attrgetter("__getitem__"), dicts), commons)),
                             dtype=np.float64, count=m)
    hit_grades = np.fromiter(chain.from_iterable(map(map, map(attrgetter("__getitem__"), positive), commons)),
                             dtype=np.int64, count=m)
    lengths = np.diff(starts)
    hit_starts = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=hit_starts[1:])
    first = np.empty(m, dtype=np.int64)
    past = np.empty(m, dtype=np.int64)
    # whole queries at a time, about _LOOKUP_BLOCK documents each: the complex keys (16 bytes per document)
    # then never exist for the whole run at once
    bounds = np.searchsorted(starts, np.arange(0, n + _LOOKUP_BLOCK, _LOOKUP_BLOCK))
    cuts = np.unique(np.concatenate(([0], bounds, [lengths.size])).clip(0, lengths.size)).tolist()
    for q0, q1 in zip(cuts[:-1], cuts[1:]):
        a, b, c, d = int(starts[q0]), int(starts[q1]), int(hit_starts[q0]), int(hit_starts[q1])
        if c == d:
            continue
        query = np.arange(q0, q1, dtype=np.float64)
        keyed = np.empty(b - a, dtype=np.complex128)
        keyed.real = np.repeat(query, lengths[q0:q1])
        np.negative(ranked[a:b], out=keyed.imag)
        needles = np.empty(d - c, dtype=np.complex128)
        needles.real = np.repeat(query, counts[q0:q1])
        np.negative(hit_scores[c:d], out=needles.imag)
        f = np.searchsorted(keyed, needles, side="left")
        # in a tie group if the next ranked document has the same (query, score): only those are searched again
        # (the block holds whole queries: its last document is never tied with the next block's first)
        t = np.flatnonzero(keyed[np.minimum(f + 1, b - a - 1)] == needles)
        t = t[f[t] + 1 < b - a]
        p = f.copy()
        p[t] = np.searchsorted(keyed, needles[t], side="right")
        first[c:d] = f + a
        past[c:d] = p + a
    tied = np.flatnonzero(past - first > 1)
    rank = first
    if tied.size:
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
                rank[j] = a + (b - a) - bisect_right(group_keys, hits[j])
            tied, sizes = tied[~by_sort], sizes[~by_sort]
        total = int(sizes.sum())
        if total:
            # every tied hit against every member of its group: rank = first + members with a larger docid
            begin = np.repeat(first[tied] - np.cumsum(sizes) + sizes, sizes)
            members = order[begin + np.arange(total)].tolist()
            owner = np.repeat(tied, sizes).tolist()
            larger = np.fromiter(map(gt, map(keys.__getitem__, members), map(hits.__getitem__, owner)),
                                 dtype=bool, count=total)
            offsets = np.zeros(tied.size + 1, dtype=np.int64)
            np.cumsum(sizes, out=offsets[1:])
            rank[tied] += segment_sum(larger, offsets)
    out[rank] = hit_grades
    return out


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
    keys = list(chain.from_iterable(dicts))
    n = len(keys)
    if n != int(lengths.sum()):
        return None
    joined = None
    try:
        if join_docids and n <= _LOOKUP_BLOCK:
            # a run of one lookup block keeps its docids joined (document_values reads them from there):
            # the same C-level join checks the ids
            joined = SEPARATOR.join(keys)
        else:
            # the join checks that every docid is a str at C speed; in blocks, so it never holds a copy of the run
            for a in range(0, 0 if ids_checked else n, _CHECK_BLOCK):
                "".join(keys[a:a + _CHECK_BLOCK])
    except TypeError:
        return None
    try:
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
        positive = _join_positive_flat(qrels, qids, dicts, keys, order, ranked, starts)
    else:
        if ties is not None and not long_rankings:
            order, ties = _fix_ties(order, keys, starts, *ties), None
        # one C-level probe of the query's judgments per retrieved document: across a run of short rankings
        # this costs less than intersecting each query's positive judgments with its ranking and placing
        # the hits by binary search (making the positive subsets costs a Python call per query)
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


class PreparedRun:
    """A run ranked and joined with qrels once, for any number of measures.

    Only queries present in both the qrels and the run are kept (run queries
    without judgments are skipped; qrels queries without results get each
    measure's DEFAULT from the caller).  Query and document ids must be str
    (:mod:`irmeasures_markov.inputs`): one C-level ``str.join`` per query
    checks them, and an id of another type raises ``TypeError`` naming it;
    ``ids_checked=True`` says the caller has checked them already
    (:func:`~irmeasures_markov.inputs.to_run_dict`).  The scores of the kept
    queries are read once, by :func:`read_scores`, which checks them too.

    ``join_docids=True`` also keeps each query's docids joined by newlines
    (``RankedQuery.joined_keys``), made while the docids are in cache: a
    vectorised per-document lookup (:meth:`document_values`) reads them
    from there instead of from thousands of scattered str objects.

    ``depth=k`` ranks only the top k documents of each query (all of them
    are still checked): for measures that read no further than rank k (a
    cutoff <= k, without ``judged_only``), a partial sort instead of a full
    one.  The ranked arrays then hold ``min(k, n)`` documents, the first ones
    of the full ranking; ``batch(cutoff=c)`` with ``c <= k`` is unchanged.

    ``judgments=True`` says a ``judgments=True`` batch (every judged grade,
    e.g. for bpref or ``judged_only``) will be asked for: a run of long
    rankings is then joined with all its judgments once, while it is ranked,
    instead of with its positive judgments first and all of them on demand.
    Values are the same either way.
    """

    def __init__(self, qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], join_docids: bool = False,
                 ids_checked: bool = False, depth: Optional[int] = None, judgments: bool = False):
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"depth must be a positive integer or None, got {depth!r}")
        self.qrels_index = qrels
        self.depth = depth
        self._batches: Dict[tuple, RelevanceBatch] = {}
        # all queries at once (no per-query Python work); None when an input check fails, and the per-query
        # loop below then raises the error naming the query and document
        flat = _prepare_flat(qrels, run, join_docids, ids_checked, depth, judgments)
        if flat is not None:
            self._flat = flat
            self.queries = _LazyQueries(flat)
            return
        self.queries: List[RankedQuery] = []
        judged = qrels.qrels
        for qid, doc_scores in run.items():
            if not ids_checked:
                check_query_id(qid)
            qdocs = judged.get(qid)
            n = len(doc_scores)
            if qdocs is None or n == 0:
                if not ids_checked:
                    check_document_ids(doc_scores, qid)
                continue
            keys = list(doc_scores)
            if join_docids:
                joined = join_document_ids(SEPARATOR, keys, qid)  # the join checks the ids too
            else:
                joined = None
                if not ids_checked:
                    check_document_ids(keys, qid)
            scores = read_scores(doc_scores, qid, keys)
            if depth is not None and depth < n:
                order = _top_order(keys, scores, depth)
                positive = qrels.positive(qid)
                # k dict probes: for a small k, cheaper than placing every judged document by its score
                grades = np.fromiter(map(positive.get, [keys[i] for i in order.tolist()], repeat(0, depth)),
                                     dtype=np.int64, count=depth)
                ranked = scores[order]
            else:
                order = _trec_order(keys, scores)
                ranked = scores[order]
                grades = _positive_grades(keys, doc_scores, order, ranked, qrels.positive(qid))
            self.queries.append(RankedQuery(qid, keys, order, ranked, grades, qdocs, joined))
        self._flat = _FlatRun.from_queries(self.queries)

    @property
    def qids(self) -> List[str]:
        return list(self._flat.qids)

    def batch(self, rel: int = 1, judged_only: bool = False, cutoff: Optional[int] = None,
              with_docids: bool = False, judgments: bool = True) -> RelevanceBatch:
        """The flattened rankings for one (rel, judged_only, cutoff) setting, cached.

        ``judgments=False`` says the caller needs only grades >= ``rel``: when
        ``rel >= 1`` and not ``judged_only``, the batch is then built from the
        positive grades joined when the run was ranked, and the full join with
        every judgment is never made.  Built with whole-array operations: no
        Python code runs per query, so many short rankings cost what one long
        ranking of as many documents costs.
        """
        judgments = bool(judgments or judged_only or rel < 1)
        key = (rel, bool(judged_only), cutoff, with_docids, judgments)
        b = self._batches.get(key)
        if b is not None:
            return b
        flat = self._flat
        grades = flat.grades if judgments else flat.positive_grades
        keep, offsets = self._selection(judged_only, cutoff)
        if keep is not None:
            grades = grades[keep]
        docids = None
        if with_docids:
            ranked = flat.docids if keep is None else list(compress(flat.docids, keep.tolist()))
            docids = list(map(list, _segments(ranked, np.diff(offsets).tolist())))
        b = RelevanceBatch(list(flat.qids), offsets, grades, grades >= rel, self._recall_bases(rel), rel, docids,
                           judgments)
        self._batches[key] = b
        return b

    def _selection(self, judged_only: bool, cutoff: Optional[int]):
        """``(keep, offsets)``: which ranked positions a batch keeps (None: all) and its query offsets."""
        flat = self._flat
        key = ("selection", bool(judged_only), cutoff)
        hit = self._batches.get(key)
        if hit is not None:
            return hit
        offsets = flat.starts
        keep = None
        if judged_only:
            keep = flat.grades != UNJUDGED
            offsets = np.zeros_like(flat.starts)
            np.cumsum(segment_sum(keep, flat.starts), out=offsets[1:])
        if cutoff is not None:
            lengths = np.diff(offsets)
            if lengths.size and int(lengths.max()) > cutoff:
                # rank within the (condensed) ranking of every kept position
                rank = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], lengths)
                top = rank < cutoff
                if keep is None:
                    keep = top
                else:
                    keep[np.flatnonzero(keep)[~top]] = False
                offsets = np.zeros_like(offsets)
                np.cumsum(np.minimum(lengths, cutoff), out=offsets[1:])
        hit = self._batches[key] = (keep, _frozen(offsets) if offsets is not flat.starts else offsets)
        return hit

    def recall_bases(self, rel: int) -> np.ndarray:
        """Recall base of every prepared query at ``rel`` (judgments with grade >= ``rel``), in ``qids`` order."""
        return self._recall_bases(rel)

    def _recall_bases(self, rel: int) -> np.ndarray:
        """Recall base of every prepared query at ``rel``, from a table made once per qrels and ``rel``."""
        index, bases = _recall_base_table(self.qrels_index, rel)
        qids = self._flat.qids
        return bases[np.fromiter(map(index.__getitem__, qids), dtype=np.int64, count=len(qids))]

    def document_values(self, lookup_segments: Callable[[List[List[str]]], np.ndarray], judged_only: bool = False,
                        cutoff: Optional[int] = None) -> np.ndarray:
        """A per-document value for every flat position of ``batch(judged_only=..., cutoff=...)``.

        ``lookup_segments(segments, joined) -> array`` is called once per
        block of ``_LOOKUP_BLOCK`` documents, with one sequence of docids per
        segment and ``joined``, the same segments joined by newlines, or None;
        it returns the values of all of them one segment after another (e.g.
        :meth:`~irmeasures_markov.lengths.DocumentLengths.lookup_segments`).
        Each block is one segment of the run in file order; the values are put
        in rank order and filtered like the batch.  Without a cutoff every
        retrieved document is looked up (an unknown length is an error even
        where ``judged_only`` drops the document); with one, only the
        documents kept.  One call per run pays per-call overheads (and a
        vectorised lookup's fixed costs) once, not once per query.
        """
        flat = self._flat
        if not flat.keys:
            return np.zeros(0)
        keep, _ = self._selection(judged_only, cutoff)
        if cutoff is not None and keep is not None:
            wanted = flat.order[keep].tolist()
            return self._lookup_blocks(lookup_segments, list(map(flat.keys.__getitem__, wanted)), None)
        order = flat.order  # first: a pending docid tie-break then runs before the values take their memory
        values = self._lookup_blocks(lookup_segments, flat.keys, flat.joined)[order]
        return values if keep is None else values[keep]

    def _lookup_blocks(self, lookup_segments, keys: List[str], joined: Optional[str]) -> np.ndarray:
        """``lookup_segments`` over ``keys`` in blocks of ``_LOOKUP_BLOCK`` documents, concatenated.

        A vectorised lookup holds several arrays per document while it works
        (the docids' bytes, the table rows it gathers): blocks bound that
        memory without changing a value.  Prepared one query at a time, the
        run's docids may come joined already (``joined``).
        """
        n = len(keys)
        if n <= _LOOKUP_BLOCK:
            return np.asarray(lookup_segments([keys], None if joined is None else [joined]))
        out = np.empty(n)
        for a in range(0, n, _LOOKUP_BLOCK):
            out[a:a + _LOOKUP_BLOCK] = lookup_segments([keys[a:a + _LOOKUP_BLOCK]], None)
        return out


_RECALL_BASES: "weakref.WeakKeyDictionary[QrelsIndex, Dict[int, tuple]]" = weakref.WeakKeyDictionary()


def _recall_base_table(qrels: QrelsIndex, rel: int):
    """``(index, bases)``: ``bases[index[qid]]`` counts the query's judgments with grade >= ``rel``.

    Made once per qrels and ``rel`` with whole-array operations, so a run of
    100k queries reads its recall bases with one gather.  Like the other
    caches of :class:`QrelsIndex`, it assumes the qrels are not changed.
    """
    tables = _RECALL_BASES.setdefault(qrels, {})
    table = tables.get(rel)
    if table is None:
        judged = qrels.qrels
        counts = np.fromiter(map(len, judged.values()), dtype=np.int64, count=len(judged))
        offsets = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        grades = np.fromiter(chain.from_iterable(map(methodcaller("values"), judged.values())), dtype=np.int64,
                             count=int(offsets[-1]))
        table = tables[rel] = (dict(zip(judged, range(len(judged)))), segment_sum(grades >= rel, offsets))
    return table
