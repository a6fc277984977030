"""Tie order and unjudged documents for every measure of a comparison: ``ties=``, ``unjudged=``, ``residual=``.

This package's measures take them as parameters (`apply_variant_options`
rewrites a measure unless it sets the parameter itself);
``experiments.evaluate`` applies them to the standard measures it computes
itself; other measures take
none and are named in one line (`unsupported_note`).
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ir_measures import Measure

from irmeasures_markov.experiments import Evaluation, evaluate
from irmeasures_markov.experiments._evaluation import labelled_measures
from irmeasures_markov.experiments._settings import with_settings
from irmeasures_markov.io._normalise import OverlapWarning
from irmeasures_markov.plugin._variants import TIES, UNJUDGED_CHOICES, VARIANT_DEFAULTS

__all__ = ["apply_variant_options", "supports", "unsupported_note", "applied_note",
           "evaluate_with_options", "evaluate_variants", "without_extras"]



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


def _given(ties, unjudged, residual) -> dict[str, object]:
    return {k: v for k, v in (("ties", ties), ("unjudged", unjudged), ("residual", True if residual else None))
            if v is not None}


def _asked(ties, unjudged, residual) -> dict[str, object]:
    """The options given with a value other than their default."""
    return {k: v for k, v in _given(ties, unjudged, residual).items() if v != VARIANT_DEFAULTS[k]}


def apply_variant_options(measures: Sequence[Measure], *, ties: str | None = None, unjudged: str | None = None,
                          residual: bool = False) -> tuple[list[Measure], list[Measure]]:
    """The measures with ``ties``/``unjudged``/``residual`` added where they take them and do not set them.

    A parameter written in a measure itself (``MP(ties='expected')``) is
    kept, and a measure's own ``unjudged`` or ``residual`` keeps both
    (`with_settings`, the rule of every front end); a measure
    that takes none of them (ir_measures' own) is unchanged and listed as unsupported when a non-default value
    was asked for.

    Parameters
    ----------
    measures : sequence of ir_measures.Measure
    ties, unjudged, residual
        ``ties`` one of `TIES`, ``unjudged`` one of `UNJUDGED_CHOICES`, ``residual`` only with
        ``unjudged`` None or 'nonrel'; None (False) leaves the parameter alone.

    Returns
    -------
    (list of Measure, list of Measure)
        The measures (rewritten where they take the parameters) and those that ignore a non-default value.

    Raises
    ------
    ValueError
        A bad option value, naming the parameter and its allowed values.
    """
    if ties is not None and ties not in TIES:
        raise ValueError(f"`ties` must be one of {list(TIES)}, got {ties!r}.")
    if unjudged is not None and unjudged not in UNJUDGED_CHOICES:
        raise ValueError(f"`unjudged` must be one of {list(UNJUDGED_CHOICES)}, got {unjudged!r}.")
    if residual and unjudged not in (None, "nonrel"):
        raise ValueError(f"`residual=True` is the value with unjudged documents relevant minus the value with them "
                         f"non-relevant: it takes no `unjudged` (got {unjudged!r}).")
    given = _given(ties, unjudged, residual)
    out, unsupported = [], []
    for m in measures:
        if any(not supports(m, k) and v != VARIANT_DEFAULTS[k] for k, v in given.items()):
            unsupported.append(m)
        out.append(with_settings(m, given))
    return out, unsupported


def unsupported_note(measures: Sequence[Measure | str], ties: str | None = None, unjudged: str | None = None,
                     residual: bool = False, report: bool = False) -> str:
    """One line naming the measures that take no ``ties``/``unjudged``/``residual`` ('' when none).

    Parameters
    ----------
    measures : sequence of Measure or str
        The measures (or their labels).
    ties, unjudged, residual
        The options asked for (a default value is not mentioned).
    report : bool
        Whether a sensitivity report was asked for (then they have no residual, tie spread or flags).

    Returns
    -------
    str
    """
    asked = ", ".join(f"{k}={v!r}" for k, v in _asked(ties, unjudged, residual).items())
    parts = ([f"{asked} not applied"] if asked else []) + (["no residual, tie spread or flags"] if report else [])
    if not measures or not parts:
        return ""
    return f"{', '.join(map(str, measures))}: {'; '.join(parts)} (no ties, unjudged or residual parameter)"


def applied_note(labels: Sequence[str], ties: str | None = None, unjudged: str | None = None,
                 residual: bool = False) -> str:
    """One line naming the measures whose label does not show the options they were computed with ('' if none).

    Parameters
    ----------
    labels : sequence of str
        The measures ``experiments.evaluate`` applied the options to itself (AP, P@k, ...).
    ties, unjudged, residual
        The options.

    Returns
    -------
    str
    """
    asked = ", ".join(f"{k}={v!r}" for k, v in _asked(ties, unjudged, residual).items())
    return f"{', '.join(labels)}: computed with {asked}" if labels and asked else ""


def _evaluate_again(*args, **kwargs) -> Evaluation:
    """[`evaluate`][irmeasures_markov.experiments.evaluate] of runs the comparison has evaluated once already: the
    warning about a run answering few queries was given then, and is not repeated for each variant."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OverlapWarning)
        return evaluate(*args, **kwargs)


def _refused(measure: Measure, variant: Measure, params: Mapping[str, object], exc: Exception) -> str:
    """The note for a variant the sensitivity report needs and ``variant``'s family refuses: what is missing,
    the measure it needs and why (the family's message says how to get it)."""
    need = "residual" if params.get("residual") else \
        ", ".join(f"{k}={v!r}" for k, v in params.items() if v != VARIANT_DEFAULTS[k]) or "value"
    why = str(exc).removeprefix(f"{variant}: ").removeprefix(f"{variant.NAME}: ").rstrip(".")
    return f"{measure}: no {need} in the sensitivity report, which needs {variant}: {why}"


def _evaluated_with(measure, qrels, runs, topics, n_jobs, progress, options) -> np.ndarray | None:
    """Runs × topics values of a measure ``experiments.evaluate`` computes itself with ``options`` (None for any
    other measure, which it refuses with a ValueError)."""
    try:
        ev = _evaluate_again([measure], qrels, runs, topics=topics, n_jobs=n_jobs, progress=progress, **options)
    except ValueError:
        return None
    return ev.values[:, 0, :]


def evaluate_variants(qrels: Mapping, runs: Mapping, topics: Sequence[str], requests: Sequence[tuple[Measure, dict]],
                      n_jobs: int, progress: bool | None,
                      given: Mapping[str, object]) -> tuple[list[np.ndarray | None], list[str]]:
    """Per-topic values of each measure under each variant: ``requests = [(measure, params)]``.

    Parameters
    ----------
    qrels, runs, topics, n_jobs, progress
        As for [`evaluate`][irmeasures_markov.experiments.evaluate] (``runs``: ``{name: run dict}``).
    requests : sequence of (Measure, dict)
        A measure and the parameters to set (``{'ties': 'optimistic'}``).
    given : mapping
        The comparison's own options, for the measures ``experiments.evaluate`` computes itself.

    Returns
    -------
    (list, list of str)
        A runs × topics array per request (None where the measure takes no such parameter), and one line per
        variant a measure of this package refuses.
    """
    out: list[np.ndarray | None] = [None] * len(requests)
    notes: list[str] = []
    plain: dict[Measure, tuple[Measure, dict]] = {}
    where: list[tuple[int, object]] = []
    for i, (m, params) in enumerate(requests):
        if not all(supports(m, k) for k in params):
            # experiments.evaluate applies them to the measures it computes itself, the comparison's own options
            # too (``params`` first), and refuses any other measure (unsupported)
            out[i] = _evaluated_with(m, qrels, runs, topics, n_jobs, progress, {**given, **params})
            continue
        target = m(**params)
        try:
            target.validate_params()
        except (ValueError, TypeError, AssertionError) as exc:
            if (why := _refused(m, target, params, exc)) not in notes:
                notes.append(why)
            continue
        plain.setdefault(target, (m, params))
        where.append((i, target))
    if plain:
        columns = _family_values(qrels, runs, topics, plain, n_jobs, progress, notes)
        for i, target in where:
            out[i] = columns.get(target)
    return out, notes


def _family_values(qrels, runs, topics, plain, n_jobs, progress, notes) -> dict[Measure, np.ndarray]:
    """Runs × topics values of the variants ``plain`` (``{variant: (measure, params)}``) in one evaluation; if a
    family refuses one only once it reads the runs (a user reading past the ranking without a cutoff), each is
    evaluated alone and the refused ones get a note instead of values."""
    def values(targets):
        ev = without_extras(_evaluate_again(targets, qrels, runs, topics=topics, n_jobs=n_jobs, progress=progress))
        return {t: ev.values[:, j, :] for j, t in enumerate(targets)}
    try:
        return values(list(plain))
    except ValueError:
        pass
    out = {}
    for target, (m, params) in plain.items():
        try:
            out.update(values([target]))
        except ValueError as exc:
            if (why := _refused(m, target, params, exc)) not in notes:
                notes.append(why)
    return out


def without_extras(ev: Evaluation) -> Evaluation:
    """``ev`` without the columns of per-query extras (e.g. the standard error of ``ties='expected'``), if any.

    A comparison tests and shows the measures only.

    Parameters
    ----------
    ev : Evaluation

    Returns
    -------
    Evaluation
    """
    if not getattr(ev, "extras", None):
        return ev
    keep = [j for j in range(len(ev.measures)) if j not in ev.extras]
    return Evaluation(list(ev.runs), [ev.measures[j] for j in keep], list(ev.topics), ev.values[:, keep, :],
                      [ev.labels[j] for j in keep])


def evaluate_with_options(measures: Any, qrels: Mapping, runs: Mapping, *, ties: str | None = None,
                          unjudged: str | None = None, residual: bool = False, topics: Sequence[str] | None = None,
                          labels: Sequence[str] | None = None, n_jobs: int = 1,
                          progress: bool | None = None) -> tuple[Any, list[str], list[str]]:
    """[`evaluate`][irmeasures_markov.experiments.evaluate] with ``ties``/``unjudged``/``residual`` on every measure.

    This package's measures are rewritten (`apply_variant_options`); the measures
    ``experiments.evaluate`` computes itself get the options where it takes them; any other measure is
    evaluated as it is.

    Parameters
    ----------
    measures : list or dict {label: measure}
        As for [`evaluate`][irmeasures_markov.experiments.evaluate].
    qrels, runs, topics, labels, n_jobs, progress
        As for [`evaluate`][irmeasures_markov.experiments.evaluate] (``runs``: ``{name: run dict}``).
    ties, unjudged, residual
        As for `apply_variant_options`.

    Returns
    -------
    (Evaluation, list of str, list of str)
        The evaluation, the labels of the measures the options do not apply to, and those of the
        measures ``experiments.evaluate`` applied them to itself.
    """
    measures, labels = labelled_measures(measures, labels)
    measures, unsupported = apply_variant_options(measures, ties=ties, unjudged=unjudged, residual=residual)
    ev = without_extras(evaluate(measures, qrels, runs, topics=topics, labels=labels, n_jobs=n_jobs,
                                 progress=progress))
    given = _asked(ties, unjudged, residual)
    left, applied = [], []
    for m in unsupported:
        j = ev.measures.index(m)
        values = _evaluated_with(m, qrels, runs, ev.topics, n_jobs, progress, given)
        if values is None:
            left.append(ev.labels[j])
        else:
            ev.values[:, j, :] = values
            applied.append(ev.labels[j])
    return ev, left, applied
