"""Query logs of ir_datasets (TripClick, AOL): [`from_ir_datasets`][irmeasures_markov.calibration.from_ir_datasets]."""
from __future__ import annotations

import itertools
from datetime import datetime

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration._logs import ClickLog, Session, make_session
from irmeasures_markov.io._text import short

__all__ = ["from_ir_datasets"]


def from_ir_datasets(source: object, *, depth: int = 10, description: str | None = None) -> ClickLog:
    """A log from ir_datasets query-log records: a dataset with ``qlogs_iter()`` or an iterable of records.

    Records are ir_datasets' qlog namedtuples (``TripClickQlog``, ``AolQlog``):
    ``query_id``, ``session_id`` or ``user_id``, ``time`` (a ``datetime``) and
    ``items``, each item a ``doc_id`` with ``clicked`` and, in AOL, ``rank``.

    * Items without ``rank`` (TripClick) are the ranking shown, in order; the
      clicked items are the clicks.
    * Items with ``rank`` (AOL) are the clicks only: the ranking shown is
      unknown except at clicked ranks.  It is taken as ``depth`` results
      (more if a deeper rank was clicked), documents at unclicked ranks
      having the id ``''``.  A record without items is a search without clicks.
    * Consecutive records of the same session (or user), query and ranking
      are one search with several clicks (both logs write one record per
      click): their clicks join in record order.  Click times are the
      records' times in seconds from the search's first record (so the first
      click is at 0); they are absent when a record has no time.
    * Session ids are the records' ``session_id`` (``user_id`` for AOL), with
      ``#2``, ``#3``, ... added for the later searches of one session.

    Parameters
    ----------
    source : ir_datasets dataset or iterable of qlog records
    depth : int
        Length of an AOL ranking (known only at its clicked ranks).
    description : str, optional
        Default: ``'ir_datasets query log NAME'``.

    Returns
    -------
    ClickLog

    Raises
    ------
    InputError
        A record that is not a qlog record, or contradicts an earlier one, naming the record.
    ValueError
        A ``depth`` that is not a positive integer.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"`depth` must be a positive integer, got {depth!r}")
    records = source.qlogs_iter() if hasattr(source, "qlogs_iter") else source
    name = getattr(source, "dataset_id", None) or type(source).__name__

    def parsed():
        """(search key, where, items, ranked, time) of each record; the key is (session, query, ranking)."""
        for i, rec in enumerate(records, start=1):
            where = f"{name}: qlogs record {i}"
            try:
                qid, items = str(rec.query_id), tuple(rec.items)
            except (AttributeError, TypeError) as e:
                raise InputError(f"{where}: not an ir_datasets qlog record (needs query_id and items): {e}") from None
            sid = getattr(rec, "session_id", None)
            sid = getattr(rec, "user_id", None) if sid is None else sid
            t = getattr(rec, "time", None)
            ranked = all(hasattr(it, "rank") for it in items)  # AOL (also a record without items)
            shown = None if ranked else tuple(str(it.doc_id) for it in items)
            yield ((str(i) if sid is None else str(sid), qid, shown), where, items, ranked,
                   t.timestamp() if isinstance(t, datetime) else None)

    sessions: list[Session] = []
    searches: dict[str, int] = {}
    # one search: consecutive records of one session, query and ranking (read lazily: errors in record order)
    for (sid, qid, shown), group in itertools.groupby(parsed(), key=lambda r: r[0]):
        head = next(group)
        where0, t0 = head[1], head[4]
        docs = list(shown) if shown is not None else [""] * depth
        ranks, times = [], []
        for _, where, items, ranked, t in itertools.chain([head], group):
            for pos, it in enumerate(items, start=1):
                if not getattr(it, "clicked", True):
                    continue
                doc = str(it.doc_id)
                r = _item_rank(it, where) if ranked else pos
                if ranked:
                    docs += [""] * (r - len(docs))
                    if docs[r - 1] not in ("", doc):
                        raise InputError(f"{where}: rank {r} was clicked as document {docs[r - 1]!r} earlier in "
                                         f"this search and as {doc!r} here")
                    docs[r - 1] = doc
                ranks.append(r)
                times.append(None if t is None or t0 is None else t - t0)
        n = searches[sid] = searches.get(sid, 0) + 1
        timed = bool(times) and all(x is not None for x in times)
        sessions.append(make_session(qid, docs, ranks, times=times if timed else None,
                                     session_id=sid if n == 1 else f"{sid}#{n}", where=where0))
    return ClickLog(sessions, description if description is not None else f"ir_datasets query log {name}",
                    str(name), {"format": "ir_datasets"})


def _item_rank(item, where: str) -> int:
    try:
        r = int(item.rank)
    except (TypeError, ValueError):
        raise InputError(f"{where}: item rank {short(item.rank)} is not an integer") from None
    if r < 1:
        raise InputError(f"{where}: item rank {r} is not a 1-based rank")
    return r
