"""Standard measures on our float64 ranking preparation, with trec_eval's definitions.

``pytrec_eval`` (0.5.x) holds scores as float32, which reorders near-ties, so
:func:`~irmeasures_markov.experiments.evaluate` computes AP, P@k, Rprec,
bpref, RR (also RR@k), nDCG, nDCG@k and binary RBP here from a
:class:`~irmeasures_markov.ranking.prepared.PreparedRun`: :func:`native_kind` says
whether a measure is one of them, :func:`native_values` computes its
per-query values.
"""
from __future__ import annotations

import numpy as np
from ir_measures import Measure

from .._util.segments import segment_cumsum, segment_sum
from ..ranking.prepared import PreparedRun, RelevanceBatch

__all__ = ["binary_kernel", "bpref_counts", "bpref_kernel", "ideal_dcg", "native_kind", "native_values",
           "ndcg_kernel", "native_param"]


def native_param(m: Measure, name: str, default=None):
    """Parameter ``name`` of ``m``, ``default`` when absent or None.

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.
    name : str
        The parameter.
    default : object, optional
        What an absent (or None) parameter reads as.

    Returns
    -------
    object
    """
    v = m.params.get(name, default)
    return default if v is None else v


def native_kind(m: Measure) -> str | None:
    """The kind of standard measure computed natively for ``m``, or None for one left to ``ir_measures``.

    Native (trec_eval's definitions, checked against trec_eval's output for
    every TREC-8 run in integration/): AP, P@k, Rprec, bpref, RR (also RR@k),
    nDCG and nDCG@k with the default gains and ``log2`` discount, and binary
    RBP (``rel`` given).  Measures of other packages, those with
    ``judged_only=True`` or a negative ``rel`` are not.

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.

    Returns
    -------
    str or None
        ``'AP'``, ``'P'``, ``'Rprec'``, ``'Bpref'``, ``'RR'``, ``'nDCG'`` or
        ``'RBP'`` (the ``kind`` :func:`native_values` takes), or None.
    """
    if not type(m).__module__.startswith("ir_measures"):
        return None
    name = getattr(m, "NAME", None)
    if native_param(m, "judged_only", False):
        return None
    if int(native_param(m, "rel", 1)) < 0:
        return None
    if name == "AP":
        return "AP"
    if name == "P" and m.params.get("cutoff") is not None:
        return "P"
    if name == "Rprec":
        return "Rprec"
    if name == "Bpref":
        return "Bpref"
    if name == "RR":
        return "RR"
    if name == "nDCG" and m.params.get("gains") is None and native_param(m, "dcg", "log2") == "log2":
        return "nDCG"
    if name == "RBP" and m.params.get("rel") is not None:
        return "RBP"
    return None


def bpref_kernel(b: RelevanceBatch, R: np.ndarray, N: np.ndarray) -> np.ndarray:
    """trec_eval's bpref on a judged-only batch ``b``, with ``R``/``N`` the judged relevant/non-relevant counts.

    Only grades >= 0 count (a negative grade means "in the pool, unjudged");
    each relevant document scores 1 - min(n, R) / min(R, N) with n the judged
    non-relevant documents ranked above it (1 when n = 0).

    Parameters
    ----------
    b : RelevanceBatch
        The condensed rankings (no unjudged document).
    R, N : numpy.ndarray
        Per query, float64: judgments with grade >= ``b.rel`` and with grade in ``[0, b.rel)``.

    Returns
    -------
    numpy.ndarray
        float64, one value per query of ``b``.
    """
    counted = b.grades >= 0
    relevant = counted & (b.grades >= b.rel)
    nonrel = counted & ~relevant
    # judged non-relevant documents ranked above each one: exact integer counts
    before = (segment_cumsum(nonrel, b.offsets) - nonrel).astype(np.float64)
    Rq, Nq = np.repeat(R, b.lengths), np.repeat(N, b.lengths)
    denom = np.maximum(np.minimum(Rq, Nq), 1.0)
    term = np.where(before > 0, 1.0 - np.minimum(before, Rq) / denom, 1.0)
    total = segment_sum(np.where(relevant, term, 0.0), b.offsets)
    return np.where(R > 0, total / np.maximum(R, 1.0), 0.0)


