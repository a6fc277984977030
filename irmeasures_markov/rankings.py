"""Normalised rankings: the one place where documents are joined with judgments.

Every measure family consumes :class:`RelevanceBatch` objects: per query, the
grades of the retrieved documents in trec_eval order (score descending, ties
broken by docid descending), already joined with the qrels, plus the recall
base.  Doing the join and the sort once per (run, query) is what lets many
measures share one pass over a run (docs/conventions.md).
"""
from __future__ import annotations

import warnings
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import repeat
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np

from .docid_table import SEPARATOR
from .inputs import check_document_ids, check_qrels, check_query_id, join_document_ids

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
    """

    def __init__(self, qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], join_docids: bool = False,
                 ids_checked: bool = False, depth: Optional[int] = None):
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"depth must be a positive integer or None, got {depth!r}")
        self.qrels_index = qrels
        self.depth = depth
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
        self._batches: Dict[tuple, RelevanceBatch] = {}

    @property
    def qids(self) -> List[str]:
        return [q.qid for q in self.queries]

    def batch(self, rel: int = 1, judged_only: bool = False, cutoff: Optional[int] = None,
              with_docids: bool = False, judgments: bool = True) -> RelevanceBatch:
        """The flattened rankings for one (rel, judged_only, cutoff) setting, cached.

        ``judgments=False`` says the caller needs only grades >= ``rel``: when
        ``rel >= 1`` and not ``judged_only``, the batch is then built from the
        positive grades joined when the run was ranked, and the full join with
        every judgment is never made.
        """
        judgments = bool(judgments or judged_only or rel < 1)
        key = (rel, bool(judged_only), cutoff, with_docids, judgments)
        b = self._batches.get(key)
        if b is not None:
            return b
        grades_list = []
        docids_list = [] if with_docids else None
        for q in self.queries:
            g = q.grades if judgments else q.positive_grades
            keep = None
            if judged_only:
                keep = g != UNJUDGED
                g = g[keep]
            if cutoff is not None:
                g = g[:cutoff]
            grades_list.append(g)
            if with_docids:
                d = q.docids
                if keep is not None:
                    d = [x for x, k in zip(d, keep.tolist()) if k]
                docids_list.append(d[:cutoff] if cutoff is not None else d)
        lengths = np.fromiter((g.size for g in grades_list), dtype=np.int64, count=len(grades_list))
        offsets = np.zeros(len(grades_list) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        grades = np.concatenate(grades_list) if grades_list else np.zeros(0, dtype=np.int64)
        rb = np.fromiter((self.qrels_index.recall_base(q.qid, rel) for q in self.queries),
                         dtype=np.int64, count=len(self.queries))
        b = RelevanceBatch(self.qids, offsets, grades, grades >= rel, rb, rel, docids_list, judgments)
        self._batches[key] = b
        return b

    def document_values(self, lookup_segments: Callable[[List[List[str]]], np.ndarray], judged_only: bool = False,
                        cutoff: Optional[int] = None) -> np.ndarray:
        """A per-document value for every flat position of ``batch(judged_only=..., cutoff=...)``.

        ``lookup_segments(segments, joined) -> array`` is called once, with
        one list of docids per query (each in file order; ``joined``: the
        same lists joined by newlines, or None), and returns the values of
        all of them one query after another (e.g.
        :meth:`~irmeasures_markov.lengths.DocumentLengths.lookup_segments`);
        they are put in rank order and filtered like the batch.  One call per
        run pays per-call overheads (and a vectorised lookup's fixed costs)
        once, not once per query.
        """
        queries = self.queries
        if not queries:
            return np.zeros(0)
        joined = [q.joined_keys for q in queries]
        if any(j is None for j in joined):
            joined = None
        values = np.asarray(lookup_segments([q._keys for q in queries], joined))
        starts = np.zeros(len(queries) + 1, dtype=np.intp)
        np.cumsum([len(q._keys) for q in queries], out=starts[1:])
        if not judged_only and cutoff is None:
            return values[np.concatenate([q._order + s for q, s in zip(queries, starts.tolist())])]
        bounds = starts.tolist()
        return np.concatenate([_filtered(q, values[a:b][q._order], judged_only, cutoff)
                               for q, a, b in zip(queries, bounds[:-1], bounds[1:])])


def _filtered(q: "RankedQuery", values: np.ndarray, judged_only: bool, cutoff: Optional[int]) -> np.ndarray:
    if judged_only:
        values = values[q.grades != UNJUDGED]
    return values[:cutoff] if cutoff is not None else values


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at every query boundary (flat layout).

    Integer sums use one running cumsum (exact); floating-point sums are taken
    per segment, so a query's partial sums never carry the rounding error of
    the large running total of the queries before it.
    """
    values = np.asarray(values)
    if values.dtype.kind == "f":
        out = np.empty_like(values)
        bounds = offsets.tolist()
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b > a:
                np.cumsum(values[a:b], out=out[a:b])
        return out
    c = np.cumsum(values)
    if c.size == 0:
        return c
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    base = np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)
    base = np.where(lengths > 0, base, 0)
    return c - np.repeat(base, lengths)


def segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values`` per query (0 for empty queries).

    ``np.add.reduceat`` sums each segment with numpy's pairwise summation:
    faster than a running cumsum and without its cancellation error.
    """
    values = np.asarray(values)
    if values.dtype == bool:
        values = values.astype(np.int64)
    lengths = np.diff(offsets)
    n = lengths.size
    out = np.zeros(n, dtype=np.result_type(values.dtype, np.float64) if values.dtype.kind == "f" else np.int64)
    if values.size == 0 or n == 0:
        return out
    nonempty = lengths > 0
    if nonempty.all():
        return np.add.reduceat(values, offsets[:-1]).astype(out.dtype, copy=False)
    out[nonempty] = np.add.reduceat(values, offsets[:-1][nonempty])
    return out
