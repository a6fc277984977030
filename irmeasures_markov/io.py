"""Reading qrels, runs and parameter files, with errors that name the file and line.

Everything that parses text lives here; measures only ever see arrays.
"""
from __future__ import annotations

import gzip
import io
import math
import os
from typing import Dict, Iterable, Mapping, Union

import numpy as np

from .errors import InputError
# in-memory qrels and runs (ids must be str, grades int32) are normalised in .inputs; re-exported here
from .inputs import to_qrels_dict, to_run_dict  # noqa: E402,F401

__all__ = [
    "InputError",
    "open_text",
    "read_trec_run",
    "read_trec_qrels",
    "read_rates",
    "to_qrels_dict",
    "to_run_dict",
]

PathLike = Union[str, os.PathLike]


def open_text(path: PathLike):
    """Open a text file, transparently decompressing ``.gz`` (by magic number)."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def _float_field(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: {what} {text!r} is not finite")
    return value


def read_trec_run(path: PathLike) -> Dict[str, Dict[str, float]]:
    """Read a TREC run file (``qid Q0 docid rank score tag``) into ``{qid: {docid: score}}``.

    Scores are parsed as float64.  Raises :class:`InputError` naming the file
    and line for a line without 6 fields, a non-numeric or non-finite score,
    or a document listed twice for one query.
    """
    path = os.fspath(path)
    run: Dict[str, Dict[str, float]] = {}
    first_seen: Dict[tuple, int] = {}
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise InputError(f"{path}:{lineno}: expected 6 fields 'qid Q0 docid rank score tag', "
                                 f"found {len(parts)}: {line.strip()[:80]!r}")
            qid, _, docid, _, score, _ = parts
            value = _float_field(score, "score", f"{path}:{lineno}")
            docs = run.get(qid)
            if docs is None:
                docs = run[qid] = {}
            if docid in docs:
                first = first_seen.get((qid, docid))
                raise InputError(f"{path}:{lineno}: document {docid!r} appears twice for query {qid!r}"
                                 + (f" (first at line {first})" if first else ""))
            docs[docid] = value
            first_seen[(qid, docid)] = lineno
    return run


def read_trec_qrels(path: PathLike) -> Dict[str, Dict[str, int]]:
    """Read a TREC qrels file (``qid iter docid grade``) into ``{qid: {docid: grade}}``."""
    path = os.fspath(path)
    qrels: Dict[str, Dict[str, int]] = {}
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise InputError(f"{path}:{lineno}: expected 4 fields 'qid iter docid grade', "
                                 f"found {len(parts)}: {line.strip()[:80]!r}")
            qid, _, docid, grade = parts
            try:
                g = int(grade)
            except ValueError:
                raise InputError(f"{path}:{lineno}: relevance grade {grade!r} is not an integer") from None
            docs = qrels.setdefault(qid, {})
            if docid in docs and docs[docid] != g:
                raise InputError(f"{path}:{lineno}: document {docid!r} judged twice for query {qid!r} "
                                 f"with different grades ({docs[docid]} and {g})")
            docs[docid] = g
    return qrels


def read_rates(path: PathLike):
    """Read holding rates for MPcont.

    Two layouts (tab- or whitespace-separated, ``#`` comments allowed):

    * ``rank mu`` — one rate per 1-based rank, for every query; returns an array;
    * ``qid rank mu`` — per-query rates; returns ``{qid: array}``.

    Ranks must be contiguous from 1 (a rank with no rate is an error) and rates
    positive and finite.
    """
    path = os.fspath(path)
    rows = []
    ncols = None
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            if ncols is None:
                ncols = len(parts)
                if ncols not in (2, 3):
                    raise InputError(f"{path}:{lineno}: expected 'rank<TAB>mu' or 'qid<TAB>rank<TAB>mu', "
                                     f"found {len(parts)} fields")
            elif len(parts) != ncols:
                raise InputError(f"{path}:{lineno}: expected {ncols} fields like the first line, found {len(parts)}")
            where = f"{path}:{lineno}"
            try:
                rank = int(parts[-2])
            except ValueError:
                raise InputError(f"{where}: rank {parts[-2]!r} is not an integer") from None
            if rank < 1:
                raise InputError(f"{where}: ranks are 1-based, got {rank}")
            mu = _float_field(parts[-1], "rate", where)
            if mu <= 0:
                raise InputError(f"{where}: rate must be positive, got {parts[-1]}")
            rows.append((parts[0] if ncols == 3 else None, rank, mu, lineno))
    if not rows:
        raise InputError(f"{path}: no rates found")
    by_query: Dict[object, Dict[int, tuple]] = {}
    for qid, rank, mu, lineno in rows:
        seen = by_query.setdefault(qid, {})
        if rank in seen:
            raise InputError(f"{path}:{lineno}: rank {rank} given twice"
                             + (f" for query {qid!r}" if qid is not None else "")
                             + f" (first at line {seen[rank][1]})")
        seen[rank] = (mu, lineno)
    out = {}
    for qid, ranks in by_query.items():
        k = max(ranks)
        missing = sorted(set(range(1, k + 1)) - set(ranks))
        if missing:
            raise InputError(f"{path}: no rate for rank {missing[0]}"
                             + (f" of query {qid!r}" if qid is not None else "")
                             + f" (ranks must be contiguous from 1 up to {k})")
        out[qid] = np.array([ranks[r][0] for r in range(1, k + 1)])
    return out[None] if ncols == 2 else out


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))
