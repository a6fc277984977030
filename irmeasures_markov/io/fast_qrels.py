"""The whole-file tokeniser of TREC qrels: a qrels file's bytes to ``{qid: {docid: grade}}`` at once, with numpy.

The grammar is the line reader's (:mod:`irmeasures_markov.io`): every line
holds 0 or 4 fields (``qid iter docid grade``) separated by ASCII whitespace,
lines end at LF, grades are integers as ``int()`` reads them within the signed
32-bit range, and a document judged again for a query must get the same
grade.  :func:`qrels_from_bytes` checks those rules on the whole file and
answers None whenever the file breaks one;
:func:`irmeasures_markov.io.trec.read_trec_qrels` then reads the file line by
line, so the dictionaries and the error messages are the line reader's.
"""
from __future__ import annotations

import numpy as np

from .text import decode

__all__ = ["SEPARATORS", "GRADE_MIN", "GRADE_MAX", "token_bounds", "joined_tokens", "qrels_from_bytes"]

Qrels = dict[str, dict[str, int]]

#: bytes that separate fields: ASCII whitespace, what ``bytes.split()`` and trec_eval's isspace() split on:
#: TAB, LF, VT, FF, CR (9 to 13) and space (32)
SEPARATORS = b"\t\n\x0b\x0c\r "
_LF, _SPACE = 10, 32
_FIELDS = 4
#: qids up to this many bytes are compared as fixed-width byte strings; longer ones as Python strings
_QID_WIDTH = 64
#: relevance grades are signed 32-bit integers, as trec_eval and pytrec_eval read them
GRADE_MIN, GRADE_MAX = -(2 ** 31), 2 ** 31 - 1


def token_bounds(buf: np.ndarray, fields: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(start, end)`` of every token of ``buf``, shaped ``(records, fields)``, or None.

    None unless every line (ending at LF) holds 0 or ``fields`` tokens
    separated by :data:`SEPARATORS` bytes.

    Parameters
    ----------
    buf : numpy.ndarray
        The file's bytes (uint8).
    fields : int
        Tokens per non-blank line.

    Returns
    -------
    tuple of numpy.ndarray or None
    """
    sep = np.empty(buf.size + 2, dtype=bool)    # one separator before and after the file
    sep[0] = sep[-1] = True
    inner = sep[1:-1]
    np.less_equal(buf - 9, 13 - 9, out=inner)   # 9 to 13 (bytes below 9 wrap around to 247 and above)
    inner |= buf == _SPACE
    # edge[i]: byte i starts a token or ends one (is the first byte after it); the file starts and ends outside
    # a token, so the edges alternate: start, end, start, end...
    bounds = np.flatnonzero(sep[:-1] != sep[1:])
    start, end = bounds[0::2], bounds[1::2]
    # the newlines between tokens must fall exactly on the gaps before tokens fields, 2 * fields, ...,
    # each such gap holding at least one
    gap = np.searchsorted(start, np.flatnonzero(buf == _LF))
    gap = gap[(gap > 0) & (gap < start.size)]
    # gap is sorted (newline positions are): its distinct values are its first and each change
    distinct = int(gap.size > 0) + int(np.count_nonzero(gap[1:] != gap[:-1]))
    if start.size % fields or np.any(gap % fields) or distinct != max(start.size // fields - 1, 0):
        return None
    n = start.size // fields
    return start.reshape(n, fields), end.reshape(n, fields)


def joined_tokens(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> bytes:
    """The tokens ``buf[start[i]:end[i]]`` (at least one, in file order) joined by newlines, in one numpy pass.

    Parameters
    ----------
    buf : numpy.ndarray
        The file's bytes (uint8).
    start, end : numpy.ndarray
        Each token's first byte and the byte after its last (a separator, or the end of the file).

    Returns
    -------
    bytes
    """
    padded = np.empty(buf.size + 1, dtype=np.uint8)   # room for the newline after a token that ends the file
    padded[:-1] = buf
    padded[end] = _LF                                  # the separator after each token becomes its newline
    delta = np.zeros(buf.size + 2, dtype=np.int8)
    delta[start] = 1
    delta[end + 1] -= 1                                # (-=: a token may start where the previous one's newline ends)
    keep = np.cumsum(delta[:-1], dtype=np.int8).view(bool)   # each token's bytes and its newline
    return padded[keep][:-1].tobytes()


def _grades(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[int] | None:
    """The grade tokens as ``int()`` reads them, or None when one is not an integer or is outside int32."""
    if bool(np.all(end - start == 1)):
        digits = buf[start]
        if bool(np.all((digits >= 48) & (digits <= 57))):   # one ASCII digit each: the common file
            return (digits.astype(np.int64) - 48).tolist()
    try:
        grades = list(map(int, joined_tokens(buf, start, end).split(b"\n")))
    except ValueError:
        return None
    if min(grades) < GRADE_MIN or max(grades) > GRADE_MAX:
        return None
    return grades


def _segments(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[list[str], list[int]]:
    """``(qids, first)``: the qid of each run of consecutive records with one qid, and where each run starts."""
    n = start.size
    width = int((end - start).max())
    if width <= _QID_WIDTH and buf.all():
        # qids as fixed-width byte strings (NUL-padded; no NUL in the file)
        at = start[:, None] + np.arange(width)
        qid_bytes = np.where(at < end[:, None], buf[np.minimum(at, buf.size - 1)], 0).astype(np.uint8)
        qids = np.ascontiguousarray(qid_bytes).view(f"S{width}").ravel()
        first = np.flatnonzero(np.concatenate(([True], qids[1:] != qids[:-1]))).tolist()
        return [decode(q) for q in qids[first].tolist()], first
    every = decode(joined_tokens(buf, start, end)).split("\n")
    first = [0] + [i for i in range(1, n) if every[i] != every[i - 1]]
    return [every[i] for i in first], first


def qrels_from_bytes(data: bytes) -> Qrels | None:
    """``{qid: {docid: grade}}`` from a whole qrels file (decompressed, BOM removed), or None.

    The line reader's dictionary, in the same order: queries in order of
    first appearance (a query's lines need not be consecutive), documents in
    order of first judgment.  None means "use the line reader", which also
    gives the exact error for a malformed file: a line without 4 fields, a
    grade that is not an integer or is outside int32, a document judged twice
    with different grades.

    Parameters
    ----------
    data : bytes
        The file's content, decompressed, BOM removed.

    Returns
    -------
    dict or None
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        return {}
    bounds = token_bounds(buf, _FIELDS)
    if bounds is None:
        return None
    start, end = bounds
    n = start.shape[0]
    if n == 0:
        return {}
    grades = _grades(buf, start[:, 3], end[:, 3])
    if grades is None:
        return None
    qids, first = _segments(buf, start[:, 0], end[:, 0])
    docids = decode(joined_tokens(buf, start[:, 2], end[:, 2])).split("\n")
    qrels: Qrels = {}
    for q, a, b in zip(qids, first, first[1:] + [n]):
        docs = qrels.get(q)
        if docs is None:
            docs = qrels[q] = dict(zip(docids[a:b], grades[a:b]))
            if len(docs) == b - a:
                continue
            # a document judged twice in this piece: the dict holds its last grade, each must equal it
            if any(docs[d] != g for d, g in zip(docids[a:b], grades[a:b])):
                return None
            continue
        for d, g in zip(docids[a:b], grades[a:b]):   # a later piece of a query seen before
            old = docs.get(d)
            if old is not None and old != g:
                return None
            docs[d] = g
    return qrels
