"""Judgments by query: [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex], and the grade `UNJUDGED` of documents
without one.

A [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex] holds a checked copy of the qrels and caches what every
run evaluated against them asks for: the positive judgments of each query, its
judged grades in ideal order, and its recall base at each relevance level.
"""
from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable, Mapping
from itertools import chain
from operator import methodcaller

import numpy as np

from irmeasures_markov._util._segments import offsets_of, segment_sum
from irmeasures_markov.io._normalise import check_qrels

__all__ = ["UNJUDGED", "QrelsIndex", "judged", "recall_base_table"]

#: Grade given to retrieved documents that have no judgment.  Smaller than any
#: real grade, so ``grade >= rel`` is False for every sensible ``rel``.
UNJUDGED = np.iinfo(np.int64).min


def judged(grades: np.ndarray) -> np.ndarray:
    """Where a grade is a judgment: the one rule of ``judged_only``, ``unjudged=`` and ``residual``.

    A negative grade is trec_eval's "pooled but unjudged" document: like a
    document without judgment (`UNJUDGED`), it is not judged (and never
    relevant at ``rel >= 0``).

    Parameters
    ----------
    grades : numpy.ndarray
        Grades, `UNJUDGED` where there is none.

    Returns
    -------
    numpy.ndarray of bool
        ``grades >= 0``.
    """
    return grades >= 0


