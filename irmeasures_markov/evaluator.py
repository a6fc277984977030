"""A pytrec_eval-compatible evaluator that also knows our measures.

A script written for pytrec_eval switches by changing one import::

    # import pytrec_eval
    import irmeasures_markov as pytrec_eval
    ev = pytrec_eval.RelevanceEvaluator(qrels, {'map', 'P_10', "MP(model='GL_AD_LID')@100"})
    results = ev.evaluate(run)          # {qid: {name: value}}

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
in the output.  ``relevance_level`` and ``judged_docs_only_flag`` are
pytrec_eval's keyword arguments: pytrec_eval receives them as they are, and our
measures (and other ir_measures measures) get ``rel`` and ``judged_only`` when
they have those parameters and do not set them.  ``supported_measures`` is
pytrec_eval's set plus the names of our measures that evaluate without
parameters (``MPcont`` needs rates and ``TBG`` document lengths, so they are
accepted only with parameters and are not in the set); passing the whole set,
as pytrec_eval scripts do, works.

Scores are checked before any measure runs: a NaN or infinite score is an
error naming the query and the document (pytrec_eval would silently rank it).
The check is part of ranking the run for our measures, so every score is
read once.

Inputs follow one rule on every path (:mod:`irmeasures_markov.inputs`): query
and document ids must be ``str`` (any other type raises ``TypeError`` naming
the query and document, as pytrec_eval does for its measures), and grades
integers in the signed 32-bit range (a grade outside it raises
``InputError``, a ``ValueError``, before pytrec_eval could read it as 0).
The qrels are checked and indexed when the evaluator is made, once per
qrels object while it is unchanged (:mod:`irmeasures_markov.qrels_cache`).  A
pytrec_eval measure that would abort the process (``'P_0'``, ``'ndcg_cut_0'``,
``P@0``, ``'ndcg_5'``) is refused with a ``ValueError`` naming it.  A run
that shares no query with the qrels (or an empty run or qrels) gives ``{}``
and a ``RuntimeWarning`` saying so.

Precision note: pytrec_eval (``pytrec-eval-terrier`` 0.5.x) stores run scores
as float32, so near-tied scores can be reordered relative to trec_eval (TREC-8
run ``uwmt8a0``, topic 441: ``map`` 0.6105 here, 0.6326 in trec_eval). Our
measures rank with float64 scores in trec_eval's order (score descending, docid
descending); for trec_eval-exact AP/P@k/Rprec/bpref on real runs use
:func:`irmeasures_markov.experiments.evaluate`.
"""
from __future__ import annotations

from numbers import Integral
from typing import Dict, Iterable, Mapping, Union

import ir_measures
import numpy as np

from .inputs import to_run_dict, warn_if_nothing_to_evaluate
from .plugin import PROVIDER
from .plugin.base import FamilyMeasure
from .pytrec_inputs import id_from_pytrec_eval, qrels_for_pytrec_eval, run_for_pytrec_eval
from .qrels_cache import qrels_index
from .rankings import read_scores

__all__ = ["RelevanceEvaluator", "supported_measures", "check_native_measure"]

MeasureSpec = Union[str, "ir_measures.Measure"]

#: Our measures that need data to evaluate (a bare name is an error), kept out of supported_measures.
_NEED_PARAMETERS = {"MPcont": "rates", "TBG": "lengths"}


def _pytrec_eval_names():
    import pytrec_eval
    return set(pytrec_eval.supported_measures)


def _our_names():
    return {name for name, m in ir_measures.measures.registry.items()
            if isinstance(m, FamilyMeasure) and m.NAME not in _NEED_PARAMETERS}


#: Like ``pytrec_eval.supported_measures``: every name that RelevanceEvaluator accepts as it is.
supported_measures = _pytrec_eval_names() | _our_names()


def _check_scores(run, qrels):
    """Raise on a non-numeric or non-finite score of an evaluated query, naming query and document.

    Only for evaluators without measures of ours: otherwise ranking the run
    reads and checks the scores (:func:`~irmeasures_markov.rankings.read_scores`), in one pass.
    """
    for qid, docs in run.items():
        if qid in qrels and len(docs):
            read_scores(docs, qid)


#: pytrec_eval families whose parameter is a list of cutoffs ('P_5,10'); a cutoff that is not a
#: positive integer ('P_0', 'P_0.5') makes pytrec_eval abort the whole process (assertion, SIGABRT).
_TREC_CUTOFF_FAMILIES = {"P", "recall", "map_cut", "ndcg_cut", "success", "relative_P"}
#: pytrec_eval families that abort the process on any parameter ('ndcg_5', 'ndcg_1=2').
_TREC_NO_PARAMETER_FAMILIES = {"ndcg", "G", "Rndcg", "ndcg_rel"}


def _trec_family(name: str, trec_names):
    """``(family, parameter)`` of a pytrec_eval measure name: 'P_5,10' -> ('P', '5,10'), 'map' -> ('map', None).

    The family is the longest pytrec_eval name that ``name`` starts with
    followed by '_' ('ndcg_cut_10' is ndcg_cut's, not ndcg's); ``(None, None)``
    if there is none.
    """
    if name in trec_names:
        return name, None
    family = max((f for f in trec_names if name.startswith(f + "_")), key=len, default=None)
    return (family, name[len(family) + 1:]) if family else (None, None)


def _is_trec_name(name: str, trec_names) -> bool:
    return _trec_family(name, trec_names)[0] is not None


