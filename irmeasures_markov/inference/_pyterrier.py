r"""Our tests as PyTerrier significance tests: ``pt.Experiment(..., baseline=0, test=pyterrier_test(...))``.

PyTerrier (1.x) calls ``test(system_scores, baseline_scores)`` with the
per-topic values of one measure (the topics in the baseline's order) and
reads element ``[1]`` of the result as the p-value, as with
``scipy.stats.ttest_rel``.  [`pyterrier_test`][irmeasures_markov.inference.pyterrier_test] returns such a callable;
its result is a `PyTerrierTestResult` ``(statistic, pvalue)``, so A is
the system and B the baseline:

* ``'randomization'``, ``'bootstrap'``, ``'t'``, ``'wilcoxon'``, ``'sign'`` —
  the tests of `irmeasures_markov.inference._classic` (seeded: the same
  call gives the same p-value);
* ``'bayes'`` — Carterette's linear model fitted to the two systems
  (`gibbs_linear_model`, numpy
  only); ``statistic`` is $P(\beta_A > \beta_B \mid y)$ and ``pvalue``
  the two-sided tail $2\min(P(\beta_A > \beta_B), P(\beta_A < \beta_B))$
  (``alternative='greater'``: $P(\beta_A \le \beta_B)$).  PyTerrier puts
  it in its ``p-value`` column; its ``correction=`` then treats it as a p-value.

Example::

    import pyterrier as pt
    from irmeasures_markov.inference._pyterrier import pyterrier_test
    pt.Experiment([bm25, monot5], topics, qrels, eval_metrics=["map", MP], baseline=0,
                  test=pyterrier_test("randomization", n_resamples=10000))
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from irmeasures_markov.inference._classic import ALTERNATIVES, TESTS
from irmeasures_markov.inference._gibbs import bayes_pair_tests
from irmeasures_markov.inference._inputs import check_choice

__all__ = ["PyTerrierTestResult", "pyterrier_test", "PYTERRIER_TESTS"]

PYTERRIER_TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "bayes")


class PyTerrierTestResult(NamedTuple):
    """``(statistic, pvalue)``: PyTerrier reads ``result[1]``."""
    statistic: float
    pvalue: float


def pyterrier_test(test: str = "randomization", *, alternative: str = "two-sided", n_resamples: int = 10000,
                   seed: int | None = 0, draws: int = 2000,
                   chains: int = 4) -> Callable[[Sequence[float], Sequence[float]], PyTerrierTestResult]:
    """A callable ``f(system_scores, baseline_scores) -> PyTerrierTestResult`` for ``pt.Experiment(test=f)``.

    Parameters
    ----------
    test : {'randomization', 'bootstrap', 't', 'wilcoxon', 'sign', 'bayes'}
    alternative : {'two-sided', 'greater', 'less'}
        About system − baseline.
    n_resamples, seed
        Resamples of the randomization and bootstrap tests; ``seed`` also seeds the Gibbs sampler.
    draws, chains
        Gibbs draws per chain (after as many tuning steps) and chains, for ``'bayes'``.

    Returns
    -------
    callable
        ``f(system_scores, baseline_scores)``: the per-topic scores of both, in the same topic order.

    Raises
    ------
    ValueError
        An unknown test or alternative, or a count that is not a positive integer.
    """
    check_choice("test", test, PYTERRIER_TESTS)
    check_choice("alternative", alternative, ALTERNATIVES)
    if int(n_resamples) < 1 or int(draws) < 1 or int(chains) < 1:
        raise ValueError("`n_resamples`, `draws` and `chains` must be positive integers.")

    if test == "bayes":
        def f(system, baseline):
            y = np.column_stack([np.asarray(system, dtype=np.float64), np.asarray(baseline, dtype=np.float64)])
            p_ab, p = bayes_pair_tests(y, [0], [1], alternative, draws=draws, chains=chains, seed=seed, progress=False)
            return PyTerrierTestResult(float(p_ab[0]), float(p[0]))
    else:
        fn = TESTS[test]
        extra = {"n_resamples": int(n_resamples), "seed": seed} if test in ("randomization", "bootstrap") else {}

        def f(system, baseline):
            res = fn(system, baseline, alternative, **extra)
            return PyTerrierTestResult(res.statistic, res.pvalue)

    f.__name__ = f"pyterrier_test_{test}"
    f.__qualname__ = f.__name__
    f.__doc__ = f"{test} test of system vs baseline ({alternative}) for pt.Experiment(test=...)."
    return f
