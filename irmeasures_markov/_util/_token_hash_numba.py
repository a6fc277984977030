"""Compiled hash probes of byte tokens, segment by segment (with numba installed): `token_sets`' fast engine.

Tokens are slices ``buf[start[r]:end[r]]`` of one byte buffer, grouped in
segments (a run's queries).  Each segment gets its own small open-addressing
table (FNV-1a hashes of 4-byte words, linear probing, the full hash
kept beside each slot) that stays in cache while the
segment's tokens are probed, so no token ever becomes a Python object.  The
dictionary engine of `token_sets` is the reference; tests compare the
two on the same inputs.
"""
import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, inline="always")
def _hash(buf, a, b):  # pragma: no cover - compiled
    """FNV-1a over 4-byte words (the bytes of a word are loaded independently: about one cycle a byte)."""
    h = _FNV_OFFSET ^ np.uint64(b - a)
    i = a
    while i + 4 <= b:
        w = (np.uint64(buf[i]) | (np.uint64(buf[i + 1]) << np.uint64(8)) | (np.uint64(buf[i + 2]) << np.uint64(16))
             | (np.uint64(buf[i + 3]) << np.uint64(24)))
        h = (h ^ w) * _FNV_PRIME
        i += 4
    while i < b:
        h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
        i += 1
    return h ^ (h >> np.uint64(32))


@njit(cache=True, inline="always")
def _same(buf1, a1, b1, buf2, a2, b2):  # pragma: no cover - compiled
    if b1 - a1 != b2 - a2:
        return False
    for k in range(b1 - a1):
        if buf1[a1 + k] != buf2[a2 + k]:
            return False
    return True


@njit(cache=True, inline="always")
def _table_size(n):  # pragma: no cover - compiled
    size = 16
    while size < 2 * n:
        size *= 2
    return size


@njit(cache=True, inline="always")
def _empty_table(bounds):  # pragma: no cover - compiled
    """``(slots, hashes)`` of a table large enough for the largest segment of ``bounds``, empty."""
    longest = 0
    for s in range(bounds.size - 1):
        longest = max(longest, bounds[s + 1] - bounds[s])
    size = _table_size(longest)
    return np.zeros(size, dtype=np.int64), np.empty(size, dtype=np.uint64)


@njit(cache=True, inline="always")
def _find(buf, a, b, full, table, hashes, mask, kbuf, kstart, kend):  # pragma: no cover - compiled
    """Where token ``buf[a:b]`` (hash ``full``) is among the keys of ``table``: ``(key index, slot)``,
    key index -1 when absent (``slot`` is then the empty slot to insert it at)."""
    h = np.int64(full & np.uint64(mask))
    while table[h] != 0:
        k = table[h] - 1
        if hashes[h] == full and _same(buf, a, b, kbuf, kstart[k], kend[k]):
            return k, h
        h = (h + 1) & mask
    return -1, h


@njit(cache=True, nogil=True)
def first_repeat(buf, start, end, bounds):  # pragma: no cover - compiled
    """Index of the first token equal to an earlier token of its segment, or -1.

    Segment ``s`` is tokens ``bounds[s]:bounds[s+1]``.
    """
    table, hashes = _empty_table(bounds)
    for s in range(bounds.size - 1):
        lo, hi = bounds[s], bounds[s + 1]
        mask = _table_size(hi - lo) - 1
        for r in range(lo, hi):
            full = _hash(buf, start[r], end[r])
            k, h = _find(buf, start[r], end[r], full, table, hashes, mask, buf, start, end)
            if k >= 0:
                return r
            table[h] = r + 1
            hashes[h] = full
        table[:mask + 1] = 0
    return -1


@njit(cache=True, nogil=True)
def lookup(buf, start, end, bounds, table_of, kbuf, kstart, kend, kbounds, kvalues, missing):  # pragma: no cover
    """The value of each token in its segment's table, ``missing`` where it has none.

    Segment ``s`` of the tokens is looked up among the keys of table
    ``t = table_of[s]`` (keys ``kbounds[t]:kbounds[t+1]`` of ``kbuf``, with
    ``kvalues``); ``t < 0``: no table, every token is ``missing``.  Keys of
    one table are distinct.
    """
    out = np.full(start.size, missing, dtype=np.int64)
    table, hashes = _empty_table(kbounds)
    for s in range(bounds.size - 1):
        t = table_of[s]
        if t < 0:
            continue
        klo, khi = kbounds[t], kbounds[t + 1]
        if khi == klo:
            continue
        mask = _table_size(khi - klo) - 1
        for k in range(klo, khi):
            full = _hash(kbuf, kstart[k], kend[k])
            _, h = _find(kbuf, kstart[k], kend[k], full, table, hashes, mask, kbuf, kstart, kend)
            table[h] = k + 1
            hashes[h] = full
        for r in range(bounds[s], bounds[s + 1]):
            k, _ = _find(buf, start[r], end[r], _hash(buf, start[r], end[r]), table, hashes, mask, kbuf, kstart,
                         kend)
            if k >= 0:
                out[r] = kvalues[k]
        table[:mask + 1] = 0
    return out
