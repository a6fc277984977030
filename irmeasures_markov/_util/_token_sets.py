"""Set operations on a run's docids kept as one newline-joined string, segment (query) by segment.

Two engines give the same answers:

* ``'dict'`` splits the string into Python strings and uses dicts and sets
  (C-level ``map`` calls, no Python code per token);
* ``'numba'`` hashes the tokens' bytes in place, one small table per segment
  (`_token_hash_numba`), so no token becomes a Python object.

``'auto'`` takes numba when it is loaded in the process already (a directory
of runs loads it to tokenise them), else the dicts: importing numba costs
more than one run's work.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from operator import methodcaller

import numpy as np

from irmeasures_markov._util._compiled import numba_loaded, optional_kernels
from irmeasures_markov._util._segments import consecutive, offsets_of

__all__ = ["ENGINES", "token_bounds", "first_repeat", "KeyTables", "lookup"]

#: engines of :func:`first_repeat` and :func:`lookup` (see the module docstring)
ENGINES = ("auto", "dict", "numba")
_LF = 10
_KERNELS: list = []


def _kernels(engine: str):
    """The compiled kernels' module for ``engine``, or None for the dict engine."""
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}.")
    if engine == "dict" or (engine == "auto" and not numba_loaded()):
        return None
    return optional_kernels(_KERNELS, "irmeasures_markov._util._token_hash_numba")


def _tokens(joined: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(buf, start, end)``: the bytes of ``joined`` (UTF-8, ``surrogateescape``, as the readers decode fields)
    and the bounds of its ``n`` tokens."""
    buf = np.frombuffer(joined.encode("utf-8", "surrogateescape"), dtype=np.uint8)
    return (buf, *token_bounds(buf, n))


def token_bounds(buf: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(start, end)`` of the ``n`` newline-separated tokens of ``buf`` (uint8).

    Parameters
    ----------
    buf : numpy.ndarray
        The tokens' bytes joined by LF.
    n : int
        How many tokens it holds (``buf`` empty and ``n == 1``: one empty token).

    Returns
    -------
    tuple of numpy.ndarray
        int64 offsets.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    newline = np.flatnonzero(buf == _LF)
    start = np.empty(n, dtype=np.int64)
    start[0] = 0
    start[1:] = newline + 1
    end = np.empty(n, dtype=np.int64)
    end[:-1] = newline
    end[-1] = buf.size
    return start, end


def first_repeat(joined: str, bounds: np.ndarray, keys: list[str] | None = None, engine: str = "auto") -> int:
    """Index of the first token that repeats an earlier token of its segment, or -1.

    Parameters
    ----------
    joined : str
        The tokens joined by newlines (no token holds one).
    bounds : numpy.ndarray
        Segment ``s`` is tokens ``bounds[s]:bounds[s+1]`` (``bounds[0] == 0``).
    keys : list of str, optional
        ``joined.split("\\n")``, when the caller has it.
    engine : str
        One of `ENGINES`.

    Returns
    -------
    int
    """
    kernels = _kernels(engine)
    n = int(bounds[-1])
    if n == 0:
        return -1
    if kernels is not None:
        buf, start, end = _tokens(joined, n)
        return int(kernels.first_repeat(buf, start, end, np.ascontiguousarray(bounds, dtype=np.int64)))
    if keys is None:
        keys = joined.split("\n")
    lengths = np.diff(bounds)
    distinct = np.fromiter(map(len, map(set, consecutive(keys, lengths.tolist()))), dtype=np.int64,
                           count=lengths.size)
    short = np.flatnonzero(distinct != lengths)
    if short.size == 0:
        return -1
    a, b = int(bounds[short[0]]), int(bounds[short[0] + 1])
    seen: set[str] = set()
    for r in range(a, b):
        if keys[r] in seen:
            return r
        seen.add(keys[r])
    raise AssertionError("unreachable: a segment with fewer distinct tokens has a repeat")


class KeyTables:
    """Tables ``{token: int value}`` looked up by `lookup`, kept as dicts and, on first compiled use, as bytes.

    Parameters
    ----------
    tables : sequence of mapping
        ``tables[t]`` maps each key (str without newlines) to an int value
        (values must fit in int64).

    Notes
    -----
    The tokens looked up are fields decoded from bytes (UTF-8 with
    ``surrogateescape``, as the readers decode them).  A key no such decoding
    gives (a lone surrogate outside U+DC80-U+DCFF, or escaped bytes that
    spell valid UTF-8) equals no token, and the packed form leaves it out:
    its bytes would otherwise be missing or equal another key's.
    """
    __slots__ = ("tables", "_packed")

    def __init__(self, tables: Sequence[Mapping[str, int]]) -> None:
        self.tables = list(tables)
        self._packed = None

    def packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(buf, start, end, bounds, values)``: every key's bytes joined by LF (table ``t``: keys
        ``bounds[t]:bounds[t+1]``), made on first use."""
        if self._packed is None:
            tables = self.tables
            joined = "\n".join(chain.from_iterable(tables))
            if not _decoded(joined):     # rare (keys from a hand-made dict): only the keys a field can be
                tables = [{k: v for k, v in t.items() if _decoded(k)} for t in tables]
                joined = "\n".join(chain.from_iterable(tables))
            counts = np.fromiter(map(len, tables), dtype=np.int64, count=len(tables))
            bounds = offsets_of(counts)
            n = int(bounds[-1])
            buf, start, end = _tokens(joined, n)
            values = np.fromiter(chain.from_iterable(map(methodcaller("values"), tables)), dtype=np.int64, count=n)
            self._packed = (buf, start, end, bounds, values)
        return self._packed


def _decoded(text: str) -> bool:
    """Whether ``text`` is what decoding some bytes gives (UTF-8, ``surrogateescape``): its bytes are then its own."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape") == text
    except UnicodeEncodeError:
        return False


def lookup(joined: str, bounds: np.ndarray, table_of: np.ndarray, tables: KeyTables, missing: int,
           keys: list[str] | None = None, engine: str = "auto") -> np.ndarray:
    """Each token's value in the table of its segment, ``missing`` where the table has no such key.

    Parameters
    ----------
    joined : str
        The tokens joined by newlines.
    bounds : numpy.ndarray
        Segment ``s`` is tokens ``bounds[s]:bounds[s+1]``.
    table_of : numpy.ndarray
        ``table_of[s]``: the index in ``tables`` of segment ``s``'s table, or
        -1 (no table: every token is ``missing``).
    tables : KeyTables
    missing : int
    keys : list of str, optional
        ``joined.split("\\n")``, when the caller has it.
    engine : str
        One of `ENGINES`.

    Returns
    -------
    numpy.ndarray
        int64, one value per token.
    """
    kernels = _kernels(engine)
    n = int(bounds[-1])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    table_of = np.ascontiguousarray(table_of, dtype=np.int64)
    if kernels is not None:
        buf, start, end = _tokens(joined, n)
        return kernels.lookup(buf, start, end, np.ascontiguousarray(bounds, dtype=np.int64), table_of,
                              *tables.packed(), np.int64(missing))
    if keys is None:
        keys = joined.split("\n")
    empty: dict[str, int] = {}
    getters = [(tables.tables[t] if t >= 0 else empty).get for t in table_of.tolist()]
    # one C-level dict probe per token: chained maps, no Python code per segment or token
    per_segment = map(map, getters, consecutive(keys, np.diff(bounds).tolist()), repeat(repeat(missing)))
    return np.fromiter(chain.from_iterable(per_segment), dtype=np.int64, count=n)
