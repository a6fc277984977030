r"""The mean of Carterette's M1–M4 over every order inside groups of tied documents, in closed form.

Every model is a sum over the relevant ranks j of a term of j and of R_j, the
relevant documents up to j (:func:`~irmeasures_markov.measures._carterette.user_model_weighted`);
``norm`` divides by a value that reordering does not change.  In a uniformly
random order of a tie group of n documents, m of them relevant, the document at
its (t+1)-th place is relevant with probability m/n, and then the number X of
relevant documents at its t earlier places is hypergeometric (t draws from n − 1
documents, m − 1 of them relevant).  So the mean is

    Σ_j (m/n) Σ_x P(X = x) term(j, R_before + 1 + x)

with R_before the relevant documents ranked above the group: exact, and one pass
over (rank, x) pairs.  For static distributions the term does not read R, and
the sum is the value at each group's mean relevance m/n.
docs/user-model-framework.md, "Ties and unjudged documents", has the derivation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._sampling import log_choose
from irmeasures_markov.measures._carterette import user_model_weighted
from irmeasures_markov.measures._carterette_distributions import is_static

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["expected_user_model", "MAX_TERMS"]


#: above this many (rank, x) pairs a query set is left to the general enumeration (None)
MAX_TERMS = 1 << 25


def expected_user_model(relevant: ArrayLike, offsets: ArrayLike, recall_base: ArrayLike, group_ids: ArrayLike,
                        model: str, dist: str, *, theta: float | None = None, f: str = "1/k",
                        norm: bool | None = None, cutoff: int | None = None,
                        max_terms: int = MAX_TERMS) -> np.ndarray | None:
    """The mean of M1–M4 over every order of every tie group, each equally likely (module docstring).

    Parameters
    ----------
    relevant : array_like of bool
        Relevance at every rank of every ranking (uncut), rankings one after another.
    offsets : array_like of int, length n + 1
        The rankings' bounds.
    recall_base : array_like of int, length n
        RB of each ranking's query.
    group_ids : array_like of int
        The tie group of every rank (equal ids on consecutive ranks of one ranking: one group).
    model, dist, theta, f, norm
        As in :func:`~irmeasures_markov.measures._carterette.user_model_measure`.
    cutoff : int, optional
        Read the first ``cutoff`` ranks of each ranking (a group cut by it keeps its mean over all members).
    max_terms : int
        Give up (None) above this many (rank, x) pairs.

    Returns
    -------
    numpy.ndarray or None
        One value per ranking, or None when the sum would be too large.
    """
    rel = np.asarray(relevant, dtype=bool).ravel()
    offsets = np.asarray(offsets, dtype=np.int64)
    gid = np.asarray(group_ids).ravel()
    n = rel.size
    lengths = np.diff(offsets)
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = gid[1:] != gid[:-1]
        first = offsets[:-1]
        new[first[first < n]] = True
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    size = np.diff(np.append(starts, n)).astype(np.float64)
    csum = np.concatenate(([0], np.cumsum(rel, dtype=np.int64)))
    n_rel = (csum[np.append(starts[1:], n)] - csum[starts]).astype(np.float64)
    query_start = np.repeat(offsets[:-1], lengths)
    rank = np.arange(n) - query_start
    keep = np.ones(n, dtype=bool) if cutoff is None else rank < cutoff
    cut_lengths = lengths if cutoff is None else np.minimum(lengths, cutoff)
    cut_offsets = np.concatenate(([0], np.cumsum(cut_lengths)))
    at = np.flatnonzero(keep & (n_rel[group] > 0))               # ranks that may hold a relevant document
    g = group[at]
    share = n_rel[g] / size[g]                                   # P(relevant at the rank)
    flat = (cut_offsets[:-1][np.searchsorted(offsets, at, side="right") - 1] + rank[at])
    if is_static(dist):
        return user_model_weighted(flat, np.ones(at.size), share, cut_offsets, recall_base, model, dist,
                                   theta=theta, f=f, norm=norm, cutoff=cutoff)
    t = (at - starts[g]).astype(np.float64)                      # earlier places in the group
    others, others_rel = size[g] - 1.0, n_rel[g] - 1.0
    lo = np.maximum(0.0, t - (others - others_rel))
    hi = np.minimum(t, others_rel)
    count = (hi - lo + 1.0).astype(np.int64)
    total = int(count.sum())
    if total > max_terms:
        return None
    entry = np.repeat(np.arange(at.size), count)
    first_entry = np.cumsum(count) - count                     # (empty when no rank may hold a relevant document)
    x = lo[entry] + (np.arange(total) - np.repeat(first_entry, count))
    te, oe, re = t[entry], others[entry], others_rel[entry]
    log_p = log_choose(re, x) + log_choose(oe - re, te - x) - log_choose(oe, te)
    before = (csum[starts[g]] - csum[query_start[at]]).astype(np.float64)
    return user_model_weighted(flat[entry], before[entry] + 1.0 + x, share[entry] * np.exp(log_p), cut_offsets,
                               recall_base, model, dist, theta=theta, f=f, norm=norm, cutoff=cutoff)
