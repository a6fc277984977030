r"""Maximum likelihood on grouped sessions, and intervals by resampling sessions.

Every family module reduces a log to *patterns*: identical sessions (as the
family's likelihood sees them) are one pattern with a count, so a likelihood
evaluation costs the number of distinct patterns, not the number of sessions
(the 35,064 Yandex training sessions are 2,585 distinct click sequences).

A candidate model is a function ``loglik(theta) -> (U,)`` giving the
log-likelihood of one session of each pattern at the unconstrained parameter
vector ``theta``; the total is ``counts @ loglik(theta)``.

Intervals.  Resampling sessions with replacement is a multinomial draw of
pattern counts with probabilities ``counts / n``.  Re-fitting every replicate
is replaced by one Newton step from the full-data estimate (the linearised
bootstrap): $\theta^*_b = \hat\theta + H^{-1} g_b$, with
$g_b = \sum_u w_{bu} s_u$ the replicate's score at $\hat\theta$
($s_u$ the score of one session of pattern u) and $H$ the observed
information.  Its variance is the session-clustered sandwich
$H^{-1}(\sum_u c_u s_u s_u^\top)H^{-1}$, which stays valid when events
within a session are dependent; ``bootstrap=0`` gives that Wald interval
directly.  Both are computed on the unconstrained scale (logit, log) and
mapped back, so an interval never leaves the parameter space.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from irmeasures_markov._util._lazy import lazy_module

optimize = lazy_module("scipy.optimize")


class PatternData(Protocol):
    """What `fit_candidate` reads of a family's prepared data (``WalkData``, ``MPData``)."""

    counts: np.ndarray   # (U,) sessions of each pattern
    n_events: int        # observations the likelihood counts


def group_patterns(keys: Sequence[Hashable]) -> tuple[list, np.ndarray, np.ndarray]:
    """Group identical keys into patterns.

    Parameters
    ----------
    keys : sequence of hashable
        One key per session (what the family's likelihood sees of it).

    Returns
    -------
    patterns : list
        The distinct keys, in first-seen order.
    counts : ndarray of float64
        Sessions of each pattern.
    inverse : ndarray of int64
        Each input's pattern index.
    """
    index: dict[object, int] = {}
    inverse = np.fromiter((index.setdefault(k, len(index)) for k in keys), dtype=np.int64, count=len(keys))
    counts = np.bincount(inverse, minlength=len(index)).astype(np.float64)
    return list(index), counts, inverse


@dataclass
class Estimate:
    """A maximum-likelihood fit on the unconstrained scale, with its sandwich covariance and bootstrap draws."""

    theta: np.ndarray            # unconstrained estimate
    loglik: float                # counts @ loglik(theta)
    cov: np.ndarray | None    # sandwich covariance of theta (None when k == 0)
    draws: np.ndarray | None  # (B, k) linearised bootstrap replicates of theta


def maximise(loglik: Callable[[np.ndarray], np.ndarray], counts: np.ndarray, x0: Sequence[float],
             *, grad: Callable | None = None, penalty: Callable | None = None) -> tuple[np.ndarray, float]:
    """``argmax counts @ loglik(theta) - penalty(theta)`` by L-BFGS-B (numerical gradient unless given).

    Returns the estimate and its unpenalised log-likelihood."""
    x0 = np.asarray(x0, dtype=np.float64)
    if x0.size == 0:
        return x0, float(counts @ loglik(x0))
    scale = max(float(counts.sum()), 1.0)

    def f(x):
        v = float(counts @ loglik(x)) - (penalty(x) if penalty is not None else 0.0)
        return -v / scale if np.isfinite(v) else 1e300

    if x0.size == 1 and grad is None:
        # one parameter: Brent's method from a bracket found downhill of x0 (fewer evaluations than
        # L-BFGS with a numerical gradient); a bounded search when no bracket exists (flat or monotone)
        def g(t):
            return f(np.array([t]))

        try:
            r = optimize.minimize_scalar(g, bracket=(x0[0] - 0.5, x0[0] + 0.5), tol=1e-6)
        except (ValueError, RuntimeError):
            r = optimize.minimize_scalar(g, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-8})
        x = np.array([r.x])
    else:
        x = optimize.minimize(f, x0, jac=None if grad is None else (lambda x: -grad(x) / scale), method="L-BFGS-B",
                              options={"maxiter": 500}).x
    return x, float(counts @ loglik(x))


