"""P@H parameters: names, validation, and the constants of the endless tail (docs/stopping-time.md)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from irmeasures_markov.core._gains import GAINS

__all__ = ["BROWSING_MODELS", "USERS", "Prob", "k_infinite", "rbp_normaliser", "check_prob", "check_choice",
           "prob_array", "tail_constants", "user_defaults", "model_params_iv"]

BROWSING_MODELS = ("DFBM", "SFBM", "RWBM")
USERS = ("P", "AP", "RBP", "DCG", "ERR")

Prob = float | Sequence[float] | np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray]


def check_prob(name: str, value: object) -> float:
    """A probability given as a number, as ``float``.

    Raises
    ------
    TypeError
        If ``value`` is not a number (``bool`` is refused), naming the parameter ``name``.
    ValueError
        If it lies outside [0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"`{name}` must be a number in [0, 1], got {value!r}.")
    if not (0.0 <= float(value) <= 1.0):
        raise ValueError(f"`{name}` must be in [0, 1], got {value!r}.")
    return float(value)


def check_choice(name: str, value: object, choices: tuple) -> None:
    """One message for a parameter outside its two or so ``choices`` (the model, the batch path, the plugin)."""
    if value not in choices:
        raise ValueError(f"`{name}` must be {' or '.join(map(repr, choices))}, got {value!r}.")


