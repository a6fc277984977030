"""A pytrec_eval-compatible evaluator that also knows our measures.

A script written for pytrec_eval switches by changing one import::

    # import pytrec_eval
    import irmeasures_markov.pytrec_eval as pytrec_eval
    ev = pytrec_eval.RelevanceEvaluator(qrels, {'map', 'P.10', "MP(model='GL_AD_LID')@100"})
    results = ev.evaluate(run)          # {qid: {name: value}}

The module surface is pytrec_eval's ([`irmeasures_markov.pytrec_eval`][irmeasures_markov.pytrec_eval]
re-exports it; the same names are attributes of ``irmeasures_markov``):
``RelevanceEvaluator``, ``supported_measures``, ``supported_nicknames``,
``compute_aggregated_measure``, ``parse_run`` and ``parse_qrel``.  Strings are
taken as pytrec_eval takes them: both spellings of parameters (``'P_5'``,
``'P.5'``, ``'ndcg_cut.1,4'``), the nicknames (``'all_trec'``, ``'set'``,
``'official'``, ...), and the rows are pytrec_eval's: every query with
judgments and an entry in the run (an empty ranking included), ``{}`` for each
when no measure is asked for.  tests/plugin/test_pytrec_eval_dropin.py runs each case
of pytrec_eval's own test file through both and finds identical results.

Result key names:

* pytrec_eval/trec_eval names (``'map'``, ``'P_10'``, ``'ndcg_cut_10'``,
  ``'recip_rank'``, families like ``'P'``) are computed by pytrec_eval itself and
  keep pytrec_eval's keys (``'P_5'``, ``'P_10'``, ...).
* Every other measure — given as a string in ir_measures syntax or as a
  Measure object — is keyed by ``str(measure)``, its canonical ir_measures form,
  which omits default parameters: ``"MP(model='GL_AD_ID')"`` is keyed ``'MP'``
  and ``MP(model='GL_AD_LID', recall=True)@100`` is keyed
  ``"MP(model='GL_AD_LID',recall=True)@100"``.

As in pytrec_eval, only queries present in both the qrels and the run appear
in the output; a measure of ours (or another ir_measures measure) scores a
query whose ranking is empty as ``iter_calc`` scores a query the run does not
answer (0).  ``relevance_level`` and ``judged_docs_only_flag`` are
pytrec_eval's keyword arguments: pytrec_eval receives them as they are, and our
measures (and other ir_measures measures) get ``rel`` and ``judged_only`` when
they have those parameters and do not set them.  ``supported_measures`` is
pytrec_eval's set plus the names of our measures that evaluate without
parameters (``MPcont`` needs rates and ``TBG`` document lengths, so they are
accepted only with parameters and are not in the set); passing the whole set,
as pytrec_eval scripts do, works.  It iterates pytrec_eval's names first, so a
script that finds the family of a trec_eval name by prefix (``'P_5'`` ->
``'P'``) never lands on ``'PH'`` or ``'PatH'``, whatever ``PYTHONHASHSEED`` is.

Scores are checked before any measure runs: a NaN or infinite score is an
error naming the query and the document (pytrec_eval would silently rank it).
The check is part of ranking the run for our measures, so every score is
read once.

Inputs follow one rule on every path (`irmeasures_markov.io._normalise`): query
and document ids must be ``str`` (any other type raises ``TypeError`` naming
the query and document, as pytrec_eval does for its measures), and grades
integers in the signed 32-bit range (a grade outside it raises
``InputError``, a ``ValueError``, before pytrec_eval could read it as 0).
The qrels are checked and indexed when the evaluator is made, once per
qrels object while it is unchanged (`irmeasures_markov.ranking._cache`).  A
pytrec_eval measure that would abort the process (``'P_0'``, ``'map_cut.0'``,
``'map_cut.5,0'``, ``P@0``, ``'ndcg_5'``) is refused with a ``ValueError``
naming it (`irmeasures_markov._util._cutoffs.check_measure_cutoffs`, the one
cutoff check).  A run that shares no query with the qrels (or an empty run or
qrels) gives ``{}`` and a ``RuntimeWarning`` saying so.

Precision note: pytrec_eval (``pytrec-eval-terrier`` 0.5.x) stores run scores
as float32, so near-tied scores can be reordered relative to trec_eval (TREC-8
run ``uwmt8a0``, topic 441: ``map`` 0.6105 here, 0.6326 in trec_eval). Our
measures rank with float64 scores in trec_eval's order (score descending, docid
descending); for trec_eval-exact AP/P@k/Rprec/bpref on real runs use
[`irmeasures_markov.experiments.evaluate`][irmeasures_markov.experiments.evaluate].
"""
from __future__ import annotations

