r"""Markov Precision's transition kernel (and MPcont's holding rates) fitted to click sequences.

MP (Ferrante, Ferro & Maistro, SIGIR 2014) moves a user among ranks with
$p_{ij} = \alpha(i,j)/\sum_k \alpha(i,k)$ and *watches* the chain on the
relevant ranks $\mathcal R$.  A click log shows exactly such a watched
walk if clicks are the visits to the documents the user found worth opening:
the observation model here takes the set $S$ of ranks a session clicked
as $\mathcal R$ and the click sequence (consecutive repeats merged) as
the watched chain's path.  Conditional on $S$ and on the first click,
each next click $j \ne i$ has probability

- ``AD`` (chain on all ranks $1..T$): the censored chain on $S$,
  $\bar P = P_{SS} + P_{SN}(I-P_{NN})^{-1}P_{NS}$, renormalised without
  its diagonal (a return to $i$ through unclicked ranks is no new click);
- ``OR`` (chain on $S$ only): $\alpha(i,j)/\sum_{k\in S\setminus i}\alpha(i,k)$;

with ``GL`` every pair connected and ``LO`` neighbours only (in ranks for AD,
in the list $S$ for OR).  Kernels of the displacement $d=|i-j|$
with a fitted decay $\beta$ (the paper's models are $\beta = 1$):
``ID`` $(d+1)^{-\beta}$, ``LID`` $\log_{10}(d+2)^{-\beta}$; and two
non-parametric kernels, smoothed by a small penalty on the second differences
of their logarithm: ``nonparametric_OR`` a free weight per signed displacement
$j-i$ (forward and backward jumps may differ), ``nonparametric_AD`` a
free weight per distance $|j-i|$ on all ranks.  Sessions with fewer than two distinct
clicked ranks carry no transition and are left out, and so are sessions on
rankings longer than ``MAX_RANKS`` documents (the chain on all ranks costs
memory in the square of the ranking's length; ``fit`` says how many).

MPcont's holding rates $\mu_r$ are exponential rates of the dwell times
per rank, where the log has them: $\hat\mu_r = n_r / \sum d$, with
$n_r$ the uncensored dwells at rank $r$ and the sum over all
dwells there; the last click's dwell of a session is right-censored (the log
does not see the user finish reading), so it adds time but not a count —
unless the session's end is observed (``ended=True``: the last dwell ran to
the user's leaving, an exact dwell).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.calibration._likelihood import Candidate, group_patterns, safe_log
from irmeasures_markov.calibration._logs import ClickLog
from irmeasures_markov.calibration._walk import merged_tuple

stats = lazy_module("scipy.stats")

__all__ = ["MPData", "candidates", "fit_rates", "PAPER_MODELS"]

PAPER_MODELS = tuple(f"{c}_{s}_{k}" for c in ("GL", "LO") for s in ("AD", "OR") for k in ("ID", "LID"))
#: models whose decay changes the likelihood (LO_AD moves one rank at a time: the kernel cancels)
DECAY_MODELS = tuple(m for m in PAPER_MODELS if not m.startswith("LO_AD"))
SMOOTHING = 1.0
#: longest ranking whose sessions enter the kernel fit
MAX_RANKS = 100


class MPData:
    """Transitions between consecutive distinct clicks, grouped by (ranking length, clicked set)."""

    def __init__(self, log: ClickLog) -> None:
        ctx_index: dict[tuple[int, tuple[int, ...]], int] = {}
        keys = []
        cache: dict[bytes, tuple] = {}
        self.n_long = 0         # sessions with a transition left out: ranking longer than MAX_RANKS
        for s in log:
            raw = s.clicks.tobytes()
            hit = cache.get(raw)
            if hit is None:
                seq = merged_tuple(s.clicks)
                hit = cache[raw] = (seq, tuple(sorted(set(seq))))
            seq, S = hit
            if len(S) < 2:
                continue
            if s.n_shown > MAX_RANKS:
                self.n_long += 1
                continue
            ctx = ctx_index.setdefault((s.n_shown, S), len(ctx_index))
            keys.append((ctx, seq))
        self.patterns, self.counts, _ = group_patterns(keys)
        ctxs = list(ctx_index)
        self.T = max([c[0] for c in ctxs], default=2)
        self.ctx_len = np.array([c[0] for c in ctxs], dtype=np.int64)
        self.mask = np.zeros((len(ctxs), self.T), dtype=bool)
        for n, (_, S) in enumerate(ctxs):
            self.mask[n, np.array(S) - 1] = True
        moves = [(u, ctx, a - 1, b - 1) for u, (ctx, seq) in enumerate(self.patterns)
                 for a, b in zip(seq[:-1], seq[1:])]
        self.owner, self.c, self.i, self.j = (np.array(x, dtype=np.int64) for x in list(zip(*moves)) or [()] * 4)
        self.n_events = int(self.counts[self.owner].sum()) if self.owner.size else 0
        # observed signed jumps, for the jump-distribution plot
        d = self.j - self.i
        self.observed_jumps = np.bincount(d + self.T - 1, weights=self.counts[self.owner], minlength=2 * self.T - 1)


def _displacement_weights(T: int, kernel: str, decay: float = 1.0, table: np.ndarray | None = None):
    """(T, T) weights alpha(i, j), zero diagonal; ``table`` indexed by j - i + T - 1 for the signed kernel."""
    r = np.arange(T)
    D = r[None, :] - r[:, None]
    if table is not None:
        W = table[D + T - 1]
    else:
        d = np.abs(D).astype(np.float64)
        with np.errstate(divide="ignore"):
            base = d + 1.0 if kernel == "ID" else np.log10(d + 2.0)
            W = np.exp(-decay * np.log(base))
    W = np.array(W, dtype=np.float64)
    np.fill_diagonal(W, 0.0)
    return W


def transition_tables(data: MPData, conn: str, states: str, W: np.ndarray) -> np.ndarray:
    """(C, T, T): probability of the next distinct click j given the current i, per context.

    Parameters
    ----------
    data : MPData
    conn : {'GL', 'LO'}
        Every pair of ranks connected, or neighbours only.
    states : {'AD', 'OR'}
        The chain on all ranks (censored on the clicked set), or on the clicked set only.
    W : ndarray, shape (T, T)
        Kernel weights $\\alpha(i, j)$, zero diagonal.

    Returns
    -------
    ndarray, shape (contexts, T, T)
    """
    C, T = data.mask.shape
    inside = np.arange(T)[None, :] < data.ctx_len[:, None]
    if states == "AD":
        if conn == "LO":
            r = np.arange(T)
            W = W * (np.abs(r[:, None] - r[None, :]) == 1)
        if np.all(data.ctx_len == T):
            # one ranking length (the usual log): one chain for every context
            rs = W.sum(axis=1, keepdims=True)
            P = np.broadcast_to(W / np.where(rs > 0, rs, 1.0), (C, T, T))
        else:
            Wc = np.broadcast_to(W, (C, T, T)) * (inside[:, :, None] & inside[:, None, :])
            rs = Wc.sum(axis=2, keepdims=True)
            P = Wc / np.where(rs > 0, rs, 1.0)
        hidden = inside & ~data.mask
        X = np.matmul(P, np.linalg.inv(np.eye(T)[None] - hidden[:, :, None] * P))
        X *= data.mask[:, None, :]
    else:
        X = np.broadcast_to(W, (C, T, T)) * (data.mask[:, :, None] & data.mask[:, None, :])
        if conn == "LO":
            pos = np.cumsum(data.mask, axis=1) - 1
            X = X * (np.abs(pos[:, :, None] - pos[:, None, :]) == 1)
    X = np.array(X, dtype=np.float64)
    r = np.arange(T)
    X[:, r, r] = 0.0            # a return to the current rank is no new click
    rs = X.sum(axis=2, keepdims=True)
    X /= np.where(rs > 0, rs, 1.0)
    return X


def _loglik(data: MPData, Q: np.ndarray) -> np.ndarray:
    logp = safe_log(Q[data.c, data.i, data.j])
    return np.bincount(data.owner, weights=logp, minlength=len(data.patterns))


def _paper(model: str, fit_decay: bool) -> Candidate:
    conn, states, kern = model.split("_")

    def unpack(theta):
        return {"connectivity": conn, "states": states, "kernel": kern, "decay": float(theta[0]) if fit_decay else 1.0}

    def loglik(data, theta):
        W = _displacement_weights(data.T, kern, unpack(theta)["decay"])
        return _loglik(data, transition_tables(data, conn, states, W))

    name = f"{model}(decay)" if fit_decay else model
    return Candidate(name, [1.0] if fit_decay else [], loglik, unpack)


def _central(f, theta) -> list:
    """Central differences of ``f`` at ``theta``, one per coordinate (step 1e-5)."""
    h = 1e-5
    return [(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]


def _nonparametric(T: int) -> Candidate:
    """Free weights per signed displacement j - i (weight of +1 fixed at 1), log-scale, smoothed.

    The chain lives on the clicked ranks (OR, GL): a conditional logit in the
    log-weights, so its score has a closed form (observed minus expected jumps)."""
    disp = np.array([d for d in range(-(T - 1), T) if d != 0])
    free = disp[disp != 1]

    def table(theta):
        t = np.zeros(2 * T - 1)
        t[disp + T - 1] = 1.0
        t[free + T - 1] = np.exp(theta)
        return t

    def unpack(theta):
        t = table(theta)
        return {"connectivity": "GL", "states": "OR", "kernel": "nonparametric",
                "weights": {f"{int(d):+d}": float(t[d + T - 1]) for d in disp}}

    def tables(data, theta):
        return transition_tables(data, "GL", "OR", _displacement_weights(data.T, "", table=table(theta)))

    def loglik(data, theta):
        return _loglik(data, tables(data, theta))

    def scores(data, theta):
        """(U, k) score of one session of each pattern: observed minus expected jumps per free displacement."""
        Q = tables(data, theta)[data.c, data.i, :]                        # (E, T)
        col = np.full(2 * T - 1, -1)
        col[free + T - 1] = np.arange(free.size)
        U, k = len(data.patterns), free.size
        out = np.zeros((U, k))
        obs = col[data.j - data.i + T - 1]
        ok = obs >= 0
        np.add.at(out, (data.owner[ok], obs[ok]), 1.0)
        d = np.arange(T)[None, :] - data.i[:, None] + T - 1                # (E, T) displacement index
        cd = col[d]
        m = cd >= 0
        np.add.at(out, (np.broadcast_to(data.owner[:, None], d.shape)[m], cd[m]), -Q[m])
        return out

    def grad(data, theta):
        return data.counts @ scores(data, theta) - _central(penalty, theta)

    def penalty(theta):
        with np.errstate(divide="ignore"):
            full = np.log(table(theta))
        neg, pos = full[:T - 1][::-1], full[T:]        # d = -1, -2, ... and d = 1, 2, ...
        return SMOOTHING * sum(float(np.sum(np.diff(side, 2) ** 2)) for side in (neg, pos))

    x0 = [-np.log(abs(d)) - (0.5 if d < 0 else 0.0) for d in free]
    return Candidate("nonparametric_OR", x0, loglik, unpack, penalty=penalty, grad=grad, scores=scores)


def _nonparametric_ad(T: int) -> Candidate:
    r"""A free weight per distance |j - i| (distance 1 fixed at 1), chain on all ranks watched on the clicks.

    Symmetric, so the chain stays reversible as in the paper's AD models.  The
    score has a closed form: with $Y = (I - D_N P)^{-1}$ and
    $X = PY$, a change $dP$ of the transitions changes the
    censored chain by $dX = (I + X D_N)\,dP\,Y$."""
    dists = np.arange(2, T)

    def weights(theta):
        w = np.ones(T)
        w[0] = 0.0
        w[dists] = np.exp(theta)
        return w

    def unpack(theta):
        w = weights(theta)
        return {"connectivity": "GL", "states": "AD", "kernel": "nonparametric",
                "weights": {f"{s}{d}": float(w[d]) for d in range(1, T) for s in ("-", "+")}}

    def base(data, theta):
        Tn = data.T
        r = np.arange(Tn)
        D = np.abs(r[:, None] - r[None, :])
        W = weights(theta)[np.minimum(D, T - 1)] * (D > 0)
        return D, W

    def loglik(data, theta):
        _, W = base(data, theta)
        return _loglik(data, transition_tables(data, "GL", "AD", W))

    def scores(data, theta):
        D, W = base(data, theta)
        C, Tn = data.mask.shape
        if not np.all(data.ctx_len == Tn):
            return None
        rsum = W.sum(axis=1, keepdims=True)
        P = W / rsum
        hidden = ~data.mask
        Y = np.linalg.inv(np.eye(Tn)[None] - hidden[:, :, None] * P[None])
        X = np.matmul(P[None], Y)
        r = np.arange(Tn)
        Xm = X * data.mask[:, None, :]
        Xm[:, r, r] = 0.0
        R = Xm.sum(axis=2)
        XH = X * hidden[:, None, :]
        c, i, j = data.c, data.i, data.j
        xe = Xm[c, i, j]
        re = R[c, i]
        out = np.zeros((len(data.patterns), dists.size))
        for a, d in enumerate(dists):
            dW = np.where(D == d, W, 0.0)
            dP = (dW - P * dW.sum(axis=1, keepdims=True)) / rsum
            Z = np.matmul(dP[None], Y)
            dX = Z + np.matmul(XH, Z)
            dX *= data.mask[:, None, :]
            dX[:, r, r] = 0.0
            ev = dX[c, i, j] / xe - dX.sum(axis=2)[c, i] / re
            out[:, a] = np.bincount(data.owner, weights=ev, minlength=len(data.patterns))
        return out

    def penalty(theta):
        lw = np.log(weights(theta)[1:])
        return SMOOTHING * float(np.sum(np.diff(lw, 2) ** 2))

    def grad(data, theta):
        sc = scores(data, theta)
        if sc is None:      # rankings of several lengths: central differences of the total
            sc = np.stack(_central(lambda t: loglik(data, t), theta), axis=1)
        return data.counts @ sc - np.array(_central(penalty, theta))

    x0 = [-np.log(d) for d in dists]
    return Candidate("nonparametric_AD", x0, loglik, unpack, penalty=penalty, grad=grad, scores=scores)


def candidates(T: int = 10) -> list[Candidate]:
    r"""MP's candidate kernels (Ferrante, Ferro & Maistro, SIGIR 2014): the paper's models
    (``PAPER_MODELS``, $\beta = 1$), the ``DECAY_MODELS`` with a fitted decay
    $\beta$, and the non-parametric kernels (module docstring for the likelihood).

    Parameters
    ----------
    T : int
        The longest ranking of the log (the non-parametric kernels have a weight per displacement up to it).

    Returns
    -------
    list of Candidate
    """
    return [_paper(m, False) for m in PAPER_MODELS] + [_paper(m, True) for m in DECAY_MODELS] + [
        _nonparametric_ad(T), _nonparametric(T)]


def predicted_jumps(data: MPData, params: dict) -> np.ndarray:
    """Expected count of each signed jump j - i under the model (same conditioning as the data).

    Parameters
    ----------
    data : MPData
    params : dict
        A fitted MP candidate's parameters.

    Returns
    -------
    ndarray, shape (2T - 1,)
        Index ``d + T - 1`` holds the jumps of displacement ``d``.
    """
    T = data.T
    if params["kernel"] == "nonparametric":
        t = np.zeros(2 * T - 1)
        for k, v in params["weights"].items():
            if abs(int(k)) < T:
                t[int(k) + T - 1] = v
        W = _displacement_weights(T, "", table=t)
    else:
        W = _displacement_weights(T, params["kernel"], params["decay"])
    Q = transition_tables(data, params["connectivity"], params["states"], W)
    P = Q[data.c, data.i, :] * data.counts[data.owner][:, None]
    d = np.arange(T)[None, :] - data.i[:, None]
    return np.bincount((d + T - 1).ravel(), weights=P.ravel(), minlength=2 * T - 1)


def fit_rates(log: ClickLog) -> dict | None:
    """MPcont holding rates per rank from dwell times (last dwell right-censored), with 95% intervals.

    Returns None when the log has no dwell times.  A rank without an uncensored
    dwell gets the pooled rate of all ranks.  The interval is the exact
    chi-square interval of an exponential rate from ``n`` events in a total
    time (censored times included): $[\\chi^2_{2n,0.025}, \\chi^2_{2n,0.975}]/(2\\sum d)$.
    """
    if not log.has_dwell:
        return None
    T = max(s.n_shown for s in log)
    n, total = np.zeros(T), np.zeros(T)
    all_d, all_event = [], []
    for s in log:
        if s.dwell is None or s.n_clicks == 0:
            continue
        d = np.asarray(s.dwell, dtype=np.float64)
        r = s.clicks - 1
        ok = np.isfinite(d)
        censored = np.zeros(d.size, dtype=bool)
        censored[-1] = not s.ended
        np.add.at(total, r[ok], d[ok])
        np.add.at(n, r[ok & ~censored], 1.0)
        all_d.append(d[ok])
        all_event.append(~censored[ok])
    pooled = n.sum() / total.sum() if total.sum() > 0 else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        # a rank nobody dwelt on gets the pooled rate of all ranks (the measure needs one per rank)
        mu = np.where((total > 0) & (n > 0), n / np.where(total > 0, total, 1.0), pooled)
        lo = np.where(n > 0, stats.chi2.ppf(0.025, 2 * n) / (2 * total), 0.0)
        hi = np.where(total > 0, stats.chi2.ppf(0.975, 2 * n + 2) / (2 * total), np.nan)
    out = {"rates": mu.tolist(), "rates_low": lo.tolist(), "rates_high": hi.tolist(),
           "rates_events": n.astype(int).tolist()}
    if all_d:
        out["dwell_survival"] = _dwell_survival(np.concatenate(all_d), np.concatenate(all_event), float(pooled))
    return out


def _dwell_survival(d: np.ndarray, event: np.ndarray, rate: float, points: int = 60) -> dict:
    """Kaplan-Meier survival of all dwells (censored last dwells included) and the pooled exponential."""
    order = np.argsort(d, kind="stable")
    d, event = d[order], event[order]
    at_risk = d.size - np.arange(d.size)
    factors = np.where(event, 1.0 - 1.0 / at_risk, 1.0)
    km = np.cumprod(factors)
    grid = np.linspace(0.0, float(np.percentile(d, 99)) if d.size else 1.0, points)
    idx = np.searchsorted(d, grid, side="right") - 1
    s = np.where(idx >= 0, km[np.maximum(idx, 0)], 1.0)
    # named as FitReport.diagnostics names them
    return {"dwell_t": grid.tolist(), "dwell_km": s.tolist(), "dwell_fitted": np.exp(-rate * grid).tolist()}
