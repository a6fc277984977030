r"""Likelihood of a click sequence under a browsing walk with clicks on visited documents.

Shared by the P@H, Carterette and TBG fits.  The user starts at rank 1 and
walks among ranks :math:`1..T` as a substochastic chain :math:`P` (forward
:math:`p_i`, backward :math:`q_i`, stop :math:`1-p_i-q_i`; backward mass at
rank 1 and forward mass at rank :math:`T` stop, the measures' ``top='stop'``
rule).  Each visit to rank :math:`r` yields a click with probability
:math:`\gamma_r` (the observation model: clicks show some of the visits, never
a document that was not visited).  With :math:`D_0 = \mathrm{diag}(1-\gamma)`
and :math:`Z = (I - D_0 P)^{-1}` (visits without a click in between):

- first click at :math:`j`: :math:`a_j = Z_{1j}\gamma_j`; no click at all:
  :math:`1 - \sum_j a_j`;
- next click at :math:`j` after a click at :math:`i`:
  :math:`A_{ij} = (PZ)_{ij}\gamma_j`; no further click: :math:`1-\sum_j A_{ij}`.

A re-click on the document just clicked (a double click, or a return with no
click in between) is merged into one click, in the data and in the model:
after a click at :math:`i` the next *different* click is at :math:`j` with
:math:`A_{ij}/(1-A_{ii})` and the session ends with
:math:`(1-\sum_j A_{ij})/(1-A_{ii})`.

The sequence probability is the product of these, so a session costs one
lookup per click once the :math:`T\times T` matrices of its ranking's group
(same length and, with qrels, same relevance pattern) are known.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from ._likelihood import group_patterns, safe_log

__all__ = ["WalkData", "walk_data", "walk_matrices", "walk_loglik", "click_probability_by_rank",
           "merge_repeats"]


def merged_tuple(clicks) -> tuple:
    """Clicks as a tuple of ints with consecutive repeats of one rank merged (plain Python: sessions are short)."""
    c = clicks.tolist() if hasattr(clicks, "tolist") else list(clicks)
    return tuple(b for k, b in enumerate(c) if k == 0 or b != c[k - 1])


def merge_repeats(clicks: np.ndarray) -> np.ndarray:
    """Clicks with consecutive repeats of one rank merged."""
    c = np.asarray(clicks, dtype=np.int64)
    if c.size < 2:
        return c
    keep = np.concatenate(([True], c[1:] != c[:-1]))
    return c[keep]


class WalkData:
    """Sessions grouped into patterns (group, merged click sequence) with flat event arrays."""

    def __init__(self, groups: List[Tuple[int, Tuple[int, ...]]], group_len: np.ndarray,
                 group_rel: np.ndarray, seqs: List[Tuple[int, ...]], group_of: List[int]):
        keys = [(g, s) for g, s in zip(group_of, seqs)]
        self.patterns, self.counts, self.inverse = group_patterns(keys)
        self.group_len = group_len              # (G,) ranking length of each group
        self.group_rel = group_rel              # (G, Tmax) bool relevance (all False without qrels)
        self.T = int(group_len.max()) if group_len.size else 1
        owner, kind, g, i, j = [], [], [], [], []
        for u, (gg, seq) in enumerate(self.patterns):
            if not seq:
                owner.append(u); kind.append(0); g.append(gg); i.append(0); j.append(0)
                continue
            owner.append(u); kind.append(1); g.append(gg); i.append(0); j.append(seq[0] - 1)
            for a, b in zip(seq[:-1], seq[1:]):
                owner.append(u); kind.append(2); g.append(gg); i.append(a - 1); j.append(b - 1)
            owner.append(u); kind.append(3); g.append(gg); i.append(seq[-1] - 1); j.append(0)
        self.owner = np.array(owner, dtype=np.int64)
        self.kind = np.array(kind, dtype=np.int64)
        self.g = np.array(g, dtype=np.int64)
        self.i = np.array(i, dtype=np.int64)
        self.j = np.array(j, dtype=np.int64)
        self.n_events = int(np.sum(self.counts[self.owner]))
        # observed click-through by rank: share of sessions with a click at rank r
        ctr = np.zeros(self.T)
        for u, (gg, seq) in enumerate(self.patterns):
            for r in set(seq):
                ctr[r - 1] += self.counts[u]
        self.observed_ctr = ctr / max(self.counts.sum(), 1.0)
        last = np.zeros(self.T + 1)
        for u, (gg, seq) in enumerate(self.patterns):
            last[max(seq) if seq else 0] += self.counts[u]
        self.observed_last_click = last / max(self.counts.sum(), 1.0)   # index 0: no click

    def by_kind(self):
        """Per event kind (0 no click, 1 first click, 2 next click, 3 end): its (g, i, j) and positions."""
        if not hasattr(self, "_by_kind"):
            self._by_kind = []
            for k in range(4):
                where = np.flatnonzero(self.kind == k)
                self._by_kind.append((k, (self.g[where], self.i[where], self.j[where]), where))
        return self._by_kind

    @property
    def n_sessions(self) -> int:
        return int(self.counts.sum())

    @property
    def has_relevance(self) -> bool:
        return bool(self.group_rel.any())


def walk_data(log, qrels: Optional[dict] = None, rel: int = 1, order: str = "clicks") -> WalkData:
    """Group a ClickLog's sessions for the walk likelihood (relevance from ``qrels`` when given).

    ``order='clicks'``: the click sequence as logged (repeats merged); ``'set'``: the
    set of clicked ranks in rank order, for top-down readers whose likelihood is about
    which ranks were clicked, not in which order (Carterette's and TBG's users)."""
    gindex: Dict[Tuple[int, Tuple[bool, ...]], int] = {}
    seqs, group_of = [], []
    cache: Dict[bytes, tuple] = {}
    for s in log:
        T = s.n_shown
        if qrels is not None:
            judged = qrels.get(s.query_id, {})
            relv = tuple(judged.get(d, 0) >= rel for d in s.shown)
        else:
            relv = (False,) * T
        key = (T, relv)
        gg = gindex.get(key)
        if gg is None:
            gg = gindex[key] = len(gindex)
        group_of.append(gg)
        raw = s.clicks.tobytes()
        seq = cache.get(raw)
        if seq is None:
            # logs repeat the same click sequences many times: convert each distinct one once
            seq = cache[raw] = tuple(sorted(set(s.clicks.tolist()))) if order == "set" else merged_tuple(s.clicks)
        seqs.append(seq)
    keys = list(gindex)
    lens = np.array([k[0] for k in keys], dtype=np.int64)
    Tmax = int(lens.max()) if lens.size else 1
    relm = np.zeros((len(keys), Tmax), dtype=bool)
    for n, (T, relv) in enumerate(keys):
        relm[n, :T] = relv
    return WalkData(keys, lens, relm, seqs, group_of)


def walk_matrices(p: np.ndarray, q: np.ndarray, gamma: np.ndarray, lengths: np.ndarray):
    """Per group: transitions P, first-click vector a and next-click matrix A (see module docstring).

    ``p, q, gamma``: (G, Tmax) per-rank probabilities; the boundary rules are applied here.
    """
    G, T = p.shape
    ranks = np.arange(T)
    inside = ranks[None, :] < lengths[:, None]
    p = np.where(ranks[None, :] < lengths[:, None] - 1, p, 0.0)
    q = np.where(inside & (ranks[None, :] > 0), q, 0.0)
    gamma = np.where(inside, gamma, 0.0)
    P = np.zeros((G, T, T))
    if T > 1:
        P[:, ranks[:-1], ranks[1:]] = p[:, :-1]
        P[:, ranks[1:], ranks[:-1]] = q[:, 1:]
    M = np.eye(T)[None] - (1.0 - gamma)[:, :, None] * P
    Z = np.linalg.inv(M)
    a = Z[:, 0, :] * gamma
    A = np.matmul(P, Z) * gamma[:, None, :]
    return P, a, A


def walk_loglik(data: WalkData, p: np.ndarray, q: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """(U,) log-likelihood of one session of each pattern."""
    _, a, A = walk_matrices(p, q, gamma, data.group_len)
    stay = np.einsum("gii->gi", A)
    leave = 1.0 - stay
    leave = np.where(leave > 0, leave, 1.0)
    end = (1.0 - A.sum(axis=2)) / leave
    prob = np.empty(data.kind.size)
    for kind, (g, i, j), where in data.by_kind():
        if kind == 0:
            prob[where] = 1.0 - a.sum(axis=1)[g]
        elif kind == 1:
            prob[where] = a[g, j]
        elif kind == 2:
            prob[where] = A[g, i, j] / leave[g, i]
        else:
            prob[where] = end[g, i]
    logp = safe_log(np.clip(prob, 0.0, 1.0))
    return np.bincount(data.owner, weights=logp, minlength=len(data.patterns))


def click_probability_by_rank(data: WalkData, p, q, gamma) -> np.ndarray:
    """Model P(at least one click at rank r), averaged over the sessions, r = 1..Tmax."""
    P, _, _ = walk_matrices(p, q, gamma, data.group_len)
    G, T, _ = P.shape
    lengths = data.group_len
    gam = np.where(np.arange(T)[None, :] < lengths[:, None], gamma, 0.0)
    out = np.zeros((G, T))
    for r in range(T):
        # visits continue everywhere, except a clicked visit of r (absorbed: the event happened)
        d = np.ones((G, T))
        d[:, r] = 1.0 - gam[:, r]
        Zr = np.linalg.inv(np.eye(T)[None] - d[:, :, None] * P)
        out[:, r] = Zr[:, 0, r] * gam[:, r]
    weights = np.bincount(np.array([g for g, _ in data.patterns]), weights=data.counts, minlength=G)
    return (weights @ out) / max(weights.sum(), 1.0)
