"""Per-topic scores in, a topics × systems matrix out.

Accepted inputs (one measure at a time):

* a pandas DataFrame of per-query results: ``ir_measures.iter_calc`` rows
  turned into a frame (columns ``query_id``, ``measure``, ``value``, plus a
  system column such as ``run_id``/``name``/``system``), or
  ``pt.Experiment(..., perquery=True)`` (columns ``name``, ``qid``,
  ``measure``, ``value``);
* a mapping ``{system: per-query results}`` where each value is an
  ``iter_calc`` list/iterator of ``Metric`` rows, a DataFrame as above without
  the system column, our evaluator's ``{qid: {measure_name: value}}``, or
  plain ``{qid: value}``;
* a wide DataFrame, one row per topic and one column per system, as
  [`Evaluation.per_topic`][irmeasures_markov.experiments.Evaluation.per_topic]
  gives it (index: topics, columns: runs): recognised by having no ``value``
  column and only numeric columns;
* a 2-D array (topics × systems) with optional ``topics=`` and ``systems=``.

Bad input raises ``ValueError`` naming the problem: NaN scores (which
system/topic), a system missing topics (which ones), fewer than 2 topics,
several measures without ``measure=``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ScoreMatrix", "ScoresLike", "check_choice", "score_matrix"]

#: Per-topic scores in any form :func:`score_matrix` takes: a :class:`ScoreMatrix`, a DataFrame (long or wide),
#: ``{system: per-query results}``, ir_measures/PyTerrier per-query results, or a 2-D array (topics × systems).
ScoresLike = Any

_QID_COLUMNS = ("query_id", "qid", "topic")
_SYSTEM_COLUMNS = ("run_id", "name", "system", "run")


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """The one check, and wording, of an option of the inference functions outside its choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


@dataclass
class ScoreMatrix:
    """Scores ``values[i, j]`` of system ``systems[j]`` on topic ``topics[i]`` for one measure."""
    values: np.ndarray
    topics: list[str]
    systems: list[str]
    measure: str | None = None

    @property
    def n_topics(self) -> int:
        """Number of topics (rows)."""
        return self.values.shape[0]

    @property
    def n_systems(self) -> int:
        """Number of systems (columns)."""
        return self.values.shape[1]

    def column(self, system: str) -> np.ndarray:
        """The per-topic scores of one system.

        Parameters
        ----------
        system : str
            One of `systems`.

        Returns
        -------
        numpy.ndarray
            Its scores, one per topic in the order of `topics`.

        Raises
        ------
        KeyError
            ``system`` is not one of `systems`.
        """
        try:
            return self.values[:, self.systems.index(system)]
        except ValueError:
            raise KeyError(f"no system {system!r}; systems: {self.systems[:10]}...") from None

    def means(self) -> np.ndarray:
        """Each system's mean over topics.

        Returns
        -------
        numpy.ndarray
            One mean per system, in the order of `systems`.
        """
        return self.values.mean(axis=0)


def _pick_measure(values_by_measure: dict[str, object], measure, where: str):
    if measure is None:
        if len(values_by_measure) != 1:
            raise ValueError(f"{where} holds several measures {sorted(values_by_measure)[:8]}; pass measure=")
        return next(iter(values_by_measure.values()))
    key = str(measure)
    if key not in values_by_measure:
        raise ValueError(f"{where} has no measure {key!r}; it has {sorted(values_by_measure)[:8]}")
    return values_by_measure[key]


def _per_query_from_frame(df, measure, where) -> dict[str, float]:
    qcol = next((c for c in _QID_COLUMNS if c in df.columns), None)
    if qcol is None or "value" not in df.columns:
        raise ValueError(f"{where}: a per-query DataFrame needs a query column ({'/'.join(_QID_COLUMNS)}) and "
                         f"'value'; got columns {list(df.columns)}")
    if "measure" in df.columns:
        df = df.assign(measure=df["measure"].map(str))
        groups = {m: g for m, g in df.groupby("measure", sort=False)}
        df = _pick_measure(groups, measure, where)
    qids = df[qcol].astype(str).tolist()
    if len(set(qids)) != len(qids):
        raise ValueError(f"{where}: a topic appears twice for one measure (is there a system column?)")
    return dict(zip(qids, df["value"].astype(float).tolist()))


def _per_query(obj, measure, where) -> dict[str, float]:
    import pandas as pd
    if isinstance(obj, pd.DataFrame):
        return _per_query_from_frame(obj, measure, where)
    if isinstance(obj, Mapping):  # {qid: value} or our evaluator's {qid: {measure_name: value}}
        return {str(q): float(_pick_measure({str(k): x for k, x in v.items()}, measure, f"{where}, topic {q}")
                              if isinstance(v, Mapping) else v) for q, v in obj.items()}
    # an iter_calc iterable of Metric(query_id, measure, value)
    by_measure: dict[str, dict[str, float]] = {}
    for row in obj:
        by_measure.setdefault(str(row.measure), {})[str(row.query_id)] = float(row.value)
    if not by_measure:
        raise ValueError(f"{where}: no per-query results")
    return _pick_measure(by_measure, measure, where)


