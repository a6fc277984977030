"""A run ranked and joined with its judgments: every query at once (`prepare`, `FlatRun`), or one
([`RankedQuery`][irmeasures_markov.ranking.RankedQuery]).

Every run is joined as [`RunColumns`][irmeasures_markov.io.RunColumns]:
one read from a file as it is, a dict run ``{qid: {docid: score}}`` made one
at the boundary by `columns_of_dict` (its judged queries, its docids as
a list: a docid may hold a newline there).  `prepare` sorts the score
array segment by segment and looks each retrieved document up among its
query's judgments (`lookup`, on
the docids' bytes once numba is loaded), or, for a dict run, places the
hits of its mappings' probes by the positive judgments (`_probe_positives`):
no Python object per document is made unless a measure asks for docids.  Why:
docs/design.md.
"""
from __future__ import annotations

import weakref
from bisect import bisect_right
from collections.abc import Callable, Mapping
from itertools import chain, repeat
from operator import gt, itemgetter, methodcaller

import numpy as np

from irmeasures_markov._util._arrays import frozen
from irmeasures_markov._util._segments import (
    expand_ranges,
    offsets_of,
    query_blocks,
    segment_argsort_desc,
    segment_sum,
)
from irmeasures_markov._util._token_sets import KeyTables, lookup
from irmeasures_markov.io._normalise import check_document_ids, check_query_id
from irmeasures_markov.io._run_columns import RunColumns
from irmeasures_markov.ranking._order import cut_to_depth, fix_ties, in_rank_order, read_scores, tie_groups, tie_slots
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["SEPARATOR", "LOOKUP_BLOCK", "RankedQuery", "FlatRun", "judgment_tables", "columns_of_dict", "prepare"]

#: joins the docids of a ranking into one string (one docid per line), the form
#: :class:`~irmeasures_markov.documents._docid_table.DocidTable` looks up at once
SEPARATOR = "\n"
#: documents per call of a per-document lookup (:meth:`~irmeasures_markov.ranking.PreparedRun.document_values`)
LOOKUP_BLOCK = 1 << 18

_TABLES: weakref.WeakKeyDictionary[QrelsIndex, dict[bool, tuple[dict[str, int], KeyTables]]] = (
    weakref.WeakKeyDictionary())


class RankedQuery:
    """One query of a run in trec_eval order, joined with its judgments.

    ``positive_grades[k]``, ``grades[k]`` and ``scores[k]`` belong to the
    document at rank k+1.  ``grades`` and ``docids`` are made on first use.

    Parameters
    ----------
    qid : str
        The query id.
    keys : list of str
        The query's docids in the run's order.
    order : numpy.ndarray
        Index into ``keys`` of the document at each rank (the first ranks
        only, when ranked to a depth).
    scores : numpy.ndarray
        The score at each rank.
    positive_grades : numpy.ndarray
        The grade at each rank where it is > 0, else 0 (judged non-relevant
        and unjudged alike): all that a measure with ``rel >= 1`` needs.
    judged : mapping
        The query's judgments ``{docid: grade}``.
    joined_keys : str, optional
        ``keys`` joined by `SEPARATOR`, when the run was prepared with
        ``join_docids``.
    """
    __slots__ = ("qid", "scores", "positive_grades", "joined_keys", "_keys", "_order", "_docids", "_judged",
                 "_grades")

    def __init__(self, qid: str, keys: list[str], order: np.ndarray, scores: np.ndarray,
                 positive_grades: np.ndarray, judged: Mapping[str, int], joined_keys: str | None = None) -> None:
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
        """Every grade at every rank, `UNJUDGED` where there is no judgment."""
        if self._grades is None:
            # map() with the dict's own get keeps the join in C: one lookup per ranked document
            self._grades = np.fromiter(map(self._judged.get, self.docids, repeat(UNJUDGED)), dtype=np.int64,
                                       count=self._order.size)
        return self._grades

    @property
    def docids(self) -> list[str]:
        """The docids in rank order."""
        if self._docids is None:
            keys = self._keys
            self._docids = [keys[i] for i in self._order.tolist()]
        return self._docids


