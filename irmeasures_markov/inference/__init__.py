"""Inference about systems from per-topic scores: classic tests and Bayesian models (Carterette 2011).

* [`score_matrix`][irmeasures_markov.inference.score_matrix] — per-query results (ir_measures, PyTerrier, our
  evaluator, arrays) to a topics × systems matrix, with clear errors;
* classic paired tests with their model assumptions stated:
  [`paired_t_test`][irmeasures_markov.inference.paired_t_test],
  [`wilcoxon_test`][irmeasures_markov.inference.wilcoxon_test], [`sign_test`][irmeasures_markov.inference.sign_test],
  [`randomization_test`][irmeasures_markov.inference.randomization_test],
  [`bootstrap_test`][irmeasures_markov.inference.bootstrap_test]; [`all_pairs`][irmeasures_markov.inference.all_pairs]
  and
  [`pairwise`][irmeasures_markov.inference.pairwise] with Holm/Bonferroni/Benjamini–Hochberg correction;
* many systems at once (`irmeasures_markov.inference._multiple`):
  [`two_way_anova`][irmeasures_markov.inference.two_way_anova] (systems × topics, no replication),
  [`tukey_hsd`][irmeasures_markov.inference.tukey_hsd] (randomized or parametric, with effect sizes, intervals and
  grouping letters) and [`topic_set_size`][irmeasures_markov.inference.topic_set_size] (Sakai's design);
* [`discriminative_power`][irmeasures_markov.inference.discriminative_power] and the Bayesian fits per collection of
  `irmeasures_markov.inference._grid`, on the grid engine (local
  processes or Dask, resumable from a store);
* PyTerrier ``pt.Experiment(test=...)`` callables in
  `irmeasures_markov.inference._pyterrier`;
* Bayesian models in `irmeasures_markov.inference._bayes` (the PyMC
  models need the optional extra ``irmeasures-markov[bayes]``; the Gibbs
  sampler of the linear model, `gibbs`, is numpy only).
"""
from irmeasures_markov.inference._bayes import bayesian_linear_model, direct_relevance_model, fit_linear_model
from irmeasures_markov.inference._classic import (
           TESTS,
           PairwiseResult,
           TestResult,
           all_pairs,
           bootstrap_test,
           paired_t_test,
           pairwise,
           randomization_test,
           sign_test,
           wilcoxon_test,
)
from irmeasures_markov.inference._corrections import adjust_pvalues
from irmeasures_markov.inference._grid import discriminative_power, fit_per_collection
from irmeasures_markov.inference._inputs import ScoreMatrix, score_matrix
from irmeasures_markov.inference._multiple import AnovaResult, TukeyResult, topic_set_size, tukey_hsd, two_way_anova
from irmeasures_markov.inference._posterior import SamplingWarning
from irmeasures_markov.inference._pyterrier import pyterrier_test

__all__ = ["ScoreMatrix", "score_matrix", "TestResult", "PairwiseResult", "TESTS", "paired_t_test",
           "wilcoxon_test", "sign_test", "randomization_test", "bootstrap_test", "adjust_pvalues", "all_pairs",
           "pairwise", "discriminative_power"]
__all__ += ["bayesian_linear_model", "direct_relevance_model", "fit_linear_model", "fit_per_collection",
            "SamplingWarning", "pyterrier_test"]
__all__ += ["two_way_anova", "AnovaResult", "tukey_hsd", "TukeyResult", "topic_set_size"]
