"""Posterior of the Bayesian models: `BayesResult`, the sampler diagnostics and their warning.

Shared by the PyMC models (`bayes`) and the Gibbs sampler (`gibbs`);
the priors' constants live here too (see `bayes` for the models).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BayesResult", "EFFECT_SCALE_PRIOR", "ImproperPosteriorError", "MAX_RHAT", "MU_PRIOR_SD",
           "SamplingWarning", "identified_quantities", "sampling_diagnostics"]

#: R-hat above this (Vehtari et al. 2021) means the chains have not mixed.
MAX_RHAT = 1.01


class SamplingWarning(RuntimeWarning):
    """The sampler's diagnostics (divergences, R-hat) say the posterior draws may not be trustworthy."""


class ImproperPosteriorError(ValueError):
    """The scores are exactly μ + β_j + α_i (no residual variation): under p(σ) ∝ 1/σ the posterior is improper.

    Every pair of runs then differs by the same amount on every topic."""


#: Standard deviation of the intercept's prior (see the module docstring).
MU_PRIOR_SD = 10.0


@dataclass
class BayesResult:
    """Posterior of a fitted model.

    ``system_effects``: draws × systems array of β_j (all chains pooled);
    ``idata``: the ArviZ InferenceData (every parameter, diagnostics);
    ``cell_estimates``: for the direct model, draws-averaged p_ij (topics × systems);
    ``divergences``: NUTS divergent transitions after tuning, all chains (``None``
    for the Gibbs sampler, which has none); ``max_rhat``: the largest split
    R-hat over the identified quantities, i.e. the system contrasts β_j − β̄,
    every scale σ and the direct model's p_ij (μ, β_j and α_i are only
    identified through their sum); ``None`` with one chain, where it is not defined.
    Any divergence, or ``max_rhat`` above `MAX_RHAT`, issues a
    [`SamplingWarning`][irmeasures_markov.inference.SamplingWarning] when the model is fitted.
    """
    systems: list[str]
    system_effects: np.ndarray
    idata: object
    topics: list[str] = field(default_factory=list)
    cell_estimates: np.ndarray | None = None
    cell_intervals: np.ndarray | None = None
    divergences: int | None = None
    max_rhat: float | None = None

    def prob_better(self, a: str, b: str) -> float:
        """P(system a better than system b | data) = P(β_a > β_b)."""
        ia, ib = self.systems.index(str(a)), self.systems.index(str(b))
        return float(np.mean(self.system_effects[:, ia] > self.system_effects[:, ib]))

    def prob_better_matrix(self) -> np.ndarray:
        """``M[a, b] = P(β_a > β_b)`` for every pair."""
        s = self.system_effects
        return (s[:, :, None] > s[:, None, :]).mean(axis=0)

    def credible_intervals(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed credible intervals of the system effects: systems × (low, high)."""
        lo = (1 - level) / 2
        return np.quantile(self.system_effects, [lo, 1 - lo], axis=0).T

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Posterior mean and equal-tailed credible interval (``low``, ``high``) of each system's effect."""
        import pandas as pd
        ci = self.credible_intervals(level)
        return pd.DataFrame({"mean": self.system_effects.mean(axis=0), "low": ci[:, 0], "high": ci[:, 1]},
                            index=self.systems)


#: Scale of the half-Cauchy prior on random-effect scales (see the module docstring).
EFFECT_SCALE_PRIOR = 1.0


def identified_quantities(posterior: Any) -> list[Any]:
    """The identified quantities whose mixing R-hat checks: the system contrasts β_j − β̄ (what
    ``prob_better`` and the intervals of centred effects use), every scale σ, and the cell
    probabilities p_ij of the direct model.  μ, β_j and α_i are left out: only μ + β_j + α_i is
    identified, so their levels drift along a ridge without harming any contrast."""
    out = []
    if "system" in posterior:
        beta = posterior["system"]
        dim = [d for d in beta.dims if d not in ("chain", "draw")][-1]
        out.append((beta - beta.mean(dim)).to_dataset(name="system_contrast"))
    names = [v for v in posterior.data_vars if str(v).startswith("sigma") or v == "p"]
    if names:
        out.append(posterior[names])
    return out or [posterior]


def sampling_diagnostics(idata: Any, sampler: str = "nuts",
                         target_accept: float | None = None) -> tuple[int | None, float | None]:
    """``(divergences, max_rhat)`` of a fit, with a [`SamplingWarning`][irmeasures_markov.inference.SamplingWarning]
    when either is bad.

    Parameters
    ----------
    idata : arviz.InferenceData
        The fit's draws (and, for NUTS, its ``sample_stats``).
    sampler : {'nuts', 'gibbs'}
        Divergences are counted for NUTS only.
    target_accept : float, optional
        NUTS's setting, named in the warning's advice.

    Returns
    -------
    (int or None, float or None)
        Divergent transitions after tuning (None without NUTS statistics) and the largest split R-hat of
        the `identified_quantities` (None with one chain or fewer than 4 draws).

    Warns
    -----
    SamplingWarning
        Any divergence, or R-hat above `MAX_RHAT`.
    """
    divergences = None
    stats = getattr(idata, "sample_stats", None) if sampler == "nuts" else None
    if stats is not None and "diverging" in stats:
        divergences = int(np.asarray(stats["diverging"].values).sum())
    max_rhat = None
    posterior = idata.posterior
    if posterior.sizes.get("chain", 1) > 1 and posterior.sizes.get("draw", 0) >= 4:
        import arviz as az
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # constant parameters give NaN R-hat
            values = np.concatenate([np.ravel(az.rhat(v).to_array().values)
                                     for v in identified_quantities(posterior)]).astype(np.float64)
        values = values[np.isfinite(values)]
        max_rhat = float(values.max()) if values.size else None
    problems = []
    if divergences:
        if not target_accept:
            hint = "raise target_accept (try 0.99) and tune"
        elif target_accept < 0.99:
            hint = f"raise target_accept (it is {target_accept}; try 0.99) and tune"
        else:   # already high: more of the same will not help, the model's geometry is the problem
            hint = (f"target_accept is already {target_accept}: reparameterise the model, or use backend='gibbs' "
                    "for the linear model")
        problems.append(f"{divergences} divergent transitions after tuning ({hint}; divergences mean "
                        f"the sampler missed part of the posterior)")
    if max_rhat is not None and max_rhat > MAX_RHAT:
        problems.append(f"max R-hat {max_rhat:.3f} > {MAX_RHAT} (the chains have not mixed: "
                        f"raise draws and tune, or chains)")
    if problems:
        warnings.warn(f"{sampler.upper() if sampler == 'nuts' else sampler.capitalize()} sampling: "
                      + "; ".join(problems) + ". The posterior summaries may be biased.",
                      SamplingWarning, stacklevel=3)
    return divergences, max_rhat
