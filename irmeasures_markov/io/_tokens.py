"""Whole-file tokenising of TREC's line grammar: where every field of every line starts and ends, in numpy passes.

Shared by the whole-file readers of runs (:mod:`.fast_run`) and qrels
(:mod:`.fast_qrels`): a line holds 0 or a fixed number of fields separated by
ASCII whitespace and ends at LF.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SEPARATORS", "token_bounds", "joined_tokens"]

#: bytes that separate fields: ASCII whitespace, what ``bytes.split()`` and trec_eval's isspace() split on:
#: TAB, LF, VT, FF, CR (9 to 13) and space (32)
SEPARATORS = b"\t\n\x0b\x0c\r "
_LF, _SPACE = 10, 32


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
