"""Monte Carlo means that stop once their standard error is small enough, and counts of arrangements."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irmeasures_markov._util._lazy import lazy_module

__all__ = ["mean_until_se", "log_choose"]

#: imported at first use: ``import irmeasures_markov`` stays cheap
_special = lazy_module("scipy.special")


def mean_until_se(draw: Callable[[int], np.ndarray], first: int, target_se: float,
                  max_samples: int) -> tuple[float, float]:
    """The mean of draws, drawn until its standard error is below ``target_se`` (or ``max_samples`` are drawn).

    After ``first`` draws, the sample's standard deviation says how many
    draws the target needs; they are drawn, and the check is repeated until
    the standard error is below the target.

    Parameters
    ----------
    draw : callable
        ``draw(n)`` returns ``n`` new independent values.
    first : int
        Draws before the first check (at least 2).
    target_se : float
        The standard error to reach.
    max_samples : int
        The most draws made.

    Returns
    -------
    mean : float
    se : float
        Its standard error, ``std(ddof=1) / sqrt(n)``.
    """
    samples = np.asarray(draw(first), dtype=np.float64)
    while True:
        sd = float(np.std(samples, ddof=1))
        se = sd / np.sqrt(samples.size)
        if se < target_se or samples.size >= max_samples:
            return float(samples.mean()), se
        wanted = min(max_samples, int(np.ceil((sd / target_se) ** 2 * 1.05)) + 1)
        more = max(1, min(wanted - samples.size, 1 << 14))
        samples = np.concatenate([samples, np.asarray(draw(more), dtype=np.float64)])


def log_choose(n: np.ndarray | float, k: np.ndarray | float) -> np.ndarray:
    """``log C(n, k)`` for ``0 <= k <= n`` (float64, elementwise).

    Parameters
    ----------
    n : array_like
        Counts.
    k : array_like
        Counts.

    Returns
    -------
    numpy.ndarray
    """
    gammaln = _special.gammaln
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
