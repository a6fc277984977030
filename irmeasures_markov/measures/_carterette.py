r"""Carterette's user-model framework: measures M1–M4 over six stopping distributions.

B. Carterette, "System effectiveness, user models, and user utility: a
conceptual framework for investigation", SIGIR 2011 (see
docs/user-model-framework.md).  A user stops at rank k with probability P(k); F(k) = Σ_{i≥k} P(i)
is the probability of looking at rank k.  With binary relevance a_k, the
relevance count R_k = Σ_{i≤k} a_i and precision Prec(k) = R_k / k:

=====  ===========================================  =================================
model  value                                        reading
=====  ===========================================  =================================
M1     Σ_k a_k P(k)                                 relevance at the stopping rank
M2     Σ_k a_k F(k)  (= Σ_k P(k) R_k)               total relevance seen
M3     Σ_k f(k) P(k),  f(k) = 1/k or k               effort (1/rank, or rank, at stop)
M4     Σ_k P(k) Prec(k)                             precision at the stopping rank
=====  ===========================================  =================================

Stopping distributions (θ where given):

=====  =====================================  ======================  =========
dist   P(k)                                   F(k)                    kind
=====  =====================================  ======================  =========
RBP    (1−θ) θ^{k−1}   (θ = 0.8)              θ^{k−1}                 static
DCG    1/log2(k+1) − 1/log2(k+2)              1/log2(k+1)             static
RR     1/(k(k+1))                             1/k                     static
ERR    a_k θ (1−θ)^{R_{k−1}}   (θ = 0.5)      suffix sum of P         dynamic
AP     a_k / RB                               suffix sum of P         dynamic
RRR    a_k / (R_k (R_k + 1))                  suffix sum of P         dynamic
=====  =====================================  ======================  =========

Conventions of this implementation (docs/user-model-framework.md):

* Sums run over the ranks of the (cut) ranking, k = 1..N; documents that are
  not retrieved contribute nothing.  For M2 with a static distribution F is
  the infinite tail, so a ranking cut at N is completed with non-relevant
  documents (the paper's worst case).  For dynamic distributions P is zero at
  non-relevant ranks and F is the suffix sum over the ranking, so
  M2 = Σ_k P(k) R_k for every distribution.
* Some combinations are degenerate; they are computed, not rejected (see
  docs/user-model-framework.md).  M3 with a static distribution does not
  depend on the judgments at all (only on N, and is 0 when RB = 0).  M1 and M2
  with a dynamic distribution depend only on r, the number of relevant
  documents retrieved, not on their ranks: M1(AP) = r/RB (recall),
  M1(RRR) = r/(r+1), M1(ERR) = 1 − (1−θ)^r, M2(AP) = r(r+1)/(2 RB),
  M2(RRR) = H_{r+1} − 1, M2(ERR) = Σ_{j≤r} jθ(1−θ)^{j−1}.
* ``norm`` divides by the value of the ideal ranking: the best permutation of
  a ranking as long as the run's, i.e. the query's RB relevant documents first
  (the whole recall base, not cut to the run's length), then non-relevant
  documents up to max(N, RB), cut at the cutoff when one is given (trec_eval's
  nDCG@k convention).  It holds all RB relevant documents; the non-relevant tail
  adds nothing to M1, M2 or any dynamic distribution, but static M3 and M4 sum
  over all N ranks, and without the tail a run longer than RB could beat the
  ideal.  So every normalised value lies in [0, 1] and is 1 on the ideal
  ranking; static M3, normalised, is 1 for every run of N >= min(RB, cutoff)
  documents.  M3 with f = 'k' (expected stopping rank: lower is better)
  normalised reads "times the ideal ranking's effort"; it is not clamped and
  is not bounded by 1 (it is >= 1 when the run retrieves min(RB, cutoff)
  relevant documents and the distribution is dynamic).  The paper normalises
  the M2 family and ARR (M3 with AP): those are the defaults, and the tail
  leaves their values unchanged.
* RB = 0 gives 0.

Exemplar identities (checked in tests/ and integration/): M4(AP) = AP,
M2(DCG, norm) = binary nDCG, M1(RBP, θ) = RBP(p=θ), M3(ERR) = binary ERR.

ERR mapping.  Chapelle's ERR stops at rank k with R_k = (2^g_k − 1)/2^g_max;
M3(dist='ERR') uses R_k = θ a_k (binary relevance), so the default θ = 1/2 is
the binary case g_max = 1.  ir_measures' ``ERR`` is gdeval's, with g_max fixed
at 4 (R = 1/16 at grade 1) and cutoff 20: on 0/1 grades
``M3(dist='ERR',theta=1/16)@20`` equals ir_measures' ``ERR@20``, while
``M3(dist='ERR')`` (θ = 1/2) does not.  With grades above 1 they differ
(M3 is binary).
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._sampling import log_choose
from irmeasures_markov._util._segments import SegmentSums, segment_sum
from irmeasures_markov.measures._carterette_distributions import (
    DYNAMIC_STOP,
    REGISTRATION_CACHES,
    as_binary_relevance,
    check_arguments,
    checked_recall_base,
    default_norm,
    is_static,
    static_prefix,
    static_table,
    theta_or_default,
)
from irmeasures_markov.ranking._prepared import RelevanceBatch, select_positions

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["user_model_measure", "user_model_values", "user_model_batch", "expected_user_model", "MAX_TERMS"]

def user_model_measure(relevance: ArrayLike, model: str = "M1", dist: str = "RBP", *, theta: float | None = None,
                       f: str = "1/k", norm: bool | None = None, recall_base: int | None = None,
                       cutoff: int | None = None) -> float:
    r"""One of Carterette's measures M1–M4 for one ranking.

    A one-query [`user_model_values`][irmeasures_markov.measures.user_model_values]: the ir_measures classes run the
    same kernel on every query of a run.  The value is Σ_k a_k P(k) (M1),
    Σ_k a_k F(k) (M2), Σ_k f(k) P(k) (M3) or Σ_k P(k) Prec(k) (M4), with P the
    stopping distribution and F(k) = Σ_{i≥k} P(i) (B. Carterette, "System
    effectiveness, user models, and user utility: a conceptual framework for
    investigation", SIGIR 2011; module docstring).

    Parameters
    ----------
    relevance : array_like of 0/1
        Binary relevance a_k of the ranked documents, top first.
    model : {'M1', 'M2', 'M3', 'M4'}
        Accumulation model (module docstring).
    dist : {'RBP', 'DCG', 'RR', 'ERR', 'AP', 'RRR'}
        Stopping distribution P(k).
    theta : float in (0, 1), optional
        Parameter of RBP (default 0.8) or ERR (default 0.5); rejected for the others.
        ERR's θ is the stopping probability at a relevant document: 0.5 is
        Chapelle's R = (2^g − 1)/2^g_max with g_max = 1 (binary ERR); 1/16 is
        gdeval's (ir_measures' ``ERR``) on 0/1 grades (module docstring).
    f : {'1/k', 'k'}
        M3's effort function (only for M3).
    norm : bool, optional
        Divide by the ideal ranking's value (module docstring); default
        `default_norm`.
    recall_base : int, optional
        RB, the number of relevant documents for the query (default: those in
        the ranking).  Used by ``dist='AP'`` and by ``norm``.
    cutoff : int, optional
        Evaluate the first ``cutoff`` documents (and cut the ideal ranking there).

    Returns
    -------
    float
        The measure's value for the ranking.

    Raises
    ------
    ValueError
        If an argument is invalid (unknown ``model`` or ``dist``, ``theta`` or
        ``f`` out of place or out of range, a bad ``cutoff``), ``relevance`` is
        not binary, or ``recall_base`` is below the relevant documents in the ranking.

    Examples
    --------
    >>> round(user_model_measure([1, 0, 1], 'M4', 'AP', recall_base=3), 6)   # AP
    0.555556
    >>> round(user_model_measure([1, 0, 1], 'M2', 'DCG', recall_base=2), 6)   # nDCG
    0.919721
    """
    a = as_binary_relevance(relevance)
    rb = checked_recall_base(a, recall_base)
    return float(user_model_values(a, np.array([0, a.size]), np.array([rb]), model, dist, theta=theta, f=f,
                                   norm=norm, cutoff=cutoff)[0])


def user_model_values(relevance: ArrayLike, offsets: ArrayLike, recall_base: ArrayLike, model: str = "M1",
                      dist: str = "RBP", *,
                      theta: float | None = None, f: str = "1/k", norm: bool | None = None,
                      cutoff: int | None = None) -> np.ndarray:
    r"""Carterette's M1–M4 for many rankings stored flat, one value per ranking.

    Parameters
    ----------
    relevance : array_like of 0/1 or bool
        All rankings' binary relevance, concatenated, each top first.
    offsets : array_like of int, length n + 1
        Ranking i is ``relevance[offsets[i]:offsets[i+1]]`` (``offsets[0] = 0``,
        non-decreasing, ``offsets[-1] = len(relevance)``).
    recall_base : array_like of int, length n
        RB of each ranking's query, at least its relevant documents.
    model, dist, theta, f, norm
        As in [`user_model_measure`][irmeasures_markov.measures.user_model_measure].
    cutoff : int, optional
        Evaluate the first ``cutoff`` documents of each ranking (and cut the
        ideal rankings there).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)

    Examples
    --------
    >>> user_model_values([1, 0, 1, 0, 1], [0, 3, 5], [3, 1], 'M4', 'AP').round(6)   # AP of two rankings
    array([0.555556, 0.5     ])
    """
    check_arguments(model, dist, theta, f)
    cutoff = check_cutoff(cutoff, "`cutoff`")
    rel = np.asarray(relevance)
    if rel.dtype != bool:
        rel = as_binary_relevance(rel) > 0
    rel = rel.ravel()
    offsets = np.asarray(offsets)
    if (offsets.ndim != 1 or offsets.size < 1 or offsets.dtype.kind not in "iu" or offsets[0] != 0
            or offsets[-1] != rel.size or np.any(np.diff(offsets) < 0)):
        raise ValueError(f"offsets must be non-decreasing integers from 0 to len(relevance) = {rel.size}")
    rb = np.asarray(recall_base)
    if rb.shape != (offsets.size - 1,) or (rb.size and rb.dtype.kind not in "iu"):
        raise ValueError(f"recall_base must hold one integer per ranking ({offsets.size - 1})")
    found = segment_sum(rel, offsets)
    if np.any(rb < found):
        i = int(np.flatnonzero(rb < found)[0])
        raise ValueError(f"recall_base must be >= the relevant documents in each ranking: ranking {i} has "
                         f"{int(found[i])}, recall_base {int(rb[i])}")
    keep, offsets = select_positions(None, offsets, False, cutoff)
    return _values(_Relevant(rel if keep is None else rel[keep], offsets, rb), model, dist, theta, f, norm, cutoff)


# ---------------------------------------------------------------------------
# The kernel, on relevant positions
# ---------------------------------------------------------------------------
#
# Every model needs a ranking only at its relevant positions, plus its length
# N.  With P(k) = 0 at non-relevant ranks for the dynamic distributions, and
# prefix tables C(n) = Σ_{k≤n} P(k) g(k) for the static ones:
#
#   M1 = Σ_{j∈𝓡} P(j)                      M2 = Σ_{j∈𝓡} F(j)  (static) | Σ_{j∈𝓡} P(j) R_j
#   M3 = C_f(N)  (static, f = 1/k or k)     | Σ_{j∈𝓡} f(j) P(j)
#   M4 = Σ_{j∈𝓡} (C_{1/k}(N) − C_{1/k}(j−1))  (static: Σ_k P(k) R_k/k with R_k = #{j∈𝓡: j≤k})
#                                           | Σ_{j∈𝓡} P(j) R_j / j
#
# so a run costs O(relevant retrieved) plus one table lookup per query, instead
# of O(ranking length) per measure.  The tests check it against brute-force
# sums over every rank.

class _Relevant:
    """Rankings seen at their relevant positions only (for a batch: built once, cached on it).

    Everything the measures of one evaluation have in common is kept here, made
    once for all of them: the per-position arrays, the stopping distributions
    at those positions (``dists``), the segment layout used to sum them, and
    and the relevant positions' ranking lengths.
    """
    __slots__ = ("offsets", "lengths", "rb", "ranks", "idx", "count", "rb_at", "len_at", "dists",
                 "sum", "_has_rb", "_max_idx", "_max_len", "weight")

    def __init__(self, relevant, offsets, recall_base, terms=None):
        # terms = (flat positions, sorted and repeats allowed, their R_j, their weights): expected_user_model
        pos = np.flatnonzero(relevant) if terms is None else np.asarray(terms[0], dtype=np.int64)
        self.weight = None if terms is None else np.asarray(terms[2], dtype=np.float64)
        self.offsets = np.searchsorted(pos, offsets)             # segment bounds within pos
        counts = np.diff(self.offsets)
        self.lengths = np.diff(offsets)                           # N per ranking
        self.rb = np.asarray(recall_base, dtype=np.float64)
        self.idx = pos - np.repeat(np.asarray(offsets)[:-1], counts)  # 0-based rank j−1
        self.ranks = self.idx + 1.0                               # j
        self.count = (np.arange(pos.size) - np.repeat(self.offsets[:-1], counts) + 1).astype(np.float64) \
            if terms is None else np.asarray(terms[1], dtype=np.float64)                     # R_j
        self.rb_at = np.repeat(self.rb, counts)
        self.len_at = np.repeat(self.lengths, counts)             # N of each position's ranking
        self.dists = {}
        #: per-ranking sums of per-position values (segment_sum's layout made once, not once per measure)
        self.sum = SegmentSums(self.offsets)
        self._has_rb = self.rb > 0
        self._max_idx = int(self.idx.max()) if self.idx.size else 0
        self._max_len = int(self.lengths.max()) if self.lengths.size else 0

    def distribution(self, dist, theta):
        """(P(j), F(j) or None) at the relevant positions."""
        key = (dist, theta)
        out = self.dists.get(key)
        if out is None:
            if is_static(dist):
                p_tab, t_tab = static_table(dist, theta, self._max_idx + 1)
                out = (p_tab.take(self.idx), t_tab.take(self.idx))
            else:
                out = (DYNAMIC_STOP[dist](theta, self.count, self.rb_at), None)
            self.dists[key] = out
        return out


def _relevant_terms(v: _Relevant, model, dist, theta, f):
    """Per relevant position terms whose per-ranking sum is the measure (all but static M3)."""
    if model == "M4" and is_static(dist):   # C(N) − C(j−1), C the prefix sums of P(k)/k (comment above)
        c = static_prefix(dist, theta, "1/k", _table_size(v._max_len))
        return c[v.len_at] - c.take(v.idx)
    p, tail = v.distribution(dist, theta)
    if model == "M1":
        return p
    if model == "M2":
        return tail if tail is not None else p * v.count
    if model == "M3":
        return p / v.ranks if f == "1/k" else p * v.ranks
    return p * v.count / v.ranks


@lru_cache(maxsize=64)
def _ideal_prefix(model, dist, theta, f, n):
    """The value of an all-relevant ranking of length L = 0..n (AP: times RB), by the kernel's own terms."""
    ones = _Relevant(np.ones(n, dtype=bool), np.array([0, n]), np.array([1]))  # RB = 1: AP's 1/RB is the caller's
    out = np.concatenate(([0.0], np.cumsum(_relevant_terms(ones, model, dist, theta, f))))
    out.flags.writeable = False
    return out


