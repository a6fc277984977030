"""The whole-file tokeniser of runs and qrels: a file's bytes to columns at once, with numpy or numba.

It answers None whenever a file breaks a rule of the grammar ([`irmeasures_markov.io`][irmeasures_markov.io]); the
readers
then read the file line by line (`trec`), so results and error messages are the line reader's.
"""
from __future__ import annotations

import warnings

import numpy as np

from irmeasures_markov._util._compiled import numba_loaded, optional_kernels
from irmeasures_markov.io._text import decode

__all__ = ["SEPARATORS", "GRADE_MIN", "GRADE_MAX", "ENGINES", "COMPILED_AFTER", "Columns", "token_bounds",
           "joined_tokens", "run_columns", "qrels_from_bytes"]

#: bytes that separate fields: ASCII whitespace, what ``bytes.split()`` and trec_eval's isspace() split on:
#: TAB, LF, VT, FF, CR (9 to 13) and space (32)
SEPARATORS = b"\t\n\x0b\x0c\r "
#: relevance grades are signed 32-bit integers, as trec_eval and pytrec_eval read them
GRADE_MIN, GRADE_MAX = -(2 ** 31), 2 ** 31 - 1
#: run tokenising engines: 'numba' scans the bytes in one compiled pass (numba installed; numpy without it),
#: 'numpy' in whole-array passes; 'auto' takes numba once it is loaded in the process, or once COMPILED_AFTER
#: bytes have been tokenised (it is then loaded).  The columns are the same.
ENGINES = ("auto", "numba", "numpy")
#: importing numba and loading the compiled scan costs a fixed time once per process (about what the numpy
#: path spends on this many bytes): one run file never pays it, a directory of runs does once
COMPILED_AFTER = 64_000_000
#: ``(qids, bounds, docids_joined, scores)``: see :func:`run_columns`
Columns = tuple[list[str], list[int], str, np.ndarray]

_LF, _SPACE = 10, 32
_QID_WIDTH = 64   # qids up to this many bytes are compared as fixed-width byte strings, longer ones as bytes objects
_KERNELS: list = []  # the compiled kernels' module, or None without numba; loaded on first use
_TOKENISED = [0]  # bytes tokenised so far by the numpy engine in this process


def token_bounds(buf: np.ndarray, fields: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(start, end)`` of every token of ``buf`` (uint8), shaped ``(records, fields)``; None unless every
    line holds 0 or ``fields`` tokens."""
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
    """The tokens ``buf[start[i]:end[i]]`` (at least one, in any order) joined by newlines, in one numpy pass."""
    slot = end - start + 1                      # each token and the newline after it
    slot_end = np.cumsum(slot)
    src = np.repeat(start - (slot_end - slot), slot) + np.arange(int(slot_end[-1]))
    out = buf[np.minimum(src, buf.size - 1)]
    out[slot_end - 1] = _LF
    return out[:-1].tobytes()


def _engine_kernels(engine: str, size: int):
    """The compiled kernels' module when ``engine`` picks numba for ``size`` bytes, else None."""
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}.")
    if engine == "numpy":
        return None
    if engine == "auto" and not _KERNELS:
        _TOKENISED[0] += size
        if not numba_loaded() and _TOKENISED[0] < COMPILED_AFTER:
            return None
    return optional_kernels(_KERNELS, "irmeasures_markov.io._run_scan_numba")


def _segments(buf: np.ndarray, start: np.ndarray, end: np.ndarray, kernels=None) -> tuple[list[str], np.ndarray]:
    """``(qids, first)``: each run of consecutive records with one qid, found without a str per record."""
    if kernels is not None:
        first = kernels.segments(buf, start, end)
    else:
        width = int((end - start).max())
        if width <= _QID_WIDTH and buf.all():   # fixed-width byte strings, NUL-padded (no NUL in the file)
            at = start[:, None] + np.arange(width)
            ids = np.where(at < end[:, None], buf[np.minimum(at, buf.size - 1)], 0).astype(np.uint8)
            ids = np.ascontiguousarray(ids).view(f"S{width}").ravel()
        else:
            ids = np.array(joined_tokens(buf, start, end).split(b"\n"), dtype=object)
        first = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    return [decode(buf[a:b].tobytes()) for a, b in zip(start[first].tolist(), end[first].tolist())], first


