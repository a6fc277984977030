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
in the output.

Precision note: pytrec_eval (``pytrec-eval-terrier`` 0.5.x) stores run scores
as float32, so near-tied scores can be reordered relative to trec_eval (TREC-8
run ``uwmt8a0``, topic 441: ``map`` 0.6105 here, 0.6326 in trec_eval). Our
measures rank with float64 scores in trec_eval's order (score descending, docid
descending); for trec_eval-exact AP/P@k/Rprec/bpref on real runs use
:func:`irmeasures_markov.experiments.evaluate`.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Union

import ir_measures

from .io import to_qrels_dict, to_run_dict
from .plugin import PROVIDER

__all__ = ["RelevanceEvaluator", "supported_measures"]

MeasureSpec = Union[str, "ir_measures.Measure"]


def _pytrec_eval_names():
    import pytrec_eval
    return set(pytrec_eval.supported_measures)


def _is_trec_name(name: str, trec_names) -> bool:
    if name in trec_names:
        return True
    base, sep, _ = name.partition("_")
    # 'P_10', 'ndcg_cut_10', 'map_cut_5'...: pytrec_eval accepts family names with parameters
    while sep:
        if base in trec_names:
            return True
        nxt, sep, _ = name[len(base) + 1:].partition("_")
        base = f"{base}_{nxt}"
    return False


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
        to our measures that do not set ``rel`` themselves.
    """

    def __init__(self, query_relevance, measures: Iterable[MeasureSpec], relevance_level: int = 1):
        self.qrels = to_qrels_dict(query_relevance)
        self.relevance_level = int(relevance_level)
        trec_names = _pytrec_eval_names()
        self._trec_measures = set()
        self._ours: Dict[str, "ir_measures.Measure"] = {}
        self._others: Dict[str, "ir_measures.Measure"] = {}
        if isinstance(measures, (str, ir_measures.Measure)):
            measures = [measures]
        for spec in measures:
            if isinstance(spec, str) and _is_trec_name(spec, trec_names):
                self._trec_measures.add(spec)
                continue
            measure = ir_measures.parse_measure(spec) if isinstance(spec, str) else spec
            if not isinstance(measure, ir_measures.Measure):
                raise TypeError(f"measures must be strings or ir_measures Measure objects, got {spec!r}")
            key = str(measure)
            if "rel" in measure.SUPPORTED_PARAMS and "rel" not in measure.params and self.relevance_level != 1:
                measure = measure(rel=self.relevance_level)
            if PROVIDER.supports(measure):
                self._ours[key] = measure
            else:
                self._others[key] = measure
        self._our_evaluator = PROVIDER.evaluator(list(self._ours.values()), self.qrels) if self._ours else None
        self._other_evaluator = ir_measures.evaluator(list(self._others.values()), self.qrels) \
            if self._others else None
        self._trec_evaluator = None
        if self._trec_measures:
            import pytrec_eval
            self._trec_evaluator = pytrec_eval.RelevanceEvaluator(
                self.qrels, self._trec_measures, relevance_level=self.relevance_level)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, float]]:
        """Return ``{qid: {measure_name: value}}`` for queries in both qrels and run."""
        run = to_run_dict(scores)
        results: Dict[str, Dict[str, float]] = {}
        evaluated = {q for q in run if q in self.qrels and len(run[q]) > 0}
        if self._trec_evaluator is not None:
            for qid, vals in self._trec_evaluator.evaluate(run).items():
                results.setdefault(qid, {}).update(vals)
        if self._our_evaluator is not None:
            by_measure = self._our_evaluator.values(run)
            for key, measure in self._ours.items():
                for qid, v in by_measure[measure].items():
                    results.setdefault(qid, {})[key] = v
        if self._other_evaluator is not None:
            inverse = {m: k for k, m in self._others.items()}
            for metric in self._other_evaluator.iter_calc(run):
                if metric.query_id in evaluated:
                    results.setdefault(metric.query_id, {})[inverse[metric.measure]] = metric.value
        return results


def supported_measures():
    """Names of our registered measures (pytrec_eval's names are also accepted)."""
    return sorted(m.NAME for m in PROVIDER.SUPPORTED_MEASURES)
