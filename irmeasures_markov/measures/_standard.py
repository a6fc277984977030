r"""The standard measures in float64, with trec_eval's definitions: AP, P@k, Rprec, bpref, RR, nDCG, binary RBP,
R@k, Success@k, SetP, SetR, SetF, IPrec@r, NumRet, NumRel, NumRelRet and Judged@k.

``pytrec_eval`` (0.5.x) holds scores as float32, which reorders near-ties, so
the front ends that evaluate many runs ([`evaluate`][irmeasures_markov.experiments.evaluate],
``compare``, ``pool-reduction``, the main command) compute these measures here, on the package's
float64 ranking ([`PreparedRun`][irmeasures_markov.ranking.PreparedRun],
trec_eval's order: score descending, docid descending).
[`standard_measure`][irmeasures_markov.measures.standard_measure] says whether an ``ir_measures`` measure is one of
them, [`standard_values`][irmeasures_markov.measures.standard_values] computes its per-query values.

Definitions (trec_eval's, checked against trec_eval's output for every TREC-8
run in integration/), with $rel_k$ whether the document at rank
$k$ has grade >= ``rel``, $R$ the judgments with grade >= ``rel``
and $K$ the cutoff:

- AP $= \frac{1}{R} \sum_{k \le K} rel_k \, \frac{\sum_{i \le k} rel_i}{k}$;
  P@k $= \frac{1}{K} \sum_{k \le K} rel_k$; Rprec $= \frac{1}{R} \sum_{k \le R} rel_k$;
  RR $= 1 / \min\{k \le K : rel_k\}$; binary RBP $= \sum_{k \le K} (1-p) p^{k-1} rel_k$.
- nDCG: gain = grade (0 for grades <= 0), discount $\log_2(k+1)$; the
  ideal ranking holds every judged document with a positive grade, grades
  descending, cut at $K$; a query with none scores 0.
- bpref (Buckley & Voorhees, SIGIR 2004): only grades >= 0 count (a negative
  grade means "in the pool, unjudged"); each relevant document scores
  $1 - \min(n, R) / \min(R, N)$ with $n$ the judged non-relevant
  documents ranked above it (1 when $n = 0$), $N$ the judgments
  with grade in ``[0, rel)``; the sum is divided by $R$.
- With $n_{ret}$ the documents retrieved (cut at $K$) and $n_{rr}$ the relevant ones among
  them: R@k $= n_{rr} / R$; Success@k $= [n_{rr} > 0]$; SetP $= n_{rr} / n_{ret}$
  (``relative=True``: $n_{rr} / \min(n_{ret}, R)$); SetR $= n_{rr} / R$; SetF with
  $x$ = ``beta`` $= (x+1) P R / (x P + R)$ (trec_eval's weight: ``beta`` itself, not squared);
  NumRet, NumRelRet (``NumRet(rel=...)``) and NumRel are $n_{ret}$, $n_{rr}$ and $R$;
  Judged@k is the share of the retrieved documents with a judgment (any grade, a negative one included), as
  ``ir_measures`` defines it, here on trec_eval's order.
- IPrec@r (trec_eval 9, as pytrec_eval): with $c = \lfloor r R + 0.9 \rfloor$ (at least 1), the
  largest $j / k_j$ over $j \ge c$, $k_j$ the rank of the $j$-th relevant document;
  0 when fewer than $c$ relevant documents are retrieved.  (trec_eval 10 rounds $r R$ to the
  nearest integer instead; integration/test_trec_eval_counting.py compares where the two agree.)
- A ratio whose denominator is 0 is 0.

Tie orders and unjudged documents (the conventions of this package's families,
docs/ties-and-holes.md):

- **Tie groups** are the maximal runs of equal score inside one query's
  ranking in trec_eval order.
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

Expected values in closed form (McSherry & Najork, ECIR 2008): take a tie
group at ranks ``s+1 .. s+n`` holding ``r`` relevant documents, with ``c``
relevant documents ranked before it.  In a uniformly random order of the
group, the document at the group's ``i``-th place (rank ``k = s+i``) is
relevant with probability ``r/n``; given that it is, the number of relevant
documents among the ``i-1`` places before it in the group is hypergeometric
with mean ``(i-1)(r-1)/(n-1)``.  Hence, by linearity:

- P@k, Rprec, binary RBP: ``E[rel_k] = r/n``, summed against the measure's
  weights of the ranks.
- AP: ``E[rel_k * hits_k] = (r/n) (c + 1 + (i-1)(r-1)/(n-1))`` (``r (c+1)``
  when n = 1), divided by k, summed over the ranks (<= cutoff) and divided by R.
- RR: only the first group holding a relevant document counts (``c = 0``);
  the first relevant document is at its ``i``-th place with probability
  ``C(n-i, r-1) / C(n, r)``; ``E[RR] = sum_i C(n-i, r-1) / C(n, r) / (s+i)``
  over the ranks within the cutoff.
- nDCG: ``E[gain_k]`` is the group's mean gain; the ideal ranking does not
  depend on the order.
- R@k, Judged@k: as P@k, with ``E[judged_k]`` the group's share of judged documents for Judged@k.
- Success@k: 1 minus the probability that no relevant document is in the cut, the product over the groups
  of ``C(n-r, m) / C(n, m)``, ``m`` the group's places inside the cut (only one group is cut, the others
  give 0 or 1, so the product is their minimum).
- The set measures and NumRet, NumRel, NumRelRet do not depend on the order; IPrec@r has no closed form
  and does not take ``ties='expected'``.
- bpref: a relevant document of a group holding ``nn`` judged non-relevant
  documents, with ``B`` judged non-relevant documents ranked before the
  group, has ``B + t`` of them ranked above it, ``t`` uniform on ``0 .. nn``;
  so its expected term is ``1 - sum_{x=B}^{B+nn} min(x, R) / ((nn+1) max(min(R, N), 1))``.

Every formula is whole-array arithmetic over positions and groups (no Python
step per document); tests/measures/test_standard_ties.py checks them against
the mean over every order of every tie group.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from irmeasures_markov._util._sampling import log_choose
from irmeasures_markov._util._segments import segment_cumsum, segment_sum
from irmeasures_markov.ranking._holes import query_fill_grades
from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch, select_positions
from irmeasures_markov.ranking._qrels_index import UNJUDGED, judged
from irmeasures_markov.ranking._scenarios import tie_groups_flat

if TYPE_CHECKING:
    from ir_measures import Measure

__all__ = ["STANDARD_UNJUDGED", "StandardMeasure", "float32_note", "standard_measure", "standard_values"]

#: the ``unjudged`` settings of the standard measures
STANDARD_UNJUDGED = ("nonrel", "drop", "rel")


#: the kinds whose value does not depend on the order of the ranking
_ORDER_FREE = ("SetP", "SetRelP", "SetR", "SetF", "NumRet", "NumRelRet", "NumRel")
#: the kinds that count documents of the whole (cut) ranking
_COUNTING = ("R", "Success", "Judged") + _ORDER_FREE
#: ir_measures' names of the measures with a parameter read by :func:`standard_measure` besides rel and cutoff
_LEVEL = {"SetF": "beta", "IPrec": "recall"}


class StandardMeasure(NamedTuple):
    """One measure of this family: ``kind`` (``'AP'``, ``'P'``, ``'Rprec'``, ``'Bpref'``, ``'RR'``, ``'nDCG'``,
    ``'RBP'``, ``'R'``, ``'Success'``, ``'Judged'``, ``'SetP'``, ``'SetRelP'``, ``'SetR'``, ``'SetF'``,
    ``'IPrec'``, ``'NumRet'``, ``'NumRelRet'`` or ``'NumRel'``), the relevance level ``rel`` (1 for nDCG), the
    ``cutoff`` (None for none), RBP's ``p``, and ``level``: SetF's ``beta`` or IPrec's recall level."""
    kind: str
    rel: int = 1
    cutoff: int | None = None
    p: float | None = None
    level: float | None = None


