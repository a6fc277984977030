"""Exact, vectorised lookup of many document ids in a large ``{docid: number}`` table.

TBG and MPcont(time='tbg') need the length of every retrieved document.  Here
each key's bytes and its value share one row of a single open-addressing
table, so a lookup is one random memory access, done for a whole run at once
by numpy (docs/design.md, "The docid table").

Exactness: docids are compared byte for byte, never by hash alone.  The
table is only used when every key is ASCII without NUL or newline characters
(so a key is exactly its zero-padded bytes).  A batch holding a docid that is
not such a str, and a batch of fewer than ``SMALL_BATCH`` docids, is
answered by the dict instead; a docid longer than every key is reported as
absent, never truncated into a false match.  Equality is str equality of the
characters: a str subclass that redefines ``__eq__`` or ``__hash__`` is
compared by its characters here, where a dict would call its methods.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import repeat

import numpy as np

from irmeasures_markov._util._compiled import optional_kernels
from irmeasures_markov.ranking._join import SEPARATOR  # newline: the compiled probe (_docid_probe_numba) assumes it too

__all__ = ["DocidTable", "join_docids", "encode_joined", "SMALL_BATCH", "MAX_TABLE_BYTES", "ENGINES",
           "COMPILED_AFTER"]

_MULTIPLIERS = tuple(np.uint64(m) for m in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F,
                                            0x165667B19E3779F9, 0xD6E8FEB86659FD93))
_FOLD = np.uint64(32)
#: slots after the last home slot, so probe sequences never wrap around
_OVERFLOW = 64
_EMPTY = np.float64(np.nan).view(np.uint64)
#: _LOW_BYTES[r] keeps the r low-order bytes of a little-endian word
_LOW_BYTES = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: fewer docids than this are looked up in the dict: the table's fixed cost (a dozen numpy calls) is larger
SMALL_BATCH = 64
#: no table larger than this is built (the dict answers): e.g. 50M ClueWeb docids would need 5.4 GB
MAX_TABLE_BYTES = 2 << 30
#: lookup engines: 'numba' cuts, hashes and probes the joined docids in two compiled passes (numba installed),
#: 'numpy' in whole-array passes; 'auto' takes numba once it is loaded in the process, or once a table has looked
#: up COMPILED_AFTER docids (it is then loaded).  The answers are the same.
ENGINES = ("auto", "numba", "numpy")
#: importing numba and loading the compiled probe costs a fixed time once per process, and the compiled probe
#: saves a little per docid: switching once the lookups so far took about as long as the import (like
#: LengthTable.build_after) never costs more than twice the best choice made in hindsight
COMPILED_AFTER = 8_000_000
_MULTIPLIER_ARRAY = np.array(_MULTIPLIERS, dtype=np.uint64)
_PROBE_PADDING = 16  # zero bytes after the docids: every 8-byte read of the compiled probe stays inside
_PROBE: list = []  # the compiled probe's module, or None without numba; loaded on first use


def _compiled_probe():
    """The compiled probe, or None without numba (a function of its own: the tests replace it)."""
    kernels = optional_kernels(_PROBE, "irmeasures_markov.documents._docid_probe_numba")
    return None if kernels is None else kernels.probe_joined


def join_docids(docids: Sequence[str]) -> str | None:
    """The docids joined by newlines, if each is a str of ASCII characters other than NUL and newline.

    Parameters
    ----------
    docids : sequence of str

    Returns
    -------
    str or None
        None when a docid is not a str, or not ASCII, or holds a NUL (a
        newline inside a docid is found later, from the number of separators).
    """
    try:
        joined = SEPARATOR.join(docids)
    except TypeError:  # a non-str docid: leave it to the dict
        return None
    if not joined.isascii() or "\x00" in joined:
        return None
    return joined


def encode_joined(joined: str, n: int, n_words: int | None) -> tuple[list[np.ndarray], np.ndarray] | None:
    """The ``n`` newline-separated docids of ``joined`` as zero-padded little-endian 8-byte words.

    Returns ``(columns, lengths)``: ``columns[k][i]`` holds bytes 8k..8k+7 of
    docid i (only its first ``8 * n_words`` bytes, ``n_words`` by default
    enough for the longest; see ``lengths`` for the rest), or None when
    ``joined`` does not hold exactly ``n`` docids (a docid contains a
    newline).  One pass of C over the bytes and a few numpy
    operations per word: reading the docids out of their str objects one by
    one would cost more than the whole lookup.
    """
    raw = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    size = raw.size
    ends = np.flatnonzero(raw == ord(SEPARATOR))
    if ends.size != n - 1:
        return None
    starts = np.concatenate(([0], ends + 1)).astype(np.intp)
    lengths = np.append(ends, size) - starts
    if n_words is None:
        n_words = (int(lengths.max()) + 7) // 8 or 1
    _, at = _words_at_every_byte(raw, 8 * n_words + 8)
    columns = []
    for k in range(n_words):
        rest = np.clip(lengths - 8 * k, 0, 8)
        columns.append(at[starts + 8 * k] & _LOW_BYTES[rest])
    return columns, lengths


def _words_at_every_byte(raw: np.ndarray, padding: int) -> tuple[np.ndarray, np.ndarray]:
    """``(buf, at)``: the bytes ``raw`` followed by ``padding`` zero bytes, and the (unaligned) little-endian
    8-byte word starting at every byte offset of ``buf``, a strided view of it."""
    buf = np.zeros(raw.size + padding, dtype=np.uint8)
    buf[:raw.size] = raw
    return buf, np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))


def _slot_hash(columns: list[np.ndarray], shift: np.uint64) -> np.ndarray:
    """Home slot of each docid (multiply-xor over its words, high bits)."""
    with np.errstate(over="ignore"):
        h = columns[0] * _MULTIPLIERS[0]
        for j in range(1, len(columns)):
            h ^= columns[j] * _MULTIPLIERS[j % 4]
        h ^= h >> _FOLD
        h *= _MULTIPLIERS[1]
    return (h >> shift).astype(np.intp)


def lookup_in_dict(mapping: Mapping[str, float], docids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Look up ``docids`` by one dict probe each: the answer the table must match.

    Parameters
    ----------
    mapping : mapping of str to float
    docids : sequence of str

    Returns
    -------
    values : numpy.ndarray
        NaN where a docid is absent.
    found : numpy.ndarray of bool
    """
    values = np.fromiter(map(mapping.get, docids, repeat(np.nan)), dtype=np.float64, count=len(docids))
    return values, ~np.isnan(values)


