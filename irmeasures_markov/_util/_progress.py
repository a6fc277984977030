"""One rule for progress output: bars and progress lines only on a terminal, or when asked.

Every function of the package that can show progress takes ``progress=``:

* ``None`` (the default everywhere): show it only when standard error is a
  terminal, so a script, a notebook cell captured to a file, a pipe or a test
  run gets nothing on standard error;
* ``True``: show it anyway (on standard error);
* ``False``: never.

`show_progress` makes that choice and `progress_bar` wraps an
iterable (or counts updates) with a tqdm bar when the choice is yes.  The
command line passes its own choice (``--no-progress``, a terminal check)
through the same parameter.  tqdm is imported only when a bar is shown.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["show_progress", "progress_bar", "progress_line"]


def show_progress(progress: bool | None = None) -> bool:
    """``progress`` as a yes/no: ``None`` means "only if standard error is a terminal".

    Parameters
    ----------
    progress : bool or None
        ``True`` (show), ``False`` (never) or ``None`` (only on a terminal).

    Returns
    -------
    bool
        Whether to show progress.

    Raises
    ------
    ValueError
        ``progress`` is none of ``True``, ``False`` and ``None``.
    """
    if progress is None:
        stream = sys.stderr
        try:
            return bool(stream is not None and stream.isatty())
        except (AttributeError, ValueError):  # a replaced or closed stream
            return False
    try:
        valid = progress in (True, False)  # bool, numpy bool, 0 or 1
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(f"`progress` must be True, False or None (only on a terminal), got {progress!r}.")
    return bool(progress)


class _NoBar:
    """The bar that is not shown: iterates and counts nothing."""

    def __init__(self, iterable=None):
        self._iterable = iterable

    def __iter__(self):
        return iter(self._iterable if self._iterable is not None else ())

    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_bar(iterable: Iterable | None = None, progress: bool | None = None, **kwargs: Any) -> Any:
    """A tqdm bar on standard error over ``iterable`` (or with ``total=`` and ``update()``), when
    `show_progress` says so; else an object with the same ``update``/``close`` that prints nothing.

    Parameters
    ----------
    iterable : iterable, optional
        What the bar iterates over (else count with ``update()``).
    progress : bool or None
        As for `show_progress`.
    **kwargs
        Passed to tqdm (``desc``, ``total``, ``unit``, ...).

    Returns
    -------
    tqdm.tqdm or a silent stand-in
        Iterable, with ``update`` and ``close``.

    Raises
    ------
    ValueError
        A bad ``progress`` (see `show_progress`).
    """
    if not show_progress(progress):
        return _NoBar(iterable)
    from tqdm.auto import tqdm
    kwargs.setdefault("file", sys.stderr)
    return tqdm(iterable, **kwargs)


def progress_line(text: str, progress: bool | None = None) -> None:
    """Print one progress line (e.g. a grid's summary) to standard error when `show_progress` says so.

    Parameters
    ----------
    text : str
        The line.
    progress : bool or None
        As for `show_progress`.
    """
    if show_progress(progress):
        print(text, file=sys.stderr, flush=True)
