"""How much a comparison depends on tie order and on unjudged documents (``compare(..., ties=..., holes=True)``).

Per run and measure (:attr:`Sensitivity.per_run`):

* ``judged``: the judged share of the top k, k the measure's cutoff or 10 —
  the fraction of the run's top-k documents (trec_eval order: score
  descending, docid descending) that have a judgment of any grade, averaged
  over the topics the run retrieved something for;
* ``residual``: the mean over topics of the measure with ``residual=True``
  (its value with every unjudged retrieved document relevant minus its value
  with them non-relevant);
* ``tie_spread``: the mean over topics of the value with ``ties='optimistic'``
  minus the value with ``ties='pessimistic'``.

Pairs (:attr:`Sensitivity.flags`, one row per measure, tested pair and kind),
A − B as in the comparison's tests, with the comparison's test, correction
and ``alpha``:

* ``ties``: both runs evaluated with ``ties='optimistic'`` and then both with
  ``ties='pessimistic'``; the ordering changes when the sign of the mean
  difference differs between the two, the significance when the pair is
  significant (or significant in one direction) under one order and not under
  the other;
* ``holes``: each run's mean ranges over ``[v, v + residual]`` (``v`` with
  unjudged documents non-relevant); the ordering may flip when the two
  ranges overlap (the difference can take the opposite sign), the
  significance changes when testing A with its unjudged documents
  non-relevant against B with them relevant, or A relevant against B
  non-relevant, is not what the test of ``v`` against ``v`` says.

Measures that take no ``ties``/``unjudged``/``residual`` parameter get NaN
and one line in :attr:`Sensitivity.notes`.
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from ir_measures import Measure

from ..experiments import Evaluation, evaluate, labelled_measures
from ..experiments.evaluation import default_topics
from ..plugin.base import FamilyMeasure
from ..plugin.variants import is_variant
from ..ranking.order import read_scores, top_order, trec_order
from .pairs import pair_tests

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TIES_CHOICES", "UNJUDGED_CHOICES", "DEFAULT_JUDGED_DEPTH", "Sensitivity", "check_variant_options",
           "apply_variant_options", "supports", "judged_share", "sensitivity", "unsupported_note",
           "evaluate_with_options", "evaluate_measures"]

#: the values of ``ties`` (first: the default, trec_eval's order)
TIES_CHOICES = ("docid", "optimistic", "pessimistic", "expected")
#: the values of ``unjudged`` (first: the default)
UNJUDGED_CHOICES = ("nonrel", "drop", "rel", "range")
#: k of the judged share for a measure without a cutoff
DEFAULT_JUDGED_DEPTH = 10

_DEFAULTS = {"ties": "docid", "unjudged": "nonrel", "residual": False}


def supports(measure: Measure, name: str) -> bool:
    """Whether ``measure`` takes the parameter ``name`` (``'ties'``, ``'unjudged'``, ``'residual'``).

    Parameters
    ----------
    measure : ir_measures.Measure
    name : str

    Returns
    -------
    bool
    """
    return name in (getattr(measure, "SUPPORTED_PARAMS", None) or {})


def check_variant_options(ties: str | None = None, unjudged: str | None = None, residual: bool = False) -> None:
    """Refuse an unknown ``ties``/``unjudged`` value or ``residual`` with ``unjudged`` other than 'nonrel'.

    Parameters
    ----------
    ties : str, optional
        One of :data:`TIES_CHOICES`.
    unjudged : str, optional
        One of :data:`UNJUDGED_CHOICES`.
    residual : bool

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    if ties is not None and ties not in TIES_CHOICES:
        raise ValueError(f"`ties` must be one of {list(TIES_CHOICES)}, got {ties!r}.")
    if unjudged is not None and unjudged not in UNJUDGED_CHOICES:
        raise ValueError(f"`unjudged` must be one of {list(UNJUDGED_CHOICES)}, got {unjudged!r}.")
    if residual and unjudged not in (None, "nonrel"):
        raise ValueError(f"`residual=True` is the value with unjudged documents relevant minus the value with them "
                         f"non-relevant: it takes no `unjudged` (got {unjudged!r}).")


def _given(ties, unjudged, residual) -> dict[str, object]:
    return {k: v for k, v in (("ties", ties), ("unjudged", unjudged), ("residual", True if residual else None))
            if v is not None}


