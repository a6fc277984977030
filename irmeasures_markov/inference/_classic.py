r"""Classic significance tests on paired per-topic scores, with their models stated.

Every test compares two systems A and B on the same n topics through the differences d_i = y_iA − y_iB.  ``alternative``
is about A − B: ``'two-sided'``, ``'greater'`` (A better) or ``'less'``.

The model behind each test (Carterette 2011, §2.2):

* **paired t-test** — the linear model y_ij = μ + β_j + α_i + ε_ij with
  ε_ij ~ N(0, σ²) i.i.d.: normal, homoskedastic, additive errors and
  independent topics.  The statistic is d̄ / (s_d/√n) with n − 1 degrees of freedom.
* **Wilcoxon signed-rank** — d_i independent and symmetric about their median;
  ranks of |d_i| replace the values (scipy.stats.wilcoxon, zero differences dropped).
* **sign test** — only the signs of d_i; P(d_i > 0) = 1/2 under H0 (ties dropped),
  a binomial test.
* **randomization (permutation) test** — exchangeability of the two systems'
  scores within each topic: under H0 every sign pattern of the d_i is equally likely; the statistic is d̄.  Exact (all
  2^n patterns) when 2^n ≤ ``n_resamples``, else ``n_resamples`` seeded random patterns.
* **bootstrap test** — topics are an i.i.d. sample; the null distribution of d̄
  is approximated by resampling the centred differences d_i − d̄ with replacement (``n_resamples`` seeded resamples).

Randomization and bootstrap p-values are (count + 1) / (resamples + 1) for the random versions, which never reports an
impossible p = 0; the exact enumeration reports the exact proportion.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov.inference._corrections import CORRECTIONS, adjust_pvalues
from irmeasures_markov.inference._inputs import ScoresLike, check_choice, score_matrix

if TYPE_CHECKING:
    import pandas as pd

# imported at the first test, so that importing the package does not load scipy.stats
stats = lazy_module("scipy.stats")

__all__ = ["TestResult", "TESTS", "paired_t_test", "wilcoxon_test", "sign_test", "randomization_test",
           "bootstrap_test", "PairwiseResult", "all_pairs", "pairwise", "standardised"]

ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass
class TestResult:
    """Outcome of one paired test of A against B."""
    test: str
    statistic: float
    pvalue: float
    mean_difference: float
    n_topics: int
    alternative: str
    n_resamples: int | None = None
    exact: bool | None = None


def _differences(a, b, alternative):
    """A − B per topic, after checking both score vectors and ``alternative``."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired tests need the same topics for both systems: {a.size} vs {b.size} scores")
    if a.size < 2:
        raise ValueError(f"paired tests need at least 2 topics, got {a.size}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite numbers (NaN or inf found)")
    check_choice("alternative", alternative, ALTERNATIVES)
    return a - b


