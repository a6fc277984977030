"""A run kept as columns (:class:`~irmeasures_markov.io._run_columns.RunColumns`) ranked and joined with its judgments.

:func:`prepare_columns` is :func:`~irmeasures_markov.ranking._join.prepare_flat`
for a run read into columns: the scores are an array already, and each
retrieved document is looked up among its query's judgments by
:func:`~irmeasures_markov._util._token_sets.lookup`, on the docids' bytes
when numba is loaded, so no Python object per document is made unless a
measure asks for docids (a tie group of mixed grades, document lengths).
The result equals what ``prepare_flat`` makes of the same run as dicts
(tests/ranking/test_columnar_join.py).
"""
from __future__ import annotations

import weakref

import numpy as np

from irmeasures_markov._util._arrays import frozen
from irmeasures_markov._util._segments import expand_ranges, segment_argsort_desc
from irmeasures_markov._util._token_sets import KeyTables, lookup
from irmeasures_markov.io._run_columns import RunColumns
from irmeasures_markov.ranking._join import LOOKUP_BLOCK, FlatRun
from irmeasures_markov.ranking._order import cut_to_depth, in_rank_order, tie_slots
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["ColumnarFlatRun", "LazyDocids", "judgment_tables", "prepare_columns"]

_TABLES: weakref.WeakKeyDictionary[QrelsIndex, dict[bool, tuple[dict[str, int], KeyTables]]] = (
    weakref.WeakKeyDictionary())


def judgment_tables(qrels: QrelsIndex, positive: bool = False) -> tuple[dict[str, int], KeyTables]:
    """Each qrels query's judgments as :class:`~irmeasures_markov._util._token_sets.KeyTables` (made once per index).

    Parameters
    ----------
    qrels : QrelsIndex
    positive : bool
        Only the judgments with a grade > 0 (all that a measure with
        ``rel >= 1`` reads).

    Returns
    -------
    index : dict
        The table of each query id (qrels order).
    tables : KeyTables
        ``{docid: grade}`` per query.
    """
    made = _TABLES.setdefault(qrels, {})
    if positive not in made:
        judged = qrels.qrels
        tables = [qrels.positive(q) for q in judged] if positive else list(judged.values())
        made[positive] = ({q: t for t, q in enumerate(judged)}, KeyTables(tables))
    return made[positive]


class _Scores:
    """One query's scores in file order, read like a run's ``{docid: score}`` values (:meth:`FlatRun.query`)."""
    __slots__ = ("_scores",)

    def __init__(self, scores: np.ndarray) -> None:
        self._scores = scores

    def values(self) -> np.ndarray:
        return self._scores

    def __len__(self) -> int:
        return self._scores.size


class LazyDocids:
    """A flat layout's docids in file order, split from the run's joined docids on first use.

    Parameters
    ----------
    run : RunColumns
    records : numpy.ndarray or None
        The run's records the layout holds, in order (None: all).
    """
    __slots__ = ("run", "records", "_made")

    def __init__(self, run: RunColumns, records: np.ndarray | None) -> None:
        self.run = run
        self.records = records
        self._made: list[str] | None = None

    def as_list(self) -> list[str]:
        """The docids as a list (split on first use, then kept).

        Returns
        -------
        list of str
        """
        if self._made is None:
            keys = self.run.docids.split("\n") if self.run.qids else []
            if self.records is not None:
                keys = list(map(keys.__getitem__, self.records.tolist()))
            self._made = keys
        return self._made