def apply_variant_options(measures: Sequence[Measure], *, ties: str | None = None, unjudged: str | None = None,
                          residual: bool = False) -> tuple[list[Measure], list[Measure]]:
    """The measures with ``ties``/``unjudged``/``residual`` added where they take them and do not set them.

    A parameter written in a measure itself (``MP(ties='expected')``) is
    kept; a measure that takes none of them (ir_measures' own) is unchanged
    and listed as unsupported when a non-default value was asked for.

    Parameters
    ----------
    measures : sequence of ir_measures.Measure
    ties, unjudged, residual
        As for :func:`check_variant_options`; None (False) leaves the parameter alone.

    Returns
    -------
    (list of Measure, list of Measure)
        The measures (rewritten where they take the parameters) and those that ignore a non-default value.

    Raises
    ------
    ValueError
        A bad option value (:func:`check_variant_options`).
    """
    check_variant_options(ties, unjudged, residual)
    given = _given(ties, unjudged, residual)
    out, unsupported = [], []
    for m in measures:
        params = getattr(m, "params", {})
        extra = {k: v for k, v in given.items() if supports(m, k) and k not in params}
        if any(not supports(m, k) and v != _DEFAULTS[k] for k, v in given.items()):
            unsupported.append(m)
        out.append(m(**extra) if extra else m)
    return out, unsupported


def unsupported_note(measures: Sequence[Measure | str], ties: str | None = None, unjudged: str | None = None,
                     residual: bool = False) -> str:
    """One line saying which measures ignore the options (''' when none).

    Parameters
    ----------
    measures : sequence of Measure or str
    ties, unjudged, residual
        The options asked for.

    Returns
    -------
    str
    """
    if not measures:
        return ""
    asked = ", ".join(f"{k}={v!r}" for k, v in _given(ties, unjudged, residual).items() if v != _DEFAULTS[k])
    names = ", ".join(map(str, measures))
    return (f"{names}: {asked} not applied (not this package's measures: trec_eval's tie order, unjudged "
            f"documents non-relevant)")


def _cutoff(measure: Measure) -> int:
    k = getattr(measure, "params", {}).get("cutoff")
    return int(k) if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0 \
        else DEFAULT_JUDGED_DEPTH


def judged_share(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
                 topics: Sequence[str], k: int) -> np.ndarray:
    """Per topic, the fraction of the run's top ``k`` documents (trec_eval order) that have a judgment.

    Parameters
    ----------
    qrels : dict
        ``{qid: {docid: grade}}``; a document is judged when it has any grade (0 and negative ones too).
    run : dict
        ``{qid: {docid: score}}``.
    topics : sequence of str
    k : int
        Depth.

    Returns
    -------
    numpy.ndarray
        One value per topic; NaN for a topic the run retrieved nothing for.
    """
    out = np.full(len(topics), np.nan)
    for i, q in enumerate(topics):
        docs = run.get(q) or {}
        if not docs:
            continue
        keys = list(docs)
        scores = read_scores(docs, q, keys)
        order = top_order(keys, scores, k) if k < len(keys) else trec_order(keys, scores)
        judged = qrels.get(q) or {}
        out[i] = sum(keys[j] in judged for j in order.tolist()) / len(order)
    return out


@dataclass(eq=False)
class Sensitivity:
    """What :func:`sensitivity` found (see the module docstring).

    Attributes
    ----------
    per_run : DataFrame
        Index ``run``; columns ``(measure label, 'judged' | 'residual' | 'tie_spread')``.
    depths : dict
        The k of each measure label's judged share.
    flags : DataFrame
        One row per measure, tested pair and kind: ``measure, run_a, run_b, kind ('ties' | 'holes'),
        difference, low, high, order_changes, significance_changes, flagged``; ``difference`` is the
        comparison's mean difference A − B, ``low``/``high`` the ends it takes (ties: under the two orders;
        holes: over the two ranges).
    notes : list of str
        One line per measure the report cannot cover.
    kinds : tuple of str
        The kinds of flags computed.
    """
    per_run: pd.DataFrame
    depths: dict[str, int]
    flags: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    kinds: tuple[str, ...] = ()

    @property
    def flagged(self) -> pd.DataFrame:
        """The rows of :attr:`flags` whose ordering or significance changes."""
        return self.flags[self.flags["flagged"]]


