"""Optional compiled run tokeniser (with numba installed): `tokens`' numba engine, one pass over the bytes.

The numpy engine of `tokens` stays the fallback and the reference
(tests/io/test_fast_run_engines.py checks that both give the same columns).
"""
import numpy as np
from numba import njit

_LF = 10


@njit(cache=True, inline="always")
def _is_space(c):  # pragma: no cover - compiled
    return c == 32 or (9 <= c <= 13)


@njit(cache=True, nogil=True)
def scan(buf):  # pragma: no cover - compiled
    """``(bounds, n)``: start/end of fields 1, 3, 5 of the first ``n`` records (columns); ``n < 0``: bad line ``-n``."""
    size = buf.size
    lines = 1
    for i in range(size):
        if buf[i] == _LF:
            lines += 1
    bounds = np.empty((6, lines), dtype=np.int64)
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
            if k < 6 and k % 2 == 0:
                bounds[k, rec] = s
                bounds[k + 1, rec] = i
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
        a, b, w = start[r], start[r - 1], end[r] - start[r]
        new = r == 0 or w != end[r - 1] - b
        j = 0
        while not new and j < w:
            new = buf[a + j] != buf[b + j]
            j += 1
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


#: 10**0 .. 10**22: the powers of ten a float64 holds exactly
_POW10 = np.array([float(10 ** k) for k in range(23)])
_MAX_EXACT = 2 ** 53


@njit(cache=True, nogil=True)
def parse_scores(buf, start, end):  # pragma: no cover - compiled
    """``(values, slow)``: the fields as float64 where exact, and the indices left to ``float()``.

    ``[+-]digits[.digits][(e|E)[+-]digits]`` with significant digits ``m`` <= 2**53 and decimal exponent ``k``
    in [-22, 22] is ``m * 10**k`` (or ``m / 10**-k``): one IEEE operation on two exact float64 values, so the
    correctly rounded value ``float()`` gives (Clinger's exact case).  Everything else is listed in ``slow``.
    """
    n = start.size
    values = np.empty(n, dtype=np.float64)
    slow = np.empty(n, dtype=np.int64)
    n_slow = 0
    for r in range(n):
        i = start[r]
        e = end[r]
        neg = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            neg = buf[i] == 45
            i += 1
        m = 0
        sig = 0
        digits = 0
        exp10 = 0
        ok = True
        point = False
        while i < e and (48 <= buf[i] <= 57 or (buf[i] == 46 and not point)):
            if buf[i] == 46:
                point = True
                i += 1
                continue
            d = buf[i] - 48
            if m != 0 or d != 0:
                if sig < 17:
                    m = m * 10 + d
                    sig += 1
                else:
                    ok = False
            if point:
                exp10 -= 1
            digits += 1
            i += 1
        if digits == 0:
            ok = False
        if ok and i < e and (buf[i] == 101 or buf[i] == 69):
            i += 1
            eneg = False
            if i < e and (buf[i] == 45 or buf[i] == 43):
                eneg = buf[i] == 45
                i += 1
            ev = 0
            ed = 0
            while i < e and 48 <= buf[i] <= 57:
                if ev < 100000:
                    ev = ev * 10 + (buf[i] - 48)
                ed += 1
                i += 1
            if ed == 0:
                ok = False
            exp10 += -ev if eneg else ev
        if i != e or m > _MAX_EXACT:
            ok = False
        if ok:
            if m == 0:
                v = 0.0
            elif exp10 >= 0 and exp10 <= 22:
                v = float(m) * _POW10[exp10]
            elif exp10 < 0 and exp10 >= -22:
                v = float(m) / _POW10[-exp10]
            else:
                ok = False
        if ok:
            values[r] = -v if neg else v
        else:
            values[r] = 0.0
            slow[n_slow] = r
            n_slow += 1
    return values, slow[:n_slow]
