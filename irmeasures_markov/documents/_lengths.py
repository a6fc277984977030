"""Document lengths (in words) for time-based measures: TBG and MPcont with ``time='tbg'``.

Sources:

* a Python mapping ``{docid: words}``;
* a file of ``docid<TAB>length`` lines (plain or compressed; ``#`` comments
  and blank lines skipped): [`read_lengths`][irmeasures_markov.documents.read_lengths],
  errors name the file and line;
* an ``ir_datasets`` docs store:
  [`lengths_from_ir_datasets`][irmeasures_markov.documents.lengths_from_ir_datasets]
  counts whitespace-separated words of each document's text once, with a
  progress bar, and caches the result on disk as such a file.

Duplicate groups (Smucker & Clarke 2012, §3: a document that duplicates an
earlier-ranked one is read as length 0) come from a mapping ``{docid: group}``
or a ``docid<TAB>group`` file ([`read_duplicates`][irmeasures_markov.documents.read_duplicates]).

An unknown length is never silently guessed: [`DocumentLengths`][irmeasures_markov.documents.DocumentLengths] raises
[`UnknownLengthError`][irmeasures_markov.documents.UnknownLengthError] naming the missing documents, unless a
``default_length`` is given explicitly.
"""
from __future__ import annotations

import math
import os
from collections import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import chain, compress, count, repeat
from operator import is_not
from typing import Any

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.documents import _docid_table as docid_table
from irmeasures_markov.documents._docid_table import DocidTable, join_docids, lookup_in_dict
from irmeasures_markov.documents._length_files import lengths_from_ir_datasets, read_duplicates, read_lengths
from irmeasures_markov.io._content import ContentCache, digest_value
from irmeasures_markov.io._text import short
from irmeasures_markov.ranking._join import SEPARATOR

__all__ = [
    "UnknownLengthError",
    "HOW_TO_GIVE_LENGTHS",
    "DocumentLengths",
    "LengthTable",
    "length_source",
]



#: what an unknown length's error says to do, in one line
HOW_TO_GIVE_LENGTHS = ("give lengths='FILE' (lines 'docid<TAB>words'), lengths='irds:<ir_datasets id>' (counted "
                       "from the collection once, then cached) or lengths='NAME' (a mapping registered with "
                       "irmeasures_markov.register_lengths), or default_length=<words> to assume one length; "
                       "e.g. TBG(lengths='lengths.tsv')")


class UnknownLengthError(InputError, KeyError):
    """A document's length is needed but unknown and no ``default_length`` was given.

    An [`InputError`][irmeasures_markov.io.InputError] (so every handler of bad
    input catches it) and, as before, a ``KeyError``.
    """

    def __str__(self):  # KeyError would print the repr of the message
        return self.args[0] if self.args else ""


def _bad_lengths(items: dict[str, object]) -> list[str]:
    """Docids whose length is not a non-negative finite number (bool, str, NaN, ... included)."""
    if set(map(type, items.values())) <= {int, float}:
        # the usual case, checked in one vectorised pass
        try:
            values = np.fromiter(items.values(), dtype=np.float64, count=len(items))
        except OverflowError:  # an int beyond float64: found by the loop below
            pass
        else:
            ok = np.isfinite(values) & (values >= 0)
            return [] if ok.all() else [d for d, good in zip(items, ok.tolist(), strict=False) if not good]
    return [d for d, v in items.items() if not _is_length(v)]


def _is_length(v) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        return False
    try:
        return math.isfinite(v) and v >= 0
    except OverflowError:
        return False


