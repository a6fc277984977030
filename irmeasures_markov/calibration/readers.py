"""Readers and writers of interaction logs: every one builds a :class:`~.logs.ClickLog`.

* :func:`read_wscd` — the Yandex Relevance Prediction Challenge (WSCD 2012)
  format of the sample in ``../shared/data/logs``;
* :func:`read_log` / :func:`write_log` — this package's own JSONL and TSV
  formats (docs/interaction-logs.md);
* :func:`from_dataframe` / :func:`to_dataframe` — pandas, one row per click,
  the TSV format's columns;
* :func:`from_ir_datasets` — ``qlogs_iter()`` records of ir_datasets
  (TripClick, AOL).

Every reader checks each session the same way (:func:`make_session`): a
non-empty ranking, clicks on ranks 1..n of it (or on documents in it), one
timestamp and at most one dwell time per click, timestamps non-decreasing.
A malformed session is an :class:`~irmeasures_markov.errors.InputError` naming
the file and line (the DataFrame row, the ir_datasets record).  Files may be
gzip, bzip2 or xz compressed (recognised by their first bytes) and ``-`` is
standard input, as for every reader of the package.
"""
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
from datetime import datetime
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import InputError
from ..readers.text import STDIN, decompress, display_name, read_raw, short
from ..readers.trec import parse_float
from .logs import ClickLog, Session

__all__ = ["read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets",
           "make_session", "LOG_FORMATS", "TSV_COLUMNS"]

PathLike = Union[str, os.PathLike]

#: the formats :func:`read_log` and :func:`write_log` know
LOG_FORMATS = ("jsonl", "tsv")
#: the columns of the TSV format (and of :func:`from_dataframe`), in the order :func:`write_log` writes them
TSV_COLUMNS = ("session_id", "query_id", "shown", "rank", "doc", "time", "dwell", "ended")
_TSV_REQUIRED = ("session_id", "query_id", "shown")
#: what ``unshown=`` may say about a click on a document that is not in the ranking shown
_UNSHOWN = ("error", "drop")


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # arrays may be shared between sessions (WSCD repeats whole sessions)
    return a


def make_session(query_id: str, shown: Sequence[str], clicks: Sequence[int], *, times=None, dwell=None,
                 ended: Optional[bool] = None, session_id: str = "", where: str = "") -> Session:
    """A checked :class:`~.logs.Session`; ``where`` (``FILE:LINE``) starts every error message.

    ``clicks`` are 1-based ranks into ``shown``.  ``times`` (seconds, one per
    click, non-decreasing, finite) and ``dwell`` (seconds >= 0 or NaN for
    unknown, one per click) are optional.  The arrays of the session are
    read-only.
    """
    at = f"{where}: " if where else ""
    shown = tuple(shown)
    for d in shown:
        if not isinstance(d, str):
            raise InputError(f"{at}document ids must be strings, got {short(d)} ({type(d).__name__})")
    return _session(query_id, shown, clicks, times, dwell, ended, session_id, where)


_NO_CLICKS = _frozen(np.zeros(0, dtype=np.int64))