def _values(v: _Relevant, model, dist, theta, f, norm, cutoff):
    """The kernel behind [`user_model_values`][irmeasures_markov.measures.user_model_values] and
    [`user_model_batch`][irmeasures_markov.measures.user_model_batch] (arguments checked; ``theta`` and
    ``norm`` None for the defaults of ``dist`` and ``model``)."""
    theta = theta_or_default(dist, theta)
    norm = default_norm(model, dist) if norm is None else bool(norm)
    if is_static(dist) and model == "M3":
        values = static_prefix(dist, theta, f, _table_size(v._max_len))[v.lengths]
    else:
        terms = _relevant_terms(v, model, dist, theta, f)
        values = v.sum(terms if v.weight is None else terms * v.weight)
    values = np.where(v._has_rb, values, 0.0)
    if norm:
        values = _normalise(values, v, model, dist, theta, f, cutoff)
    return values


def _normalise(values, v: _Relevant, model, dist, theta, f, cutoff):
    """Divide by the ideal ranking's value: RB relevant documents, then non-relevant ones up to the run's
    length N, cut at the cutoff.  The non-relevant tail only matters for static M3 and M4, whose sums run
    over all N ranks; it keeps M1/M4 <= 1 and gives static M3 the value 1 once N >= min(RB, cutoff)."""
    rb = v.rb
    rb_int = rb.astype(np.int64)
    n_rel = rb_int if cutoff is None else np.minimum(rb_int, cutoff)    # relevant documents of the ideal
    n_all = np.maximum(v.lengths, rb_int)                               # its length
    if cutoff is not None:
        n_all = np.minimum(n_all, cutoff)
    static = is_static(dist)
    if static and model in ("M3", "M4"):
        top_all = n_all.max(initial=0)
        c = static_prefix(dist, theta, f if model == "M3" else "1/k", _table_size(top_all))
        if model == "M3":
            best = c[n_all]
        else:
            # R_k = k down to n_rel, then n_rel: Σ_{k≤n_rel} P(k) + n_rel Σ_{n_rel<k≤n_all} P(k)/k
            stop = _ideal_prefix("M1", dist, theta, "1/k", _table_size(top_all))
            best = stop[n_rel] + n_rel * (c[n_all] - c[n_rel])
    else:
        best = _ideal_prefix(model, dist, theta, f, _table_size(n_rel.max(initial=0)))[n_rel]
        if dist == "AP":
            best = np.divide(best, rb, out=np.zeros_like(best), where=v._has_rb)
    best = np.where(v._has_rb, best, 0.0)
    return np.divide(values, best, out=np.zeros_like(values), where=best > 0)