def _same_key(rows: np.ndarray, columns: list[np.ndarray], at) -> np.ndarray:
    """Whether each table row holds the docid ``columns[:][at]``, word by word."""
    hit = rows[:, 0] == columns[0][at]
    for k in range(1, len(columns)):
        hit &= rows[:, k] == columns[k][at]
    return hit


class DocidTable:
    """``{docid: float}`` answering many lookups at once, exactly.

    Parameters
    ----------
    mapping : mapping of str to float
        Values must not be NaN (NaN marks an empty slot).

    Notes
    -----
    ``lookup(docids)`` returns ``(values, found)``: the values (NaN where a
    docid is absent) and a boolean mask.  ``vectorised`` says whether the
    numpy table is in use (False when some key is not plain ASCII, the
    mapping is empty, or the table would exceed ``MAX_TABLE_BYTES``); either
    way the answers are those of the dict.
    """

    def __init__(self, mapping: Mapping[str, float]) -> None:
        # the dict answers what the table cannot; callers hand over a mapping nobody changes afterwards
        self._dict = mapping
        keys: list[str] = list(mapping)
        values = np.fromiter(mapping.values(), dtype=np.float64, count=len(keys))
        if np.isnan(values).any():
            raise ValueError("DocidTable: values must not be NaN")
        self._table = None
        self._looked_up = 0
        joined = join_docids(keys) if keys else None
        if joined is None:
            return
        encoded = encode_joined(joined, len(keys), None)
        if encoded is None:
            return
        columns, _ = encoded
        self._n_words = len(columns)
        smallest = max(int(len(keys) - 1).bit_length() + 1, 4)  # load factor <= 1/2
        # a probe run longer than _OVERFLOW slots asks for a bigger table; more than 66 keys sharing one
        # 64-bit hash would ask forever, so growth stops at the memory cap or after a few doublings
        for bits in range(smallest, smallest + 4):
            if (1 << bits) * 8 * (self._n_words + 1) > MAX_TABLE_BYTES:
                break
            self._table = self._build(columns, values, bits)
            if self._table is not None:
                break

    @property
    def vectorised(self) -> bool:
        """Whether the numpy table is in use (else the dict answers every lookup)."""
        return self._table is not None

    def _build(self, columns: list[np.ndarray], values: np.ndarray, bits: int) -> np.ndarray | None:
        n_words = len(columns)
        n = values.size
        size = (1 << bits) + _OVERFLOW + 1  # the last row stays empty: every probe ends there at the latest
        table = np.zeros((size, n_words + 1), dtype=np.uint64)
        table[:, n_words] = _EMPTY
        shift = np.uint64(64 - bits)
        home = _slot_hash(columns, shift)
        # Linear probing, all keys at once: inserted in order of home slot, key i lands at
        # max(home_i, slot of key i-1 + 1), a running maximum.  Every slot between a key's home and
        # its own is then taken by keys of the same cluster, which is what lookups rely on.
        by_home = np.argsort(home, kind="stable")
        ranks = np.arange(n)
        slot = np.maximum.accumulate(home[by_home] - ranks) + ranks
        if n and slot[-1] >= size - 1:
            return None  # a probe run reached the end: rebuild with twice the slots
        for k, col in enumerate(columns):
            table[slot, k] = col[by_home]
        table[slot, n_words] = values[by_home].view(np.uint64)
        self._shift = shift
        return table

    def lookup(self, docids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Look up ``docids`` in order.

        Parameters
        ----------
        docids : sequence of str

        Returns
        -------
        values : numpy.ndarray
            NaN where a docid is absent.
        found : numpy.ndarray of bool
        """
        joined = join_docids(docids) if self._table is not None and len(docids) >= SMALL_BATCH else None
        return self.lookup_joined(joined, len(docids), docids)

    def lookup_joined(self, joined: str | None, n: int,
                      docids: Sequence[str] | Callable[[], Sequence[str]],
                      engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
        """Like [`lookup`][irmeasures_markov.documents.DocidTable.lookup], for ``n`` docids given joined by newlines
        (`join_docids`).

        Parameters
        ----------
        joined : str or None
            The docids joined by newlines.
        n : int
            How many docids.
        docids : sequence of str, or callable
            The same documents as a sequence, or a function returning them;
            read only when the table cannot answer: ``joined`` is None, or it
            does not split into ``n`` docids because one holds a newline.
        engine : {'auto', 'numba', 'numpy'}
            See `ENGINES` (the answers are the same).

        Returns
        -------
        values : numpy.ndarray
            NaN where a docid is absent.
        found : numpy.ndarray of bool

        Raises
        ------
        ValueError
            An unknown ``engine``.
        RuntimeError
            ``engine='numba'`` without numba installed.
        """
        if engine not in ENGINES:
            raise ValueError(f"DocidTable: engine must be one of {list(ENGINES)}, got {engine!r}")
        encoded = None
        if self._table is not None and joined is not None and n >= SMALL_BATCH:
            self._looked_up += n
            loaded = bool(_PROBE) and _PROBE[0] is not None  # already paid for in this process
            if engine == "numba" or (engine == "auto" and (loaded or self._looked_up > COMPILED_AFTER)):
                probe = _compiled_probe()
                if probe is None and engine == "numba":
                    raise RuntimeError("DocidTable: engine='numba' needs numba: pip install numba")
                if probe is not None:
                    buf, at = _words_at_every_byte(np.frombuffer(joined.encode("ascii"), dtype=np.uint8),
                                                   _PROBE_PADDING)
                    values = np.empty(n)
                    table = self._table
                    if probe(at, buf.size - _PROBE_PADDING, n, table, table[:, self._n_words].view(np.float64),
                             self._n_words, _MULTIPLIER_ARRAY, self._shift, values):
                        return values, ~np.isnan(values)
                    return lookup_in_dict(self._dict, docids() if callable(docids) else docids)
            encoded = encode_joined(joined, n, self._n_words)
        if encoded is None:
            return lookup_in_dict(self._dict, docids() if callable(docids) else docids)
        columns, lengths = encoded
        n_words = self._n_words
        table = self._table
        slot = _slot_hash(columns, self._shift)
        rows = table.take(slot, axis=0)
        values = rows[:, n_words].view(np.float64).copy()
        # occupied by another key: probe on; an empty slot ends the search
        pending = np.flatnonzero(~_same_key(rows, columns, slice(None)) & ~np.isnan(values))
        values[pending] = np.nan
        while pending.size:
            slot_p = slot[pending] + 1
            slot[pending] = slot_p
            rows = table.take(slot_p, axis=0)
            here = rows[:, n_words].view(np.float64)
            hit = _same_key(rows, columns, pending)
            values[pending[hit]] = here[hit]
            pending = pending[~hit & ~np.isnan(here)]
        # only the first 8 * n_words bytes were compared: longer docids are longer than every key
        values[lengths > 8 * n_words] = np.nan
        return values, ~np.isnan(values)
