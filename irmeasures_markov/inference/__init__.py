"""Inference about systems from per-topic scores: classic tests and Bayesian models (Carterette 2011).

* :func:`score_matrix` — per-query results (ir_measures, PyTerrier, our
  evaluator, arrays) to a topics × systems matrix, with clear errors;
* classic paired tests with their model assumptions stated:
  :func:`paired_t_test`, :func:`wilcoxon_test`, :func:`sign_test`,
  :func:`randomization_test`, :func:`bootstrap_test`; :func:`all_pairs` and
  :func:`pairwise` with Holm/Bonferroni/Benjamini–Hochberg correction;
* :func:`discriminative_power` and the Bayesian fits per collection of
  :mod:`irmeasures_markov.inference.grid`, on the grid engine (local
  processes or Dask, resumable from a store);
* PyTerrier ``pt.Experiment(test=...)`` callables in
  :mod:`irmeasures_markov.inference.pyterrier`;
* Bayesian models in :mod:`irmeasures_markov.inference.bayes` (the PyMC
  models need the optional extra ``irmeasures-markov[bayes]``; the Gibbs
  sampler of the linear model, :mod:`.gibbs`, is numpy only).
"""
from .classic import (
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
from .corrections import adjust_pvalues
from .grid import discriminative_power
from .inputs import ScoreMatrix, score_matrix

__all__ = ["ScoreMatrix", "score_matrix", "TestResult", "PairwiseResult", "TESTS", "paired_t_test",
           "wilcoxon_test", "sign_test", "randomization_test", "bootstrap_test", "adjust_pvalues", "all_pairs",
           "pairwise", "discriminative_power"]
