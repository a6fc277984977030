r"""Carterette's stopping distributions (M1-M4, SIGIR 2011) fitted to click logs.

Observation model: the user reads ranks $1..K$ and stops, $P(K=k)$
the stopping distribution; each read document is clicked with probability
$\gamma$ (``gamma``; ``gamma_rel``/``gamma_nonrel`` with qrels).  The
last click is therefore a lower bound of the stop, $K \ge$ last click,
and the unclicked ranks between tell how far the user read.  A top-down reader clicks in rank
order, so the observation is the set of clicked ranks (the logged click order is not used).  Mass beyond the
ranking's length $T$ reads all $T$ documents.  This is the walk
likelihood of `_walk` with forward probability
$p_k = F(k+1)/F(k)$ (the continuation $F(k)=\sum_{i\ge k}P(i)$).

Candidates (``theta`` fitted where the distribution has one; the paper
defaults $\theta_{RBP}=0.8$, $\theta_{ERR}=0.5$ are candidates too):

- static: ``RBP`` $(1-\theta)\theta^{k-1}$, ``DCG``
  $1/\log_2(k+1)-1/\log_2(k+2)$, ``RR`` $1/(k(k+1))$;
- dynamic (need qrels; $a_k$ relevance, $R_k$ relevant up to
  $k$, RB the relevant shown documents): ``ERR`` stops at a relevant
  rank with $\theta$; ``AP`` with $1/(\text{relevant at ranks}\ge k)$;
  ``RRR`` with $1/(R_k+1)$;
- ``empirical``: a free continuation probability per rank, i.e. a free
  $P(k)$, usable as a new stopping distribution: one per rank up to rank
  ``EMPIRICAL_RANKS`` (30), the last one repeated beyond (a geometric tail), so
  the parameters do not grow with the longest ranking; none when every
  ranking shows one document (there is no continuation to fit).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._likelihood import Candidate, expit, logit
from irmeasures_markov.calibration._parameters import stop_probabilities
from irmeasures_markov.calibration._walk import WalkData, click_gammas, ctr_diagnostics, gamma_names, walk_candidate

__all__ = ["candidates", "continuation", "walk_arrays", "EMPIRICAL_RANKS"]

#: ranks with a continuation probability of their own in the empirical distribution
EMPIRICAL_RANKS = 30


def continuation(data: WalkData, dist: str, values: dict) -> np.ndarray:
    r"""Forward probability $p_k = F(k+1)/F(k)$ at each rank of each group (flat, ``data.n_ranks``).

    Parameters
    ----------
    data : WalkData
        Sessions grouped by ranking (and relevance pattern, for the dynamic distributions).
    dist : {'RBP', 'DCG', 'RR', 'empirical', 'ERR', 'AP', 'RRR'}
    values : dict
        The distribution's parameters (``theta``, ``continuation``).

    Returns
    -------
    ndarray of float64

    Raises
    ------
    ValueError
        An unknown distribution.
    """
    k = data.rank.astype(np.float64) + 1.0
    rel = data.rel
    if dist == "RBP":
        return np.full(k.shape, values["theta"])
    if dist == "DCG":
        return np.log2(k + 1) / np.log2(k + 2)
    if dist == "RR":
        return k / (k + 1)
    if dist == "empirical":
        c = np.asarray(values["continuation"], dtype=np.float64)
        if not c.size:
            return np.ones(k.shape)
        # ranks beyond the fitted ones keep the last continuation (as stop_probabilities does)
        return c[np.minimum(data.rank, c.size - 1)]
    # relevant documents up to each rank (R) and from it on (ahead), counted within each group
    cs = np.cumsum(rel)
    base = np.concatenate(([0], cs))[data.offsets[:-1]]
    R = cs - base[data.gid]
    total = np.concatenate(([0], cs))[data.offsets[1:]] - base
    if dist == "ERR":
        return np.where(rel, 1.0 - values["theta"], 1.0)
    if dist == "AP":
        ahead = total[data.gid] - R + rel
        return np.where(rel, 1.0 - 1.0 / np.maximum(ahead, 1), 1.0)
    if dist == "RRR":
        return np.where(rel, 1.0 - 1.0 / (R + 1.0), 1.0)
    raise ValueError(f"unknown stopping distribution {dist!r}")


def walk_arrays(data: WalkData, values: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, gamma) per group and rank (flat): the continuation of the distribution, no backward move."""
    p = continuation(data, values["dist"], values)
    return p, np.zeros_like(p), click_gammas(data, values)


def _make(name: str, dist: str, with_rel: bool, *, theta=None, T: int = 10) -> Candidate:
    """One distribution as a candidate; ``theta`` True is fitted, a number is fixed, None has none."""
    gnames = gamma_names(with_rel)
    n_cont = min(T - 1, EMPIRICAL_RANKS) if dist == "empirical" else 0

    def unpack(th):
        th = np.asarray(th, dtype=np.float64)
        out, k = {"dist": dist}, 0
        if theta is True:
            out["theta"] = float(expit(th[0])); k = 1
        elif theta is not None:
            out["theta"] = theta
        if n_cont:
            cont = expit(th[k:k + n_cont])
            out["continuation"] = [float(x) for x in cont]
            for r, x in enumerate(cont, start=1):
                out[f"continue_{r}"] = float(x)
            k += n_cont
        for gname in gnames:
            out[gname] = float(expit(th[k])); k += 1
        return out

    x0 = ([logit(0.7)] if theta is True else []) + [logit(0.8)] * n_cont + [logit(0.3)] * len(gnames)
    return walk_candidate(name, x0, unpack, walk_arrays)


def candidates(with_rel: bool = False, T: int = 10) -> list[Candidate]:
    """Carterette's stopping distributions (SIGIR 2011) as candidates (module docstring for each and its likelihood).

    Parameters
    ----------
    with_rel : bool
        Whether the log has qrels: then the dynamic distributions (ERR, AP,
        RRR) are candidates too, and the click probability depends on relevance.
    T : int
        The longest ranking of the log.  With ``T == 1`` the user reads rank 1
        and nothing else can happen: the candidates that fit a stopping
        parameter (RBP, ERR with a fitted theta, empirical) are left out,
        since it changes nothing in the likelihood.

    Returns
    -------
    list of Candidate
    """
    # (name, distribution, theta: fitted (True) or fixed, fits a stopping parameter, needs qrels), in report order
    table = (("RBP", "RBP", True, True, False), ("RBP(theta=0.8)", "RBP", 0.8, False, False),
             ("DCG", "DCG", None, False, False), ("RR", "RR", None, False, False),
             ("empirical", "empirical", None, True, False), ("ERR", "ERR", True, True, True),
             ("ERR(theta=0.5)", "ERR", 0.5, False, True), ("AP", "AP", None, False, True),
             ("RRR", "RRR", None, False, True))
    return [_make(name, dist, with_rel, theta=theta, T=T)
            for name, dist, theta, stops, rel in table if (T > 1 or not stops) and (with_rel or not rel)]


def diagnostics(data: WalkData, params: dict) -> dict:
    """Observed and predicted click probability by rank, the observed last click and (static distributions)
    P(stop at k), for the plots."""
    out = ctr_diagnostics(data, walk_arrays, params)
    out["last_click_observed"] = data.observed_last_click.tolist()
    if params["dist"] in ("RBP", "DCG", "RR", "empirical"):
        out["stop_probabilities"] = stop_probabilities(params["dist"], params, data.T).tolist()
    return out
