"""The studentized range distribution, vectorised over the statistic (for Tukey's HSD over many pairs).

scipy's ``studentized_range`` integrates numerically value by value (tens of milliseconds each); the thousands of
pairs of a hundred runs need one vectorised pass, built here on a spline of the range's distribution.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from irmeasures_markov._util._lazy import lazy_module

# imported at the first use, so that importing the package does not load scipy
stats = lazy_module("scipy.stats")
special = lazy_module("scipy.special")
interpolate = lazy_module("scipy.interpolate")
optimize = lazy_module("scipy.optimize")

__all__ = ["studentized_range_sf", "studentized_range_ppf"]


@functools.lru_cache(maxsize=16)
def _range_cdf_spline(k: int):
    """Spline of the CDF of the range of k standard normals on w ∈ [0, 40],
    $P(W \\le w) = k\\int\\varphi(z)[\\Phi(z)-\\Phi(z-w)]^{k-1}dz$ (trapezoid rule in z: exponentially
    accurate for this smooth, fast-decaying integrand)."""
    z = np.linspace(-12.0, 12.0, 961)
    w = np.linspace(0.0, 40.0, 1601)
    phi = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = np.empty_like(w)
    big = special.ndtr(z)
    for s in range(0, w.size, 500):  # 500 × 2401 floats at a time
        diff = big - special.ndtr(z - w[s:s + 500, None])
        with np.errstate(divide="ignore"):
            integrand = phi * np.exp((k - 1) * np.log(np.maximum(diff, 0.0)))
        cdf[s:s + 500] = k * np.trapezoid(integrand, z, axis=1)
    cdf[0] = 0.0
    return interpolate.CubicSpline(w, np.clip(cdf, 0.0, 1.0))


@functools.lru_cache(maxsize=16)
def _scale_nodes(df: float):
    """Nodes and weights of $s = \\sqrt{\\chi^2_\\nu/\\nu}$ on a grid of log s (trapezoid: the density of log s is
    smooth and decays at both ends)."""
    lo = 0.5 * math.log(stats.chi2.ppf(1e-16, df) / df)
    hi = 0.5 * math.log(stats.chi2.isf(1e-16, df) / df)
    x = np.linspace(lo, hi, 801)
    v = df * np.exp(2 * x)
    logpdf = stats.chi2.logpdf(v, df) + np.log(2 * v)  # density of x = log s
    w = np.exp(logpdf) * (x[1] - x[0])
    w[[0, -1]] *= 0.5
    return np.exp(x), w / w.sum()


def studentized_range_sf(q: Any, k: int, df: float) -> np.ndarray:
    """Survival function of the studentized range of ``k`` means with ``df`` degrees of freedom, vectorised.

    $P(Q > q) = 1 - \\int_0^\\infty P(W \\le q s)\\, f_\\nu(s)\\, ds$ with W the range of k standard normals and
    $s = \\sqrt{\\chi^2_\\nu/\\nu}$.  scipy's ``studentized_range.sf`` gives the same values (to about 1e-9) but takes
    tens of milliseconds per value, too slow for the thousands of pairs of many runs.

    Parameters
    ----------
    q : array_like
        Statistics (≥ 0).
    k : int
        Number of means (≥ 2).
    df : float
        Degrees of freedom of the variance estimate (> 0).

    Returns
    -------
    numpy.ndarray
    """
    q = np.asarray(q, dtype=np.float64)
    spline = _range_cdf_spline(int(k))
    s, w = _scale_nodes(float(df))
    flat = q.reshape(-1)
    out = np.empty(flat.size)
    for i in range(0, flat.size, 2048):
        arg = flat[i:i + 2048, None] * s
        cdf = np.where(arg >= 40.0, 1.0, spline(np.minimum(arg, 40.0))) @ w
        out[i:i + 2048] = 1.0 - cdf
    out = np.where(np.isinf(flat), 0.0, np.clip(out, 0.0, 1.0))
    return out.reshape(q.shape)


def studentized_range_ppf(level: float, k: int, df: float) -> float:
    """The ``level`` quantile of the studentized range of ``k`` means with ``df`` degrees of freedom."""
    return float(optimize.brentq(lambda x: 1.0 - studentized_range_sf(x, k, df) - level, 0.0, 200.0, xtol=1e-10))
