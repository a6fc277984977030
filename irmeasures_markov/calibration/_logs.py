"""The in-memory form of an interaction log: sessions of clicks on ranked lists.

A [`Session`][irmeasures_markov.calibration.Session] is one query issued once: the ranked list shown, the clicks
in the order they happened (as 1-based ranks into that list, so a click model
never looks document ids up again), and, when the log has them, click times
and dwell times in seconds and whether the session's end was observed.
A [`ClickLog`][irmeasures_markov.calibration.ClickLog] is a sequence of sessions with a description of where they
came from (kept with every fit made from it, so a calibrated measure can cite
its log).

Every reader of this package (WSCD, our JSONL/TSV, pandas, ir_datasets query
logs) builds these objects, and every fit reads only them.

Train/test splits of a log that compare models fairly (`split_log`).

A model that learns per query-document parameters (a click model) is favoured
when the same query's sessions are on both sides of a split; so
`split_log` keeps all sessions of a query on one side by default
(``by='query'``).  ``by='sessions'`` is the per-session split of
[`ClickLog.split`][irmeasures_markov.calibration.ClickLog.split].  Both are seeded: the same seed gives the same split.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from irmeasures_markov._util._arrays import (
    frozen,  # arrays may be shared between sessions (WSCD repeats whole sessions)
)
from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io._text import short

__all__ = ["Session", "ClickLog", "make_session", "build_session", "click_array", "split_log", "split_by_query",
           "describe_split", "split_text", "SPLITS"]


@dataclass(frozen=True, eq=False)
class Session:
    """One search session: a query, the ranking shown and the clicks on it.

    Attributes
    ----------
    query_id : str
    shown : tuple of str
        Document ids in rank order (rank 1 first).
    clicks : ndarray of int64
        Clicked ranks, 1-based, in click order; a rank may repeat.
    times : ndarray of float64 or None
        Seconds from the start of the session to each click (non-decreasing),
        same length as ``clicks``; None when the log has no timestamps.
    dwell : ndarray of float64 or None
        Seconds spent on each clicked document, NaN where unknown (for the last
        click of a session it is usually unknown: right-censored); None when
        the log has no dwell information.
    ended : bool or None
        True when the log records that the user left after the last click
        (an observed end), None when it does not say.
    session_id : str
        An id unique within the log (readers make one when the file has none).
    dropped_clicks : int
        Clicks of this session the reader dropped because they named a document
        that was not in the ranking shown (``unshown='drop'``); 0 otherwise.
    """

    query_id: str
    shown: tuple[str, ...]
    clicks: np.ndarray
    times: np.ndarray | None = None
    dwell: np.ndarray | None = None
    ended: bool | None = None
    session_id: str = ""
    dropped_clicks: int = 0

    @property
    def n_shown(self) -> int:
        """Documents in the ranking shown."""
        return len(self.shown)

    @property
    def n_clicks(self) -> int:
        """Clicks, repeats included."""
        return int(self.clicks.shape[0])

    @property
    def clicked_documents(self) -> list[str]:
        """The clicked documents' ids, in click order."""
        return [self.shown[r - 1] for r in self.clicks]


@dataclass
class ClickLog:
    """A sequence of [`Session`][irmeasures_markov.calibration.Session] with a description of its source.

    Attributes
    ----------
    sessions : list of Session
    description : str
        Where the log comes from, in words (kept with every fit made from it).
    source : str
        The file or dataset it was read from.
    meta : dict
        What the reader adds, e.g. ``format`` and ``dropped_clicks``.
    """

    sessions: list[Session]
    description: str = ""
    source: str = ""
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(self.sessions)

    def __getitem__(self, i: int | slice) -> Session | ClickLog:
        if isinstance(i, slice):
            return self.subset(range(len(self.sessions))[i])
        return self.sessions[i]

    @property
    def has_times(self) -> bool:
        """Whether some session has click times."""
        return any(s.times is not None for s in self.sessions)

    @property
    def has_dwell(self) -> bool:
        """Whether some session has dwell times."""
        return any(s.dwell is not None for s in self.sessions)

    def query_ids(self) -> list[str]:
        """The distinct query ids, sorted.

        Returns
        -------
        list of str
            Every query id of the log's sessions, once.
        """
        return sorted({s.query_id for s in self.sessions})

    def subset(self, indices: Iterable[int]) -> ClickLog:
        """The chosen sessions as a log of their own.

        Parameters
        ----------
        indices : iterable of int
            Positions of the sessions to keep, in the order wanted.

        Returns
        -------
        ClickLog
            Same description and source; ``meta['dropped_clicks']``, when the
            log has it, counts the chosen sessions' dropped clicks.
        """
        sessions = [self.sessions[i] for i in indices]
        meta = dict(self.meta)
        if "dropped_clicks" in meta:
            meta["dropped_clicks"] = sum(s.dropped_clicks for s in sessions)
        return ClickLog(sessions, self.description, self.source, meta)

    def split(self, test_fraction: float = 0.3, seed: int = 0) -> tuple[ClickLog, ClickLog]:
        """A seeded random split of the sessions into (train, test).

        Parameters
        ----------
        test_fraction : float
            Share of the sessions in the test log, in (0, 1).
        seed : int
            Seed of the permutation (the same seed gives the same split).

        Returns
        -------
        (ClickLog, ClickLog)
            The training and the test sessions, each in the log's order.

        Raises
        ------
        ValueError
            When ``test_fraction`` is not in (0, 1).
        """
        check_fraction(test_fraction)
        n = len(self.sessions)
        perm = np.random.default_rng(seed).permutation(n)
        n_test = int(round(test_fraction * n))
        return self.subset(np.sort(perm[n_test:])), self.subset(np.sort(perm[:n_test]))


