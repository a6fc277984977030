r"""The cascade family: the cascade model, CM, and the dynamic Bayesian network model, DBN, with its simplified
form SDBN.

**CM** (Craswell et al. 2008; Chuklin, Markov & de Rijke 2015, §3.2).

The user examines ranks top-down, clicks an attractive document
($\alpha_{qd}$) and stops there:
$P(C_r=1)=\alpha_r\prod_{i<r}(1-\alpha_i)$.

Fitted by counting, which is the maximum-likelihood estimate of the model: the
ranks down to a session's first click are examined (the first click's document
was attractive, the ones above it were not); a session without clicks examined
every rank.  Ranks below the first click are ignored when fitting.  The model
gives a session with a second click probability 0; its log-likelihood clips
each conditional click probability to ``[EPS, 1 - EPS]``
(`EPS`), so such a session
scores ``log(EPS)`` per impossible click rather than minus infinity.

**DBN** (Chapelle & Zhang 2009) and SDBN.

The user examines rank 1; at an examined rank she clicks an attractive
document ($\alpha_{qd}$); after a click she is satisfied with
probability $\sigma_{qd}$ and stops; otherwise she examines the next rank
with probability $\gamma$ (the continuation):
$E_1=1$, $C_r=E_rA_r$, $S_r=C_r\,\mathrm{Bern}(\sigma)$,
$E_{r+1}=E_r(1-S_r)\,\mathrm{Bern}(\gamma)$.

DBN is fitted by EM.  With ``l`` the session's last clicked rank, every rank
down to ``l`` was examined, the unclicked ones there were unattractive, the
clicks above ``l`` did not satisfy; what happens after ``l`` is hidden.  A
backward pass gives ``Z_r`` = P(no click at ranks >= r | E_r = 1) and a forward
pass the examination posteriors below ``l``; from them the expected
attractive, satisfied and continued counts (all sessions at once, one array
operation per rank).

SDBN is DBN with $\gamma = 1$, fitted by counting (Chapelle & Zhang's
simplified estimate): ranks down to the last click were examined (every rank
when there is no click), and the last click, only it, satisfied.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._click_metrics import EPS
from irmeasures_markov.calibration.click_models._core import (
    Encoded,
    Flat,
    State,
    counted,
    counted_attractiveness,
    estimate,
    run_em,
    safe_log,
)

__all__ = ["fit_cm", "cm_loglik", "cm_probabilities", "fit_dbn", "fit_sdbn", "loglik", "probabilities", "posteriors"]


# ---------------------------------------------------------------------------
# DBN and SDBN
# ---------------------------------------------------------------------------

def posteriors(a: np.ndarray, s: np.ndarray, gamma: float, enc: Encoded, *, loglik_only: bool = False):
    """E-step of every session at once.

    Returns
    -------
    (loglik, post_a, post_s, cont_num, cont_den)
        Per-session log-likelihood; per-cell P(A=1 | clicks) and P(S=1 | clicks)
        (the latter meaningful at clicked cells); per-session expected counts
        of continuations and of chances to continue.  With ``loglik_only``,
        the log-likelihood alone (the forward pass is skipped).
    """
    n, d = a.shape
    mask = enc.mask
    c = enc.clicks > 0
    last = enc.last_click()
    rows = np.arange(n)
    a = np.where(mask, a, 0.0)
    s = np.where(mask, s, 0.0)
    z = np.ones((n, d + 1))                    # z[:, j] = P(no click at ranks j+1.. | examined rank j+1)
    for j in range(d - 1, -1, -1):
        z[:, j] = np.where(mask[:, j], (1.0 - a[:, j]) * (1.0 - gamma + gamma * z[:, j + 1]), 1.0)
    has = last > 0
    li = np.maximum(last - 1, 0)               # 0-based column of the last click
    s_l = np.where(has, s[rows, li], 0.0)
    w = np.where(has, (1.0 - s_l) * gamma, 1.0)   # P(examine rank l+1 | the clicks so far)
    x = np.where(has, s_l + (1.0 - s_l) * (1.0 - gamma), 0.0) + w * z[rows, last]
    col = np.arange(d)[None, :]
    above = col < (last - 1)[:, None]           # ranks strictly above the last click
    before = col < last[:, None]                # ranks down to the last click
    # log-likelihood: ranks above l, the click at l, then P(no click after l)
    ll_cells = np.where(c, safe_log(a) + safe_log(1.0 - s), safe_log(1.0 - a)) + np.log(max(gamma, 1e-300))
    ll = np.where(above & mask, ll_cells, 0.0).sum(axis=1)
    ll += np.where(has, safe_log(a[rows, li]), 0.0) + safe_log(x)
    if loglik_only:
        return ll
    # examination posterior below l: forward alpha times backward z
    eps = np.zeros((n, d + 1))
    alpha = np.zeros(n)
    for j in range(d):
        alpha = np.where(j == last, w, alpha * (1.0 - a[:, j - 1]) * gamma if j else 0.0)
        eps[:, j] = np.where(j < last, 1.0, alpha * z[:, j] / x)
    eps = eps[:, :d]
    post_a = np.where(c, 1.0, np.where(before, 0.0, a * (1.0 - eps)))
    post_s = np.where(has[:, None] & (col == li[:, None]), s / x[:, None], 0.0)
    # continuations from rank j+1 to j+2, j+1 < n: certain above l, expected from l on
    trans = col < (enc.lengths - 1)[:, None]
    nxt = np.concatenate([eps[:, 1:], np.zeros((n, 1))], axis=1)
    at_click = has[:, None] & (col == li[:, None])       # the last click's rank: counted below
    cont_den = np.where(trans, np.where(above, 1.0, np.where(at_click, 0.0, eps)), 0.0).sum(axis=1)
    cont_num = np.where(trans, np.where(above, 1.0, np.where(at_click, 0.0, nxt)), 0.0).sum(axis=1)
    # the step from the last click: (1 - s_l)(1 - gamma + gamma z_{l+1}) / x chances, eps_{l+1} continuations
    at_l = has & (last < enc.lengths)
    cont_den += np.where(at_l, (1.0 - s_l) * (1.0 - gamma + gamma * z[rows, last]) / x, 0.0)
    cont_num += np.where(at_l, eps[rows, np.minimum(last, d - 1)], 0.0)
    return ll, post_a, post_s, cont_num, cont_den


def fit_dbn(enc: Encoded, flat: Flat, n_items: int, *, iterations: int, tol: float,
            prior: tuple[float, float], gamma: float | None = None) -> State:
    """DBN by EM; with ``gamma``, the continuation is held at it (only attractiveness and satisfaction are fitted)."""
    items = np.maximum(enc.items, 0)
    clicked = np.bincount(flat.item, flat.click, n_items)

    def step(st: State):
        a, s = st.attr[items], st.sat[items]
        ll, pa, ps, num, den = posteriors(a, s, st.gamma, enc)
        r, cidx = flat.session, flat.rank
        attr = estimate(np.bincount(flat.item, pa[r, cidx], n_items), flat.counts, prior)
        sat = estimate(np.bincount(flat.item, ps[r, cidx] * flat.click, n_items), clicked, prior)
        tot = den.sum()
        g = float(num.sum() / tot) if tot > 0 and gamma is None else st.gamma
        return float(ll.sum()), State(attr=attr, sat=sat, gamma=g)

    init = State(attr=np.full(n_items, 0.5), sat=np.full(n_items, 0.5), gamma=0.5 if gamma is None else float(gamma))
    return run_em(step, init, prior=prior, iterations=iterations, tol=tol, n_sessions=enc.n_sessions)


def fit_sdbn(enc: Encoded, flat: Flat, n_items: int, *, iterations: int = 0, tol: float = 0.0,
             prior: tuple[float, float] = (1.0, 1.0)) -> State:
    """SDBN by counting (``iterations`` and ``tol`` are not used)."""
    last = enc.last_click()
    attr = counted_attractiveness(last, enc, flat, n_items, prior)
    is_last = (flat.click > 0) & (flat.rank + 1 == last[flat.session])
    sat = estimate(np.bincount(flat.item, is_last.astype(np.float64), n_items),
                   np.bincount(flat.item, flat.click, n_items), prior)
    items = np.maximum(enc.items, 0)
    ll = float(loglik(attr[items], sat[items], 1.0, enc).sum())
    return counted(State(attr=attr, sat=sat, gamma=1.0), ll, prior)


def loglik(a: np.ndarray, s: np.ndarray, gamma: float, enc: Encoded) -> np.ndarray:
    """Log-probability of each session's click vector."""
    return posteriors(a, s, gamma, enc, loglik_only=True)


