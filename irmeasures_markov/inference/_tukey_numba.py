"""numba kernel of the randomized Tukey HSD test's null distribution (optional: the ``fast`` extra).

It consumes the same random words as the numpy reference in `irmeasures_markov.inference._multiple`
and builds the same permutations from them, so both engines return the same ranges.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["permuted_ranges"]


@numba.njit(cache=True, nogil=True)
def permuted_ranges(x, raw, out, start):  # pragma: no cover - compiled; tested through the engine switch
    """Ranges of the system means, measure by measure, of the random words ``raw`` (draws × topics × words).

    ``x`` is measures × topics × systems; draw ``b`` of the block goes to ``out[:, start + b]``.  Each topic's
    permutation is the Fisher–Yates shuffle j = (r·(i + 1)) >> 32 for i = S − 1, ..., 1, r the 32-bit half
    (i − 1) % 2 of word (i − 1) // 2.
    """
    mask = np.uint64(0xFFFFFFFF)
    shift = np.uint64(32)
    n_measures, n_topics, n_systems = x.shape
    perm = np.empty(n_systems, dtype=np.int64)
    sums = np.empty((n_measures, n_systems))
    for b in range(raw.shape[0]):
        sums[:] = 0.0
        for t in range(n_topics):
            for i in range(n_systems):
                perm[i] = i
            for i in range(n_systems - 1, 0, -1):
                word = raw[b, t, (i - 1) // 2]
                r = (word >> shift) if (i - 1) % 2 else (word & mask)
                j = np.int64((r * np.uint64(i + 1)) >> shift)
                k = perm[i]
                perm[i] = perm[j]
                perm[j] = k
            for m in range(n_measures):
                for i in range(n_systems):
                    sums[m, i] += x[m, t, perm[i]]
        for m in range(n_measures):
            lo = sums[m, 0]
            hi = sums[m, 0]
            for i in range(1, n_systems):
                v = sums[m, i]
                if v < lo:
                    lo = v
                elif v > hi:
                    hi = v
            out[m, start + b] = (hi - lo) / n_topics
