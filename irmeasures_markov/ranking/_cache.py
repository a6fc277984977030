"""One [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex] per qrels object, reused across calls.

``ir_measures.calc_aggregate(measures, qrels, run)`` and ``ir_measures.iter_calc``
make a new evaluator on every call.  Evaluating many runs against the same
qrels that way would check, copy and index every judgment once per run.  Evaluators made by
this package therefore take their index from `qrels_index`, which
builds it once per qrels object and reuses it while the object is unchanged.

The rule, by kind of qrels:

* **dict** ``{qid: {docid: grade}}``: looked up by identity (``id``).  The
  index is reused only if the dict still equals the checked copy it was
  built from (query order included), and every grade is still of an integer
  type; anything else rebuilds it, checking the qrels again.  So a query or
  judgment added or removed, or a grade changed, between two calls is seen,
  and a grade changed to a float raises as it would on a first call.  The
  comparison runs at C speed, a fraction of the time that checking, copying
  and indexing the judgments takes.  Dicts cannot be weakly
  referenced, so the cache keeps no reference to them, only the indexes;
  an ``id`` reused by a new dict is harmless, as the comparison decides.
* **pandas DataFrame**: weakly referenced (its entry goes when the frame
  does); reused while its ``query_id``, ``doc_id`` and ``relevance`` columns
  hold the values (and dtypes) they held when it was indexed.  A frame whose
  ``relevance`` column does not have an integer dtype is read on every call.
* **anything else** is read on every call: a path (the file may change), and
  ``Qrel`` namedtuples in a list or a generator.  A generator is consumed by
  reading it, so it cannot be reused at all, and ``ir_measures.calc_aggregate``
  hands even a list on to providers as a one-shot ``itertools.tee``
  iterator.  Convert such qrels once (``irmeasures_markov.io.to_qrels_dict``)
  and pass the dict, or make one evaluator
  (``ir_measures.evaluator(measures, qrels)``) and call it per run.

The cache holds the indexes of the `MAX_ENTRIES` qrels used last (each
index is a copy of the judgments); [`clear`][irmeasures_markov.ranking.clear_cache] empties it.  An index's
``qrels`` is shared by every evaluator that gets it: treat it as read-only.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import numpy as np

from irmeasures_markov.io._normalise import qrels_dict
from irmeasures_markov.ranking._qrels_index import QrelsIndex

__all__ = ["MAX_ENTRIES", "CacheInfo", "qrels_index", "clear", "cache_info"]

#: Indexes kept (least recently used dropped first).  A loop over runs reuses one; a few allow alternating
#: between collections without keeping many copies of large qrels alive.
MAX_ENTRIES = 4

_FRAME_COLUMNS = ("query_id", "doc_id", "relevance")


class CacheInfo(NamedTuple):
    """What `cache_info` returns: hits and misses since the last [`clear`][irmeasures_markov.ranking.clear_cache], and
    indexes held."""

    hits: int
    misses: int
    size: int


class _Entry:
    __slots__ = ("index", "unchanged", "ref")

    def __init__(self, index: QrelsIndex, unchanged: Callable[[object], bool], ref=None):
        self.index = index
        #: whether the object still holds what the index was built from
        self.unchanged = unchanged
        #: weak reference to the object, where it can have one (its death removes the entry)
        self.ref = ref


_entries: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()
_hits = 0
_misses = 0


def _integer_grades(qrels) -> bool:
    """Whether every grade is of a type `check_qrels` accepts as an integer."""
    for docs in qrels.values():
        # a sum of ints and bools is an int, and one float (or numpy value) anywhere makes it something else:
        # summing in C is cheaper than collecting every grade's type, which is done only when the sum is not an int
        try:
            if type(sum(docs.values())) is int:
                continue
        except TypeError:  # a grade that compares equal to an int but does not add like one
            return False
        if not all(issubclass(t, (int, np.integer)) for t in set(map(type, docs.values()))):
            return False
    return True


def _dict_check(snapshot: dict) -> Callable[[object], bool]:
    keys = list(snapshot)

    def unchanged(qrels) -> bool:
        # == compares every judgment in C (identical objects short-cut); it cannot tell 1 from 1.0 or True,
        # hence the type check, and it ignores order, hence the key lists
        return qrels == snapshot and list(qrels) == keys and _integer_grades(qrels)
    return unchanged


def _column_values(frame, name: str):
    column = frame[name]
    values = column.to_numpy()
    # object columns compare as lists (C-level, identical str objects short-cut); numeric ones as arrays
    return column.dtype, (values.tolist() if values.dtype == object else values.copy())


def _frame_check(frame) -> Callable[[object], bool] | None:
    if frame["relevance"].dtype.kind not in "iub":
        return None
    snapshot = {name: _column_values(frame, name) for name in _FRAME_COLUMNS}

    def unchanged(current) -> bool:
        for name, (dtype, values) in snapshot.items():
            try:
                now_dtype, now = _column_values(current, name)
            except KeyError:
                return False
            # the dtype first: a column of another dtype is not compared value by value
            if now_dtype != dtype or not (now == values if isinstance(values, list) else np.array_equal(now, values)):
                return False
        return True
    return unchanged


def _is_frame(qrels) -> bool:
    return hasattr(qrels, "itertuples") and hasattr(qrels, "columns") and \
        all(name in qrels.columns for name in _FRAME_COLUMNS)


def qrels_index(qrels: object) -> QrelsIndex:
    """The [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex] of ``qrels``, built once per dict or DataFrame and
    reused while it is unchanged.

    Parameters
    ----------
    qrels : object
        Any form [`to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] takes; forms
        other than a dict or a DataFrame are read on every call (see the
        module docstring).

    Returns
    -------
    QrelsIndex
        Shared by every caller that gets it: treat it as read-only.

    Raises
    ------
    InputError, TypeError, ValueError
        As [`to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] raises them.
    """
    global _hits, _misses
    is_dict = isinstance(qrels, dict)
    if not (is_dict or _is_frame(qrels)):
        return QrelsIndex.from_checked(qrels_dict(qrels))
    key = id(qrels)
    with _lock:
        entry = _entries.get(key)
    if entry is not None and (entry.ref is None or entry.ref() is qrels) and entry.unchanged(qrels):
        with _lock:
            _hits += 1
            if key in _entries:
                _entries.move_to_end(key)
        return entry.index
    with _lock:
        _misses += 1
    index = QrelsIndex.from_checked(qrels_dict(qrels))
    if is_dict:
        entry = _Entry(index, _dict_check(index.qrels))
    else:
        unchanged = _frame_check(qrels)
        if unchanged is None:
            return index
        entry = _Entry(index, unchanged)
        try:
            entry.ref = weakref.ref(qrels, partial(_forget, key))
        except TypeError:  # not weakly referable: its id may be reused, but the column check decides
            pass
    with _lock:
        _entries[key] = entry
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return index


def _forget(key: int, ref: weakref.ref) -> None:
    """Drop the entry of a DataFrame that no longer exists (unless ``key`` is already another object's)."""
    with _lock:
        entry = _entries.get(key)
        if entry is not None and entry.ref is ref:
            del _entries[key]


def clear() -> None:
    """Forget every cached index (and reset the counts of `cache_info`)."""
    global _hits, _misses
    with _lock:
        _entries.clear()
        _hits = _misses = 0


def cache_info() -> CacheInfo:
    """Hits, misses and entries of the cache since it was last cleared."""
    with _lock:
        return CacheInfo(_hits, _misses, len(_entries))
