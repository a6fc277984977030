"""Tie order and unjudged documents: the ``ties``, ``unjudged``, ``residual`` and ``seed`` parameters of every family.

A measure with one of these parameters set is its *base measure* (the same
measure without them) evaluated on other readings of the run
(`irmeasures_markov.ranking._scenarios`):

- ``ties='optimistic'`` / ``'pessimistic'``: inside every group of equal
  scores, higher (lower) grades first, docid order otherwise: the value of the
  run reordered so;
- ``ties='expected'``: the mean over every order of every tie group, each
  equally likely.  Only the pattern of what the measure reads matters, so the
  mean runs over the distinct arrangements of the tie keys (grades; for a
  measure that reads a value per document, such as TBG's lengths, the
  documents), exactly when a query has at most `EXACT_LIMIT` of them,
  by seeded Monte Carlo otherwise (standard error reported as the extra
  ``'se'``, below `TARGET_SE` unless `MAX_SAMPLES` is reached);
- ``unjudged='drop'``: the condensed list (``judged_only=True``);
  ``'rel'``: every unjudged retrieved document judged relevant at
  max(1, the query's highest judged grade), joining the recall base; a family
  whose user reads past the end of the ranking also finds relevant documents
  there ([`FamilyMeasure.filled_length`][irmeasures_markov.plugin.FamilyMeasure.filled_length]); ``'range'``: the
  smallest and
  largest value over every judgment of those documents (extras ``'lo'`` and
  ``'hi'``; the value is ``hi - lo``), exact for up to
  `RANGE_EXACT` of them, a seeded sample beyond;
- ``residual=True``: the value with ``unjudged='rel'`` minus the value with
  ``'nonrel'``.

docs/ties-and-holes.md states the conventions for users.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from ir_measures.util import Metric

from irmeasures_markov._util._sampling import mean_until_se
from irmeasures_markov.io._content import read_once
from irmeasures_markov.ranking._arrangements import (
    arrangement_counts,
    iter_arrangements,
    log_limit,
    reorder_ties,
    sample_orders,
)
from irmeasures_markov.ranking._holes import fill_ranks, judge_unjudged, judgment_patterns
from irmeasures_markov.ranking._qrels_index import judged
from irmeasures_markov.ranking._scenarios import FILLED, ScenarioRun, identity_reading, query_rng

if TYPE_CHECKING:
    from ir_measures.measures import Measure as FamilyMeasure  # plugin.base.FamilyMeasure, which imports this module

    from irmeasures_markov.ranking._prepared import PreparedRun

__all__ = ["VARIANT_DEFAULTS", "TIES", "UNJUDGED_CHOICES", "EXACT_LIMIT", "TARGET_SE", "FIRST_SAMPLES", "MAX_SAMPLES",
           "RANGE_EXACT", "RANGE_SAMPLES", "VariantValues", "MetricWithExtras", "reported_extras", "is_variant",
           "base_measure", "variant_values", "family_values", "check_variant_params"]

#: the parameters this module reads, at their defaults (a measure at these values is unchanged)
VARIANT_DEFAULTS = {"ties": "docid", "unjudged": "nonrel", "residual": False, "seed": 0}
TIES = ("docid", "optimistic", "pessimistic", "expected")
UNJUDGED_CHOICES = ("nonrel", "drop", "rel", "range")
#: ``ties='expected'`` is exact for a query whose tie groups have at most this many distinct arrangements
EXACT_LIMIT = 10_000
#: Monte Carlo standard error ``ties='expected'`` aims below, per query
TARGET_SE = 1e-3
#: Monte Carlo orders drawn at first, and at most, per query
FIRST_SAMPLES = 256
MAX_SAMPLES = 1 << 18
#: ``unjudged='range'`` is exact for up to this many unjudged documents read (2**16 judgments)
RANGE_EXACT = 16
#: judgments drawn beyond that (plus all non-relevant and all relevant)
RANGE_SAMPLES = 4096


@dataclass
class VariantValues:
    """Per-query values of a measure, and its per-query extras (``'se'``, ``'lo'``, ``'hi'``).

    Parameters
    ----------
    values : numpy.ndarray
        One value per prepared query.
    extras : dict of str to numpy.ndarray
        Per-query extra figures, by name.
    """
    values: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)


class MetricWithExtras(Metric):
    """An ``ir_measures`` Metric (equal to the plain one) that also carries per-query ``extras``.

    ``extras`` holds ``'se'`` (Monte Carlo standard error of ``ties='expected'``,
    0.0 where exact) or ``'lo'``/``'hi'`` (``unjudged='range'``).
    """
    extras: dict[str, float]

    def __new__(cls, query_id: str, measure: object, value: float, extras: dict[str, float] | None = None
                ) -> MetricWithExtras:
        self = super().__new__(cls, query_id, measure, value)
        self.extras = dict(extras or {})
        return self


def reported_extras(measure: FamilyMeasure) -> list[str]:
    """The per-query extras a measure reports besides its value: ``'se'`` for ``ties='expected'``,
    ``'lo'`` and ``'hi'`` for ``unjudged='range'`` (in that order).

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package.

    Returns
    -------
    list of str
    """
    names = []
    if measure.params.get("ties") == "expected":
        names.append("se")
    if measure.params.get("unjudged") == "range":
        names += ["lo", "hi"]
    return names


def is_variant(measure: FamilyMeasure) -> bool:
    """Whether a measure sets ``ties``, ``unjudged`` or ``residual`` away from their defaults.

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package.

    Returns
    -------
    bool
    """
    return any(measure.params.get(name, default) != default for name, default in VARIANT_DEFAULTS.items()
               if name != "seed")   # a seed alone changes nothing


def base_measure(measure: FamilyMeasure) -> FamilyMeasure:
    """The same measure without ``ties``, ``unjudged``, ``residual`` and ``seed``.

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package.

    Returns
    -------
    FamilyMeasure
    """
    params = {k: v for k, v in measure.params.items() if k not in VARIANT_DEFAULTS}
    base = type(measure)(**params)
    base.validate_params()
    return base


def check_variant_params(measure: FamilyMeasure) -> None:
    """Refuse combinations of ``ties``, ``unjudged`` and ``residual`` that mean nothing.

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package.

    Raises
    ------
    ValueError
        ``residual=True`` with ``unjudged`` set, or ``unjudged='range'`` with ``ties='expected'``.
    """
    p = measure.params
    ties, unjudged = p.get("ties", "docid"), p.get("unjudged", "nonrel")
    if p.get("residual") and unjudged != "nonrel":
        raise ValueError(f"{measure.NAME}: residual=True is the value with unjudged='rel' minus the value with "
                         f"'nonrel'; it cannot be combined with unjudged={unjudged!r}.")
    if unjudged == "range" and ties == "expected":
        raise ValueError(f"{measure.NAME}: unjudged='range' takes ties='docid', 'optimistic' or 'pessimistic', "
                         "not 'expected'.")
    if unjudged == "drop" and p.get("judged_only") is False and "judged_only" in p:
        raise ValueError(f"{measure.NAME}: unjudged='drop' is judged_only=True; do not also give "
                         "judged_only=False.")


def _tie_keys(base: FamilyMeasure, reading: ScenarioRun) -> np.ndarray:
    """int64 keys per rank: ranks with equal keys are interchangeable for ``base``."""
    judged_only = bool(base.params.get("judged_only", False))
    if base.needs_judgments() or judged_only or int(base.params.get("rel", 1)) < 1:
        grade = reading.grades
    else:
        grade = np.where(reading.grades > 0, reading.grades, 0)
    if not base.reads_document_values():
        return grade
    values = base.tie_values(reading)
    if values is None:
        # every document distinct: its flat source position (filled ranks are never in a tie group)
        return reading.source
    _, codes = np.unique(np.column_stack([grade.astype(np.float64), values]), axis=0, return_inverse=True)
    return codes.reshape(-1).astype(np.int64)


def _order_keys(base: FamilyMeasure, reading: ScenarioRun) -> np.ndarray:
    """The grade tie orders sort by: a judged document's grade; an unjudged one counts as non-relevant and as
    no better than a judged non-relevant one (0, or ``rel - 1`` when ``rel <= 0`` makes grade 0 relevant)."""
    unjudged = min(0, int(base.params.get("rel", 1)) - 1)
    return np.where(judged(reading.grades), reading.grades, unjudged)


def _evaluate(base: FamilyMeasure, reading: ScenarioRun | PreparedRun) -> np.ndarray:
    """``base.compute(reading)`` as float64, refusing an array that is not one value per ranking."""
    vals = np.asarray(base.compute(reading), dtype=np.float64)
    if vals.shape != (len(reading.qids),):
        raise RuntimeError(f"{base}: compute returned shape {vals.shape} for {len(reading.qids)} rankings")
    return vals


@read_once()  # compute() may look a file up more than once (a fit file, then the lengths it times)
def family_values(measure: FamilyMeasure, prepared: PreparedRun) -> VariantValues:
    """Per-query float64 values and extras of a measure of this package, whatever its parameters.

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package (any parameters).
    prepared : PreparedRun
        The run ranked and joined with the qrels, without a ``depth``.

    Returns
    -------
    VariantValues
        Values in ``prepared.qids`` order; extras as [`variant_values`][irmeasures_markov.plugin.variant_values] gives
        them, none without variant.
    """
    # every path of variant_values gives float64 arrays already (_evaluate, _expected, _range)
    return variant_values(measure, prepared) if is_variant(measure) else VariantValues(_evaluate(measure, prepared))


def _expected(base: FamilyMeasure, reading: ScenarioRun, seed: int) -> VariantValues:
    """The mean over every order of every tie group: exact up to EXACT_LIMIT arrangements, else Monte Carlo."""
    n = len(reading.qids)
    keys = _tie_keys(base, reading)
    closed = base.expected_over_ties(reading, keys, seed)
    if closed is not None:
        values, se = closed if isinstance(closed, tuple) else (closed, np.zeros(n))
        return VariantValues(np.asarray(values, dtype=np.float64), {"se": np.asarray(se, dtype=np.float64)})
    log_counts, groups = arrangement_counts(reading, keys)
    values = np.zeros(n)
    se = np.zeros(n)
    single = np.flatnonzero(log_counts == 0)
    if single.size:
        values[single] = _evaluate(base, reading.take(single))
    limit = log_limit(EXACT_LIMIT)
    exact = [int(p) for p in np.flatnonzero((log_counts > 0) & (log_counts <= limit))]
    if exact:
        sums = np.zeros(n)
        counts = np.zeros(n)
        for chunk, owner in iter_arrangements(reading, keys, exact, groups):
            v = _evaluate(base, chunk)
            np.add.at(sums, owner, v)
            np.add.at(counts, owner, 1.0)
        values[exact] = sums[exact] / counts[exact]
    for p in np.flatnonzero(log_counts > limit).tolist():
        rng = query_rng(seed, reading.source_qids[p], "ties")
        values[p], se[p] = mean_until_se(
            lambda n, p=p, rng=rng: _evaluate(base, sample_orders(reading, p, groups[p], min(n, 4096), rng)),
            FIRST_SAMPLES, TARGET_SE, MAX_SAMPLES)
    return VariantValues(values, {"se": se})


def _with_judgments(base: FamilyMeasure, reading: ScenarioRun) -> ScenarioRun:
    """The reading with every unjudged retrieved document judged relevant, and filled ranks after it."""
    judged = judge_unjudged(reading, np.ones(reading.grades.size, dtype=bool))
    return fill_ranks(judged, base.filled_length(judged.lengths))


def _with_ties(base: FamilyMeasure, reading: ScenarioRun, ties: str, seed: int) -> VariantValues:
    if ties == "docid":
        return VariantValues(_evaluate(base, reading))
    if ties in ("optimistic", "pessimistic"):
        return VariantValues(_evaluate(base, reorder_ties(reading, _order_keys(base, reading), ties == "optimistic")))
    return _expected(base, reading, seed)


def _range(base: FamilyMeasure, reading: ScenarioRun, ties: str, seed: int) -> VariantValues:
    """Smallest and largest value over the judgments of the unjudged retrieved documents."""
    n = len(reading.qids)
    full = fill_ranks(reading, base.filled_length(reading.lengths))
    lo, hi = np.zeros(n), np.zeros(n)
    exact = np.ones(n)
    for p in range(n):
        a, b = int(full.offsets[p]), int(full.offsets[p + 1])
        src = full.source[a:b]
        targets = a + np.flatnonzero(~judged(full.grades[a:b]) & (src >= 0))
        filled = np.flatnonzero(src == FILLED)
        fill_from = a + int(filled[0]) if filled.size else None
        rng = query_rng(seed, reading.source_qids[p], "range")
        patterns, was_exact = judgment_patterns(full, p, targets, fill_from, RANGE_EXACT, RANGE_SAMPLES, rng)
        if ties != "docid":
            patterns = reorder_ties(patterns, _order_keys(base, patterns), ties == "optimistic")
        v = _evaluate(base, patterns)
        lo[p], hi[p] = float(v.min()), float(v.max())
        exact[p] = float(was_exact)
    return VariantValues(hi - lo, {"lo": lo, "hi": hi, "exact": exact})


@read_once()  # every evaluation of the base reads the same bytes of each file: one value, never a mix
def variant_values(measure: FamilyMeasure, prepared: PreparedRun) -> VariantValues:
    """Per-query values of a measure with ``ties``, ``unjudged`` or ``residual`` set (see the module docstring).

    Parameters
    ----------
    measure : FamilyMeasure
        A measure of this package (any parameters).
    prepared : PreparedRun
        The run ranked and joined with the qrels, without a ``depth``.

    Returns
    -------
    VariantValues
        Values in ``prepared.qids`` order, and extras: ``'se'`` for
        ``ties='expected'``, ``'lo'``/``'hi'`` for ``unjudged='range'``.
    """
    p = measure.params
    ties, unjudged = p.get("ties", "docid"), p.get("unjudged", "nonrel")
    residual, seed = bool(p.get("residual", False)), int(p.get("seed", 0))
    base = base_measure(measure)
    if unjudged == "drop":
        base = type(base)(**{**base.params, "judged_only": True})
        base.validate_params()
    # the join with every judgment is needed to tell unjudged documents apart, or for a measure that reads them
    judgments = (unjudged != "nonrel" or residual or base.needs_judgments() or bool(base.params.get("judged_only"))
                 or int(base.params.get("rel", 1)) < 1)
    reading = identity_reading(prepared, judgments=judgments)
    if unjudged == "range":
        return _range(base, reading, ties, seed)
    if residual:
        with_rel = _with_ties(base, _with_judgments(base, reading), ties, seed)
        without = _with_ties(base, reading, ties, seed)
        extras = {}
        if "se" in with_rel.extras:
            extras["se"] = np.hypot(with_rel.extras["se"], without.extras["se"])
        return VariantValues(with_rel.values - without.values, extras)
    if unjudged == "rel":
        reading = _with_judgments(base, reading)
    return _with_ties(base, reading, ties, seed)
