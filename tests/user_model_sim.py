r"""Synthetic click logs from known user models of MP, Carterette and TBG (the tests' parameter recovery).

Each simulator walks users step by step, independently of the likelihood code
it is used to test (the likelihoods use closed forms: fundamental matrices,
censored chains), and returns a :class:`~irmeasures_markov.calibration.ClickLog`
(P@H's simulator is public: :func:`irmeasures_markov.calibration.simulate_ph`).

- :func:`simulate_stopping`: a user who reads ranks 1..K, K drawn from a
  stopping distribution P(k), and clicks each read document with ``gamma``.
- :func:`simulate_mp`: the MP click chain: a set S of clicked ranks per
  session, a walk of the MP chain (on all ranks for AD, on S for OR) started in
  S, and a click at every visit to S (the chain watched on S).
- :func:`simulate_times`: click times and dwell times for TBG / MPcont fits.
- :func:`simulate_graded_clicks`: PBM or DBN users whose attractiveness (and
  satisfaction) depend on the document's grade only, with the qrels (the
  click models' by-grade parameters).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from irmeasures_markov.calibration import ClickLog, Session


def _shown(n_docs: int, qid: str):
    return tuple(f"{qid}-d{k}" for k in range(1, n_docs + 1))


def simulate_stopping(n_sessions: int, stop_probabilities: Sequence[float], *, gamma: float = 0.4,
                      n_docs: int = 10, rng: np.random.Generator | int | None = None) -> ClickLog:
    """Users who read ranks 1..K, P(K = k) = ``stop_probabilities[k-1]`` (mass beyond n_docs reads all)."""
    rng = np.random.default_rng(rng)
    P = np.asarray(stop_probabilities, dtype=np.float64)
    P = np.concatenate([P[:n_docs], [max(0.0, 1.0 - P[:n_docs].sum())]])
    K = rng.choice(np.arange(1, n_docs + 2), size=n_sessions, p=P / P.sum())
    K = np.minimum(K, n_docs)
    read = np.arange(1, n_docs + 1)[None, :] <= K[:, None]
    click = read & (rng.random((n_sessions, n_docs)) < gamma)
    shown = _shown(n_docs, "q0")
    sessions = [Session("q0", shown, np.flatnonzero(row).astype(np.int64) + 1, session_id=str(n))
                for n, row in enumerate(click)]
    return ClickLog(sessions, description="simulated stopping distribution", source="simulate_stopping")


def mp_kernel(kernel: str, decay: float = 1.0) -> Callable[[np.ndarray], np.ndarray]:
    """The MP kernel of a displacement d >= 1: ``ID`` (d+1)^-decay, ``LID`` log10(d+2)^-decay."""
    if kernel == "ID":
        return lambda d: (np.asarray(d, dtype=np.float64) + 1.0) ** (-decay)
    if kernel == "LID":
        return lambda d: np.log10(np.asarray(d, dtype=np.float64) + 2.0) ** (-decay)
    raise ValueError(f"`kernel` must be 'ID' or 'LID', got {kernel!r}.")


def simulate_mp(n_sessions: int, *, model: str = "GL_AD_ID", decay: float = 1.0,
                weights: dict | None = None, n_docs: int = 10, click_fraction: float = 0.35,
                mean_jumps: float = 1.0, rng: np.random.Generator | int | None = None) -> ClickLog:
    r"""MP click chains.

    Per session: S = the ranks clicked (each rank with ``click_fraction``; a session
    with fewer than two keeps one click), a start uniform in S, then moves of the
    MP chain — :math:`\alpha(i,j)/\sum_k \alpha(i,k)` over its states (all ranks for
    AD, S for OR; neighbours only for LO), one move at a time through unclicked ranks —
    with a click at every arrival in S other than the rank just clicked, until every
    rank of S was clicked (S is then the session's clicked set, as the likelihood reads
    it), then Poisson(``mean_jumps``) more clicks.  Both rules are stopping times of
    the path, so they do not bias the transition likelihood.  ``weights``: a signed
    displacement kernel ``{j - i: weight}`` (the non-parametric models), with
    ``model='AD'`` or ``'OR'`` for its states.
    """
    rng = np.random.default_rng(rng)
    T = n_docs
    r = np.arange(T)
    if weights is not None:
        conn, states = "GL", (model if model in ("AD", "OR") else "OR")
        W = np.array([[weights.get(int(j - i), 0.0) for j in r] for i in r], dtype=np.float64)
    else:
        conn, states, kern = model.split("_")
        W = mp_kernel(kern, decay)(np.abs(r[:, None] - r[None, :]))
    np.fill_diagonal(W, 0.0)
    if conn == "LO" and states == "AD":
        W = W * (np.abs(r[:, None] - r[None, :]) == 1)
    n = n_sessions
    S = rng.random((n, T)) < click_fraction
    none = S.sum(axis=1) == 0
    S[none, rng.integers(0, T, size=int(none.sum()))] = True
    single = S.sum(axis=1) < 2
    start = np.argmax(np.where(S, rng.random((n, T)), -1.0), axis=1)   # uniform among the ranks of S
    cur = start.copy()
    last = start.copy()
    seen = np.zeros((n, T), dtype=bool)
    seen[np.arange(n), start] = True
    extra = rng.poisson(mean_jumps, size=n)
    cap = 256               # a session stops after this many clicks (a stopping time too)
    seq = np.zeros((n, cap), dtype=np.int64)
    seq[:, 0] = start + 1
    length = np.ones(n, dtype=np.int64)
    n_S = S.sum(axis=1)
    active = ~single
    pos_in_S = np.cumsum(S, axis=1) - 1
    while active.any():
        idx = np.flatnonzero(active)
        w = W[cur[idx]]                                        # (m, T)
        if states == "OR":
            w = w * S[idx]
            if conn == "LO":
                pc = pos_in_S[idx, cur[idx]]
                w = w * (np.abs(pos_in_S[idx] - pc[:, None]) == 1)
        cw = np.cumsum(w, axis=1)
        u = rng.random(idx.size) * cw[:, -1]
        nxt = np.minimum((cw < u[:, None]).sum(axis=1), T - 1)
        cur[idx] = nxt
        hit = S[idx, nxt] & (nxt != last[idx])
        sidx, nx = idx[hit], nxt[hit]
        covered = seen[sidx].sum(axis=1) == n_S[sidx]
        extra[sidx[covered]] -= 1
        seq[sidx, length[sidx]] = nx + 1
        length[sidx] += 1
        seen[sidx, nx] = True
        last[sidx] = nx
        done = ((seen[idx].sum(axis=1) == n_S[idx]) & (extra[idx] <= 0)) | (length[idx] >= cap)
        active[idx[done]] = False
    seqs = [seq[k, :length[k]] for k in range(n)]
    shown = _shown(T, "q0")
    sessions = [Session("q0", shown, np.array(sq, dtype=np.int64), session_id=str(k)) for k, sq in enumerate(seqs)]
    return ClickLog(sessions, description=f"simulated MP {model if weights is None else 'nonparametric'}",
                    source="simulate_mp")


def simulate_times(log: ClickLog, *, t_summary: float = 4.0, rates: Sequence[float] | np.ndarray | None = None,
                   censor_rate: float = 1 / 60.0, halflife: float | None = None,
                   rng: np.random.Generator | int | None = None) -> ClickLog:
    """Add times to a log's clicks.

    Reaching the click at rank r from the previous click at rank r' takes a
    Gamma(|r - r'|, ``t_summary``) scanning time (one exponential summary
    reading per rank moved; r ranks for the first click); a click at rank r is
    read for an exponential dwell of rate ``rates[r-1]`` (default 1/30 s).

    Without ``halflife`` the last click's dwell is cut by an independent
    exponential of rate ``censor_rate`` (right-censoring, as in real logs;
    ``ended`` None) unless it ends first (``ended=True``: the end was seen).  With ``halflife`` the
    user leaves at the first click's time plus an exponential of that half-life, reading or scanning: clicks
    after it are dropped, the session ends there (``ended=True``) and the last
    dwell runs to that end.
    """
    rng = np.random.default_rng(rng)
    out = []
    for s in log:
        T = s.n_shown
        mu = np.full(T, 1 / 30.0) if rates is None else np.asarray(rates, dtype=np.float64)
        c = np.asarray(s.clicks, dtype=np.int64)
        m = c.size
        if m == 0:
            out.append(Session(s.query_id, s.shown, c, np.zeros(0), np.zeros(0), None, s.session_id))
            continue
        moved = np.abs(np.diff(np.concatenate(([0], c))))
        scan = rng.gamma(moved, t_summary)
        d = rng.exponential(1.0 / mu[c - 1])
        times = np.cumsum(scan + np.concatenate(([0.0], d[:-1])))
        ended = None
        if halflife is not None:
            leave = times[0] + rng.exponential(halflife / np.log(2.0))
            keep = int(np.searchsorted(times, leave, side="left"))   # clicks strictly before leaving
            c, times, d = c[:keep], times[:keep], d[:keep].copy()
            d[-1] = leave - times[-1]
            ended = True
        else:
            cut = rng.exponential(1.0 / censor_rate)
            d = d.copy()
            if cut < d[-1]:
                d[-1] = cut                 # the log stopped watching first: right-censored
            else:
                ended = True                # the user finished reading and left: an observed end
        out.append(Session(s.query_id, s.shown, c, times, d, ended, s.session_id))
    return ClickLog(out, description=log.description + " with times", source=log.source, meta=dict(log.meta))


def simulate_graded_clicks(n_sessions: int, model: str, attractiveness: dict[int, float], *,
                           examination: Sequence[float] | None = None, satisfaction: dict[int, float] | None = None,
                           continuation: float = 1.0, n_queries: int = 3, n_docs: int = 5, by_grade: bool = False,
                           rng: np.random.Generator | int | None = None) -> tuple[ClickLog, dict[str, dict[str, int]]]:
    """PBM users (examine rank r with ``examination[r-1]``) or DBN users (examine rank 1, stop satisfied after a
    click with ``satisfaction[g]``, else go on with ``continuation``), clicking an examined document of grade g with
    ``attractiveness[g]``; grades drawn uniformly per document.  Each session shows its query's documents in a
    random order, or, with ``by_grade``, in one of two fixed orders by grade plus noise (as a system would)."""
    rng = np.random.default_rng(rng)
    grades = sorted(attractiveness)
    qrels = {f"q{i}": {f"q{i}-d{k}": int(rng.choice(grades)) for k in range(n_docs)} for i in range(n_queries)}
    orders = {q: [sorted(j, key=lambda d: -j[d] + rng.normal()) for _ in range(2)] for q, j in qrels.items()}
    sessions = []
    for n in range(n_sessions):
        q = f"q{rng.integers(n_queries)}"
        shown = orders[q][rng.integers(2)] if by_grade else list(rng.permutation(list(qrels[q])))
        clicks = []
        for r, d in enumerate(shown, start=1):
            g = qrels[q][d]
            if model == "PBM":
                if rng.random() < examination[r - 1] and rng.random() < attractiveness[g]:
                    clicks.append(r)
                continue
            if rng.random() < attractiveness[g]:                       # DBN: rank r is examined here
                clicks.append(r)
                if rng.random() < satisfaction[g]:
                    break
            if rng.random() >= continuation:
                break
        sessions.append(Session(q, tuple(shown), np.array(clicks, dtype=np.int64), session_id=str(n)))
    return ClickLog(sessions, description=f"simulated {model} by grade", source="simulate_graded_clicks"), qrels