def check_native_measure(measure) -> None:
    """Raise ``ValueError`` naming a measure that pytrec_eval would abort the process on.

    ``measure`` is a pytrec_eval name ('P_0', 'ndcg_cut_0', 'ndcg_5') or an
    ir_measures measure computed by another provider (``P@0``, ``nDCG@0``):
    cutoffs must be positive integers, and ``ndcg``, ``G``, ``Rndcg`` and
    ``ndcg_rel`` take no parameter.  Other names are left to pytrec_eval,
    which refuses what it does not know with a ValueError of its own.
    """
    if isinstance(measure, str):
        family, param = _trec_family(measure, _pytrec_eval_names())
        if param is None:
            return
        if family in _TREC_CUTOFF_FAMILIES:
            cutoffs = [c for c in param.split(",") if c]  # pytrec_eval skips empty items ('ndcg_cut_5,')
            if not cutoffs or not all(c.isascii() and c.isdigit() and int(c) >= 1 for c in cutoffs):
                raise ValueError(f"measure {measure!r}: the cutoffs of {family} must be positive integers, as in "
                                 f"'{family}_10' or '{family}_5,10' (pytrec_eval would abort the process on "
                                 f"{param!r}).")
        elif family in _TREC_NO_PARAMETER_FAMILIES:
            alt = " ('ndcg_cut_10' for a cutoff)" if family == "ndcg" else ""
            raise ValueError(f"measure {measure!r}: pytrec_eval evaluates {family} without a parameter only: "
                             f"use '{family}'{alt} (pytrec_eval would abort the process on {param!r}).")
        return
    cutoff = measure.params.get("cutoff")
    if cutoff is not None and (isinstance(cutoff, (bool, np.bool_)) or not isinstance(cutoff, Integral)
                               or cutoff < 1):
        raise ValueError(f"measure {measure}: cutoff must be a positive integer, got {cutoff!r}.")


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
    """

    def __init__(self, query_relevance, measures: Iterable[MeasureSpec], relevance_level: int = 1,
                 judged_docs_only_flag: bool = False):
        if isinstance(relevance_level, (bool, np.bool_)) or not isinstance(relevance_level, Integral):
            raise TypeError(f"`relevance_level` must be an integer, got {relevance_level!r}.")
        if not isinstance(judged_docs_only_flag, (bool, np.bool_)):
            raise TypeError(f"`judged_docs_only_flag` must be a bool, got {judged_docs_only_flag!r}.")
        index = qrels_index(query_relevance)
        self.qrels = index.qrels
        self.relevance_level = int(relevance_level)
        self.judged_docs_only_flag = bool(judged_docs_only_flag)
        trec_names = _pytrec_eval_names()
        self._trec_measures = set()
        self._ours: Dict[str, "ir_measures.Measure"] = {}
        self._others: Dict[str, "ir_measures.Measure"] = {}
        if isinstance(measures, (str, ir_measures.Measure)):
            measures = [measures]
        for spec in measures:
            if isinstance(spec, str) and _is_trec_name(spec, trec_names):
                check_native_measure(spec)
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
                check_native_measure(measure)
                self._others[key] = measure
        self._our_evaluator = PROVIDER.evaluator(list(self._ours.values()), index) if self._ours else None
        native_qrels = qrels_for_pytrec_eval(self.qrels) if self._others or self._trec_measures else None
        self._other_evaluator = ir_measures.evaluator(list(self._others.values()), native_qrels) \
            if self._others else None
        self._trec_evaluator = None
        if self._trec_measures:
            import pytrec_eval
            self._trec_evaluator = pytrec_eval.RelevanceEvaluator(
                native_qrels, self._trec_measures, relevance_level=self.relevance_level,
                judged_docs_only_flag=self.judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        """Return ``{qid: {measure_name: value}}`` for queries in both qrels and run."""
        run = to_run_dict(scores)   # every id checked, before any score
        if self._our_evaluator is not None:
            # ranking the run for our measures reads and checks the scores: the only pass over them
            prepared = self._our_evaluator.prepare(run, ids_checked=True)
        else:
            _check_scores(run, self.qrels)
        results: Dict[str, Dict[str, float]] = {}
        evaluated = {q for q in run if q in self.qrels and len(run[q]) > 0}
        if not evaluated:
            warn_if_nothing_to_evaluate(self.qrels, run, stacklevel=2)
        native_run = run_for_pytrec_eval(run) if self._others or self._trec_measures else None
        if self._trec_evaluator is not None:
            for qid, vals in self._trec_evaluator.evaluate(native_run).items():
                results.setdefault(id_from_pytrec_eval(qid), {}).update(vals)
        if self._our_evaluator is not None:
            by_measure = self._our_evaluator.prepared_values(prepared, run, warn_empty=False)
            # each measure's values follow prepared.qids: one row per query, filled column by column
            rows = [results.setdefault(qid, {}) for qid in prepared.qids]
            for key, measure in self._ours.items():
                for row, v in zip(rows, by_measure[measure].values()):
                    row[key] = v
        if self._other_evaluator is not None:
            inverse = {m: k for k, m in self._others.items()}
            for metric in self._other_evaluator.iter_calc(native_run):
                qid = id_from_pytrec_eval(metric.query_id)
                if qid in evaluated:
                    results.setdefault(qid, {})[inverse[metric.measure]] = metric.value
        return results

