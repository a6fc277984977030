"""Opening input files: compression by magic number, standard input, the byte-order mark, byte-exact text.

The readers work on lines of bytes: a line ends at LF and its fields are
``line.split()``, which splits on ASCII whitespace only (space, tab, CR, VT,
FF): the separators of trec_eval.  A field becomes a ``str`` by UTF-8 with
``surrogateescape``, so a byte that is not valid UTF-8 stays that byte.
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike

T = TypeVar("T")

__all__ = ["STDIN", "BOM", "display_name", "open_lines", "open_text", "read_raw", "decompress",
           "read_whole", "decode", "short", "refuse_non_utf8", "lone_surrogate_id"]

#: the path that means standard input
STDIN = "-"
#: the UTF-8 byte-order mark some Windows tools put at the start of a text file
BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
try:  # python-isal (the 'fast' extra) decompresses gzip about twice as fast as zlib
    from isal.igzip import decompress as _gunzip
except ImportError:  # pragma: no cover - optional
    _gunzip = gzip.decompress
#: (magic bytes, name, stream class, whole-content decompressor) of the compressions recognised whatever the
#: file is called
_COMPRESSIONS = (
    (b"\x1f\x8b", "gzip", lambda raw: gzip.open(raw, "rb"), _gunzip),
    (b"BZh", "bzip2", lambda raw: bz2.BZ2File(raw, "rb"), bz2.decompress),
    (b"\xfd7zXZ\x00", "xz", lambda raw: lzma.LZMAFile(raw, "rb"), lzma.decompress),
)
#: what the decompressors raise on truncated or corrupt data
DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)
#: at most this many characters of a bad line or value are quoted in an error message
QUOTE_LIMIT = 40


def display_name(path: PathLike) -> str:
    """The name error messages give a file: its path, or ``<stdin>``."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode("utf-8", "surrogateescape")
    return "<stdin>" if path == STDIN else path


def decode(field: bytes) -> str:
    """A field as str, byte-exactly (invalid UTF-8 bytes become lone surrogates)."""
    return field.decode("utf-8", "surrogateescape")