def judgment_tables(qrels: QrelsIndex, positive: bool = False) -> tuple[dict[str, int], KeyTables]:
    """``(index, tables)``: each qrels query's judgments as one of ``tables``, ``index`` its row by query id (made
    once per index); ``positive``: only the grades > 0, all that a measure with ``rel >= 1`` reads."""
    made = _TABLES.setdefault(qrels, {})
    if positive not in made:
        judged = qrels.qrels
        tables = [qrels.positive(q) for q in judged] if positive else list(judged.values())
        made[positive] = ({q: t for t, q in enumerate(judged)}, KeyTables(tables))
    return made[positive]


def _lookup(run: RunColumns, table_of: np.ndarray, tables: KeyTables, missing: int, records: np.ndarray | None
            ) -> np.ndarray:
    """Every record's grade in its query's table (``missing`` where none), in file order, records kept."""
    if isinstance(run.docids, list):   # a dict run's docids: str objects already, probed in dicts
        full = lookup("", run.bounds, table_of, tables, missing, keys=run.docids, engine="dict")
    else:
        full = lookup(run.docids, run.bounds, table_of, tables, missing)
    return full if records is None else full[records]


def _keys_of(run: RunColumns, records: np.ndarray | None) -> list[str]:
    """The docids of ``records`` of ``run`` (None: all) in file order, a list the caller keeps (not the run)."""
    docids = run.docids
    keys = docids if isinstance(docids, list) else docids.split(SEPARATOR) if run.qids else []
    return keys if records is None else list(map(keys.__getitem__, records.tolist()))


