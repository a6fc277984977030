r"""Degree kernels of Markov Precision's closed form: the weights $\deg_i$ of the relevant ranks.

For a symmetric kernel $\alpha$ the MP chain is reversible and the
watched invariant distribution is $\pi_i = \deg_i / \sum_{j\in\mathcal R}\deg_j$
(docs/markov-precision.md, Ferrante, Ferro & Maistro, SIGIR 2014).  This module
computes $\deg_i$ of every relevant position of a whole
[`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch] at once, for the paper
models; `mp` turns them into MP.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache

import numpy as np

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.ranking._prepared import RelevanceBatch

# scipy.fft loads at the first call: `import irmeasures_markov` stays cheap
scipy = lazy_module("scipy")

__all__ = ["KERNELS", "kernel_table", "kernel_prefix", "relevant_view", "batch_degrees"]

KERNELS: Mapping[str, Callable[[np.ndarray], np.ndarray]] = {
    "ID": lambda d: 1.0 / (d + 1.0),
    "LID": lambda d: 1.0 / np.log10(d + 2.0),
}

_TABLES: dict = {}


def kernel_table(kernel: str, max_d: int) -> np.ndarray:
    """alpha(d) for d = 0..max_d (entry 0 unused), cached and grown by doubling."""
    table = _TABLES.get(("alpha", kernel))
    if table is None or table.size <= max_d:
        n = max(1024, 2 * max_d)
        table = np.zeros(n + 1)
        table[1:] = KERNELS[kernel](np.arange(1, n + 1, dtype=np.float64))
        _TABLES[("alpha", kernel)] = table      # (kernel_prefix sees the new size and sums it again)
    return table


def kernel_prefix(kernel: str, max_t: int) -> np.ndarray:
    """C[m] = sum_{d=1}^m alpha(d), for m = 0..max_t (and beyond), cached."""
    table = kernel_table(kernel, max_t)
    prefix = _TABLES.get(("prefix", kernel))
    if prefix is None or prefix.size != table.size:
        prefix = np.cumsum(table)
        _TABLES[("prefix", kernel)] = prefix
    return prefix


def relevant_view(batch: RelevanceBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ranks, query numbers, ranking lengths and Prec(i) at the relevant positions (memoised)."""
    view = batch.cache.get("mp:relevant")
    if view is None:
        # from the relevant positions alone: memory in proportion to the relevant documents, not the run
        at = np.flatnonzero(batch.relevant)
        starts = batch.offsets[:-1]
        qidx = np.searchsorted(batch.offsets, at, side="right") - 1
        ranks = at - starts[qidx] + 1
        # relevant documents up to and including each one, within its query
        found = np.arange(1, at.size + 1) - np.searchsorted(at, starts)[qidx]
        prec = found / ranks
        view = (ranks, qidx, batch.lengths[qidx], prec)
        batch.cache["mp:relevant"] = view
    return view


def batch_degrees(batch: RelevanceBatch, parsed: tuple[str, str, str]) -> np.ndarray:
    """Degree of every relevant flat position (in flat order of relevant positions)."""
    conn, states, kernel = parsed
    ranks, qidx, T, _ = relevant_view(batch)
    n_rel = ranks.size
    if n_rel == 0:
        return np.zeros(0)
    if kernel == "UNIFORM":
        return np.ones(n_rel)
    if states == "AD":
        if conn == "GL":
            C = kernel_prefix(kernel, int(batch.lengths.max()))
            deg = C[ranks - 1] + C[T - ranks]
        else:
            deg = ((ranks > 1).astype(np.float64) + (ranks < T)) * KERNELS[kernel](np.float64(1.0))
    else:
        alpha = kernel_table(kernel, int(batch.lengths.max()))
        if conn == "LO":
            # the weight to the previous relevant rank of the same query, then to the next one
            same_prev = np.concatenate(([False], qidx[1:] == qidx[:-1]))
            gap = np.concatenate(([0], np.diff(ranks)))
            left = np.where(same_prev, alpha[gap], 0.0)
            deg = left + np.append(left[1:], 0.0)
        else:
            deg = _gl_or_degrees(batch, kernel, alpha)
    # a single-state chain (T = 1, or OR with r = 1) has no transitions: pi = 1
    return np.where(deg > 0, deg, 1.0)


