"""What the click models share: parameter look-up, the Beta pseudo-counts, the EM loop.

Query-document parameters (attractiveness, satisfaction) are estimated with
pseudo-counts ``prior = (alpha, beta)``: an estimate is
``(expected successes + alpha) / (trials + alpha + beta)``, the posterior mode
under a Beta(alpha + 1, beta + 1) prior, and a pair never seen in training gets
the prior mean ``alpha / (alpha + beta)`` (0.5 with the default ``(1, 1)``;
0.5 also when ``alpha + beta == 0``).  EM then maximises the log-likelihood
plus that log-prior (the *objective*); with ``prior=(0, 0)`` it maximises the
log-likelihood itself.  Position parameters (examination, continuation) have
no prior.

Sessions as arrays: what every click model's EM reads.

A log of ``N`` sessions becomes ``(N, D)`` arrays, ``D`` the deepest rank
shown: the index of each (query, document) pair shown (``-1`` past the end of
a shorter ranking), the click vector (rank clicked at least once, as
`click_vector` defines it)
and which ranks exist.  Query-document parameters are then flat arrays indexed
by those indices, and one E-step is a handful of array operations and
``np.bincount`` sums.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from irmeasures_markov.calibration._click_metrics import EPS, click_vector
from irmeasures_markov.calibration._logs import Session

__all__ = ["Encoded", "encode", "pair_index", "grade_index", "State", "Flat", "flatten", "lookup", "unseen_value",
           "estimate", "counted_attractiveness", "log_prior", "objective", "counted", "run_em", "safe_log"]


# ---------------------------------------------------------------------------
# Sessions as arrays
# ---------------------------------------------------------------------------

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
        for d in s.shown:
            index.setdefault((s.query_id, d), len(index))
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
    judged = {k: int(g) for (q, d), k in pairs.items() if (g := qrels.get(q, {}).get(d)) is not None}
    grades = sorted(set(judged.values()))
    pos = {g: i for i, g in enumerate(grades)}
    mapping = np.arange(len(pairs), dtype=np.int64) + len(grades)
    mapping[list(judged)] = [pos[g] for g in judged.values()]
    return mapping, grades


def encode(sessions: Sequence[Session], index: Mapping[tuple[str, str], int]) -> Encoded:
    """The arrays of ``sessions``; a pair absent from ``index`` gets ``-2`` (the unseen-pair slot: `lookup`).

    Parameters
    ----------
    sessions : sequence of Session
    index : mapping
        (query id, document id) -> parameter index.

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
        items[i, :m] = [get((q, doc), -2) for doc in s.shown]
        if s.n_clicks:
            clicks[i, :m] = click_vector(s)
    mask = np.arange(d)[None, :] < lengths[:, None]
    return Encoded(items=items, clicks=clicks, mask=mask, lengths=lengths)


# ---------------------------------------------------------------------------
# Parameters and EM
# ---------------------------------------------------------------------------

@dataclass
class State:
    """Fitted parameters: per-item tables and position parameters."""
    attr: np.ndarray
    sat: np.ndarray | None = None
    exam: np.ndarray | None = None
    gamma: float | None = None
    history: list[float] = field(default_factory=list)
    objective: list[float] = field(default_factory=list)


@dataclass
class Flat:
    """The shown (session, rank) cells of an `Encoded` log, flattened."""
    session: np.ndarray
    rank: np.ndarray        # 0-based
    item: np.ndarray
    click: np.ndarray
    counts: np.ndarray      # shows per item


def flatten(enc: Encoded, n_items: int) -> Flat:
    rows, cols = np.nonzero(enc.mask)
    item = enc.items[rows, cols]
    return Flat(session=rows, rank=cols, item=item, click=enc.clicks[rows, cols],
                counts=np.bincount(item, minlength=n_items).astype(np.float64))


def unseen_value(prior: tuple[float, float]) -> float:
    """The prior mean ``alpha / (alpha + beta)`` (0.5 when both are 0)."""
    a, b = prior
    return a / (a + b) if a + b > 0 else 0.5


def lookup(table: np.ndarray, items: np.ndarray, unseen: float) -> np.ndarray:
    """``table[items]`` with ``-1`` (past the ranking's end) -> 0 and ``-2`` (unseen pair) -> ``unseen``."""
    return np.concatenate([table, [unseen, 0.0]])[items]


def estimate(successes: np.ndarray, trials: np.ndarray, prior: tuple[float, float]) -> np.ndarray:
    """``(successes + alpha) / (trials + alpha + beta)``; the prior mean where that is 0/0."""
    a, b = prior
    den = trials + a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (successes + a) / den
    return np.where(den > 0, out, unseen_value(prior))


def counted_attractiveness(deepest: np.ndarray, enc: Encoded, flat: Flat, n_items: int,
                           prior: tuple[float, float]) -> np.ndarray:
    """Attractiveness by counting: clicks over shows at the ranks down to each session's ``deepest`` rank
    (1-based; every rank of a session where it is 0), the examined ranks of CM and SDBN."""
    stop = np.where(deepest > 0, deepest, enc.lengths)[flat.session]
    seen = flat.rank + 1 <= stop
    return estimate(np.bincount(flat.item[seen], flat.click[seen], n_items),
                    np.bincount(flat.item[seen], minlength=n_items).astype(np.float64), prior)


def log_prior(values: np.ndarray | None, prior: tuple[float, float]) -> float:
    """``sum(alpha log v + beta log(1 - v))``: the log of the Beta prior, up to a constant."""
    a, b = prior
    if values is None or (a == 0 and b == 0):
        return 0.0
    v = np.clip(values, EPS, 1 - EPS)
    return float(a * np.log(v).sum() + b * np.log1p(-v).sum())


def objective(ll: float, state: State, prior: tuple[float, float]) -> float:
    """What EM never decreases: the log-likelihood plus the log-prior of the fitted tables (attractiveness and,
    where the model has it, satisfaction)."""
    return ll + log_prior(state.attr, prior) + log_prior(state.sat, prior)


def counted(state: State, ll: float, prior: tuple[float, float]) -> State:
    """A counting model's fit (CM, SDBN): its history and objective hold the one log-likelihood it has."""
    state.history, state.objective = [ll], [objective(ll, state, prior)]
    return state


def safe_log(p: np.ndarray) -> np.ndarray:
    """``log`` of probabilities clipped to [EPS, 1] (click_metrics' EPS)."""
    return np.log(np.clip(p, EPS, 1.0))


def run_em(step: Callable[[State], tuple[float, State]], state: State, *, prior: tuple[float, float],
           iterations: int, tol: float, n_sessions: int) -> State:
    """Iterate ``step`` (E-step at the current parameters -> their log-likelihood, M-step -> new ones).

    Stops after ``iterations`` M-steps or when the objective rises by less than
    ``tol`` per session.  The returned state's ``history`` holds the training
    log-likelihood of every iterate (initial parameters first, final last) and
    ``objective`` the log-likelihood plus log-prior that EM never decreases (`objective`).
    """
    history: list[float] = []
    obj: list[float] = []
    for _ in range(iterations):
        ll, new = step(state)
        history.append(ll)
        obj.append(objective(ll, state, prior))
        state = new
        if len(obj) > 1 and obj[-1] - obj[-2] < tol * max(n_sessions, 1):
            break
    ll, _ = step(state)
    history.append(ll)
    obj.append(objective(ll, state, prior))
    state.history, state.objective = history, obj
    return state