import functools
import gc
from collections.abc import Iterable, Mapping
from numbers import Integral
from typing import Union

import ir_measures
import numpy as np
import pytrec_eval as _pytrec_eval

from irmeasures_markov._util._cutoffs import check_measure_cutoffs, check_trec_measure_set, trec_measure_parts
from irmeasures_markov.io._normalise import run_dict, warn_if_nothing_to_evaluate
from irmeasures_markov.io._pytrec import (
    check_gdeval_ids,
    gdeval_measures,
    id_from_pytrec_eval,
    qrels_for_pytrec_eval,
    run_for_pytrec_eval,
)
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.plugin._provider import PROVIDER
from irmeasures_markov.ranking._cache import qrels_index
from irmeasures_markov.ranking._order import read_scores

__all__ = ["RelevanceEvaluator", "supported_measures", "supported_nicknames", "compute_aggregated_measure",
           "parse_run", "parse_qrel"]

MeasureSpec = Union[str, "ir_measures.Measure"]

#: what the drop-in gives for a run answering few qrels queries (it computes no mean)
_VALUES_FOR = "values are given for those {shared} only, as pytrec_eval does (trec_eval -c averages over all {n})"
#: Our measures that need data to evaluate (a bare name is an error), kept out of supported_measures.
_NEED_PARAMETERS = {"MPcont": "rates", "TBG": "lengths"}

#: pytrec_eval's own readers of TREC run and qrels lines (``parse_run(open('x.run'))``), unchanged.
parse_run = _pytrec_eval.parse_run
parse_qrel = _pytrec_eval.parse_qrel


class MeasureNames(set):
    """A ``set`` of measure names that lists pytrec_eval's names first, then ours (sorted).

    pytrec_eval scripts find the family of a trec_eval output name by a
    prefix match over ``supported_measures`` (``max(names, key=common prefix
    length)``: ``'P_5'`` shares one letter with ``'P'``, ``'PH'`` and
    ``'PatH'``).  A plain set would iterate in an order that changes with
    ``PYTHONHASHSEED`` and could hand ``'P_5'`` to ``PatH``; in this order
    the first best match is always the one pytrec_eval's own set gives.
    """

    def __iter__(self):
        trec = _pytrec_eval.supported_measures
        first = [n for n in trec if n in self]
        return iter(first + sorted((n for n in set.__iter__(self) if n not in trec), key=str))


#: Like ``pytrec_eval.supported_measures``: every name that RelevanceEvaluator accepts as it is
#: (pytrec_eval's, in pytrec_eval's order, then ours).
supported_measures = MeasureNames(set(_pytrec_eval.supported_measures) | {
    name for name, m in ir_measures.measures.registry.items()
    if isinstance(m, FamilyMeasure) and m.NAME not in _NEED_PARAMETERS})

#: pytrec_eval's nicknames (``'all_trec'``, ``'set'``, ``'official'``, ...), each a set of pytrec_eval names.
supported_nicknames = {name: set(names) for name, names in _pytrec_eval.supported_nicknames.items()}


