"""The in-memory form of an interaction log: sessions of clicks on ranked lists.

A :class:`Session` is one query issued once: the ranked list shown, the clicks
in the order they happened (as 1-based ranks into that list, so a click model
never looks document ids up again), and, when the log has them, click times
and dwell times in seconds and whether the session's end was observed.
A :class:`ClickLog` is a sequence of sessions with a description of where they
came from (kept with every fit made from it, so a calibrated measure can cite
its log).

Every reader of this package (WSCD, our JSONL/TSV, pandas, ir_datasets query
logs) builds these objects, and every fit reads only them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["Session", "ClickLog"]


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
    shown: Tuple[str, ...]
    clicks: np.ndarray
    times: Optional[np.ndarray] = None
    dwell: Optional[np.ndarray] = None
    ended: Optional[bool] = None
    session_id: str = ""
    dropped_clicks: int = 0

    @property
    def n_shown(self) -> int:
        return len(self.shown)

    @property
    def n_clicks(self) -> int:
        return int(self.clicks.shape[0])

    @property
    def clicked_documents(self) -> List[str]:
        return [self.shown[r - 1] for r in self.clicks]


@dataclass
class ClickLog:
    """A sequence of :class:`Session` with a description of its source."""

    sessions: List[Session]
    description: str = ""
    source: str = ""
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(self.sessions)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.subset(range(len(self.sessions))[i])
        return self.sessions[i]

    @property
    def has_times(self) -> bool:
        return any(s.times is not None for s in self.sessions)

    @property
    def has_dwell(self) -> bool:
        return any(s.dwell is not None for s in self.sessions)

    def query_ids(self) -> List[str]:
        return sorted({s.query_id for s in self.sessions})

    def subset(self, indices: Iterable[int]) -> "ClickLog":
        """The chosen sessions; ``meta['dropped_clicks']``, when the log has it, counts theirs."""
        sessions = [self.sessions[i] for i in indices]
        meta = dict(self.meta)
        if "dropped_clicks" in meta:
            meta["dropped_clicks"] = sum(s.dropped_clicks for s in sessions)
        return ClickLog(sessions, self.description, self.source, meta)

    def split(self, test_fraction: float = 0.3, seed: int = 0) -> Tuple["ClickLog", "ClickLog"]:
        """A seeded random split of the sessions into (train, test)."""
        if not 0.0 < test_fraction < 1.0:
            raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
        n = len(self.sessions)
        perm = np.random.default_rng(seed).permutation(n)
        n_test = int(round(test_fraction * n))
        return self.subset(np.sort(perm[n_test:])), self.subset(np.sort(perm[:n_test]))
