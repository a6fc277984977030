r"""Markov Precision averaged over every order of the tie groups, from the relevant ranks alone.

With a paper model, MP of a ranking depends only on the ranks of its relevant
documents, the ranking's length and the recall base
(`markov_precision_batch`).  Inside a group of ``n`` equal
scores holding ``k`` relevant documents, every order puts the relevant ones
on one of the $\binom{n}{k}$ sets of ranks of the group, each set
equally likely.  The mean over all orders is therefore the mean over the
products of these choices, one per group: enumerated when a query has at most
``limit`` of them, sampled otherwise.  Only the relevant ranks of each choice
are built (memory in proportion to the relevant documents, not to the
rankings), which is what makes ``MP(ties='expected')`` cost a few times MP.
"""
from __future__ import annotations

from itertools import combinations
from math import log, prod

import numpy as np

from irmeasures_markov._util._sampling import log_choose, mean_until_se
from irmeasures_markov.measures.markov_precision._kernels import batch_degrees
from irmeasures_markov.measures.markov_precision._models import parse_model
from irmeasures_markov.measures.markov_precision._mp import markov_precision_batch
from irmeasures_markov.ranking._prepared import RelevanceBatch
from irmeasures_markov.ranking._scenarios import query_rng

__all__ = ["expected_markov_precision"]

#: relevant ranks per kernel call (bounds memory)
_CHUNK = 1 << 20


def _mp_of_rows(rows: list[np.ndarray], lengths: list[int], recall_bases: list[int], model: str,
                recall: bool) -> np.ndarray:
    """MP of rankings given by their sorted relevant ranks (1-based), one ranking per row of each block."""
    counts = np.concatenate([np.full(b.shape[0], b.shape[1], dtype=np.int64) for b in rows])
    ranks = np.concatenate([b.ravel() for b in rows]).astype(np.int64)
    T = np.concatenate([np.full(b.shape[0], t, dtype=np.int64) for b, t in zip(rows, lengths)])
    batch = _sparse_batch(ranks, counts, T)
    batch.recall_base = np.concatenate([np.full(b.shape[0], r, dtype=np.int64) for b, r in zip(rows, recall_bases)])
    return markov_precision_batch(batch, model, recall=recall)


def _sparse_batch(ranks: np.ndarray, counts: np.ndarray, T: np.ndarray) -> RelevanceBatch:
    """A batch that holds only the relevant ranks (1-based, sorted within each ranking) of rankings of length T."""
    n_rank = counts.size
    qidx = np.repeat(np.arange(n_rank), counts)
    first = np.cumsum(counts) - counts
    found = np.arange(ranks.size) - np.repeat(first, counts) + 1
    offsets = np.concatenate(([0], np.cumsum(T))).astype(np.int64)
    empty = np.zeros(0, dtype=np.int64)
    batch = RelevanceBatch([""] * n_rank, offsets, empty, empty.astype(bool), np.zeros(n_rank, dtype=np.int64), 1)
    # the kernel reads MP from the relevant ranks alone: hand them over instead of whole rankings
    batch.cache["mp:relevant"] = (ranks, qidx, T[qidx], found / ranks)
    return batch


