r"""From fitted parameters to measure parameters, per family (see FamilyFit.measure_parameters),
and the schema every fit's parameters follow (`check_params`).

Click models as user models of the measures: what a fitted click model (family ``"clickmodel"``) gives
M1–M4 (docs/user-model-framework.md, "Click models as user models").

- PBM: its examination probabilities, made non-increasing (isotonic regression)
  and scaled to $g_1 = 1$, are a static stopping distribution,
  $P(k) = \hat g_k - \hat g_{k+1}$, with a geometric tail below the log's
  deepest rank (`pbm_continuation`);
- DBN, SDBN, CM fitted with qrels: the probability of stopping at an examined
  document of grade g, $h(g) = 1 - \gamma(1 - a(g)s(g))$, a graded dynamic
  distribution (`stop_by_grade`);
- UBM: not a user model of any measure (`UBM_NOT_MP`).

Per-document attractiveness and satisfaction do not transfer (a measure over
qrels sees grades, not the log's documents); parameters per grade do.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from irmeasures_markov.measures._carterette_distributions import DISTRIBUTIONS
from irmeasures_markov.measures.stopping_time._params import BROWSING_MODELS

__all__ = ["measure_parameters", "check_params", "stop_probabilities", "Field", "check_fields", "COUNT", "NUMBER",
           "model_name", "monotone_examination", "is_carterette_user_model", "why_not_a_user_model"]


# ---------------------------------------------------------------------------
# Click models as user models of the measures
# ---------------------------------------------------------------------------

#: the click models a fit file may hold (family "clickmodel"; calibration.click_models fits them) -> (params it
#: needs, the dimension of "examination": 1 per rank, 2 per rank and previous click)
_CLICK_REQUIRED = {"PBM": (("examination",), 1), "CM": ((), None), "UBM": (("examination",), 2),
                   "DBN": (("continuation",), None), "SDBN": (("continuation",), None)}
#: the click models with a stopping probability per grade -> the by-grade fields it is made of (CM: satisfied
#: by every click)
_BY_GRADE_FIELDS = {"DBN": ("attractiveness_by_grade", "satisfaction_by_grade"),
                    "SDBN": ("attractiveness_by_grade", "satisfaction_by_grade"), "CM": ("attractiveness_by_grade",)}


def is_number(v) -> bool:
    """An int or a float, not a bool (a JSON number)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def model_name(fit) -> str:
    """The click model's name: ``FamilyFit.model`` (``ClickModelFit.name``)."""
    return str(getattr(fit, "model", None) or getattr(fit, "name", None) or "")


def check_click_model(fit) -> None:
    """The click-model part of `check_params`: a known model with the params it needs."""
    model = model_name(fit)
    if model not in _CLICK_REQUIRED:
        raise ValueError(f"model {model!r} is not a click model; the click models are {', '.join(_CLICK_REQUIRED)}")
    needed, dim = _CLICK_REQUIRED[model]
    missing = [n for n in needed if n not in fit.params]
    if missing:
        raise ValueError(f"field {missing[0]!r} is missing (a {model} fit needs {', '.join(needed)})")
    exam = fit.params.get("examination")
    if exam is not None and exam and dim is not None and isinstance(exam[0], list) != (dim == 2):
        raise ValueError(f"field 'examination' of a {model} fit must be "
                         + ("a list of probabilities, one per rank" if dim == 1 else
                            "a list of rows (one per rank) of probabilities (one per rank of the previous click)"))
    if model == "SDBN" and fit.params.get("continuation") not in (None, 1, 1.0):
        raise ValueError(f"field 'continuation' of an SDBN fit is {fit.params['continuation']!r}; SDBN has "
                         "continuation 1 (use model DBN for another value)")