def _parse_scores(text: str, n: int) -> np.ndarray | None:
    """The ``n`` newline-separated numbers of ``text`` as float64 exactly as ``float()`` reads them, or None.

    numpy reads them with ``PyOS_string_to_double``, the parser behind ``float(str)``, in one C pass; a token
    it does not take whole (``float`` also accepts underscores) sends the text through ``float`` itself.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # numpy only warns when it stops before the end
        try:
            scores = np.fromstring(text, dtype=np.float64, sep="\n")
        except (ValueError, DeprecationWarning):
            scores = None
    if scores is not None and scores.size == n:
        return scores
    try:
        return np.array(list(map(float, text.split("\n"))), dtype=np.float64)
    except ValueError:
        return None


def _scores(buf: np.ndarray, start: np.ndarray, end: np.ndarray, kernels) -> np.ndarray | None:
    """The score fields as finite float64, or None; the compiled parser takes the exact cases, numpy the rest."""
    if kernels is None:
        scores, slow = None, np.arange(start.size)
    else:
        scores, slow = kernels.parse_scores(buf, start, end)
    if slow.size:
        text = _joined(buf, start[slow], end[slow], kernels)
        if not text.isascii() or b"\0" in text:
            return None   # scores are ASCII numbers: the line reader names the bad one
        parsed = _parse_scores(text.decode("ascii"), slow.size)
        if parsed is None:
            return None
        if scores is None:
            scores = parsed
        else:
            scores[slow] = parsed
    return scores if np.isfinite(scores).all() else None


def _joined(buf: np.ndarray, start: np.ndarray, end: np.ndarray, kernels) -> bytes:
    return joined_tokens(buf, start, end) if kernels is None else kernels.joined(buf, start, end).tobytes()


def run_columns(data: bytes, engine: str = "auto") -> Columns | None:
    """``(qids, bounds, docids_joined, scores)`` of a run file's content (decompressed, BOM removed), or None.

    Query ``qids[k]`` (first-seen order) owns records ``bounds[k]:bounds[k+1]`` (file order); the answer does
    not depend on ``engine``.  Repeated documents are left to `run_from_columns`.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    kernels = _engine_kernels(engine, buf.size)
    if kernels is not None:
        bounds, n = kernels.scan(buf)
        if n < 0:
            return None
        q_start, q_end, d_start, d_end, s_start, s_end = bounds[:, :n]
    else:
        tokens = token_bounds(buf, 6)
        if tokens is None:
            return None
        (q_start, d_start, s_start), (q_end, d_end, s_end) = tokens[0][:, 0:5:2].T, tokens[1][:, 0:5:2].T
        n = q_start.size
    if n == 0:
        return [], [0], "", np.zeros(0)
    qids, first = _segments(buf, q_start, q_end, kernels)
    if len(set(qids)) != len(qids):
        # a query in several pieces: group records by query, first-seen order, file order within a query
        rank: dict[str, int] = {}
        seg_rank = np.array([rank.setdefault(q, len(rank)) for q in qids], dtype=np.int64)
        key = np.repeat(seg_rank, np.diff(np.append(first, n)))
        perm = np.argsort(key, kind="stable")
        d_start, d_end, s_start, s_end = d_start[perm], d_end[perm], s_start[perm], s_end[perm]
        counts = np.bincount(key)
        qids, first = list(rank), np.cumsum(counts) - counts
    scores = _scores(buf, s_start, s_end, kernels)
    if scores is None:
        return None
    return qids, first.tolist() + [n], decode(_joined(buf, d_start, d_end, kernels)), scores


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


def qrels_from_bytes(data: bytes) -> dict[str, dict[str, int]] | None:
    """The line reader's ``{qid: {docid: grade}}`` (same order) of a qrels file's content, or None."""
    buf = np.frombuffer(data, dtype=np.uint8)
    bounds = token_bounds(buf, 4)
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
    first = first.tolist()
    docids = decode(joined_tokens(buf, start[:, 2], end[:, 2])).split("\n")
    qrels: dict[str, dict[str, int]] = {}
    for q, a, b in zip(qids, first, first[1:] + [n]):   # each piece of consecutive lines of one query
        docs, piece = qrels.setdefault(q, {}), dict(zip(docids[a:b], grades[a:b]))
        # a document judged again must get the same grade (here the piece's last one), in the piece or before it
        if len(piece) != b - a and any(piece[d] != g for d, g in zip(docids[a:b], grades[a:b])):
            return None
        if docs and any(docs.get(d, g) != g for d, g in piece.items()):
            return None
        docs.update(piece)
    return qrels
