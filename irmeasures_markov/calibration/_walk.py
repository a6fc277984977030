r"""Likelihood of a click sequence under a browsing walk with clicks on visited documents.

Shared by the P@H, Carterette and TBG fits.  The user starts at rank 1 and
walks among ranks $1..T$ as a substochastic chain $P$ (forward
$p_i$, backward $q_i$, stop $1-p_i-q_i$; backward mass at
rank 1 and forward mass at rank $T$ stop, the measures' ``top='stop'``
rule).  Each visit to rank $r$ yields a click with probability
$\gamma_r$ (the observation model: clicks show some of the visits, never
a document that was not visited).  With $D_0 = \mathrm{diag}(1-\gamma)$
and $Z = (I - D_0 P)^{-1}$ (visits without a click in between):

- first click at $j$: $a_j = Z_{1j}\gamma_j$; no click at all:
  $1 - \sum_j a_j$;
- next click at $j$ after a click at $i$:
  $A_{ij} = (PZ)_{ij}\gamma_j$; no further click: $1-\sum_j A_{ij}$.

A re-click on the document just clicked (a double click, or a return with no
click in between) is merged into one click, in the data and in the model:
after a click at $i$ the next *different* click is at $j$ with
$A_{ij}/(1-A_{ii})$ and the session ends with
$(1-\sum_j A_{ij})/(1-A_{ii})$.

The sequence probability is the product of these.  Sessions are grouped by
their ranking (same length and, with qrels, same relevance pattern).  Per-rank
arrays are flat, one entry per rank of each group (``WalkData.offsets``): they
cost the sum of the groups' lengths, never groups x the longest ranking.
Groups of up to ``DENSE_MAX`` ranks use the dense $T\times T$ matrices
above, batched by length a bounded number of groups at a time; longer ones a
tridiagonal LU factorisation of $I - D_0P$, solved only for
$Z\gamma$ (the row sums) and for the columns of $Z$ their clicks
need, so a ranking of $T$ documents costs memory in $O(T)$.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.calibration._likelihood import Candidate, group_patterns, safe_log
from irmeasures_markov.calibration._logs import ClickLog

lapack = lazy_module("scipy.linalg.lapack")

__all__ = ["WalkData", "walk_data", "walk_matrices", "walk_loglik", "click_probability_by_rank",
           "click_gammas", "gamma_names", "merged_tuple", "boundary", "DENSE_MAX", "ctr_diagnostics", "walk_candidate"]

#: groups with rankings up to this length use the dense matrices (batched); longer ones the tridiagonal solves
DENSE_MAX = 64
#: elements of one dense (groups, T, T) batch, and of one block of solved columns of a long group
_BATCH_ELEMENTS = 1 << 18
_COLUMN_ELEMENTS = 1 << 20


def merged_tuple(clicks: Sequence[int] | np.ndarray) -> tuple[int, ...]:
    """Clicks as a tuple of ints with consecutive repeats of one rank merged (plain Python: sessions are short)."""
    c = clicks.tolist() if hasattr(clicks, "tolist") else list(clicks)
    return tuple(b for k, b in enumerate(c) if k == 0 or b != c[k - 1])


class WalkData:
    """Sessions grouped into patterns (group, merged click sequence) with flat event arrays.

    Per-rank data is flat: group ``g`` holds ranks ``offsets[g]:offsets[g + 1]``
    of ``rel`` (relevance, all False without qrels), ``rank`` (0-based rank) and
    ``gid`` (its group), so per-rank parameter arrays have ``n_ranks`` entries."""

    def __init__(self, group_len: np.ndarray, rel: np.ndarray, seqs: list[tuple[int, ...]],
                 group_of: list[int]) -> None:
        keys = [(g, s) for g, s in zip(group_of, seqs)]
        self.patterns, self.counts, self.inverse = group_patterns(keys)
        self.group_len = np.asarray(group_len, dtype=np.int64)     # (G,) ranking length of each group
        self.offsets = np.concatenate(([0], np.cumsum(self.group_len))).astype(np.int64)
        self.rel = np.asarray(rel, dtype=bool)                    # (N,) relevance per group and rank
        self.gid = np.repeat(np.arange(self.group_len.size), self.group_len)
        self.rank = np.arange(self.rel.size) - self.offsets[self.gid]
        self.T = int(self.group_len.max()) if self.group_len.size else 1
        # one event per (owner pattern, kind, group, i, j): no click (0), first click (1), next click (2), end (3)
        events = []
        for u, (gg, seq) in enumerate(self.patterns):
            if not seq:
                events.append((u, 0, gg, 0, 0))
                continue
            events.append((u, 1, gg, 0, seq[0] - 1))
            events += [(u, 2, gg, a - 1, b - 1) for a, b in zip(seq[:-1], seq[1:])]
            events.append((u, 3, gg, seq[-1] - 1, 0))
        self.owner, self.kind, self.g, self.i, self.j = (np.array(c, dtype=np.int64)
                                                         for c in list(zip(*events)) or [()] * 5)
        self.n_events = int(np.sum(self.counts[self.owner]))
        # observed click-through by rank (share of sessions with a click at rank r) and last click
        ctr, last = np.zeros(self.T), np.zeros(self.T + 1)
        for u, (_, seq) in enumerate(self.patterns):
            for r in set(seq):
                ctr[r - 1] += self.counts[u]
            last[max(seq) if seq else 0] += self.counts[u]
        self.observed_ctr = ctr / max(self.counts.sum(), 1.0)
        self.observed_last_click = last / max(self.counts.sum(), 1.0)   # index 0: no click

    @property
    def n_ranks(self) -> int:
        """Entries of a flat per-rank array (the sum of the groups' lengths)."""
        return int(self.rel.size)

    def units(self) -> list[tuple[str, int, np.ndarray | int, np.ndarray]]:
        """The computation plan: ``('dense', T, groups, events)`` batches and ``('long', T, group, events)``."""
        if not hasattr(self, "_units"):
            plan = []
            order = np.argsort(self.g, kind="stable")
            bounds = np.searchsorted(self.g[order], np.arange(self.group_len.size + 1))

            def events_of(gs):    # gs: never empty (a length of some group; one long group)
                return np.concatenate([order[bounds[x]:bounds[x + 1]] for x in gs])

            for T in np.unique(self.group_len).tolist():
                gs = np.flatnonzero(self.group_len == T)
                if T <= max(DENSE_MAX, 2):
                    step = max(1, _BATCH_ELEMENTS // (T * T))
                    plan += [("dense", T, gs[s:s + step], events_of(gs[s:s + step])) for s in range(0, gs.size, step)]
                else:
                    plan += [("long", T, int(x), events_of([x])) for x in gs]
            self._units = plan
        return self._units

    def group_slice(self, g: int) -> slice:
        """Where group ``g``'s ranks lie in a flat per-rank array."""
        return slice(int(self.offsets[g]), int(self.offsets[g + 1]))

    def gather(self, groups: np.ndarray, T: int) -> np.ndarray:
        """(len(groups), T) flat indices of the ranks of groups that all have T ranks."""
        return self.offsets[groups][:, None] + np.arange(T)[None, :]


def gamma_names(with_rel: bool) -> list[str]:
    r"""Names of the click probabilities $\gamma$ of the observation model.

    Parameters
    ----------
    with_rel : bool
        Whether the log comes with qrels: then a relevant and a non-relevant
        visit have their own click probability.

    Returns
    -------
    list of str
        ``['gamma_rel', 'gamma_nonrel']`` with qrels, else ``['gamma']``.
    """
    return ["gamma_rel", "gamma_nonrel"] if with_rel else ["gamma"]


def click_gammas(data: WalkData, values: dict) -> np.ndarray:
    r"""Click probability $\gamma_r$ of a visit at each rank of each group (flat, ``data.n_ranks``).

    Parameters
    ----------
    data : WalkData
        The grouped sessions.
    values : dict
        Natural parameters holding the names `gamma_names` gives:
        ``gamma_rel``/``gamma_nonrel`` for a model fitted with qrels (whether
        or not ``data`` shows a relevant document), else ``gamma``.

    Returns
    -------
    ndarray of float64
        One probability per rank of each group.
    """
    if "gamma_rel" in values or "gamma_nonrel" in values:
        return np.where(data.rel, values["gamma_rel"], values["gamma_nonrel"])
    return np.full(data.rel.shape, values["gamma"])


def ctr_diagnostics(data: WalkData, walk_arrays, params: dict) -> dict:
    """Observed and predicted click probability by rank (``ctr_observed``, ``ctr_predicted``), for the plots;
    ``walk_arrays(data, params)`` gives the family's (p, q, gamma)."""
    return {"ctr_observed": data.observed_ctr.tolist(),
            "ctr_predicted": click_probability_by_rank(data, *walk_arrays(data, params)).tolist()}


def walk_candidate(name: str, x0: list[float], unpack, walk_arrays) -> Candidate:
    """A candidate of a walk family (P@H, Carterette, TBG): its likelihood is the walk likelihood of the
    ``(p, q, gamma)`` that ``walk_arrays(data, unpack(theta))`` gives."""
    return Candidate(name, x0, lambda data, theta: walk_loglik(data, *walk_arrays(data, unpack(theta))), unpack)


def walk_data(log: ClickLog, qrels: dict[str, dict[str, int]] | None = None, rel: int = 1,
              order: str = "clicks") -> WalkData:
    """Group a ClickLog's sessions for the walk likelihood.

    Parameters
    ----------
    log : ClickLog
    qrels : dict, optional
        ``{query_id: {doc_id: grade}}``: the relevance of each shown document.
    rel : int
        The lowest grade that counts as relevant.
    order : {'clicks', 'set'}
        ``'clicks'``: the click sequence as logged (repeats merged); ``'set'``:
        the set of clicked ranks in rank order, for top-down readers whose
        likelihood is about which ranks were clicked, not in which order
        (Carterette's and TBG's users).

    Returns
    -------
    WalkData
    """
    gindex: dict[tuple[int, tuple[bool, ...]], int] = {}
    seqs, group_of = [], []
    cache: dict[bytes, tuple] = {}
    for s in log:
        # the group: the ranking's length and its relevance (without qrels the length alone)
        judged = qrels.get(s.query_id, {}) if qrels is not None else None
        relv = tuple(judged.get(d, 0) >= rel for d in s.shown) if qrels is not None else s.n_shown
        group_of.append(gindex.setdefault((s.n_shown, relv), len(gindex)))
        raw = s.clicks.tobytes()
        seq = cache.get(raw)
        if seq is None:
            # logs repeat the same click sequences many times: convert each distinct one once
            seq = cache[raw] = tuple(sorted(set(s.clicks.tolist()))) if order == "set" else merged_tuple(s.clicks)
        seqs.append(seq)
    keys = list(gindex)
    lens = np.array([k[0] for k in keys], dtype=np.int64)
    flat = (np.array([x for _, relv in keys for x in relv], dtype=bool) if qrels is not None
            else np.zeros(int(lens.sum()), dtype=bool))
    return WalkData(lens, flat, seqs, group_of)


def walk_matrices(p: np.ndarray, q: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group: transitions P, first-click vector a and next-click matrix A (see module docstring).

    ``p, q, gamma``: (G, T) per-rank probabilities of groups of T ranks each; the boundary rule holds by
    construction (P has no forward move from rank T, no backward move from rank 1).
    Dense: for short rankings (the batches of `walk_loglik`).
    """
    G, T = p.shape
    ranks = np.arange(T)
    P = np.zeros((G, T, T))
    if T > 1:
        P[:, ranks[:-1], ranks[1:]] = p[:, :-1]
        P[:, ranks[1:], ranks[:-1]] = q[:, 1:]
    M = np.eye(T)[None] - (1.0 - gamma)[:, :, None] * P
    Z = np.linalg.inv(M)
    a = Z[:, 0, :] * gamma
    A = np.matmul(P, Z) * gamma[:, None, :]
    return P, a, A


def boundary(p, q):
    """One group's forward and backward probabilities with the boundary rule (no forward at T, no backward at 1)."""
    p, q = np.array(p, dtype=np.float64), np.array(q, dtype=np.float64)
    p[-1] = q[0] = 0.0
    return p, q


def _factor(sub, diag, sup):
    """LU factors of a tridiagonal matrix (LAPACK ``gttrf``); None when it is singular."""
    dl, d, du, du2, ipiv, info = lapack.dgttrf(sub, diag, sup)
    return None if info != 0 else (dl, d, du, du2, ipiv)


def _solve(lu, b, trans: str = "N"):
    return lapack.dgttrs(*lu, b, trans=trans)[0]


def _long_probabilities(T, p, q, gamma, kind, i, j):
    """Event probabilities of one long group (module docstring), in O(T) memory per block of columns."""
    p, q = boundary(p, q)
    gamma = np.asarray(gamma, dtype=np.float64)
    lu = _factor(-(1.0 - gamma[1:]) * q[1:], np.ones(T), -(1.0 - gamma[:-1]) * p[:-1])
    out = np.full(kind.size, np.nan)
    if lu is None:
        return out
    y = _solve(lu, gamma[:, None])[:, 0]                          # Z gamma
    # entries Z[r, c] the events need: first clicks Z[0, j]; next clicks Z[i +- 1, j]; staying Z[i +- 1, i]
    up, down = np.minimum(i + 1, T - 1), np.maximum(i - 1, 0)
    k1, k2, k3 = kind == 1, kind == 2, kind == 3
    moved = k2 | k3
    n1, n2 = int(k1.sum()), int(k2.sum())
    rows = np.concatenate([np.zeros(n1, dtype=np.int64), up[k2], down[k2], up[moved], down[moved]])
    cols = np.concatenate([j[k1], j[k2], j[k2], i[moved], i[moved]])
    vals = np.zeros(rows.size)
    if cols.size:
        need, where = np.unique(cols, return_inverse=True)
        block = max(1, _COLUMN_ELEMENTS // T)
        for s in range(0, need.size, block):
            cs = need[s:s + block]
            E = np.zeros((T, cs.size), order="F")
            E[cs, np.arange(cs.size)] = 1.0
            X = _solve(lu, E)
            sel = (where >= s) & (where < s + cs.size)
            vals[sel] = X[rows[sel], where[sel] - s]
    z0j, zup_j, zdown_j, zup_i, zdown_i = np.split(vals, np.cumsum([n1, n2, n2, int(moved.sum())]))
    im = i[moved]
    stay = (p[im] * zup_i + q[im] * zdown_i) * gamma[im]
    leave = 1.0 - stay
    leave = np.where(leave > 0, leave, 1.0)
    y_up = np.where(im + 1 < T, y[np.minimum(im + 1, T - 1)], 0.0)
    y_down = np.where(im > 0, y[np.maximum(im - 1, 0)], 0.0)
    out[kind == 0] = 1.0 - y[0]
    out[k1] = z0j * gamma[j[k1]]
    i2, j2 = i[k2], j[k2]
    # leave and end are computed for the moved events (next clicks and ends): pick the next clicks', the ends'
    out[k2] = (p[i2] * zup_j + q[i2] * zdown_j) * gamma[j2] / leave[k2[moved]]
    out[k3] = ((1.0 - (p[im] * y_up + q[im] * y_down)) / leave)[k3[moved]]
    return out


def walk_loglik(data: WalkData, p: np.ndarray, q: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Log-likelihood of one session of each pattern under the walk (module docstring).

    Parameters
    ----------
    data : WalkData
    p : ndarray
        Forward, backward and click probabilities, flat (``data.n_ranks``,).
    q : ndarray
        Forward, backward and click probabilities, flat (``data.n_ranks``,).
    gamma : ndarray
        Forward, backward and click probabilities, flat (``data.n_ranks``,).

    Returns
    -------
    ndarray, shape (U,)
        ``-inf`` for a pattern the walk cannot produce.
    """
    p, q, gamma = (np.asarray(x, dtype=np.float64) for x in (p, q, gamma))
    prob = np.empty(data.kind.size)
    for how, T, groups, ev in data.units():
        if not ev.size:
            continue
        kind, i, j = data.kind[ev], data.i[ev], data.j[ev]
        if how == "long":
            sl = data.group_slice(groups)
            prob[ev] = _long_probabilities(T, p[sl], q[sl], gamma[sl], kind, i, j)
            continue
        idx = data.gather(groups, T)
        _, a, A = walk_matrices(p[idx], q[idx], gamma[idx])
        g = np.searchsorted(groups, data.g[ev])     # each event's position in the batch (groups ascend)
        leave = 1.0 - np.einsum("gii->gi", A)
        leave = np.where(leave > 0, leave, 1.0)
        end = (1.0 - A.sum(axis=2)) / leave
        # each event's probability by its kind: no click, first click, next click, end (module docstring)
        prob[ev] = np.select([kind == 0, kind == 1, kind == 2],
                             [1.0 - a.sum(axis=1)[g], a[g, j], A[g, i, j] / leave[g, i]], end[g, i])
    logp = safe_log(np.clip(prob, 0.0, 1.0))
    return np.bincount(data.owner, weights=logp, minlength=len(data.patterns))


def _pivots(c: list[float], T: int) -> list[float]:
    """d[0] = 1, d[k] = 1 - c[k] / d[k-1]: the pivots of a unit-diagonal tridiagonal matrix (c = sub * super)."""
    out = [1.0] * T
    d = 1.0
    for k in range(1, T):
        d = 1.0 - c[k] / d
        out[k] = d
    return out


def _long_click_probability(T, p, q, gamma) -> np.ndarray:
    r"""P(a click at r) for one long group, r = 1..T.

    With $W = (I-P)^{-1}$, a clicked visit of r absorbing is a rank-one
    change of $I-P$, so (Sherman-Morrison)
    $P(\text{click at } r) = W_{1r}\gamma_r / (1 + \gamma_r (PW)_{rr})$;
    $(PW)_{rr} = p_r W_{r+1,r} + q_r W_{r-1,r}$ comes from the
    tridiagonal matrix's pivots (forward and backward), in O(T)."""
    p, q = boundary(p, q)
    gamma = np.asarray(gamma, dtype=np.float64)
    lu = _factor(-q[1:], np.ones(T), -p[:-1])
    if lu is None:
        return np.full(T, np.nan)
    w0 = _solve(lu, np.eye(T, 1), trans="T")[:, 0]                # first row of W
    c = np.zeros(T)
    c[1:] = q[1:] * p[:-1]                                        # sub * super of I - P
    fwd = np.array(_pivots(c.tolist(), T))
    bwd = np.array(_pivots([0.0] + c[1:][::-1].tolist(), T))[::-1]   # the same from rank T up
    with np.errstate(divide="ignore", invalid="ignore"):
        wrr = 1.0 / (fwd + bwd - 1.0)
        below = np.concatenate((wrr[:-1] * q[1:] / bwd[1:], [0.0]))   # W[r+1, r]; none below rank T
        above = np.concatenate(([0.0], wrr[1:] * p[:-1] / fwd[:-1]))   # W[r-1, r]; none above rank 1
        pw = p * below + q * above
        return w0 * gamma / (1.0 + gamma * pw)


def click_probability_by_rank(data: WalkData, p: np.ndarray, q: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Model P(at least one click at rank r), averaged over the sessions, r = 1..Tmax."""
    p, q, gamma = (np.asarray(x, dtype=np.float64) for x in (p, q, gamma))
    weights = np.bincount(np.array([g for g, _ in data.patterns], dtype=np.int64), weights=data.counts,
                          minlength=data.group_len.size)
    total = np.zeros(data.T)
    for how, T, groups, _ in data.units():
        if how == "long":
            sl = data.group_slice(groups)
            total[:T] += weights[groups] * _long_click_probability(T, p[sl], q[sl], gamma[sl])
            continue
        idx = data.gather(groups, T)
        P, _, _ = walk_matrices(p[idx], q[idx], gamma[idx])
        gam = gamma[idx]
        out = np.zeros((groups.size, T))
        for r in range(T):
            # visits continue everywhere, except a clicked visit of r (absorbed: the event happened)
            d = np.ones((groups.size, T))
            d[:, r] = 1.0 - gam[:, r]
            Zr = np.linalg.inv(np.eye(T)[None] - d[:, :, None] * P)
            out[:, r] = Zr[:, 0, r] * gam[:, r]
        total[:T] += weights[groups] @ out
    return total / max(weights.sum(), 1.0)