def user_model_batch(batch: RelevanceBatch, model: str, dist: str, *, theta: float | None = None, f: str = "1/k",
                     norm: bool | None = None, cutoff: int | None = None) -> np.ndarray:
    """[`user_model_values`][irmeasures_markov.measures.user_model_values] for every query of a
    [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch].

    The batch is trusted (built by [`PreparedRun`][irmeasures_markov.ranking.PreparedRun]):
    its relevant-positions view is built once and cached on it, shared by every measure.

    Parameters
    ----------
    batch : RelevanceBatch
        The run's rankings, already cut at ``cutoff``.
    model, dist, theta, f, norm
        As in [`user_model_measure`][irmeasures_markov.measures.user_model_measure].
    cutoff : int, optional
        Cuts only the ideal ranking used by ``norm``.

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.
    """
    check_arguments(model, dist, theta, f)
    view = batch.cache.get("carterette-relevant")
    if view is None:
        view = batch.cache["carterette-relevant"] = _Relevant(batch.relevant, batch.offsets, batch.recall_base)
    return _values(view, model, dist, theta, f, norm, check_cutoff(cutoff, "`cutoff`"))


def _table_size(n: int) -> int:
    """A power of two > n (>= 16), so lru-cached tables have few distinct sizes."""
    return 1 << max(4, int(n).bit_length())


