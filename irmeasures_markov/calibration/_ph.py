r"""P@H browsing models fitted to click sequences (Ferrante & Ferro, ICTIR 2020).

The P@H user (`irmeasures_markov.measures.stopping_time`) starts at rank 1
and, at rank $i$, moves forward with $p$, backward with $q$
or stops with $1-p-q$; DFBM reads every document ($p=1$), SFBM has
$q=0$, RWBM both.  The log shows clicks, not visits: each visit is
clicked with probability $\gamma$ (``gamma``; ``gamma_rel`` /
``gamma_nonrel`` with qrels) and the likelihood of a session's click sequence
is the walk likelihood of `_walk`.  With qrels, ``p_rel`` / ``q_rel``
apply at relevant documents, ``p`` / ``q`` at the others, as in the measure.

The parameters mean exactly the measure's ``PH(browse=..., p=..., q=...)``;
$\gamma$ belongs to the observation model and is not a measure parameter.
Paper defaults are candidates too, with only $\gamma$ fitted: the
measure's default SFBM $p=0.8$, and the paper's Figure 1 users SFBM
$p=0.5$ and RWBM $p=0.5, q=0.25$.

[`simulate_ph`][irmeasures_markov.calibration.simulate_ph] makes synthetic logs of P@H users (for parameter-recovery
tests and examples).  It walks users step by step, independently of the
likelihood code it is used to test (which uses closed forms: fundamental
matrices), its transitions built by the measure's own
[`browsing_model`][irmeasures_markov.browsing_model] (so the
boundary rules are the measure's), each visit clicked with ``gamma``.  The
simulators of the other families are test helpers (tests/user_model_sim.py).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._likelihood import Candidate, expit, logit
from irmeasures_markov.calibration._logs import ClickLog, Session
from irmeasures_markov.calibration._walk import WalkData, click_gammas, gamma_names, walk_candidate
from irmeasures_markov.measures.stopping_time import browsing_model

__all__ = ["candidates", "walk_arrays", "DEFAULTS", "simulate_ph"]

#: (name, browse, p, q) of the default users compared with the fits.
DEFAULTS = (("SFBM(p=0.8)", "SFBM", 0.8, 0.0), ("SFBM(p=0.5)", "SFBM", 0.5, 0.0),
            ("RWBM(p=0.5,q=0.25)", "RWBM", 0.5, 0.25))


def _softmax_pq(a, b):
    """(p, q) from two unconstrained numbers: forward, backward, stop as a softmax (stop's logit 0)."""
    m = max(a, b, 0.0)
    ea, eb, e0 = np.exp(a - m), np.exp(b - m), np.exp(-m)
    s = ea + eb + e0
    return ea / s, eb / s


def _inv_softmax_pq(p, q):
    s = max(1.0 - p - q, 1e-9)
    return np.log(max(p, 1e-9) / s), np.log(max(q, 1e-9) / s)


def walk_arrays(data: WalkData, values: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, gamma) per group and rank (flat, ``data.n_ranks``) for the natural parameters ``values``.

    ``p_rel``/``q_rel`` apply at relevant ranks, ``p``/``q`` at the others
    (DFBM: $p = 1, q = 0$); $\\gamma$ from `click_gammas`.
    """
    # called on every step of the optimiser: the relevant ranks are overwritten only when a value is given for them
    p = np.full(data.rel.shape, values.get("p", 1.0))
    q = np.full(data.rel.shape, values.get("q", 0.0))
    if "p_rel" in values:
        p = np.where(data.rel, values["p_rel"], p)
    if "q_rel" in values:
        q = np.where(data.rel, values["q_rel"], q)
    return p, q, click_gammas(data, values)


def _make(name: str, browse: str, with_rel: bool, *, fixed_pq=None) -> Candidate:
    gnames = gamma_names(with_rel)
    # the fitted (p,) or (p, q), and with qrels their values at relevant ranks; none for DFBM and a fixed user
    pq = {"SFBM": ("p",), "RWBM": ("p", "q")}.get(browse) if fixed_pq is None else None
    blocks = [pq] + ([tuple(f"{x}_rel" for x in pq)] if with_rel else []) if pq else []

    def unpack(theta):
        theta = np.asarray(theta, dtype=np.float64)
        out, k = {"browse": browse}, 0
        if not blocks:
            out["p"], out["q"] = fixed_pq or (1.0, 0.0)
        for block in blocks:
            if len(block) == 1:
                out[block[0]] = float(expit(theta[k])); k += 1
            else:
                pp, qq = _softmax_pq(theta[k], theta[k + 1])
                out[block[0]], out[block[1]] = float(pp), float(qq); k += 2
        for gname in gnames:
            out[gname] = float(expit(theta[k])); k += 1
        return out

    x0 = []
    for block in blocks:
        x0 += [logit(0.7)] if len(block) == 1 else list(_inv_softmax_pq(0.6, 0.2))
    x0 += [logit(0.3)] * len(gnames)

    return walk_candidate(name, x0, unpack, walk_arrays)


def candidates(with_rel: bool = False, T: int = 2) -> list[Candidate]:
    r"""The P@H browsing models of Ferrante & Ferro (ICTIR 2020) as candidates.

    DFBM, SFBM, RWBM fitted, and the paper-default users (`DEFAULTS`,
    with only the click probability fitted).  The likelihood of a session is
    the walk likelihood (`_walk`) with forward $p$, backward
    $q$, stop $1-p-q$ and click probability $\gamma$ per visit.

    Parameters
    ----------
    with_rel : bool
        Whether the log has qrels: then ``p_rel``/``q_rel`` and
        ``gamma_rel``/``gamma_nonrel`` are fitted too.
    T : int
        The longest ranking of the log; with one document the user never
        moves, p and q change nothing, and SFBM and RWBM (which fit them) are
        left out.

    Returns
    -------
    list of Candidate
    """
    out = [_make(b, b, with_rel) for b in (("DFBM", "SFBM", "RWBM") if T > 1 else ("DFBM",))]
    out += [_make(name, browse, with_rel, fixed_pq=(p, q)) for name, browse, p, q in DEFAULTS]
    return out


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
    p : float
        Forward and backward probabilities (``p_rel``, ``q_rel`` at relevant ranks when given).
    q : float
        Forward and backward probabilities (``p_rel``, ``q_rel`` at relevant ranks when given).
    gamma : float or (float, float)
        The click probability of a visit, or ``(gamma_rel, gamma_nonrel)``.
    n_docs : int
        Ranking length and number of queries.
    n_queries : int
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
    rel = rng.random((n_queries, n_docs)) < rel_fraction     # per query a fixed relevance vector: the log's qrels
    qids = [f"q{k}" for k in range(n_queries)]
    which = rng.integers(0, n_queries, size=n_sessions)
    docs = {q: tuple(f"{q}-d{r}" for r in range(1, n_docs + 1)) for q in qids}
    qrels = {q: {d: int(rel[k, r]) for r, d in enumerate(docs[q])} for k, q in enumerate(qids)}
    g_rel, g_non = (gamma, gamma) if np.ndim(gamma) == 0 else gamma
    sessions = []
    kw = {} if browse == "DFBM" else {"p": p, "q": q, **{k: v for k, v in (("p_rel", p_rel), ("q_rel", q_rel))
                                                          if v is not None}}
    for k in range(n_queries):
        idx = np.flatnonzero(which == k)
        m = idx.size
        model = browsing_model(rel[k].astype(int), browse=browse, **kw)
        fwd, bwd = model.forward, model.backward
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
        for u, n in enumerate(idx):
            sessions.append((n, Session(qids[k], docs[qids[k]], np.array(clicks[u], dtype=np.int64),
                                        session_id=str(n))))
    sessions.sort(key=lambda t: t[0])
    return ClickLog([s for _, s in sessions], description=f"simulated P@H {browse}", source="simulate_ph"), qrels