class _AllDocuments:
    """MP of one query's choices under a model whose chain lives on all documents (``AD``).

    There a relevant rank's degree depends on its own rank and the ranking's
    length only, and the precision at a relevant rank outside the tie groups is
    the same in every choice (the groups above it hold the same number of
    relevant documents in every order).  So only the ranks chosen inside the
    groups vary: MP = (A + sum_j deg(c_j) Prec(c_j)) / (B + sum_j deg(c_j)),
    A and B summing the fixed relevant ranks once.
    """

    def __init__(self, parsed, T: int, fixed: np.ndarray, groups: list[tuple[int, int, int]], rb: int,
                 recall: bool, degrees: dict[int, np.ndarray]) -> None:
        self.deg = degrees.get(T)
        if self.deg is None:
            # rank -> degree in a ranking of T documents (1-based; the same for every query of that length)
            self.deg = degrees[T] = np.concatenate(([0.0], batch_degrees(
                _sparse_batch(np.arange(1, T + 1), np.array([T]), np.array([T])), parsed)))
        below = np.zeros(T + 2, dtype=np.int64)          # fixed relevant ranks strictly above each rank
        np.add.at(below, fixed + 1, 1)
        self.fixed_above = np.cumsum(below)[:T + 1]
        ends = np.array([a + n - 1 for a, n, _ in groups], dtype=np.int64)
        ks = np.array([k for _, _, k in groups], dtype=np.int64)
        # relevant documents of the groups that end above each fixed rank (groups come in rank order)
        in_groups_above = np.concatenate(([0], np.cumsum(ks)))[np.searchsorted(ends, fixed, side="left")]
        prec = (self.fixed_above[fixed] + in_groups_above + 1) / fixed if fixed.size else np.zeros(0)
        self.A = float(np.sum(self.deg[fixed] * prec))
        self.B = float(np.sum(self.deg[fixed]))
        r = fixed.size + int(ks.sum())
        self.scale = (r / max(rb, 1) if rb > 0 else 0.0) if recall else 1.0

    def values(self, chosen: np.ndarray) -> np.ndarray:
        chosen = np.sort(chosen, axis=1)
        j = np.arange(chosen.shape[1])
        d = self.deg[chosen]
        prec = (self.fixed_above[chosen] + j + 1) / chosen
        num = self.A + (d * prec).sum(axis=1)
        den = self.B + d.sum(axis=1)
        out = np.zeros(chosen.shape[0])
        np.divide(num, den, out=out, where=den > 0)
        return out * self.scale