class FlatRun:
    """Every evaluated query of a run in one flat layout: what a prepared run keeps (made by `prepare`).

    Query ``i`` occupies ``slice(starts[i], starts[i+1])`` of every ranked
    array, and ``slice(key_starts[i], key_starts[i+1])`` of `keys`, the
    docids in file order of the run's ``records`` (None: all; they differ
    when the rankings were cut at a depth).  ``order`` indexes `keys`
    at each rank, in trec_eval order except in the tie groups of ``ties``
    (`tie_slots`), ordered by docid on
    first use of `order`; ``scores`` are in file order;
    ``positive_grades`` (and ``grades``, when joined already) at each rank.
    ``table_of`` is the row of each of the run's queries in
    `judgment_tables` (-1: none); ``joined``, the docids in file order
    joined by `SEPARATOR`, when kept; ``joins``, whether the run was
    prepared with ``join_docids``.  The arrays are read-only: batches share
    them instead of copying.
    """
    __slots__ = ("qrels", "run", "records", "table_of", "qids", "judged", "starts", "key_starts", "_state",
                 "scores", "positive_grades", "joined", "joins", "_grades", "_docids", "_keys", "ranked_scores")

    def __init__(self, qrels: QrelsIndex, run: RunColumns, records: np.ndarray | None, table_of: np.ndarray,
                 qids: list[str], starts: np.ndarray, order: np.ndarray, scores: np.ndarray,
                 positive_grades: np.ndarray, joined: str | None, joins: bool, key_starts: np.ndarray,
                 ties: tuple[np.ndarray, np.ndarray] | None = None, grades: np.ndarray | None = None,
                 keys: list[str] | None = None) -> None:
        self.qrels, self.run, self.records, self.table_of = qrels, run, records, table_of
        self.qids: list[str] = qids
        #: each query's judgments ``{docid: grade}``
        self.judged: list[Mapping[str, int]] = list(map(qrels.qrels.__getitem__, qids))
        self.starts = frozen(starts)
        #: where each query's docids start in ``keys``: ``starts`` unless the rankings were cut at a depth
        self.key_starts = frozen(key_starts)
        #: ``(order, ties, positive_ties_ordered)``, replaced whole (so a reader in another thread always sees
        #: a consistent triple): ``ties``, the ``(slots, scores)`` of the tie groups (:func:`tie_slots`) while
        #: ``order`` may still list them in file order (the docid tie-break is made on first use of ``order``,
        #: which many measures never need), None once it is final; ``positive_ties_ordered``: the groups that
        #: hold a positive grade are in docid order already (:attr:`positive_tie_order`)
        self._state = (frozen(order), ties, ties is None)
        self.scores = scores
        #: the score at every rank, when the run was prepared with ``keep_scores`` (else None)
        self.ranked_scores: np.ndarray | None = None
        self.positive_grades = frozen(positive_grades)
        #: all docids in file order joined by newlines, when the run was prepared with join_docids
        self.joined: str | None = joined
        #: whether the run was prepared with join_docids (each RankedQuery then has its joined_keys)
        self.joins = joins
        self._grades = None if grades is None else frozen(grades)
        self._docids = None
        self._keys = keys

    @property
    def _ties(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self._state[1]

    @property
    def keys(self) -> list[str]:
        """The docids in file order, query after query (split from the run's docids on first use)."""
        if self._keys is None:
            self._keys = _keys_of(self.run, self.records)
        return self._keys

    @property
    def order(self) -> np.ndarray:
        """Index into ``keys`` of the document at each rank (trec_eval order), read-only."""
        order, ties, _ = self._state
        if ties is not None:
            # fixed in a copy, published whole: a reader in another thread never sees a half-sorted order
            # (any order of each tie group will do as the start: fix_ties orders each group by docid alone)
            order = frozen(fix_ties(order.copy(), self.keys, self.key_starts, *ties))
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
        Once ``order`` is final, this is ``order``.  This order replaces the pending one (no
        second array per document): the tie break of ``order``, if it comes,
        starts from it.
        """
        order, ties, positive_ordered = self._state
        if positive_ordered:
            return order
        slots, slot_scores = ties
        kept = self.in_positive_tie_groups(ties)
        if kept.any():
            order = frozen(fix_ties(order.copy(), self.keys, self.key_starts, slots[kept], slot_scores[kept]))
        self._state = (order, ties, True)
        return order

    def in_positive_tie_groups(self, ties: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """For each tied slot of ``ties`` (`tie_slots`), whether its tie group holds a positive grade."""
        slots, slot_scores = ties
        _, group_start = tie_groups(slots, slot_scores, self.key_starts)
        # the tied slots with a positive grade, from the few ranks that hold one (slots are increasing): no
        # temporary of a grade per tied slot
        ranks = np.flatnonzero(self.positive_grades)
        at = np.searchsorted(slots, ranks)
        at = at[slots[np.minimum(at, slots.size - 1)] == ranks]   # a rank past the last slot is no slot
        positive = np.zeros(slots.size, dtype=bool)
        positive[at] = True
        holds = np.logical_or.reduceat(positive, group_start)
        return np.repeat(holds, np.diff(np.append(group_start, slots.size)))

    def values_in_rank_order(self, lookup_segments: Callable[[list[list[str]], list[str] | None], np.ndarray],
                             order: np.ndarray) -> np.ndarray:
        """A value per document (``lookup_segments``, called on every docid in file order), at each rank of ``order``.

        What ``lookup(keys)[order]`` gives, bit for bit, without a whole-run
        array in file order beside the result: blocks of whole queries of
        about `LOOKUP_BLOCK` documents are looked up, and each block's
        values placed at its ranks at once.  A run of one block is looked up
        in one call (with `joined`, when kept).

        Parameters
        ----------
        lookup_segments : callable
            ``lookup_segments(segments, joined) -> array`` of the values of
            the docids of ``segments`` (one list of docids here), ``joined``
            the same docids joined by `SEPARATOR`, or None.
        order : numpy.ndarray
            Index into `keys` of the document at each rank (`order`
            or `positive_tie_order`); query ``i``'s ranks are
            ``slice(starts[i], starts[i+1])``.

        Returns
        -------
        numpy.ndarray
            The value at each rank (float64 when the run is looked up in several blocks).
        """
        keys = self.keys
        n = len(keys)
        if n <= LOOKUP_BLOCK:
            joined = None if self.joined is None else [self.joined]
            return np.asarray(lookup_segments([keys], joined))[order]
        out = np.empty(order.size)
        key_starts, starts = self.key_starts.tolist(), self.starts.tolist()
        for a, b in query_blocks(self.key_starts, LOOKUP_BLOCK):
            ka, kb, ra, rb = key_starts[a], key_starts[b], starts[a], starts[b]
            values = np.asarray(lookup_segments([keys[ka:kb]], None))
            out[ra:rb] = values[order[ra:rb] - ka]
        return out

    @property
    def grades(self) -> np.ndarray:
        """Every grade at every rank, ``UNJUDGED`` where there is no judgment (joined on first use)."""
        if self._grades is None:
            _, tables = judgment_tables(self.qrels)
            full = _lookup(self.run, self.table_of, tables, UNJUDGED, self.records)
            order, ties, _ = self._state   # one consistent pair, whatever another thread publishes meanwhile
            self._grades = frozen(in_rank_order(full, order, lambda: self.keys, self.key_starts, ties))
        return self._grades

    @property
    def docids(self) -> list[str]:
        """The docids in rank order, query after query."""
        if self._docids is None:
            self._docids = list(map(self.keys.__getitem__, self.order.tolist()))
        return self._docids

    def query(self, i: int) -> RankedQuery:
        """Query ``i`` as a [`RankedQuery`][irmeasures_markov.ranking.RankedQuery]."""
        a, b = int(self.starts[i]), int(self.starts[i + 1])
        ka, kb = int(self.key_starts[i]), int(self.key_starts[i + 1])
        keys = self.keys[ka:kb]
        order = self.order[a:b] - ka
        return RankedQuery(self.qids[i], keys, order, self.scores[ka:kb][order], self.positive_grades[a:b],
                           self.judged[i], SEPARATOR.join(keys) if self.joins else None)


#: a dict run's positive judgments are probed in its mappings (`columns_of_dict`) when its rankings average at
#: least this many documents; below it the per-query probes cost more than the vectorised lookup of `prepare`
PROBE_MIN_LENGTH = 256


def columns_of_dict(qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], probe: bool = False
                    ) -> tuple[RunColumns, np.ndarray | None]:
    """The queries of a dict run that have judgments and documents, as [`RunColumns`][irmeasures_markov.io.RunColumns]
    (docids as a list).

    Checked on the way, at C speed: every query id and docid is a str (TypeError otherwise), every score of a
    kept query a finite number and each kept mapping as long as its items (ValueError otherwise); when a check
    fails, `_raise_input_error` reads the run again and names the culprit.  With ``probe`` and rankings of
    `PROBE_MIN_LENGTH` documents or more on average, each kept mapping is also probed with its positive
    judgments while in cache (their scores, NaN where not retrieved).
    """
    made = _checked_columns(qrels, run, probe)
    if made is None:
        _raise_input_error(run, qrels.qrels)
    return made


def _checked_columns(qrels: QrelsIndex, run: Mapping, probe: bool
                     ) -> tuple[RunColumns, np.ndarray | None] | None:
    """`columns_of_dict`'s answer, or None when an input check fails (no Python code per document)."""
    judged = qrels.qrels
    if not all(map(isinstance, run, repeat(str))):
        return None
    qids = [q for q, d in run.items() if len(d) and q in judged]
    dicts = list(map(run.__getitem__, qids))
    if len(qids) != len(run):
        kept = set(qids)
        skipped = [d for q, d in run.items() if q not in kept]
        if not set(map(type, chain.from_iterable(skipped))) <= {str}:
            return None
    bounds = offsets_of(np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts)))
    n = int(bounds[-1])
    keys: list[str] = [None] * n   # at its final size: grown by extend, it would over-allocate up to 1/8
    offsets = bounds.tolist()
    probe = probe and n >= PROBE_MIN_LENGTH * len(dicts)
    probed = None
    try:
        if probe:
            # query by query, each mapping read while in cache: its docids, its scores (counted: a shorter
            # mapping raises), its scores of the positive judgments; a C-level loop over the documents each
            positive = list(map(itemgetter(0), map(qrels.positive_lists, qids)))
            probed = np.empty(sum(map(len, positive)))
            nan, p = np.nan, 0
            scores = np.empty(n)
            for k, d in enumerate(dicts):
                a, b = offsets[k], offsets[k + 1]
                keys[a:b] = d
                scores[a:b] = np.fromiter(d.values(), dtype=np.float64, count=b - a)
                judged_docids = positive[k]
                probed[p:p + len(judged_docids)] = np.fromiter(map(d.get, judged_docids, repeat(nan)),
                                                               dtype=np.float64, count=len(judged_docids))
                p += len(judged_docids)
        else:   # short rankings: one C-level pass over every score (a step per query would cost more)
            for k, d in enumerate(dicts):
                keys[offsets[k]:offsets[k + 1]] = d
            scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), dicts)), dtype=np.float64,
                                 count=n)
        "".join(keys)   # every docid a str, checked at C speed (TypeError otherwise)
    except (TypeError, ValueError):
        return None
    if n != len(keys) or not np.isfinite(scores).all():   # a mapping whose length disagrees with its items
        return None
    return RunColumns(qids, bounds, keys, scores), probed


