"""Tie orders and unjudged documents for the standard measures computed natively (AP, P@k, Rprec, RR, nDCG,
bpref, binary RBP): what ``experiments.evaluate(..., ties=, unjudged=, residual=)`` does to them.

Conventions (the same as for this package's families, docs/ties-and-holes.md):

- **Tie groups** are the maximal runs of equal score inside one query's
  ranking in trec_eval order (score descending, docid descending).
- ``unjudged`` is applied first, as a change of the judgments: ``'nonrel'``
  (unjudged documents are non-relevant, trec_eval's convention), ``'drop'``
  (the condensed list: unjudged documents are removed from the ranking, as
  ``judged_only=True``), ``'rel'`` (every unjudged retrieved document is
  judged at ``g_fill = max(1, highest judged grade of the query)``, so it
  joins the recall base R when ``g_fill >= rel``, and nDCG's ideal ranking).
- ``ties`` then orders each tie group: ``'docid'`` (trec_eval's order),
  ``'optimistic'`` / ``'pessimistic'`` (grades descending / ascending,
  unjudged read as 0, docid order among equal grades: the values are those
  of the run whose scores put the documents in that order), ``'expected'``
  (the mean over all orders of every tie group, each equally likely).
- ``residual=True`` is the value with ``unjudged='rel'`` minus the value
  with ``'nonrel'``, with the same ``ties``.

Expected values in closed form (McSherry & Najork, ECIR 2008)
-------------------------------------------------------------
Take a tie group at ranks ``s+1 .. s+n`` holding ``r`` relevant documents,
with ``c`` relevant documents ranked before it.  In a uniformly random order
of the group, the document at the group's ``i``-th place (rank ``k = s+i``)
is relevant with probability ``r/n``; given that it is, the number of
relevant documents among the ``i-1`` places before it in the group is
hypergeometric with mean ``(i-1)(r-1)/(n-1)``.  Hence, by linearity:

- P@k, Rprec, binary RBP: ``E[rel_k] = r/n``; the measure's weights of the
  ranks are summed against it (P@k: ranks <= k over k; Rprec: ranks <= R
  over R; RBP: ``(1-p) p^(k-1)``).
- AP: ``E[rel_k * hits_k] = (r/n) (c + 1 + (i-1)(r-1)/(n-1))`` (``(r)(c+1)``
  when n = 1), divided by k, summed over the ranks (<= cutoff) and divided
  by R.
- RR: only the first group holding a relevant document counts (``c = 0``);
  the first relevant document is at its ``i``-th place with probability
  ``C(n-i, r-1) / C(n, r)``; ``E[RR] = sum_i C(n-i, r-1) / C(n, r) / (s+i)``
  over the ranks within the cutoff.
- nDCG: ``E[gain_k]`` is the group's mean gain; the ideal ranking does not
  depend on the order.
- bpref: a relevant document of a group holding ``nn`` judged non-relevant
  documents, with ``B`` judged non-relevant documents ranked before the
  group, has ``B + t`` of them ranked above it, ``t`` uniform on
  ``0 .. nn`` (only its place among those ``nn`` matters); so its expected
  term is ``1 - sum_{x=B}^{B+nn} min(x, R) / ((nn+1) max(min(R, N), 1))``.

Every formula is whole-array arithmetic over positions and groups (no
Python step per document); tests/experiments/test_native_ties.py checks them
against the mean over every order of every tie group.
"""
from __future__ import annotations

import numpy as np
from ir_measures import Measure

from .._util.sampling import log_choose
from .._util.segments import segment_cumsum, segment_sum
from ..ranking.prepared import PreparedRun, RelevanceBatch, select_positions
from ..ranking.qrels_index import UNJUDGED
from ..ranking.scenarios import tie_groups_flat
from .native import binary_kernel, bpref_kernel, ideal_dcg, native_param, native_values, ndcg_kernel

__all__ = ["NATIVE_TIES", "NATIVE_UNJUDGED", "check_native_settings", "native_variant_values"]

#: the ``ties`` settings of the native measures
NATIVE_TIES = ("docid", "optimistic", "pessimistic", "expected")
#: the ``unjudged`` settings of the native measures
NATIVE_UNJUDGED = ("nonrel", "drop", "rel")


