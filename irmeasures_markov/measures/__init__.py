"""Measure kernels, one family per package or private module, on prepared rankings (no file parsing here).

- `irmeasures_markov.measures.markov_precision`: MP and MPcont (Ferrante, Ferro & Maistro, SIGIR 2014);
- `irmeasures_markov.measures.stopping_time`: P@H (Ferrante & Ferro, ICTIR 2020);
- here: Carterette's M1–M4 (SIGIR 2011) and their stopping distributions, Time-Biased Gain and its time model
  (Smucker & Clarke, SIGIR 2012), and AP, P@k, Rprec, bpref, RR, nDCG, binary RBP, R@k, Success@k, the set
  measures, IPrec@r, the counts and Judged@k in float64 with trec_eval's definitions (the standard family the
  package's own front ends compute them with).

The ``ir_measures`` Measure objects that call these kernels live in `irmeasures_markov.plugin` (the
standard measures are ``ir_measures``' own).
"""
from irmeasures_markov.measures._carterette import user_model_batch, user_model_measure, user_model_values
from irmeasures_markov.measures._carterette_distributions import (
    DEFAULT_THETA,
    DISTRIBUTIONS,
    MODELS,
    NAMED_MEASURES,
    PAPER_MEASURES,
    GradedStopping,
    register_distribution,
    register_graded_distribution,
    stopping_distribution,
)
from irmeasures_markov.measures._standard import STANDARD_UNJUDGED, StandardMeasure, standard_measure, standard_values
from irmeasures_markov.measures._tbg import (
    TBG_DEFAULTS,
    TBGParameters,
    constant_normaliser,
    gain_curve,
    holding_times,
    ideal_normaliser,
    time_biased_gain,
    time_to_rank,
)
from irmeasures_markov.measures._time_model import (
    QueryTimeModel,
    gain_curves,
    mean_gain_curve,
    plot_gain_curves,
    time_models,
)

__all__ = [
    # Carterette's M1-M4
    "user_model_measure", "user_model_values", "user_model_batch", "MODELS", "DISTRIBUTIONS", "DEFAULT_THETA",
    "NAMED_MEASURES", "PAPER_MEASURES", "register_distribution", "register_graded_distribution",
    "stopping_distribution", "GradedStopping",
    # Time-Biased Gain and its time model
    "time_biased_gain", "time_to_rank", "holding_times", "gain_curve", "constant_normaliser", "ideal_normaliser",
    "TBG_DEFAULTS", "TBGParameters", "QueryTimeModel", "time_models", "gain_curves", "mean_gain_curve",
    "plot_gain_curves",
    # the standard measures in float64
    "standard_measure", "standard_values", "StandardMeasure", "STANDARD_UNJUDGED",
]