def standard_measure(m: Measure) -> StandardMeasure | None:
    """The measure of this family that ``m`` is, or None for one left to ``ir_measures``.

    AP, P@k, Rprec, bpref, RR (also RR@k), nDCG and nDCG@k with the default
    gains and ``log2`` discount, binary RBP (``rel`` given), R@k, Success@k,
    SetP, SetR, SetF, IPrec@r, NumRet, NumRel and Judged, all of
    ``ir_measures``; not those with ``judged_only=True`` or a negative ``rel``.

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.

    Returns
    -------
    StandardMeasure or None
    """
    if not type(m).__module__.startswith("ir_measures"):
        return None
    params = m.params

    def param(name, default):
        v = params.get(name, default)
        return default if v is None else v

    name, cutoff, rel = getattr(m, "NAME", None), params.get("cutoff"), int(param("rel", 1))
    if param("judged_only", False) or rel < 0:
        return None
    if name in ("AP", "Rprec", "Bpref", "RR") or (name == "P" and cutoff is not None) \
            or (name == "RBP" and params.get("rel") is not None):
        return StandardMeasure(name, rel, cutoff, float(m["p"]) if name == "RBP" else None)
    if name == "nDCG" and params.get("gains") is None and param("dcg", "log2") == "log2":
        return StandardMeasure(name, 1, cutoff)
    if name in ("R", "Success") and cutoff is not None or name in ("Judged", "SetR", "NumRel"):
        return StandardMeasure(name, rel, cutoff)
    if name == "SetP":
        return StandardMeasure("SetRelP" if param("relative", False) else "SetP", rel)
    if name in _LEVEL:
        return StandardMeasure(name, rel, level=float(param(_LEVEL[name], 1.0)))
    if name == "NumRet":
        return StandardMeasure("NumRet") if params.get("rel") is None else StandardMeasure("NumRelRet", rel)
    return None