def _native_options() -> set[str]:
    """The options ``experiments.evaluate`` applies to the measures it computes itself (none before they exist)."""
    names = inspect.signature(evaluate).parameters
    return {k for k in _DEFAULTS if k in names}


def _variant(measure: Measure, params: dict[str, object],
             given: Mapping[str, object]) -> tuple[Measure | None, dict[str, object], str]:
    """(measure to evaluate, options for evaluate, '' or why not) for ``measure`` under ``params``; ``given``: the
    comparison's own options, which the measures evaluate computes itself get too (``params`` first)."""
    if all(supports(measure, k) for k in params):
        try:
            m = measure(**params)
            m.validate_params()
        except (ValueError, TypeError, AssertionError) as exc:
            return None, {}, f"{measure}: {exc}"
        return m, {}, ""
    if set(params) <= _native_options():
        return measure, {**given, **params}, ""
    return None, {}, ""  # not this package's measure: named once by sensitivity()


def _evaluate_variants(qrels, runs, topics, requests, n_jobs, progress, given):
    """``[runs × topics array or None]`` for ``[(measure, params)]``, and the notes of those not computed."""
    out: list[np.ndarray | None] = [None] * len(requests)
    notes: list[str] = []
    plain: list[Measure] = []
    where: list[tuple[int, object]] = []
    for i, (m, params) in enumerate(requests):
        target, options, why = _variant(m, params, given)
        if target is None:
            if why and why not in notes:
                notes.append(why)
        elif options:  # a measure experiments.evaluate computes itself, with the option
            try:
                ev = evaluate([target], qrels, runs, topics=topics, n_jobs=n_jobs, progress=progress, **options)
                out[i] = ev.values[:, 0, :]
            except ValueError as exc:
                notes.append(f"{m}: {exc}")
        else:
            if target not in plain:
                plain.append(target)
            where.append((i, target))
    if plain:
        ev = evaluate_measures(plain, qrels, runs, topics=topics, n_jobs=n_jobs, progress=progress)
        for i, target in where:
            out[i] = ev.values[:, plain.index(target), :]
    return out, notes


def evaluate_measures(measures: Any, qrels: Mapping, runs: Mapping, *, topics: Sequence[str] | None = None,
                      labels: Sequence[str] | None = None, n_jobs: int = 1, progress: bool | None = None) -> Evaluation:
    """:func:`~irmeasures_markov.experiments.evaluate`, this package's measures that set ``ties``, ``unjudged`` or
    ``residual`` computed through ir_measures.

    ``experiments.evaluate`` scores this package's measures with their
    default tie order and judgments; ir_measures (this package's provider)
    applies the parameters, so the measures that set them are scored there,
    per run over the same topics (a topic a run did not answer holds the
    measure's DEFAULT, as in ``experiments.evaluate``).

    Parameters
    ----------
    measures : list or dict {label: measure}
    qrels, runs, topics, labels, n_jobs, progress
        As for :func:`~irmeasures_markov.experiments.evaluate` (``runs``: ``{name: run dict}``).

    Returns
    -------
    Evaluation
    """
    import ir_measures
    measures, labels = labelled_measures(measures, labels)
    variants = [m for m in measures if isinstance(m, FamilyMeasure) and is_variant(m)]
    if not variants:
        return evaluate(measures, qrels, runs, topics=topics, labels=labels, n_jobs=n_jobs, progress=progress)
    direct = [m for m in measures if m not in variants]
    topics = list(topics) if topics is not None else default_topics(qrels)
    names = list(runs)
    values = np.zeros((len(names), len(measures), len(topics)))
    if direct:
        ev = evaluate(direct, qrels, runs, topics=topics, n_jobs=n_jobs, progress=progress)
        values[:, [measures.index(m) for m in direct], :] = ev.values
    column = {m: measures.index(m) for m in variants}
    topic_index = {t: k for k, t in enumerate(topics)}
    for i, name in enumerate(names):
        for m in variants:
            values[i, column[m], :] = m.DEFAULT
        for metric in ir_measures.iter_calc(variants, qrels, runs[name]):
            k = topic_index.get(metric.query_id)
            if k is not None:
                values[i, column[metric.measure], k] = metric.value
    return Evaluation(names, measures, topics, values, list(labels) if labels is not None else [])


