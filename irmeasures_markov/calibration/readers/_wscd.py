"""The WSCD 2012 log format (Yandex Relevance Prediction Challenge sample):
[`read_wscd`][irmeasures_markov.calibration.read_wscd]."""
from __future__ import annotations

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.calibration._logs import ClickLog, Session, click_array
from irmeasures_markov.calibration.readers._formats import check_unshown, first_ranks, read_text
from irmeasures_markov.io._text import short

__all__ = ["read_wscd"]


def read_wscd(path: PathLike, *, unshown: str = "drop", description: str | None = None) -> ClickLog:
    """Read a log in the WSCD 2012 sample format (PyClick's ``trainSample``/``testSample``).

    One line per query; its sessions are separated by ``;``, each
    ``QUERYID<TAB>DOC1,DOC2,...,DOCn : CLICKED1 , CLICKED2 , ...`` — the
    ranking shown, then the clicked document ids in click order (empty after
    ``:`` when nothing was clicked).  Whitespace around ``,``, ``:`` and ``;``
    may vary.  There are no timestamps, dwell times or session ends; session
    ids are the sessions' order numbers in the file (``'1'``, ``'2'``, ...).

    A clicked id that is not in the ranking shown (the Yandex sample has 417
    such clicks in ``train.txt`` and 276 in ``test.txt``, on results of other
    result pages) is dropped with ``unshown='drop'`` (the default; the count
    is kept in ``log.meta['dropped_clicks']``) or an [`InputError`][irmeasures_markov.io.InputError]
    naming the file, line and session with ``unshown='error'``.  A clicked id
    shown twice counts as a click on its first rank.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip, bzip2 or xz compressed, or ``-`` for standard input).
    unshown : {'drop', 'error'}
        What to do with a click on a document that is not in the ranking shown.
    description : str, optional
        The log's description (default: ``'WSCD 2012 click log NAME'``).

    Returns
    -------
    ClickLog
        ``meta`` holds ``format='wscd'`` and ``dropped_clicks``.

    Raises
    ------
    InputError
        A malformed session, naming the file, line and session.
    ValueError
        An ``unshown`` that is not one of the choices.
    """
    check_unshown(unshown)
    text, name = read_text(path)
    sessions: list[Session] = []
    parsed: dict[str, tuple[str, tuple, np.ndarray, int]] = {}  # a session's text -> its parts (sessions repeat)
    rankings: dict[str, tuple] = {}  # the documents' text -> (ids, first rank of each id)
    dropped = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        for k, segment in enumerate(line.split(";"), start=1):
            segment = segment.strip()
            if not segment:
                continue
            hit = parsed.get(segment)
            if hit is None:
                hit = parsed[segment] = _wscd_session(segment, rankings, unshown, f"{name}:{lineno}: session {k}")
            qid, shown, clicks, n_dropped = hit
            dropped += n_dropped
            sessions.append(Session(qid, shown, clicks, None, None, None, str(len(sessions) + 1), n_dropped))
    return ClickLog(sessions, description if description is not None else f"WSCD 2012 click log {name}",
                    name, {"format": "wscd", "dropped_clicks": dropped})


def _wscd_session(segment: str, rankings: dict[str, tuple], unshown: str, where: str):
    """(query id, ranking, clicked ranks, clicks dropped) of one session's text."""
    left, colon, right = segment.partition(":")
    if not colon:
        raise InputError(f"{where}: expected 'QUERYID<TAB>DOC1,...,DOCn : CLICKS', found no ':' in "
                         f"{short(segment)}")
    head = left.split(None, 1)
    if len(head) != 2:
        raise InputError(f"{where}: expected a query id, then the comma-separated documents shown, before ':' "
                         f"in {short(segment)}")
    qid, docs = head
    known = rankings.get(docs)
    if known is None:
        shown = tuple(d.strip() for d in docs.split(","))
        if any(not d or len(d.split()) != 1 for d in shown):
            raise InputError(f"{where}: the documents shown must be comma-separated ids, got {short(docs)}")
        known = rankings[docs] = (shown, first_ranks(shown))
    shown, first = known
    ranks, dropped = [], 0
    if right.strip():
        for d in right.split(","):
            d = d.strip()
            r = first.get(d)
            if r is None:
                if not d or len(d.split()) != 1:
                    raise InputError(f"{where}: the clicked documents must be comma-separated ids, "
                                     f"got {short(right)}")
                if unshown == "error":
                    raise InputError(f"{where}: click on document {d!r}, which is not in the ranking shown "
                                     f"(query {qid!r}); unshown='drop' ignores such clicks")
                dropped += 1
                continue
            ranks.append(r)
    return qid, shown, click_array(ranks), dropped
