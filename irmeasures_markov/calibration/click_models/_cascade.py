r"""The cascade model, CM (Craswell et al. 2008; Chuklin, Markov & de Rijke 2015, §3.2).

The user examines ranks top-down, clicks an attractive document
(:math:`\alpha_{qd}`) and stops there:
:math:`P(C_r=1)=\alpha_r\prod_{i<r}(1-\alpha_i)`.

Fitted by counting, which is the maximum-likelihood estimate of the model: the
ranks down to a session's first click are examined (the first click's document
was attractive, the ones above it were not); a session without clicks examined
every rank.  Ranks below the first click are ignored when fitting.  The model
gives a session with a second click probability 0; its log-likelihood clips
each conditional click probability to ``[EPS, 1 - EPS]``
(:data:`~irmeasures_markov.calibration._click_metrics.EPS`), so such a session
scores ``log(EPS)`` per impossible click rather than minus infinity.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._click_metrics import EPS
from irmeasures_markov.calibration.click_models._core import Flat, State, counted_attractiveness, log_prior
from irmeasures_markov.calibration.click_models._data import Encoded

__all__ = ["fit_cm", "loglik", "probabilities"]


def fit_cm(enc: Encoded, flat: Flat, n_items: int, *, iterations: int = 0, tol: float = 0.0,
           prior: tuple[float, float] = (1.0, 1.0)) -> State:
    """CM by counting (``iterations`` and ``tol`` are not used)."""
    st = State(attr=counted_attractiveness(enc.first_click(), enc, flat, n_items, prior))
    ll = float(loglik(st.attr[np.maximum(enc.items, 0)] * enc.mask, enc).sum())
    st.history, st.objective = [ll], [ll + log_prior(st.attr, prior)]
    return st


def loglik(a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Log-probability of each session's click vector."""
    c = enc.clicks > 0
    first = enc.first_click()
    rank = np.arange(1, enc.depth + 1)[None, :]
    f = np.where(first > 0, first, enc.depth + 1)[:, None]
    p = np.where(rank <= f, a, 0.0)                      # conditional P(click) given the clicks above
    p = np.clip(p, EPS, 1.0 - EPS)
    return np.where(enc.mask, np.log(np.where(c, p, 1.0 - p)), 0.0).sum(axis=1)


def probabilities(a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Unconditional click probability of each cell."""
    a = np.where(enc.mask, a, 0.0)
    reach = np.cumprod(np.concatenate([np.ones((a.shape[0], 1)), 1.0 - a[:, :-1]], axis=1), axis=1)
    return reach * a