class ColumnarFlatRun(FlatRun):
    """A :class:`~irmeasures_markov.ranking._join.FlatRun` of a run kept as columns: docids split on first use.

    Parameters
    ----------
    docids : LazyDocids
        The docids in file order.
    table_of : numpy.ndarray
        The row of each of the run's queries in :func:`judgment_tables` (-1: none).
    qrels : QrelsIndex
        The judgments.
    **flat
        :class:`FlatRun`'s other parameters.
    """
    __slots__ = ("_lazy", "_table_of", "_qrels")

    def __init__(self, docids: LazyDocids, table_of: np.ndarray, qrels: QrelsIndex, **flat) -> None:
        self._lazy = docids
        self._table_of = table_of
        self._qrels = qrels
        super().__init__(keys=None, **flat)

    @property
    def keys(self) -> list[str]:
        """The docids in file order, query after query (split from the run's joined docids on first use)."""
        return self._lazy.as_list()

    @keys.setter
    def keys(self, value) -> None:
        if value is not None:
            raise AttributeError("the docids of a ColumnarFlatRun come from its run")

    @property
    def n_documents(self) -> int:
        """Number of documents retrieved for the prepared queries."""
        return int(self.key_starts[-1])

    @property
    def grades(self) -> np.ndarray:
        """Every grade at every rank, ``UNJUDGED`` where there is no judgment (joined on first use)."""
        if self._grades is None:
            lazy = self._lazy
            _, tables = judgment_tables(self._qrels)
            full = _lookup(lazy.run, self._table_of, tables, UNJUDGED, lazy.records)
            order, ties, _ = self._state
            self._grades = frozen(in_rank_order(full, order, lazy.as_list, self.key_starts, ties))
        return self._grades


def _lookup(run: RunColumns, table_of: np.ndarray, tables: KeyTables, missing: int, records: np.ndarray | None
            ) -> np.ndarray:
    """Every record's grade in its query's table (``missing`` where none), in file order, records kept."""
    full = lookup(run.docids, run.bounds, table_of, tables, missing)
    return full if records is None else full[records]


def prepare_columns(qrels: QrelsIndex, run: RunColumns, join_docids: bool, depth: int | None = None,
                    judgments: bool = False, keep_scores: bool = False) -> FlatRun:
    """Rank and join every query of a run kept as columns: :func:`~irmeasures_markov.ranking._join.prepare_flat`'s
    flat layout, with no Python object per document.

    Parameters
    ----------
    qrels : QrelsIndex
        The judgments.
    run : RunColumns
        The run (ids are str, scores finite, no document twice in a query).
    join_docids, depth, judgments, keep_scores
        As for :func:`~irmeasures_markov.ranking._join.prepare_flat`.

    Returns
    -------
    FlatRun
        A :class:`ColumnarFlatRun`.
    """
    index, tables = judgment_tables(qrels)
    table_of = np.fromiter(map(index.get, run.qids, [-1] * len(run.qids)), dtype=np.int64, count=len(run.qids))
    kept = np.flatnonzero(table_of >= 0)
    qids = [run.qids[k] for k in kept.tolist()]
    every = kept.size == len(run.qids)
    records = None if every else expand_ranges(run.bounds[:-1][kept], np.diff(run.bounds)[kept])
    lengths = np.diff(run.bounds)[kept]
    starts = np.zeros(kept.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    n = int(starts[-1])
    scores = run.scores if every else run.scores[records]
    order = segment_argsort_desc(scores, starts)
    ranked = scores[order]
    ties = tie_slots(ranked, starts)
    cut = depth is not None and lengths.size and int(lengths.max()) > depth
    flat_keys = LazyDocids(run, records)
    if judgments:
        grades = in_rank_order(_lookup(run, table_of, tables, UNJUDGED, records), order, flat_keys.as_list, starts,
                               ties)
        positive = np.maximum(grades, 0)
    else:
        grades = None
        # only the positive judgments: unjudged and judged non-relevant are both 0 in the positive grades
        _, positive_tables = judgment_tables(qrels, positive=True)
        positive = in_rank_order(_lookup(run, table_of, positive_tables, 0, records), order, flat_keys.as_list,
                                 starts, ties)
    kept_scores = ranked if keep_scores and not cut else None
    per_query = [_Scores(scores[a:b]) for a, b in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True)]
    key_starts = starts
    if cut:
        order, positive, grades, starts, ties = cut_to_depth(order, positive, grades, starts, lengths, depth,
                                                             flat_keys.as_list() if ties is not None else [], ties)
    joined = None
    if join_docids and n <= LOOKUP_BLOCK:
        joined = run.docids if every else "\n".join(flat_keys.as_list())
    judged_all = qrels.qrels
    flat = ColumnarFlatRun(flat_keys, table_of, qrels, qids=qids,
                           judged=list(map(judged_all.__getitem__, qids)), starts=starts, order=order,
                           runs=per_query, positive_grades=positive, joined=joined, joins=join_docids,
                           key_starts=key_starts, ties=ties, grades=grades)
    flat.ranked_scores = kept_scores
    return flat