def check_native_settings(ties: str, unjudged: str, residual: bool) -> None:
    """Refuse a setting the native measures do not have.

    Parameters
    ----------
    ties : str
        One of :data:`NATIVE_TIES`.
    unjudged : str
        One of :data:`NATIVE_UNJUDGED`.
    residual : bool
        Only with ``unjudged='nonrel'``.

    Raises
    ------
    ValueError
        An unknown ``ties`` or ``unjudged``, or ``residual=True`` with ``unjudged`` other than ``'nonrel'``.
    """
    if ties not in NATIVE_TIES:
        raise ValueError(f"`ties`={ties!r} is not one of {list(NATIVE_TIES)}.")
    if unjudged not in NATIVE_UNJUDGED:
        raise ValueError(f"`unjudged`={unjudged!r} is not one of {list(NATIVE_UNJUDGED)}.")
    if not isinstance(residual, (bool, np.bool_)):
        raise ValueError(f"`residual` must be True or False, got {residual!r}.")
    if residual and unjudged != "nonrel":
        raise ValueError(f"`residual=True` is the value with unjudged='rel' minus the value with 'nonrel': "
                         f"it cannot be combined with unjudged={unjudged!r}.")


class _Lists:
    """The rankings of a prepared run after the ``unjudged`` setting: grades, tie groups, offsets, judgment counts."""

    def __init__(self, prepared: PreparedRun, unjudged: str) -> None:
        self.prepared = prepared
        self.qids = prepared.qids
        grades, offsets = prepared.full_grades, prepared.offsets
        group_id, _ = tie_groups_flat(prepared)
        unjudged_at = grades == UNJUDGED
        self.added = np.zeros(len(self.qids), dtype=np.int64)
        self.fill = np.ones(len(self.qids), dtype=np.int64)
        if unjudged == "drop":
            grades, group_id, offsets = _condense(grades, group_id, offsets)
        elif unjudged == "rel":
            index = prepared.qrels_index
            self.fill = np.array([max(1, int(g[0])) if g.size else 1 for g in map(index.judged_grades, self.qids)],
                                 dtype=np.int64)
            self.added = segment_sum(unjudged_at, offsets).astype(np.int64)
            grades = np.where(unjudged_at, np.repeat(self.fill, np.diff(offsets)), grades)
        #: the grade at every rank, the id of its tie group (0, 1, ... in rank order) and the query offsets
        self.grades, self.group_id, self.offsets = grades, group_id, offsets
        self._ordered: dict[str, np.ndarray] = {"docid": grades}
        self._ideal: dict[int | None, np.ndarray] = {}

    def ordered(self, ties: str) -> np.ndarray:
        """The grades in the order ``ties`` (``'docid'``, ``'optimistic'``, ``'pessimistic'``), made once."""
        g = self._ordered.get(ties)
        if g is None:
            g = self._ordered[ties] = _reorder(self.grades, self.group_id, ties)
        return g

    def count_at_least(self, t: int) -> np.ndarray:
        """Judgments with grade >= ``t`` per query, those given to unjudged documents included (int64)."""
        return self.prepared.recall_bases(t) + np.where(self.fill >= t, self.added, 0)

    def ideal(self, cutoff: int | None) -> np.ndarray:
        """Each query's ideal DCG, the documents judged at ``g_fill`` included (made once per cutoff)."""
        hit = self._ideal.get(cutoff)
        if hit is not None:
            return hit
        index = self.prepared.qrels_index
        out = np.zeros(len(self.qids))
        for i, q in enumerate(self.qids):
            g = index.judged_grades(q)
            if self.added[i]:
                g = np.sort(np.concatenate([g, np.full(int(self.added[i]), self.fill[i], dtype=np.int64)]))[::-1]
            out[i] = ideal_dcg(g, cutoff)
        self._ideal[cutoff] = out
        return out

    def bpref_counts(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """``(R, N)`` of :func:`~.native.bpref_kernel` (float64)."""
        R = self.count_at_least(max(rel, 0)).astype(np.float64)
        N = (self.count_at_least(0) - self.count_at_least(rel)).astype(np.float64) if rel > 0 else np.zeros(R.size)
        return R, N


def _condense(grades: np.ndarray, group_id: np.ndarray, offsets: np.ndarray):
    """The condensed list (unjudged documents removed): grades, tie groups renumbered 0, 1, ..., offsets."""
    keep, offsets = select_positions(grades, offsets, True, None)
    if keep is None:
        return grades, group_id, offsets
    kept = group_id[keep]
    return grades[keep], np.cumsum(np.diff(kept, prepend=-1) != 0) - 1, offsets


def _cut(grades: np.ndarray, offsets: np.ndarray, cutoff: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``cutoff`` positions of each ranking (as ``PreparedRun.batch(cutoff=...)`` keeps them)."""
    keep, offsets = select_positions(None, offsets, False, cutoff)
    return (grades if keep is None else grades[keep]), offsets


def _reorder(grades: np.ndarray, group_id: np.ndarray, ties: str) -> np.ndarray:
    """``grades`` with each tie group sorted by grade (descending for 'optimistic'), stable, unjudged as 0."""
    key = np.where(grades == UNJUDGED, 0, grades)
    return grades[np.lexsort((-key if ties == "optimistic" else key, group_id))]


def _ordered_values(kind: str, m: Measure, lists: _Lists, grades: np.ndarray) -> np.ndarray:
    """The measure on the rankings ``grades`` (one order), with the kernels of the default path."""
    rel = int(native_param(m, "rel", 1))
    offsets = lists.offsets
    if kind == "Bpref":
        grades, _, offsets = _condense(grades, lists.group_id, offsets)
        b = RelevanceBatch(lists.qids, offsets, grades, grades >= rel, lists.count_at_least(max(rel, 0)), rel)
        return bpref_kernel(b, *lists.bpref_counts(rel))
    cutoff = m.params.get("cutoff")
    g, off = _cut(grades, offsets, cutoff)
    if kind == "nDCG":
        return ndcg_kernel(RelevanceBatch(lists.qids, off, g, g >= 1, lists.count_at_least(1), 1),
                           lists.ideal(cutoff))
    return binary_kernel(kind, m, RelevanceBatch(lists.qids, off, g, g >= rel, lists.count_at_least(rel), rel))


def _expected_values(kind: str, m: Measure, lists: _Lists) -> np.ndarray:
    """The mean over every order of every tie group, in closed form (module docstring)."""
    rel = int(native_param(m, "rel", 1))
    grades, group_id, offsets = lists.grades, lists.group_id, lists.offsets
    if kind == "Bpref":
        grades, group_id, offsets = _condense(grades, group_id, offsets)
    n_q = offsets.size - 1
    size = grades.size
    if size == 0:
        return np.zeros(n_q)
    lengths = np.diff(offsets)
    group_start = np.flatnonzero(np.diff(group_id, prepend=-1))
    n_g = np.diff(np.append(group_start, size)).astype(np.float64)
    pos = np.arange(size, dtype=np.int64)
    ranks = (pos - np.repeat(offsets[:-1], lengths) + 1).astype(np.float64)
    place = (pos - group_start[group_id] + 1).astype(np.float64)    # i: the place inside the group, 1-based
    n = n_g[group_id]
    cutoff = m.params.get("cutoff")
    in_cut = ranks <= cutoff if cutoff is not None else np.ones(size, dtype=bool)
    if kind == "nDCG":
        gain = np.maximum(grades, 0).astype(np.float64)
        mean_gain = (np.add.reduceat(gain, group_start) / n_g)[group_id]
        dcg = segment_sum(np.where(in_cut, mean_gain / np.log2(ranks + 1.0), 0.0), offsets)
        ideal = lists.ideal(cutoff)
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)
    if kind == "Bpref":
        counted = grades >= 0
        relevant = counted & (grades >= rel)
        nonrel = counted & ~relevant
        R, N = lists.bpref_counts(rel)
        nn = np.add.reduceat(nonrel.astype(np.int64), group_start).astype(np.float64)[group_id]
        before = (segment_cumsum(nonrel, offsets) - nonrel)[group_start].astype(np.float64)[group_id]
        Rq = np.repeat(R, lengths)
        last = before + nn
        top = np.minimum(Rq, last)   # sum_{x=B}^{B+nn} min(x, R): x itself up to R, then R
        s = np.where(Rq < before, (nn + 1.0) * Rq, (before + top) * (top - before + 1.0) / 2.0 + (last - top) * Rq)
        term = 1.0 - s / ((nn + 1.0) * np.maximum(np.minimum(Rq, np.repeat(N, lengths)), 1.0))
        total = segment_sum(np.where(relevant, term, 0.0), offsets)
        return np.where(R > 0, total / np.maximum(R, 1.0), 0.0)
    relevant = grades >= rel
    r_g = np.add.reduceat(relevant.astype(np.int64), group_start).astype(np.float64)
    r = r_g[group_id]
    p_rel = r / n
    R = lists.count_at_least(rel).astype(np.float64)
    if kind == "P":
        return segment_sum(np.where(in_cut, p_rel, 0.0), offsets) / float(cutoff)
    if kind == "Rprec":
        return segment_sum(np.where(ranks <= np.repeat(R, lengths), p_rel, 0.0), offsets) / np.maximum(R, 1.0)
    if kind == "RBP":
        p = float(m["p"])
        return segment_sum(np.where(in_cut, (1.0 - p) * np.power(p, ranks - 1.0) * p_rel, 0.0), offsets)
    c = (segment_cumsum(relevant, offsets) - relevant)[group_start].astype(np.float64)[group_id]
    if kind == "AP":
        others = np.where(n > 1, (place - 1.0) * (r - 1.0) / np.maximum(n - 1.0, 1.0), 0.0)
        x = p_rel * (c + 1.0 + others) / ranks
        return segment_sum(np.where(in_cut, x, 0.0), offsets) / np.maximum(R, 1.0)
    if kind == "RR":
        first = (c == 0) & (r >= 1) & (n - place >= r - 1) & in_cut
        a, k = n[first] - place[first], r[first] - 1.0
        prob = np.zeros(size)
        prob[first] = np.exp(log_choose(a, k) - log_choose(n[first], r[first]))
        return segment_sum(prob / ranks, offsets)
    raise AssertionError(kind)


def native_variant_values(kind: str, m: Measure, prepared: PreparedRun, ties: str = "docid",
                          unjudged: str = "nonrel", residual: bool = False, cache: dict | None = None) -> np.ndarray:
    """Per-query values of a native measure with a tie order and a treatment of unjudged documents.

    With the defaults this is :func:`~.native.native_values` (the same call).

    Parameters
    ----------
    kind : str
        What :func:`~.native.native_kind` returned for ``m``.
    m : ir_measures.Measure
        The measure.
    prepared : PreparedRun
        The run joined with the qrels.
    ties : str
        ``'docid'`` (trec_eval), ``'optimistic'``, ``'pessimistic'`` or ``'expected'`` (module docstring).
    unjudged : str
        ``'nonrel'`` (trec_eval), ``'drop'`` or ``'rel'``.
    residual : bool
        The value with ``unjudged='rel'`` minus the value with ``'nonrel'``.
    cache : dict, optional
        A dict the calls on one prepared run share (empty at first): the
        rankings of each ``unjudged`` setting, their reorderings and ideal
        DCGs are then made once for all the measures.

    Returns
    -------
    numpy.ndarray
        float64, one value per query of ``prepared``.

    Raises
    ------
    ValueError
        A setting :func:`check_native_settings` refuses.
    """
    check_native_settings(ties, unjudged, residual)
    if residual:
        return (native_variant_values(kind, m, prepared, ties, "rel", cache=cache)
                - native_variant_values(kind, m, prepared, ties, "nonrel", cache=cache))
    if ties == "docid" and unjudged == "nonrel":
        return native_values(kind, m, prepared)
    cache = {} if cache is None else cache
    lists = cache.get(("native_ties", unjudged))
    if lists is None or lists.prepared is not prepared:
        lists = cache[("native_ties", unjudged)] = _Lists(prepared, unjudged)
    if ties == "expected":
        return _expected_values(kind, m, lists)
    return _ordered_values(kind, m, lists, lists.ordered(ties))