def _choices(groups: list[tuple[int, int, int]]) -> np.ndarray:
    """Every choice of relevant ranks inside the groups ``(first rank, size, relevant)``: one row each."""
    per_group = [np.asarray(list(combinations(range(a, a + n), k)), dtype=np.int64).reshape(-1, k)
                 for a, n, k in groups]
    idx = np.arange(prod(c.shape[0] for c in per_group), dtype=np.int64)
    parts, stride = [], 1
    for c in per_group:
        parts.append(c[(idx // stride) % c.shape[0]])
        stride *= c.shape[0]
    return np.concatenate(parts, axis=1)


def _with_fixed(fixed: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Each row of ``chosen`` with the ``fixed`` relevant ranks added, sorted: the relevant ranks of a choice."""
    return np.sort(np.concatenate([np.broadcast_to(fixed, (chosen.shape[0], fixed.size)), chosen], axis=1), axis=1)


def _floyd_subsets(n: int, k: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_samples`` uniformly random k-subsets of range(n), one per row, by Floyd's algorithm (O(k^2) a row)."""
    out = np.empty((n_samples, k), dtype=np.int64)
    for i, j in enumerate(range(n - k, n)):
        t = rng.integers(0, j + 1, size=n_samples)
        taken = (out[:, :i] == t[:, None]).any(axis=1)
        out[:, i] = np.where(taken, j, t)
    return out


def _sampled(groups: list[tuple[int, int, int]], n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Random choices of relevant ranks inside the groups, each set of ranks equally likely: one row each."""
    parts = []
    for a, n, k in groups:
        if k * k < n:
            pick = _floyd_subsets(n, k, n_samples, rng)
        else:
            # the k smallest of n uniform keys are a uniformly random k-subset (their order is not needed)
            pick = np.argpartition(rng.random((n_samples, n)), k - 1, axis=1)[:, :k]
        parts.append(a + pick)
    return np.concatenate(parts, axis=1)


def expected_markov_precision(relevant: np.ndarray, offsets: np.ndarray, group_ids: np.ndarray,
                              recall_base: np.ndarray, qids: list[str], model: str = "GL_AD_ID", *,
                              recall: bool = False, limit: int = 10_000, seed: int = 0, target_se: float = 1e-3,
                              first_samples: int = 256, max_samples: int = 1 << 16
                              ) -> tuple[np.ndarray, np.ndarray]:
    r"""MP of every query averaged over all orders of its groups of equal scores.

    $$
    \mathbb{E}[\mathrm{MP}] = \frac{1}{\prod_g \binom{n_g}{k_g}}
    \sum_{\text{choices}} \mathrm{MP}(\text{relevant ranks of the choice})
    $$

    (Ferrante, Ferro & Maistro, SIGIR 2014, for MP; the mean over tie orders
    after McSherry & Najork, ECIR 2008), exact when the product is at most
    ``limit``, else a Monte Carlo mean over uniformly random orders (seeded by
    ``seed`` and the query id) with at least ``first_samples`` draws and more,
    up to ``max_samples``, until the standard error is below ``target_se``.

    Parameters
    ----------
    relevant : numpy.ndarray of bool
        Relevance at every rank, query after query (trec order).
    offsets : numpy.ndarray
        Query offsets.
    group_ids : numpy.ndarray
        Tie group of every rank (groups never span queries).
    recall_base : numpy.ndarray
        Recall base of each query.
    qids : list of str
        The query ids (seed the draws).
    model : str
        A paper model of `markov_precision_batch`.
    recall : bool
        Multiply by $r / RB$.
    limit, seed, target_se, first_samples, max_samples
        As described above.

    Returns
    -------
    values : numpy.ndarray
        One mean per query.
    se : numpy.ndarray
        Its standard error (0.0 where exact).
    """
    n_q = offsets.size - 1
    values, se = np.zeros(n_q), np.zeros(n_q)
    log_limit = log(limit) + 1e-9
    gid = np.asarray(group_ids)
    rel = np.asarray(relevant, dtype=bool)
    n_groups = int(gid[-1]) + 1 if gid.size else 0
    size = np.bincount(gid, minlength=n_groups)
    k_rel = np.bincount(gid, weights=rel, minlength=n_groups).astype(np.int64)
    start = np.flatnonzero(np.diff(gid, prepend=-1))
    mixed = (k_rel > 0) & (k_rel < size)
    group_query = np.searchsorted(offsets, start, side="right") - 1
    pending: list[tuple[int, np.ndarray, float]] = []   # (query, rows, weight of each row)
    pending_size = 0

    def flush():
        nonlocal pending, pending_size
        if pending:
            lengths = [int(offsets[q + 1] - offsets[q]) for q, _, _ in pending]
            v = _mp_of_rows([rows for _, rows, _ in pending], lengths,
                            [int(recall_base[q]) for q, _, _ in pending], model, recall)
            at = 0
            for q, rows, w in pending:
                values[q] += w * float(v[at:at + rows.shape[0]].sum())
                at += rows.shape[0]
        pending, pending_size = [], 0

    parsed = parse_model(model)
    all_documents = parsed[1] == "AD"
    degrees: dict[int, np.ndarray] = {}
    # log of each query's number of distinct choices: the sum over its groups of log C(size, relevant)
    mixed_groups = np.flatnonzero(mixed)
    log_counts = np.bincount(group_query[mixed_groups], weights=log_choose(size[mixed_groups], k_rel[mixed_groups]),
                             minlength=n_q)
    mixed_of = {}
    for g in mixed_groups.tolist():
        mixed_of.setdefault(int(group_query[g]), []).append(g)
    for q in range(n_q):
        a, b = int(offsets[q]), int(offsets[q + 1])
        fixed_mask = rel[a:b].copy()
        groups = []
        for g in mixed_of.get(q, []):
            s0 = int(start[g]) - a
            fixed_mask[s0:s0 + int(size[g])] = False
            groups.append((s0 + 1, int(size[g]), int(k_rel[g])))
        fixed = np.flatnonzero(fixed_mask) + 1
        log_count = float(log_counts[q])
        if all_documents and groups:
            evaluator = _AllDocuments(parsed, b - a, fixed, groups, int(recall_base[q]), recall, degrees)
            if log_count <= log_limit:
                values[q] = float(evaluator.values(_choices(groups)).mean())
                continue
            value_of = evaluator.values
        elif log_count <= log_limit:
            rows = _with_fixed(fixed, _choices(groups) if groups else np.zeros((1, 0), dtype=np.int64))
            pending.append((q, rows, 1.0 / rows.shape[0]))
            pending_size += rows.size + rows.shape[0]
            if pending_size >= _CHUNK:
                flush()
            continue
        else:
            def value_of(chosen, fixed=fixed, q=q, n_docs=b - a):
                return _mp_of_rows([_with_fixed(fixed, chosen)], [n_docs], [int(recall_base[q])], model, recall)
        # too many choices: a mean over random ones, seeded by the query
        rng = query_rng(seed, qids[q], "ties")
        values[q], se[q] = mean_until_se(lambda n, v=value_of, g=groups, r=rng: v(_sampled(g, n, r)),
                                         first_samples, target_se, max_samples)
    flush()
    return values, se

