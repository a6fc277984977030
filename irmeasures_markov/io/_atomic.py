"""Writing cache files so that concurrent writers and readers never see a partial file."""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._types import PathLike

pathlib = lazy_module("pathlib")  # at the first file written: importing the package writes none

__all__ = ["replacing"]


@contextlib.contextmanager
def replacing(path: PathLike) -> Iterator[pathlib.Path]:
    """``with replacing(dest) as tmp:`` write ``tmp``; on success it atomically becomes ``dest``.

    The temporary file has a name of its own in ``dest``'s directory (so two
    processes building the same file never write into each other's, and the
    final ``os.replace`` is a rename within one file system); on an error it
    is removed and ``dest`` is left as it was.  The last writer wins, and
    every reader sees a whole file.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.

    Yields
    ------
    pathlib.Path
        The temporary file to write; it replaces ``path`` when the block ends
        without an exception.
    """
    dest = pathlib.Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    os.close(fd)
    try:
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make a shared cache unreadable to others
        yield pathlib.Path(tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
