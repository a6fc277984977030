"""The paired test of one measure over a list of pairs: the one rule [`compare`][irmeasures_markov.comparison.compare]
and the sensitivity report share.

`pair_tests` dispatches on the comparison's test (the classic tests of
`irmeasures_markov.inference._classic`, Carterette's Bayesian linear
model, Tukey's HSD of `irmeasures_markov.inference._multiple`, or none) and returns the statistic, the
p-values and the corrected p-values of every pair, A − B.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov.inference._classic import pairwise, standardised
from irmeasures_markov.inference._gibbs import bayes_pair_tests
from irmeasures_markov.inference._multiple import tukey_from_matrix

__all__ = ["effect_size", "pair_tests", "tukey_pairs", "TUKEY_TESTS"]

#: compare()'s Tukey tests and the method of each
TUKEY_TESTS = {"tukey": "randomized", "anova": "parametric"}


def tukey_pairs(result, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Statistic, p-value and corrected p-value (the same: family-wise already) of the pairs ``(a[k], b[k])``
    (either order) from a ``TukeyResult`` of every pair, as `pair_tests` gives them."""
    m = len(result.systems)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    k = lo * m - lo * (lo + 1) // 2 + (hi - lo - 1)  # the position of (lo, hi) in combinations(range(m), 2)
    return result.statistic[k], result.pvalue[k], result.pvalue[k]


def pair_tests(values: np.ndarray, a: np.ndarray, b: np.ndarray, *, test: str, correction: str, alternative: str,
               n_resamples: int, seed: int | None, progress: bool | None, bayes_draws: int = 2000,
               bayes_chains: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Test the pairs ``(a[k], b[k])`` of the columns of ``values`` (topics × systems), A − B each.

    Parameters
    ----------
    values : numpy.ndarray
        Per-topic values, topics × systems.
    a : numpy.ndarray
        Column indices of the pairs.
    b : numpy.ndarray
        Column indices of the pairs.
    test : str
        One of [`COMPARE_TESTS`][irmeasures_markov.comparison.COMPARE_TESTS].
    correction : str
        A correction name (``'none'`` for ``'bayes'`` and ``'none'``), over these pairs.
    alternative, n_resamples, seed, progress, bayes_draws, bayes_chains
        As for [`compare`][irmeasures_markov.comparison.compare].

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        Statistic, p-value and corrected p-value of each pair (NaN for ``test='none'``).
    """
    if test == "none":
        nan = np.full(len(a), np.nan)
        return nan, nan, nan
    if test == "bayes":  # the statistic: the posterior P(β_A > β_B) of the joint linear model
        p_ab, p = bayes_pair_tests(values, a, b, alternative, draws=bayes_draws, chains=bayes_chains, seed=seed,
                                   progress=progress)
        return p_ab, p, p.copy()
    if test in TUKEY_TESTS:  # family-wise over every pair of the columns given: no correction
        result = tukey_from_matrix(values, [str(j) for j in range(values.shape[1])], TUKEY_TESTS[test], 0.95,
                                   int(n_resamples), seed, "auto")
        return tukey_pairs(result, a, b)
    res = pairwise(values, list(zip(a.tolist(), b.tolist())), test, alternative=alternative,
                   correction=None if correction == "none" else correction, n_resamples=n_resamples,
                   seed=seed, progress=progress)
    return res.statistic, res.pvalue, res.adjusted_pvalue


def effect_size(d: ArrayLike) -> np.ndarray:
    """Cohen's d_z of paired differences: ``mean(d) / std(d, ddof=1)`` along axis 0 (topics).

    Parameters
    ----------
    d : array_like
        Paired differences, topics along axis 0.

    Returns
    -------
    numpy.ndarray
        d_z per column: 0 when all differences are 0, ±inf when they are all equal and non-zero, NaN
        with fewer than 2 topics (no standard deviation to divide by).
    """
    d = np.asarray(d, dtype=np.float64)
    mean = d.mean(axis=0)
    if d.shape[0] < 2:
        return np.full_like(mean, np.nan)
    return standardised(mean, d.std(axis=0, ddof=1))