def _session(query_id, shown: tuple, clicks, times, dwell, ended, session_id, where: str) -> Session:
    """:func:`make_session` for a ranking already known to be a tuple of str (the readers' own)."""
    at = f"{where}: " if where else ""
    if not isinstance(query_id, str) or not query_id:
        raise InputError(f"{at}the query id must be a non-empty string, got {short(query_id)}")
    if not shown:
        raise InputError(f"{at}session {session_id or '?'} of query {query_id!r}: the ranking shown is empty")
    n = len(shown)
    # sessions have a few clicks: Python's min/max on the list cost less than numpy's reductions
    ranks = clicks.tolist() if isinstance(clicks, np.ndarray) else list(clicks)
    if ranks and (min(ranks) < 1 or max(ranks) > n):
        bad = next(r for r in ranks if not 1 <= r <= n)
        raise InputError(f"{at}session {session_id or '?'}: click on rank {bad}, outside the ranking shown "
                         f"(ranks 1..{n})")
    c = _frozen(np.array(ranks, dtype=np.int64)) if ranks else _NO_CLICKS
    t = None
    if times is not None:
        t = np.asarray(times, dtype=np.float64).reshape(-1)
        if t.size != c.size:
            raise InputError(f"{at}session {session_id or '?'}: {t.size} timestamps for {c.size} clicks "
                             "(give every click a time, or none)")
        if not np.all(np.isfinite(t)):
            raise InputError(f"{at}session {session_id or '?'}: click times must be finite numbers")
        if t.size > 1 and np.any(np.diff(t) < 0):
            k = int(np.flatnonzero(np.diff(t) < 0)[0])
            raise InputError(f"{at}session {session_id or '?'}: click times are not in order: click {k + 2} at "
                             f"{float(t[k + 1])!r} s comes before click {k + 1} at {float(t[k])!r} s (clicks are "
                             "listed in the order they happened)")
        t = _frozen(t)
    w = None
    if dwell is not None:
        w = np.asarray(dwell, dtype=np.float64).reshape(-1)
        if w.size != c.size:
            raise InputError(f"{at}session {session_id or '?'}: {w.size} dwell times for {c.size} clicks")
        if np.any(w < 0) or np.any(np.isinf(w)):
            raise InputError(f"{at}session {session_id or '?'}: dwell times must be >= 0 seconds (NaN: unknown)")
        w = _frozen(w)
    if ended is not None and not isinstance(ended, (bool, np.bool_)):
        raise InputError(f"{at}session {session_id or '?'}: `ended` must be true, false or absent, "
                         f"got {short(ended)}")
    return Session(query_id, shown, c, t, w, None if ended is None else bool(ended), str(session_id))


def _check_unshown(unshown: str) -> str:
    if unshown not in _UNSHOWN:
        raise ValueError(f"`unshown` must be one of {list(_UNSHOWN)}, got {unshown!r}")
    return unshown


def _read_text(path: PathLike) -> Tuple[str, str]:
    name = display_name(path)
    return decompress(read_raw(path), name).decode("utf-8", "surrogateescape"), name


# ---------------------------------------------------------------------------
# WSCD 2012 (Yandex Relevance Prediction Challenge sample)
# ---------------------------------------------------------------------------

def read_wscd(path: PathLike, *, unshown: str = "drop", description: Optional[str] = None) -> ClickLog:
    """Read a log in the WSCD 2012 sample format (PyClick's ``trainSample``/``testSample``).

    One line per query; its sessions are separated by ``;``, each
    ``QUERYID<TAB>DOC1,DOC2,...,DOCn : CLICKED1 , CLICKED2 , ...`` — the
    ranking shown, then the clicked document ids in click order (empty after
    ``:`` when nothing was clicked).  Whitespace around ``,``, ``:`` and ``;``
    may vary.  There are no timestamps, dwell times or session ends; session
    ids are the sessions' order numbers in the file (``'1'``, ``'2'``, ...).

    A clicked id that is not in the ranking shown (the Yandex sample has 417
    such clicks in ``train.txt`` and 276 in ``test.txt``, on results of other
    result pages) is dropped with ``unshown='drop'`` (the default; the count
    is kept in ``log.meta['dropped_clicks']``) or an :class:`InputError`
    naming the file, line and session with ``unshown='error'``.  A clicked id
    shown twice counts as a click on its first rank.
    """
    _check_unshown(unshown)
    text, name = _read_text(path)
    sessions: List[Session] = []
    parsed: Dict[str, Tuple[str, tuple, np.ndarray, int]] = {}  # a session's text -> its parts (sessions repeat)
    rankings: Dict[str, tuple] = {}  # the documents' text -> (ids, first rank of each id)
    dropped = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        for k, segment in enumerate(line.split(";"), start=1):
            segment = segment.strip()
            if not segment:
                continue
            hit = parsed.get(segment)
            if hit is None:
                hit = parsed[segment] = _wscd_session(segment, rankings, unshown, f"{name}:{lineno}: session {k}")
            qid, shown, clicks, n_dropped = hit
            dropped += n_dropped
            sessions.append(Session(qid, shown, clicks, None, None, None, str(len(sessions) + 1), n_dropped))
    meta = {"format": "wscd", "dropped_clicks": dropped}
    return ClickLog(sessions, description if description is not None else f"WSCD 2012 click log {name}",
                    name, meta)


