"""The whole-file tokeniser of TREC qrels: a qrels file's bytes to ``{qid: {docid: grade}}`` at once, with numpy.

The grammar is the line reader's (:mod:`irmeasures_markov.io`): every line
holds 0 or 4 fields (``qid iter docid grade``) separated by ASCII whitespace,
lines end at LF, grades are integers as ``int()`` reads them within the signed
32-bit range, and a document judged again for a query must get the same
grade.  :func:`qrels_from_bytes` checks those rules on the whole file and
answers None whenever the file breaks one;
:func:`irmeasures_markov.io._trec.read_trec_qrels` then reads the file line by
line, so the dictionaries and the error messages are the line reader's.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.io._text import decode
from irmeasures_markov.io._tokens import joined_tokens, token_bounds

__all__ = ["GRADE_MIN", "GRADE_MAX", "qrels_from_bytes"]

Qrels = dict[str, dict[str, int]]

_FIELDS = 4
#: qids up to this many bytes are compared as fixed-width byte strings; longer ones as Python strings
_QID_WIDTH = 64
#: relevance grades are signed 32-bit integers, as trec_eval and pytrec_eval read them
GRADE_MIN, GRADE_MAX = -(2 ** 31), 2 ** 31 - 1


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
