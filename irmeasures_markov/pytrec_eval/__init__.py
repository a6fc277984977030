"""pytrec_eval's module surface, with this package's measures added.

A pytrec_eval script switches by changing its import line only::

    import irmeasures_markov.pytrec_eval as pytrec_eval

Everything a script uses is here, under pytrec_eval's names:
[`RelevanceEvaluator`][irmeasures_markov.RelevanceEvaluator] (pytrec_eval's measures, spellings, nicknames and
result shape, plus ours), ``supported_measures`` (pytrec_eval's names, then
ours), ``supported_nicknames``,
[`compute_aggregated_measure`][irmeasures_markov.pytrec_eval.compute_aggregated_measure],
`parse_run` and `parse_qrel`.  The same names are attributes of
``irmeasures_markov`` itself.
"""
from irmeasures_markov.plugin._pytrec import (
           RelevanceEvaluator,
           compute_aggregated_measure,
           parse_qrel,
           parse_run,
           supported_measures,
           supported_nicknames,
)

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run", "supported_measures",
           "supported_nicknames"]
