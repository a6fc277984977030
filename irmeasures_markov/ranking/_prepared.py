"""Prepared runs: a run ranked and joined with its judgments once, read by every measure as relevance batches.

Every measure family consumes [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch] objects: per query, the
grades of the retrieved documents in trec_eval order (score descending, ties
broken by docid descending), already joined with the qrels, plus the recall
base.  [`PreparedRun`][irmeasures_markov.ranking.PreparedRun] does the join and the sort once per run, so many
measures share one pass over it (docs/conventions.md, docs/design.md).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress

import numpy as np

from irmeasures_markov._util._arrays import frozen
from irmeasures_markov._util._segments import consecutive, segment_sum
from irmeasures_markov.io._run_columns import RunColumns
from irmeasures_markov.ranking import _join as join
from irmeasures_markov.ranking._join import FlatRun, RankedQuery, columns_of_dict, prepare
from irmeasures_markov.ranking._qrels_index import QrelsIndex, judged, recall_base_table

__all__ = ["RelevanceBatch", "PreparedRun", "select_positions", "run_needs"]


@dataclass
class RelevanceBatch:
    """Rankings of all evaluated queries of one run, flattened for vectorised kernels.

    Query ``i`` occupies ``slice(offsets[i], offsets[i+1])`` of the flat
    arrays.  Made by [`PreparedRun.batch`][irmeasures_markov.ranking.PreparedRun.batch].

    Parameters
    ----------
    qids : list of str
        The queries, in order.
    offsets : numpy.ndarray
        Query offsets (``n_queries + 1`` entries).
    grades : numpy.ndarray
        The grade at each rank (`UNJUDGED`
        where there is no judgment).  With ``judgments`` False, 0 wherever the
        grade is not positive (judged non-relevant and unjudged alike).
    relevant : numpy.ndarray
        ``grades >= rel``.
    recall_base : numpy.ndarray
        Judgments with grade >= ``rel`` of each query.
    rel : int
        Relevance level.
    docids : list of list of str, optional
        Each query's docids in rank order, when asked for.
    judgments : bool
        Whether ``grades`` tells every judgment apart.
    """
    qids: list[str]
    offsets: np.ndarray
    grades: np.ndarray
    relevant: np.ndarray
    recall_base: np.ndarray
    rel: int
    docids: list[list[str]] | None = None
    judgments: bool = True
    _positions: np.ndarray | None = field(default=None, repr=False)
    #: per-batch memo for kernels (e.g. MP caches its per-model values so the
    #: recall-rescaled variant costs one multiplication)
    cache: dict[object, object] = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.qids)

    @property
    def lengths(self) -> np.ndarray:
        """Number of ranked documents of each query."""
        return np.diff(self.offsets)

    @property
    def ranks(self) -> np.ndarray:
        """1-based rank of every flat position within its query."""
        if self._positions is None:
            idx = np.arange(self.offsets[-1], dtype=np.int64)
            self._positions = idx - np.repeat(self.offsets[:-1], self.lengths) + 1
        return self._positions

    def segments(self) -> Iterator[tuple[str, np.ndarray, np.ndarray, int]]:
        """Yield ``(qid, relevant, grades, recall_base)`` per query.

        Yields
        ------
        tuple of (str, numpy.ndarray, numpy.ndarray, int)
            the query id, its relevance flags and grades in rank order, and its recall base.
        """
        for i, q in enumerate(self.qids):
            s = slice(self.offsets[i], self.offsets[i + 1])
            yield q, self.relevant[s], self.grades[s], int(self.recall_base[i])


def select_positions(grades: np.ndarray | None, starts: np.ndarray, judged_only: bool, cutoff: int | None
                     ) -> tuple[np.ndarray | None, np.ndarray]:
    """Which ranked positions a batch keeps, and its query offsets: the one rule for ``judged_only`` and cutoffs.

    Parameters
    ----------
    grades : numpy.ndarray or None
        Every grade at every rank (`UNJUDGED` where there is none); read only with ``judged_only``.
    starts : numpy.ndarray
        Query offsets of the ranked arrays.
    judged_only : bool
        Remove unjudged documents (`judged`: no grade or a negative
        one; the condensed list) before the cutoff is applied.
    cutoff : int, optional
        Keep the first ``cutoff`` ranks of each (condensed) ranking.

    Returns
    -------
    keep : numpy.ndarray of bool or None
        The kept positions, None when every position is kept.
    offsets : numpy.ndarray
        Query offsets of the kept positions (``starts`` itself when every position is kept).
    """
    offsets = starts
    keep = None
    if judged_only:
        keep = judged(grades)
        offsets = np.zeros_like(starts)
        np.cumsum(segment_sum(keep, starts), out=offsets[1:])
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
    return keep, (frozen(offsets) if offsets is not starts else offsets)


def run_needs(measures: Iterable) -> tuple[int | None, bool, bool, bool]:
    """What the measures that will read a prepared run read of it: how
    [`PreparedRun`][irmeasures_markov.ranking.PreparedRun] prepares the run.

    Each measure may say it with the methods of
    [`FamilyMeasure`][irmeasures_markov.plugin.FamilyMeasure]; a measure without
    one of them reads every rank and nothing else.

    Parameters
    ----------
    measures : iterable

    Returns
    -------
    depth : int or None
        ``max(m.ranks_read())`` when every measure reads a bounded number of
        ranks (and there is one), else None.
    join_docids : bool
        Some measure looks a value up per document (``reads_document_values()``).
    judgments : bool
        Some measure tells judged non-relevant from unjudged (``needs_judgments()``).
    keep_scores : bool
        Some measure makes other tie orders from the ranked scores (``reads_scores()``).
    """
    def says(m, name: str) -> bool:
        method = getattr(m, name, None)
        return bool(method()) if method is not None else False
    measures = list(measures)
    depths = [m.ranks_read() if hasattr(m, "ranks_read") else None for m in measures]
    depth = None if not depths or None in depths else max(depths)
    return (depth, any(says(m, "reads_document_values") for m in measures),
            any(says(m, "needs_judgments") for m in measures), any(says(m, "reads_scores") for m in measures))


class _LazyQueries(Sequence):
    """``PreparedRun.queries``: each [`RankedQuery`][irmeasures_markov.ranking.RankedQuery] is made on first access."""

    def __init__(self, flat: FlatRun):
        self._flat = flat
        self._made: dict[int, RankedQuery] = {}

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


class PreparedRun:
    """A run ranked and joined with qrels once, for any number of measures.

    Only queries present in both the qrels and the run are kept (run queries
    without judgments are skipped; qrels queries without results get each
    measure's DEFAULT from the caller).  A dict run becomes
    [`RunColumns`][irmeasures_markov.io.RunColumns] once
    (`columns_of_dict`, which checks the
    ids of every query and the scores of the kept ones); every run is then
    ranked and joined from its arrays (`prepare`).

    Parameters
    ----------
    qrels : QrelsIndex
        The judgments.
    run : mapping
        ``{qid: {docid: score}}`` with str ids, or a
        [`RunColumns`][irmeasures_markov.io.RunColumns] (the same values).
    measures : iterable, optional
        The measures that will read the run (e.g. this package's
        [`FamilyMeasure`][irmeasures_markov.plugin.FamilyMeasure] objects).  What they
        say they read (`run_needs`) lets the run be prepared for it:
        ranked only as deep as every measure reads, each query's docids
        joined for per-document lookups, every judgment joined while ranking,
        the ranked scores kept.  Values never depend on it.

    Raises
    ------
    TypeError
        A query or document id that is not a str, naming it.
    ValueError
        A score that is not a finite number, naming the query and document.
    """

    def __init__(self, qrels: QrelsIndex, run: Mapping[str, Mapping[str, float]], measures: Iterable = ()) -> None:
        depth, join_docids, judgments, keep_scores = run_needs(measures)
        self.qrels_index = qrels
        #: ranks prepared per query (None: all): ``batch(cutoff=c)`` with ``c <= depth`` reads no further
        self.depth = depth
        self._batches: dict[tuple, RelevanceBatch] = {}
        probed = None
        if not isinstance(run, RunColumns):   # a dict run becomes columns once, checked on the way
            run, probed = columns_of_dict(qrels, run, probe=not judgments)
        flat = prepare(qrels, run, join_docids, depth, judgments, keep_scores, probed)
        self._flat = flat
        self.queries = _LazyQueries(flat)

    @property
    def qids(self) -> list[str]:
        """The prepared queries, in run order."""
        return list(self._flat.qids)

    def batch(self, rel: int = 1, judged_only: bool = False, cutoff: int | None = None,
              with_docids: bool = False, judgments: bool = True) -> RelevanceBatch:
        """The flattened rankings for one setting, cached.

        Built with whole-array operations: no Python code runs per query.

        Parameters
        ----------
        rel : int
            Relevance level: ``relevant`` is ``grades >= rel``.
        judged_only : bool
            Remove unjudged documents before the cutoff is applied.
        cutoff : int, optional
            Keep the first ``cutoff`` ranks of each query.
        with_docids : bool
            Also give each query's docids in rank order.
        judgments : bool
            False says the caller needs only grades >= ``rel``: when
            ``rel >= 1`` and not ``judged_only``, the batch is then built from
            the positive grades, and the join with every judgment is never made.

        Returns
        -------
        RelevanceBatch
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
            docids = list(map(list, consecutive(ranked, np.diff(offsets).tolist())))
        b = RelevanceBatch(list(flat.qids), offsets, grades, grades >= rel, self._recall_bases(rel), rel, docids,
                           judgments)
        self._batches[key] = b
        return b

    def _selection(self, judged_only: bool, cutoff: int | None):
        """``(keep, offsets)``: which ranked positions a batch keeps (None: all) and its query offsets."""
        key = ("selection", bool(judged_only), cutoff)
        hit = self._batches.get(key)
        if hit is None:
            flat = self._flat
            hit = self._batches[key] = select_positions(flat.grades if judged_only else None, flat.starts,
                                                        judged_only, cutoff)
        return hit

    @property
    def offsets(self) -> np.ndarray:
        """Query offsets of the ranked flat arrays (``len(qids) + 1`` entries)."""
        return self._flat.starts

    @property
    def full_grades(self) -> np.ndarray:
        """Every grade at every rank, query after query, `UNJUDGED` where there is no judgment."""
        return self._flat.grades

    def ranked_scores(self) -> np.ndarray:
        """The score at every rank, query after query (float64; gathered from the scores in file order, not kept).

        Returns
        -------
        numpy.ndarray
        """
        flat = self._flat
        return flat.scores[flat.order] if flat.ranked_scores is None else flat.ranked_scores

    @property
    def positive_grades(self) -> np.ndarray:
        """The grade at every rank where it is positive, else 0 (judged non-relevant and unjudged alike)."""
        return self._flat.positive_grades

    @property
    def ranked_docids(self) -> list[str]:
        """The docids in rank order, query after query."""
        return self._flat.docids

    def recall_bases(self, rel: int) -> np.ndarray:
        """Recall base of every prepared query at ``rel`` (judgments with grade >= ``rel``), in ``qids`` order.

        Parameters
        ----------
        rel : int
            Relevance level.

        Returns
        -------
        numpy.ndarray
        """
        return self._recall_bases(rel)

    def _recall_bases(self, rel: int) -> np.ndarray:
        """Recall base of every prepared query at ``rel``, from a table made once per qrels and ``rel``."""
        index, bases = recall_base_table(self.qrels_index, rel)
        qids = self._flat.qids
        return bases[np.fromiter(map(index.__getitem__, qids), dtype=np.int64, count=len(qids))]

    def document_values(self, lookup_segments: Callable[[list[list[str]], list[str] | None], np.ndarray],
                        judged_only: bool = False,
                        cutoff: int | None = None, exact_tie_order: bool = True) -> np.ndarray:
        """A per-document value for every flat position of ``batch(judged_only=..., cutoff=...)``.

        Without a cutoff every retrieved document is looked up (an unknown
        length is an error even where ``judged_only`` drops the document);
        with one, only the documents kept.

        Parameters
        ----------
        lookup_segments : callable
            ``lookup_segments(segments, joined) -> array``, called once per
            block of `LOOKUP_BLOCK`
            documents (one segment of the run in file order), with ``joined``
            the same segments joined by newlines, or None; it returns the
            values of all of them one segment after another (e.g.
            [`lookup_segments`][irmeasures_markov.documents.DocumentLengths.lookup_segments]).
        judged_only, cutoff
            As for [`batch`][irmeasures_markov.ranking.PreparedRun.batch].
        exact_tie_order : bool
            False lets the documents of a tie group of scores that holds no
            positive grade keep file order among themselves (the group and the
            value at every rank with a positive grade are as in rank order),
            for a caller that only sums the values of documents without a
            positive grade: the sums then agree with rank order up to
            floating-point rounding.  It applies when the batch keeps every
            document; otherwise the values are in rank order.

        Returns
        -------
        numpy.ndarray
            The values in rank order, filtered like the batch.
        """
        flat = self._flat
        if not flat.keys:
            return np.zeros(0)
        keep, _ = self._selection(judged_only, cutoff)
        if cutoff is not None and keep is not None:
            wanted = flat.order[keep].tolist()
            return self._lookup_blocks(lookup_segments, list(map(flat.keys.__getitem__, wanted)))
        # first: a pending docid tie-break then runs before the values take their memory
        order = flat.order if exact_tie_order or keep is not None else flat.positive_tie_order
        # looked up in blocks of whole queries and placed at their ranks: no whole-run array in file order beside
        # the result
        values = flat.values_in_rank_order(lookup_segments, order)
        return values if keep is None else values[keep]

    def _lookup_blocks(self, lookup_segments, keys: list[str]) -> np.ndarray:
        """``lookup_segments`` over ``keys`` in blocks of ``join.LOOKUP_BLOCK`` documents, concatenated.

        A vectorised lookup holds several arrays per document while it works
        (the docids' bytes, the table rows it gathers): blocks bound that
        memory without changing a value.
        """
        n = len(keys)
        block = join.LOOKUP_BLOCK
        if n <= block:
            return np.asarray(lookup_segments([keys], None))
        out = np.empty(n)
        for a in range(0, n, block):
            out[a:a + block] = lookup_segments([keys[a:a + block]], None)
        return out
