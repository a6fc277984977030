"""Result objects of P@H: distributions and stochastic dominance (order 3)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["PHDistribution", "DominanceResult", "compare_distributions"]


@dataclass(frozen=True)
class PHDistribution:
    """Distribution of P@H: support points and their probabilities.

    ``exact=True``: closed form (forward models).  ``exact=False``: empirical
    distribution of ``n_users`` simulated users; ``stderr[k]`` is the Monte Carlo
    standard error $\\sqrt{F(1-F)/n}$ of the CDF at ``support[k]``.
    """
    support: np.ndarray
    probabilities: np.ndarray
    exact: bool
    n_users: int | None = None
    stderr: np.ndarray | None = field(default=None, repr=False)

    @property
    def cdf_values(self) -> np.ndarray:
        return np.minimum(np.cumsum(self.probabilities), 1.0)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """$F(x) = P(P@H \\le x)$.

        Parameters
        ----------
        x : array_like
            The values at which to evaluate the CDF.

        Returns
        -------
        numpy.ndarray
            $F(x)$, with the shape of ``x``.
        """
        c = np.concatenate([[0.0], self.cdf_values])
        return c[np.searchsorted(self.support, np.asarray(x, dtype=np.float64), side="right")]

    def quantile(self, u: ArrayLike) -> np.ndarray:
        """Smallest support point x with $F(x) \\ge u$, for u in [0, 1].

        Parameters
        ----------
        u : array_like
            Probabilities in [0, 1].

        Returns
        -------
        numpy.ndarray
            The quantiles, with the shape of ``u``.

        Raises
        ------
        ValueError
            If a value of ``u`` is outside [0, 1].
        """
        u = np.asarray(u, dtype=np.float64)
        if np.any((u < 0) | (u > 1)):
            raise ValueError("`u` must be in [0, 1].")
        k = np.searchsorted(self.cdf_values, u - 1e-12, side="left")
        return self.support[np.minimum(k, self.support.size - 1)]

    def mean(self) -> float:
        """Expected P@H: $\\sum_k x_k p_k$ over the support points $x_k$.

        Returns
        -------
        float
            The mean of the distribution.
        """
        return float(self.support @ self.probabilities)

    def variance(self) -> float:
        """Variance of P@H: $\\sum_k (x_k - \\mu)^2 p_k$, $\\mu$ the
        [`mean`][irmeasures_markov.measures.stopping_time.PHDistribution.mean].

        Returns
        -------
        float
            The variance of the distribution.
        """
        m = self.mean()
        return float(((self.support - m) ** 2) @ self.probabilities)


@dataclass(frozen=True)
class DominanceResult:
    """First-order stochastic dominance (the paper's order ≤3) between two runs.

    ``relation``: ``'first'`` (the first run's P@H is stochastically larger),
    ``'second'``, ``'equal'`` or ``'incomparable'``; ``crossings``: values x where
    $F_1 - F_2$ changes sign (CDFs cross); ``exact``: both distributions
    exact; ``max_diff``: $\\max_x |F_1(x) - F_2(x)|$.
    """
    relation: str
    crossings: np.ndarray
    exact: bool
    max_diff: float


def compare_distributions(d1: PHDistribution, d2: PHDistribution, z: float = 4.0,
                          atol: float = 1e-12) -> DominanceResult:
    """First-order stochastic dominance between two P@H distributions (see
    [`DominanceResult`][irmeasures_markov.measures.stopping_time.DominanceResult]).

    The CDFs are compared at every support point of either distribution; a
    difference counts only beyond a tolerance: ``atol`` when both are exact,
    else ``atol`` plus ``z`` Monte Carlo standard errors $\\sqrt{F(1-F)/n}$ of
    the simulated distributions.

    Parameters
    ----------
    d1 : PHDistribution
        The first run's distribution.
    d2 : PHDistribution
        The second run's distribution.
    z : float
        Standard errors a difference of simulated CDFs must exceed to count.
    atol : float
        A difference of CDFs within it is a tie (default 1e-12: float noise; ``ph-compare`` gives the one
        tolerance it also applies to the expectations).

    Returns
    -------
    DominanceResult
        The relation, the crossings, whether both are exact, and the largest
        CDF difference.
    """
    xs = np.union1d(d1.support, d2.support)
    F1, F2 = d1.cdf(xs), d2.cdf(xs)
    diff = F1 - F2
    exact = d1.exact and d2.exact
    if exact:
        tol = np.full(xs.shape, atol)
    else:
        var = np.zeros(xs.shape)
        for d, F in ((d1, F1), (d2, F2)):
            if not d.exact:
                var += F * (1 - F) / d.n_users
        tol = z * np.sqrt(var) + atol
    sign = np.where(diff > tol, 1, np.where(diff < -tol, -1, 0))
    nz = np.flatnonzero(sign)
    crossings = [xs[b - 1] if b - 1 > a else xs[a] for a, b in zip(nz[:-1], nz[1:]) if sign[a] != sign[b]]
    pos, neg = np.any(sign > 0), np.any(sign < 0)
    # F1 >= F2 everywhere: run 1 is stochastically smaller
    relation = "incomparable" if (pos and neg) else "second" if pos else "first" if neg else "equal"
    return DominanceResult(relation, np.asarray(crossings, dtype=np.float64), exact,
                           float(np.max(np.abs(diff))) if diff.size else 0.0)