def float32_note(measures: Iterable[Measure]) -> str:
    """One line naming the measures of ``ir_measures`` this family does not compute ('' when there is none).

    They are left to ``ir_measures``' own providers; pytrec_eval's hold scores
    as float32, so near-tied documents may be ordered otherwise than in the
    float64 ranking every other value is computed on.

    Parameters
    ----------
    measures : iterable of ir_measures.Measure

    Returns
    -------
    str
    """
    left = [str(m) for m in measures if type(m).__module__.startswith("ir_measures") and standard_measure(m) is None]
    if not left:
        return ""
    return (f"{', '.join(left)}: computed by ir_measures (pytrec_eval holds scores as float32, which can reorder "
            "near-tied documents), not on the float64 ranking in trec_eval's order of the other measures")


def standard_values(s: StandardMeasure, prepared: PreparedRun, ties: str = "docid", unjudged: str = "nonrel",
                    residual: bool = False, cache: dict | None = None) -> np.ndarray:
    """Per-query values of a standard measure, with a tie order and a treatment of unjudged documents.

    Parameters
    ----------
    s : StandardMeasure
        What [`standard_measure`][irmeasures_markov.measures.standard_measure] returned.
    prepared : PreparedRun
        The run joined with the qrels; other ``ties`` than ``'docid'`` need it prepared with ``keep_scores``.
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
        float64, one value per query of ``prepared``, in the order of ``prepared.qids``.

    Raises
    ------
    ValueError
        An unknown ``ties`` or ``unjudged``, or ``residual=True`` with ``unjudged`` other than ``'nonrel'``.
    """
    if unjudged not in STANDARD_UNJUDGED or (residual and unjudged != "nonrel"):
        raise ValueError(f"unjudged={unjudged!r}, residual={residual!r} is not a setting of the standard measures "
                         f"(unjudged one of {list(STANDARD_UNJUDGED)}; residual=True only with 'nonrel').")
    if residual:
        return (standard_values(s, prepared, ties, "rel", cache=cache)
                - standard_values(s, prepared, ties, "nonrel", cache=cache))
    cache = {} if cache is None else cache
    lists = cache.get(("standard", unjudged))
    if lists is None or lists.prepared is not prepared:
        lists = cache[("standard", unjudged)] = _Lists(prepared, unjudged)
    if ties == "expected":
        return _expected_values(s, lists)
    if ties == "docid" and unjudged == "nonrel":
        b = prepared.batch(rel=s.rel, judged_only=True) if s.kind == "Bpref" else \
            prepared.batch(rel=s.rel, cutoff=s.cutoff, judgments=s.kind == "Judged")
    else:
        b = lists.batch(s, ties)
    if s.kind == "Bpref":
        return _bpref(b, *lists.bpref_counts(s.rel))
    if s.kind == "nDCG":
        return _ndcg(b, lists.ideal(s.cutoff))
    if s.kind == "IPrec":
        return _iprec(b, s.level)
    if s.kind in _COUNTING:
        return _counting(s, b)
    return _binary(s, b)


