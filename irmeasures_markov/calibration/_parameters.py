"""From fitted parameters to measure parameters, per family (see FamilyFit.measure_parameters),
and the schema every fit's parameters follow (:func:`check_params`)."""
from __future__ import annotations

import math
import re
from typing import Protocol

import numpy as np

from irmeasures_markov.calibration._click_user_models import check_click_model, click_model_parameters, is_number
from irmeasures_markov.measures._carterette_distributions import DISTRIBUTIONS
from irmeasures_markov.measures.stopping_time._params import BROWSING_MODELS

__all__ = ["measure_parameters", "check_params", "stop_probabilities", "PARAM_SCHEMAS", "FitLike", "Field",
           "field_error", "COUNT"]


class FitLike(Protocol):
    """What the conversions read of a fit (a :class:`~irmeasures_markov.calibration.FamilyFit`)."""

    family: str
    params: dict


class Field:
    """One fitted parameter: ``check(value)`` returns None when it is valid, else what it must be."""

    def __init__(self, what: str, ok):
        self.what, self.ok = what, ok

    def check(self, value):
        return None if self.ok(value) else self.what


def field_error(name: str, value, what: str) -> ValueError:
    """The error for a field whose value is not what it must be (the value shown at most 40 characters long)."""
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
    return ValueError(f"field {name!r} is {shown}; it must be {what}")


def _number(what: str, ok=lambda v: True) -> Field:
    # null is what save_fit writes for a non-finite number (strict JSON): valid in a file, refused when used
    return Field(f"{what} (or null)", lambda v: v is None or (is_number(v) and (not math.isfinite(v) or ok(v))))


def _choice(*values) -> Field:
    return Field("one of " + ", ".join(map(repr, values)), lambda v: isinstance(v, str) and v in values)


def _list(item: Field) -> Field:
    return Field(f"a list, each item {item.what}",
                  lambda v: isinstance(v, list) and all(item.check(x) is None for x in v))


#: a count: an integer >= 0
COUNT = Field("an integer >= 0", lambda v: is_number(v) and isinstance(v, int) and v >= 0)
_PROB = _number("a probability in [0, 1]", lambda v: 0 <= v <= 1)
_ANY = _number("a number")
_NONNEG = _number("a number >= 0", lambda v: v >= 0)
_WEIGHTS = Field("an object mapping signed displacements ('+1', '-2', ...) to weights >= 0 (or null)",
                  lambda v: isinstance(v, dict) and all(re.fullmatch(r"[+-][0-9]+", k) and _NONNEG.check(w) is None
                                                        for k, w in v.items()))


_BY_GRADE = Field("an object mapping grades ('0', '1', ...) to probabilities in [0, 1] (or null)",
                   lambda v: isinstance(v, dict) and all(re.fullmatch(r"-?[0-9]+", str(k)) and _PROB.check(w) is None
                                                         for k, w in v.items()))
_EXAMINATION = Field("a list of probabilities in [0, 1] (PBM: one per rank) or of such lists (UBM: one row per rank, "
                      "one column per rank of the previous click, 0 = none)",
                      lambda v: isinstance(v, list) and (all(_PROB.check(x) is None for x in v)
                                                         or all(_list(_PROB).check(x) is None for x in v)))


#: family -> {field: what it must be} (``continue_<k>``: ``continue_1``, ``continue_2``, ...)
PARAM_SCHEMAS = {
    "mp": {"connectivity": _choice("GL", "LO"), "states": _choice("AD", "OR"),
           "kernel": _choice("ID", "LID", "nonparametric"), "decay": _ANY, "weights": _WEIGHTS,
           "rates": _list(_number("a rate > 0", lambda v: v > 0)), "rates_low": _list(_NONNEG),
           "rates_high": _list(_NONNEG),
           "rates_events": _list(COUNT)},
    "ph": {"browse": _choice(*BROWSING_MODELS), "p": _PROB, "q": _PROB, "p_rel": _PROB, "q_rel": _PROB,
           "gamma": _PROB, "gamma_rel": _PROB, "gamma_nonrel": _PROB},
    "carterette": {"dist": _choice(*DISTRIBUTIONS, "empirical"), "theta": _PROB, "continuation": _list(_PROB),
                   "continue_<k>": _PROB, "gamma": _PROB, "gamma_rel": _PROB, "gamma_nonrel": _PROB},
    "tbg": {"p_continue": _PROB, "pc_rel": _PROB, "pc_nonrel": _PROB,
            "halflife": _number("a number > 0", lambda v: v > 0), "t_summary": _NONNEG},
    "clickmodel": {"examination": _EXAMINATION, "continuation": _PROB, "attractiveness_by_grade": _BY_GRADE,
                   "satisfaction_by_grade": _BY_GRADE,
                   "per_document": Field("an object (the query-document tables)", lambda v: isinstance(v, dict)),
                   "unseen": Field("an object mapping 'attractiveness', 'satisfaction' to probabilities",
                                    lambda v: isinstance(v, dict) and all(_PROB.check(x) is None
                                                                          for x in v.values())),
                   "prior": _list(_NONNEG)},
}


