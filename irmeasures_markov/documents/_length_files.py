"""Files of document lengths and duplicate groups: reading and writing them, and counting lengths with ir_datasets.

* a file of ``docid<TAB>length`` lines (plain or compressed; ``#`` comments
  and blank lines skipped): [`read_lengths`][irmeasures_markov.documents.read_lengths], errors name the file and line;
* a file of ``docid<TAB>group`` lines: [`read_duplicates`][irmeasures_markov.documents.read_duplicates];
* an ``ir_datasets`` docs store: [`lengths_from_ir_datasets`][irmeasures_markov.documents.lengths_from_ir_datasets]
counts the
  whitespace-separated words of each document's text once, with a progress
  bar, and caches the result on disk as a lengths file.
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._progress import progress_bar, show_progress
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._atomic import replacing
from irmeasures_markov.io._text import decode, display_name, open_lines, short
from irmeasures_markov.io._trec import field_count_error

# for the files of a cache only: importing the plug-in does not need them
pathlib = lazy_module("pathlib")
urllib_parse = lazy_module("urllib.parse")

__all__ = ["read_lengths", "read_duplicates", "write_lengths", "lengths_from_ir_datasets"]



def _length_lines(path: PathLike, what: str, content: bytes | None = None):
    """``(line number, docid, value field)`` of a ``docid<TAB>value`` file; ``#`` comments and blank lines skipped."""
    name = display_name(path)
    with open_lines(path, content) as lines:
        for lineno, line in lines:
            parts = line.split()
            if not parts or parts[0].startswith(b"#"):
                continue
            if len(parts) != 2:
                raise field_count_error(f"{name}:{lineno}", f"'docid<TAB>{what}'", parts, line)
            yield lineno, decode(parts[0]), parts[1]


def read_lengths(path: PathLike, content: bytes | None = None) -> dict[str, float]:
    """``{docid: length}`` from a ``docid<TAB>length`` file (plain, gzip, bzip2 or xz).

    Lengths are word counts: non-negative finite numbers.  Docids are read
    byte-exactly, like run docids.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    content : bytes, optional
        The file's bytes, when they were read already.

    Returns
    -------
    dict

    Raises
    ------
    InputError
        A non-numeric, negative or non-finite length, a line without two
        fields, or a docid given twice with different lengths, naming the
        file and line.
    """
    name = display_name(path)
    out: dict[str, float] = {}
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


def read_duplicates(path: PathLike, content: bytes | None = None) -> dict[str, str]:
    """``{docid: group}`` from a ``docid<TAB>group`` file: documents of a group duplicate each other.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    content : bytes, optional
        The file's bytes, when they were read already.

    Returns
    -------
    dict

    Raises
    ------
    InputError
        A line without two fields, or a docid in two groups, naming the file and line.
    """
    name = display_name(path)
    out: dict[str, str] = {}
    for lineno, doc, raw in _length_lines(path, "group", content):
        group = decode(raw)
        if out.get(doc, group) != group:
            raise InputError(f"{name}:{lineno}: document {short(doc)} is in two duplicate groups "
                             f"({short(out[doc])} and {short(group)})")
        out[doc] = group
    return out


def write_lengths(lengths: Mapping[str, float], path: PathLike) -> None:
    """Write a ``docid<TAB>length`` file (gzip when the name ends in .gz), atomically.

    The file is written under a temporary name of its own and renamed, so
    processes writing the same file at once never mix their output.

    Parameters
    ----------
    lengths : mapping of str to float
        ``{docid: words}``.
    path : str or os.PathLike
        The file to write.
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


def _cache_file_name(dataset_id: str, text_fields: Sequence[str] | None) -> str:
    """The cache file's name: one file name (no directory part), different for different ids or fields.

    ``/`` in the dataset id becomes ``__`` (the names existing caches have);
    any other character that is not a letter, digit, ``_.-~+`` is
    percent-encoded, so ``text_fields=['title/../../x']`` stays inside the
    cache directory.
    """
    fields = "" if not text_fields else ".fields-" + "+".join(map(str, text_fields))
    return urllib_parse.quote(dataset_id.replace("/", "__") + fields, safe="+") + ".tsv.gz"


def _count_words(dataset_id: str, progress: bool | None, text_fields: Sequence[str] | None) -> dict[str, float]:
    import ir_datasets
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
        out: dict[str, float] = {}
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


def lengths_from_ir_datasets(dataset_id: str, *, cache_dir: PathLike | None = None, progress: bool | None = None,
                             text_fields: Sequence[str] | None = None) -> dict[str, float]:
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

    Parameters
    ----------
    dataset_id : str
        An ``ir_datasets`` id with documents.
    cache_dir : str or os.PathLike, optional
        Where the cache file goes (directly in it).
    progress : bool, optional
        Show a progress bar; default: when standard error is a terminal.
    text_fields : sequence of str, optional
        Count the words of these fields joined, instead of ``default_text()``.

    Returns
    -------
    dict
        ``{docid: words}``.

    Raises
    ------
    InputError
        An unknown dataset id, or one without documents.
    FileNotFoundError
        ir_datasets cannot read the documents.
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