class _Lists:
    """The rankings of a prepared run under one ``unjudged`` setting: grades, tie groups, judgment counts."""

    def __init__(self, prepared: PreparedRun, unjudged: str) -> None:
        self.prepared, self.qids, self.unjudged = prepared, prepared.qids, unjudged
        #: per query: the documents judged by the setting, and the grade they get
        self.added = np.zeros(len(self.qids), dtype=np.int64)
        self.fill = np.ones(len(self.qids), dtype=np.int64)
        if unjudged == "rel":
            self.fill = query_fill_grades(prepared.qrels_index, self.qids)
            self.added = segment_sum(~judged(prepared.full_grades), prepared.offsets).astype(np.int64)
        self._ordered: dict[str, np.ndarray] = {}
        self._ideal: dict[int | None, np.ndarray] = {}

    @cached_property
    def rankings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grade at every rank, the id of its tie group (0, 1, ... in rank order) and the query offsets."""
        grades, offsets = self.prepared.full_grades, self.prepared.offsets
        group_id, _ = tie_groups_flat(self.prepared)
        if self.unjudged == "drop":
            return _condense(grades, group_id, offsets)
        if self.unjudged == "rel":
            grades = np.where(judged(grades), grades, np.repeat(self.fill, np.diff(offsets)))
        return grades, group_id, offsets

    def batch(self, s: StandardMeasure, ties: str) -> RelevanceBatch:
        """The rankings with each tie group in the order ``ties``, condensed for bpref, cut at the cutoff."""
        if ties not in ("docid", "optimistic", "pessimistic"):
            raise ValueError(f"`ties`={ties!r} is not one of ['docid', 'optimistic', 'pessimistic', 'expected'].")
        grades, group_id, offsets = self.rankings
        if ties != "docid":
            if ties not in self._ordered:
                # each tie group sorted by grade (descending for 'optimistic'), stable, unjudged as 0
                key = np.where(judged(grades), grades, 0)
                self._ordered[ties] = grades[np.lexsort((-key if ties == "optimistic" else key, group_id))]
            grades = self._ordered[ties]
        if s.kind == "Bpref":
            grades, _, offsets = _condense(grades, group_id, offsets)
        else:
            keep, offsets = select_positions(None, offsets, False, s.cutoff)
            grades = grades if keep is None else grades[keep]
        return RelevanceBatch(self.qids, offsets, grades, grades >= s.rel, self.count_at_least(s.rel), s.rel)

    def count_at_least(self, t: int) -> np.ndarray:
        """Judgments with grade >= ``t`` per query, those given to unjudged documents included (int64)."""
        return self.prepared.recall_bases(t) + np.where(self.fill >= t, self.added, 0)

    def bpref_counts(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """``(R, N)`` of `_bpref`: judgments with grade >= ``rel`` and in ``[0, rel)`` (float64)."""
        R = self.count_at_least(max(rel, 0)).astype(np.float64)
        N = (self.count_at_least(0) - self.count_at_least(rel)).astype(np.float64) if rel > 0 else np.zeros(R.size)
        return R, N

    def ideal(self, cutoff: int | None) -> np.ndarray:
        """Each query's ideal DCG (trec_eval's), the documents judged at ``fill`` included (made once per cutoff)."""
        out = self._ideal.get(cutoff)
        if out is None:
            index = self.prepared.qrels_index
            out = self._ideal[cutoff] = np.zeros(len(self.qids))
            for i, q in enumerate(self.qids):
                g = index.judged_grades(q)
                if self.added[i]:
                    g = np.sort(np.concatenate([g, np.full(int(self.added[i]), self.fill[i], dtype=np.int64)]))[::-1]
                g = g[g > 0][:cutoff].astype(np.float64)
                out[i] = np.sum(g / np.log2(np.arange(2.0, g.size + 2.0)))
        return out


def _condense(grades: np.ndarray, group_id: np.ndarray, offsets: np.ndarray):
    """The condensed list (unjudged documents removed): grades, tie groups renumbered 0, 1, ..., offsets."""
    keep, offsets = select_positions(grades, offsets, True, None)
    if keep is None:
        return grades, group_id, offsets
    kept = group_id[keep]
    return grades[keep], np.cumsum(np.diff(kept, prepend=-1) != 0) - 1, offsets


def _judged(grades: np.ndarray, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """bpref's relevant and judged non-relevant documents: only grades >= 0 count (a negative one is unjudged)."""
    counted = grades >= 0
    relevant = counted & (grades >= rel)
    return relevant, counted & ~relevant


