"""Inference about systems from per-topic scores: classic tests and Bayesian models (Carterette 2011).

* :func:`score_matrix` — per-query results (ir_measures, PyTerrier, our
  evaluator, arrays) to a topics × systems matrix, with clear errors;
* classic paired tests with their model assumptions stated:
  :func:`paired_t_test`, :func:`wilcoxon_test`, :func:`sign_test`,
  :func:`randomization_test`, :func:`bootstrap_test`; :func:`all_pairs` and
  :func:`pairwise` with Holm/Bonferroni/Benjamini–Hochberg correction;
  :func:`discriminative_power`;
* PyTerrier ``pt.Experiment(test=...)`` callables in
  :mod:`irmeasures_markov.inference.pyterrier`;
* Bayesian models (PyMC, optional extra ``irmeasures-markov[bayes]``) in
  :mod:`irmeasures_markov.inference.bayes`.
"""
from .classic import (TESTS, PairwiseResult, TestResult, adjust_pvalues, all_pairs, bootstrap_test,
                      discriminative_power, paired_t_test, pairwise, randomization_test, sign_test, wilcoxon_test)
from .inputs import ScoreMatrix, score_matrix

__all__ = ["ScoreMatrix", "score_matrix", "TestResult", "PairwiseResult", "TESTS", "paired_t_test",
           "wilcoxon_test", "sign_test", "randomization_test", "bootstrap_test", "adjust_pvalues", "all_pairs", "pairwise",
           "discriminative_power"]