def _wscd_session(segment: str, rankings: Dict[str, tuple], unshown: str, where: str):
    """(query id, ranking, clicked ranks, clicks dropped) of one session's text."""
    left, colon, right = segment.partition(":")
    if not colon:
        raise InputError(f"{where}: expected 'QUERYID<TAB>DOC1,...,DOCn : CLICKS', found no ':' in "
                         f"{short(segment)}")
    head = left.split(None, 1)
    if len(head) != 2:
        raise InputError(f"{where}: expected a query id, then the comma-separated documents shown, before ':' "
                         f"in {short(segment)}")
    qid, docs = head
    known = rankings.get(docs)
    if known is None:
        shown = tuple(d.strip() for d in docs.split(","))
        if any(not d or len(d.split()) != 1 for d in shown):
            raise InputError(f"{where}: the documents shown must be comma-separated ids, got {short(docs)}")
        known = rankings[docs] = (shown, _first_ranks(shown))
    shown, first = known
    ranks = []
    dropped = 0
    if right.strip():
        for d in right.split(","):
            d = d.strip()
            r = first.get(d)
            if r is None:
                if not d or len(d.split()) != 1:
                    raise InputError(f"{where}: the clicked documents must be comma-separated ids, "
                                     f"got {short(right)}")
                if unshown == "error":
                    raise InputError(f"{where}: click on document {d!r}, which is not in the ranking shown "
                                     f"(query {qid!r}); unshown='drop' ignores such clicks")
                dropped += 1
                continue
            ranks.append(r)
    return qid, shown, _frozen(np.asarray(ranks, dtype=np.int64)), dropped


# ---------------------------------------------------------------------------
# Our formats: JSONL (one session per line) and TSV (one click per line)
# ---------------------------------------------------------------------------

