"""The line grammar of runs and qrels ([`irmeasures_markov.io`][irmeasures_markov.io]), with errors naming file and
line; rate files.

The whole-file readers read a file with `run_from_lines` or
`qrels_from_lines` whenever the tokeniser (`tokens`) refuses it,
so their results and errors are the grammar's (tests/reference_readers.py
reads files through these alone).
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._text import decode, display_name, open_lines, read_whole, short
from irmeasures_markov.io._tokens import GRADE_MAX, GRADE_MIN, qrels_from_bytes

__all__ = ["read_trec_qrels", "qrels_of_file", "read_rates", "run_from_lines", "qrels_from_lines",
           "add_judgment", "field_count_error", "parse_float"]

Lines = Iterable[tuple[int, bytes]]
Run = dict[str, dict[str, float]]


def field_count_error(where: str, expected: str, parts: list[bytes], line: bytes) -> InputError:
    """The error (at ``where``, ``FILE:LINE``) for a line with the wrong number of fields, hinting at lone CRs."""
    found = f"{len(parts)} field" + ("" if len(parts) == 1 else "s")
    hint = ""
    if b"\r" in line and len(parts) > 6:
        hint = " (lines end at LF or CRLF; a lone CR, as in old Mac files, separates fields)"
    return InputError(f"{where}: expected {expected}, found {found}{hint}: {short(line)}")


def parse_float(text: bytes, what: str, where: str) -> float:
    """An ASCII number as ``float()`` reads it; InputError (naming ``what`` at ``where``) if not one or not finite."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {what} {short(text)} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: {what} {short(text)} is not finite")
    return value


def parse_grade(text: bytes, where: str) -> int:
    """A relevance grade: an ASCII integer in the signed 32-bit range; InputError naming ``where`` if not."""
    try:
        grade = int(text)
    except ValueError:
        raise InputError(f"{where}: relevance grade {short(text)} is not an integer") from None
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputError(f"{where}: relevance grade {short(text)} is outside the 32-bit integer range "
                         f"[{GRADE_MIN}, {GRADE_MAX}] that trec_eval and pytrec_eval read")
    return grade


def add_judgment(docs: dict[str, int], qid: object, docid: object, grade: int, where: str) -> None:
    """Record ``docs[docid] = grade`` in one query's judgments: the rule for repeated judgments of every qrels form.

    Judged again with the same grade: one judgment; with a different grade: an
    InputError naming ``where`` (file and line, or item/row), both ids and both grades.
    """
    old = docs.get(docid)
    if old is not None and old != grade:
        raise InputError(f"{where}: document {short(docid)} judged twice for query {short(qid)} "
                         f"with different grades ({old} and {grade})")
    docs[docid] = grade


def _records(lines: Lines, name: str, n_fields: int, layout: str, table: dict[str, dict]):
    """``(lineno, qid, fields)`` of each non-blank line; ``table`` gets an empty dict per new query (decoded once)."""
    qids: dict[bytes, str] = {}
    for lineno, line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != n_fields:
            raise field_count_error(f"{name}:{lineno}", f"{n_fields} fields '{layout}'", parts, line)
        qid = qids.get(parts[0])
        if qid is None:
            qid = qids[parts[0]] = decode(parts[0])
            table[qid] = {}
        yield lineno, qid, parts


def run_from_lines(lines: Lines, name: str) -> Run:
    """``{qid: {docid: score}}`` from ``(line number, bytes)`` pairs of a run file called ``name``; InputError."""
    run: dict[str, dict[str, float]] = {}
    first_line: dict[str, dict[str, int]] = {}
    for lineno, qid, parts in _records(lines, name, 6, "qid Q0 docid rank score tag", run):
        docid = decode(parts[2])
        value = parse_float(parts[4], "score", f"{name}:{lineno}")
        docs = run[qid]
        if docid in docs:
            raise InputError(f"{name}:{lineno}: document {short(docid)} appears twice for query {short(qid)} "
                             f"(first at line {first_line[qid][docid]})")
        docs[docid] = value
        first_line.setdefault(qid, {})[docid] = lineno
    return run


def qrels_from_lines(lines: Lines, name: str) -> dict[str, dict[str, int]]:
    """``{qid: {docid: grade}}`` from ``(line number, bytes)`` pairs of a qrels file called ``name``; InputError."""
    qrels: dict[str, dict[str, int]] = {}
    for lineno, qid, parts in _records(lines, name, 4, "qid iter docid grade", qrels):
        docid = decode(parts[2])
        grade = parse_grade(parts[3], f"{name}:{lineno}")
        add_judgment(qrels[qid], qid, docid, grade, f"{name}:{lineno}")
    return qrels