def _pattern_scores(loglik, theta, step):
    """(U, k) scores of one session of each pattern, by central differences."""
    return np.stack([(loglik(theta + e) - loglik(theta - e)) / (2 * h) for e, h in zip(np.diag(step), step)], axis=1)


def estimate(loglik: Callable[[np.ndarray], np.ndarray], counts: np.ndarray, x0: Sequence[float], *,
             bootstrap: int = 0, rng: np.random.Generator | None = None,
             grad: Callable | None = None, penalty: Callable | None = None,
             scores: Callable | None = None) -> Estimate:
    """Fit, then the sandwich covariance and (``bootstrap > 0``) linearised bootstrap draws.

    The information matrix is the observed one (differences of the total score)
    for up to four parameters, the outer product of the session scores beyond
    (cheaper, and equal to it in expectation under the model); a ``penalty``
    adds its own curvature."""
    theta, ll = maximise(loglik, counts, x0, grad=grad, penalty=penalty)
    k = theta.size
    if not np.isfinite(ll):
        # probability 0 for some session at every parameter value: there is no estimate to report
        theta = np.asarray(x0, dtype=np.float64)
        return Estimate(theta, float(counts @ loglik(theta)), None, None)
    if k == 0:
        return Estimate(theta, ll, None, None)
    step = 1e-4 * np.maximum(1.0, np.abs(theta))
    S = scores(theta) if scores is not None else None
    if S is None:
        S = _pattern_scores(loglik, theta, step)
    ok = np.all(np.isfinite(S), axis=1)
    S = np.where(ok[:, None], S, 0.0)
    if k <= 4 and scores is None:
        H = np.empty((k, k))
        s0 = counts @ S
        for a, e in enumerate(np.diag(10 * step)):
            sp = counts @ _pattern_scores(loglik, theta + e, step)
            H[:, a] = -(sp - s0) / e[a]
    else:
        H = (S * counts[:, None]).T @ S
    if penalty is not None:
        h = 1e-3
        for a in range(k):
            for b in range(a, k):
                ea, eb = np.diag(np.full(k, h))[[a, b]]
                v = (penalty(theta + ea + eb) - penalty(theta + ea - eb) - penalty(theta - ea + eb)
                     + penalty(theta - ea - eb)) / (4 * h * h)
                H[a, b] += v
                if a != b:
                    H[b, a] += v
    H = 0.5 * (H + H.T)
    try:
        Hinv = np.linalg.pinv(H)
    except np.linalg.LinAlgError:
        return Estimate(theta, ll, None, None)
    meat = (S * counts[:, None]).T @ S
    cov = Hinv @ meat @ Hinv
    draws = None
    if bootstrap > 0:
        rng = np.random.default_rng() if rng is None else rng
        n = int(round(counts.sum()))
        W = rng.multinomial(n, counts / counts.sum(), size=bootstrap).astype(np.float64)
        g = W @ S                       # replicate scores at theta (the full-data score is ~0)
        draws = theta[None, :] + g @ Hinv.T
    return Estimate(theta, ll, cov, draws)


def logit(x: float | np.ndarray) -> np.ndarray:
    """$\\log(x/(1-x))$, with ``x`` clipped to $[10^{-12}, 1-10^{-12}]$."""
    x = np.clip(np.asarray(x, dtype=np.float64), 1e-12, 1 - 1e-12)
    return np.log(x) - np.log1p(-x)


def expit(t: float | np.ndarray) -> np.ndarray:
    """$1/(1+e^{-t})$, the inverse of `logit`."""
    return 1.0 / (1.0 + np.exp(-np.asarray(t, dtype=np.float64)))


def safe_log(x: float | np.ndarray) -> np.ndarray:
    """$\\log x$ with ``-inf`` (no warning) where ``x <= 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.where(np.asarray(x) > 0, x, 0.0))


@dataclass
class Candidate:
    """One model of a family: how to compute its likelihood and read its parameters.

    ``loglik(data, theta)`` gives the (U,) pattern log-likelihoods of a prepared
    data object; ``unpack(theta)`` the natural parameters (a dict of floats or
    lists); ``x0`` the starting point (empty for a model with nothing to fit).
    ``fixed`` holds parameters reported but not fitted (e.g. a paper default).
    """

    name: str
    x0: Sequence[float]
    loglik: Callable
    unpack: Callable[[np.ndarray], dict]
    fixed: dict | None = None
    grad: Callable | None = None
    penalty: Callable | None = None
    scores: Callable | None = None
