r"""Time-Biased Gain's click probabilities and time parameters (Smucker & Clarke, SIGIR 2012) from logs.

Click probabilities (need qrels).  TBG's user reads summaries top-down and
clicks a relevant one with $P(C{=}1|R{=}1)$ (``pc_rel``), a
non-relevant one with $P(C{=}1|R{=}0)$ (``pc_nonrel``).  How far the user
reads is a nuisance here: a forward walk with a constant continuation
$p$ (the SFBM walk likelihood of `_walk`), so unclicked documents
above the last click count as read and not clicked, and those below it as
possibly unread.  Candidates: the fit, and the paper's calibration
(0.64, 0.39) with only $p$ fitted.

Time (needs click timestamps).  Half-life $h$: TBG's user is still
reading at time $t$ with probability $e^{-t\ln 2/h}$.  A session
whose end is observed (``ended`` and a known last dwell: the session ends when
the last dwell does) gives an exact leaving time; by memorylessness the time
from the first click to the end is exponential, so
$\hat h = \ln 2 \sum (t_{end}-t_1) / n_{ended}$, where sessions without an
observed end add their observed span as right-censored time.  Summary time
$T_S$: the gap between consecutive clicks minus the first one's dwell is
$T_S$ per rank moved (and the first click's time is $T_S$ per rank
down to it): $\hat T_S = \sum \text{gap} / \sum \text{ranks moved}$.
Intervals: bootstrap over sessions (the estimates are ratios of sums, so a
replicate costs one weighted sum).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._likelihood import Candidate, expit, logit
from irmeasures_markov.calibration._logs import ClickLog
from irmeasures_markov.calibration._walk import WalkData, walk_candidate

__all__ = ["candidates", "fit_times", "walk_arrays"]


def _make(name: str, fixed=None) -> Candidate:
    def unpack(th):
        th = np.asarray(th, dtype=np.float64)
        pc_rel, pc_nonrel = fixed if fixed is not None else (float(expit(th[1])), float(expit(th[2])))
        return {"p_continue": float(expit(th[0])), "pc_rel": pc_rel, "pc_nonrel": pc_nonrel}

    x0 = [logit(0.7)] + ([logit(0.5), logit(0.3)] if fixed is None else [])
    return walk_candidate(name, x0, unpack, walk_arrays)


def walk_arrays(data: WalkData, values: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, gamma) per group and rank (flat, ``data.n_ranks``): continuation ``p_continue``, no backward
    move, click probability ``pc_rel`` at relevant ranks and ``pc_nonrel`` at the others."""
    p = np.full(data.rel.shape, values["p_continue"])
    g = np.where(data.rel, values["pc_rel"], values["pc_nonrel"])
    return p, np.zeros_like(p), g


def candidates() -> list[Candidate]:
    r"""TBG's click model (Smucker & Clarke, SIGIR 2012) as candidates: the user reads on with a constant fitted
    continuation $p_\text{continue}$ and clicks a read document with $P(C|R)$ (``pc_rel``,
    ``pc_nonrel``): fitted (``clicks``) or the paper's 0.64 and 0.39 (``clicks(paper)``).

    Returns
    -------
    list of Candidate
    """
    return [_make("clicks"), _make("clicks(paper)", fixed=(0.64, 0.39))]


def fit_times(log: ClickLog, *, bootstrap: int = 200,
              rng: np.random.Generator | int | None = None) -> dict | None:
    r"""Half-life $\hat h$ and summary time $\hat T_S$ from click timestamps (module docstring).

    Parameters
    ----------
    log : ClickLog
    bootstrap : int
        Replicates of the bootstrap over sessions for the 95% intervals.
    rng : numpy Generator or seed, optional

    Returns
    -------
    dict or None
        ``{'params': {...}, 'intervals': {...}, 'n_sessions': n, 'survival': {...}}``;
        None when the log has no timestamps.
    """
    if not log.has_times:
        return None
    rng = np.random.default_rng(rng)
    span, ended, gap, moved = [], [], [], []
    for s in log:
        if s.times is None or s.n_clicks == 0:
            continue
        t = np.asarray(s.times, dtype=np.float64)
        d = np.asarray(s.dwell, dtype=np.float64) if s.dwell is not None else np.full(t.size, np.nan)
        c = s.clicks
        span.append(t[-1] + (d[-1] if np.isfinite(d[-1]) else 0.0) - t[0])   # to the end of the last known dwell
        ended.append(1.0 if bool(s.ended) and np.isfinite(d[-1]) else 0.0)
        g, m = float(t[0]), float(c[0])
        for k in range(1, t.size):
            if np.isfinite(d[k - 1]):
                g += t[k] - t[k - 1] - d[k - 1]
                m += abs(int(c[k]) - int(c[k - 1]))
        gap.append(g)
        moved.append(m)
    span, ended, gap, moved = map(np.asarray, (span, ended, gap, moved))
    n = span.size
    if n == 0:
        return None
    one = np.ones(n)   # the estimates are the bootstrap's below with every session once
    ne = one @ ended
    h = np.log(2.0) * (one @ span) / ne if ne > 0 else np.inf
    ts = (one @ gap) / (one @ moved) if one @ moved > 0 else np.nan
    params = {"halflife": float(h), "t_summary": float(ts)}
    intervals = {}
    if bootstrap > 0:
        W = rng.multinomial(n, np.full(n, 1.0 / n), size=bootstrap).astype(np.float64)
        ne = W @ ended
        hb = np.log(2.0) * (W @ span) / np.where(ne > 0, ne, np.nan)
        tb = (W @ gap) / (W @ moved)
        for name, v in (("halflife", hb), ("t_summary", tb)):
            v = v[np.isfinite(v)]
            if v.size:
                intervals[name] = tuple(float(x) for x in np.percentile(v, [2.5, 97.5]))
    # loglik of the exponential leaving times (exact + censored)
    lam = np.log(2.0) / h if np.isfinite(h) else 0.0
    ll = float(ended.sum() * np.log(lam) - lam * span.sum()) if lam > 0 else float("nan")
    grid = np.linspace(0, max(float(np.percentile(span, 99)), 1.0), 50)
    ends = np.sort(span[ended > 0])
    surv_emp = 1.0 - np.searchsorted(ends, grid, side="right") / max(ends.size, 1)
    return {"params": params, "intervals": intervals, "n_sessions": int(n), "n_ended": int(ended.sum()),
            "loglik": ll, "survival": {"survival_t": grid.tolist(), "survival_fitted": np.exp(-lam * grid).tolist(),
                                       "survival_empirical": surv_emp.tolist()}}