def read_trec_qrels(path: PathLike) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid iter docid grade``) into ``{qid: {docid: grade}}``.

    Grades are integers in the signed 32-bit range (as for trec_eval); a
    document judged twice for one query with the same grade is accepted, with
    different grades it is an error.  A query or document id that is not
    valid UTF-8 is an error: pytrec_eval, which computes ir_measures' own
    measures, kills the process on the lone surrogates that would carry it
    in a dict (the ``irmeasures-markov`` command reads such files
    byte-exactly, docs/conventions.md).  The whole file is tokenised at once
    (`tokens`); a file that breaks a rule is read again line by
    line, so the result and the errors are those of
    `qrels_from_lines`.

    Parameters
    ----------
    path : str or os.PathLike
        The qrels file (plain, gzip, bzip2 or xz), or ``-`` for standard input.

    Returns
    -------
    dict
        ``{qid: {docid: grade}}`` in file order.

    Raises
    ------
    InputError
        Naming the file and line: a line without 4 fields, a grade that is not
        an integer or is outside int32, a document judged twice with different
        grades, an id that is not valid UTF-8 (quoting its bytes), or
        truncated compressed data.
    OSError
        The file cannot be read.
    """
    return read_whole(path, qrels_from_bytes, qrels_from_lines, lambda qrels: [*qrels, *map("".join, qrels.values())])


def qrels_of_file(path: PathLike) -> dict[str, dict[str, int]]:
    """`read_trec_qrels` with ids byte-exact: the package's own evaluation hands them to pytrec_eval safely."""
    return read_whole(path, qrels_from_bytes, qrels_from_lines)


def read_rates(path: PathLike, content: bytes | None = None) -> np.ndarray | dict[str, np.ndarray]:
    """Read holding rates for MPcont (``content``: the file's bytes, when already read).

    Two layouts (tab- or whitespace-separated, ``#`` comments allowed):

    * ``rank mu`` — one rate per 1-based rank, for every query; returns an array;
    * ``qid rank mu`` — per-query rates; returns ``{qid: array}``.

    Ranks must be contiguous from 1 (a rank with no rate is an error) and rates
    positive and finite.  Checking costs time and memory in proportion to the
    file, whatever the ranks.

    Parameters
    ----------
    path : str or os.PathLike
        The rate file, or ``-`` for standard input.
    content : bytes, optional
        The file's stored bytes, when they have been read already.

    Returns
    -------
    numpy.ndarray or dict
        The rates of ranks 1..k (``rank mu`` layout), or ``{qid: rates}``
        (``qid rank mu`` layout).

    Raises
    ------
    InputError
        Naming the file and line: a wrong number of fields, a rank that is not
        a positive integer or is given twice, a rate that is not a positive
        finite number, a missing rank, or a file holding no rate.
    """
    name = display_name(path)
    ncols: int | None = None
    by_query: dict[str | None, dict[int, tuple[float, int]]] = {}
    with open_lines(path, content) as lines:
        for lineno, line in lines:
            parts = line.split(b"#", 1)[0].split()
            if not parts:
                continue
            where = f"{name}:{lineno}"
            if ncols is None:
                ncols = len(parts)
                if ncols not in (2, 3):
                    raise field_count_error(where, "'rank<TAB>mu' or 'qid<TAB>rank<TAB>mu'", parts, line)
            elif len(parts) != ncols:
                raise field_count_error(where, f"{ncols} fields like the first line", parts, line)
            try:
                rank = int(parts[-2])
            except ValueError:
                raise InputError(f"{where}: rank {short(parts[-2])} is not an integer") from None
            if rank < 1:
                raise InputError(f"{where}: ranks are 1-based, got {rank}")
            mu = parse_float(parts[-1], "rate", where)
            if mu <= 0:
                raise InputError(f"{where}: rate must be positive, got {short(parts[-1])}")
            qid = decode(parts[0]) if ncols == 3 else None
            seen = by_query.setdefault(qid, {})
            if rank in seen:
                raise InputError(f"{where}: rank {rank} given twice"
                                 + (f" for query {short(qid)}" if qid is not None else "")
                                 + f" (first at line {seen[rank][1]})")
            seen[rank] = (mu, lineno)
    if not by_query:
        raise InputError(f"{name}: no rates found")
    out = {}
    for qid, ranks in by_query.items():
        k = max(ranks)
        if len(ranks) != k:  # distinct ranks >= 1: contiguous exactly when there are max-rank of them
            # sorted distinct ranks: the i-th is at least i, and the first that is more follows a gap
            missing = next(i for i, r in enumerate(sorted(ranks), start=1) if r != i)
            raise InputError(f"{name}: no rate for rank {missing}"
                             + (f" of query {short(qid)}" if qid is not None else "")
                             + f" (ranks must be contiguous from 1 up to {k})")
        out[qid] = np.array([ranks[r][0] for r in range(1, k + 1)])
    return out[None] if ncols == 2 else out