# ---------------------------------------------------------------------------
# Checked construction (every reader builds its sessions here)
# ---------------------------------------------------------------------------

_NO_CLICKS = frozen(np.zeros(0, dtype=np.int64))


def click_array(ranks: Sequence[int]) -> np.ndarray:
    """Clicked ranks as `Session.clicks` holds them: a read-only int64 array.

    Parameters
    ----------
    ranks : sequence of int
        1-based ranks in click order (not checked here: see
        [`make_session`][irmeasures_markov.calibration.readers.make_session]).

    Returns
    -------
    ndarray of int64
        Read-only; every click-less session shares one empty array.
    """
    return frozen(np.array(ranks, dtype=np.int64)) if len(ranks) else _NO_CLICKS


def make_session(query_id: str, shown: Sequence[str], clicks: Sequence[int], *,
                 times: Sequence[float] | np.ndarray | None = None, dwell: Sequence[float] | np.ndarray | None = None,
                 ended: bool | None = None, session_id: str = "", where: str = "") -> Session:
    """A checked [`Session`][irmeasures_markov.calibration.Session] (what every reader builds).

    Parameters
    ----------
    query_id : str
        Non-empty.
    shown : sequence of str
        The ranking shown, rank 1 first; not empty.
    clicks : sequence of int
        1-based ranks into ``shown``, in click order.
    times : sequence of float, optional
        Seconds from the session's start to each click: one per click,
        finite, non-decreasing.
    dwell : sequence of float, optional
        Seconds on each clicked document (>= 0, NaN where unknown), one per click.
    ended : bool, optional
        Whether the log saw the user leave after the last click.
    session_id : str
    where : str
        ``FILE:LINE`` (or another place) that starts every error message.

    Returns
    -------
    Session
        Its arrays are read-only.

    Raises
    ------
    InputError
        Naming ``where`` and the session, for an empty ranking, a non-string
        id, a click outside the ranking, times or dwell times of the wrong
        length, out of order or out of range.
    """
    at = f"{where}: " if where else ""
    shown = tuple(shown)
    for d in shown:
        if not isinstance(d, str):
            raise InputError(f"{at}document ids must be strings, got {short(d)} ({type(d).__name__})")
    return build_session(query_id, shown, clicks, times, dwell, ended, session_id, where)


def build_session(query_id: str, shown: tuple[str, ...], clicks: Sequence[int] | np.ndarray,
                  times: Sequence[float] | np.ndarray | None, dwell: Sequence[float] | np.ndarray | None,
                  ended: bool | None, session_id: str | int, where: str) -> Session:
    """[`make_session`][irmeasures_markov.calibration.readers.make_session] for a ranking already known to be a tuple of
    str (the readers' own).

    Same checks and result as [`make_session`][irmeasures_markov.calibration.readers.make_session] except that the ids
    of
    ``shown`` are not checked one by one (a reader that built the tuple from
    its file knows them to be strings).
    """
    at = f"{where}: " if where else ""
    if not isinstance(query_id, str) or not query_id:
        raise InputError(f"{at}the query id must be a non-empty string, got {short(query_id)}")
    who = f"{at}session {session_id or '?'}"
    if not shown:
        raise InputError(f"{who} of query {query_id!r}: the ranking shown is empty")
    n = len(shown)
    # sessions have a few clicks: Python's min/max on the list cost less than numpy's reductions
    ranks = clicks.tolist() if isinstance(clicks, np.ndarray) else list(clicks)
    if ranks and (min(ranks) < 1 or max(ranks) > n):
        bad = next(r for r in ranks if not 1 <= r <= n)
        raise InputError(f"{who}: click on rank {bad}, outside the ranking shown (ranks 1..{n})")
    c = click_array(ranks)
    t = w = None
    if times is not None:
        t = np.asarray(times, dtype=np.float64).reshape(-1)
        if t.size != c.size:
            raise InputError(f"{who}: {t.size} timestamps for {c.size} clicks (give every click a time, or none)")
        if not np.all(np.isfinite(t)):
            raise InputError(f"{who}: click times must be finite numbers")
        if t.size > 1 and np.any(np.diff(t) < 0):
            k = int(np.flatnonzero(np.diff(t) < 0)[0])
            raise InputError(f"{who}: click times are not in order: click {k + 2} at {float(t[k + 1])!r} s comes "
                             f"before click {k + 1} at {float(t[k])!r} s (clicks are listed in the order they "
                             "happened)")
        t = frozen(t)
    if dwell is not None:
        w = np.asarray(dwell, dtype=np.float64).reshape(-1)
        if w.size != c.size:
            raise InputError(f"{who}: {w.size} dwell times for {c.size} clicks")
        if np.any(w < 0) or np.any(np.isinf(w)):
            raise InputError(f"{who}: dwell times must be >= 0 seconds (NaN: unknown)")
        w = frozen(w)
    if ended is not None and not isinstance(ended, (bool, np.bool_)):
        raise InputError(f"{who}: `ended` must be true, false or absent, got {short(ended)}")
    return Session(query_id, shown, c, t, w, None if ended is None else bool(ended), str(session_id))


