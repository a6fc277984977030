"""Files known by their content: the digest of their bytes, and what was parsed from them, cached by that digest.

Everything the package keeps from a file it read (the parameters of a fit
file, MPcont rates, document lengths) and every stored result computed from a
file is identified by the digest of the file's bytes, never by its path, name
or modification time: a file rewritten with the same size and an old
modification time (``cp -p``, ``rsync -t``, ``touch -r``) is read as the new
file it is.

`ContentCache` reads the file's bytes on every lookup, so a change is
always seen, and parses them only when those bytes were not parsed before,
from the very bytes it identified, so a value is never filed under the
digest of other bytes.  Inside `read_once` (one evaluation, one grid
task) each file is read at its first lookup only: every later lookup of it
there gets those same bytes' value, so all the variants and scenarios of an
evaluation compute from one content even if the file is replaced meanwhile.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

import numpy as np

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._text import read_raw

# imported at the first digest: the command line's start-up computes none
hashlib = lazy_module("hashlib")
uuid = lazy_module("uuid")

__all__ = ["DIGEST_SIZE", "REGISTRATION", "digest_bytes", "digest_value", "registration_fingerprint", "file_digest",
           "ContentCache", "read_once"]

#: bytes of a digest (hex strings are twice as long)
DIGEST_SIZE = 16
#: how the fingerprint of something known only by its registration starts (see :func:`registration_fingerprint`)
REGISTRATION = "registration-"

T = TypeVar("T")

#: inside :func:`read_once`: ``{(cache, absolute path): (digest, value)}`` of the files read there so far
_READ: ContextVar[dict | None] = ContextVar("irmeasures_markov_read_once", default=None)


@contextmanager
def read_once() -> Iterator[None]:
    """Within it, each file a `ContentCache` reads is read once: later lookups get the first one's value.

    One evaluation evaluates a measure's base several times (``ties='expected'``,
    ``residual``, ``unjudged='rel'|'range'``) and asks for its fingerprint: inside
    one ``read_once`` they all use the same bytes of each file, so a file
    replaced during the evaluation gives the old content's value or the new
    one's, never a mix.  Nested uses share the outermost; the reads are per
    thread (and per context), so other threads read the file as it is.

    Yields
    ------
    None
    """
    if _READ.get() is not None:
        yield
        return
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def digest_bytes(data: bytes) -> str:
    """BLAKE2b digest of ``data`` (hex, `DIGEST_SIZE` bytes).

    Parameters
    ----------
    data : bytes

    Returns
    -------
    str
        The digest in hex.
    """
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).hexdigest()


def _feed(h, obj) -> None:
    """Feed ``obj`` to ``h`` unambiguously: a type tag, then lengths before variable-size parts."""
    def chunk(tag: bytes, data: bytes):
        h.update(tag + len(data).to_bytes(8, "little") + data)
    if obj is None:
        chunk(b"N", b"")
    elif isinstance(obj, (bool, np.bool_)):
        chunk(b"B", b"1" if obj else b"0")
    elif isinstance(obj, (int, np.integer)):
        chunk(b"I", str(int(obj)).encode())
    elif isinstance(obj, (float, np.floating)):
        chunk(b"F", repr(float(obj)).encode())  # repr round-trips a float64 exactly
    elif isinstance(obj, str):
        chunk(b"S", obj.encode("utf-8", "surrogateescape"))
    elif isinstance(obj, bytes):
        chunk(b"Y", obj)
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            _feed(h, obj.tolist())
        else:
            a = np.ascontiguousarray(obj)
            chunk(b"A", f"{a.dtype.str}{a.shape}".encode())
            chunk(b"a", a.tobytes())
    elif isinstance(obj, Mapping):
        keys = list(obj)
        try:
            keys.sort()
        except TypeError:  # keys of mixed types
            keys.sort(key=lambda k: (type(k).__name__, repr(k)))
        chunk(b"M", str(len(keys)).encode())
        for k in keys:
            _feed(h, k)
            _feed(h, obj[k])
    elif isinstance(obj, (list, tuple)):
        chunk(b"L", str(len(obj)).encode())
        for v in obj:
            _feed(h, v)
    else:
        raise TypeError(f"no content digest for a {type(obj).__name__}")


def digest_value(obj: object) -> str:
    """Digest of plain data by content: None, bools, numbers, str, bytes, numpy arrays, and mappings and
    sequences of them (mappings in key order, so dict order does not count).

    Equal content gives equal digests (``1`` and ``1.0`` differ: the type is
    part of the content); ``TypeError`` for anything else (e.g. a function,
    whose content cannot be read).

    Parameters
    ----------
    obj : object
        Plain data.

    Returns
    -------
    str
        The digest in hex.

    Raises
    ------
    TypeError
        ``obj`` holds something that is not plain data.
    """
    h = hashlib.blake2b(digest_size=DIGEST_SIZE)
    _feed(h, obj)
    return h.hexdigest()


def registration_fingerprint(*parts: object) -> str:
    """What identifies something registered under a name: `digest_value` of ``parts`` when they are
    plain data (a weight matrix, a table), else a token unique to this registration (a Python function's
    content cannot be read: results computed with it are not reused beyond it, e.g. by a new process).

    Parameters
    ----------
    *parts : object
        What was registered.

    Returns
    -------
    str
        A digest, or a token starting with `REGISTRATION`.
    """
    try:
        return digest_value(parts)
    except TypeError:
        return REGISTRATION + uuid.uuid4().hex


def file_digest(path: PathLike) -> str:
    """`digest_bytes` of a file's bytes as stored (a compressed file is hashed compressed), read in blocks.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str
        The digest in hex.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    h = hashlib.blake2b(digest_size=DIGEST_SIZE)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ContentCache(Generic[T]):
    """``parse(path, content)`` of files, kept per (absolute path, digest of the bytes).

    `get` reads the file and returns ``(digest, value)``; ``parse`` runs
    only for bytes not seen before at that path.  The bytes last read at each
    path are kept, so a file read again unchanged is recognised by comparing
    its bytes with them (no hashing); changed bytes are
    hashed and looked up.  The path is part of the key only because parsed
    values and their error messages name the file.  The ``maxsize`` entries
    (and paths) used last are kept.

    Parameters
    ----------
    parse : callable
        ``parse(path, content)`` -> the value kept for those bytes.
    maxsize : int
        Entries (and paths) kept.
    """

    def __init__(self, parse: Callable[[str, bytes], T], maxsize: int = 16):
        self._parse = parse
        self._maxsize = maxsize
        self._entries: OrderedDict[tuple[str, str], T] = OrderedDict()
        #: absolute path -> (bytes, digest) last read there
        self._last: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: PathLike) -> tuple[str, T]:
        """``(digest, parsed value)`` of the file as it is now (inside `read_once`: as it was at its first
        lookup there).

        Parameters
        ----------
        path : str or os.PathLike

        Returns
        -------
        tuple
            ``(digest, value)``.

        Raises
        ------
        OSError
            The file cannot be read; whatever ``parse`` raises.
        """
        name = os.fspath(path)
        full = os.path.abspath(name)
        read = _READ.get()
        if read is None:
            return self._get(name, full)
        if (self, full) not in read:
            read[self, full] = self._get(name, full)
        return read[self, full]

    def _get(self, name: str, full: str) -> tuple[str, T]:
        """The file's bytes read now, their digest and their value (parsed when those bytes are new here)."""
        content = read_raw(name)
        with self._lock:
            last = self._last.get(full)
        # equal bytes are the same content: the digest is known (comparing is several times faster than hashing)
        digest = last[1] if last is not None and last[0] == content else digest_bytes(content)
        key = (full, digest)
        with self._lock:
            self._last[full] = (content, digest)
            self._last.move_to_end(full)
            while len(self._last) > self._maxsize:
                self._last.popitem(last=False)
            if key in self._entries:
                self._entries.move_to_end(key)
                return digest, self._entries[key]
        value = self._parse(name, content)
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return digest, value