def short(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of at most ``limit`` characters of ``value`` (bytes decoded): input may be any file at all."""
    if isinstance(value, (bytes, bytearray)):
        value = decode(bytes(value))
    value = str(value).strip()
    if len(value) > limit:
        return repr(value[:limit]) + "…"
    return repr(value)


def read_raw(path: PathLike) -> bytes:
    """The bytes of a file as stored (standard input for ``-``), not decompressed."""
    if os.fspath(path) == STDIN:
        return sys.stdin.buffer.read()
    with open(path, "rb") as fh:
        return fh.read()


def _open_binary(path: PathLike, content: bytes | None = None) -> tuple[io.BufferedIOBase, str | None]:
    """``(stream, compression)``: the decompressed bytes (pipes read into memory, their head cannot be put back)."""
    if content is not None:
        raw: io.BufferedIOBase = io.BytesIO(content)
    elif os.fspath(path) == STDIN:
        raw = io.BytesIO(read_raw(path))
    else:
        raw = open(path, "rb")
        if not raw.seekable():  # e.g. <(zcat run.gz)
            with raw:
                raw = io.BytesIO(raw.read())
    head = raw.read(8)
    raw.seek(0)
    for magic, name, opener, _ in _COMPRESSIONS:
        if head.startswith(magic):
            if isinstance(raw, io.BytesIO):
                return opener(raw), name
            raw.close()  # opened by name, the decompressor closes the file with itself (a file object it leaves open)
            return opener(path), name
    return raw, None


def _damaged(where: str, kind: str, e: Exception) -> InputError:
    return InputError(f"{where}: not a valid {kind} file: the compressed data is truncated or corrupt "
                      f"({type(e).__name__}: {str(e)[:80]})")


def _utf16_error(name: str) -> InputError:
    return InputError(f"{name}:1: the file starts with a UTF-16 byte-order mark; save it as UTF-8 "
                      "(e.g. iconv -f UTF-16 -t UTF-8)")


def _lines(stream, name: str, compression: str | None) -> Iterator[tuple[int, bytes]]:
    lineno = 0
    try:
        for lineno, line in enumerate(stream, start=1):
            if lineno == 1:
                if line.startswith(BOM):
                    line = line[len(BOM):]
                elif line.startswith(_UTF16_BOMS):
                    raise _utf16_error(name)
            yield lineno, line
    except DECOMPRESSION_ERRORS as e:
        if compression is None or isinstance(e, InputError):
            raise
        raise _damaged(f"{name}:{lineno + 1}", compression, e) from None


@contextlib.contextmanager
def open_lines(path: PathLike, content: bytes | None = None) -> Iterator[Iterator[tuple[int, bytes]]]:
    """``with open_lines(path) as lines:`` ``(line number, bytes)`` pairs; InputError names where damaged data stops."""
    stream, compression = _open_binary(path, content)
    try:
        yield _lines(stream, display_name(path), compression)
    finally:
        stream.close()


def decompress(raw: bytes, name: str) -> bytes:
    """The decompressed content of a file's bytes, BOM removed; InputError (no line number) if damaged."""
    for magic, kind, _, whole in _COMPRESSIONS:
        if raw.startswith(magic):
            try:
                raw = whole(raw)
            except DECOMPRESSION_ERRORS as e:
                raise _damaged(name, kind, e) from None
            break
    if raw.startswith(BOM):
        return raw[len(BOM):]
    if raw.startswith(_UTF16_BOMS):
        raise _utf16_error(name)
    return raw


def read_whole(path: PathLike, from_bytes: Callable[[bytes], T | None],
               from_lines: Callable[[Iterator[tuple[int, bytes]], str], T],
               ids: Callable[[T], Iterable[str]] | None = None) -> T:
    """``from_bytes(data)``, or ``from_lines(lines, name)`` when that gives None or the data is damaged (for lines);
    with ``ids`` (the result's ids), `refuse_non_utf8` then applies."""
    raw, name = read_raw(path), display_name(path)
    try:
        data = decompress(raw, name)
    except InputError:
        with open_lines(name, raw) as lines:   # reads up to the damage: the error gets its line number
            result = from_lines(lines, name)
    else:
        result = from_bytes(data)
        if result is None:
            result = from_lines(enumerate(io.BytesIO(data), start=1), name)
    if ids is not None:
        refuse_non_utf8(ids(result), name, raw)
    return result


def refuse_non_utf8(ids: Iterable[str], name: str, raw: bytes) -> None:
    """The dict readers' rule: InputError naming the first line whose query or document id is not UTF-8.

    Such bytes become lone surrogates, on which pytrec_eval (where ir_measures sends a dict) kills the process;
    the package's own paths read them byte-exactly and hand them on in a form pytrec_eval takes (`pytrec`).
    """
    if lone_surrogate_id(ids) is None:
        return
    with open_lines(name, raw) as lines:
        for lineno, line in lines:
            for field in line.split()[0:3:2]:    # the query and document ids of a run or qrels line
                if decode(field) != field.decode("utf-8", "replace"):   # the two agree on UTF-8 alone
                    quoted = repr(field[:QUOTE_LIMIT]) + ("…" if len(field) > QUOTE_LIMIT else "")
                    raise InputError(
                        f"{name}:{lineno}: id {quoted} is not valid UTF-8: a dict holding it would crash "
                        "pytrec_eval (ir_measures' AP, nDCG, ...); the irmeasures-markov command (and "
                        "read_run_columns, for a run) reads such files byte-exactly")


def lone_surrogate_id(ids: Iterable[str]) -> str | None:
    """The first of ``ids`` holding a lone surrogate (bytes that were not UTF-8, kept byte-exactly), or None:
    what a dict handed to other tools must not hold."""
    for text in ids:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return text
    return None


def open_text(path: PathLike) -> io.TextIOWrapper:
    """A text stream over a file (plain, gzip, bzip2 or xz; ``-`` for standard input).

    UTF-8 with ``surrogateescape`` (byte-exact), the byte-order mark removed,
    lines ending at LF only (a CR stays in the text, where field splitting
    treats it as whitespace).

    Parameters
    ----------
    path : str or os.PathLike
        The file, or ``-`` for standard input.

    Returns
    -------
    io.TextIOWrapper
        A text stream; close it (or use ``with``) when done.

    Raises
    ------
    OSError
        The file cannot be opened.
    """
    stream, _ = _open_binary(path)
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="\n")