def probabilities(a: np.ndarray, s: np.ndarray, gamma: float, enc: Encoded) -> np.ndarray:
    """Unconditional click probability of each cell."""
    n, d = a.shape
    a = np.where(enc.mask, a, 0.0)
    s = np.where(enc.mask, s, 0.0)
    out = np.zeros((n, d))
    e = np.ones(n)
    for j in range(d):
        out[:, j] = e * a[:, j]
        e = gamma * e * (1.0 - a[:, j] * s[:, j])
    return out


# ---------------------------------------------------------------------------
# CM
# ---------------------------------------------------------------------------

def fit_cm(enc: Encoded, flat: Flat, n_items: int, *, iterations: int = 0, tol: float = 0.0,
           prior: tuple[float, float] = (1.0, 1.0)) -> State:
    """CM by counting (``iterations`` and ``tol`` are not used)."""
    attr = counted_attractiveness(enc.first_click(), enc, flat, n_items, prior)
    ll = float(cm_loglik(attr[np.maximum(enc.items, 0)] * enc.mask, enc).sum())
    return counted(State(attr=attr), ll, prior)


def cm_loglik(a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Log-probability of each session's click vector."""
    c = enc.clicks > 0
    first = enc.first_click()
    rank = np.arange(1, enc.depth + 1)[None, :]
    f = np.where(first > 0, first, enc.depth + 1)[:, None]
    p = np.where(rank <= f, a, 0.0)                      # conditional P(click) given the clicks above
    p = np.clip(p, EPS, 1.0 - EPS)
    return np.where(enc.mask, np.log(np.where(c, p, 1.0 - p)), 0.0).sum(axis=1)


def cm_probabilities(a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Unconditional click probability of each cell."""
    a = np.where(enc.mask, a, 0.0)
    reach = np.cumprod(np.concatenate([np.ones((a.shape[0], 1)), 1.0 - a[:, :-1]], axis=1), axis=1)
    return reach * a