def prob_array(name: str, value: Prob, ranks: np.ndarray, grades: np.ndarray, n: int) -> np.ndarray | None:
    """A per-rank probability (array or callable of ``(ranks, grades)``) as ``n`` floats; ``None`` for a scalar.

    Raises
    ------
    ValueError
        If the array has not ``n`` values or a value lies outside [0, 1].
    """
    if callable(value):
        arr = np.asarray(value(ranks, grades), dtype=np.float64)
        arr = np.broadcast_to(arr, (n,)).copy()
    elif np.ndim(value) == 0:
        return None
    else:
        arr = np.asarray(value, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"`{name}` has {arr.size} values for a ranking of {n} documents.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"`{name}` must lie in [0, 1] at every rank.")
    return arr


def k_infinite(p: float, q: float) -> float:
    r"""$K(p, q, \infty) = (2p - 1 + \sqrt{1-4pq}) / (2p(1-p-q))$: expected
    visits of an endless homogeneous random walk started at rank 1 (backward at
    rank 1 stops).  $K(p, 0, \infty) = 1/(1-p)$.

    Parameters
    ----------
    p : float
        forward probability, in [0, 1].
    q : float
        backward probability, in [0, 1], with p + q < 1.

    Returns
    -------
    float
        $K(p, q, \infty)$.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is not a probability, or p + q >= 1.
    """
    p, q = check_prob("p", p), check_prob("q", q)
    if p + q >= 1:
        raise ValueError("K(p, q, inf) needs p + q < 1 (the user must stop with positive probability).")
    if p == 0:
        return 1.0
    return (2 * p - 1 + math.sqrt(1 - 4 * p * q)) / (2 * p * (1 - p - q))


def tail_constants(p: float, q: float) -> tuple[float, float]:
    """(u, T) of an endless homogeneous tail entered from its left end.

    u = P(ever step back out of the tail), T = expected documents visited in the
    tail before leaving it (stop or step back)."""
    if p + q >= 1:
        raise ValueError("tail='inf' needs p + q < 1 for non-relevant documents "
                         "(otherwise the user may never stop).")
    u = 0.0 if p == 0 else (1 - math.sqrt(1 - 4 * p * q)) / (2 * p)
    return u, 1.0 / (1 - p * (1 + u))


def rbp_normaliser(p: float, n: int | None = None) -> float:
    """$K(p, N) = (1-p^N)/(1-p)$, or $1/(1-p)$ for ``n=None`` (N = ∞).

    Parameters
    ----------
    p : float
        RBP persistence, in [0, 1].
    n : int or None
        ranking depth N (None: infinite).

    Returns
    -------
    float
        $K(p, N)$ (N when p = 1).

    Raises
    ------
    ValueError
        If ``p`` is not a probability, or p = 1 with ``n=None``.
    """
    p = check_prob("p", p)
    if n is None:
        if p >= 1:
            raise ValueError("K(p, inf) needs p < 1.")
        return 1.0 / (1.0 - p)
    return float(n) if p == 1 else (1 - p ** n) / (1 - p)


def user_defaults(user: str) -> tuple[str, str, int]:
    """(browsing model, f, order) that the user model ``user`` (one of
    [`USERS`][irmeasures_markov.measures.stopping_time.USERS]) fixes."""
    return {"P": ("DFBM", "h", 1), "AP": ("SFBM", "h", 1), "RBP": ("SFBM", "h", 2),
            "DCG": ("SFBM", "1", 2), "ERR": ("SFBM", "h", 1)}[user]


def _given(value, default, flag):
    """Whether a parameter counts as given: as the plugin says (``flag``), else when not at its default."""
    if flag is not None:
        return bool(flag)
    return callable(value) or np.ndim(value) != 0 or value != default


def _unused_params(*, p, q, p_rel, q_rel, loss, top, tail, p_given, q_given):
    """Names of the browsing parameters given to a model that fixes its own browsing."""
    return sorted(name for name, given in (("p", _given(p, 0.8, p_given)), ("q", _given(q, 0.0, q_given)),
                                           ("p_rel", p_rel is not None), ("q_rel", q_rel is not None),
                                           ("loss", _given(loss, 0.0, None)), ("top", top != "stop"),
                                           ("tail", tail != "none")) if given)


def model_params_iv(*, browse: str | None, p: Prob, q: Prob, p_rel: Prob | None, q_rel: Prob | None, user: str | None,
                    loss: float, f: str | None, order: int | None, top: str, tail: str, gain: str, b: float,
                     p_given: bool | None = None, q_given: bool | None = None) -> dict:
    """Validate and normalise the model parameters (shared by the functional API and the plugin).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values when one is out of range or conflicts with ``user``.
    """
    if user is not None:
        if user not in USERS:
            raise ValueError(f"`user` must be one of {list(USERS)}, got {user!r}.")
        ubrowse, uf, uorder = user_defaults(user)
        if browse is not None and browse != ubrowse:
            raise ValueError(f"user='{user}' is a {ubrowse} model; it conflicts with browse={browse!r}.")
        if order is not None and order != uorder and user not in ("P", "DCG"):
            raise ValueError(f"user='{user}' is defined with order {uorder}; it conflicts with order={order!r}.")
        if f is not None and f != uf:
            raise ValueError(f"user='{user}' uses f='{uf}'; it conflicts with f={f!r}.")
        extras = _unused_params(p=p if user != "RBP" else 0.8, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top,
                                tail=tail if user != "RBP" else "none",
                                p_given=p_given if user != "RBP" else None, q_given=q_given)
        if extras:
            raise ValueError(f"user='{user}' fixes its browsing model; it does not take {extras}.")
        if user == "RBP":
            p = check_prob("p", p)
            if tail == "inf" and p >= 1:
                raise ValueError("user='RBP' with tail='inf' needs p < 1.")
        if user == "DCG" and (isinstance(b, bool) or not isinstance(b, (int, float)) or not b > 1):
            raise ValueError(f"`b` (DCG log base) must be a number > 1, got {b!r}.")
        browse, f, order = ubrowse, uf, uorder if order is None else order
    else:
        browse = "SFBM" if browse is None else browse
        if browse not in BROWSING_MODELS:
            raise ValueError(f"`browse` must be one of {list(BROWSING_MODELS)}, got {browse!r}.")
        if browse == "DFBM":
            used = _unused_params(p=p, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top, tail=tail,
                                  p_given=p_given, q_given=q_given)
            if used:
                raise ValueError(f"browse='DFBM' reads every document (p = 1); it does not take {used}.")
        if browse != "RWBM" and loss != 0:
            raise ValueError("`loss` needs revisits; with browse='SFBM'/'DFBM' nobody revisits a document "
                             "(use browse='RWBM').")
        if tail == "inf":
            varying = [f"`{name}`" for name, v in (("p", p), ("q", q)) if callable(v) or np.ndim(v) != 0]
            if varying:
                raise ValueError(f"tail='inf' needs constant numbers `p` and `q` (the probabilities of the "
                                 f"endless non-relevant tail); {' and '.join(varying)} vary with the rank.")
        for name, v in (("p", p), ("q", q), ("p_rel", p_rel), ("q_rel", q_rel)):
            if v is not None and np.ndim(v) == 0 and not callable(v):
                check_prob(name, v)
        for a, c, label in ((p, q, "p + q"), (p_rel if p_rel is not None else p,
                                              q_rel if q_rel is not None else q, "p_rel + q_rel")):
            if np.ndim(a) == 0 and np.ndim(c) == 0 and not callable(a) and not callable(c) \
                    and float(a) + float(c) > 1 + 1e-12:
                raise ValueError(f"{label} must be <= 1 (the rest is the stop probability), got "
                                 f"{float(a)} + {float(c)}.")
        if browse == "SFBM" and ((np.ndim(q) == 0 and not callable(q) and q != 0)
                                 or (q_rel is not None and np.ndim(q_rel) == 0 and q_rel != 0)):
            raise ValueError("SFBM has no backward moves: q (and q_rel) must be 0; use browse='RWBM'.")
        f = "h" if f is None else f
        order = 2 if order is None else order
    check_choice("f", f, ("h", "1"))
    check_choice("order", order, (1, 2))
    check_choice("top", top, ("stop", "forward"))
    check_choice("tail", tail, ("none", "inf"))
    if tail == "inf" and order == 1 and f == "h":
        raise ValueError("tail='inf' is defined for order 2 only (E[sum g] / E[H]).")
    if gain not in GAINS:
        raise ValueError(f"`gain` must be one of {list(GAINS)}, got {gain!r}.")
    loss = check_prob("loss", loss)
    return dict(browse=browse, p=p, q=q, user=user, loss=loss, f=f, order=order, top=top, tail=tail,
                gain=gain, b=float(b))