def evaluate_with_options(measures: Any, qrels: Mapping, runs: Mapping, *, ties: str | None = None,
                          unjudged: str | None = None, residual: bool = False, topics: Sequence[str] | None = None,
                          labels: Sequence[str] | None = None, n_jobs: int = 1,
                          progress: bool | None = None) -> tuple[Any, list[str]]:
    """:func:`~irmeasures_markov.experiments.evaluate` with ``ties``/``unjudged``/``residual`` on every measure.

    This package's measures are rewritten (:func:`apply_variant_options`); the measures
    ``experiments.evaluate`` computes itself get the options where it takes them; any other measure is
    evaluated as it is and named in the returned note.

    Parameters
    ----------
    measures : list or dict {label: measure}
        As for :func:`~irmeasures_markov.experiments.evaluate`.
    qrels, runs, topics, labels, n_jobs, progress
        As for :func:`~irmeasures_markov.experiments.evaluate` (``runs``: ``{name: run dict}``).
    ties, unjudged, residual
        As for :func:`apply_variant_options`.

    Returns
    -------
    (Evaluation, list of str)
        The evaluation and at most one line naming the measures the options do not apply to.
    """
    measures, labels = labelled_measures(measures, labels)
    measures, unsupported = apply_variant_options(measures, ties=ties, unjudged=unjudged, residual=residual)
    ev = evaluate_measures(measures, qrels, runs, topics=topics, labels=labels, n_jobs=n_jobs, progress=progress)
    given = {k: v for k, v in _given(ties, unjudged, residual).items() if v != _DEFAULTS[k]}
    native = _native_options()
    left = []
    for m in unsupported:
        if set(given) <= native:
            try:
                one = evaluate([m], qrels, runs, topics=ev.topics, n_jobs=n_jobs, progress=progress, **given)
                ev.values[:, ev.measures.index(m), :] = one.values[:, 0, :]
                continue
            except ValueError:
                pass
        left.append(m)
    note = unsupported_note(left, ties, unjudged, residual)
    return ev, [note] if note else []


def _significance_key(diff: np.ndarray, significant: np.ndarray) -> np.ndarray:
    """0 for a pair that is not significant, else the sign of its mean difference."""
    return np.where(significant, np.sign(diff), 0.0)


