"""Document lengths (in words) for time-based measures: TBG and MPcont with ``time='tbg'``.

Sources:

* a Python mapping ``{docid: words}``;
* a file of ``docid<TAB>length`` lines (plain or gzip; ``#`` comments and
  blank lines skipped) — :func:`read_lengths`, errors name the file and line;
* an ``ir_datasets`` docs store — :func:`lengths_from_ir_datasets` counts
  whitespace-separated words of each document's text once, with a progress
  bar, and caches the result on disk as such a file.

Duplicate groups (Smucker & Clarke 2012, §3: a document that duplicates an
earlier-ranked one is read as length 0) come from a mapping ``{docid: group}``
or a ``docid<TAB>group`` file (:func:`read_duplicates`).

An unknown length is never silently guessed: :class:`DocumentLengths` raises
:class:`UnknownLengthError` naming the missing documents, unless a
``default_length`` is given explicitly.
"""
from __future__ import annotations

import math
import os
import pathlib
import warnings
from collections import abc
from functools import lru_cache
from itertools import chain, compress, count, repeat
from operator import is_not
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

import numpy as np

from . import docid_table
from .docid_table import SEPARATOR, DocidTable, join_docids, lookup_in_dict
from .errors import InputError
from .progress import progress_bar, show_progress
from .readers.atomic import replacing
from .readers.content import ContentCache, digest_value
from .readers.text import decode, display_name, open_lines, short
from .readers.trec import _fields

__all__ = [
    "UnknownLengthError",
    "HOW_TO_GIVE_LENGTHS",
    "DocumentLengths",
    "LengthTable",
    "read_lengths",
    "read_duplicates",
    "write_lengths",
    "lengths_from_ir_datasets",
    "load_length_source",
    "length_source",
]

PathLike = Union[str, os.PathLike]


#: what an unknown length's error says to do, in one line
HOW_TO_GIVE_LENGTHS = ("give lengths='FILE' (lines 'docid<TAB>words'), lengths='irds:<ir_datasets id>' (counted "
                       "from the collection once, then cached) or lengths='NAME' (a mapping registered with "
                       "irmeasures_markov.register_lengths), or default_length=<words> to assume one length; "
                       "e.g. TBG(lengths='lengths.tsv')")


class UnknownLengthError(InputError, KeyError):
    """A document's length is needed but unknown and no ``default_length`` was given.

    An :class:`~irmeasures_markov.errors.InputError` (so every handler of bad
    input catches it) and, as before, a ``KeyError``.
    """

    def __str__(self):  # KeyError would print the repr of the message
        return self.args[0] if self.args else ""


def _length_lines(path: PathLike, what: str, content: Optional[bytes] = None):
    """``(line number, docid, value field)`` of a ``docid<TAB>value`` file; ``#`` comments and blank lines skipped."""
    name = display_name(path)
    with open_lines(path, content) as lines:
        for lineno, line in lines:
            parts = line.split()
            if not parts or parts[0].startswith(b"#"):
                continue
            if len(parts) != 2:
                raise InputError(f"{name}:{lineno}: expected 'docid<TAB>{what}', found {_fields(len(parts))}: "
                                 f"{short(line)}")
            yield lineno, decode(parts[0]), parts[1]


def read_lengths(path: PathLike, content: Optional[bytes] = None) -> Dict[str, float]:
    """``{docid: length}`` from a ``docid<TAB>length`` file (plain, gzip, bzip2 or xz).

    ``content``: the file's bytes, when they were read already.

    Lengths are word counts: non-negative finite numbers.  A non-numeric,
    negative or non-finite length, a line without two fields, or a docid given
    twice with different lengths raises :class:`~irmeasures_markov.io.InputError`
    naming the file and line.  Docids are read byte-exactly, like run docids.
    """
    name = display_name(path)
    out: Dict[str, float] = {}
    for lineno, doc, raw in _length_lines(path, "length", content):
        try:
            value = float(raw)
        except ValueError:
            raise InputError(f"{name}:{lineno}: length {short(raw)} of document {short(doc)} is not a number") \
                from None
        if not math.isfinite(value) or value < 0:
            raise InputError(f"{name}:{lineno}: length of document {short(doc)} must be a non-negative number "
                             f"of words, got {short(raw)}")
        old = out.get(doc)
        if old is not None and old != value:
            raise InputError(f"{name}:{lineno}: document {short(doc)} has two lengths ({old:g} and {value:g})")
        out[doc] = value
    return out


