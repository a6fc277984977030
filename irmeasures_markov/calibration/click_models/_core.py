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
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from irmeasures_markov.calibration._click_metrics import EPS
from irmeasures_markov.calibration.click_models._data import Encoded

__all__ = ["State", "Flat", "flatten", "lookup", "unseen_value", "estimate", "counted_attractiveness",
           "log_prior", "run_em", "safe_log"]


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
    """The shown (session, rank) cells of an :class:`Encoded` log, flattened."""
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
    ext = np.concatenate([table, [unseen, 0.0]])
    return ext[items]


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


def safe_log(p: np.ndarray) -> np.ndarray:
    """``log`` of probabilities clipped to [EPS, 1] (click_metrics' EPS)."""
    return np.log(np.clip(p, EPS, 1.0))


def run_em(step: Callable[[State], tuple[float, State]], objective: Callable[[float, State], float],
           state: State, *, iterations: int, tol: float, n_sessions: int) -> State:
    """Iterate ``step`` (E-step at the current parameters -> their log-likelihood, M-step -> new ones).

    Stops after ``iterations`` M-steps or when the objective rises by less than
    ``tol`` per session.  The returned state's ``history`` holds the training
    log-likelihood of every iterate (initial parameters first, final last) and
    ``objective`` the log-likelihood plus log-prior that EM never decreases.
    """
    history: list[float] = []
    obj: list[float] = []
    for _ in range(iterations):
        ll, new = step(state)
        history.append(ll)
        obj.append(objective(ll, state))
        state = new
        if len(obj) > 1 and obj[-1] - obj[-2] < tol * max(n_sessions, 1):
            break
    ll, _ = step(state)
    history.append(ll)
    obj.append(objective(ll, state))
    state.history, state.objective = history, obj
    return state
