"""Optional compiled probe of a [`DocidTable`][irmeasures_markov.documents.DocidTable] (with numba installed).

The numpy lookup makes about a dozen passes over arrays of one entry per
docid (cutting the joined bytes into words, hashing, gathering rows,
comparing, probing on).  Here one pass reads
the joined bytes eight at a time and cuts and hashes every docid, and a
second probes the table, with the same words, hash and table as the numpy
path, which stays the fallback and the
reference (tests/documents/test_tbg_speed_lookup.py checks both against a dict).
"""
import numpy as np
from numba import njit

_FOLD = np.uint64(32)
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_NEWLINES = np.uint64(0x0A0A0A0A0A0A0A0A)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _newline_at(w):  # pragma: no cover - compiled
    """Index (0-7) of the first newline byte of the little-endian word ``w``, 8 if none.

    The classic test for a zero byte applied to ``w ^ 0x0A..0A``: the lowest
    flagged byte is exact (a borrow only flags bytes above a real zero byte).
    """
    x = w ^ _NEWLINES
    t = (x - _ONES) & ~x & _HIGHS
    if t == _ZERO:
        return 8
    b = 0
    while (t >> np.uint64(8 * b + 7)) & np.uint64(1) == _ZERO:
        b += 1
    return b


@njit(cache=True, nogil=True)
def probe_joined(buf, size, n, table, table_values, n_words, multipliers, shift, values):  # pragma: no cover
    """Look up the ``n`` newline-separated docids in ``buf[:size]``; write their values (NaN: absent).

    ``buf`` is the docids' bytes followed by ``docid_table._PROBE_PADDING`` (16) zero bytes, seen as
    one little-endian 8-byte word at every byte offset (a strided view).
    ``table_values`` is the table's last column seen as float64 (NaN marks an
    empty slot).  Returns False, with ``values`` incomplete, when the bytes do
    not hold exactly ``n`` docids (one contains a newline): the caller then
    asks the dict.

    Two passes: the first cuts and hashes every docid, eight bytes at a time;
    the second probes.  Probing right after hashing left one table access (a
    cache miss) in flight at a time; a loop of probes alone lets the
    processor overlap them.
    """
    words = np.zeros((n, n_words), dtype=np.uint64)
    slots = np.empty(n, dtype=np.intp)
    start = 0
    i = 0
    while start <= size:
        if i >= n:
            return False
        # the docid ends at the first newline (or the end of the bytes)
        end = start
        while True:
            if end >= size:
                end = size
                break
            at = _newline_at(buf[end])
            if at < 8:
                end = min(end + at, size)
                break
            end += 8
        length = end - start
        if length > 8 * n_words:
            slots[i] = -1  # longer than every key: absent, never truncated into a false match
        else:
            # zero-padded little-endian 8-byte words, as encode_joined cuts them
            for k in range(n_words):
                rest = length - 8 * k
                if rest >= 8:
                    words[i, k] = buf[start + 8 * k]
                elif rest > 0:
                    words[i, k] = buf[start + 8 * k] & ~(_ALL << np.uint64(8 * rest))
            # multiply-xor over the words, high bits: the same home slot as docid_table._slot_hash
            h = words[i, 0] * multipliers[0]
            for k in range(1, n_words):
                h ^= words[i, k] * multipliers[k % 4]
            h ^= h >> _FOLD
            h *= multipliers[1]
            slots[i] = np.intp(h >> shift)
        i += 1
        start = end + 1
    if i != n:
        return False
    for i in range(n):
        slot = slots[i]
        found = np.nan
        if slot >= 0:
            # linear probing; an empty slot (NaN value) ends the search
            while True:
                value = table_values[slot]
                if value != value:
                    break
                same = True
                for k in range(n_words):
                    if table[slot, k] != words[i, k]:
                        same = False
                        break
                if same:
                    found = value
                    break
                slot += 1
        values[i] = found
    return True