def bpref_counts(prepared: PreparedRun, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """``(R, N)`` of :func:`bpref_kernel` from the judgments of ``prepared``, float64 per query.

    Parameters
    ----------
    prepared : PreparedRun
        The run joined with the qrels.
    rel : int
        Relevance level.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Judgments with grade >= ``rel``, and with grade in ``[0, rel)`` (none when ``rel <= 0``).
    """
    # judgment counts per query from the recall-base tables (made once per qrels and level, no loop per query):
    # N = #{0 <= g < rel} = #{g >= 0} - #{g >= rel}, empty when rel <= 0
    R = prepared.recall_bases(max(rel, 0)).astype(np.float64)
    N = (prepared.recall_bases(0) - prepared.recall_bases(rel)).astype(np.float64) if rel > 0 else np.zeros(R.size)
    return R, N


def _bpref(m, prepared) -> np.ndarray:
    """trec_eval's bpref (:func:`bpref_kernel`) on the judged-only batch of ``prepared``."""
    rel = int(native_param(m, "rel", 1))
    return bpref_kernel(prepared.batch(rel=rel, judged_only=True), *bpref_counts(prepared, rel))


def ideal_dcg(grades_desc: np.ndarray, cutoff: int | None) -> float:
    """trec_eval's ideal DCG of one query from its judged grades sorted descending.

    Parameters
    ----------
    grades_desc : numpy.ndarray
        Every judged grade of the query, highest first.
    cutoff : int or None
        Rank cutoff of the ideal ranking.

    Returns
    -------
    float
        The DCG of the positive grades, cut at ``cutoff``, discount ``log2(rank + 1)``.
    """
    g = grades_desc[grades_desc > 0][:cutoff].astype(np.float64)
    return float(np.sum(g / np.log2(np.arange(2.0, g.size + 2.0))))


def ndcg_kernel(b: RelevanceBatch, ideal: np.ndarray) -> np.ndarray:
    """trec_eval's ndcg on a (cut) batch: gain = grade (0 for grades <= 0), discount log2(rank + 1).

    Parameters
    ----------
    b : RelevanceBatch
        The rankings, cut at the measure's cutoff.
    ideal : numpy.ndarray
        Each query's ideal DCG (:func:`ideal_dcg`); a query whose ideal is 0 scores 0.

    Returns
    -------
    numpy.ndarray
        float64, one value per query of ``b``.
    """
    gain = np.maximum(b.grades, 0).astype(np.float64)
    dcg = segment_sum(np.where(gain > 0, gain / np.log2(b.ranks + 1.0), 0.0), b.offsets)
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


def _ndcg(m, prepared) -> np.ndarray:
    """trec_eval's ndcg / ndcg_cut: gain = grade (0 for grades <= 0), discount log2(rank + 1).

    The ideal ranking holds every judged document with a positive grade,
    grades descending, cut at the cutoff; a query with none scores 0.
    """
    cutoff = m.params.get("cutoff")
    b = prepared.batch(rel=1, cutoff=cutoff, judgments=False)
    ideal = np.array([ideal_dcg(prepared.qrels_index.judged_grades(q), cutoff) for q in b.qids], dtype=np.float64)
    return ndcg_kernel(b, ideal)


def binary_kernel(kind: str, m: Measure, b: RelevanceBatch) -> np.ndarray:
    """AP, P@k, Rprec, RR or binary RBP on a batch cut at the measure's cutoff (trec_eval's definitions).

    Parameters
    ----------
    kind : str
        ``'AP'``, ``'P'``, ``'Rprec'``, ``'RR'`` or ``'RBP'``.
    m : ir_measures.Measure
        The measure (its ``cutoff`` and ``p`` are read).
    b : RelevanceBatch
        The rankings cut at the cutoff, with ``relevant`` and ``recall_base`` at the measure's ``rel``.

    Returns
    -------
    numpy.ndarray
        float64, one value per query of ``b``.
    """
    cutoff = m.params.get("cutoff")
    relv = b.relevant.astype(np.float64)
    R = b.recall_base.astype(np.float64)
    if kind == "RR":
        out = np.zeros(len(b.qids))
        nonempty = b.lengths > 0
        if b.relevant.size:
            first = np.minimum.reduceat(np.where(b.relevant, b.ranks, np.iinfo(np.int64).max),
                                        b.offsets[:-1][nonempty])
            found = first < np.iinfo(np.int64).max
            out[np.flatnonzero(nonempty)[found]] = 1.0 / first[found]
        return out
    if kind == "RBP":
        p = float(m["p"])
        return segment_sum(np.where(b.relevant, (1.0 - p) * np.power(p, b.ranks - 1.0), 0.0), b.offsets)
    if kind == "P":
        return segment_sum(relv, b.offsets) / float(cutoff)
    if kind == "Rprec":
        top = b.ranks <= np.repeat(R, b.lengths)
        return segment_sum(np.where(top, relv, 0.0), b.offsets) / np.maximum(R, 1.0)
    if kind == "AP":
        # an integer running count (exact, one cumsum): the same numbers as a float cumsum of 0/1 per query
        hits = segment_cumsum(b.relevant, b.offsets).astype(np.float64)
        return segment_sum(np.where(b.relevant, hits / b.ranks, 0.0), b.offsets) / np.maximum(R, 1.0)
    raise AssertionError(kind)


def native_values(kind: str, m: Measure, prepared: PreparedRun) -> np.ndarray:
    """Per-query values of a natively computed measure, in the order of ``prepared.qids``.

    Parameters
    ----------
    kind : str
        What :func:`native_kind` returned for ``m``.
    m : ir_measures.Measure
        The measure (its ``rel``, ``cutoff`` and ``p`` parameters are read).
    prepared : PreparedRun
        The run joined with the qrels.

    Returns
    -------
    numpy.ndarray
        float64, one value per query of ``prepared``.
    """
    if kind == "Bpref":
        return _bpref(m, prepared)
    if kind == "nDCG":
        return _ndcg(m, prepared)
    rel = int(native_param(m, "rel", 1))
    return binary_kernel(kind, m, prepared.batch(rel=rel, cutoff=m.params.get("cutoff"), judgments=False))
