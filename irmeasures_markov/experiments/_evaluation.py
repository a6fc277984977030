"""Per-topic values of many measures for many runs: [`evaluate`][irmeasures_markov.experiments.evaluate] and its
[`Evaluation`][irmeasures_markov.experiments.Evaluation].

Our measures and the standard measures of `irmeasures_markov.measures._standard` (AP, P@k, Rprec,
bpref, RR, nDCG, binary RBP, R@k, Success@k, SetP, SetR, SetF, IPrec@r, NumRet, NumRel and Judged@k, with
trec_eval's definitions) share one float64 ranking preparation per run; other measures of ``ir_measures`` go
through ``ir_measures`` (pytrec_eval's float32 scores), named in one warning.  Topics default to every qrels
topic (trec_eval ``-c``).
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import ir_measures
import numpy as np
from ir_measures import Measure

from irmeasures_markov._util._cutoffs import check_measure_cutoffs
from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov.experiments._evaluation_table import Evaluation
from irmeasures_markov.experiments._settings import (
    NativeSetting,
    ReadsEverything,
    apply_settings,
    extra_names,
    measure_values,
)
from irmeasures_markov.grid import LocalBackend
from irmeasures_markov.io import read_run_columns
from irmeasures_markov.io._content import read_once
from irmeasures_markov.io._normalise import OverlapWarning, overlap_problem, qrels_dict, run_dict
from irmeasures_markov.io._pytrec import (
    check_gdeval_ids,
    gdeval_measures,
    id_from_pytrec_eval,
    qrels_for_pytrec_eval,
    run_for_pytrec_eval,
)
from irmeasures_markov.measures._standard import float32_note, standard_measure
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.plugin._provider import install_provider
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import QrelsIndex

__all__ = ["MeasuresLike", "Qrels", "QrelsLike", "Run", "RunLike", "RunScorer", "as_run", "read_runs", "default_topics",
           "checked_topics", "evaluate", "labelled_measures", "parse_measures", "warn_float32", "warn_no_relevant",
           "warn_overlap"]

#: Relevance judgments: ``{qid: {docid: grade}}``.
Qrels = Mapping[str, Mapping[str, int]]
#: A run: ``{qid: {docid: score}}``.
Run = Mapping[str, Mapping[str, float]]
#: Qrels in any form :func:`irmeasures_markov.io.to_qrels_dict` takes: a dict, a TREC qrels file path,
#: a DataFrame, ``Qrel`` namedtuples.
QrelsLike = Qrels | str | os.PathLike[str] | Iterable[Any]
#: A run in any form :func:`irmeasures_markov.io.to_run_dict` takes (a dict, a DataFrame, ``ScoredDoc`` tuples).
RunLike = Run | Iterable[Any]
#: Measures as :func:`evaluate` takes them: measures or strings, or a ``{label: measure}`` mapping.
MeasuresLike = Measure | str | Sequence[Measure | str] | Mapping[str, Measure | str]


def parse_measures(measures: Measure | str | Sequence[Measure | str]) -> list[Measure]:
    """Measure objects from objects or strings (``'AP'``, ``"MP(model='LO_OR_ID')"``, ``'P@10'``).

    Parameters
    ----------
    measures : ir_measures.Measure, str, or a sequence of them
        Strings are parsed by ``ir_measures.parse_measure`` (our families are registered).

    Returns
    -------
    list of ir_measures.Measure

    Raises
    ------
    ValueError
        No measure, a measure listed twice, a string ``ir_measures`` cannot parse, or a cutoff that is not a
        positive integer (``P@0``).
    """
    if isinstance(measures, (str, bytes)) or not isinstance(measures, Sequence):
        measures = [measures]
    out = []
    for m in measures:
        m = ir_measures.parse_measure(m) if isinstance(m, str) else m
        check_measure_cutoffs(m)
        out.append(m)
    if not out:
        raise ValueError("`measures` is empty.")
    if len(set(out)) != len(out):
        raise ValueError(f"`measures` lists a measure twice: {[str(m) for m in out]}")
    return out


class RunScorer:
    """All measures of one run, per topic: ``scorer(run)`` is an array ``[measure, topic]``.

    Our measures (and the standard measures of `irmeasures_markov.measures._standard`) are computed
    on one shared ranking preparation of the run, everything else through one
    ``ir_measures`` evaluator; a topic the run did not answer holds the
    measure's DEFAULT.  [`evaluate`][irmeasures_markov.experiments.evaluate] and the evaluation grids score every
    run with it.

    Parameters
    ----------
    measures : list of ir_measures.Measure
        Parsed measures (`parse_measures`); ours are validated here.
    qrels : dict
        ``{qid: {docid: grade}}``.
    topics : list of str
        The topics, in the order of the output's columns.
    native : bool
        Compute the standard measures of `irmeasures_markov.measures._standard` natively (default).
    settings : dict of int to NativeSetting, optional
        Tie order and unjudged documents of natively computed measures, by position (`apply_settings`).
    extras : bool
        Also give the per-query extras of `extra_names` as rows after the measures' rows.
    """

    def __init__(self, measures: list[Measure], qrels: Qrels, topics: list[str], native: bool = True,
                 settings: Mapping[int, NativeSetting] | None = None, extras: bool = False) -> None:
        install_provider()
        self.measures = measures
        self.settings = dict(settings or {})
        #: (measure position, extra name) of every extra row
        self.extra_rows = [(j, name) for j, m in enumerate(measures) for name in extra_names(m)] if extras else []
        self.topics = topics
        self.topic_index = {t: k for k, t in enumerate(topics)}
        self.qrels_index = QrelsIndex(qrels)
        self.native = {j: s for j, m in enumerate(measures) if native and (s := standard_measure(m))}
        self.ours = [j for j, m in enumerate(measures) if isinstance(m, FamilyMeasure) or j in self.native]
        self.others = [j for j, m in enumerate(measures) if j not in set(self.ours)]
        for j in self.ours:
            if isinstance(measures[j], FamilyMeasure):
                measures[j].validate_params()
        self.gdeval = gdeval_measures([measures[j] for j in self.others])
        check_gdeval_ids(self.gdeval, qrels)
        self.other_eval = (ir_measures.evaluator([measures[j] for j in self.others], qrels_for_pytrec_eval(qrels))
                           if self.others else None)
        self.other_pos = {measures[j]: j for j in self.others}
        #: what reads the prepared run (PreparedRun prepares it for them): our measures, the native ones (which
        #: read every rank), and for settings and bpref a reader of every judgment and of the ranked scores
        self.readers = [measures[j] for j in self.ours]
        if self.settings or any(s.kind in ("Bpref", "Judged") for s in self.native.values()):
            self.readers.append(ReadsEverything())

    def __call__(self, run: RunLike) -> np.ndarray:
        """The values ``[measure, topic]`` of ``run`` (any form [`to_run_dict`][irmeasures_markov.io.to_run_dict]
        takes)."""
        out = np.zeros((len(self.measures) + len(self.extra_rows), len(self.topics)))
        out[:len(self.measures)] = np.array([m.DEFAULT for m in self.measures], dtype=np.float64)[:, None]
        run = as_run(run)
        if self.ours:
            prepared = PreparedRun(self.qrels_index, run, self.readers)
            cols = np.array([self.topic_index.get(q, -1) for q in prepared.qids], dtype=np.int64)
            keep = cols >= 0
            cache: dict = {}
            with read_once():  # one content of each file for every measure of the run
                for j in self.ours:
                    computed = measure_values(self.measures[j], self.native.get(j), self.settings.get(j), prepared,
                                              cache)
                    out[j, cols[keep]] = computed.values[keep]
                    for row, (i, name) in enumerate(self.extra_rows, len(self.measures)):
                        if i == j and name in computed.extras:
                            out[row, cols[keep]] = computed.extras[name][keep]
        if self.other_eval is not None:
            check_gdeval_ids(self.gdeval, (), run)
            for metric in self.other_eval.iter_calc(run_for_pytrec_eval(run)):
                k = self.topic_index.get(id_from_pytrec_eval(metric.query_id))
                if k is not None:
                    out[self.other_pos[metric.measure], k] = metric.value
        return out


def read_runs(runs: Mapping[str, RunLike]) -> dict[str, RunLike]:
    """Every run that is not a mapping read once, here (a mapping is kept as given): the overlap warning and the
    scores of every front end that takes run files then come from the same copy."""
    return {name: run if isinstance(run, Mapping) else as_run(run) for name, run in runs.items()}


def as_run(run: RunLike) -> Run:
    """A run of any form [`to_run_dict`][irmeasures_markov.io.to_run_dict] takes, as a mapping; a run file is read as
    arrays (the same run, no Python object per document)."""
    return read_run_columns(run) if isinstance(run, (str, os.PathLike)) else run_dict(run)


@dataclass
class _RunsTask:
    """Runs of [`evaluate`][irmeasures_markov.experiments.evaluate] scored in a worker process of the local grid
    backend, which forks after the
    scorer and the runs are published (nothing is pickled)."""
    names: list[str]
    needs: tuple[str, ...] = ("scorer", "runs")

    def compute(self, shared: Mapping[str, Any]) -> list[np.ndarray]:
        return [shared["scorer"](shared["runs"][n]) for n in self.names]


def default_topics(qrels: Qrels, topics: Sequence[str] | None = None) -> list[str]:
    """The topics to evaluate: ``topics``, by default every qrels topic, as trec_eval -c averages (a topic without
    relevant documents included).

    Parameters
    ----------
    qrels : dict
        ``{qid: {docid: grade}}``.
    topics : sequence of str, optional
        The topics asked for.

    Returns
    -------
    list of str
        ``topics``, or the qrels' topic ids, shorter ids first, then in string order.

    Raises
    ------
    ValueError
        No topic: the qrels are empty and ``topics`` was not given (or is empty).
    """
    topics = list(topics) if topics is not None else sorted(qrels, key=lambda q: (len(q), q))
    if not topics:
        raise ValueError("no topics to evaluate: the qrels are empty and `topics` was not given.")
    return topics


def warn_no_relevant(qrels: Qrels, topics: Sequence[str], stacklevel: int = 3) -> None:
    """A ``RuntimeWarning`` naming the ``topics`` judged in ``qrels`` without a relevant (grade >= 1) document.

    They score 0 and are averaged in, as trec_eval does; the warning points at
    the caller of the function calling this one ([`evaluate`][irmeasures_markov.experiments.evaluate],
    ``pool_reduction``).
    """
    empty = [t for t in topics if t in qrels and not any(g >= 1 for g in qrels[t].values())]
    if empty:
        warnings.warn(f"{len(empty)} topic{'' if len(empty) == 1 else 's'} with judgments but no relevant "
                      f"(grade >= 1) document score 0 and are averaged in, as trec_eval does: "
                      f"{', '.join(empty[:20])}{' ...' if len(empty) > 20 else ''}; pass topics=... to leave "
                      "them out.", RuntimeWarning, stacklevel=stacklevel)


def warn_float32(measures: Sequence[Measure]) -> None:
    """A ``RuntimeWarning`` naming the measures of ``ir_measures`` computed by ``ir_measures``, not on the float64
    ranking (`float32_note`); it points at the caller of the
    function calling this one ([`evaluate`][irmeasures_markov.experiments.evaluate], ``evaluate_grid``)."""
    note = float32_note(measures)
    if note:
        warnings.warn(note, RuntimeWarning, stacklevel=3)


def warn_overlap(topics: Sequence[str], runs: Mapping[str, RunLike], stacklevel: int = 3) -> None:
    """An `OverlapWarning` naming each run held as a mapping (a run file or a DataFrame is not read here:
    [`evaluate`][irmeasures_markov.experiments.evaluate] reads it first) that
    answers none or less than half of the ``topics`` (`overlap_problem`,
    the rule of every front end); the warning points at the caller of the function calling this one."""
    topic_set = set(topics)
    for name, run in runs.items():
        problem = overlap_problem(topic_set, run) if isinstance(run, Mapping) else None
        if problem is not None:
            warnings.warn(f"run {name!r}: {problem}", OverlapWarning, stacklevel=stacklevel)


def checked_topics(qrels: Qrels, runs: Mapping[str, RunLike], min_runs: int = 1,
                   topics: Sequence[str] | None = None) -> list[str]:
    """`default_topics`, after the checks and warnings of every experiment on read runs (at least ``min_runs``
    runs: 2 for a τ); the warnings point at the caller of the function calling this one."""
    if not runs:
        raise ValueError("`runs` is empty.")
    if len(runs) < min_runs:
        raise ValueError("Kendall's τ needs at least 2 runs.")
    topics = default_topics(qrels, topics)
    warn_no_relevant(qrels, topics, stacklevel=4)
    warn_overlap(topics, runs, stacklevel=4)
    return topics


def labelled_measures(measures: MeasuresLike,
                      labels: Sequence[str] | None = None) -> tuple[list[Measure], list[str] | None]:
    """``(parsed measures, labels)`` from a list of measures or a ``{label: measure}`` mapping.

    Parameters
    ----------
    measures : list of measures or strings, or dict {label: measure}
        As [`evaluate`][irmeasures_markov.experiments.evaluate] takes them.
    labels : sequence of str, optional
        Display names; default the mapping's keys (None for a list).

    Returns
    -------
    (list of ir_measures.Measure, list of str or None)

    Raises
    ------
    ValueError
        A ``labels`` list of another length than the measures, or what `parse_measures` raises.
    """
    if isinstance(measures, Mapping):
        labels = list(measures) if labels is None else labels
        measures = list(measures.values())
    measures = parse_measures(list(measures))
    if labels is not None and len(labels) != len(measures):
        raise ValueError(f"`labels` has {len(labels)} names for {len(measures)} measures.")
    return measures, labels


def evaluate(measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunLike], *,
             topics: Sequence[str] | None = None, labels: Sequence[str] | None = None, n_jobs: int = 1,
             progress: bool | None = None, native: bool = True, ties: str = "docid", unjudged: str = "nonrel",
             residual: bool = False) -> Evaluation:
    """Evaluate every measure on every run, per topic.

    Parameters
    ----------
    measures : list of measures or strings, or dict {label: measure}
        ``ir_measures`` measures (ours included); strings are parsed.
    qrels : dict, path, DataFrame or Qrel namedtuples
        ``{qid: {docid: grade}}``, a TREC qrels file (``str`` or ``os.PathLike``;
        plain or compressed), or any form [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict]
        takes.
    runs : dict
        ``{run_name: run}``, each run ``{qid: {docid: score}}`` (e.g. from
        [`irmeasures_markov.io._run_files.load_run_dir`][irmeasures_markov.io.load_run_dir]), a run file path, a
        DataFrame or any form [`to_run_dict`][irmeasures_markov.io.to_run_dict] takes; each is read once.  A run
        that answers less than half of the topics gets an ``OverlapWarning`` (a ``RuntimeWarning``) with the
        counts and what the mean is over.
    topics : sequence of str, optional
        The topics to average over.  Default: every qrels topic, which is
        trec_eval ``-c`` (and ``ir_measures.calc_aggregate``): a topic a run did
        not answer scores the measure's DEFAULT (0), and a judged topic without
        a relevant document scores 0 (with a ``RuntimeWarning`` naming it);
        both are averaged in.  Topics absent from the qrels score 0.  Some
        papers drop topics without a relevant document (Robust04: 249 of 250
        topics); pass them explicitly for that.
    labels : sequence of str, optional
        Display names (default: the measures' printed forms, or the dict keys).
    n_jobs : int
        Processes to spread the runs over (1 = in this process).  Uses ``fork``
        where available, so runs are shared with the workers without copying.
    progress : bool or None
        A progress bar on standard error: ``None`` (default) only when it is a
        terminal, ``True`` always, ``False`` never.
    native : bool
        Compute AP, P@k, Rprec, bpref, RR, RR@k, nDCG, nDCG@k, binary RBP,
        R@k, Success@k, SetP, SetR, SetF, IPrec@r, NumRet, NumRel, NumRelRet
        and Judged@k on our float64 ranking preparation (default; trec_eval's
        definitions and values, e.g. bpref ignores negative grades as trec_eval
        does) instead of through ``ir_measures``/``pytrec_eval``, whose float32
        scores can reorder near-ties.  Any other measure of ``ir_measures``
        goes through ``ir_measures``, named in one ``RuntimeWarning``.
    ties : str
        Tie order (``'docid'`` (trec_eval), ``'optimistic'``, ``'pessimistic'``, ``'expected'``), unjudged
        documents (``'nonrel'`` (trec_eval), ``'drop'``, ``'rel'``, ``'range'``) and residual for every
        measure (`apply_settings`, docs/ties-and-holes.md); extras become columns.
    unjudged : str
        Tie order (``'docid'`` (trec_eval), ``'optimistic'``, ``'pessimistic'``, ``'expected'``), unjudged
        documents (``'nonrel'`` (trec_eval), ``'drop'``, ``'rel'``, ``'range'``) and residual for every
        measure (`apply_settings`, docs/ties-and-holes.md); extras become columns.
    residual : bool
        Tie order (``'docid'`` (trec_eval), ``'optimistic'``, ``'pessimistic'``, ``'expected'``), unjudged
        documents (``'nonrel'`` (trec_eval), ``'drop'``, ``'rel'``, ``'range'``) and residual for every
        measure (`apply_settings`, docs/ties-and-holes.md); extras become columns.

    Returns
    -------
    Evaluation
        ``values[run, measure, topic]`` in the order of ``runs``, the measures and the topics.

    Raises
    ------
    ValueError
        Empty ``measures``, ``runs`` or topic set, a measure listed twice, a
        cutoff that is not a positive integer (``P@0``), bad ``labels``/``n_jobs``,
        or a ``ties``/``unjudged``/``residual`` setting a measure does not support; an ``InputError`` for a query
        id gdeval cannot read when ir_measures computes a measure with gdeval (ERR@k).
    """
    measures, labels = labelled_measures(measures, labels)
    measures, settings, default_labels = apply_settings(measures, ties, unjudged, residual, native)
    labels = list(labels) if labels is not None else default_labels
    warn_float32(measures)
    qrels = qrels_dict(qrels)
    # every form read once, here: the overlap warning and the scores come from the same copy
    runs = read_runs(runs)
    topics = checked_topics(qrels, runs, topics=topics)
    names = list(runs)
    n_jobs = int(n_jobs)
    if n_jobs < 1:
        raise ValueError(f"`n_jobs` must be a positive integer, got {n_jobs!r}.")
    scorer = RunScorer(measures, qrels, topics, native, settings, extras=True)
    extra_rows = scorer.extra_rows
    values = np.zeros((len(names), len(measures) + len(extra_rows), len(topics)))
    bar = progress_bar(None, progress, total=len(names), desc="evaluating", unit="run")
    try:
        if n_jobs == 1 or len(names) < 2 * n_jobs:
            for i, n in enumerate(names):
                values[i] = scorer(runs[n])
                bar.update(1)
        else:
            chunk = max(1, math.ceil(len(names) / (n_jobs * 8)))
            starts = range(0, len(names), chunk)
            outcomes = LocalBackend(n_jobs).run([_RunsTask(names[a:a + chunk]) for a in starts],
                                                {"scorer": scorer, "runs": runs})
            with closing(outcomes):  # on an error, the worker processes end before it is raised
                for t, res, err in outcomes:
                    if err is not None:
                        raise err
                    values[starts[t]:starts[t] + len(res[0])] = res[0]
                    bar.update(len(res[0]))
    finally:
        bar.close()
    extras = {len(measures) + k: (j, name) for k, (j, name) in enumerate(extra_rows)}
    return Evaluation(names, measures + [measures[j] for j, _ in extra_rows], topics, values,
                      labels + [f"{labels[j]}_{name}" for j, name in extra_rows], extras)