def read_log(path: PathLike, format: str = "jsonl", *, unshown: str = "error",
             description: Optional[str] = None) -> ClickLog:
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
    """
    _check_unshown(unshown)
    if format not in LOG_FORMATS:
        raise ValueError(f"`format` must be one of {list(LOG_FORMATS)}, got {format!r} (WSCD logs: read_wscd)")
    text, name = _read_text(path)
    reader = _read_jsonl if format == "jsonl" else _read_tsv
    sessions, info = reader(text, name, unshown)
    meta = {"format": format, **info.get("meta", {})}
    desc = description if description is not None else info.get("description", f"click log {name}")
    return ClickLog(sessions, desc, info.get("source", name), meta)


def _click_rank(click: dict, shown: tuple, first: Dict[str, int], where: str, unshown: str) -> Optional[int]:
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


def _number(value, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: {what} must be a finite number of seconds, got {short(value)}")
    return float(value)


def _first_ranks(shown) -> Dict[str, int]:
    first: Dict[str, int] = {}
    for r, d in enumerate(shown, start=1):
        first.setdefault(d, r)
    return first


def _read_jsonl(text: str, name: str, unshown: str):
    sessions: List[Session] = []
    info: dict = {}
    seen: Dict[str, int] = {}
    rankings: Dict[tuple, tuple] = {}
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
            known = rankings[shown_t] = (shown_t, _first_ranks(shown_t))
        shown_t, first = known
        ranks, times, dwell = [], [], []
        for c in clicks:
            unknown = sorted(set(c) - {"doc", "rank", "time", "dwell"})
            if unknown:
                raise InputError(f"{where}: unknown click field(s) {unknown}; a click has doc or rank, time, dwell")
            r = _click_rank(c, shown_t, first, where, unshown)
            if r is None:
                continue
            ranks.append(r)
            times.append(_number(c["time"], "a click's time", where) if "time" in c else None)
            dwell.append(_number(c["dwell"], "a dwell time", where) if c.get("dwell") is not None else math.nan)
        timed = [t is not None for t in times]
        if any(timed) and not all(timed):
            raise InputError(f"{where}: some clicks have a time and some do not (give every click a time, or none)")
        sid = obj.get("session_id")
        if sid is None:
            sid = str(len(sessions) + 1)
        elif not isinstance(sid, (str, int)) or isinstance(sid, bool):
            raise InputError(f"{where}: 'session_id' must be a string, got {short(sid)}")
        sid = str(sid)
        if sid in seen:
            raise InputError(f"{where}: session_id {sid!r} was already used on line {seen[sid]}")
        seen[sid] = lineno
        sessions.append(_session(obj["query_id"], shown_t, ranks, times if times and all(timed) else None,
                                 dwell if any(not math.isnan(w) for w in dwell) else None, obj.get("ended"), sid,
                                 where))
    return sessions, info


def _log_header(obj: dict, where: str) -> dict:
    head = obj["log"]
    if not isinstance(head, dict) or set(obj) != {"log"}:
        raise InputError(f"{where}: the header line must be {{\"log\": {{\"description\": ..., \"source\": ..., "
                         "\"meta\": {...}}}")
    out = {}
    for key in ("description", "source"):
        if head.get(key) is not None:
            out[key] = str(head[key])
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
    missing = [c for c in _TSV_REQUIRED if c not in columns]
    if unknown or missing or len(set(columns)) != len(columns):
        raise InputError(f"{where}: the header must name tab-separated columns {list(_TSV_REQUIRED)} and "
                         f"optionally {list(c for c in TSV_COLUMNS if c not in _TSV_REQUIRED)}, each once; got "
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
    return _sessions_from_rows(rows, unshown), {}


def _parse_ended(value: str, where: str) -> Optional[bool]:
    if value in ("", "NA", "nan", "None"):
        return None
    if value in ("1", "true", "True"):
        return True
    if value in ("0", "false", "False"):
        return False
    raise InputError(f"{where}: 'ended' must be 1, 0 or empty, got {short(value)}")


def _parse_number(value: str, what: str, where: str) -> Optional[float]:
    if value in ("", "NA", "nan", "NaN", "None"):
        return None
    return parse_float(value, what, where)


def _sessions_from_rows(rows, unshown: str) -> List[Session]:
    """Sessions from click rows ``(where, {column: text})`` (the TSV lines, the DataFrame rows)."""
    sessions: List[Session] = []
    done: Dict[str, str] = {}
    rankings: Dict[str, tuple] = {}
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
            known = rankings[first_row["shown"]] = (ids, _first_ranks(ids))
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
            r = _click_rank(click, shown, first, where, unshown)
            if r is None:
                continue
            ranks.append(r)
            times.append(_parse_number(row.get("time", ""), "time", where))
            w = _parse_number(row.get("dwell", ""), "dwell", where)
            dwell.append(math.nan if w is None else w)
        timed = [t is not None for t in times]
        if any(timed) and not all(timed):
            raise InputError(f"{where0}: session {sid!r}: some clicks have a time and some do not")
        if times and all(timed) and len(times) > 1:
            for k in range(1, len(times)):
                if times[k] < times[k - 1]:
                    raise InputError(f"{group[k][0]}: session {sid!r}: click times are not in order ({times[k]!r} s "
                                     f"after {times[k - 1]!r} s on the previous line); list clicks in the order "
                                     "they happened")
        sessions.append(_session(first_row["query_id"], shown, ranks, times if times and all(timed) else None,
                                 dwell if any(not math.isnan(w) for w in dwell) else None, ended, sid, where0))
        i = j
    return sessions


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


def _format_of(path: PathLike, format: Optional[str]) -> str:
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


def _float_text(x: float) -> str:
    return repr(float(x))


def write_log(log: ClickLog, path: PathLike, format: Optional[str] = None) -> None:
    """Write ``log`` in this package's JSONL or TSV format (default: from the file name's extension).

    ``.gz``/``.bz2``/``.xz`` names are compressed; ``-`` writes to standard
    output.  :func:`read_log` reads the file back to an equal log (same
    sessions, description and meta for JSONL; TSV keeps no description).
    Document ids of the TSV format must not hold whitespace.
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
        t = _float_text(s.times[k]) if s.times is not None else ""
        w = _float_text(s.dwell[k]) if s.dwell is not None and not math.isnan(s.dwell[k]) else ""
        yield [s.session_id, s.query_id, shown, str(r), s.shown[r - 1], t, w, ended]


