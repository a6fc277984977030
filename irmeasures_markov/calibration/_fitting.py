"""One candidate user model fitted to a log: the :class:`~.result.FamilyFit` it becomes.

The likelihood machinery (patterns, maximisation, intervals) is in
:mod:`._likelihood`, below the fit result; this module builds a fit result
from it (the family modules, which :class:`~.result.FamilyFit`'s click
probabilities read, need only the machinery).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._likelihood import Candidate, Estimate, PatternData, estimate
from irmeasures_markov.calibration._result import FamilyFit

__all__ = ["fit_candidate"]


def fit_candidate(family: str, cand: Candidate, train: PatternData, test: PatternData | None = None, *,
                  bootstrap: int = 0, rng: np.random.Generator | None = None, description: str = "",
                  extra: dict | None = None) -> tuple[FamilyFit, Estimate]:
    """Fit one candidate by maximum likelihood on prepared training data; score it on prepared test data.

    Parameters
    ----------
    family : str
    cand : Candidate
    train, test : prepared data of the family (``test`` optional)
    bootstrap : int
        Linearised bootstrap replicates for the 95% intervals (0: Wald, from the sandwich covariance).
    rng : numpy Generator, optional
    description : str
        The log's description, kept in the fit.
    extra : dict, optional
        Parameters added to the fit's (e.g. MPcont's holding rates).

    Returns
    -------
    (FamilyFit, Estimate)
        A candidate that gives probability 0 to some training session at every
        parameter value has log-likelihood ``-inf`` and only its fixed parameters.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    g, sc = cand.grad, cand.scores
    est = estimate(lambda th: cand.loglik(train, th), train.counts, cand.x0, bootstrap=bootstrap, rng=rng,
                   grad=(lambda th: g(train, th)) if g is not None else None, penalty=cand.penalty,
                   scores=(lambda th: sc(train, th)) if sc is not None else None)
    params = dict(cand.fixed or {})
    params.update(cand.unpack(est.theta))
    fitted = bool(np.isfinite(est.loglik))
    if not fitted:
        # probability 0 for some session at every parameter value: the fitted parameters would be the
        # start values, which are no estimate; keep only what the candidate fixes (its name, fixed values)
        for key in _free_keys(cand):
            params.pop(key, None)
    intervals = {}
    if est.cov is not None:
        draws = est.draws
        if draws is None:
            cov = 0.5 * (est.cov + est.cov.T)
            draws = rng.multivariate_normal(est.theta, cov, size=4000, check_valid="ignore")
        # a draw far out on the unconstrained scale (a boundary estimate has a huge variance) maps to 0 or
        # inf through exp: the right limits, and the intervals below keep only finite values
        with np.errstate(over="ignore"):
            nat = [cand.unpack(d) for d in draws]
        flat = {}
        for key, val in params.items():
            if isinstance(val, dict):       # e.g. the non-parametric kernel's weights: 'weights[+2]'
                for sub in val:
                    flat[f"{key}[{sub}]"] = (lambda d, key=key, sub=sub: d[key][sub])
            elif isinstance(val, (float, int)) and not isinstance(val, bool) and key not in (cand.fixed or {}):
                flat[key] = (lambda d, key=key: d[key])
        for key, get in flat.items():
            vals = np.array([float(get(d)) for d in nat])
            vals = vals[np.isfinite(vals)]
            if vals.size and np.ptp(vals) > 0:
                lo, hi = np.percentile(vals, [2.5, 97.5])
                intervals[key] = (float(lo), float(hi))
    if extra:
        params.update(extra)
    held, n_held, n_held_events = None, 0, 0
    if test is not None:
        # no estimate: no held-out value either (one at the start values would mean nothing)
        held = float(test.counts @ cand.loglik(test, est.theta)) if fitted else float("-inf")
        n_held = int(test.counts.sum())
        n_held_events = int(test.n_events)
    fit = FamilyFit(family=family, model=cand.name, params=params, intervals=intervals,
                    loglik=float(est.loglik), n_params=int(np.size(est.theta)),
                    n_sessions=int(train.counts.sum()), heldout_loglik=held, n_heldout=n_held,
                    n_events=int(train.n_events), log_description=description,
                    n_heldout_events=n_held_events)
    return fit, est


def _free_keys(cand: Candidate) -> list:
    """The parameters of ``cand.unpack`` that depend on the fitted vector (those a fit estimates)."""
    x0 = np.asarray(cand.x0, dtype=np.float64)
    if x0.size == 0:
        return []
    a, b = cand.unpack(x0), cand.unpack(x0 + 0.5)
    return [k for k in a if k not in b or a[k] != b[k]]