def _ratio(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``x / d`` per query, 0 where ``d`` is 0: a query with no relevant document (no ideal DCG) scores 0."""
    return np.where(d > 0, x / np.where(d > 0, d, 1.0), 0.0)


def _bpref(b: RelevanceBatch, R: np.ndarray, N: np.ndarray) -> np.ndarray:
    """trec_eval's bpref on a judged-only batch, with ``(R, N)`` of `_Lists.bpref_counts`."""
    relevant, nonrel = _judged(b.grades, b.rel)
    # judged non-relevant documents ranked above each one: exact integer counts
    before = (segment_cumsum(nonrel, b.offsets) - nonrel).astype(np.float64)
    Rq, Nq = np.repeat(R, b.lengths), np.repeat(N, b.lengths)
    denom = np.maximum(np.minimum(Rq, Nq), 1.0)
    term = np.where(before > 0, 1.0 - np.minimum(before, Rq) / denom, 1.0)
    total = segment_sum(np.where(relevant, term, 0.0), b.offsets)
    return _ratio(total, R)


def _ndcg(b: RelevanceBatch, ideal: np.ndarray) -> np.ndarray:
    """trec_eval's ndcg on a (cut) batch, with each query's ideal DCG; a query whose ideal is 0 scores 0."""
    gain = np.maximum(b.grades, 0).astype(np.float64)
    dcg = segment_sum(np.where(gain > 0, gain / np.log2(b.ranks + 1.0), 0.0), b.offsets)
    return _ratio(dcg, ideal)


def _counting(s: StandardMeasure, b: RelevanceBatch) -> np.ndarray:
    """R@k, Success@k, Judged@k, the set measures and the counts on a batch cut at the cutoff (module docstring)."""
    ret = b.lengths.astype(np.float64)
    if s.kind == "Judged":
        return _ratio(segment_sum(b.grades != UNJUDGED, b.offsets).astype(np.float64), ret)
    rel_ret = segment_sum(b.relevant, b.offsets).astype(np.float64)
    R = b.recall_base.astype(np.float64)
    if s.kind == "Success":
        return (rel_ret > 0).astype(np.float64)
    if s.kind in ("R", "SetR"):
        return _ratio(rel_ret, R)
    if s.kind == "SetP":
        return _ratio(rel_ret, ret)
    if s.kind == "SetRelP":
        return _ratio(rel_ret, np.minimum(ret, R))
    if s.kind == "SetF":
        precision, recall = _ratio(rel_ret, ret), _ratio(rel_ret, R)
        return _ratio((s.level + 1.0) * precision * recall, s.level * precision + recall)
    return {"NumRet": ret, "NumRelRet": rel_ret, "NumRel": R}[s.kind]


def _iprec(b: RelevanceBatch, level: float) -> np.ndarray:
    """trec_eval 9's interpolated precision at recall ``level`` on a whole ranking (module docstring)."""
    counts = segment_sum(b.relevant, b.offsets).astype(np.int64)
    at = np.flatnonzero(b.relevant)
    # j / k_j at the j-th relevant document, query after query, then a 0 that the last range may end on
    precision = np.append(segment_cumsum(b.relevant, b.offsets)[at] / b.ranks[at], 0.0)
    # the relevant documents to reach, as trec_eval 9 counts them (truncated, not rounded)
    c = np.maximum((level * b.recall_base.astype(np.float64) + 0.9).astype(np.int64), 1)
    out = np.zeros(len(b.qids))
    ok = c <= counts
    if ok.any():
        starts = np.concatenate([[0], np.cumsum(counts)])
        bounds = np.empty(2 * int(ok.sum()), dtype=np.int64)
        bounds[0::2], bounds[1::2] = starts[:-1][ok] + c[ok] - 1, starts[1:][ok]
        out[ok] = np.maximum.reduceat(precision, bounds)[0::2]
    return out


def _binary(s: StandardMeasure, b: RelevanceBatch) -> np.ndarray:
    """AP, P@k, Rprec, RR or binary RBP on a batch cut at the cutoff, ``relevant`` and ``recall_base`` at ``rel``."""
    relv = b.relevant.astype(np.float64)
    R = b.recall_base.astype(np.float64)
    if s.kind == "RR":
        out = np.zeros(len(b.qids))
        nonempty = b.lengths > 0
        if b.relevant.size:
            first = np.minimum.reduceat(np.where(b.relevant, b.ranks, np.iinfo(np.int64).max),
                                        b.offsets[:-1][nonempty])
            found = first < np.iinfo(np.int64).max
            out[np.flatnonzero(nonempty)[found]] = 1.0 / first[found]
        return out
    if s.kind == "RBP":
        return segment_sum(np.where(b.relevant, (1.0 - s.p) * np.power(s.p, b.ranks - 1.0), 0.0), b.offsets)
    if s.kind == "P":
        return segment_sum(relv, b.offsets) / float(s.cutoff)
    if s.kind == "Rprec":
        top = b.ranks <= np.repeat(R, b.lengths)
        return segment_sum(np.where(top, relv, 0.0), b.offsets) / np.maximum(R, 1.0)
    # AP: an integer running count (exact, one cumsum): the same numbers as a float cumsum of 0/1 per query
    hits = segment_cumsum(b.relevant, b.offsets).astype(np.float64)
    return segment_sum(np.where(b.relevant, hits / b.ranks, 0.0), b.offsets) / np.maximum(R, 1.0)


def _expected_values(s: StandardMeasure, lists: _Lists) -> np.ndarray:
    """The mean over every order of every tie group, in closed form (module docstring)."""
    rel = s.rel
    grades, group_id, offsets = lists.rankings
    if s.kind == "Bpref":
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
    cutoff = s.cutoff
    in_cut = ranks <= cutoff if cutoff is not None else np.ones(size, dtype=bool)
    if s.kind == "nDCG":
        gain = np.maximum(grades, 0).astype(np.float64)
        mean_gain = (np.add.reduceat(gain, group_start) / n_g)[group_id]
        dcg = segment_sum(np.where(in_cut, mean_gain / np.log2(ranks + 1.0), 0.0), offsets)
        return _ratio(dcg, lists.ideal(cutoff))
    if s.kind == "Bpref":
        relevant, nonrel = _judged(grades, rel)
        R, N = lists.bpref_counts(rel)
        nn = np.add.reduceat(nonrel.astype(np.int64), group_start).astype(np.float64)[group_id]
        before = (segment_cumsum(nonrel, offsets) - nonrel)[group_start].astype(np.float64)[group_id]
        Rq = np.repeat(R, lengths)
        last = before + nn
        top = np.minimum(Rq, last)   # sum_{x=B}^{B+nn} min(x, R): x itself up to R, then R
        sums = np.where(Rq < before, (nn + 1.0) * Rq, (before + top) * (top - before + 1.0) / 2.0 + (last - top) * Rq)
        term = 1.0 - sums / ((nn + 1.0) * np.maximum(np.minimum(Rq, np.repeat(N, lengths)), 1.0))
        total = segment_sum(np.where(relevant, term, 0.0), offsets)
        return _ratio(total, R)
    if s.kind == "IPrec":
        raise ValueError(f"IPrec@{s.level:g} has no closed form for ties='expected': use 'docid', 'optimistic' "
                         "or 'pessimistic'.")
    if s.kind in _ORDER_FREE:
        return _counting(s, lists.batch(s, "docid"))
    relevant = (grades != UNJUDGED) if s.kind == "Judged" else grades >= rel
    r_g = np.add.reduceat(relevant.astype(np.int64), group_start).astype(np.float64)
    r = r_g[group_id]
    p_rel = r / n
    R = lists.count_at_least(rel).astype(np.float64)
    if s.kind == "P":
        return segment_sum(np.where(in_cut, p_rel, 0.0), offsets) / float(cutoff)
    if s.kind in ("R", "Judged"):
        hits = segment_sum(np.where(in_cut, p_rel, 0.0), offsets)
        return _ratio(hits, R if s.kind == "R" else segment_sum(in_cut, offsets).astype(np.float64))
    if s.kind == "Success":
        m = np.add.reduceat(in_cut.astype(np.int64), group_start).astype(np.float64)
        n_r = n_g - r_g
        none = np.ones(group_start.size)     # P(no relevant document of the group inside the cut)
        none[(r_g > 0) & (m > n_r)] = 0.0
        part = (r_g > 0) & (m > 0) & (m <= n_r)
        none[part] = np.exp(log_choose(n_r[part], m[part]) - log_choose(n_g[part], m[part]))
        out = np.zeros(n_q)
        nonempty = lengths > 0
        out[nonempty] = 1.0 - np.minimum.reduceat(none[group_id], offsets[:-1][nonempty])
        return out
    if s.kind == "Rprec":
        return segment_sum(np.where(ranks <= np.repeat(R, lengths), p_rel, 0.0), offsets) / np.maximum(R, 1.0)
    if s.kind == "RBP":
        return segment_sum(np.where(in_cut, (1.0 - s.p) * np.power(s.p, ranks - 1.0) * p_rel, 0.0), offsets)
    c = (segment_cumsum(relevant, offsets) - relevant)[group_start].astype(np.float64)[group_id]
    if s.kind == "AP":
        others = np.where(n > 1, (place - 1.0) * (r - 1.0) / np.maximum(n - 1.0, 1.0), 0.0)
        x = p_rel * (c + 1.0 + others) / ranks
        return segment_sum(np.where(in_cut, x, 0.0), offsets) / np.maximum(R, 1.0)
    # RR
    first = (c == 0) & (r >= 1) & (n - place >= r - 1) & in_cut
    a, k = n[first] - place[first], r[first] - 1.0
    prob = np.zeros(size)
    prob[first] = np.exp(log_choose(a, k) - log_choose(n[first], r[first]))
    return segment_sum(prob / ranks, offsets)