def _is_trec_spec(spec) -> bool:
    """A measure written as pytrec_eval writes it: a nickname, a family, or a family with parameters."""
    return isinstance(spec, str) and (spec in supported_nicknames or trec_measure_parts(spec)[0] is not None)


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """The value over all queries of a result key, from its per-query values (as pytrec_eval's).

    pytrec_eval's keys aggregate as in pytrec_eval (``num_*`` summed,
    ``gm_*`` by geometric mean, the others by mean); the key of an ir_measures
    measure (ours included) by that measure's own aggregator, which for our
    measures is the mean (their default value when ``values`` is empty).

    Parameters
    ----------
    measure : str
        A result key of [`RelevanceEvaluator.evaluate`][irmeasures_markov.RelevanceEvaluator.evaluate]: a pytrec_eval
        key or an ir_measures measure's name.
    values : list of float
        The key's per-query values.

    Returns
    -------
    float
        The aggregated value.
    """
    if trec_measure_parts(measure)[0] is None:
        try:
            parsed = ir_measures.parse_measure(measure)
        except Exception:  # not an ir_measures name either: pytrec_eval's rule (the mean), below
            parsed = None
        if parsed is not None:   # an aggregator's own error is raised, not taken for an unknown name
            agg = parsed.aggregator()
            for v in values:
                agg.add(v)
            return float(agg.result())
    return _pytrec_eval.compute_aggregated_measure(measure, values)


def _check_scores(run, qrels):
    """Raise on a non-numeric or non-finite score of an evaluated query, naming query and document.

    Only for evaluators without measures of ours: otherwise ranking the run
    reads and checks the scores (`read_scores`), in one pass.
    """
    for qid, docs in run.items():
        if qid in qrels and len(docs):
            read_scores(docs, qid)