#: the fields a family's measure needs, per value of the field that selects the model
_REQUIRED = {
    "mp": ("kernel", {"ID": ("connectivity", "states", "decay"), "LID": ("connectivity", "states", "decay"),
                      "nonparametric": ("states", "weights")}),
    "ph": ("browse", {"DFBM": (), "SFBM": ("p",), "RWBM": ("p", "q")}),
    "carterette": ("dist", {"empirical": ("continuation",)}),
    "tbg": (None, {}),
    # a click model is selected by the fit's model name, not by a field of its params
    "clickmodel": (None, {}),
}



def check_params(fit: FitLike) -> None:
    """Check a fit's ``params`` against its family's schema (:data:`PARAM_SCHEMAS`).

    Every field must be known, every value of the type and in the range the
    field allows, and the fields that select the model present.

    Parameters
    ----------
    fit : FamilyFit
        Or any object with ``family`` and ``params``.

    Raises
    ------
    ValueError
        Naming the field, its value and what it may be (or the unknown family).
    """
    schema = PARAM_SCHEMAS.get(fit.family)
    if schema is None:
        raise ValueError(f"unknown family {fit.family!r}; families are {list(PARAM_SCHEMAS)}")
    params = fit.params
    if not isinstance(params, dict):
        raise ValueError(f"params must be an object, got {type(params).__name__}")
    for name, value in params.items():
        field = schema.get("continue_<k>" if re.fullmatch(r"continue_[0-9]+", str(name)) else name)
        if field is None:
            raise ValueError(f"unknown field {name!r} in the {fit.family} params; the fields are "
                             f"{', '.join(schema)}")
        what = field.check(value)
        if what is not None:
            raise field_error(name, value, what)
    if fit.family == "clickmodel":
        check_click_model(fit)
    selector, required = _REQUIRED[fit.family]
    if selector is not None:
        if selector not in params:
            raise ValueError(f"field {selector!r} is missing; it must be {schema[selector].what}")
        missing = [n for n in required.get(params[selector], ()) if n not in params]
        if missing:
            raise ValueError(f"field {missing[0]!r} is missing (a {fit.family} fit with {selector}="
                             f"{params[selector]!r} needs {', '.join(required[params[selector]])})")


def _finite(fit, *names) -> None:
    """The fields a measure reads must be numbers (a null, i.e. a non-finite fit, cannot be evaluated)."""
    for n in names:
        v = fit.params.get(n)
        if n in fit.params and not (is_number(v) and math.isfinite(v)):
            raise ValueError(f"field {n!r} is {v!r}; a measure needs a finite number")


def _mp(fit) -> dict:
    p = fit.params
    rates = p.get("rates")
    rates = None if rates is None else np.asarray(rates, dtype=np.float64)
    states = p["states"]
    if p["kernel"] == "nonparametric":
        w = {int(k): float(v) for k, v in p["weights"].items()}
        far_fwd = w[max(w)]
        far_bwd = w[min(w)]

        def alpha(i, j):
            # displacements beyond the log's ranking keep the weight of the longest observed jump
            d = np.asarray(j, dtype=np.int64) - np.asarray(i, dtype=np.int64)
            out = np.where(d > 0, far_fwd, far_bwd).astype(np.float64)
            for k, v in w.items():
                out = np.where(d == k, v, out)
            return np.where(d == 0, 0.0, out)
        return {"kernel": alpha, "states": states, "rates": rates}
    conn, kern, decay = p["connectivity"], p["kernel"], float(p["decay"])
    if conn == "LO" and states == "OR":
        if decay == 1.0:
            return {"kernel": None, "model": f"LO_OR_{kern}", "states": states, "rates": rates}
        raise ValueError("an LO_OR chain (neighbours in the list of relevant ranks) with a fitted decay is not a "
                         "kernel of rank pairs; it cannot be registered as an MP model")
    base = (lambda d: d + 1.0) if kern == "ID" else (lambda d: np.log10(d + 2.0))

    def alpha(i, j):
        d = np.abs(np.asarray(i, dtype=np.float64) - np.asarray(j, dtype=np.float64))
        w = base(d) ** (-decay)
        if conn == "LO":
            w = np.where(d == 1, w, 0.0)
        return np.where(d == 0, 0.0, w)
    out = {"kernel": alpha, "states": states, "rates": rates}
    if decay == 1.0:
        out["model"] = f"{conn}_{states}_{kern}"
    return out