# ---------------------------------------------------------------------------
# Train/test splits
# ---------------------------------------------------------------------------

#: the kinds of split :func:`split_log` makes
SPLITS = ("query", "sessions")


def check_fraction(test_fraction: float) -> None:
    """The share of a log held out must leave sessions on both sides: in (0, 1)."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")


def split_by_query(log: ClickLog, test_fraction: float = 0.3, seed: int = 0) -> tuple[ClickLog, ClickLog]:
    """A seeded split that puts all sessions of a query on the same side.

    The distinct query ids (sorted) are permuted with ``seed``; queries go to
    the test side in that order while the test side holds fewer than
    ``round(test_fraction * len(log))`` sessions, so the test share is close
    to ``test_fraction`` of the sessions (it overshoots by at most one query's
    sessions).

    Parameters
    ----------
    log : ClickLog
    test_fraction : float
        Target share of the sessions in the test log, in (0, 1).
    seed : int

    Returns
    -------
    (ClickLog, ClickLog)
        Training and test sessions, each in the log's order.

    Raises
    ------
    ValueError
        When ``test_fraction`` is not in (0, 1), or the log has fewer than two
        queries (one side would be empty).
    """
    check_fraction(test_fraction)
    queries = log.query_ids()
    if len(queries) < 2:
        raise ValueError(f"a split by query needs at least two queries; the log has {len(queries)} "
                         "(split by sessions instead: split='sessions', --split sessions)")
    sizes = Counter(s.query_id for s in log.sessions)
    order = np.random.default_rng(seed).permutation(len(queries))
    target = max(1, int(round(test_fraction * len(log))))
    test_q: set[str] = set()
    n_test = 0
    for k in order[:-1]:  # the last query in the order always trains: neither side is empty
        if n_test >= target:
            break
        test_q.add(queries[k])
        n_test += sizes[queries[k]]
    train_i = [i for i, s in enumerate(log.sessions) if s.query_id not in test_q]
    test_i = [i for i, s in enumerate(log.sessions) if s.query_id in test_q]
    return log.subset(train_i), log.subset(test_i)


def split_log(log: ClickLog, test_fraction: float = 0.3, *, by: str = "query",
              seed: int = 0) -> tuple[ClickLog, ClickLog]:
    """Split a log into (train, test): by query (default) or by session.

    Parameters
    ----------
    log : ClickLog
    test_fraction : float
        Share of the sessions held out, in (0, 1).
    by : {'query', 'sessions'}
        ``'query'``: all sessions of a query on one side (`split_by_query`);
        ``'sessions'``: a random share of the sessions
        ([`ClickLog.split`][irmeasures_markov.calibration.ClickLog.split]).
    seed : int

    Returns
    -------
    (ClickLog, ClickLog)

    Raises
    ------
    ValueError
        An unknown ``by``, a fraction outside (0, 1), or a split by query of a
        log with one query.
    """
    if by == "query":
        return split_by_query(log, test_fraction, seed)
    if by == "sessions":
        return log.split(test_fraction, seed=seed)
    raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {by!r}")


def describe_split(kind: str, *, fraction: float | None = None, seed: int | None = None,
                   source: str | None = None) -> dict:
    """What a report and its fit file record about the held-out sessions.

    Parameters
    ----------
    kind : {'query', 'sessions', 'file', 'none'}
        How the held-out sessions were chosen.
    fraction : optional
        The split's share and seed (``'query'``/``'sessions'``).
    seed : optional
        The split's share and seed (``'query'``/``'sessions'``).
    source : str, optional
        The test file (``'file'``).

    Returns
    -------
    dict
        ``{"kind": ..., "fraction": ..., "seed": ...}`` or ``{"kind": "file", "source": ...}``.
    """
    out: dict = {"kind": kind}
    if kind in SPLITS:
        out.update(fraction=float(fraction), seed=int(seed))
    elif kind == "file" and source:
        out["source"] = str(source)
    return out


def split_text(split: dict | None) -> str:
    """One line for a report: which sessions were held out."""
    if not split or split.get("kind") == "none":
        return "no held-out sessions (candidates compared by AIC)"
    kind = split.get("kind")
    if kind == "file":
        return f"held out: the test log{' ' + split['source'] if split.get('source') else ''}"
    how = "by query (all sessions of a query on one side)" if kind == "query" else "by session"
    return f"held out: {split.get('fraction', 0):.0%} of the sessions, split {how}, seed {split.get('seed')}"