def standardised(x, by):
    """``x / by`` elementwise, where ``by`` = 0 gives 0 for x = 0 and ±inf otherwise rather than NaN: the rule of
    the t statistic d̄ / (s_d/√n) and of every effect size when all the differences are equal."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(by > 0, x / np.where(by > 0, by, 1.0), np.where(x == 0, 0.0, np.sign(x) * np.inf))


def _t_pvalue(t, df, alternative):
    if alternative == "two-sided":
        return 2 * stats.t.sf(np.abs(t), df)
    return stats.t.sf(t, df) if alternative == "greater" else stats.t.cdf(t, df)


def paired_t_test(a: ArrayLike, b: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """Paired t-test of A − B (the linear model y_ij = μ + β_j + α_i + ε_ij, ε ~ N(0, σ²)).

    Differences that are all equal have no variance estimate; rather than scipy's NaN this returns t = 0, p = 1 when
    they are all 0 (no evidence of a difference) and t = ±inf, p = 0 (two-sided) otherwise (every topic moves the same
    way by the same amount).

    Parameters
    ----------
    a : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    b : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    alternative : {'two-sided', 'greater', 'less'}
        About A − B ('greater': A better).

    Returns
    -------
    TestResult

    Raises
    ------
    ValueError
        Scores of different lengths, fewer than 2 topics, a value that is not finite, or an unknown ``alternative``.
    """
    d = _differences(a, b, alternative)
    mean = d.mean()
    t = standardised(mean, d.std(ddof=1) / np.sqrt(d.size))
    return TestResult("t", float(t), float(min(1.0, _t_pvalue(t, d.size - 1, alternative))), float(mean), d.size,
                      alternative)


def wilcoxon_test(a: ArrayLike, b: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """Wilcoxon signed-rank test (differences symmetric about their median; zero differences dropped).

    Parameters
    ----------
    a : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    b : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    alternative : {'two-sided', 'greater', 'less'}
        About A − B ('greater': A better).

    Returns
    -------
    TestResult

    Raises
    ------
    ValueError
        Scores of different lengths, fewer than 2 topics, a value that is not finite, or an unknown ``alternative``.
    """
    d = _differences(a, b, alternative)
    if np.all(d == 0):
        return TestResult("wilcoxon", 0.0, 1.0, 0.0, d.size, alternative)
    r = stats.wilcoxon(d, alternative=alternative)
    return TestResult("wilcoxon", float(r.statistic), float(r.pvalue), float(d.mean()), d.size, alternative)


def sign_test(a: ArrayLike, b: ArrayLike, alternative: str = "two-sided") -> TestResult:
    """Sign test: the number of topics where A > B is Binomial(m, 1/2) under H0 (m = non-tied topics).

    Parameters
    ----------
    a : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    b : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    alternative : {'two-sided', 'greater', 'less'}
        About A − B ('greater': A better).

    Returns
    -------
    TestResult

    Raises
    ------
    ValueError
        Scores of different lengths, fewer than 2 topics, a value that is not finite, or an unknown ``alternative``.
    """
    d = _differences(a, b, alternative)
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    m = wins + losses
    p = 1.0 if m == 0 else stats.binomtest(wins, m, 0.5, alternative=alternative).pvalue
    return TestResult("sign", float(wins), float(p), float(d.mean()), d.size, alternative)


def _pvalue_from_null(obs, null, alternative, exact):
    """p-value of ``obs`` against null draws (rows: draws; columns: pairs); a relative tolerance
    keeps draws equal to the observation (up to rounding) counted as 'as extreme'."""
    tol = 1e-12 * np.maximum(1.0, np.abs(obs))
    if alternative == "two-sided":
        hits = np.sum(np.abs(null) >= np.abs(obs) - tol, axis=0)
    elif alternative == "greater":
        hits = np.sum(null >= obs - tol, axis=0)
    else:
        hits = np.sum(null <= obs + tol, axis=0)
    b = null.shape[0]
    return hits / b if exact else (hits + 1) / (b + 1)


def _null_weights(test, n, n_resamples, rng):
    """(weights, exact): resample counts of the bootstrap test, or sign patterns of the randomization test
    (every one of the 2^n when there are no more than ``n_resamples``)."""
    if test == "bootstrap":
        return rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(np.float64), False
    if n <= 20 and 2 ** n <= n_resamples:
        codes = np.arange(2 ** n, dtype=np.int64)
        bits = (codes[:, None] >> np.arange(n)) & 1
        return 1.0 - 2.0 * bits, True
    return rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n)), False


def _resampling_test(test, a, b, alternative, n_resamples, seed):
    """One pair's randomization or bootstrap test: d̄ against d (bootstrap: d − d̄) under the null weights."""
    d = _differences(a, b, alternative)
    weights, exact = _null_weights(test, d.size, int(n_resamples), np.random.default_rng(seed))
    null = weights @ (d if test == "randomization" else d - d.mean()) / d.size
    p = float(_pvalue_from_null(np.array([d.mean()]), null[:, None], alternative, exact)[0])
    return TestResult(test, float(d.mean()), p, float(d.mean()), d.size, alternative,
                      n_resamples=weights.shape[0], exact=exact)


def randomization_test(a: ArrayLike, b: ArrayLike, alternative: str = "two-sided", n_resamples: int = 10000,
                       seed: int | None = 0) -> TestResult:
    """Paired randomization test on the mean difference (exchangeability within topics).

    Parameters
    ----------
    a : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    b : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    alternative : {'two-sided', 'greater', 'less'}
        About A − B ('greater': A better).
    n_resamples : int
        Random sign patterns / bootstrap resamples.
    seed : int or None
        Seed of the resampling.

    Returns
    -------
    TestResult

    Raises
    ------
    ValueError
        Scores of different lengths, fewer than 2 topics, a value that is not finite, or an unknown ``alternative``.
    """
    return _resampling_test("randomization", a, b, alternative, n_resamples, seed)


