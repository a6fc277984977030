"""This package's own log formats (docs/interaction-logs.md): JSONL, one session per line
([`read_log`][irmeasures_markov.calibration.read_log],
[`write_log`][irmeasures_markov.calibration.write_log]), and one row per click, as TSV lines (the same two functions) or
pandas DataFrame rows
([`from_dataframe`][irmeasures_markov.calibration.from_dataframe],
[`to_dataframe`][irmeasures_markov.calibration.to_dataframe]); and what every reader of logs shares: the ``unshown``
rule, a
click's rank, the text of a (compressed) file."""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import json
import lzma
import math
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.calibration._logs import ClickLog, Session, build_session
from irmeasures_markov.io._text import STDIN, decompress, display_name, read_raw, short
from irmeasures_markov.io._trec import parse_float

if TYPE_CHECKING:
    import pandas

__all__ = ["LOG_FORMATS", "TSV_COLUMNS", "check_unshown", "read_text", "first_ranks", "read_log", "write_log",
           "from_dataframe", "to_dataframe"]


# ---------------------------------------------------------------------------
# What every reader shares, and click rows (TSV lines, DataFrame rows) as sessions
# ---------------------------------------------------------------------------

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


def cached_ranking(cache: dict, key: str | tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, int]]:
    """The ranking ``key`` (a tuple of ids, or their text separated by whitespace) with its `first_ranks`, made
    once per distinct ranking: many sessions share one (one tuple, one rank index)."""
    hit = cache.get(key)
    if hit is None:
        ids = tuple(key.split()) if isinstance(key, str) else key
        hit = cache[key] = (ids, first_ranks(ids))
    return hit