def _is_wide(df) -> bool:
    """Whether a DataFrame is a topics × systems table: no 'value' column, and every column numeric."""
    return "value" not in df.columns and len(df.columns) > 0 and all(k in "iufb" for k in df.dtypes.map(
        lambda t: t.kind))


def _per_system_from_wide(df) -> dict[str, dict[str, float]]:
    """``{system: {topic: score}}`` of a topics × systems DataFrame (index topics, columns systems)."""
    for what, labels in (("topic (index)", df.index), ("system (column)", df.columns)):
        names = [str(x) for x in labels]
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"a topics × systems DataFrame lists the {what} {twice!r} twice")
    topics = [str(t) for t in df.index]
    return {str(name): dict(zip(topics, df.iloc[:, j].astype(float).tolist())) for j, name in enumerate(df.columns)}


def score_matrix(data: ScoresLike, measure: Any = None, *, topics: Sequence[str] | None = None,
                 systems: Sequence[str] | None = None) -> ScoreMatrix:
    """Build a [`ScoreMatrix`][irmeasures_markov.inference.ScoreMatrix] from per-query results (module docstring lists
    the inputs).

    Topics are the union over systems, sorted (numerically when all are
    integers); every system must have every topic.

    Parameters
    ----------
    data : ScoreMatrix, DataFrame, mapping, per-query results or 2-D array
        The scores (a ScoreMatrix is returned as it is).
    measure : ir_measures.Measure or str, optional
        Which measure to take when ``data`` holds several.
    topics : sequence of str, optional
        Labels of the rows and columns of a 2-D array (default ``0, 1, ...`` and ``system0, ...``).
    systems : sequence of str, optional
        Labels of the rows and columns of a 2-D array (default ``0, 1, ...`` and ``system0, ...``).

    Returns
    -------
    ScoreMatrix

    Raises
    ------
    ValueError
        Data of no known form, several measures without ``measure``, a system missing a topic, labels
        that do not match the shape, or scores that are not finite.
    """
    if isinstance(data, ScoreMatrix):
        return data
    if isinstance(data, np.ndarray) or (isinstance(data, (list, tuple)) and data and
                                        isinstance(data[0], (list, tuple, np.ndarray))):
        values = np.asarray(data, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"a score matrix must be 2-D (topics × systems), got shape {values.shape}")
        t = [str(x) for x in topics] if topics is not None else [str(i) for i in range(values.shape[0])]
        s = [str(x) for x in systems] if systems is not None else [f"system{j}" for j in range(values.shape[1])]
        if len(t) != values.shape[0] or len(s) != values.shape[1]:
            raise ValueError(f"topics/systems labels ({len(t)}, {len(s)}) do not match the shape {values.shape}")
        return _checked(values, t, s, measure)
    import pandas as pd
    is_frame = isinstance(data, pd.DataFrame)
    if is_frame and _is_wide(data):
        per_system = _per_system_from_wide(data)
    elif is_frame:
        scol = next((c for c in _SYSTEM_COLUMNS if c in data.columns), None)
        if scol is None:
            raise ValueError(f"a DataFrame of several systems needs a system column ({'/'.join(_SYSTEM_COLUMNS)}); "
                             f"for one system pass {{'name': frame}}; a topics × systems table (as "
                             f"Evaluation.per_topic gives) has only numeric columns. Columns: {list(data.columns)}")
        per_system = {str(name): _per_query_from_frame(group, measure, f"system {name!r}")
                      for name, group in data.groupby(scol, sort=False)}
    elif isinstance(data, Mapping):
        per_system = {str(name): _per_query(obj, measure, f"system {name!r}") for name, obj in data.items()}
    else:
        raise ValueError(f"cannot read per-query scores from {type(data).__name__}: pass a DataFrame, a "
                         "{system: results} mapping or a topics × systems array")
    if not per_system:
        raise ValueError("no systems in the input")
    names = [str(n) for n in systems] if systems is not None else list(per_system)
    unknown = [n for n in names if n not in per_system]
    if unknown:
        raise ValueError(f"systems {unknown[:10]} are not in the input; it has {list(per_system)[:10]}")
    all_topics = sorted(set().union(*per_system.values()))
    if topics is not None:
        all_topics = [str(t) for t in topics]
    elif all(t.isdigit() for t in all_topics):
        all_topics.sort(key=int)
    missing = {n: m for n in names if (m := sorted(set(all_topics) - set(per_system[n])))}
    if missing:
        desc = "; ".join(f"{n!r} lacks {len(m)} topic(s): {m[:10]}" for n, m in list(missing.items())[:5])
        raise ValueError(f"every system must have a score for every topic: {desc}")
    values = np.array([[per_system[n][t] for n in names] for t in all_topics], dtype=np.float64)
    return _checked(values, all_topics, names, measure)


def _checked(values, topics, systems, measure) -> ScoreMatrix:
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        i, j = bad[0]
        raise ValueError(f"score of system {systems[j]!r} on topic {topics[i]!r} is {float(values[i, j])}: "
                         f"scores must be finite ({len(bad)} such value(s))")
    if values.shape[0] < 2:
        raise ValueError(f"inference needs at least 2 topics, got {values.shape[0]}")
    return ScoreMatrix(values, list(topics), list(systems), None if measure is None else str(measure))
