"""Step-by-step simulators and brute-force click-vector distributions of the click models (for the tests).

Written from the models' generative stories, independently of the package's
EM code and closed forms: a simulator walks one user at a time, the brute
force enumerates every value of the hidden variables (examination,
attractiveness, satisfaction, continuation) and adds up the probability of
each click vector.
"""
from __future__ import annotations

import itertools

import numpy as np

from irmeasures_markov.calibration._logs import ClickLog, make_session


def docs_of(q: str, n_docs: int) -> list[str]:
    return [f"{q}-d{k}" for k in range(n_docs)]


def simulate(model: str, n_sessions: int, attr: dict, *, rng, sat: dict | None = None, exam=None,
             gamma: float = 1.0, n_queries: int = 3, n_docs: int = 5) -> ClickLog:
    """Sessions of one model; each shows a random permutation of its query's documents.

    ``attr``/``sat``: {(qid, docid): value}; ``exam``: PBM list by rank, UBM
    function (rank, previous click rank) -> probability (1-based ranks, 0 = none).
    """
    rng = np.random.default_rng(rng)
    sessions = []
    for i in range(n_sessions):
        q = f"q{rng.integers(n_queries)}"
        shown = [docs_of(q, n_docs)[k] for k in rng.permutation(n_docs)]
        u = rng.random((n_docs, 3))
        clicks, prev = [], 0
        for r, d in enumerate(shown, start=1):
            a = attr[(q, d)]
            if model == "PBM":
                if u[r - 1, 0] < exam[r - 1] and u[r - 1, 1] < a:
                    clicks.append(r)
            elif model == "UBM":
                if u[r - 1, 0] < exam(r, prev) and u[r - 1, 1] < a:
                    clicks.append(r)
                    prev = r
            elif model == "CM":
                if u[r - 1, 0] < a:
                    clicks.append(r)
                    break
            else:  # DBN: rank r is examined here
                if u[r - 1, 0] < a:
                    clicks.append(r)
                    if u[r - 1, 1] < sat[(q, d)]:
                        break
                if u[r - 1, 2] >= gamma:
                    break
        sessions.append(make_session(q, shown, clicks, session_id=str(i)))
    return ClickLog(sessions)


def brute_force(model: str, a: list[float], *, s: list[float] | None = None, exam=None,
                gamma: float = 1.0) -> dict[tuple[int, ...], float]:
    """P(click vector) for one ranking with attractiveness ``a`` by rank, by enumerating hidden variables."""
    n = len(a)
    out = {c: 0.0 for c in itertools.product((0, 1), repeat=n)}

    def walk(r, clicks, prob, prev, examining):
        if r == n:
            out[tuple(clicks)] += prob
            return
        if model in ("PBM", "UBM"):
            g = exam[r] if model == "PBM" else exam(r + 1, prev)
            for e, pe in ((1, g), (0, 1 - g)):
                for at, pa in ((1, a[r]), (0, 1 - a[r])):
                    c = e * at
                    walk(r + 1, clicks + [c], prob * pe * pa, r + 1 if c else prev, True)
            return
        if not examining:
            walk(r + 1, clicks + [0], prob, prev, False)
            return
        for at, pa in ((1, a[r]), (0, 1 - a[r])):
            if model == "CM":
                walk(r + 1, clicks + [at], prob * pa, prev, not at)
                continue
            sat_branches = ((1, s[r]), (0, 1 - s[r])) if at else ((0, 1.0),)
            for st, ps in sat_branches:
                if st:
                    walk(r + 1, clicks + [at], prob * pa * ps, prev, False)
                else:
                    walk(r + 1, clicks + [at], prob * pa * ps * gamma, prev, True)
                    walk(r + 1, clicks + [at], prob * pa * ps * (1 - gamma), prev, False)

    walk(0, [], 1.0, 0, True)
    return out