class QrelsIndex:
    """Judgments by query, with recall bases cached per relevance level.

    The index holds a checked copy: later changes to ``qrels`` do not reach
    it.  `irmeasures_markov.ranking._cache.qrels_index` gives one index
    per qrels object, for callers that are handed the same qrels many times.

    Parameters
    ----------
    qrels : mapping
        ``{qid: {docid: grade}}`` with str ids and integer grades in the
        signed 32-bit range.

    Raises
    ------
    TypeError
        An id or grade of another type, naming the query and document.
    ValueError
        A grade outside the signed 32-bit range.
    """

    def __init__(self, qrels: Mapping[str, Mapping[str, int]]) -> None:
        self._set(check_qrels(qrels))

    @classmethod
    def from_checked(cls, qrels: dict[str, dict[str, int]]) -> QrelsIndex:
        """An index over the result of `check_qrels`, not checked again.

        Parameters
        ----------
        qrels : dict
            Checked qrels ``{qid: {docid: grade}}``; the index keeps this object.

        Returns
        -------
        QrelsIndex
        """
        index = cls.__new__(cls)
        index._set(qrels)
        return index

    def _set(self, qrels: dict[str, dict[str, int]]):
        self.qrels: dict[str, dict[str, int]] = qrels
        self._grades_desc: dict[str, np.ndarray] = {}
        self._positive: dict[str, dict[str, int]] = {}
        self._positive_lists: dict[str, tuple[list[str], np.ndarray]] = {}
        self._recall_base: dict[tuple[str, int], int] = {}
        self._no_relevant: dict[int, list[str]] = {}
        self._warned_empty = set()

    @property
    def query_ids(self) -> list[str]:
        """The qrels' query ids, in qrels order."""
        return list(self.qrels)

    def judged_grades(self, qid: str) -> np.ndarray:
        """All judged grades of the query, sorted descending (the ideal ranking); cached.

        Parameters
        ----------
        qid : str
            A query id; one without judgments has none.

        Returns
        -------
        numpy.ndarray
            int64.
        """
        g = self._grades_desc.get(qid)
        if g is None:
            g = np.sort(np.fromiter(self.qrels.get(qid, {}).values(), dtype=np.int64))[::-1]
            self._grades_desc[qid] = g
        return g

    def positive(self, qid: str) -> dict[str, int]:
        """The query's documents with a grade > 0, ``{docid: grade}`` (cached).

        Every measure with ``rel >= 1`` needs only these (docs/design.md,
        "The join with the judgments").

        Parameters
        ----------
        qid : str
            A query id; one without judgments has none.

        Returns
        -------
        dict
        """
        d = self._positive.get(qid)
        if d is None:
            d = self._positive[qid] = {doc: g for doc, g in self.qrels.get(qid, {}).items() if g > 0}
        return d

    def positive_lists(self, qid: str) -> tuple[list[str], np.ndarray]:
        """The query's documents with a grade > 0 as two lists, in the order of
        [`positive`][irmeasures_markov.ranking.QrelsIndex.positive] (cached).

        Parameters
        ----------
        qid : str
            A query id; one without judgments has none.

        Returns
        -------
        docids : list of str
        grades : numpy.ndarray
            int64.
        """
        lists = self._positive_lists.get(qid)
        if lists is None:
            d = self.positive(qid)
            lists = self._positive_lists[qid] = (list(d), np.fromiter(d.values(), dtype=np.int64, count=len(d)))
        return lists

    def recall_base(self, qid: str, rel: int = 1) -> int:
        """Number of the query's judgments with grade >= ``rel`` (cached: asked once per query and run).

        Parameters
        ----------
        qid : str
            A query id; one without judgments has none.
        rel : int
            Relevance level.

        Returns
        -------
        int
        """
        rb = self._recall_base.get((qid, rel))
        if rb is None:
            # descending order: count of grades >= rel
            rb = self._recall_base[(qid, rel)] = int(np.count_nonzero(self.judged_grades(qid) >= rel))
        return rb

    def queries_without_relevant(self, rel: int = 1) -> list[str]:
        """The qrels queries with no judgment of grade >= ``rel``, in qrels order (computed once per ``rel``).

        Parameters
        ----------
        rel : int
            Relevance level.

        Returns
        -------
        list of str
        """
        empty = self._no_relevant.get(rel)
        if empty is None:
            # from the recall-base table (one vectorised count over every judgment), not a sort per query
            index, bases = recall_base_table(self, rel)
            qids = list(index)
            empty = self._no_relevant[rel] = [qids[i] for i in np.flatnonzero(bases == 0).tolist()]
        return empty

    def warn_if_no_relevant(self, qids: Iterable[str] | None = None, rel: int = 1,
                            warned: set[tuple[str, int]] | None = None) -> None:
        """Warn once about the queries that have no judgment of grade >= ``rel``.

        Parameters
        ----------
        qids : iterable of str, optional
            The queries to check; default every qrels query.
        rel : int
            Relevance level.
        warned : set, optional
            The ``(qid, rel)`` pairs already reported, updated in place
            (default: this index's own set).  An evaluator passes its own, so
            that every evaluator warns once, even when it shares a cached index.

        Warns
        -----
        RuntimeWarning
            Naming up to 20 of the queries not reported before.
        """
        if warned is None:
            warned = self._warned_empty
        if qids is None:
            candidates = self.queries_without_relevant(rel)
        else:
            index, bases = recall_base_table(self, rel)
            candidates = [q for q in qids if q not in index or bases[index[q]] == 0]
        empty = [q for q in candidates if (q, rel) not in warned]
        if empty:
            warned.update((q, rel) for q in empty)
            warnings.warn(f"{len(empty)} qrels quer{'y has' if len(empty) == 1 else 'ies have'} no document "
                          f"with grade >= {rel}; they score 0 (as in trec_eval): {', '.join(map(str, empty[:20]))}"
                          f"{' ...' if len(empty) > 20 else ''}", RuntimeWarning, stacklevel=2)

_RECALL_BASES: weakref.WeakKeyDictionary[QrelsIndex, dict[int, tuple]] = weakref.WeakKeyDictionary()


def recall_base_table(qrels: QrelsIndex, rel: int) -> tuple[dict[str, int], np.ndarray]:
    """The recall base of every qrels query at ``rel``, as a table made once per qrels and ``rel``.

    Parameters
    ----------
    qrels : QrelsIndex
        The judgments; like the other caches of [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex], the
        table assumes they are not changed.
    rel : int
        Relevance level.

    Returns
    -------
    index : dict
        Row of each query id.
    bases : numpy.ndarray
        ``bases[index[qid]]`` counts the query's judgments with grade >= ``rel``.
    """
    tables = _RECALL_BASES.setdefault(qrels, {})
    table = tables.get(rel)
    if table is None:
        judged = qrels.qrels
        counts = np.fromiter(map(len, judged.values()), dtype=np.int64, count=len(judged))
        offsets = offsets_of(counts)
        grades = np.fromiter(chain.from_iterable(map(methodcaller("values"), judged.values())), dtype=np.int64,
                             count=int(offsets[-1]))
        table = tables[rel] = (dict(zip(judged, range(len(judged)), strict=False)), segment_sum(grades >= rel, offsets))
    return table