class LengthTable(abc.Mapping):
    """A read-only snapshot of ``{docid: words}`` that looks up whole runs at once.

    Every length source (files, ``irds:`` ids, mappings registered with
    [`irmeasures_markov.register_lengths`][irmeasures_markov.register_lengths], mappings given to
    [`DocumentLengths`][irmeasures_markov.documents.DocumentLengths]) is held as a ``LengthTable``.  Once lookups add
    up to ``build_after`` times as many documents as it holds, it builds a
    [`DocidTable`][irmeasures_markov.documents.DocidTable] (exact,
    vectorised) that answers every later lookup of 64 or more documents;
    until then the dict answers.  It is a snapshot: changing the original
    mapping afterwards changes nothing here.

    Parameters
    ----------
    lengths : mapping of str to float
        Non-negative finite numbers of words.
    build_after : float
        When to build the table, in multiples of the number of lengths held;
        named sources (files, ``irds:`` ids, registered mappings) use 0.

    Raises
    ------
    ValueError
        A length that is not a non-negative finite number (up to five named),
        or a ``build_after`` that is not a number >= 0.
    """

    def __init__(self, lengths: Mapping[str, float], build_after: float = 1.0) -> None:
        if isinstance(build_after, bool) or not isinstance(build_after, (int, float)) or not build_after >= 0:
            raise ValueError(f"build_after must be a number >= 0, got {build_after!r}")
        items = dict(lengths)
        bad = _bad_lengths(items)
        if bad:
            raise ValueError(f"lengths must be non-negative numbers of words; bad: "
                             f"{[(d, items[d]) for d in bad[:5]]}")
        self._items = items
        self._digest: str | None = None
        self._table: DocidTable | None = None
        self._looked_up = 0
        self._build_at = build_after * len(items)

    def __getitem__(self, docid: str) -> float:
        return self._items[docid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def content_digest(self) -> str:
        """Digest of the lengths held (computed once: the table is a snapshot).

        Returns
        -------
        str
        """
        if self._digest is None:
            self._digest = digest_value(self._items)
        return self._digest

    def _table_for(self, n: int) -> DocidTable | None:
        """The vectorised table for a lookup of ``n`` docids, or None when the dict should answer.

        Building costs about as much per length as a dict lookup costs per
        docid, so waiting until the lookups add up to the table's size
        (``build_after=1``) never spends more than twice the best choice made
        in hindsight, even for a large mapping used once on a small run.
        Named sources, made to be reused, build at once (``build_after=0``).
        """
        if n < docid_table.SMALL_BATCH:
            return None
        if self._table is None:
            self._looked_up += n
            if self._looked_up < self._build_at:
                return None
            self._table = DocidTable(self._items)
        return self._table

    def lookup(self, docids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(values, found)``: lengths of ``docids`` (NaN where unknown) and where they are known.

        Parameters
        ----------
        docids : sequence of str
            The documents to look up.

        Returns
        -------
        values : numpy.ndarray
            Float lengths in the order of ``docids``, NaN where unknown.
        found : numpy.ndarray
            Boolean, True where a length is known.
        """
        table = self._table_for(len(docids))
        return lookup_in_dict(self._items, docids) if table is None else table.lookup(docids)

    def lookup_joined(self, joined: str | None, n: int, docids: Sequence[str] | Callable[[], Sequence[str]]
                      ) -> tuple[np.ndarray, np.ndarray]:
        """[`lookup`][irmeasures_markov.documents.LengthTable.lookup] for ``n`` docids joined by newlines (see
        [`DocidTable.lookup_joined`][irmeasures_markov.documents.DocidTable.lookup_joined]).

        Parameters
        ----------
        joined : str or None
            The ``n`` docids joined by newlines, or None (e.g. a docid that is not a str).
        n : int
            How many docids there are.
        docids : sequence of str or callable
            The docids, or a function giving them (called only when they are read one by one).

        Returns
        -------
        values : numpy.ndarray
            ``n`` float lengths, NaN where unknown.
        found : numpy.ndarray
            ``n`` booleans, True where a length is known.
        """
        if not self._items:  # e.g. TBG(default_length=500): every length is unknown, no docid need be read
            return np.full(n, math.nan), np.zeros(n, dtype=bool)
        table = self._table_for(n)
        if table is None:
            return lookup_in_dict(self._items, docids() if callable(docids) else docids)
        return table.lookup_joined(joined, n, docids)

    def __repr__(self) -> str:
        return f"LengthTable({len(self)} documents)"


#: files read, keyed by the digest of their bytes (see :mod:`irmeasures_markov.io._content`)
_FILES = {
    "lengths": ContentCache(lambda path, content: LengthTable(read_lengths(path, content), build_after=0), 8),
    "duplicates": ContentCache(read_duplicates, 8),
}


@lru_cache(maxsize=4)
def _irds_cached(dataset_id: str) -> LengthTable:
    return LengthTable(lengths_from_ir_datasets(dataset_id), build_after=0)


def length_source(spec: str, kind: str = "lengths") -> tuple[str, Mapping[str, Any]]:
    """The mapping a measure-string value names, with a fingerprint of its content.

    A file is read on every call and parsed only when its bytes are new, so a
    rewritten file is always seen (whatever its size and modification time);
    its fingerprint is the digest of its bytes.  An ``irds:`` table is
    counted once per process; its fingerprint is the digest of the lengths it
    holds.

    Parameters
    ----------
    spec : str
        A file path, or ``irds:<dataset id>`` for lengths.
    kind : {'lengths', 'duplicates'}
        What the file holds.

    Returns
    -------
    fingerprint : str
    mapping : LengthTable or dict
        A [`LengthTable`][irmeasures_markov.documents.LengthTable] of lengths, or ``{docid: group}``.

    Raises
    ------
    FileNotFoundError
        The file does not exist, or ir_datasets cannot read the documents.
    InputError
        A malformed file (naming file and line), or an unknown dataset id.
    """
    if kind == "lengths" and spec.startswith("irds:"):
        table = _irds_cached(spec[len("irds:"):])
        return table.content_digest(), table
    if not os.path.exists(spec):
        raise FileNotFoundError(f"{kind} file {spec!r} does not exist")
    return _FILES[kind].get(spec)


class DocumentLengths:
    """Lengths in words with an explicit unknown-length policy and duplicate groups.

    Parameters
    ----------
    lengths : mapping or path
        ``{docid: words}``, or a ``docid<TAB>length`` file, or ``'irds:<id>'``.
        A mapping is validated and copied into a [`LengthTable`][irmeasures_markov.documents.LengthTable]
        (lengths must be non-negative finite numbers).
    duplicates : mapping or path, optional
        ``{docid: group}``; within one ranking, a document whose group already
        appeared at an earlier rank gets length 0.
    default_length : float, optional
        Length used for documents missing from ``lengths``.  Without it a
        missing length raises [`UnknownLengthError`][irmeasures_markov.documents.UnknownLengthError].
    """

    def __init__(self, lengths: Mapping[str, float] | PathLike | None = None,
                 duplicates: Mapping[str, str] | PathLike | None = None,
                 default_length: float | None = None) -> None:
        if lengths is None:
            lengths = {}
        if isinstance(lengths, (str, os.PathLike)):
            lengths = length_source(os.fspath(lengths), "lengths")[1]
        if isinstance(duplicates, (str, os.PathLike)):
            duplicates = length_source(os.fspath(duplicates), "duplicates")[1]
        if default_length is not None and not _is_length(default_length):   # the rule of every length
            raise ValueError(f"default_length must be a non-negative number of words, got {default_length!r}")
        self.lengths = lengths if isinstance(lengths, LengthTable) else LengthTable(lengths)
        self.duplicates = duplicates or None
        self.default_length = default_length

    def lookup(self, docids: Sequence[str]) -> np.ndarray:
        """Lengths of ``docids`` in order (duplicates not applied).

        Parameters
        ----------
        docids : sequence of str

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        UnknownLengthError
            A document without a length, when there is no ``default_length``.
        """
        vals, found = self.lengths.lookup(docids)
        return self._unknown_policy(docids, vals, ~found)

    def lookup_segments(self, segments: Sequence[Sequence[str]],
                        joined_segments: Sequence[str] | None = None) -> np.ndarray:
        """Lengths of the documents of every segment (e.g. every query of a run), one after another.

        The same values as [`lookup`][irmeasures_markov.documents.DocumentLengths.lookup] on the concatenation, in one
        vectorised lookup.

        Parameters
        ----------
        segments : sequence of sequence of str
            The docids of each segment.
        joined_segments : sequence of str, optional
            Each segment's docids already joined by newlines (the docids are
            then not read again).

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        UnknownLengthError
            A document without a length, when there is no ``default_length``.
        """
        n = sum(map(len, segments))
        joined = None
        try:
            if joined_segments is None:
                joined_segments = [SEPARATOR.join(s) for s in segments]
        except TypeError:  # a non-str docid: the dict answers
            pass
        else:
            joined = join_docids([j for j, s in zip(joined_segments, segments, strict=False) if len(s)])
        docids = lambda: list(chain.from_iterable(segments))  # noqa: E731 - only on the slow paths
        vals, found = self.lengths.lookup_joined(joined, n, docids)
        return self._unknown_policy(docids, vals, ~found)

    def _unknown_policy(self, docids, vals: np.ndarray, missing: np.ndarray) -> np.ndarray:
        """Apply the unknown-length policy; ``docids`` may be a callable giving them (for the message)."""
        if missing.any():
            if self.default_length is None:
                if callable(docids):
                    docids = docids()
                # a document retrieved for several queries is missing once per query: name each once
                unknown = list(dict.fromkeys(docids[i] for i in np.flatnonzero(missing).tolist()))
                examples = "[" + ", ".join(short(d) for d in unknown[:5]) + (", ...]" if len(unknown) > 5 else "]")
                what = (f"no length for {len(unknown)} document(s), e.g. {examples}" if len(self.lengths) else
                        f"no document lengths were given ({len(unknown)} document(s) need one, e.g. {examples})")
                raise UnknownLengthError(f"{what}: {HOW_TO_GIVE_LENGTHS}")
            vals[missing] = self.default_length
        return vals

    def for_ranking(self, docids: Sequence[str]) -> np.ndarray:
        """Lengths of a ranking, with later members of a duplicate group read as 0.

        Those later members are not looked up: their length is 0 whether
        known or not, so an unknown one is no error.

        Parameters
        ----------
        docids : sequence of str
            The ranking, in rank order.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        UnknownLengthError
            A document without a length, when there is no ``default_length``.
        """
        return self.for_flat_rankings(docids, np.array([0, len(docids)]))

    def for_flat_rankings(self, docids: Sequence[str], offsets: np.ndarray) -> np.ndarray:
        """[`for_ranking`][irmeasures_markov.documents.DocumentLengths.for_ranking] of many rankings stored flat
        (ranking ``i`` is ``docids[offsets[i]:offsets[i+1]]``).

        The same values as [`for_ranking`][irmeasures_markov.documents.DocumentLengths.for_ranking] of each ranking,
        concatenated,
        with no Python step per ranking: a document is a later member of its
        group when its (ranking, group) pair occurred at an earlier position.

        Parameters
        ----------
        docids : sequence of str
            The docids of every ranking, one ranking after another.
        offsets : numpy.ndarray
            Where each ranking starts (``n_rankings + 1`` entries, the last ``len(docids)``).

        Returns
        -------
        numpy.ndarray
            The lengths, in the order of ``docids``.

        Raises
        ------
        UnknownLengthError
            A document without a length, when there is no ``default_length``.
        """
        n = len(docids)
        if not self.duplicates:
            return self.lookup(docids)
        groups = list(map(self.duplicates.get, docids))
        grouped = np.fromiter(map(is_not, groups, repeat(None)), dtype=bool, count=n)
        where = np.flatnonzero(grouped)
        numbers: dict[object, int] = {}
        gid = np.fromiter(map(numbers.setdefault, compress(groups, grouped), count()), dtype=np.int64,
                          count=where.size)
        ranking = np.searchsorted(np.asarray(offsets), where, side="right") - 1
        # np.unique's return_index gives the first position of every (ranking, group) pair
        _, first_seen = np.unique(ranking * (int(gid.max(initial=0)) + 1) + gid, return_index=True)
        later = np.zeros(n, dtype=bool)
        later[where] = True
        later[where[first_seen]] = False
        vals = np.zeros(n)
        first = np.flatnonzero(~later)
        vals[first] = self.lookup(list(map(docids.__getitem__, first.tolist())))
        return vals