def monotone_examination(examination) -> np.ndarray:
    r"""The non-increasing sequence closest to ``examination`` in least squares (isotonic regression, pool
    adjacent violators, equal weights per rank).

    A PBM fitted by EM may examine rank k+1 slightly more often than rank k
    (noise at deep ranks); a stopping distribution needs $g_1 \ge g_2 \ge \dots$.
    Runs of violating ranks are replaced by their mean, which keeps the fit's
    overall level (a running minimum would bias every rank after a dip downward).

    Parameters
    ----------
    examination : array_like of float
        $g_1, \dots, g_D$.

    Returns
    -------
    numpy.ndarray
        The non-increasing $\hat g_1 \ge \dots \ge \hat g_D$.
    """
    g = np.asarray(examination, dtype=np.float64).ravel()
    blocks: list[list[float]] = []          # [mean, size]
    for x in g:
        blocks.append([float(x), 1.0])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            m2, n2 = blocks.pop()
            m1, n1 = blocks[-1]
            blocks[-1] = [(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2]
    return np.concatenate([np.full(int(n), m) for m, n in blocks]) if blocks else g


def pbm_continuation(examination) -> np.ndarray:
    r"""The continuation probabilities $c_k = \hat g_{k+1} / \hat g_k$, k = 1..D-1, of the user whose
    examination probabilities a PBM fitted: M1–M4 use them as an empirical stopping distribution,
    $P(k) = (1 - c_k) \prod_{i<k} c_i$ (`stop_probabilities`), i.e.

    With $\hat g$ the non-increasing fit of the examination probabilities
    (`monotone_examination`), scaled so that $\hat g_1 = 1$, the user
    examines rank k with probability $\hat g_k$ and stops at k with
    probability $P(k) = \hat g_k - \hat g_{k+1}$.  Below the log's deepest
    rank D the last observed continuation $\rho = \hat g_D / \hat g_{D-1}$
    is kept (a geometric tail $\hat g_{D+j} = \hat g_D \rho^j$, as the
    package's empirical Carterette fits repeat their last continuation), so
    $P(k) = \hat g_k (1 - \rho)$ for k >= D.  The scaling is the PBM's
    own indeterminacy: $g_r \alpha_{qd}$ is unchanged when every
    $g_r$ is multiplied and every attractiveness divided by one constant,
    so only the ratios $g_k / g_1$ are identified.

    Parameters
    ----------
    examination : array_like of float
        The PBM's ``"examination"`` ($g_1..g_D$).

    Returns
    -------
    numpy.ndarray
        $c_1..c_{D-1}$ ($c_{D-1}$ is kept below rank D).

    Raises
    ------
    ValueError
        If the examination probabilities are empty, not finite or all 0.
    """
    g = np.asarray(examination, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError("field 'examination' must hold finite probabilities, one per rank (a PBM fit)")
    g = monotone_examination(g)
    if g[0] <= 0:
        raise ValueError("field 'examination' is 0 at rank 1: the PBM user examines nothing")
    return np.divide(g[1:], g[:-1], out=np.zeros(g.size - 1), where=g[:-1] > 0)


def stop_by_grade(fit) -> dict[int, float]:
    r"""The probability that the user stops at an examined document of each grade: a DBN, SDBN or CM fit
    with qrels (Chapelle & Zhang, WWW 2009; Chapelle et al., CIKM 2009).

    The DBN user examines rank 1; at an examined document of grade g they click
    with probability $a(g)$ (``attractiveness_by_grade``), are satisfied
    after a click with probability $s(g)$ (``satisfaction_by_grade``) and
    then stop; otherwise they go on to the next rank with probability
    $\gamma$ (``continuation``) and abandon with $1-\gamma$.  So,
    with $r(g) = a(g)\,s(g)$,

    $$
    h(g) = P(\text{stop at } k \mid \text{examine } k) = 1 - \gamma\,(1 - r(g_k)),\qquad
    P(k) = h(g_k) \prod_{j<k} \gamma\,(1 - r(g_j)).
    $$

    SDBN is $\gamma = 1$, where $P(k) = r(g_k)\prod_{j<k}(1 - r(g_j))$ is
    ERR's distribution with $R = r(g)$; the cascade model (CM) is
    $\gamma = 1, s = 1$, so $h = a(g)$.

    Parameters
    ----------
    fit : FamilyFit
        A ``clickmodel`` fit of DBN, SDBN or CM with the by-grade parameters.

    Returns
    -------
    dict of int to float
        $h(g)$ per grade.

    Raises
    ------
    ValueError
        For another model, or one fitted without qrels (no by-grade parameters).
    """
    model, p = model_name(fit), fit.params
    if model not in _BY_GRADE_FIELDS:
        raise ValueError(f"a {model} fit has no stopping probability per grade (DBN, SDBN and CM fitted with "
                         "qrels do)")
    for n in _BY_GRADE_FIELDS[model]:
        if not p.get(n):
            raise ValueError(f"field {n!r} is missing or empty: a {model} fit becomes a user model of the measures "
                             "only through its parameters per relevance grade (fit it with qrels)")
    a = {int(k): v for k, v in p["attractiveness_by_grade"].items()}
    s = {int(k): v for k, v in p["satisfaction_by_grade"].items()} if model != "CM" else dict.fromkeys(a, 1.0)
    gamma = 1.0 if model in ("SDBN", "CM") else p["continuation"]
    if set(a) != set(s):
        raise ValueError(f"fields 'attractiveness_by_grade' and 'satisfaction_by_grade' name different grades "
                         f"({sorted(a)} and {sorted(s)})")
    out = {}
    for g in sorted(a):
        values = (a[g], s[g], gamma)
        if not all(is_number(v) and math.isfinite(v) for v in values):
            raise ValueError(f"grade {g}: attractiveness {a[g]!r}, satisfaction {s[g]!r}, continuation {gamma!r}; "
                             "a measure needs finite numbers")
        out[g] = 1.0 - float(gamma) * (1.0 - float(a[g]) * float(s[g]))
    return out


#: why a UBM is not a Markov Precision kernel (docs/user-model-framework.md, "Click models as user models")
UBM_NOT_MP = ("a UBM fit is not an MP kernel: MP's user is a Markov chain on ranks that never stops, moving from i "
              "to j with probability alpha(i,j)/sum_k alpha(i,k), and MP needs its stationary distribution (moves "
              "back as well as forward); the UBM user makes one top-down pass and stops, and the chance that the "
              "next click after rank i is at j, g[j][i] a_j prod_{i<s<j} (1 - g[s][i] a_s), depends on every "
              "document between i and j, not on (i, j) alone")


def is_carterette_user_model(fit) -> bool:
    """Whether a ``clickmodel`` fit can be a stopping distribution of M1–M4: a PBM, or a DBN, SDBN or CM with its
    parameters per grade."""
    if getattr(fit, "family", None) != "clickmodel":
        return False
    model, p = model_name(fit), fit.params if isinstance(fit.params, dict) else {}
    if model == "PBM":
        return "examination" in p
    return model in _BY_GRADE_FIELDS and all(p.get(n) for n in _BY_GRADE_FIELDS[model])


def why_not_a_user_model(click, family: str, fits=()) -> str:
    """The end of the error for a measure whose fit file (or registered name) has only ``click`` as its best
    click model and ``click`` cannot serve ``family``'s measure: why, and which of ``fits`` could.

    Parameters
    ----------
    click : FamilyFit or ClickModelFit
        The best click model.
    family : str
        The measure's family.
    fits : sequence
        The file's fits (empty for a registered name).

    Returns
    -------
    str
        Starting with ``'; '``.
    """
    model = model_name(click)
    if family == "mp" and model == "UBM":
        return f"; {UBM_NOT_MP}"
    out = (f"; its best click model ({model}) is not a user model of this measure (M1-M4 take a PBM, or a DBN, "
           "SDBN or CM fitted with qrels)")
    usable = [f"fit {i} ({model_name(f)})" for i, f in enumerate(fits) if is_carterette_user_model(f)]
    if family == "carterette" and usable:
        out += (f"; the file's {', '.join(usable)} can be: save it alone (save_fit(PATH, load_fit(FILE).fits[i])) "
                "or name it as \"best\": {\"carterette\": i}")
    return out


# ---------------------------------------------------------------------------
# The parameter schema of every family
# ---------------------------------------------------------------------------

class Field(NamedTuple):
    """One field of a fit (or of its parameters): what it must be, in words, and the test of a value."""

    what: str
    ok: Callable[[object], bool]


def check_fields(values: dict, rules, unknown: str) -> None:
    """Every field of ``values`` known to ``rules`` (a field's name -> its `Field` or None) and valid: else a
    ValueError naming the first field that is not (``unknown`` ends the message for an unknown one)."""
    for name, value in values.items():
        field = rules(name)
        if field is None:
            raise ValueError(f"unknown field {name!r}{unknown}")
        if not field.ok(value):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
            raise ValueError(f"field {name!r} is {shown}; it must be {field.what}")


def _number(what: str, ok=lambda v: True) -> Field:
    # null is what save_fit writes for a non-finite number (strict JSON): valid in a file, refused when used
    return Field(f"{what} (or null)", lambda v: v is None or (is_number(v) and (not math.isfinite(v) or ok(v))))


def _choice(*values) -> Field:
    return Field("one of " + ", ".join(map(repr, values)), lambda v: isinstance(v, str) and v in values)


def _list(item: Field) -> Field:
    return Field(f"a list, each item {item.what}",
                  lambda v: isinstance(v, list) and all(map(item.ok, v)))


#: a count: an integer >= 0
COUNT = Field("an integer >= 0", lambda v: is_number(v) and isinstance(v, int) and v >= 0)
_PROB = _number("a probability in [0, 1]", lambda v: 0 <= v <= 1)
#: a number, or null (a non-finite number, as written in a fit file)
NUMBER = _number("a number")
_NONNEG = _number("a number >= 0", lambda v: v >= 0)
_WEIGHTS = Field("an object mapping signed displacements ('+1', '-2', ...) to weights >= 0 (or null)",
                  lambda v: isinstance(v, dict) and all(re.fullmatch(r"[+-][0-9]+", k) and _NONNEG.ok(w)
                                                        for k, w in v.items()))


_BY_GRADE = Field("an object mapping grades ('0', '1', ...) to probabilities in [0, 1] (or null)",
                   lambda v: isinstance(v, dict) and all(re.fullmatch(r"-?[0-9]+", str(k)) and _PROB.ok(w)
                                                         for k, w in v.items()))
_EXAMINATION = Field("a list of probabilities in [0, 1] (PBM: one per rank) or of such lists (UBM: one row per rank, "
                      "one column per rank of the previous click, 0 = none)",
                      lambda v: isinstance(v, list) and (all(map(_PROB.ok, v)) or all(map(_list(_PROB).ok, v))))


#: family -> {field: what it must be} (``continue_<k>``: ``continue_1``, ``continue_2``, ...)
PARAM_SCHEMAS = {
    "mp": {"connectivity": _choice("GL", "LO"), "states": _choice("AD", "OR"),
           "kernel": _choice("ID", "LID", "nonparametric"), "decay": NUMBER, "weights": _WEIGHTS,
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
                                    lambda v: isinstance(v, dict) and all(map(_PROB.ok, v.values()))),
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



def check_params(fit) -> None:
    """Check a fit's ``params`` against its family's schema (`PARAM_SCHEMAS`).

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
    check_fields(params, lambda n: schema.get("continue_<k>" if re.fullmatch(r"continue_[0-9]+", str(n)) else n),
                 f" in the {fit.family} params; the fields are {', '.join(schema)}")
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


# ---------------------------------------------------------------------------
# From fitted parameters to measure parameters
# ---------------------------------------------------------------------------

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
        far_fwd, far_bwd = w[max(w)], w[min(w)]

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
    # what each browsing model reads (check_params made sure the fields it needs are there)
    keys = {"DFBM": (), "SFBM": ("p", "p_rel"), "RWBM": ("p", "q", "p_rel", "q_rel")}[p["browse"]]
    return {"browse": p["browse"], **{k: float(p[k]) for k in keys if k in p}}


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

    ``RBP`` $(1-\theta)\theta^{k-1}$; ``DCG``
    $1/\log_2(k+1) - 1/\log_2(k+2)$; ``RR`` $1/(k(k+1))$;
    ``empirical`` $P(k) = (1-c_k)\prod_{i<k} c_i$ from the fitted
    continuation probabilities $c_k$ (the last one repeated beyond them).

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
    """What a click model gives M1–M4: a PBM's continuation probabilities (``pbm_continuation``) as an empirical
    stopping distribution, or a stopping probability per grade (``stop_by_grade``: DBN, SDBN, CM); a UBM is not a
    user model of any measure (`UBM_NOT_MP`)."""
    model = model_name(fit)
    if model == "PBM":
        cont = pbm_continuation(fit.params["examination"])
        return {"stop_probabilities": lambda n: stop_probabilities("empirical", {"continuation": cont}, int(n))}
    if model == "UBM":
        raise ValueError(UBM_NOT_MP + "; nor a stopping distribution of M1-M4 (its examination depends on the "
                         "previous click, which a measure over qrels does not have)")
    return {"stop_by_grade": stop_by_grade(fit)}


def _tbg(fit) -> dict:
    return {k: float(fit.params[k]) for k in ("pc_rel", "pc_nonrel", "halflife", "t_summary") if k in fit.params}


def measure_parameters(fit) -> dict:
    """What the family's measure takes (shapes documented in
    [`FamilyFit.measure_parameters`][irmeasures_markov.calibration.FamilyFit.measure_parameters]).

    The fit is checked first (`check_params`): a value outside its
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
    check_params(fit)   # an unknown family is refused here, naming the families
    _finite(fit, "decay", "p", "q", "p_rel", "q_rel", "theta", "pc_rel", "pc_nonrel", "halflife", "t_summary")
    return {"mp": _mp, "ph": _ph, "carterette": _carterette, "tbg": _tbg, "clickmodel": _clickmodel}[fit.family](fit)
