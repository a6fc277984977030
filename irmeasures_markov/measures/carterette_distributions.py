r"""The stopping distributions of Carterette's user-model measures: names, tables and registration.

Carterette, "System Effectiveness, User Models, and User Utility: A Conceptual
Framework for Investigation", SIGIR 2011 (docs/user-model-framework.md).  A
stopping distribution gives :math:`P(k)`, the probability that the user stops
at rank :math:`k`, and :math:`F(k) = \sum_{i \ge k} P(i)`.  Static distributions
(RBP, DCG, RR and the registered ones) depend on the rank only; dynamic ones
(ERR, AP, RRR) on the relevant documents too.
"""
from __future__ import annotations

import numbers
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .._util.registry import RegisteredNames, Registry
from ..io.content import registration_fingerprint

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike


__all__ = [
    "MODELS", "DISTRIBUTIONS", "STATIC_DISTRIBUTIONS", "DYNAMIC_DISTRIBUTIONS", "DEFAULT_THETA", "F_CHOICES",
    "PAPER_MEASURES", "NAMED_MEASURES", "CUSTOM_DISTRIBUTIONS", "DISTRIBUTION_REGISTRY", "REGISTRATION_CACHES",
    "register_distribution", "distribution_fingerprint", "DistributionChoices", "is_static", "default_norm",
    "check_arguments", "static_tables", "static_table", "static_prefix", "theta_or_default",
]

MODELS = ("M1", "M2", "M3", "M4")
STATIC_DISTRIBUTIONS = ("RBP", "DCG", "RR")
DYNAMIC_DISTRIBUTIONS = ("ERR", "AP", "RRR")
DISTRIBUTIONS = STATIC_DISTRIBUTIONS + DYNAMIC_DISTRIBUTIONS
#: Distributions with a parameter θ, and its default.
DEFAULT_THETA = {"RBP": 0.8, "ERR": 0.5}
F_CHOICES = ("1/k", "k")

#: The paper's 15 measures: name -> (model, dist).  Five share a name with a
#: classic measure (RBP, DCG, RR, ERR, AP); the other ten are new names.
PAPER_MEASURES = {
    "RBP": ("M1", "RBP"), "CDG": ("M1", "DCG"), "RRG": ("M1", "RR"),
    "RBTR": ("M2", "RBP"), "DCG": ("M2", "DCG"), "RR": ("M2", "RR"),
    "ERR": ("M3", "ERR"), "ARR": ("M3", "AP"), "RRR": ("M3", "RRR"),
    "RBAP": ("M4", "RBP"), "DAG": ("M4", "DCG"), "RAP": ("M4", "RR"),
    "EPR": ("M4", "ERR"), "AP": ("M4", "AP"), "RRAP": ("M4", "RRR"),
}
#: The ten names registered as measures of their own (the others clash with ir_measures).
NAMED_MEASURES = {k: v for k, v in PAPER_MEASURES.items() if k not in ("RBP", "DCG", "RR", "ERR", "AP")}

#: name -> P(stop at rank k) function of static distributions given to :func:`register_distribution`.
CUSTOM_DISTRIBUTIONS: dict = {}
#: name -> fingerprint of the registered distribution (see :func:`distribution_fingerprint`)
_DISTRIBUTION_FINGERPRINTS: dict = {}
#: the rule of distribution names: upper-case, not a built-in distribution
DISTRIBUTION_REGISTRY = Registry("distribution", lambda: CUSTOM_DISTRIBUTIONS, builtin=DISTRIBUTIONS, upper=True)


def register_distribution(name: str, stop_probabilities: Callable[[int], ArrayLike] | ArrayLike) -> str:
    """Give a static stopping distribution a name usable as ``dist``, e.g. ``M1(dist='MYDIST')``.

    ``stop_probabilities`` is a function ``f(n)`` returning P(stop at rank k)
    for k = 1..n (an array of length n), or such an array itself (P = 0 beyond
    its end).  Probabilities are >= 0 and sum to at most 1; the mass missing
    from ranks 1..n is the probability of going deeper, so
    F(k) = 1 − Σ_{i<k} P(i) as for RBP, DCG and RR.  The name is stored
    upper-case and must not be one of the six built-in distributions;
    registering a name again replaces its distribution.  Returns the name.

    Parameters
    ----------
    name : str
        The distribution's name (stored upper-case).
    stop_probabilities : callable or array_like
        ``f(n)`` giving P(stop at rank k) for k = 1..n, or that array itself.

    Returns
    -------
    str
        The name as stored (upper-case).

    Raises
    ------
    ValueError
        If the name is not allowed (e.g. a built-in distribution), or a table's
        probabilities are not finite and >= 0 or sum to more than 1.
    """
    key = DISTRIBUTION_REGISTRY.key(name)
    if not callable(stop_probabilities):
        table = np.asarray(stop_probabilities, dtype=np.float64).ravel()
        _stop_table_iv(table, name)
        _DISTRIBUTION_FINGERPRINTS[key] = registration_fingerprint(table)
        stop_probabilities = _padded(table)
    else:
        _DISTRIBUTION_FINGERPRINTS[key] = registration_fingerprint(stop_probabilities)
    DISTRIBUTION_REGISTRY.register(key, stop_probabilities)
    for cached in REGISTRATION_CACHES:  # tables of an earlier distribution of that name
        cached.cache_clear()
    return key