def click_rank(click: dict, shown: tuple[str, ...], first: dict[str, int], where: str, unshown: str) -> int | None:
    """The 1-based rank of a click ``{'rank': r}``, ``{'doc': d}`` or both (which must agree).

    Parameters
    ----------
    click : dict
    shown : tuple of str
        The session's ranking.
    first : dict
        `first_ranks` of ``shown``.
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


#: the texts of the ``ended`` column and what they say (empty or a missing-value marker: unknown)
_ENDED = {**dict.fromkeys(("", "NA", "nan", "None")), **dict.fromkeys(("1", "true", "True"), True),
          **dict.fromkeys(("0", "false", "False"), False)}


def _parse_ended(value: str, where: str) -> bool | None:
    if value not in _ENDED:
        raise InputError(f"{where}: 'ended' must be 1, 0 or empty, got {short(value)}")
    return _ENDED[value]


def _parse_number(value: str, what: str, where: str) -> float | None:
    if value in ("", "NA", "nan", "NaN", "None"):
        return None
    return parse_float(value, what, where)


def sessions_from_rows(rows: Sequence[tuple[str, dict[str, str]]], unshown: str) -> list[Session]:
    """Sessions from click rows ``(where, {column: text})`` (the TSV lines, the DataFrame rows).

    The rows of a session are consecutive, in click order; a row without
    ``rank`` and ``doc`` is a session without clicks.  Errors are
    [`InputError`][irmeasures_markov.io.InputError] naming the row's ``where``.
    """
    sessions: list[Session] = []
    done: dict[str, str] = {}
    rankings: dict[str, tuple] = {}
    for sid, lines in itertools.groupby(rows, key=lambda row: row[1]["session_id"]):
        group = list(lines)
        where0, first_row = group[0]
        if not sid:
            raise InputError(f"{where0}: empty session_id")
        if sid in done:
            raise InputError(f"{where0}: session {sid!r} continues here after other sessions (it began at "
                             f"{done[sid]}); the lines of a session must be together")
        done[sid] = where0
        shown, first = cached_ranking(rankings, first_row["shown"])
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
            click = {"doc": doc} if doc else {}
            if rank_text:
                try:
                    click["rank"] = int(rank_text)
                except ValueError:
                    raise InputError(f"{where}: rank {short(rank_text)} is not an integer") from None
            r = click_rank(click, shown, first, where, unshown)
            if r is None:
                continue
            ranks.append(r)
            times.append(_parse_number(row.get("time", ""), "time", where))
            w = _parse_number(row.get("dwell", ""), "dwell", where)
            dwell.append(math.nan if w is None else w)
        k = next((k for k in range(1, len(times)) if times[k] < times[k - 1]), None) if None not in times else None
        if k is not None:
            raise InputError(f"{group[k][0]}: session {sid!r}: click times are not in order ({times[k]!r} s after "
                             f"{times[k - 1]!r} s on the previous line); list clicks in the order they happened")
        sessions.append(clicked_session(first_row["query_id"], shown, ranks, times, dwell, ended, sid, where0,
                                        f"{where0}: session {sid!r}: some clicks have a time and some do not"))
    return sessions


# ---------------------------------------------------------------------------
# JSONL and TSV
# ---------------------------------------------------------------------------

def read_log(path: PathLike, format: str = "jsonl", *, unshown: str = "error",
             description: str | None = None) -> ClickLog:
    """Read a log in this package's JSONL or TSV format (docs/interaction-logs.md).

    JSONL: one session per line, ``{"query_id": "q1", "shown": ["d1", "d2",
    ...], "clicks": [{"doc": "d2", "time": 3.5, "dwell": 20.0}, {"rank": 1}],
    "ended": true, "session_id": "s1"}``; a click names its ``doc`` or its
    1-based ``rank`` (or both, which must agree); ``time`` (seconds since the
    session started) on every click or on none; ``dwell`` (seconds) where
    known; ``ended`` and ``session_id`` optional.  An optional first line
    ``{"log": {"description": ..., "source": ..., "meta": {...}}}`` describes
    the log.

    TSV: a header line naming the columns (any order) ``session_id``,
    ``query_id``, ``shown`` (the ranking, document ids separated by spaces),
    and optionally ``rank`` or ``doc`` (the click), ``time``, ``dwell``,
    ``ended`` (``1``/``0``, empty: unknown); then one line per click, in click
    order, the lines of a session together; a session without clicks is one
    line with ``rank``/``doc`` empty.

    ``unshown``: ``'error'`` (default) or ``'drop'`` for a click on a
    document that is not in the ranking shown.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip, bzip2 or xz compressed, or ``-`` for standard input).
    format : {'jsonl', 'tsv'}
    unshown : {'error', 'drop'}
    description : str, optional
        Overrides the description of the header line (JSONL) or the default
        ``'click log NAME'``.

    Returns
    -------
    ClickLog

    Raises
    ------
    InputError
        A malformed line or session, naming the file and line.
    ValueError
        A ``format`` or ``unshown`` that is not one of the choices.
    """
    check_unshown(unshown)
    if format not in LOG_FORMATS:
        raise ValueError(f"`format` must be one of {list(LOG_FORMATS)}, got {format!r} (WSCD logs: read_wscd)")
    text, name = read_text(path)
    sessions, info = (_read_jsonl if format == "jsonl" else _read_tsv)(text, name, unshown)
    meta = {"format": format, **info.get("meta", {})}
    desc = description if description is not None else info.get("description", f"click log {name}")
    return ClickLog(sessions, desc, info.get("source", name), meta)


def _number(value, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: {what} must be a finite number of seconds, got {short(value)}")
    return float(value)


def _read_jsonl(text: str, name: str, unshown: str):
    sessions: list[Session] = []
    info: dict = {}
    seen: dict[str, int] = {}
    rankings: dict[tuple, tuple] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: not valid JSON ({e.msg}, column {e.colno}): {short(line)}") from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object (one session per line), got {short(line)}")
        if "log" in obj and not sessions and not info:
            info = _log_header(obj, where)
            continue
        unknown = sorted(set(obj) - {"query_id", "shown", "clicks", "ended", "session_id"})
        if unknown:
            raise InputError(f"{where}: unknown field(s) {unknown}; a session has query_id, shown, clicks, ended, "
                             "session_id")
        for key in ("query_id", "shown"):
            if key not in obj:
                raise InputError(f"{where}: the session has no {key!r}")
        shown = obj["shown"]
        if not isinstance(shown, list):
            raise InputError(f"{where}: 'shown' must be a list of document ids, got {short(shown)}")
        clicks = obj.get("clicks", [])
        if not isinstance(clicks, list) or not all(isinstance(c, dict) for c in clicks):
            raise InputError(f"{where}: 'clicks' must be a list of objects {{\"doc\" or \"rank\", \"time\"?, "
                             f"\"dwell\"?}}, got {short(json.dumps(clicks))}")
        if not all(isinstance(d, str) for d in shown):
            raise InputError(f"{where}: document ids in 'shown' must be strings")
        shown_t, first = cached_ranking(rankings, tuple(shown))
        ranks, times, dwell = [], [], []
        for c in clicks:
            unknown = sorted(set(c) - {"doc", "rank", "time", "dwell"})
            if unknown:
                raise InputError(f"{where}: unknown click field(s) {unknown}; a click has doc or rank, time, dwell")
            r = click_rank(c, shown_t, first, where, unshown)
            if r is None:
                continue
            ranks.append(r)
            times.append(_number(c["time"], "a click's time", where) if "time" in c else None)
            dwell.append(_number(c["dwell"], "a dwell time", where) if c.get("dwell") is not None else math.nan)
        sid = obj.get("session_id")
        sid = len(sessions) + 1 if sid is None else sid
        if not isinstance(sid, (str, int)) or isinstance(sid, bool):
            raise InputError(f"{where}: 'session_id' must be a string, got {short(sid)}")
        sid = str(sid)
        if sid in seen:
            raise InputError(f"{where}: session_id {sid!r} was already used on line {seen[sid]}")
        seen[sid] = lineno
        sessions.append(clicked_session(obj["query_id"], shown_t, ranks, times, dwell, obj.get("ended"), sid, where,
                                        f"{where}: some clicks have a time and some do not (give every click a time, "
                                        "or none)"))
    return sessions, info


def _log_header(obj: dict, where: str) -> dict:
    head = obj["log"]
    if not isinstance(head, dict) or set(obj) != {"log"}:
        raise InputError(f"{where}: the header line must be {{\"log\": {{\"description\": ..., \"source\": ..., "
                         "\"meta\": {...}}}")
    out = {key: str(head[key]) for key in ("description", "source") if head.get(key) is not None}
    if isinstance(head.get("meta"), dict):
        out["meta"] = dict(head["meta"])
    return out


def _read_tsv(text: str, name: str, unshown: str):
    lines = text.split("\n")
    header_at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if header_at is None:
        return [], {}
    columns = [c.strip() for c in lines[header_at].rstrip("\r").split("\t")]
    where = f"{name}:{header_at + 1}"
    unknown = [c for c in columns if c not in TSV_COLUMNS]
    missing = [c for c in TSV_REQUIRED if c not in columns]
    if unknown or missing or len(set(columns)) != len(columns):
        raise InputError(f"{where}: the header must name tab-separated columns {list(TSV_REQUIRED)} and "
                         f"optionally {list(c for c in TSV_COLUMNS if c not in TSV_REQUIRED)}, each once; got "
                         f"{columns}" + (f" (unknown: {unknown})" if unknown else ""))
    rows = []
    for i in range(header_at + 1, len(lines)):
        line = lines[i].rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(columns):
            raise InputError(f"{name}:{i + 1}: expected {len(columns)} tab-separated fields (the header's), "
                             f"found {len(fields)}: {short(line)}")
        rows.append((f"{name}:{i + 1}", dict(zip(columns, (f.strip() for f in fields)))))
    return sessions_from_rows(rows, unshown), {}


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def _open_write(path: PathLike):
    """A text stream for writing: compressed by the name's suffix (.gz, .bz2, .xz); ``-`` is standard output."""
    p = os.fspath(path)
    if p == STDIN:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only replacement of sys.stdout
            yield sys.stdout
            return
        sys.stdout.flush()
        out = io.TextIOWrapper(buffer, encoding="utf-8", errors="surrogateescape", newline="\n")
        try:
            yield out
        finally:
            out.flush()
            out.detach()  # standard output stays open
        return
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(os.path.splitext(p)[1].lower(), open)
    with opener(p, "wt", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
        yield out


def _format_of(path: PathLike, format: str | None) -> str:
    if format is not None:
        if format not in LOG_FORMATS:
            raise ValueError(f"`format` must be one of {list(LOG_FORMATS)}, got {format!r}")
        return format
    stem = os.fspath(path)
    for ext in (".gz", ".bz2", ".xz"):
        if stem.lower().endswith(ext):
            stem = stem[:-len(ext)]
    ext = os.path.splitext(stem)[1].lower().lstrip(".")
    if ext in LOG_FORMATS:
        return ext
    raise ValueError(f"cannot tell the format of {display_name(path)!r} from its name: give format='jsonl' or 'tsv'")


def write_log(log: ClickLog, path: PathLike, format: str | None = None) -> None:
    """Write ``log`` in this package's JSONL or TSV format (default: from the file name's extension).

    ``.gz``/``.bz2``/``.xz`` names are compressed; ``-`` writes to standard
    output.  [`read_log`][irmeasures_markov.calibration.read_log] reads the file back to an equal log (same
    sessions, description and meta for JSONL; TSV keeps no description).
    Document ids of the TSV format must not hold whitespace.

    Parameters
    ----------
    log : ClickLog
    path : str or os.PathLike
    format : {'jsonl', 'tsv'}, optional
        Default: the extension of ``path`` (before a compression suffix).

    Raises
    ------
    ValueError
        When the format cannot be told from the name, or a TSV document id
        holds whitespace.
    """
    fmt = _format_of(path, format)
    with _open_write(path) as out:
        if fmt == "jsonl":
            if log.description or log.meta or log.source:
                meta = {k: v for k, v in log.meta.items() if k != "format"}
                out.write(json.dumps({"log": {"description": log.description, "source": log.source,
                                              "meta": meta}}) + "\n")
            for s in log.sessions:
                out.write(json.dumps(_session_json(s), ensure_ascii=False) + "\n")
        else:
            out.write("\t".join(TSV_COLUMNS) + "\n")
            for s in log.sessions:
                for row in _session_rows(s):
                    out.write("\t".join(row) + "\n")


def _click_values(s: Session):
    """(rank, time, dwell) of each click, as every writer reads them: None for no time or no dwell (a dwell may be
    NaN, unknown, which the JSONL and TSV writers leave out)."""
    for k, r in enumerate(s.clicks.tolist()):
        yield (r, float(s.times[k]) if s.times is not None else None,
               float(s.dwell[k]) if s.dwell is not None else None)


def _known(value) -> bool:
    """Whether the JSONL and TSV writers write a click value (not None, not an unknown NaN dwell)."""
    return value is not None and not math.isnan(value)


def _session_json(s: Session) -> dict:
    clicks = [{key: v for key, v in zip(("rank", "time", "dwell"), c) if _known(v)} for c in _click_values(s)]
    return {"session_id": s.session_id, "query_id": s.query_id, "shown": list(s.shown), "clicks": clicks,
            **({"ended": s.ended} if s.ended is not None else {})}


def _session_rows(s: Session):
    for d in s.shown:
        if not d or len(d.split()) != 1:
            raise ValueError(f"session {s.session_id!r}: document id {d!r} holds whitespace; the TSV format "
                             "separates the ranking's ids by spaces (write JSONL instead)")
    shown = " ".join(s.shown)
    ended = "" if s.ended is None else ("1" if s.ended else "0")
    if not s.n_clicks:
        yield [s.session_id, s.query_id, shown, "", "", "", "", ended]
        return
    for r, t, w in _click_values(s):
        yield [s.session_id, s.query_id, shown, str(r), s.shown[r - 1], repr(t) if _known(t) else "",
               repr(w) if _known(w) else "", ended]


# ---------------------------------------------------------------------------
# DataFrames
# ---------------------------------------------------------------------------

def from_dataframe(df: pandas.DataFrame, *, unshown: str = "error", description: str = "",
                   source: str = "DataFrame") -> ClickLog:
    """A log from a pandas DataFrame with the TSV format's columns, one row per click.

    Required columns ``session_id``, ``query_id``, ``shown`` (a list/tuple of
    document ids, or one string of ids separated by spaces); optional
    ``rank`` (1-based) or ``doc``, ``time``, ``dwell``, ``ended``.  Missing
    values (None, NaN) mean "no click" (``rank``/``doc``), "unknown"
    (``dwell``, ``ended``).  Rows of a session must be together, in click
    order.  Errors name the row (its position and index label).

    Parameters
    ----------
    df : pandas.DataFrame
    unshown : {'error', 'drop'}
    description : str
    source : str

    Returns
    -------
    ClickLog

    Raises
    ------
    InputError
        Missing or unknown columns, or a bad value, naming the row.
    """
    check_unshown(unshown)
    missing = [c for c in TSV_REQUIRED if c not in df.columns]
    unknown = [c for c in df.columns if c not in TSV_COLUMNS]
    if missing or unknown:
        raise InputError(f"DataFrame: columns {list(TSV_REQUIRED)} are required and "
                         f"{[c for c in TSV_COLUMNS if c not in TSV_REQUIRED]} optional; "
                         + (f"missing {missing}" if missing else "") + (" " if missing and unknown else "")
                         + (f"unknown {unknown}" if unknown else ""))
    cols = [c for c in TSV_COLUMNS if c in df.columns]
    rows = []
    for pos, (label, *values) in enumerate(df[cols].itertuples(index=True, name=None)):
        where = f"DataFrame row {pos} (index {label!r})"
        rows.append((where, {c: _cell_text(c, v, where) for c, v in zip(cols, values)}))
    return ClickLog(sessions_from_rows(rows, unshown), description, source, {"format": "dataframe"})


def _missing(v) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN, pandas.NA compare unequal to themselves (NA raises)
    except TypeError:
        return True


def _cell_text(column: str, v, where: str) -> str:
    if column == "shown":
        if isinstance(v, str):
            return v
        if isinstance(v, (list, tuple, np.ndarray)):
            ids = [str(d) if isinstance(d, (str, np.str_)) else None for d in v]
            if None in ids:
                raise InputError(f"{where}: document ids in 'shown' must be strings")
            bad = [d for d in ids if not d or len(d.split()) != 1]
            if bad:
                raise InputError(f"{where}: document id {bad[0]!r} in 'shown' is empty or holds whitespace")
            return " ".join(ids)
        raise InputError(f"{where}: 'shown' must be a list of document ids or a space-separated string, "
                         f"got {short(v)}")
    if isinstance(v, (list, tuple, np.ndarray)):
        raise InputError(f"{where}: column {column!r} must hold one value per row (one click per row)")
    if _missing(v):
        return ""
    if column == "ended":
        return ("1" if v else "0") if isinstance(v, (bool, np.bool_)) else str(v)
    if column == "rank":  # a rank column with missing values is float in pandas
        return str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v)
    if column in ("time", "dwell"):
        return repr(float(v)) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)
    if not isinstance(v, str):
        raise InputError(f"{where}: {column} must be a string, got {short(v)} ({type(v).__name__}); convert it "
                         f"with str()")
    return v


def to_dataframe(log: ClickLog) -> pandas.DataFrame:
    """The log as a DataFrame, one row per click (a session without clicks: one row with rank None).

    Columns are the TSV format's; ``shown`` holds tuples.
    [`from_dataframe`][irmeasures_markov.calibration.from_dataframe]
    reads it back.

    Parameters
    ----------
    log : ClickLog

    Returns
    -------
    pandas.DataFrame
        Columns ``TSV_COLUMNS``; ``rank`` is a nullable integer column.
    """
    import pandas as pd
    records = []
    for s in log.sessions:
        base = {"session_id": s.session_id, "query_id": s.query_id, "shown": s.shown, "ended": s.ended}
        if not s.n_clicks:
            records.append({**base, "rank": None, "doc": None, "time": None, "dwell": None})
        for r, t, w in _click_values(s):
            records.append({**base, "rank": r, "doc": s.shown[r - 1], "time": t, "dwell": w})
    frame = pd.DataFrame.from_records(records, columns=list(TSV_COLUMNS))
    frame["rank"] = frame["rank"].astype("Int64")
    return frame