# ---------------------------------------------------------------------------
# pandas
# ---------------------------------------------------------------------------

def from_dataframe(df, *, unshown: str = "error", description: str = "", source: str = "DataFrame") -> ClickLog:
    """A log from a pandas DataFrame with the TSV format's columns, one row per click.

    Required columns ``session_id``, ``query_id``, ``shown`` (a list/tuple of
    document ids, or one string of ids separated by spaces); optional
    ``rank`` (1-based) or ``doc``, ``time``, ``dwell``, ``ended``.  Missing
    values (None, NaN) mean "no click" (``rank``/``doc``), "unknown"
    (``dwell``, ``ended``).  Rows of a session must be together, in click
    order.  Errors name the row (its position and index label).
    """
    _check_unshown(unshown)
    missing = [c for c in _TSV_REQUIRED if c not in df.columns]
    unknown = [c for c in df.columns if c not in TSV_COLUMNS]
    if missing or unknown:
        raise InputError(f"DataFrame: columns {list(_TSV_REQUIRED)} are required and "
                         f"{[c for c in TSV_COLUMNS if c not in _TSV_REQUIRED]} optional; "
                         + (f"missing {missing}" if missing else "") + (" " if missing and unknown else "")
                         + (f"unknown {unknown}" if unknown else ""))
    cols = [c for c in TSV_COLUMNS if c in df.columns]
    rows = []
    for pos, (label, *values) in enumerate(df[cols].itertuples(index=True, name=None)):
        where = f"DataFrame row {pos} (index {label!r})"
        row = {}
        for c, v in zip(cols, values):
            row[c] = _cell_text(c, v, where)
        rows.append((where, row))
    return ClickLog(_sessions_from_rows(rows, unshown), description, source, {"format": "dataframe"})


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
        if isinstance(v, (bool, np.bool_)):
            return "1" if v else "0"
        return str(v)
    if column == "rank":
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))  # a rank column with missing values is float in pandas
        return str(v)
    if column in ("time", "dwell"):
        return repr(float(v)) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)
    if not isinstance(v, str):
        raise InputError(f"{where}: {column} must be a string, got {short(v)} ({type(v).__name__}); convert it "
                         f"with str()")
    return v


def to_dataframe(log: ClickLog):
    """The log as a DataFrame, one row per click (a session without clicks: one row with rank None).

    Columns are the TSV format's; ``shown`` holds tuples.  :func:`from_dataframe`
    reads it back.
    """
    import pandas as pd
    records = []
    for s in log.sessions:
        base = {"session_id": s.session_id, "query_id": s.query_id, "shown": s.shown, "ended": s.ended}
        if not s.n_clicks:
            records.append({**base, "rank": None, "doc": None, "time": None, "dwell": None})
        for k, r in enumerate(s.clicks.tolist()):
            records.append({**base, "rank": r, "doc": s.shown[r - 1],
                            "time": float(s.times[k]) if s.times is not None else None,
                            "dwell": float(s.dwell[k]) if s.dwell is not None else None})
    frame = pd.DataFrame.from_records(records, columns=list(TSV_COLUMNS))
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


