"""Measure parameters that name a model fitted to an interaction log: ``'fit:NAME'`` and ``'file:PATH'``.

``MP(model='fit:yandex')``, ``M1(dist='fit:yandex')``, ``PH(browse='fit:yandex')``,
``TBG(user='fit:yandex')`` (and ``'file:fit.json'`` for a fit file) take the
family's parameters from a fit registered with
[`irmeasures_markov.calibration.register_fitted`][irmeasures_markov.calibration.register_fitted] or saved with
[`save_fit`][irmeasures_markov.calibration.save_fit] (docs/interaction-logs.md).
The prefix is case-insensitive and stored lower-case; the name or path keeps
its case.  The calibration package is imported only when such a parameter is
used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


__all__ = ["FitChoices", "is_fit_spec", "canonical_spec", "mp_model", "carterette_distribution", "fitted_kwargs"]

_PREFIXES = ("fit:", "file:")


def is_fit_spec(value: object) -> bool:
    """Whether a parameter value is ``'fit:NAME'`` or ``'file:PATH'`` (prefix in any case, non-empty rest)."""
    if not isinstance(value, str):
        return False
    head, colon, rest = value.partition(":")
    return bool(colon) and head.lower() + ":" in _PREFIXES and bool(rest.strip())


def canonical_spec(value: str) -> str:
    """The stored form: lower-case prefix, the name or path as written."""
    head, _, rest = value.partition(":")
    return f"{head.lower()}:{rest}"


class FitChoices:
    """Valid values of a model parameter: its own choices, ``'fit:NAME'`` and ``'file:PATH'``.

    ``family`` names the fits the parameter takes; ``registry`` holds the names registered for it and
    ``fingerprint`` gives the digest of a registered name's content (what
    [`FamilyMeasure.input_fingerprints`][irmeasures_markov.plugin.FamilyMeasure.input_fingerprints] reads).
    """

    def __init__(self, base: object, family: str, registry: object = (), fingerprint=None) -> None:
        self.base = base
        self.family = family
        self.registry = registry
        self.registered_fingerprint = fingerprint

    def __contains__(self, value) -> bool:
        return is_fit_spec(value) or value in self.base

    def __iter__(self):
        return iter(list(self.base) + ["fit:NAME", "file:PATH"])

    def __repr__(self):
        return repr(list(self))

    def fingerprint(self, value: object, measure: str, param: str) -> str | None:
        """Digest of the content ``value`` names: a fit, or a registered name; None for anything else."""
        if is_fit_spec(value):
            from irmeasures_markov.calibration._registry import fit_fingerprint
            return fit_fingerprint(value, self.family, _where(measure, param, value))
        return self.registered_fingerprint(value) if value in self.registry else None


def _where(measure: str, param: str, spec: str) -> str:
    return f"{measure}: {param}={spec!r}"


def mp_model(spec: str, measure: str = "MP") -> tuple[object, object, str, object]:
    """``(model name or None, kernel, states, rates)`` of the MP fit a spec names.

    A fit that is one of the paper models (``'model'`` in its measure
    parameters, e.g. a fitted decay of exactly 1) is evaluated by that model's
    closed form; any other by its kernel.  ``rates`` is None when the fit has
    no holding rates.
    """
    from irmeasures_markov.calibration._registry import fit_parameters
    where = _where(measure, "model", spec)
    _, p = fit_parameters(spec, "mp", where)
    name, kernel = p.get("model"), p.get("kernel")
    if name is None and kernel is None:
        raise ValueError(f"{where}: the fit gives neither a kernel nor a model name")
    return name, kernel, p.get("states", "AD"), p.get("rates")


_DIST_KEYS: dict[tuple, str] = {}


def carterette_distribution(spec: str, measure: str = "M1") -> tuple[str, object]:
    """``(dist, theta)`` for the measure kernel: the stopping distribution of the Carterette fit a spec names.

    A fit of one of the six distributions (``'dist'`` in its measure
    parameters) is that distribution with its fitted θ; any other (an
    empirical distribution) is registered with
    [`register_distribution`][irmeasures_markov.measures.register_distribution] on
    first use, under a name of its own.  A click model (family ``clickmodel``)
    is a PBM's static distribution or, for a DBN, SDBN or CM fitted with qrels,
    a graded dynamic distribution
    ([`register_graded_distribution`][irmeasures_markov.measures.register_graded_distribution]).
    """
    from irmeasures_markov.calibration._registry import fit_parameters
    from irmeasures_markov.measures._carterette_distributions import (
        DEFAULT_THETA,
        DISTRIBUTIONS,
        register_distribution,
        register_graded_distribution,
    )
    where = _where(measure, "dist", spec)
    token, p = fit_parameters(spec, "carterette", where)
    dist, theta = p.get("dist"), p.get("theta")
    if dist in DISTRIBUTIONS and (theta is None or dist in DEFAULT_THETA):
        return dist, theta
    graded = p.get("stop_by_grade") is not None   # a DBN, SDBN or CM click model fitted with qrels
    if not graded and p.get("stop_probabilities") is None:
        raise ValueError(f"{where}: the fit gives neither stopping probabilities nor one of the distributions "
                         f"{list(DISTRIBUTIONS)} (it gives dist={dist!r})")
    key = _DIST_KEYS.get(token)
    if key is None:
        # one name per fit (and per version of a fit file), so tables cached for an earlier fit are never reused
        register = register_graded_distribution if graded else register_distribution
        key = register(f"{spec}#{len(_DIST_KEYS) + 1}", p["stop_by_grade" if graded else "stop_probabilities"])
        _DIST_KEYS[token] = key
    return key, None


def fitted_kwargs(spec: str, family: str, measure: str, param: str, supported: Mapping, given: Mapping) -> dict:
    """The measure parameters a PH or TBG fit sets, checked against those the measure string gives.

    ``supported``: the measure's parameter names; ``given``: those written in
    the measure string (a parameter set by the fit cannot also be given).
    """
    from irmeasures_markov.calibration._registry import fit_parameters
    where = _where(measure, param, spec)
    _, p = fit_parameters(spec, family, where)
    unknown = sorted(set(p) - set(supported))
    if unknown:
        raise ValueError(f"{where}: the fit sets {unknown}, which {measure} does not have")
    clash = sorted(set(p) & (set(given) - {param}))
    if clash:
        raise ValueError(f"{where}: the fit sets {clash}; do not give them as well (drop them, or drop "
                         f"{param}={spec!r} to set every parameter by hand)")
    return dict(p)
