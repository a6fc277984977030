r"""Click models as user models of the measures: what a fitted click model (family ``"clickmodel"``) gives
M1–M4 (docs/user-model-framework.md, "Click models as user models").

- PBM: its examination probabilities, made non-increasing (isotonic regression)
  and scaled to :math:`g_1 = 1`, are a static stopping distribution,
  :math:`P(k) = \hat g_k - \hat g_{k+1}`, with a geometric tail below the log's
  deepest rank (:func:`pbm_continuation`);
- DBN, SDBN, CM fitted with qrels: the probability of stopping at an examined
  document of grade g, :math:`h(g) = 1 - \gamma(1 - a(g)s(g))`, a graded dynamic
  distribution (:func:`stop_by_grade`);
- UBM: not a user model of any measure (:data:`UBM_NOT_MP`).

Per-document attractiveness and satisfaction do not transfer (a measure over
qrels sees grades, not the log's documents); parameters per grade do.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["CLICK_MODEL_NAMES", "is_number", "model_name", "monotone_examination", "pbm_continuation", "stop_by_grade",
           "is_carterette_user_model", "click_model_parameters", "check_click_model", "UBM_NOT_MP",
           "why_not_a_user_model"]

#: the click models a fit file may hold (family "clickmodel"; calibration.click_models fits them)
CLICK_MODEL_NAMES = ("PBM", "CM", "UBM", "DBN", "SDBN")
#: click model -> (params it needs, the dimension of "examination": 1 per rank, 2 per rank and previous click)
_CLICK_REQUIRED = {"PBM": (("examination",), 1), "UBM": (("examination",), 2), "CM": ((), None),
                   "DBN": (("continuation",), None), "SDBN": (("continuation",), None)}


def is_number(v) -> bool:
    """An int or a float, not a bool (a JSON number)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def model_name(fit) -> str:
    """The click model's name: ``FamilyFit.model`` (``ClickModelFit.name``)."""
    return str(getattr(fit, "model", None) or getattr(fit, "name", None) or "")


def check_click_model(fit) -> None:
    """The click-model part of :func:`~.parameters.check_params`: a known model with the params it needs."""
    model = model_name(fit)
    if model not in _CLICK_REQUIRED:
        raise ValueError(f"model {model!r} is not a click model; the click models are {', '.join(CLICK_MODEL_NAMES)}")
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
    (noise at deep ranks); a stopping distribution needs :math:`g_1 \ge g_2 \ge \dots`.
    Runs of violating ranks are replaced by their mean, which keeps the fit's
    overall level (a running minimum would bias every rank after a dip downward).

    Parameters
    ----------
    examination : array_like of float
        :math:`g_1, \dots, g_D`.

    Returns
    -------
    numpy.ndarray
        The non-increasing :math:`\hat g_1 \ge \dots \ge \hat g_D`.
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
    r"""The continuation probabilities :math:`c_k = \hat g_{k+1} / \hat g_k`, k = 1..D-1, of the user whose
    examination probabilities a PBM fitted: M1–M4 use them as an empirical stopping distribution,
    :math:`P(k) = (1 - c_k) \prod_{i<k} c_i` (:func:`~.parameters.stop_probabilities`), i.e.

    With :math:`\hat g` the non-increasing fit of the examination probabilities
    (:func:`monotone_examination`), scaled so that :math:`\hat g_1 = 1`, the user
    examines rank k with probability :math:`\hat g_k` and stops at k with
    probability :math:`P(k) = \hat g_k - \hat g_{k+1}`.  Below the log's deepest
    rank D the last observed continuation :math:`\rho = \hat g_D / \hat g_{D-1}`
    is kept (a geometric tail :math:`\hat g_{D+j} = \hat g_D \rho^j`, as the
    package's empirical Carterette fits repeat their last continuation), so
    :math:`P(k) = \hat g_k (1 - \rho)` for k >= D.  The scaling is the PBM's
    own indeterminacy: :math:`g_r \alpha_{qd}` is unchanged when every
    :math:`g_r` is multiplied and every attractiveness divided by one constant,
    so only the ratios :math:`g_k / g_1` are identified.

    Parameters
    ----------
    examination : array_like of float
        The PBM's ``"examination"`` (:math:`g_1..g_D`).

    Returns
    -------
    numpy.ndarray
        :math:`c_1..c_{D-1}` (:math:`c_{D-1}` is kept below rank D).

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
    with probability :math:`a(g)` (``attractiveness_by_grade``), are satisfied
    after a click with probability :math:`s(g)` (``satisfaction_by_grade``) and
    then stop; otherwise they go on to the next rank with probability
    :math:`\gamma` (``continuation``) and abandon with :math:`1-\gamma`.  So,
    with :math:`r(g) = a(g)\,s(g)`,

    .. math::

        h(g) = P(\text{stop at } k \mid \text{examine } k) = 1 - \gamma\,(1 - r(g_k)),\qquad
        P(k) = h(g_k) \prod_{j<k} \gamma\,(1 - r(g_j)).

    SDBN is :math:`\gamma = 1`, where :math:`P(k) = r(g_k)\prod_{j<k}(1 - r(g_j))` is
    ERR's distribution with :math:`R = r(g)`; the cascade model (CM) is
    :math:`\gamma = 1, s = 1`, so :math:`h = a(g)`.

    Parameters
    ----------
    fit : FamilyFit
        A ``clickmodel`` fit of DBN, SDBN or CM with the by-grade parameters.

    Returns
    -------
    dict of int to float
        :math:`h(g)` per grade.

    Raises
    ------
    ValueError
        For another model, or one fitted without qrels (no by-grade parameters).
    """
    model, p = model_name(fit), fit.params
    if model not in ("DBN", "SDBN", "CM"):
        raise ValueError(f"a {model} fit has no stopping probability per grade (DBN, SDBN and CM fitted with "
                         "qrels do)")
    needed = ("attractiveness_by_grade",) if model == "CM" else ("attractiveness_by_grade", "satisfaction_by_grade")
    for n in needed:
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
    return model in ("DBN", "SDBN", "CM") and bool(p.get("attractiveness_by_grade")) and \
        (model == "CM" or bool(p.get("satisfaction_by_grade")))


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


def click_model_parameters(fit) -> dict:
    """What a click model gives M1–M4: a PBM's continuation probabilities (``pbm_continuation``) or a stopping
    probability per grade (``stop_by_grade``: DBN, SDBN, CM); a UBM is not a user model of any measure
    (:data:`UBM_NOT_MP`)."""
    model = model_name(fit)
    if model == "PBM":
        return {"pbm_continuation": pbm_continuation(fit.params["examination"])}
    if model == "UBM":
        raise ValueError(UBM_NOT_MP + "; nor a stopping distribution of M1-M4 (its examination depends on the "
                         "previous click, which a measure over qrels does not have)")
    return {"stop_by_grade": stop_by_grade(fit)}