def _ph(fit) -> dict:
    p = fit.params
    out = {"browse": p["browse"]}
    if p["browse"] != "DFBM":
        out["p"] = float(p["p"])
        if p["browse"] == "RWBM":
            out["q"] = float(p["q"])
        for k in ("p_rel", "q_rel"):
            if k in p and (k != "q_rel" or p["browse"] == "RWBM"):
                out[k] = float(p[k])
    return out


def _carterette(fit) -> dict:
    p = fit.params
    dist = p["dist"]
    # the dynamic distributions (ERR, AP, RRR) depend on relevance: the measure computes them
    out = {"stop_probabilities": None if dist in ("ERR", "AP", "RRR")
           else (lambda n: stop_probabilities(dist, p, int(n)))}
    if dist != "empirical":
        out["dist"] = dist
        if "theta" in p:
            out["theta"] = float(p["theta"])
    return out


def stop_probabilities(dist: str, values: dict, n: int) -> np.ndarray:
    r"""P(stop at k), k = 1..n, of a static or empirical stopping distribution (Carterette, SIGIR 2011).

    ``RBP`` :math:`(1-\theta)\theta^{k-1}`; ``DCG``
    :math:`1/\log_2(k+1) - 1/\log_2(k+2)`; ``RR`` :math:`1/(k(k+1))`;
    ``empirical`` :math:`P(k) = (1-c_k)\prod_{i<k} c_i` from the fitted
    continuation probabilities :math:`c_k` (the last one repeated beyond them).

    Parameters
    ----------
    dist : {'RBP', 'DCG', 'RR', 'empirical'}
    values : dict
        The fit's parameters: ``theta`` (RBP), ``continuation`` (empirical).
    n : int
        Ranks wanted.

    Returns
    -------
    ndarray of float64
        ``n`` probabilities; the rest of the mass lies beyond rank ``n``.

    Raises
    ------
    ValueError
        For a distribution that depends on relevance (ERR, AP, RRR).
    """
    k = np.arange(1, n + 1, dtype=np.float64)
    if dist == "RBP":
        th = values["theta"]
        return (1 - th) * th ** (k - 1)
    if dist == "DCG":
        return 1 / np.log2(k + 1) - 1 / np.log2(k + 2)
    if dist == "RR":
        return 1 / (k * (k + 1))
    if dist == "empirical":
        c = np.asarray(values["continuation"], dtype=np.float64)
        c = np.concatenate([c, np.full(max(0, n - c.size), c[-1] if c.size else 0.0)])[:n]
        surv = np.concatenate([[1.0], np.cumprod(c[:-1])])
        return surv * (1 - c)
    raise ValueError(f"dist={dist!r} depends on relevance: it has no static stopping probabilities")


def _clickmodel(fit) -> dict:
    out = click_model_parameters(fit)
    if "pbm_continuation" in out:   # a PBM: the empirical distribution of its continuation probabilities
        cont = out["pbm_continuation"]
        return {"stop_probabilities": lambda n: stop_probabilities("empirical", {"continuation": cont}, int(n))}
    return out


def _tbg(fit) -> dict:
    return {k: float(fit.params[k]) for k in ("pc_rel", "pc_nonrel", "halflife", "t_summary") if k in fit.params}


def measure_parameters(fit: FitLike) -> dict:
    """What the family's measure takes (shapes documented in :meth:`FamilyFit.measure_parameters`).

    The fit is checked first (:func:`check_params`): a value outside its
    field's choices is an error, never read as another model.

    Parameters
    ----------
    fit : FamilyFit
        Or any object with ``family`` and ``params``.

    Returns
    -------
    dict
        Keyword arguments of the family's measure.

    Raises
    ------
    ValueError
        An unknown family, a fit that breaks its schema, a non-finite value a
        measure reads, or an MP fit that is not a kernel of rank pairs (LO_OR
        with a fitted decay).
    """
    conv = {"mp": _mp, "ph": _ph, "carterette": _carterette, "tbg": _tbg,
            "clickmodel": _clickmodel}.get(fit.family)
    if conv is None:
        raise ValueError(f"unknown family {fit.family!r}")
    check_params(fit)
    _finite(fit, "decay", "p", "q", "p_rel", "q_rel", "theta", "pc_rel", "pc_nonrel", "halflife", "t_summary")
    return conv(fit)
