"""Why ``ir_datasets`` could not provide a file, in one line, and how to provide it by hand.

Download errors from ``ir_datasets`` come as many exception types, nested and
sometimes listing one error per mirror; `download_failure` reduces them
to one line (offline or the innermost error), `ir_datasets_download`
finds where ``ir_datasets`` keeps a file and where it downloads it from, and
`ir_datasets_unavailable` combines both into the message the loaders
and the command line give.
"""
from __future__ import annotations

import os
from typing import Any

__all__ = ["download_failure", "ir_datasets_download", "ir_datasets_unavailable"]


def _short(e: BaseException, limit: int = 200) -> str:
    """One line of a nested exception: download errors from ir_datasets can run to whole tracebacks."""
    lines = str(e).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


#: exceptions (by class name, anywhere in a download error's chain) meaning that no connection could be made:
#: requests', urllib3's and urllib's names besides the builtin ConnectionError and socket.gaierror's subclasses
_NO_CONNECTION = {"ConnectionError", "NameResolutionError", "NewConnectionError", "MaxRetryError", "ConnectTimeout",
                  "ConnectTimeoutError", "gaierror", "URLError", "ProxyError"}


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, or holds in its arguments (ir_datasets'
    "All download sources failed" lists each mirror's error), outermost first."""
    chain: list[BaseException] = []
    todo = [exc]
    while todo and len(chain) < 100:
        e = todo.pop(0)
        if any(e is seen for seen in chain):
            continue
        chain.append(e)
        todo += [x for x in (e.__cause__ or e.__context__,) if x is not None] + list(_held(e.args))
    return chain


def _held(value, depth: int = 3):
    """The exceptions inside nested lists and tuples (a few levels deep)."""
    for item in value:
        if isinstance(item, BaseException):
            yield item
        elif depth and isinstance(item, (list, tuple)):
            yield from _held(item, depth - 1)


def download_failure(exc: BaseException) -> str:
    """Why ``ir_datasets`` could not provide a file, in one line (never a piece of a nested message).

    A chain holding a connection error (name resolution, refused or timed-out
    connection) reads "the download failed: this machine seems to be offline
    (ConnectionError)"; any other failure gives the first line of its
    innermost exception.

    Parameters
    ----------
    exc : BaseException
        What ``ir_datasets`` raised.

    Returns
    -------
    str
    """
    chain = _exception_chain(exc)
    offline = [type(e).__name__ for e in chain if type(e).__name__ in _NO_CONNECTION]
    if offline:
        return f"the download failed: this machine seems to be offline ({offline[0]})"
    return f"the download failed ({_short(chain[-1])})"


def ir_datasets_download(dataset: Any, what: str = "qrels") -> tuple[str | None, str | None]:
    """``(path, url)``: where ``ir_datasets`` keeps the file behind a dataset's qrels (``what='qrels'``) or
    queries (``'queries'``), and where it downloads it from; None for what it does not say.

    Placing that file (as downloaded) at ``path`` lets ``ir_datasets`` work
    offline.  Read from ir_datasets' download objects, which are not a public
    interface: any other layout gives ``(None, None)``.

    Parameters
    ----------
    dataset : object
        An ``ir_datasets`` dataset (or None).
    what : {'qrels', 'queries'}

    Returns
    -------
    tuple
        ``(path, url)``, either None when unknown.
    """
    try:
        handler = getattr(dataset, f"{what}_handler")()
        node = getattr(handler, f"_{what}_dlc", None)
    except Exception:  # noqa: BLE001 - a dataset without that handler: nothing to say
        return None, None
    path = url = None
    for _ in range(8):  # a Cache or TarExtract wraps the Download that holds the URL
        if node is None:
            break
        for attr in ("_cache_path", "_path"):
            value = getattr(node, attr, None)
            if path is None and isinstance(value, (str, os.PathLike)):
                path = os.fspath(value)
        mirrors = getattr(node, "mirrors", None)
        if url is None and mirrors:
            url = getattr(mirrors[0], "url", None)
        node = getattr(node, "_streamer", None)
    return path, url if isinstance(url, str) else None


def ir_datasets_unavailable(dataset_id: str, what: str, exc: BaseException, dataset: Any = None) -> str:
    """One line for a download by ``ir_datasets`` that failed: the dataset, why (offline or the error), and how to
    provide the file: a local file instead, or the downloaded file placed in ir_datasets' cache.

    Parameters
    ----------
    dataset_id : str
    what : {'qrels', 'topics'}
    exc : BaseException
        What ``ir_datasets`` raised.
    dataset : object, optional
        The dataset, when it could be loaded.

    Returns
    -------
    str
    """
    path, url = ir_datasets_download(dataset, "queries" if what == "topics" else what) if dataset is not None \
        else (None, None)
    kind = "TREC qrels file" if what == "qrels" else "TREC topics file"
    msg = f"{dataset_id}: ir_datasets could not provide the {what}: {download_failure(exc)}. Give a {kind} instead"
    if path is not None:
        msg += f", or put the file{f' downloaded from {url}' if url else ''} at {path} (ir_datasets' cache)"
    else:
        msg += ", or run once where the download works (ir_datasets caches it)"
    return msg

