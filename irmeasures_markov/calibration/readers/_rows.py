"""What every reader of interaction logs shares: the TSV columns, the ``unshown`` rule, a click's rank, and
click rows (TSV lines, DataFrame rows) turned into checked sessions."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.calibration._logs import Session, build_session
from irmeasures_markov.io._text import decompress, display_name, read_raw, short
from irmeasures_markov.io._trec import parse_float

__all__ = ["LOG_FORMATS", "TSV_COLUMNS", "TSV_REQUIRED", "check_unshown", "read_text", "first_ranks",
           "click_rank", "sessions_from_rows", "clicked_session"]


#: the formats :func:`read_log` and :func:`write_log` know
LOG_FORMATS = ("jsonl", "tsv")
#: the columns of the TSV format (and of :func:`from_dataframe`), in the order :func:`write_log` writes them
TSV_COLUMNS = ("session_id", "query_id", "shown", "rank", "doc", "time", "dwell", "ended")
#: the columns a TSV file (and a DataFrame) must have
TSV_REQUIRED = ("session_id", "query_id", "shown")
#: what ``unshown=`` may say about a click on a document that is not in the ranking shown
_UNSHOWN = ("error", "drop")


def check_unshown(unshown: str) -> str:
    """``unshown`` itself when it is one of ``'error'``, ``'drop'``; else ``ValueError`` naming the choices."""
    if unshown not in _UNSHOWN:
        raise ValueError(f"`unshown` must be one of {list(_UNSHOWN)}, got {unshown!r}")
    return unshown


def read_text(path: PathLike) -> tuple[str, str]:
    """(text, display name) of a log file: decompressed when compressed, ``-`` read from standard input."""
    name = display_name(path)
    return decompress(read_raw(path), name).decode("utf-8", "surrogateescape"), name


def first_ranks(shown: Sequence[str]) -> dict[str, int]:
    """Document id -> its first 1-based rank in ``shown`` (a click on a repeated id is on its first rank)."""
    first: dict[str, int] = {}
    for r, d in enumerate(shown, start=1):
        first.setdefault(d, r)
    return first


def click_rank(click: dict, shown: tuple[str, ...], first: dict[str, int], where: str, unshown: str) -> int | None:
    """The 1-based rank of a click ``{'rank': r}``, ``{'doc': d}`` or both (which must agree).

    Parameters
    ----------
    click : dict
    shown : tuple of str
        The session's ranking.
    first : dict
        :func:`first_ranks` of ``shown``.
    where : str
        ``FILE:LINE`` that starts every error message.
    unshown : {'error', 'drop'}

    Returns
    -------
    int or None
        None for a click on a document not shown, with ``unshown='drop'``.

    Raises
    ------
    InputError
        A click without rank or doc, a rank outside the ranking, a rank and a
        doc that disagree, or (``unshown='error'``) a document not shown.
    """
    rank = click.get("rank")
    doc = click.get("doc")
    if rank is None and doc is None:
        raise InputError(f"{where}: a click must give its 'doc' or its 'rank', got {short(json.dumps(click))}")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise InputError(f"{where}: a click's rank must be an integer (1-based), got {short(rank)}")
        if not 1 <= rank <= len(shown):
            raise InputError(f"{where}: click on rank {rank}, outside the ranking shown (ranks 1..{len(shown)})")
        if doc is not None and shown[rank - 1] != doc:
            raise InputError(f"{where}: the click names rank {rank} and document {doc!r}, but rank {rank} shows "
                             f"{shown[rank - 1]!r}")
        return rank
    if not isinstance(doc, str):
        raise InputError(f"{where}: a click's doc must be a string, got {short(doc)}")
    r = first.get(doc)
    if r is None and unshown == "error":
        raise InputError(f"{where}: click on document {doc!r}, which is not in the ranking shown")
    return r


def clicked_session(query_id, shown: tuple[str, ...], ranks: list[int], times: list, dwell: list[float], ended,
                    session_id: str, where: str, mixed: str) -> Session:
    """The checked session of a reader's parsed clicks: a time on every click or on none (else ``mixed`` is the
    error), a dwell time where known (NaN elsewhere; None when none is known)."""
    timed = [t is not None for t in times]
    if any(timed) and not all(timed):
        raise InputError(mixed)
    return build_session(query_id, shown, ranks, times if times and all(timed) else None,
                         dwell if any(not math.isnan(w) for w in dwell) else None, ended, session_id, where)


def _parse_ended(value: str, where: str) -> bool | None:
    if value in ("", "NA", "nan", "None"):
        return None
    if value in ("1", "true", "True"):
        return True
    if value in ("0", "false", "False"):
        return False
    raise InputError(f"{where}: 'ended' must be 1, 0 or empty, got {short(value)}")


def _parse_number(value: str, what: str, where: str) -> float | None:
    if value in ("", "NA", "nan", "NaN", "None"):
        return None
    return parse_float(value, what, where)


def sessions_from_rows(rows: Sequence[tuple[str, dict[str, str]]], unshown: str) -> list[Session]:
    """Sessions from click rows ``(where, {column: text})`` (the TSV lines, the DataFrame rows).

    The rows of a session are consecutive, in click order; a row without
    ``rank`` and ``doc`` is a session without clicks.  Errors are
    :class:`~irmeasures_markov._util._errors.InputError` naming the row's ``where``.
    """
    sessions: list[Session] = []
    done: dict[str, str] = {}
    rankings: dict[str, tuple] = {}
    i = 0
    while i < len(rows):
        where0, first_row = rows[i]
        sid = first_row["session_id"]
        if not sid:
            raise InputError(f"{where0}: empty session_id")
        if sid in done:
            raise InputError(f"{where0}: session {sid!r} continues here after other sessions (it began at "
                             f"{done[sid]}); the lines of a session must be together")
        j = i
        while j < len(rows) and rows[j][1]["session_id"] == sid:
            j += 1
        group = rows[i:j]
        done[sid] = where0
        known = rankings.get(first_row["shown"])
        if known is None:
            ids = tuple(first_row["shown"].split())
            known = rankings[first_row["shown"]] = (ids, first_ranks(ids))
        shown, first = known
        ranks, times, dwell, ended = [], [], [], None
        for where, row in group:
            for key in ("query_id", "shown"):
                if row[key] != first_row[key]:
                    raise InputError(f"{where}: session {sid!r} has {key} {short(row[key])} here but "
                                     f"{short(first_row[key])} on its first line ({where0})")
            e = _parse_ended(row.get("ended", ""), where)
            if e is not None:
                if ended is not None and e != ended:
                    raise InputError(f"{where}: session {sid!r} has conflicting 'ended' values")
                ended = e
            rank_text, doc = row.get("rank", ""), row.get("doc", "")
            if not rank_text and not doc:
                if len(group) > 1:
                    raise InputError(f"{where}: a line without a click (empty rank/doc) must be its session's only "
                                     "line")
                if row.get("time", "") or row.get("dwell", ""):
                    raise InputError(f"{where}: a time or dwell on a line without a click")
                continue
            click: dict = {}
            if rank_text:
                try:
                    click["rank"] = int(rank_text)
                except ValueError:
                    raise InputError(f"{where}: rank {short(rank_text)} is not an integer") from None
            if doc:
                click["doc"] = doc
            r = click_rank(click, shown, first, where, unshown)
            if r is None:
                continue
            ranks.append(r)
            times.append(_parse_number(row.get("time", ""), "time", where))
            w = _parse_number(row.get("dwell", ""), "dwell", where)
            dwell.append(math.nan if w is None else w)
        if None not in times:
            for k in range(1, len(times)):
                if times[k] < times[k - 1]:
                    raise InputError(f"{group[k][0]}: session {sid!r}: click times are not in order ({times[k]!r} s "
                                     f"after {times[k - 1]!r} s on the previous line); list clicks in the order "
                                     "they happened")
        sessions.append(clicked_session(first_row["query_id"], shown, ranks, times, dwell, ended, sid, where0,
                                        f"{where0}: session {sid!r}: some clicks have a time and some do not"))
        i = j
    return sessions