# ---------------------------------------------------------------------------
# ir_datasets query logs
# ---------------------------------------------------------------------------

def from_ir_datasets(source, *, depth: int = 10, description: Optional[str] = None) -> ClickLog:
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
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"`depth` must be a positive integer, got {depth!r}")
    records = source.qlogs_iter() if hasattr(source, "qlogs_iter") else source
    name = getattr(source, "dataset_id", None) or type(source).__name__
    sessions: List[Session] = []
    searches: Dict[str, int] = {}
    group: Optional[_Search] = None
    for i, rec in enumerate(records, start=1):
        where = f"{name}: qlogs record {i}"
        try:
            qid = str(rec.query_id)
            items = tuple(rec.items)
        except (AttributeError, TypeError) as e:
            raise InputError(f"{where}: not an ir_datasets qlog record (needs query_id and items): {e}") from None
        sid = getattr(rec, "session_id", None)
        if sid is None:
            sid = getattr(rec, "user_id", None)
        sid = str(i) if sid is None else str(sid)
        t = getattr(rec, "time", None)
        t = t.timestamp() if isinstance(t, datetime) else None
        ranked = all(hasattr(it, "rank") for it in items)  # AOL (also a record without items)
        shown = None if ranked else tuple(str(it.doc_id) for it in items)
        key = (sid, qid, shown)
        if group is None or group.key != key:
            if group is not None:
                sessions.append(group.session(searches))
            group = _Search(key, where, depth if ranked else 0, t)
        group.add(items, ranked, t, where)
    if group is not None:
        sessions.append(group.session(searches))
    return ClickLog(sessions, description if description is not None else f"ir_datasets query log {name}",
                    str(name), {"format": "ir_datasets"})


class _Search:
    """The records of one search (consecutive records of one session, query and ranking)."""

    def __init__(self, key, where: str, depth: int, t0: Optional[float]):
        self.key, self.where, self.t0 = key, where, t0
        sid, qid, shown = key
        self.docs = list(shown) if shown is not None else [""] * depth
        self.ranks: List[int] = []
        self.times: List[Optional[float]] = []

    def add(self, items, ranked: bool, t: Optional[float], where: str):
        for pos, it in enumerate(items, start=1):
            if not getattr(it, "clicked", True):
                continue
            doc = str(it.doc_id)
            r = _item_rank(it, where) if ranked else pos
            if ranked:
                if r > len(self.docs):
                    self.docs += [""] * (r - len(self.docs))
                if self.docs[r - 1] not in ("", doc):
                    raise InputError(f"{where}: rank {r} was clicked as document {self.docs[r - 1]!r} earlier in "
                                     f"this search and as {doc!r} here")
                self.docs[r - 1] = doc
            self.ranks.append(r)
            self.times.append(None if t is None or self.t0 is None else t - self.t0)

    def session(self, searches: Dict[str, int]) -> Session:
        sid, qid, _ = self.key
        n = searches.get(sid, 0) + 1
        searches[sid] = n
        timed = bool(self.times) and all(x is not None for x in self.times)
        return make_session(qid, self.docs, self.ranks, times=self.times if timed else None,
                            session_id=sid if n == 1 else f"{sid}#{n}", where=self.where)


def _item_rank(item, where: str) -> int:
    try:
        r = int(item.rank)
    except (TypeError, ValueError):
        raise InputError(f"{where}: item rank {short(item.rank)} is not an integer") from None
    if r < 1:
        raise InputError(f"{where}: item rank {r} is not a 1-based rank")
    return r