def bootstrap_test(a: ArrayLike, b: ArrayLike, alternative: str = "two-sided", n_resamples: int = 10000,
                   seed: int | None = 0) -> TestResult:
    """Paired bootstrap test: resample the centred differences with replacement.

    Model: topics are i.i.d. draws from a population and the per-topic differences d_i = y_iA − y_iB follow the linear
    model with errors drawn from their empirical distribution; under H0 the mean difference is 0, so the null
    distribution of d̄ is that of the resampled *centred* differences. p = (count + 1) / (n_resamples + 1).

    Parameters
    ----------
    a : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    b : array_like
        Per-topic scores of systems A and B, in the same topic order (at least 2 topics, finite).
    alternative : {'two-sided', 'greater', 'less'}
        About A − B ('greater': A better).
    n_resamples : int
        Random sign patterns / bootstrap resamples.
    seed : int or None
        Seed of the resampling.

    Returns
    -------
    TestResult

    Raises
    ------
    ValueError
        Scores of different lengths, fewer than 2 topics, a value that is not finite, or an unknown ``alternative``.
    """
    return _resampling_test("bootstrap", a, b, alternative, n_resamples, seed)


TESTS = {"t": paired_t_test, "wilcoxon": wilcoxon_test, "sign": sign_test,
         "randomization": randomization_test, "bootstrap": bootstrap_test}