#: GL_OR uses the FFT convolution for a query when r^2 > _FFT_RATIO * L (L the FFT length, about 2T)
#: and r >= _FFT_MIN_R; below that the dense r x r block is faster (measured on 50 queries at a
#: time: the two cost the same near r^2 = 8 L for T = 300, 1000 and 5000).
_FFT_RATIO = 8.0
_FFT_MIN_R = 64
#: rows x FFT length per batched transform, bounding the memory of long rankings
_FFT_CHUNK = 1 << 21


@cache
def _kernel_spectrum(kernel: str, L: int) -> np.ndarray:
    """rfft of the circular kernel of length L: alpha(d) at d and at L-d, 0 at 0 (cached)."""
    half = (L - 1) // 2
    alpha = kernel_table(kernel, half + 1)
    k = np.zeros(L)
    k[1:half + 1] = alpha[1:half + 1]
    k[L - half:] = alpha[half:0:-1]
    if L % 2 == 0:
        k[L // 2] = alpha[L // 2]
    return np.fft.rfft(k)


#: GL_OR keeps its pair distances on the batch (shared by the ID and LID kernels, and by recall on/off)
#: while the dense pairs of the batch number at most this many (8 bytes each)
_PAIR_CACHE_MAX = 1 << 22


@cache
def _fft_length(T: int) -> int:
    """The FFT length for a ranking of T documents: a fast size >= 2T - 1 (cached; scipy's search is slow)."""
    return scipy.fft.next_fast_len(2 * T - 1, real=True)


class _GLORPlan:
    """How GL_OR's degrees of one batch are computed, kernel-independent (memoised on the batch).

    ``chunks``: for the queries done densely, ``(dist, rows, starts)`` with
    ``dist`` the rank distances $|i-j|$ of every ordered pair of relevant
    ranks of a query (the diagonal included: $\alpha(0) = 0$), laid out
    row by row, ``starts`` where each row begins and ``rows`` the flat relevant
    position whose degree the row sums.  ``by_length``: the queries done by
    FFT, by FFT length.
    """
    __slots__ = ("chunks", "by_length", "counts", "bounds", "spectra", "spectra_size")

    def __init__(self, batch: RelevanceBatch):
        ranks, qidx, _, _ = relevant_view(batch)
        counts = np.bincount(qidx, minlength=batch.n_queries)
        self.counts = counts
        self.bounds = bounds = np.concatenate(([0], np.cumsum(counts)))
        #: rfft of each FFT chunk's relevance indicators, shared by the kernels
        self.spectra: dict = {}
        self.spectra_size = 0
        dense = np.flatnonzero(counts > 1)
        self.by_length = by_length = {}
        big = dense[counts[dense] >= _FFT_MIN_R]
        if big.size:
            for q, t in zip(big.tolist(), batch.lengths[big].tolist()):
                r, L = int(counts[q]), _fft_length(t)
                if r * r > _FFT_RATIO * L:
                    by_length.setdefault(L, []).append(q)
        if by_length:
            keep = np.ones(counts.size, dtype=bool)
            for queries in by_length.values():
                keep[queries] = False
            dense = dense[keep[dense]]
        # the queries of equal r as one (queries, r, r) block: one vectorised difference per distinct r,
        # in int32 (several times faster than int64 here; ranks of one ranking fit easily)
        r_dense = counts[dense]
        order = np.argsort(r_dense, kind="stable")
        dense, r_dense = dense[order], r_dense[order]
        cuts = np.flatnonzero(np.diff(r_dense)) + 1
        ranks32 = ranks.astype(np.int32)
        self.chunks = []
        blocks, rows, starts, size = [], [], [], 0
        groups = zip([0] + cuts.tolist(), cuts.tolist() + [r_dense.size]) if r_dense.size else ()
        for lo, hi in groups:
            r = int(r_dense[lo])
            step = max(1, _FFT_CHUNK // (r * r))
            for c in range(lo, hi, step):
                pos = bounds[dense[c:min(hi, c + step)]][:, None] + np.arange(r)
                s = ranks32[pos]
                d = np.abs(s[:, :, None] - s[:, None, :]).ravel()
                blocks.append(d)
                rows.append(pos.ravel())
                starts.append(np.arange(size, size + d.size, r))
                size += d.size
                if size >= _FFT_CHUNK:
                    self._close(blocks, rows, starts)
                    blocks, rows, starts, size = [], [], [], 0
        if blocks:
            self._close(blocks, rows, starts)

    def _close(self, blocks, rows, starts):
        # int64 distances: fancy indexing with int32 indices converts them on every gather
        self.chunks.append((np.concatenate(blocks).astype(np.int64), np.concatenate(rows),
                            np.concatenate(starts)))


def _gl_or_degrees(batch: RelevanceBatch, kernel: str, alpha: np.ndarray) -> np.ndarray:
    r"""GL_OR degrees $\deg_i = \sum_{j \in \mathcal R, j \ne i} \alpha(|i-j|)$ of every relevant position.

    The degree is the convolution of the 0/1 relevance indicator with the
    kernel, evaluated at the relevant ranks.  Small r: the r x r pairs of a
    query, O(r^2): the pair distances are computed once per batch
    (`_GLORPlan`), then each kernel is one table lookup over all pairs
    of all queries and one segmented sum (``np.add.reduceat``, left to right
    along each row).  Large r: FFT convolution, O(T log T), batched over the
    queries that share an FFT length.  With a circular kernel of length
    L >= 2T - 1 the distances -(T-1)..T-1 never wrap onto each other, so the
    circular convolution equals the linear one.  All terms are positive, so
    the FFT's rounding (about 1e-16 of the largest term times log L) stays
    near 1e-15 relative to each degree, and a sum's order changes it by at
    most r ulps.
    """
    ranks, _, _, _ = relevant_view(batch)
    plan = batch.cache.get("mp:gl_or")
    if plan is None:
        plan = _GLORPlan(batch)
        if sum(d.size for d, _, _ in plan.chunks) <= _PAIR_CACHE_MAX:
            batch.cache["mp:gl_or"] = plan
    deg = np.zeros(ranks.size)
    for dist, rows, starts in plan.chunks:
        # alpha[0] is 0: the diagonal adds nothing (no self-loops)
        deg[rows] = np.add.reduceat(alpha[dist], starts)
    counts, bounds = plan.counts, plan.bounds
    for L, queries in plan.by_length.items():
        spec = _kernel_spectrum(kernel, L)
        step = max(1, _FFT_CHUNK // L)
        for c in range(0, len(queries), step):
            chunk = queries[c:c + step]
            sel = np.concatenate([np.arange(bounds[q], bounds[q + 1]) for q in chunk])
            rows = np.repeat(np.arange(len(chunk)), counts[chunk])
            X = plan.spectra.get((L, c))
            if X is None:
                x = np.zeros((len(chunk), L))
                x[rows, ranks[sel] - 1] = 1.0
                X = np.fft.rfft(x, axis=1)
                if plan.spectra_size + X.size <= _PAIR_CACHE_MAX // 2:  # 16 bytes each
                    plan.spectra[(L, c)] = X
                    plan.spectra_size += X.size
            y = np.fft.irfft(X * spec, n=L, axis=1)
            deg[sel] = y[rows, ranks[sel] - 1]
    return deg
