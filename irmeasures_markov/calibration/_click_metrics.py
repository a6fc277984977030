r"""How well a model predicts clicks: held-out log-likelihood, click perplexity, click-through rates.

The standard definitions of the click-model literature (Chuklin, Markov & de
Rijke, *Click Models for Web Search*, 2015, §4; PyClick's implementation), the
same for this package's user models and for the click models
(`irmeasures_markov.calibration.click_models`), so their rows compare:

* a session's **click vector** $c_r\in\{0,1\}$: whether rank ``r``
  (1-based) was clicked at least once, for the ranks shown up to ``depth``;
* **log-likelihood** of a session: $\log P(C_1=c_1,\dots,C_R=c_R)$,
  natural log, the model's joint probability of the observed click vector;
* **perplexity at rank r**:
  $p_r = 2^{-\frac{1}{N_r}\sum_s \log_2 P_s(C_r=c^s_r)}$, with
  $P_s(C_r=1)$ the model's *unconditional* click probability at rank
  ``r`` in session ``s`` and $N_r$ the sessions that show rank ``r``;
  the **perplexity** is the mean of $p_r$ over ranks 1..``depth``.
  A model that always predicts 0.5 has perplexity 2; a perfect one 1.

A model is anything with two methods (`ClickPredictor`):
``click_probabilities(session)``, the unconditional $P(C_r=1)$ for each
rank shown, and ``session_loglik(session)``, the log-likelihood above.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from irmeasures_markov.calibration._logs import Session

__all__ = ["ClickPredictor", "ClickMetrics", "click_vector", "click_metrics", "DEPTH", "EPS"]

#: ranks the perplexity averages over (the click-model literature's top 10)
DEPTH = 10
#: probabilities are clipped to [EPS, 1 - EPS] before taking logs (a model that is certain and wrong would
#: otherwise have an infinite perplexity)
EPS = 1e-10


class ClickPredictor(Protocol):
    """What [`click_metrics`][irmeasures_markov.calibration.click_metrics] reads of a model."""

    def click_probabilities(self, session: Session) -> np.ndarray:
        """Unconditional P(click at rank r), r = 1..len(session.shown)."""

    def session_loglik(self, session: Session) -> float:
        """Natural log of the probability of the session's click vector."""


def click_vector(session: Session) -> np.ndarray:
    """Whether each rank shown was clicked at least once: a 0/1 int array.

    Parameters
    ----------
    session : Session
        The session.

    Returns
    -------
    numpy.ndarray
    """
    n = session.n_shown
    out = np.zeros(n, dtype=np.int64)
    clicks = np.asarray(session.clicks, dtype=np.int64)
    clicks = clicks[(clicks >= 1) & (clicks <= n)]
    out[clicks - 1] = 1
    return out


@dataclass
class ClickMetrics:
    """Click-prediction quality of one model on one set of sessions.

    Attributes
    ----------
    n_sessions : int
        Sessions scored.
    loglik : float
        Total log-likelihood (natural log).
    loglik_per_session : float
        ``loglik / n_sessions``.
    perplexity : float
        Mean over ranks 1..depth of the per-rank perplexity.
    perplexity_per_rank : numpy.ndarray
        Perplexity at each rank 1..depth (NaN where no session shows the rank).
    ctr_observed : numpy.ndarray
        Observed click-through rate at each rank.
    ctr_predicted : numpy.ndarray
        Mean predicted click probability at each rank.
    depth : int
        Ranks considered.
    """
    n_sessions: int
    loglik: float
    loglik_per_session: float
    perplexity: float
    perplexity_per_rank: np.ndarray
    ctr_observed: np.ndarray
    ctr_predicted: np.ndarray
    depth: int

    def as_dict(self) -> dict[str, object]:
        """A JSON-able form (lists for arrays), as fit files store it.

        Returns
        -------
        dict
        """
        return {k: [float(x) for x in v] if isinstance(v, np.ndarray) else v for k, v in vars(self).items()}


def click_metrics(model: ClickPredictor, sessions: Iterable[Session] | Sequence[Session],
                  depth: int = DEPTH) -> ClickMetrics:
    """Held-out log-likelihood, click perplexity (overall and per rank) and CTRs of a model on sessions.

    Parameters
    ----------
    model : ClickPredictor
        Any object with ``click_probabilities(session)`` and ``session_loglik(session)``.
    sessions : iterable of Session
        The sessions to score (e.g. a held-out log).
    depth : int
        Ranks the perplexity and CTRs cover.

    Returns
    -------
    ClickMetrics
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    sessions = list(sessions)
    n = len(sessions)
    ranks = np.minimum(np.fromiter((s.n_shown for s in sessions), dtype=np.int64, count=n), depth)
    shown_at = np.arange(depth)[None, :] < ranks[:, None]
    # each session's click vector and the model's unconditional click probabilities (ranks not shown: unused)
    clicked_at = np.zeros((n, depth), dtype=bool)
    p = np.full((n, depth), 0.5)
    for i, s in enumerate(sessions):
        r = int(ranks[i])
        if r:
            clicked_at[i, :r] = click_vector(s)[:r]
            p[i, :r] = np.asarray(model.click_probabilities(s), dtype=np.float64)[:r]
    loglik = float(sum(float(model.session_loglik(s)) for s in sessions))
    np.clip(p, EPS, 1.0 - EPS, out=p)
    log2_p = np.where(clicked_at, np.log2(p), np.log2(1.0 - p))
    log2_sum = np.where(shown_at, log2_p, 0.0).sum(axis=0)
    shown = shown_at.sum(axis=0).astype(np.float64)
    clicked = clicked_at.sum(axis=0).astype(np.float64)
    predicted = np.where(shown_at, p, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_rank = np.where(shown > 0, 2.0 ** (-log2_sum / np.maximum(shown, 1)), np.nan)
        ctr_obs = np.where(shown > 0, clicked / np.maximum(shown, 1), np.nan)
        ctr_pred = np.where(shown > 0, predicted / np.maximum(shown, 1), np.nan)
    seen = shown > 0
    return ClickMetrics(n_sessions=n, loglik=loglik, loglik_per_session=loglik / n if n else float("nan"),
                        perplexity=float(per_rank[seen].mean()) if seen.any() else float("nan"),
                        perplexity_per_rank=per_rank, ctr_observed=ctr_obs, ctr_predicted=ctr_pred, depth=depth)
