"""Optional compiled tokeniser of TREC run files (with numba installed): :mod:`.fast_run`'s numba engine.

One pass over the bytes finds the fields of every line (ASCII whitespace
separates fields, LF ends a line), checks that each line holds 0 or 6 of
them and keeps where fields 1, 3 and 5 (qid, docid, score) start and end;
a second kernel gathers chosen fields into one newline-joined byte string.
The numpy tokeniser of :mod:`.fast_run` stays the fallback and the
reference (tests/io/test_fast_run_engines.py checks that both give the same
columns).
"""
import numpy as np
from numba import njit

_LF = 10


@njit(cache=True, inline="always")
def _is_space(c):  # pragma: no cover - compiled
    return c == 32 or (9 <= c <= 13)


@njit(cache=True, nogil=True)
def scan(buf):  # pragma: no cover - compiled
    """``(bounds, n)``: ``bounds[r]`` = start/end of fields 1, 3, 5 of record ``r``; ``n`` < 0: bad line ``-n``.

    ``bounds`` has one row per line at most; only the first ``n`` rows are
    records.  A line with a count of fields other than 0 and 6 stops the scan
    and returns minus its line number.
    """
    size = buf.size
    lines = 1
    for i in range(size):
        if buf[i] == _LF:
            lines += 1
    bounds = np.empty((lines, 6), dtype=np.int64)
    rec = 0
    i = 0
    line = 0
    while i < size:
        line += 1
        k = 0
        while True:
            while i < size and buf[i] != _LF and _is_space(buf[i]):
                i += 1
            if i >= size or buf[i] == _LF:
                break
            s = i
            while i < size and not _is_space(buf[i]):
                i += 1
            if k == 0:
                bounds[rec, 0] = s
                bounds[rec, 1] = i
            elif k == 2:
                bounds[rec, 2] = s
                bounds[rec, 3] = i
            elif k == 4:
                bounds[rec, 4] = s
                bounds[rec, 5] = i
            k += 1
        if k == 6:
            rec += 1
        elif k != 0:
            return bounds, -line
        i += 1  # the LF
    return bounds, rec


@njit(cache=True, nogil=True)
def segments(buf, start, end):  # pragma: no cover - compiled
    """Indices of the records whose field (``buf[start[r]:end[r]]``) differs from the previous record's."""
    n = start.size
    first = np.empty(n, dtype=np.int64)
    m = 0
    for r in range(n):
        new = r == 0
        if not new:
            a, b = start[r], start[r - 1]
            w = end[r] - a
            if w != end[r - 1] - b:
                new = True
            else:
                for j in range(w):
                    if buf[a + j] != buf[b + j]:
                        new = True
                        break
        if new:
            first[m] = r
            m += 1
    return first[:m]


@njit(cache=True, nogil=True)
def joined(buf, start, end):  # pragma: no cover - compiled
    """The fields ``buf[start[r]:end[r]]`` joined by LF (as a uint8 array)."""
    n = start.size
    total = 0
    for r in range(n):
        total += end[r] - start[r] + 1
    out = np.empty(max(total - 1, 0), dtype=np.uint8)
    o = 0
    for r in range(n):
        if r:
            out[o] = _LF
            o += 1
        for j in range(start[r], end[r]):
            out[o] = buf[j]
            o += 1
    return out