def sensitivity(cmp: Any, qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, Mapping], *,
                ties: bool = True, holes: bool = True, options: Mapping[str, object] | None = None,
                n_resamples: int = 10000, seed: int | None = 0,
                n_jobs: int = 1, progress: bool | None = None, bayes_draws: int = 2000,
                bayes_chains: int = 4) -> Sensitivity:
    """The sensitivity report of a :class:`~irmeasures_markov.comparison.Comparison` to tie order and holes.

    Parameters
    ----------
    cmp : Comparison
        The comparison (its measures, labels, topics, pairs, test, correction and ``alpha`` are used).
    qrels : dict
        ``{qid: {docid: grade}}``, the comparison's.
    runs : dict
        ``{name: run dict}``, every run of the comparison.
    ties, holes : bool
        Which pairs to flag: under the optimistic and pessimistic tie orders, within the residual.
    options : mapping, optional
        The comparison's ``ties``/``unjudged``/``residual`` (the values it was evaluated with), for the
        measures ``experiments.evaluate`` computes itself; this package's measures carry theirs.
    n_resamples, seed, n_jobs, progress, bayes_draws, bayes_chains
        As for :func:`~irmeasures_markov.comparison.compare`.

    Returns
    -------
    Sensitivity
    """
    import pandas as pd
    ev = cmp.evaluation
    names, topics, labels = list(cmp.runs), list(ev.topics), list(cmp.labels)
    ordered = {n: runs[n] for n in names}
    requests: list[tuple[Measure, dict]] = []
    for m in ev.measures:
        requests += [(m, {"ties": "optimistic"}), (m, {"ties": "pessimistic"}),
                     (m, {"unjudged": "nonrel", "residual": False}), (m, {"unjudged": "nonrel", "residual": True})]
    given = {k: v for k, v in (options or {}).items() if v is not None and v != _DEFAULTS[k]}
    values, notes = _evaluate_variants(qrels, ordered, topics, requests, n_jobs, progress, given)
    missing = [label for j, label in enumerate(labels) if all(v is None for v in values[4 * j:4 * j + 4])]
    if missing:
        notes.append(f"{', '.join(missing)}: no residual, tie spread or flags (only this package's measures take "
                     f"ties, unjudged and residual)")
    depths = {label: _cutoff(m) for label, m in zip(labels, ev.measures)}
    shares = {k: np.array([np.nanmean(s) if np.isfinite(s).any() else np.nan
                           for s in (judged_share(qrels, ordered[n], topics, k) for n in names)])
              for k in sorted(set(depths.values()))}
    nan = np.full(len(names), np.nan)
    columns, data, rows = [], [], []
    position = {n: i for i, n in enumerate(names)}
    options = dict(test=cmp.test, correction=cmp.correction, alternative=cmp.alternative, n_resamples=n_resamples,
                   seed=seed, progress=progress, bayes_draws=bayes_draws, bayes_chains=bayes_chains)
    for j, label in enumerate(labels):
        opt, pess, nonrel, resid = values[4 * j:4 * j + 4]
        spread = nan if opt is None or pess is None else (opt - pess).mean(axis=1)
        residual = nan if resid is None else resid.mean(axis=1)
        for quantity, v in (("judged", shares[depths[label]]), ("residual", residual), ("tie_spread", spread)):
            columns.append((label, quantity))
            data.append(v)
        tests = cmp.tests[cmp.tests["measure"] == label]
        a = np.array([position[r] for r in tests["run_a"]], dtype=np.int64)
        b = np.array([position[r] for r in tests["run_b"]], dtype=np.int64)
        base = tests["mean_difference"].to_numpy(dtype=np.float64)
        if ties and opt is not None and pess is not None:
            keys, diffs = [], []
            for v in (opt, pess):
                _, _, adj = pair_tests(v.T, a, b, **options)
                d = v.mean(axis=1)[a] - v.mean(axis=1)[b]
                diffs.append(d)
                keys.append(_significance_key(d, adj < cmp.alpha))
            order = np.sign(diffs[0]) != np.sign(diffs[1])
            rows += _flag_rows(label, tests, "ties", base, np.minimum(*diffs), np.maximum(*diffs), order,
                               keys[0] != keys[1])
        if holes and nonrel is not None and resid is not None:
            v, r = nonrel.mean(axis=1), resid.mean(axis=1)
            lo, hi = v + np.minimum(r, 0.0), v + np.maximum(r, 0.0)
            low, high = lo[a] - hi[b], hi[a] - lo[b]
            stacked = np.concatenate([nonrel, nonrel + resid], axis=0).T  # topics × (runs nonrel, runs rel)
            n = len(names)
            keys = []
            for pa, pb in ((a, b), (a, b + n), (a + n, b)):
                _, _, adj = pair_tests(stacked, pa, pb, **options)
                d = stacked[:, pa].mean(axis=0) - stacked[:, pb].mean(axis=0)
                keys.append(_significance_key(d, adj < cmp.alpha))
            changes = (keys[0] != keys[1]) | (keys[0] != keys[2])
            rows += _flag_rows(label, tests, "holes", base, low, high, (low < 0) & (high > 0), changes)
    per_run = pd.DataFrame(np.array(data).T.reshape(len(names), -1), index=pd.Index(names, name="run"),
                           columns=pd.MultiIndex.from_tuples(columns, names=["measure", "quantity"]))
    flags = pd.DataFrame(rows, columns=["measure", "run_a", "run_b", "kind", "difference", "low", "high",
                                        "order_changes", "significance_changes", "flagged"])
    kinds = tuple(k for k, on in (("ties", ties), ("holes", holes)) if on)
    return Sensitivity(per_run, depths, flags, notes, kinds)


def _flag_rows(label, tests, kind, base, low, high, order, significance) -> list[dict]:
    return [{"measure": label, "run_a": ra, "run_b": rb, "kind": kind, "difference": float(base[k]),
             "low": float(low[k]), "high": float(high[k]), "order_changes": bool(order[k]),
             "significance_changes": bool(significance[k]), "flagged": bool(order[k] or significance[k])}
            for k, (ra, rb) in enumerate(zip(tests["run_a"], tests["run_b"]))]
