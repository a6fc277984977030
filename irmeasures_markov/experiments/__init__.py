"""Experiment harness: many measures over many runs, system rankings and their correlations.

This reproduces the protocol of the papers' experimental sections (e.g. the MP
paper §5):

* [`evaluate`][irmeasures_markov.experiments.evaluate] — per-topic values of many measures for many runs in one
  pass per run (our measures and AP, P@k, Rprec, bpref, RR, nDCG and binary
  RBP share one float64 ranking preparation per run, with trec_eval's
  definitions; other standard measures go through
  ``ir_measures``/``pytrec_eval``), over every qrels topic by default
  (trec_eval ``-c``), with a tqdm progress bar and optional parallelism
  across runs;
* [`kendall_tau`][irmeasures_markov.experiments.kendall_tau] — Kendall's τ-b between two score vectors (ties
  handled as in scipy's default);
* [`tau_table`][irmeasures_markov.experiments.tau_table] — τ between the system rankings of pairs of measures
  (the papers' Tables 2 and 3);
* [`pool_reduction`][irmeasures_markov.experiments.pool_reduction] — mean scores and τ (full pool vs reduced pool) for
  each pool reduction rate (the MP paper's Figures 3 and 4);
* [`EvaluationGrid`][irmeasures_markov.experiments.EvaluationGrid] /
[`evaluate_grid`][irmeasures_markov.experiments.evaluate_grid] — evaluations of runs ×
  pool samples × collections as cells of a grid (`irmeasures_markov.grid`:
  local processes or Dask, resumable from a Parquet store);
* [`topic_sample_stability`][irmeasures_markov.experiments.topic_sample_stability] /
  [`pool_depth_robustness`][irmeasures_markov.experiments.pool_depth_robustness] — τ between the ranking on
  every topic and on topic samples, and with the full qrels and with shallower pools (Carterette 2011's
  Figures 3 and 4), on the same grids;
* `compare_runs` — two runs
  compared topic by topic under P@H.

Runs × measures with significance tests are
[`irmeasures_markov.comparison.compare`][irmeasures_markov.comparison.compare].

Results are small dataclasses holding numpy arrays; [`Evaluation`][irmeasures_markov.experiments.Evaluation]'s
summaries (``means()``, ``column()``, ``per_topic()``) are labelled pandas
objects, with the plain arrays under explicit names (``values``,
``means_array()``, ``column_array()``).

Modules: `evaluation` ([`evaluate`][irmeasures_markov.experiments.evaluate]; the standard measures it
computes natively are the family `irmeasures_markov.measures._standard`),
`settings` (``evaluate(ties=, unjudged=, residual=)``),
`correlations`, `grid`, `pools`, `robustness`, `ph_compare`.
"""
from __future__ import annotations

from irmeasures_markov.experiments._correlations import kendall_tau, mp_paper_measures, system_ranking, tau_table
from irmeasures_markov.experiments._evaluation import evaluate
from irmeasures_markov.experiments._evaluation_table import Evaluation
from irmeasures_markov.experiments._grid import EvaluationGrid, GridResult, evaluate_grid
from irmeasures_markov.experiments._pools import PoolReduction, pool_reduction
from irmeasures_markov.experiments._robustness import pool_depth_robustness, topic_sample_stability

__all__ = [
    "Evaluation",
    "EvaluationGrid",
    "GridResult",
    "PoolReduction",
    "evaluate",
    "evaluate_grid",
    "kendall_tau",
    "mp_paper_measures",
    "pool_depth_robustness",
    "pool_reduction",
    "system_ranking",
    "tau_table",
    "topic_sample_stability",
]