REGISTRATION_CACHES.append(_ideal_prefix)


# ---------------------------------------------------------------------------
# The mean over tie orders
# ---------------------------------------------------------------------------

#: above this many (rank, x) pairs a query set is left to the general enumeration (None)
MAX_TERMS = 1 << 25


def expected_user_model(relevant: ArrayLike, offsets: ArrayLike, recall_base: ArrayLike, group_ids: ArrayLike,
                        model: str, dist: str, *, theta: float | None = None, f: str = "1/k",
                        norm: bool | None = None, cutoff: int | None = None) -> np.ndarray | None:
    """The mean of M1–M4 over every order of every tie group, each equally likely, in closed form.

    Every model is a sum over the relevant ranks j of a term of j and of R_j, the relevant documents up to j;
    ``norm`` divides by a value that reordering does not change.  In a uniformly
    random order of a tie group of n documents, m of them relevant, the document at its (t+1)-th place is
    relevant with probability m/n, and then the number X of relevant documents at its t earlier places is
    hypergeometric (t draws from n − 1 documents, m − 1 of them relevant).  So the mean is
    Σ_j (m/n) Σ_x P(X = x) term(j, R_before + 1 + x), with R_before the relevant documents ranked above the
    group: exact, and one pass over (rank, x) pairs.  For static distributions the term does not read R, and
    the sum is the value at each group's mean relevance m/n.  docs/user-model-framework.md, "Ties and
    unjudged documents", has the derivation.

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
        As in [`user_model_measure`][irmeasures_markov.measures.user_model_measure].
    cutoff : int, optional
        Read the first ``cutoff`` ranks of each ranking (a group cut by it keeps its mean over all members).

    Returns
    -------
    numpy.ndarray or None
        One value per ranking, or None when the sum would be too large (above `MAX_TERMS` pairs).
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
    keep, cut_offsets = select_positions(None, offsets, False, cutoff)
    at = np.flatnonzero((n_rel[group] > 0) & (True if keep is None else keep))   # ranks that may hold a relevant one
    g = group[at]
    share = n_rel[g] / size[g]                                   # P(relevant at the rank)
    flat = (cut_offsets[:-1][np.searchsorted(offsets, at, side="right") - 1] + rank[at])
    # the mean is a weighted sum of the kernel's per-relevant-rank terms, Σ w · term(rank, R), with entries
    # (flat position, R, weight): one per rank that may hold a relevant document and each R it may have
    if is_static(dist):
        terms = (flat, np.ones(at.size), share)
    else:
        t = (at - starts[g]).astype(np.float64)                      # earlier places in the group
        others, others_rel = size[g] - 1.0, n_rel[g] - 1.0
        lo = np.maximum(0.0, t - (others - others_rel))
        hi = np.minimum(t, others_rel)
        count = (hi - lo + 1.0).astype(np.int64)
        total = int(count.sum())
        if total > MAX_TERMS:
            return None
        entry = np.repeat(np.arange(at.size), count)
        first_entry = np.cumsum(count) - count                     # (empty when no rank may hold a relevant one)
        x = lo[entry] + (np.arange(total) - np.repeat(first_entry, count))
        te, oe, re = t[entry], others[entry], others_rel[entry]
        log_p = log_choose(re, x) + log_choose(oe - re, te - x) - log_choose(oe, te)
        before = (csum[starts[g]] - csum[query_start[at]]).astype(np.float64)
        terms = (flat[entry], before[entry] + 1.0 + x, share[entry] * np.exp(log_p))
    check_arguments(model, dist, theta, f)
    v = _Relevant(None, cut_offsets, np.asarray(recall_base), terms)
    return _values(v, model, dist, theta, f, norm, check_cutoff(cutoff, "`cutoff`"))

