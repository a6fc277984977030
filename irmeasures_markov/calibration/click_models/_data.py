"""Sessions as arrays: what every click model's EM reads.

A log of ``N`` sessions becomes ``(N, D)`` arrays, ``D`` the deepest rank
shown: the index of each (query, document) pair shown (``-1`` past the end of
a shorter ranking), the click vector (rank clicked at least once, as
:func:`~irmeasures_markov.calibration._click_metrics.click_vector` defines it)
and which ranks exist.  Query-document parameters are then flat arrays indexed
by those indices, and one E-step is a handful of array operations and
``np.bincount`` sums.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from irmeasures_markov.calibration._click_metrics import click_vector
from irmeasures_markov.calibration._logs import Session

__all__ = ["Encoded", "encode", "pair_index", "grade_index"]


@dataclass
class Encoded:
    """A log as arrays.

    Attributes
    ----------
    items : ndarray of int64, shape (N, D)
        Parameter index of the document at each rank (``-1`` where the ranking is shorter).
    clicks : ndarray of float64, shape (N, D)
        1.0 where the rank was clicked at least once.
    mask : ndarray of bool, shape (N, D)
        Ranks shown.
    lengths : ndarray of int64, shape (N,)
        Ranking lengths.
    """
    items: np.ndarray
    clicks: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray

    @property
    def n_sessions(self) -> int:
        return int(self.items.shape[0])

    @property
    def depth(self) -> int:
        return int(self.items.shape[1])

    def last_click(self) -> np.ndarray:
        """Rank (1-based) of each session's deepest click; 0 without clicks."""
        d = self.depth
        ranks = np.arange(1, d + 1)
        return (self.clicks * ranks).max(axis=1).astype(np.int64) if d else np.zeros(self.n_sessions, np.int64)

    def first_click(self) -> np.ndarray:
        """Rank (1-based) of each session's first click (by rank); 0 without clicks."""
        c = self.clicks > 0
        first = c.argmax(axis=1) + 1
        return np.where(c.any(axis=1), first, 0).astype(np.int64)

    def previous_click(self) -> np.ndarray:
        """For each rank, the rank of the closest click above it (0 = none): UBM's r'."""
        n, d = self.items.shape
        out = np.zeros((n, d), dtype=np.int64)
        last = np.zeros(n, dtype=np.int64)
        for r in range(d):
            out[:, r] = last
            last = np.where(self.clicks[:, r] > 0, r + 1, last)
        return out


def pair_index(sessions: Sequence[Session]) -> dict[tuple[str, str], int]:
    """An index for every (query id, document id) pair shown, in order of first appearance."""
    index: dict[tuple[str, str], int] = {}
    for s in sessions:
        q = s.query_id
        for d in s.shown:
            index.setdefault((q, d), len(index))
    return index


def grade_index(sessions: Sequence[Session], qrels: Mapping[str, Mapping[str, int]],
                pairs: Mapping[tuple[str, str], int]) -> tuple[np.ndarray, list[int]]:
    """Map pair indices to tied indices: one per judged grade, the pair's own for unjudged pairs.

    Returns
    -------
    (mapping, grades)
        ``mapping[k]`` is the tied index of pair ``k``: ``0..G-1`` for the
        ``G`` grades judged (sorted, listed in ``grades``), ``G + k`` for an
        unjudged pair (it keeps a parameter of its own, left out of the by-grade values).
    """
    judged = {}
    for (q, d), k in pairs.items():
        g = qrels.get(q, {}).get(d)
        if g is not None:
            judged[k] = int(g)
    grades = sorted(set(judged.values()))
    pos = {g: i for i, g in enumerate(grades)}
    mapping = np.arange(len(pairs), dtype=np.int64) + len(grades)
    for k, g in judged.items():
        mapping[k] = pos[g]
    return mapping, grades


def encode(sessions: Sequence[Session], index: Mapping[tuple[str, str], int], *, missing: int = -2) -> Encoded:
    """The arrays of ``sessions``; a pair absent from ``index`` gets ``missing`` (the unseen-pair slot).

    Parameters
    ----------
    sessions : sequence of Session
    index : mapping
        (query id, document id) -> parameter index.
    missing : int
        Index given to pairs not in ``index``.

    Returns
    -------
    Encoded
    """
    n = len(sessions)
    lengths = np.fromiter((s.n_shown for s in sessions), dtype=np.int64, count=n)
    d = int(lengths.max()) if n else 0
    items = np.full((n, d), -1, dtype=np.int64)
    clicks = np.zeros((n, d), dtype=np.float64)
    get = index.get
    for i, s in enumerate(sessions):
        q = s.query_id
        m = lengths[i]
        items[i, :m] = [get((q, doc), missing) for doc in s.shown]
        if s.n_clicks:
            clicks[i, :m] = click_vector(s)
    mask = np.arange(d)[None, :] < lengths[:, None]
    return Encoded(items=items, clicks=clicks, mask=mask, lengths=lengths)
