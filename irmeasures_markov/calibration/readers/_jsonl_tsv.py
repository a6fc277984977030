"""This package's own log formats (docs/interaction-logs.md): JSONL, one session per line, and TSV, one click
per line; :func:`read_log` reads both, :func:`write_log` writes both."""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import math
import os
import sys

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.calibration._logs import ClickLog, Session
from irmeasures_markov.calibration.readers._rows import (
    LOG_FORMATS,
    TSV_COLUMNS,
    TSV_REQUIRED,
    check_unshown,
    click_rank,
    clicked_session,
    first_ranks,
    read_text,
    sessions_from_rows,
)
from irmeasures_markov.io._text import STDIN, display_name, short

__all__ = ["read_log", "write_log"]


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
    reader = _read_jsonl if format == "jsonl" else _read_tsv
    sessions, info = reader(text, name, unshown)
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
        shown_t = tuple(shown) if all(isinstance(d, str) for d in shown) else None
        if shown_t is None:
            raise InputError(f"{where}: document ids in 'shown' must be strings")
        known = rankings.get(shown_t)  # many sessions share a ranking: one tuple, one rank index
        if known is None:
            known = rankings[shown_t] = (shown_t, first_ranks(shown_t))
        shown_t, first = known
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
        if sid is None:
            sid = str(len(sessions) + 1)
        elif not isinstance(sid, (str, int)) or isinstance(sid, bool):
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
    col = {c: i for i, c in enumerate(columns)}
    rows = []
    for i in range(header_at + 1, len(lines)):
        line = lines[i].rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(columns):
            raise InputError(f"{name}:{i + 1}: expected {len(columns)} tab-separated fields (the header's), "
                             f"found {len(fields)}: {short(line)}")
        rows.append((f"{name}:{i + 1}", {c: fields[j].strip() for c, j in col.items()}))
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
    output.  :func:`read_log` reads the file back to an equal log (same
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


def _session_json(s: Session) -> dict:
    clicks = []
    for k, r in enumerate(s.clicks.tolist()):
        c: dict = {"rank": r}
        if s.times is not None:
            c["time"] = float(s.times[k])
        if s.dwell is not None and not math.isnan(s.dwell[k]):
            c["dwell"] = float(s.dwell[k])
        clicks.append(c)
    out = {"session_id": s.session_id, "query_id": s.query_id, "shown": list(s.shown), "clicks": clicks}
    if s.ended is not None:
        out["ended"] = s.ended
    return out


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
    for k, r in enumerate(s.clicks.tolist()):
        t = repr(float(s.times[k])) if s.times is not None else ""
        w = repr(float(s.dwell[k])) if s.dwell is not None and not math.isnan(s.dwell[k]) else ""
        yield [s.session_id, s.query_id, shown, str(r), s.shown[r - 1], t, w, ended]
