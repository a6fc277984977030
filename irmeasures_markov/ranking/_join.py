"""Rankings joined with their judgments: one query (:class:`RankedQuery`) or a whole run at once (:class:`FlatRun`).

:func:`prepare_flat` ranks every query of a run and joins it with its
judgments as one set of arrays, with no Python code per query or document;
:class:`~irmeasures_markov.ranking._prepared.PreparedRun` uses it for every
dict run (when an input check fails it returns None, and PreparedRun's
validation pass names the culprit).  The result is the same as ranking each
query alone.  How the join works: docs/design.md.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain, repeat
from operator import attrgetter, methodcaller

import numpy as np

from irmeasures_markov._util._arrays import frozen
from irmeasures_markov._util._segments import consecutive, query_blocks, segment_argsort_desc
from irmeasures_markov.ranking._order import cut_to_depth, fix_ties, in_rank_order, tie_groups, tie_slots
from irmeasures_markov.ranking._positive_join import positive_hits
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["SEPARATOR", "LOOKUP_BLOCK", "RankedQuery", "FlatRun", "prepare_flat"]

#: joins the docids of a ranking into one string (one docid per line), the form
#: :class:`~irmeasures_markov.documents._docid_table.DocidTable` looks up at once
SEPARATOR = "\n"
#: runs whose rankings hold this many documents on average are joined with their judgments by probing each
#: query's ranking with its positive judgments instead of probing the judgments with every retrieved document
#: (docs/design.md, "The positive join")
_FLAT_MAX_MEAN_LENGTH = 512
#: documents per block where a whole-run step would otherwise hold a copy of the run (the docid check,
#: the per-document lookups of document_values)
_CHECK_BLOCK = 1 << 16
#: documents per call of a per-document lookup (:meth:`~irmeasures_markov.ranking.PreparedRun.document_values`)
LOOKUP_BLOCK = 1 << 18


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
        ``keys`` joined by :data:`SEPARATOR`, when the run was prepared with
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
        """Every grade at every rank, :data:`UNJUDGED` where there is no judgment."""
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
    def docids(self) -> list[str]:
        """The docids in rank order."""
        if self._docids is None:
            keys = self._keys
            self._docids = [keys[i] for i in self._order.tolist()]
        return self._docids


class FlatRun:
    """Every evaluated query of a run in one flat layout: what a prepared run keeps.

    Query ``i`` occupies ``slice(starts[i], starts[i+1])`` of every ranked
    array.  The arrays are read-only: batches share them instead of copying.
    Made by :func:`prepare_flat` (and :func:`~irmeasures_markov.ranking._columnar_join.prepare_columns`).

    Parameters
    ----------
    qids : list of str
        The prepared queries.
    judged : list of mapping
        Each query's judgments ``{docid: grade}``.
    keys : list of str
        The docids in file order, query after query.
    starts : numpy.ndarray
        Query offsets of the ranked arrays.
    order : numpy.ndarray
        Index into ``keys`` of the document at each rank (trec_eval order,
        except in the tie groups of ``ties``).
    runs : list of mapping, optional
        The run's own mapping of each query, from which :meth:`query` reads
        the scores again (the flat layout keeps no copy of them).
    positive_grades : numpy.ndarray
        The positive grade at each rank (0 where not positive).
    joined : str, optional
        All docids in file order joined by :data:`SEPARATOR`.
    joins : bool
        Whether the run was prepared with ``join_docids``.
    key_starts : numpy.ndarray, optional
        Query offsets of ``keys``; default ``starts`` (they differ when the
        rankings were cut at a depth).
    ties : tuple of numpy.ndarray, optional
        Tie groups (:func:`~irmeasures_markov.ranking._order.tie_slots`) that
        ``order`` may still list in file order; the docid tie-break is made
        on first use of :attr:`order`.
    grades : numpy.ndarray, optional
        Every grade at each rank, when joined already.
    """
    __slots__ = ("qids", "judged", "keys", "starts", "key_starts", "_state", "runs", "positive_grades",
                 "joined", "joins", "_grades", "_docids", "ranked_scores")

    def __init__(self, qids: list[str], judged: list[Mapping[str, int]], keys: list[str], starts: np.ndarray,
                 order: np.ndarray, runs: list[Mapping[str, float]] | None, positive_grades: np.ndarray,
                 joined: str | None, joins: bool = False, key_starts: np.ndarray | None = None,
                 ties: tuple[np.ndarray, np.ndarray] | None = None, grades: np.ndarray | None = None) -> None:
        self.qids: list[str] = qids
        self.judged: list[Mapping[str, int]] = judged
        self.keys: list[str] = keys
        self.starts = frozen(starts)
        #: where each query's docids start in ``keys``: ``starts`` unless the rankings were cut at a depth
        self.key_starts = self.starts if key_starts is None else frozen(key_starts)
        #: ``(order, ties, positive_ties_ordered)``, replaced whole (so a reader in another thread always sees
        #: a consistent triple): ``ties``, the ``(slots, scores)`` of the tie groups (:func:`tie_slots`) while
        #: ``order`` may still list them in file order (the docid tie-break is made on first use of ``order``,
        #: which many measures never need), None once it is final; ``positive_ties_ordered``: the groups that
        #: hold a positive grade are in docid order already (:attr:`positive_tie_order`)
        self._state = (frozen(order), ties, ties is None)
        self.runs: list[Mapping[str, float]] | None = runs
        #: the score at every rank, when the run was prepared with ``keep_scores`` (else None)
        self.ranked_scores: np.ndarray | None = None
        self.positive_grades = frozen(positive_grades)
        #: all docids in file order joined by newlines, when the run was prepared with join_docids
        self.joined: str | None = joined
        #: whether the run was prepared with join_docids (each RankedQuery then has its joined_keys)
        self.joins = joins or joined is not None
        self._grades = None if grades is None else frozen(grades)
        self._docids = None

    @property
    def _ties(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self._state[1]

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
        """For each tied slot of ``ties`` (:func:`tie_slots`), whether its tie group holds a positive grade."""
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
        about :data:`LOOKUP_BLOCK` documents are looked up, and each block's
        values placed at its ranks at once.  A run of one block is looked up
        in one call (with :attr:`joined`, when kept).

        Parameters
        ----------
        lookup_segments : callable
            ``lookup_segments(segments, joined) -> array`` of the values of
            the docids of ``segments`` (one list of docids here), ``joined``
            the same docids joined by :data:`SEPARATOR`, or None.
        order : numpy.ndarray
            Index into :attr:`keys` of the document at each rank (:attr:`order`
            or :attr:`positive_tie_order`); query ``i``'s ranks are
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
    def n_documents(self) -> int:
        """Number of documents retrieved for the prepared queries."""
        return len(self.keys)

    @property
    def grades(self) -> np.ndarray:
        """Every grade at every rank, ``UNJUDGED`` where there is no judgment (joined on first use)."""
        if self._grades is None:
            n = len(self.keys)
            getters = [d.get for d in self.judged]
            lengths = np.diff(self.key_starts).tolist()
            # one C-level dict probe per document: chained maps, no Python code per query or document
            per_query = map(map, getters, consecutive(self.keys, lengths), repeat(repeat(UNJUDGED)))
            full = np.fromiter(chain.from_iterable(per_query), dtype=np.int64, count=n)
            order, ties, _ = self._state   # one consistent pair, whatever another thread publishes meanwhile
            self._grades = frozen(in_rank_order(full, order, self.keys, self.key_starts, ties))
        return self._grades

    @property
    def docids(self) -> list[str]:
        """The docids in rank order, query after query."""
        if self._docids is None:
            self._docids = list(map(self.keys.__getitem__, self.order.tolist()))
        return self._docids

    def query(self, i: int) -> RankedQuery:
        """Query ``i`` as a :class:`RankedQuery` (its scores read again from the run)."""
        a, b = int(self.starts[i]), int(self.starts[i + 1])
        ka, kb = int(self.key_starts[i]), int(self.key_starts[i + 1])
        keys = self.keys[ka:kb]
        order = self.order[a:b] - ka
        scores = np.fromiter(self.runs[i].values(), dtype=np.float64, count=kb - ka)[order]
        return RankedQuery(self.qids[i], keys, order, scores, self.positive_grades[a:b], self.judged[i],
                           SEPARATOR.join(keys) if self.joins else None)


def prepare_flat(qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], join_docids: bool,
                 depth: int | None = None, judgments: bool = False, keep_scores: bool = False) -> FlatRun | None:
    """Rank and join every query of ``run`` at once, with no Python code per query or document.

    Long rankings (``_FLAT_MAX_MEAN_LENGTH``) are joined through their
    positive judgments (:func:`~irmeasures_markov.ranking._positive_join.positive_hits`),
    short ones by probing every document.  The result is the same as
    preparing each query alone.

    Parameters
    ----------
    qrels : QrelsIndex
        The judgments.
    run : mapping
        ``{qid: {docid: score}}``.
    join_docids : bool
        Keep the docids joined by :data:`SEPARATOR` (for vectorised lookups).
    depth : int, optional
        Keep only the first ``depth`` ranks of each query.
    judgments : bool
        Probe every retrieved document in the query's judgments at once (the
        grades every ``judgments=True`` batch reads) and read the positive
        grades from those.
    keep_scores : bool
        Keep the score at every rank (:attr:`FlatRun.ranked_scores`; other
        tie orders are made from them), instead of reading them again later.

    Returns
    -------
    FlatRun or None
        None when an input check fails (a non-str id, a score that is not a
        finite number, a mapping whose length disagrees with its items): the
        caller's validation pass then names the culprit.
    """
    if not all(map(isinstance, run, repeat(str))):
        return None
    judged_all = qrels.qrels
    qids = [q for q, d in run.items() if len(d) and q in judged_all]
    dicts = list(map(run.__getitem__, qids))
    if len(qids) != len(run):
        kept = set(qids)
        skipped = [d for q, d in run.items() if q not in kept]
        if not set(map(type, chain.from_iterable(skipped))) <= {str}:
            return None
    lengths = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    long_rankings = int(lengths.sum()) >= _FLAT_MAX_MEAN_LENGTH * max(1, len(dicts))
    n = int(lengths.sum())
    # a run of one lookup block keeps its docids joined (document_values reads them from there)
    join = join_docids and n <= LOOKUP_BLOCK
    joined = None
    if long_rankings and not judgments:
        # each query's dict read once while it is in cache: its docids, its scores and its positive judgments
        positive_lists = list(map(qrels.positive_lists, qids))
        read = _read_long_rankings(dicts, positive_lists, n, SEPARATOR if join else None)
        if read is None:
            return None
        keys, scores, probed, joined = read
        del read   # the tuple would keep the scores alive once ranked
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
                for a in range(0, n, _CHECK_BLOCK):
                    "".join(keys[a:a + _CHECK_BLOCK])
            scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), dicts)), dtype=np.float64, count=n)
        except (TypeError, ValueError):
            return None
    if not np.isfinite(scores).all():
        return None
    starts = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    # the scores are put in rank order in place: no second array of the run's size (nothing reads them in
    # file order again)
    order = segment_argsort_desc(scores, starts, sort_scores=True)
    ranked = scores
    del scores
    hits = None
    if long_rankings and not judgments:
        # the join needs only which documents tie, not their order: the docid tie-break waits for a use; only
        # the hits' ranks are kept, so the grade at every rank is made once ``ranked`` is freed
        hits = positive_hits(positive_lists, probed, keys, order, ranked, starts)
        del probed, positive_lists
    ties = tie_slots(ranked, starts, compact=True)   # int32 positions and first-slot marks: 5 bytes a slot
    cut = depth is not None and lengths.size and int(lengths.max()) > depth
    judged = list(map(judged_all.__getitem__, qids))
    grades = None
    if hits is not None:
        positive = None   # made below, once ranked is freed
    else:
        if ties is not None and not long_rankings:
            order, ties = fix_ties(order, keys, starts, *ties), None
        # one C-level probe of the query's judgments per retrieved document: across a run of short rankings
        # this costs less than probing each query's ranking with its positive judgments and placing the hits
        # by binary search (a few Python steps per query)
        getters = list(map(attrgetter("get"), judged))
        missing = UNJUDGED if judgments else 0
        full = np.fromiter(chain.from_iterable(map(map, getters, dicts, repeat(repeat(missing)))), dtype=np.int64,
                           count=n)
        # long rankings keep their docid tie-break pending: only tie groups of mixed grades are ordered
        positive = in_rank_order(full, order, keys, starts, ties)
        del full
        if judgments:
            grades = positive.copy()
        np.maximum(positive, 0, out=positive)  # grade where > 0, else 0 (judged non-relevant or unjudged)
    kept_scores = ranked if keep_scores and not cut else None
    del ranked
    if hits is not None:
        positive = np.zeros(n, dtype=np.int64)
        positive[hits[0]] = hits[1]
        del hits
    key_starts = starts
    if cut:
        order, positive, grades, starts, ties = cut_to_depth(order, positive, grades, starts, lengths, depth,
                                                             keys, ties)
    # a larger run is not joined whole: document_values joins its docids block by block, which bounds its memory
    flat = FlatRun(qids, judged, keys, starts, order, dicts, positive, joined, join_docids, key_starts, ties,
                   grades)
    flat.ranked_scores = kept_scores
    return flat


def _read_long_rankings(dicts: list[Mapping[str, float]], positive: list[tuple[list[str], np.ndarray]], n: int,
                        separator: str | None) -> tuple[list[str], np.ndarray, np.ndarray, str | None] | None:
    """``(keys, scores, probed, joined)`` of a run of long rankings, each ranking's dict read three times in a row
    while it is in cache: the docids in file order, their scores, the score of each positive judgment (NaN where
    not retrieved), the docids joined by ``separator`` (None without one); None when an input check fails."""
    # the list made at its final size: grown by extend, it would over-allocate up to 1/8 (a byte per document)
    keys: list[str] = [None] * n
    scores = np.empty(n)
    probes = []
    parts: list[str] = []
    a = 0
    nan = np.nan
    try:
        for d, (judged, _) in zip(dicts, positive, strict=False):
            b = a + len(d)
            keys[a:b] = d
            if separator is not None:
                parts.append(separator.join(d))
            else:
                "".join(d)   # checks that every docid is a str
            scores[a:b] = np.fromiter(d.values(), dtype=np.float64, count=b - a)
            probes.append(np.fromiter(map(d.get, judged, repeat(nan)), dtype=np.float64, count=len(judged)))
            a = b
    except (TypeError, ValueError):
        return None
    if a != n or len(keys) != n:   # a mapping whose length disagrees with its items
        return None
    joined = separator.join(parts) if separator is not None else None
    return keys, scores, (np.concatenate(probes) if probes else np.zeros(0)), joined