def distribution_fingerprint(name: str) -> str:
    """What identifies the distribution registered under ``name``: its table's content for a table; for a
    function (whose content cannot be read) this registration, so results are not kept beyond it.

    Parameters
    ----------
    name : str
        A registered distribution's name (any case).

    Returns
    -------
    str
        The fingerprint.
    """
    key = str(name).upper()
    return _DISTRIBUTION_FINGERPRINTS.get(key) or registration_fingerprint(CUSTOM_DISTRIBUTIONS.get(key))


def _padded(table):
    def f(n):
        out = np.zeros(n)
        m = min(n, table.size)
        out[:m] = table[:m]
        return out
    return f


def _stop_table_iv(p: np.ndarray, name) -> None:
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"stopping distribution {name!r}: probabilities must be finite and >= 0")
    if p.sum() > 1.0 + 1e-9:
        raise ValueError(f"stopping distribution {name!r}: probabilities sum to {p.sum()!r} > 1")


class DistributionChoices(RegisteredNames):
    """The valid ``dist`` values: the six built-in distributions and registered ones."""

    def __init__(self):
        super().__init__(DISTRIBUTIONS, lambda: CUSTOM_DISTRIBUTIONS)


def is_static(dist: str) -> bool:
    return dist in STATIC_DISTRIBUTIONS or dist in CUSTOM_DISTRIBUTIONS


def default_norm(model: str, dist: str) -> bool:
    """The paper's choice (§3.1): normalise the M2 family and ARR (M3 with AP).

    Carterette, "System Effectiveness, User Models, and User Utility: A
    Conceptual Framework for Investigation", SIGIR 2011.

    Parameters
    ----------
    model : str
        The model, ``'M1'`` to ``'M4'``.
    dist : str
        The stopping distribution.

    Returns
    -------
    bool
        True for M2, and for M3 with ``dist='AP'``.
    """
    return model == "M2" or (model == "M3" and dist == "AP")


def check_arguments(model: str, dist: str, theta: float | None, f: str) -> None:
    """Check the arguments of a measure M1–M4 (shared by the functional API and the batch kernel).

    Raises
    ------
    ValueError
        Naming the argument and its allowed values: ``model`` not in :data:`MODELS`, ``dist``
        neither built in nor registered, ``theta`` outside (0, 1) or given to a distribution
        without one, ``f`` not ``'1/k'`` or ``'k'`` or given to a model other than M3.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {list(MODELS)}")
    if dist not in DISTRIBUTIONS and dist not in CUSTOM_DISTRIBUTIONS:
        raise ValueError(f"unknown stopping distribution dist={dist!r}; choose one of {list(DistributionChoices())}")
    if theta is not None:
        if dist not in DEFAULT_THETA:
            raise ValueError(f"dist={dist!r} has no parameter theta (only {sorted(DEFAULT_THETA)} do)")
        # numpy scalars (np.float32(0.5), np.int64) are numbers.Real; bools and np.bool_ are not accepted
        if isinstance(theta, (bool, np.bool_)) or not isinstance(theta, numbers.Real) or not (0 < theta < 1):
            raise ValueError(f"theta must be in (0, 1), got {theta!r}")
    if f not in F_CHOICES:
        raise ValueError(f"f must be '1/k' (reciprocal rank) or 'k' (rank), got {f!r}")
    if f != "1/k" and model != "M3":
        raise ValueError(f"f only applies to M3 (got f={f!r} with {model})")


@lru_cache(maxsize=64)
def static_tables(dist: str, theta: float | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(P(k), F(k)) for k = 1..n of a static distribution, float64, read-only."""
    k = np.arange(1, n + 1, dtype=np.float64)
    if dist == "RBP":
        tail = theta ** (k - 1)
        p = (1.0 - theta) * tail
    elif dist == "DCG":
        tail = 1.0 / np.log2(k + 1.0)
        p = tail - 1.0 / np.log2(k + 2.0)
    elif dist == "RR":
        tail = 1.0 / k
        p = 1.0 / (k * (k + 1.0))
    else:  # registered: F(k) is what P leaves for ranks >= k (summed from the end: small tails stay exact)
        p = np.array(CUSTOM_DISTRIBUTIONS[dist](n), dtype=np.float64).reshape(-1)
        if p.shape != (n,):
            raise ValueError(f"stopping distribution {dist!r}: f({n}) returned shape {p.shape}, expected ({n},)")
        _stop_table_iv(p, dist)
        tail = np.cumsum(p[::-1])[::-1] + max(0.0, 1.0 - p.sum())
    p.flags.writeable = False
    tail.flags.writeable = False
    return p, tail


def static_table(dist: str, theta: float | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`static_tables` for at least ``n`` ranks, at a power-of-two size (few cache entries)."""
    size = 1 << max(4, int(n - 1).bit_length())  # few distinct cache entries
    p, tail = static_tables(dist, theta, size)
    return p, tail


@lru_cache(maxsize=64)
def static_prefix(dist: str, theta: float | None, weight: str, n: int) -> np.ndarray:
    """C(m) = Σ_{k≤m} P(k)·w(k), m = 0..n, for w(k) = 1/k or k."""
    p, _ = static_tables(dist, theta, n)
    k = np.arange(1, n + 1, dtype=np.float64)
    out = np.concatenate(([0.0], np.cumsum(p / k if weight == "1/k" else p * k)))
    out.flags.writeable = False
    return out


def theta_or_default(dist: str, theta: float | None) -> float | None:
    """``theta`` as a float, or the distribution's default (:data:`DEFAULT_THETA`; None without a parameter)."""
    return float(theta) if theta is not None else DEFAULT_THETA.get(dist)


#: caches of tables built from a distribution, cleared when a name is registered again (the kernel adds its own)
REGISTRATION_CACHES: list = [static_tables, static_prefix]