def _raise_input_error(run: Mapping, judged: Mapping) -> None:
    """The validation pass of a dict run `columns_of_dict` refused: the error naming its first bad query,
    document or score, checked in run order, ids before scores (only of queries with judgments and documents)."""
    for qid, doc_scores in run.items():
        check_query_id(qid)
        keys = list(doc_scores)
        check_document_ids(keys, qid)
        if qid in judged and keys:
            if len(keys) != len(doc_scores):
                raise ValueError(f"run: query {qid!r}: its mapping lists {len(keys)} documents but has length "
                                 f"{len(doc_scores)}")
            read_scores(doc_scores, qid, keys)
    raise RuntimeError("the join refused a run whose every id and score is valid")


def _probe_positives(positive: list[tuple[list[str], np.ndarray]], probed: np.ndarray, keys: list[str],
                     order: np.ndarray, ranked: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The positive grade at every rank, from each ranking's scores of its query's positive judgments (``probed``,
    NaN where not retrieved): about 100 probes against 1,000 retrieved documents, each of whose probes costs more
    than the rest of the join.  Each hit is placed by a binary search on its score among its query's ranked
    scores; a tied hit goes after the members of its tie group with a larger docid (trec_eval order), whatever
    order ``order`` still lists the group in."""
    n = order.size
    counts = np.fromiter((p[1].size for p in positive), dtype=np.int64, count=len(positive))
    found = np.flatnonzero(~np.isnan(probed))   # scores are finite: NaN is a positive judgment not retrieved
    query = np.repeat(np.arange(counts.size), counts)[found]
    hit_scores, end = probed[found], starts[query + 1]
    rank = _bisect_descending(ranked, starts[query], end, hit_scores, strict=False)
    # a hit tied with the next ranked document: where its tie group ends, by a second search of those alone
    tied = np.flatnonzero((rank + 1 < end) & (ranked[np.minimum(rank + 1, max(n - 1, 0))] == hit_scores))
    if tied.size:
        sizes = _bisect_descending(ranked, rank[tied] + 1, end[tied], hit_scores[tied], strict=True) - rank[tied]
        total = int(sizes.sum())
        docids = list(chain.from_iterable(p[0] for p in positive))
        if total > n:   # groups larger than the run in all: each sorted once, each of its hits placed by bisection
            groups: dict[int, list[str]] = {}
            for j, a, size in zip(tied.tolist(), rank[tied].tolist(), sizes.tolist(), strict=True):
                if a not in groups:
                    groups[a] = sorted(map(keys.__getitem__, order[a:a + size].tolist()))
                rank[j] += size - bisect_right(groups[a], docids[found[j]])
        else:   # every tied hit against every member of its group: one C-level comparison each
            offsets = offsets_of(sizes)   # where each hit's comparisons start
            members = order[np.repeat(rank[tied] - offsets[:-1], sizes) + np.arange(total)].tolist()
            owner = found[np.repeat(tied, sizes)].tolist()
            larger = np.fromiter(map(gt, map(keys.__getitem__, members), map(docids.__getitem__, owner)),
                                 dtype=bool, count=total)
            rank[tied] += segment_sum(larger, offsets)
    out = np.zeros(n, dtype=np.int64)
    out[rank] = np.concatenate([p[1] for p in positive])[found] if positive else 0
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


def prepare(qrels: QrelsIndex, run: RunColumns, join_docids: bool, depth: int | None = None,
            judgments: bool = False, keep_scores: bool = False,
            probed: np.ndarray | None = None) -> FlatRun:
    """Rank and join every query of a run with its judgments at once, with no Python code per query or document.

    The same as ranking each query alone (trec_eval order) and probing its judgments with each retrieved docid.
    ``depth``: keep only the first ranks of each query; ``judgments``: join every judgment at once (what every
    ``judgments=True`` batch reads), else only the positive ones; ``keep_scores``: keep the score at every rank
    (other tie orders are made from them); ``join_docids``: keep the docids joined by `SEPARATOR` (for
    vectorised lookups); ``probed``: a dict run's scores of the positive judgments (`columns_of_dict`).
    """
    index, tables = judgment_tables(qrels)
    table_of = np.fromiter(map(index.get, run.qids, [-1] * len(run.qids)), dtype=np.int64, count=len(run.qids))
    kept = np.flatnonzero(table_of >= 0)
    qids = [run.qids[k] for k in kept.tolist()]
    every = kept.size == len(run.qids)
    lengths = np.diff(run.bounds)[kept]
    records = None if every else expand_ranges(run.bounds[:-1][kept], lengths)
    starts = offsets_of(lengths)
    n = int(starts[-1])
    scores = run.scores if every else run.scores[records]
    order = segment_argsort_desc(scores, starts)
    ranked = scores[order]
    ties = tie_slots(ranked, starts, compact=True)   # int32 positions and first-slot marks: 5 bytes a slot
    cut = depth is not None and lengths.size and int(lengths.max()) > depth
    kept_scores = ranked if keep_scores and not cut else None
    made: list[list[str]] = []

    def keys() -> list[str]:
        if not made:   # split once, and only if a tie group of mixed grades is ordered by docid
            made.append(_keys_of(run, records))
        return made[0]
    if judgments:
        del ranked
        grades = in_rank_order(_lookup(run, table_of, tables, UNJUDGED, records), order, keys, starts, ties)
        positive = np.maximum(grades, 0)
    else:
        grades = None
        # only the positive judgments: unjudged and judged non-relevant are both 0 in the positive grades
        positive = None
        if probed is not None:
            positive = _probe_positives(list(map(qrels.positive_lists, qids)), probed, keys(), order, ranked, starts)
        del ranked   # not held while the judgments are looked up
        if positive is None:
            # a dict run's docids are probed in dicts: the query's own judgments serve, clipped at 0, without
            # first building a table of positive judgments per query (most of a first call on many queries)
            dict_run = isinstance(run.docids, list)
            found = _lookup(run, table_of, tables if dict_run else judgment_tables(qrels, positive=True)[1], 0,
                            records)
            if dict_run:
                np.maximum(found, 0, out=found)   # in place: no second array of the run's size
            positive = in_rank_order(found, order, keys, starts, ties)
    key_starts = starts
    if cut:
        order, positive, grades, starts, ties = cut_to_depth(order, positive, grades, starts, lengths, depth,
                                                             keys() if ties is not None else [], ties)
    joined = None
    if join_docids and n <= LOOKUP_BLOCK:   # a larger run is joined block by block by document_values
        joined = run.docids if every and isinstance(run.docids, str) else SEPARATOR.join(keys())
    flat = FlatRun(qrels, run, records, table_of, qids, starts, order, scores, positive, joined, join_docids,
                   key_starts, ties, grades, made[0] if made else None)
    flat.ranked_scores = kept_scores
    return flat