def _without_cyclic_gc(method):
    """Run ``method`` with Python's cyclic garbage collector paused (restored after, if it was on).

    Indexing qrels and evaluating a run allocate a container per query (the
    qrels copy, the result rows, per-query probes) and no reference cycle: on
    100,000 queries the collections these allocations trigger, each scanning
    every live object, cost a fifth of the call, for nothing to collect.
    Memory is unchanged (reference counting frees everything as before).
    """
    @functools.wraps(method)
    def paused(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return paused


class RelevanceEvaluator:
    """Evaluate runs against fixed qrels, like ``pytrec_eval.RelevanceEvaluator``.

    Parameters
    ----------
    query_relevance : dict
        ``{qid: {docid: grade}}`` (also a path, DataFrame or Qrel namedtuples).
    measures : iterable of str or Measure
        pytrec_eval names, ir_measures strings (``"MP(model='LO_OR_ID')@10"``) or
        Measure objects (``MP(recall=True)``).
    relevance_level : int
        Minimum grade counted as relevant, applied to pytrec_eval measures and
        to other measures that do not set ``rel`` themselves.
    judged_docs_only_flag : bool
        Drop unjudged documents before evaluating (trec_eval ``-J``), applied
        to pytrec_eval measures and as ``judged_only=True`` to other measures
        that support it and do not set it themselves.

    Notes
    -----
    Making the evaluator and [`evaluate`][irmeasures_markov.RelevanceEvaluator.evaluate] pause Python's cyclic garbage
    collector while they run (``gc.isenabled()`` is as it was afterwards):
    they allocate a container per query and no reference cycle, and on many
    queries the collections those allocations trigger were a fifth of the time.
    """

    @_without_cyclic_gc
    def __init__(self, query_relevance: object, measures: Iterable[MeasureSpec], relevance_level: int = 1,
                 judged_docs_only_flag: bool = False):
        if isinstance(relevance_level, (bool, np.bool_)) or not isinstance(relevance_level, Integral):
            raise TypeError(f"`relevance_level` must be an integer, got {relevance_level!r}.")
        if not isinstance(judged_docs_only_flag, (bool, np.bool_)):
            raise TypeError(f"`judged_docs_only_flag` must be a bool, got {judged_docs_only_flag!r}.")
        index = qrels_index(query_relevance)
        self.qrels = index.qrels
        self.relevance_level = int(relevance_level)
        self.judged_docs_only_flag = bool(judged_docs_only_flag)
        self._trec_measures = set()
        self._ours: dict[str, ir_measures.Measure] = {}
        self._others: dict[str, ir_measures.Measure] = {}
        if isinstance(measures, (str, ir_measures.Measure)):
            measures = [measures]
        for spec in measures:
            if _is_trec_spec(spec):  # pytrec_eval's spellings ('P_5', 'P.5', 'ndcg_cut.1,4', 'official')
                check_measure_cutoffs(spec)
                self._trec_measures.add(spec)
                continue
            measure = ir_measures.parse_measure(spec) if isinstance(spec, str) else spec
            if not isinstance(measure, ir_measures.Measure):
                raise TypeError(f"measures must be strings or ir_measures Measure objects, got {spec!r}")
            key = str(measure)
            if "rel" in measure.SUPPORTED_PARAMS and "rel" not in measure.params and self.relevance_level != 1:
                measure = measure(rel=self.relevance_level)
            if self.judged_docs_only_flag and "judged_only" in measure.SUPPORTED_PARAMS \
                    and "judged_only" not in measure.params:
                measure = measure(judged_only=True)
            if PROVIDER.supports(measure):
                self._ours[key] = measure
            else:
                check_measure_cutoffs(measure)
                self._others[key] = measure
        check_trec_measure_set(self._trec_measures)   # pytrec_eval joins their cutoffs per family
        self._our_evaluator = PROVIDER.evaluator(list(self._ours.values()), index) if self._ours else None
        self._gdeval = gdeval_measures(self._others.values())
        check_gdeval_ids(self._gdeval, self.qrels)
        native_qrels = qrels_for_pytrec_eval(self.qrels) if self._others or self._trec_measures else None
        self._other_evaluator = ir_measures.evaluator(list(self._others.values()), native_qrels) \
            if self._others else None
        self._trec_evaluator = _pytrec_eval.RelevanceEvaluator(
            native_qrels, self._trec_measures, relevance_level=self.relevance_level,
            judged_docs_only_flag=self.judged_docs_only_flag) if self._trec_measures else None

    @_without_cyclic_gc
    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Return ``{qid: {measure_name: value}}`` for queries in both qrels and run.

        Parameters
        ----------
        scores : mapping of str to mapping of str to float
            The run, ``{qid: {docid: score}}`` (any form [`to_run_dict`][irmeasures_markov.io.to_run_dict] takes).

        Returns
        -------
        dict of str to dict of str to float
            The value of every measure for every query with judgments and an entry in the run.

        Raises
        ------
        ValueError
            A bad query or document id, or a non-numeric or non-finite score of an evaluated query.
        """
        run = run_dict(scores)   # every id checked, before any score
        if self._our_evaluator is not None:
            # ranking the run for our measures reads and checks the scores: the only pass over them
            prepared = self._our_evaluator.prepare(run)
        else:
            _check_scores(run, self.qrels)
        # pytrec_eval's rows: every query with judgments and an entry in the run, even an empty one (and
        # empty rows when no measure is asked for)
        results: dict[str, dict[str, float]] = {q: {} for q in run if self.qrels.get(q)}
        warn_if_nothing_to_evaluate(self.qrels, run, stacklevel=2, mean_over=_VALUES_FOR)
        native_run = run_for_pytrec_eval(run) if self._others or self._trec_measures else None
        if self._trec_evaluator is not None:
            for qid, vals in self._trec_evaluator.evaluate(native_run).items():
                results.setdefault(id_from_pytrec_eval(qid), {}).update(vals)
        if self._our_evaluator is not None:
            by_measure = self._our_evaluator.prepared_values(prepared, run, warn_empty=False)
            # each measure's values follow prepared.qids: one row per query, filled column by column (a
            # topic without judgments has no row, as in pytrec_eval)
            rows = [results.get(qid) for qid in prepared.qids]
            for key, measure in self._ours.items():
                for row, v in zip(rows, by_measure[measure].values()):
                    if row is not None:
                        row[key] = v
                for row in results.values():   # an empty ranking scores as an unanswered query (iter_calc)
                    row.setdefault(key, measure.DEFAULT)
        if self._other_evaluator is not None:
            check_gdeval_ids(self._gdeval, (), run)
            inverse = {m: k for k, m in self._others.items()}
            for metric in self._other_evaluator.iter_calc(native_run):
                row = results.get(id_from_pytrec_eval(metric.query_id))
                if row is not None:
                    row[inverse[metric.measure]] = metric.value
        return results