def read_duplicates(path: PathLike, content: Optional[bytes] = None) -> Dict[str, str]:
    """``{docid: group}`` from a ``docid<TAB>group`` file: documents of a group duplicate each other."""
    name = display_name(path)
    out: Dict[str, str] = {}
    for lineno, doc, raw in _length_lines(path, "group", content):
        group = decode(raw)
        if out.get(doc, group) != group:
            raise InputError(f"{name}:{lineno}: document {short(doc)} is in two duplicate groups "
                             f"({short(out[doc])} and {short(group)})")
        out[doc] = group
    return out


def write_lengths(lengths: Mapping[str, float], path: PathLike):
    """Write a ``docid<TAB>length`` file (gzip when the name ends in .gz), atomically.

    The file is written under a temporary name of its own and renamed, so
    processes writing the same file at once never mix their output.
    """
    import gzip
    path = pathlib.Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with replacing(path) as tmp:
        # surrogateescape: a docid read from non-UTF-8 bytes is written back as those bytes
        with opener(tmp, "wt", encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
            for d, n in lengths.items():
                fh.write(f"{d}\t{n:g}\n")


def _cache_dir() -> pathlib.Path:
    base = os.environ.get("IRMEASURES_MARKOV_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "irmeasures_markov")  # empty: unset
    return pathlib.Path(base) / "lengths"


def _cache_file_name(dataset_id: str, text_fields: Optional[Sequence[str]]) -> str:
    """The cache file's name: one file name (no directory part), different for different ids or fields.

    ``/`` in the dataset id becomes ``__`` (the names existing caches have);
    any other character that is not a letter, digit, ``_.-~+`` is
    percent-encoded, so ``text_fields=['title/../../x']`` stays inside the
    cache directory.
    """
    fields = "" if not text_fields else ".fields-" + "+".join(map(str, text_fields))
    return quote(dataset_id.replace("/", "__") + fields, safe="+") + ".tsv.gz"


def _count_words(dataset_id: str, progress: Optional[bool], text_fields: Optional[Sequence[str]]) -> Dict[str, float]:
    try:
        import ir_datasets
    except ImportError as e:  # pragma: no cover - ir_datasets is a dependency
        raise InputError(f"lengths='irds:{dataset_id}' needs ir_datasets: pip install ir_datasets") from e
    try:
        ds = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"lengths='irds:{dataset_id}': {dataset_id!r} is not an ir_datasets id (see "
                         "https://ir-datasets.com for the ids; or give lengths='<docid TAB words file>')") from None
    if not ds.has_docs():
        raise InputError(f"lengths='irds:{dataset_id}': ir_datasets id {dataset_id!r} has no documents")
    try:
        it = ds.docs_iter()
        if show_progress(progress):
            try:
                total = ds.docs_count()
            except Exception:  # some stores cannot count without a full pass
                total = None
            it = progress_bar(it, True, total=total, desc=f"lengths {dataset_id}", unit="doc")
        out: Dict[str, float] = {}
        for doc in it:
            if text_fields:
                text = " ".join(str(getattr(doc, f, "") or "") for f in text_fields)
            else:
                text = doc.default_text() if hasattr(doc, "default_text") else str(getattr(doc, "text", ""))
            out[doc.doc_id] = float(len(text.split()))
    except Exception as e:  # download failures come as many exception types
        first = (str(e).strip().splitlines() or [""])[0][:200]
        raise FileNotFoundError(
            f"cannot count the document lengths of {dataset_id!r}: ir_datasets could not read the documents "
            f"({type(e).__name__}: {first}). To fix: give lengths='<file of docid TAB words lines>', or make "
            "the documents available to ir_datasets") from e
    return out


def lengths_from_ir_datasets(dataset_id: str, *, cache_dir: Optional[PathLike] = None, progress: Optional[bool] = None,
                             text_fields: Optional[Sequence[str]] = None) -> Dict[str, float]:
    """Word counts of every document of an ``ir_datasets`` docs store, cached on disk.

    The first call iterates the collection (with a progress bar on standard
    error when it is a terminal, or with ``progress=True``) and counts
    whitespace-separated tokens of ``doc.default_text()`` (or of the given
    ``text_fields`` joined); the counts are written to
    ``<cache_dir>/<dataset_id with / as __>.tsv.gz``, or
    ``...<id>.fields-title+body.tsv.gz`` for ``text_fields=['title', 'body']``
    (other unusual characters percent-encoded; default cache dir:
    ``$IRMEASURES_MARKOV_CACHE/lengths``, else
    ``$XDG_CACHE_HOME/irmeasures_markov/lengths``, else
    ``~/.cache/irmeasures_markov/lengths``), and later calls read that file.
    Processes building the same cache at once each write a temporary file and
    rename it, so the cache is always whole.  A cache file that cannot be read
    (truncated, corrupt) is rebuilt, with a warning naming it.

    Raises :class:`~irmeasures_markov.errors.InputError` for an unknown
    dataset id, ``FileNotFoundError`` when ir_datasets cannot read the documents.
    """
    cache = pathlib.Path(cache_dir) if cache_dir is not None else _cache_dir()
    # counts of other fields are other data: they get their own file
    path = cache / _cache_file_name(dataset_id, text_fields)
    if path.exists():
        try:
            cached = read_lengths(path)
            if not cached:  # a cache is never written empty: this one was cut short
                raise InputError(f"{path}: empty")
            return cached
        except InputError as e:
            warnings.warn(f"length cache {path} cannot be read ({e}); counting the lengths again",
                          RuntimeWarning, stacklevel=2)
    out = _count_words(dataset_id, progress, text_fields)
    write_lengths(out, path)
    return out


def _bad_lengths(items: Dict[str, object]) -> List[str]:
    """Docids whose length is not a non-negative finite number (bool, str, NaN, ... included)."""
    if set(map(type, items.values())) <= {int, float}:
        # the usual case, checked in one vectorised pass
        try:
            values = np.fromiter(items.values(), dtype=np.float64, count=len(items))
        except OverflowError:  # an int beyond float64: found by the loop below
            pass
        else:
            ok = np.isfinite(values) & (values >= 0)
            return [] if ok.all() else [d for d, good in zip(items, ok.tolist()) if not good]
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

    Every length source (files, ``irds:`` ids, :func:`register_lengths`
    mappings, mappings given to :class:`DocumentLengths`) is held as a
    ``LengthTable``.  Once lookups add up to ``build_after`` times as many
    documents as it holds, it builds a
    :class:`~irmeasures_markov.docid_table.DocidTable` (exact, vectorised;
    about 0.1 s for 350K documents) that answers every later lookup of 64 or
    more documents; until then the dict answers.  Named sources (files,
    ``irds:`` ids, registered mappings) are made with ``build_after=0``.  Lengths
    must be non-negative finite numbers.  It is a snapshot: changing the
    original mapping afterwards changes nothing here.
    """

    def __init__(self, lengths: Mapping[str, float], build_after: float = 1.0):
        if isinstance(build_after, bool) or not isinstance(build_after, (int, float)) or not build_after >= 0:
            raise ValueError(f"build_after must be a number >= 0, got {build_after!r}")
        items = dict(lengths)
        bad = _bad_lengths(items)
        if bad:
            raise ValueError(f"lengths must be non-negative numbers of words; bad: "
                             f"{[(d, items[d]) for d in bad[:5]]}")
        self._items = items
        self._digest: Optional[str] = None
        self._table: Optional[DocidTable] = None
        self._looked_up = 0
        self._build_at = build_after * len(items)

    def __getitem__(self, docid):
        return self._items[docid]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def get(self, docid, default=None):
        return self._items.get(docid, default)

    def content_digest(self) -> str:
        """Digest of the lengths held (computed once: the table is a snapshot)."""
        if self._digest is None:
            self._digest = digest_value(self._items)
        return self._digest

    def _table_for(self, n: int) -> Optional[DocidTable]:
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

    def lookup(self, docids: Sequence[str]):
        """``(values, found)``: lengths of ``docids`` (NaN where unknown) and where they are known."""
        table = self._table_for(len(docids))
        return lookup_in_dict(self._items, docids) if table is None else table.lookup(docids)

    def lookup_joined(self, joined: Optional[str], n: int, docids):
        """:meth:`lookup` for ``n`` docids joined by newlines (see :meth:`DocidTable.lookup_joined`)."""
        if not self._items:  # e.g. TBG(default_length=500): every length is unknown, no docid need be read
            return np.full(n, math.nan), np.zeros(n, dtype=bool)
        table = self._table_for(n)
        if table is None:
            return lookup_in_dict(self._items, docids() if callable(docids) else docids)
        return table.lookup_joined(joined, n, docids)

    def __repr__(self):
        return f"LengthTable({len(self)} documents)"


#: files read, keyed by the digest of their bytes (see :mod:`irmeasures_markov.readers.content`)
_FILES = {
    "lengths": ContentCache(lambda path, content: LengthTable(read_lengths(path, content), build_after=0), 8),
    "duplicates": ContentCache(read_duplicates, 8),
}


@lru_cache(maxsize=4)
def _irds_cached(dataset_id: str) -> LengthTable:
    return LengthTable(lengths_from_ir_datasets(dataset_id), build_after=0)


def length_source(spec: str, kind: str = "lengths"):
    """``(fingerprint, mapping)`` of a measure-string value: a file path, or ``irds:<dataset id>`` for lengths.

    A file is read on every call and parsed only when its bytes are new, so a
    rewritten file is always seen (whatever its size and modification time);
    its fingerprint is the digest of its bytes.  An
    ``irds:`` table is counted once per process; its fingerprint is the
    digest of the lengths it holds.
    """
    if kind == "lengths" and spec.startswith("irds:"):
        table = _irds_cached(spec[len("irds:"):])
        return table.content_digest(), table
    if not os.path.exists(spec):
        raise FileNotFoundError(f"{kind} file {spec!r} does not exist")
    return _FILES[kind].get(spec)


def load_length_source(spec: str, kind: str = "lengths"):
    """The mapping of :func:`length_source` (a file is re-read when its content changes)."""
    return length_source(spec, kind)[1]


class DocumentLengths:
    """Lengths in words with an explicit unknown-length policy and duplicate groups.

    Parameters
    ----------
    lengths : mapping or path
        ``{docid: words}``, or a ``docid<TAB>length`` file, or ``'irds:<id>'``.
        A mapping is validated and copied into a :class:`LengthTable`
        (lengths must be non-negative finite numbers).
    duplicates : mapping or path, optional
        ``{docid: group}``; within one ranking, a document whose group already
        appeared at an earlier rank gets length 0.
    default_length : float, optional
        Length used for documents missing from ``lengths``.  Without it a
        missing length raises :class:`UnknownLengthError`.
    """

    def __init__(self, lengths: Union[Mapping[str, float], PathLike, None] = None,
                 duplicates: Union[Mapping[str, str], PathLike, None] = None,
                 default_length: Optional[float] = None):
        if lengths is None:
            lengths = {}
        if isinstance(lengths, (str, os.PathLike)):
            lengths = load_length_source(os.fspath(lengths), "lengths")
        if isinstance(duplicates, (str, os.PathLike)):
            duplicates = load_length_source(os.fspath(duplicates), "duplicates")
        if default_length is not None:
            if isinstance(default_length, bool) or not isinstance(default_length, (int, float)) \
                    or not math.isfinite(default_length) or default_length < 0:
                raise ValueError(f"default_length must be a non-negative number of words, got {default_length!r}")
        self.lengths = lengths if isinstance(lengths, LengthTable) else LengthTable(lengths)
        self.duplicates = duplicates or None
        self.default_length = default_length

    def lookup(self, docids: Sequence[str]) -> np.ndarray:
        """Lengths of ``docids`` in order (duplicates not applied)."""
        vals, found = self.lengths.lookup(docids)
        return self._unknown_policy(docids, vals, ~found)

    def lookup_segments(self, segments: Sequence[Sequence[str]],
                        joined_segments: Optional[Sequence[str]] = None) -> np.ndarray:
        """Lengths of the documents of every segment (e.g. every query of a run), one after another.

        The same values as :meth:`lookup` on the concatenation, in one
        vectorised lookup.
        ``joined_segments`` may give each segment's docids already joined by
        newlines (faster: the docids are not read again).
        """
        n = sum(map(len, segments))
        joined = None
        try:
            if joined_segments is None:
                joined_segments = [SEPARATOR.join(s) for s in segments]
        except TypeError:  # a non-str docid: the dict answers
            pass
        else:
            joined = join_docids([j for j, s in zip(joined_segments, segments) if len(s)])
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
        """
        if not self.duplicates:
            return self.lookup(docids)
        later = np.zeros(len(docids), dtype=bool)
        seen = set()
        get = self.duplicates.get
        for i, d in enumerate(docids):
            g = get(d)
            if g is None:
                continue
            if g in seen:
                later[i] = True
            else:
                seen.add(g)
        vals = np.zeros(len(docids))
        first = np.flatnonzero(~later)
        vals[first] = self.lookup([docids[i] for i in first.tolist()])
        return vals

    def for_flat_rankings(self, docids: Sequence[str], offsets: np.ndarray) -> np.ndarray:
        """:meth:`for_ranking` of many rankings stored flat (ranking ``i`` is ``docids[offsets[i]:offsets[i+1]]``).

        The same values as :meth:`for_ranking` of each ranking, concatenated,
        with no Python step per ranking: a document is a later member of its
        group when its (ranking, group) pair occurred at an earlier position.
        """
        n = len(docids)
        if not self.duplicates:
            return self.lookup(docids)
        groups = list(map(self.duplicates.get, docids))
        grouped = np.fromiter(map(is_not, groups, repeat(None)), dtype=bool, count=n)
        where = np.flatnonzero(grouped)
        numbers: Dict[object, int] = {}
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

    def for_rankings(self, rankings: Iterable[Sequence[str]]) -> List[np.ndarray]:
        return [self.for_ranking(r) for r in rankings]
