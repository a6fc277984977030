r"""Markov Precision (MP) and continuous-time Markov Precision (MPcont).

Ferrante, Ferro & Maistro, "Injecting User Models and Time into Precision via
Markov Chains", SIGIR 2014 (docs/markov-precision.md).  A user moves among the
ranks of a ranking as a Markov chain with
$p_{ij} = \alpha(i,j) / \sum_k \alpha(i,k)$; watched on the relevant ranks
$\mathcal R$ it has invariant distribution $\pi$, and

$$
\mathrm{MP} = \sum_{i \in \mathcal R} \pi_i \,\mathrm{Prec}(i).
$$

The package: `models` (model names, [`register_kernel`][irmeasures_markov.register_kernel]),
`kernels` (the degree kernels of the closed form), `rates`
(MPcont's holding rates), `mp` (one ranking, closed form and general
solver, and every query of a run at once, the plugin path) and `ties` (the mean over tie orders).
"""
from __future__ import annotations

from irmeasures_markov.measures.markov_precision._kernels import KERNELS
from irmeasures_markov.measures.markov_precision._models import (
    CUSTOM_KERNELS,
    MODELS,
    PAPER_MODELS,
    Model,
    ModelChoices,
    kernel_fingerprint,
    parse_model,
    register_kernel,
)
from irmeasures_markov.measures.markov_precision._mp import (
    kernel_batch,
    markov_precision,
    markov_precision_batch,
    mp_degrees,
)
from irmeasures_markov.measures.markov_precision._rates import check_rates, estimate_rates, rates_per_query

__all__ = [
    "PAPER_MODELS",
    "MODELS",
    "KERNELS",
    "CUSTOM_KERNELS",
    "Model",
    "ModelChoices",
    "markov_precision",
    "markov_precision_batch",
    "mp_degrees",
    "estimate_rates",
    "check_rates",
    "rates_per_query",
    "parse_model",
    "register_kernel",
    "kernel_fingerprint",
    "kernel_batch",
]
