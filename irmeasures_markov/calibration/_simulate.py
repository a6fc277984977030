r"""Synthetic click logs of P@H users (for parameter-recovery tests and examples): :func:`simulate_ph`.

The simulator walks users step by step, independently of the likelihood code
it is used to test (the likelihoods use closed forms: fundamental matrices),
its transitions built by the measure's own
:func:`~irmeasures_markov.measures.stopping_time.browsing_model` (so the
boundary rules are the measure's), each visit clicked with ``gamma``.  The
simulators of the other families are test helpers (tests/user_model_sim.py).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._logs import ClickLog, Session
from irmeasures_markov.measures.stopping_time import browsing_model

__all__ = ["simulate_ph"]


def _shown(n_docs: int, qid: str):
    return tuple(f"{qid}-d{k}" for k in range(1, n_docs + 1))


def _relevance(rng, n_sessions, n_docs, n_queries, rel_fraction):
    """Per query a fixed relevance vector (the qrels of the synthetic log)."""
    rel = rng.random((n_queries, n_docs)) < rel_fraction
    qids = [f"q{k}" for k in range(n_queries)]
    which = rng.integers(0, n_queries, size=n_sessions)
    qrels = {q: {d: int(rel[k, r]) for r, d in enumerate(_shown(n_docs, q))} for k, q in enumerate(qids)}
    return qids, rel, which, qrels


def simulate_ph(n_sessions: int, *, browse: str = "RWBM", p: float = 0.6, q: float = 0.2,
                p_rel: float | None = None, q_rel: float | None = None,
                gamma: float | tuple[float, float] = 0.4, n_docs: int = 10, n_queries: int = 20,
                rel_fraction: float = 0.3, rng: np.random.Generator | int | None = None
                ) -> tuple[ClickLog, dict[str, dict[str, int]]]:
    """A click log of P@H users (Ferrante & Ferro, ICTIR 2020).

    Parameters
    ----------
    n_sessions : int
    browse : {'DFBM', 'SFBM', 'RWBM'}
    p, q : float
        Forward and backward probabilities (``p_rel``, ``q_rel`` at relevant ranks when given).
    gamma : float or (float, float)
        The click probability of a visit, or ``(gamma_rel, gamma_nonrel)``.
    n_docs, n_queries : int
        Ranking length and number of queries.
    rel_fraction : float
        Share of relevant documents.
    rng : numpy Generator or seed, optional

    Returns
    -------
    (ClickLog, dict)
        The log and its qrels.
    """
    rng = np.random.default_rng(rng)
    qids, rel, which, qrels = _relevance(rng, n_sessions, n_docs, n_queries, rel_fraction)
    g_rel, g_non = (gamma, gamma) if np.ndim(gamma) == 0 else gamma
    sessions = []
    kw = {} if browse == "DFBM" else {"p": p, "q": q}
    if browse != "DFBM" and p_rel is not None:
        kw["p_rel"] = p_rel
    if browse != "DFBM" and q_rel is not None:
        kw["q_rel"] = q_rel
    models = [browsing_model(rel[k].astype(int), browse=browse, **kw) for k in range(n_queries)]
    for k in range(n_queries):
        idx = np.flatnonzero(which == k)
        m = idx.size
        fwd, bwd = models[k].forward, models[k].backward
        clickp = np.where(rel[k], g_rel, g_non)
        pos = np.zeros(m, dtype=np.int64)
        alive = np.ones(m, dtype=bool)
        clicks = [[] for _ in range(m)]
        while alive.any():
            live = np.flatnonzero(alive)
            c = rng.random(live.size) < clickp[pos[live]]
            for u in live[c]:
                clicks[u].append(int(pos[u]) + 1)
            x = rng.random(live.size)
            f, b = fwd[pos[live]], bwd[pos[live]]
            step = np.where(x < f, 1, np.where(x < f + b, -1, 0))
            pos[live] += step
            alive[live[step == 0]] = False
        shown = _shown(n_docs, qids[k])
        for u, n in enumerate(idx):
            sessions.append((n, Session(qids[k], shown, np.array(clicks[u], dtype=np.int64), session_id=str(n))))
    sessions.sort(key=lambda t: t[0])
    return ClickLog([s for _, s in sessions], description=f"simulated P@H {browse}", source="simulate_ph"), qrels