@dataclass
class PairwiseResult:
    """All-pairs comparisons: ``pvalue[k]`` tests ``systems[a[k]]`` against ``systems[b[k]]``."""
    systems: list[str]
    a: np.ndarray
    b: np.ndarray
    mean_difference: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    adjusted_pvalue: np.ndarray
    test: str
    alternative: str
    correction: str | None

    def significant(self, alpha: float = 0.05) -> np.ndarray:
        """True for each pair whose adjusted p-value is below ``alpha``.

        Parameters
        ----------
        alpha : float
            significance level.

        Returns
        -------
        numpy.ndarray
            boolean array, one entry per pair.
        """
        return self.adjusted_pvalue < alpha

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: ``system_a, system_b, mean_difference, statistic, pvalue, adjusted_pvalue``.

        Returns
        -------
        pandas.DataFrame
            the pairwise results, one row per pair.
        """
        import pandas as pd
        return pd.DataFrame({"system_a": [self.systems[i] for i in self.a],
                             "system_b": [self.systems[i] for i in self.b],
                             "mean_difference": self.mean_difference, "statistic": self.statistic,
                             "pvalue": self.pvalue, "adjusted_pvalue": self.adjusted_pvalue})


def _vectorised_pairs(diffs, test, alternative, n_resamples, seed, chunk):
    """Statistic and p-values of randomization/bootstrap/t for every column of ``diffs`` (topics × pairs)."""
    n, k = diffs.shape
    mean = diffs.mean(axis=0)
    if test == "t":
        t = standardised(mean, diffs.std(axis=0, ddof=1) / np.sqrt(n))
        return t, np.minimum(_t_pvalue(t, n - 1, alternative), 1.0)
    weights, exact = _null_weights(test, n, int(n_resamples), np.random.default_rng(seed))
    centred = diffs if test == "randomization" else diffs - mean
    p = np.empty(k)
    for s in range(0, k, chunk):
        null = weights @ centred[:, s:s + chunk] / n
        p[s:s + chunk] = _pvalue_from_null(mean[s:s + chunk], null, alternative, exact)
    return mean, p


def all_pairs(scores: ScoresLike, test: str = "t", *, measure: Any = None, alternative: str = "two-sided",
              correction: str | None = "holm", n_resamples: int = 10000, seed: int | None = 0,
              chunk: int = 512, progress: bool | None = None) -> PairwiseResult:
    """Test every pair of systems (j < k) and correct for multiple comparisons.

    The same seeded sign patterns / bootstrap resamples serve every pair, so the t, randomization and bootstrap tests
    run as matrix products over all pairs at once (``chunk`` pairs at a time).

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems (anything `score_matrix` takes).
    test : {'t', 'wilcoxon', 'sign', 'randomization', 'bootstrap'}
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.
    alternative : {'two-sided', 'greater', 'less'}
        About A − B.
    correction : {'holm', 'bonferroni', 'fdr_bh', 'none'} or None
        Over the pairs tested.
    n_resamples, seed
        Resamples of the randomization and bootstrap tests and their seed.
    chunk : int
        Pairs per matrix product.
    progress : bool or None
        A progress bar on standard error (None: only when it is a terminal).

    Returns
    -------
    PairwiseResult

    Raises
    ------
    ValueError
        An unknown test, alternative or correction, fewer than 2 systems, or scores
        `score_matrix` refuses.
    """
    sm = score_matrix(scores, measure)
    if sm.n_systems < 2:
        raise ValueError("all_pairs needs at least 2 systems")
    return pairwise(sm, list(combinations(range(sm.n_systems), 2)), test, alternative=alternative,
                    correction=correction, n_resamples=n_resamples, seed=seed, chunk=chunk, progress=progress)


def pairwise(scores: ScoresLike, pairs: Sequence[tuple[int | str, int | str]], test: str = "t", *,
             measure: Any = None, alternative: str = "two-sided",
             correction: str | None = "holm", n_resamples: int = 10000, seed: int | None = 0,
             chunk: int = 512, progress: bool | None = None) -> PairwiseResult:
    """Test the given pairs of systems, ``pairs = [(a, b), ...]`` (names or column indices), A − B each.

    The correction runs over these pairs only (e.g. every run against one baseline).  A pair's p-value does not depend
    on the other pairs: the randomization and bootstrap tests draw the same seeded sign patterns / resamples for every
    pair, so a pair tested here has the p-value [`all_pairs`][irmeasures_markov.inference.all_pairs] gives it (before
    correction) with the same ``seed``.

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems (anything `score_matrix` takes).
    pairs : sequence of (a, b)
        System names or column indices; each pair is tested as A − B.
    test : {'t', 'wilcoxon', 'sign', 'randomization', 'bootstrap'}
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.
    alternative : {'two-sided', 'greater', 'less'}
        About A − B.
    correction : {'holm', 'bonferroni', 'fdr_bh', 'none'} or None
        Over the pairs tested.
    n_resamples, seed
        Resamples of the randomization and bootstrap tests and their seed.
    chunk : int
        Pairs per matrix product.
    progress : bool or None
        A progress bar on standard error (None: only when it is a terminal).

    Returns
    -------
    PairwiseResult

    Raises
    ------
    ValueError
        An unknown test, alternative or correction, fewer than 2 systems, or scores
        `score_matrix` refuses.
    """
    sm = score_matrix(scores, measure)
    check_choice("alternative", alternative, ALTERNATIVES)
    check_choice("test", test, list(TESTS))
    check_choice("correction", correction, (*CORRECTIONS, None))
    index = {name: j for j, name in enumerate(sm.systems)}

    def position(x):
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            if not 0 <= x < sm.n_systems:
                raise ValueError(f"system index {x} out of range: there are {sm.n_systems} systems")
            return int(x)
        if str(x) not in index:
            raise ValueError(f"no system {x!r}; systems: {sm.systems[:10]}")
        return index[str(x)]

    pairs = [(position(x), position(y)) for x, y in pairs]
    if not pairs:
        raise ValueError("no pairs to test")
    same = [sm.systems[x] for x, y in pairs if x == y]
    if same:
        raise ValueError(f"a system cannot be tested against itself: {same[:5]}")
    a, b = np.array(pairs, dtype=np.int64).T
    diffs = sm.values[:, a] - sm.values[:, b]
    if test in ("t", "randomization", "bootstrap"):
        stat, p = _vectorised_pairs(diffs, test, alternative, n_resamples, seed, chunk)
    else:
        it = progress_bar(range(a.size), progress, desc=f"{test} tests", unit="pair")
        res = [TESTS[test](sm.values[:, a[k]], sm.values[:, b[k]], alternative) for k in it]
        stat = np.array([r.statistic for r in res])
        p = np.array([r.pvalue for r in res])
    return PairwiseResult(sm.systems, a, b, diffs.mean(axis=0), stat, p, adjust_pvalues(p, correction), test,
                          alternative, correction)
