r"""The stopping distributions of Carterette's user-model measures: names, tables and registration.

Carterette, "System Effectiveness, User Models, and User Utility: A Conceptual
Framework for Investigation", SIGIR 2011 (docs/user-model-framework.md).  A
stopping distribution gives $P(k)$, the probability that the user stops
at rank $k$, and $F(k) = \sum_{i \ge k} P(i)$.  Static distributions
(RBP, DCG, RR and the registered ones) depend on the rank only; dynamic ones
(ERR, AP, RRR) on the relevant documents too.  A *graded* dynamic distribution
([`register_graded_distribution`][irmeasures_markov.measures.register_graded_distribution], e.g. a DBN fitted to a click
log) gives
the probability of stopping at an examined document per relevance grade; the measures under it read the
grades, so their kernel (`graded_user_model_batch`) is here, beside the distribution.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._registry import RegisteredNames, Registry
from irmeasures_markov._util._segments import segment_cumsum, segment_sum
from irmeasures_markov.io._content import registration_fingerprint

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from irmeasures_markov.ranking._prepared import RelevanceBatch


__all__ = [
    "MODELS", "STATIC_STOP", "DYNAMIC_STOP", "DISTRIBUTIONS", "STATIC_DISTRIBUTIONS", "DYNAMIC_DISTRIBUTIONS",
    "DEFAULT_THETA", "F_CHOICES", "PAPER_MEASURES", "NAMED_MEASURES", "CUSTOM_DISTRIBUTIONS",
    "DISTRIBUTION_REGISTRY", "REGISTRATION_CACHES", "register_distribution", "distribution_fingerprint",
    "DistributionChoices", "is_static", "default_norm", "check_arguments", "static_tables", "static_table",
    "static_prefix", "theta_or_default", "GradedStopping", "register_graded_distribution", "is_graded",
    "stopping_distribution", "graded_user_model_batch",
]

MODELS = ("M1", "M2", "M3", "M4")
#: (P(k), F(k)) of the built-in static distributions at the ranks k (float64) and θ
STATIC_STOP = {
    "RBP": lambda k, theta: ((1.0 - theta) * theta ** (k - 1), theta ** (k - 1)),
    "DCG": lambda k, theta: (1.0 / np.log2(k + 1.0) - 1.0 / np.log2(k + 2.0), 1.0 / np.log2(k + 1.0)),
    "RR": lambda k, theta: (1.0 / (k * (k + 1.0)), 1.0 / k),
}
#: P(k) of the dynamic distributions at a relevant rank k (0 elsewhere), from θ, R_k and RB
DYNAMIC_STOP = {
    "ERR": lambda theta, count, rb: theta * (1.0 - theta) ** (count - 1.0),
    "AP": lambda theta, count, rb: 1.0 / rb,
    "RRR": lambda theta, count, rb: 1.0 / (count * (count + 1.0)),
}
STATIC_DISTRIBUTIONS = tuple(STATIC_STOP)
DYNAMIC_DISTRIBUTIONS = tuple(DYNAMIC_STOP)
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
    if callable(stop_probabilities):
        return _register(key, stop_probabilities, registration_fingerprint(stop_probabilities))
    table = np.asarray(stop_probabilities, dtype=np.float64).ravel()
    _stop_table_iv(table, name)

    def padded(n):  # P = 0 past the table's end
        return np.concatenate([table[:n], np.zeros(max(0, n - table.size))])
    return _register(key, padded, registration_fingerprint(table))


def _register(key, stopping, fingerprint):
    _DISTRIBUTION_FINGERPRINTS[key] = fingerprint
    DISTRIBUTION_REGISTRY.register(key, stopping)
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


def _stop_table_iv(p: np.ndarray, name) -> None:
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"stopping distribution {name!r}: probabilities must be finite and >= 0")
    if p.sum() > 1.0 + 1e-9:
        raise ValueError(f"stopping distribution {name!r}: probabilities sum to {p.sum()!r} > 1")


class GradedStopping:
    r"""A dynamic stopping distribution from the probability $h(g)$ of stopping at an examined document
    of grade g: $F(k) = \prod_{j<k} (1 - h(g_j))$ (the user reaches rank k),
    $P(k) = h(g_k)\,F(k)$.

    A grade the table does not list takes the value of the nearest listed grade below it (the lowest listed
    grade for grades below them all).

    Parameters
    ----------
    table : mapping of int to float
        $h(g)$ per grade, probabilities in [0, 1].
    """

    def __init__(self, table: Mapping[int, float]):
        items = sorted((int(g), float(h)) for g, h in dict(table).items())
        if not items:
            raise ValueError("a graded stopping distribution needs a probability for at least one grade")
        self.grades = np.array([g for g, _ in items], dtype=np.int64)
        self.stop = np.array([h for _, h in items], dtype=np.float64)
        if not np.all(np.isfinite(self.stop)) or np.any((self.stop < 0) | (self.stop > 1)):
            raise ValueError(f"graded stopping distribution: probabilities must be in [0, 1], got {dict(items)}")

    def hazard(self, grades: ArrayLike) -> np.ndarray:
        """$h(g)$ of each grade.

        Parameters
        ----------
        grades : array_like of int
            Relevance grades.

        Returns
        -------
        numpy.ndarray
            The stopping probability after a document of each grade.
        """
        i = np.searchsorted(self.grades, np.asarray(grades, dtype=np.int64), side="right") - 1
        return self.stop[np.maximum(i, 0)]


def register_graded_distribution(name: str, stop_by_grade: GradedStopping | Mapping[int, float]) -> str:
    """Give a graded dynamic stopping distribution ([`GradedStopping`][irmeasures_markov.measures.GradedStopping]) a
    name usable as ``dist`` of the
    M-measures (which read the grades from the qrels).  Returns the name as stored (upper-case).

    Parameters
    ----------
    name : str
        The distribution's name (stored upper-case; not a built-in distribution).
    stop_by_grade : mapping of int to float
        The probability of stopping at an examined document of each grade.

    Returns
    -------
    str
    """
    key = DISTRIBUTION_REGISTRY.key(name)
    graded = GradedStopping(stop_by_grade)
    return _register(key, graded, registration_fingerprint(graded.grades, graded.stop))


def is_graded(dist: str) -> bool:
    """Whether ``dist`` names a graded dynamic distribution
    ([`register_graded_distribution`][irmeasures_markov.measures.register_graded_distribution])."""
    return isinstance(CUSTOM_DISTRIBUTIONS.get(dist), GradedStopping)


def graded_user_model_batch(batch: RelevanceBatch, model: str, dist: str, *, f: str = "1/k",
                            norm: bool | None = None, cutoff: int | None = None) -> np.ndarray:
    r"""M1–M4 under a graded dynamic stopping distribution for every query of a batch (its grades, cut rankings).

    A [`GradedStopping`][irmeasures_markov.measures.GradedStopping] distribution stops the
    user at an examined document of grade g with probability $h(g)$, so on a ranking with grades
    $g_1..g_N$

    $$
    F(k) = \prod_{j<k} (1 - h(g_j)), \qquad P(k) = h(g_k)\, F(k).
    $$

    $F(k)$ is the probability of reaching rank k (whatever lies below the ranking), as for the static
    distributions; $P(k)$ is not zero at non-relevant ranks (the user may abandon there).  With binary
    relevance $a_k$ (grade >= ``rel``), $R_k = \sum_{i\le k} a_i$, sums over the ranks of the
    ranking: M1 $\sum_k a_k P(k)$, M2 $\sum_k a_k F(k)$ (relevant documents examined),
    M3 $\sum_k f(k) P(k)$ with f = 1/k or k, M4 $\sum_k P(k) R_k / k$.  Unjudged documents
    and grades <= 0 read as grade 0; RB = 0 gives 0.  There is no ``norm``: the ranking that maximises
    these values is not the grade-sorted one (a document that satisfies stops the user before the relevant
    documents below it).  docs/user-model-framework.md, "Click models as user models".

    Parameters
    ----------
    batch : RelevanceBatch
        The run's rankings (already cut at the cutoff), their grades and relevance.
    model : {'M1', 'M2', 'M3', 'M4'}
    dist : str
        A graded distribution's registered name.
    f : {'1/k', 'k'}
        M3's effort.
    norm : bool, optional
        Must be None or False.
    cutoff : int, optional
        Checked only: the batch is already cut.

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.

    Raises
    ------
    ValueError
        For ``norm=True``.
    """
    check_cutoff(cutoff, "`cutoff`")
    if norm:
        raise ValueError(f"norm is not available with the graded stopping distribution {dist!r}: the ranking "
                         "that maximises it is not the grade-sorted one (give norm=False)")
    check_arguments(model, dist, None, f, graded=True)
    offsets = np.asarray(batch.offsets, dtype=np.int64)
    h = CUSTOM_DISTRIBUTIONS[dist].hazard(np.maximum(np.asarray(batch.grades, dtype=np.int64), 0))
    with np.errstate(divide="ignore"):
        log_go_on = np.log1p(-h)                       # -inf where h = 1: nobody goes past that rank
    through = segment_cumsum(log_go_on, offsets)       # log P(past rank k)
    before = np.zeros_like(through)
    if before.size:
        before[1:] = through[:-1]
        before[offsets[:-1][np.diff(offsets) > 0]] = 0.0   # nobody is stopped before rank 1
    reach = np.exp(before)
    p = h * reach
    a = np.asarray(batch.relevant, dtype=bool)
    ranks = batch.ranks
    if model == "M1":
        terms = np.where(a, p, 0.0)
    elif model == "M2":
        terms = np.where(a, reach, 0.0)
    elif model == "M3":
        terms = p / ranks if f == "1/k" else p * ranks
    else:
        terms = p * segment_cumsum(a.astype(np.int64), offsets) / ranks
    return np.where(np.asarray(batch.recall_base) > 0, segment_sum(terms, offsets), 0.0)





class DistributionChoices(RegisteredNames):
    """The valid ``dist`` values: the six built-in distributions and registered ones."""

    def __init__(self):
        super().__init__(DISTRIBUTIONS, lambda: CUSTOM_DISTRIBUTIONS)


def is_static(dist: str) -> bool:
    return dist in STATIC_DISTRIBUTIONS or (dist in CUSTOM_DISTRIBUTIONS and not is_graded(dist))


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
        True for M2, and for M3 with ``dist='AP'``; False for a graded distribution (no ideal ranking).
    """
    return not is_graded(dist) and (model == "M2" or (model == "M3" and dist == "AP"))


def check_arguments(model: str, dist: str, theta: float | None, f: str, graded: bool = False) -> None:
    """Check the arguments of a measure M1–M4 (shared by the functional API and the batch kernel).

    Raises
    ------
    ValueError
        Naming the argument and its allowed values: ``model`` not in [`MODELS`][irmeasures_markov.measures.MODELS],
        ``dist``
        neither built in nor registered, ``theta`` outside (0, 1) or given to a distribution
        without one, ``f`` not ``'1/k'`` or ``'k'`` or given to a model other than M3.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {list(MODELS)}")
    if dist not in DISTRIBUTIONS and dist not in CUSTOM_DISTRIBUTIONS:
        raise ValueError(f"unknown stopping distribution dist={dist!r}; choose one of {list(DistributionChoices())}")
    if is_graded(dist) and not graded:
        raise ValueError(f"dist={dist!r} stops by relevance grade: evaluate it with the M-measures over qrels "
                         f"(e.g. ir_measures.calc_aggregate([irmeasures_markov.M1(dist={dist!r})], qrels, run)), "
                         "not on binary relevance")
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
    if dist in STATIC_STOP:
        p, tail = STATIC_STOP[dist](np.arange(1, n + 1, dtype=np.float64), theta)
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
    """`static_tables` for at least ``n`` ranks, at a power-of-two size (few cache entries)."""
    return static_tables(dist, theta, 1 << max(4, int(n - 1).bit_length()))  # few distinct cache entries


@lru_cache(maxsize=64)
def static_prefix(dist: str, theta: float | None, weight: str, n: int) -> np.ndarray:
    """C(m) = Σ_{k≤m} P(k)·w(k), m = 0..n, for w(k) = 1/k or k."""
    p, _ = static_tables(dist, theta, n)
    k = np.arange(1, n + 1, dtype=np.float64)
    out = np.concatenate(([0.0], np.cumsum(p / k if weight == "1/k" else p * k)))
    out.flags.writeable = False
    return out


def theta_or_default(dist: str, theta: float | None) -> float | None:
    """``theta`` as a float, or the distribution's default ([`DEFAULT_THETA`][irmeasures_markov.measures.DEFAULT_THETA];
    None without a parameter)."""
    return float(theta) if theta is not None else DEFAULT_THETA.get(dist)


#: caches of tables built from a distribution, cleared when a name is registered again (the kernel adds its own)
REGISTRATION_CACHES: list = [static_tables, static_prefix]


def stopping_distribution(relevance: ArrayLike, dist: str = "RBP", theta: float | None = None,
                          recall_base: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """P(k) and F(k) (k = 1..N) of a stopping distribution on one ranking (Carterette, SIGIR 2011).

    For static distributions F is the infinite tail Σ_{i≥k} P(i); for dynamic
    ones (ERR, AP, RRR) it is the suffix sum over the ranking.

    Parameters
    ----------
    relevance : array_like of 0/1
        Binary relevance in rank order.
    dist : str
        A built-in distribution ([`DISTRIBUTIONS`][irmeasures_markov.measures.DISTRIBUTIONS]) or a registered one.
    theta : float, optional
        The parameter of RBP and ERR (default [`DEFAULT_THETA`][irmeasures_markov.measures.DEFAULT_THETA]).
    recall_base : int, optional
        RB, needed for ``dist='AP'`` (default: the relevant documents in the ranking).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(P, F)`` for ranks 1..N.

    Raises
    ------
    ValueError
        For an unknown distribution, a bad ``theta``, non-binary relevance or a too small ``recall_base``.
    """
    a = as_binary_relevance(relevance)
    check_arguments("M1", dist, theta, "1/k")
    theta, rb, n = theta_or_default(dist, theta), checked_recall_base(a, recall_base), a.size
    if is_static(dist):
        p, tail = static_table(dist, theta, n)
        return p[:n].copy(), tail[:n].copy()
    p, at = np.zeros(n), a > 0
    p[at] = DYNAMIC_STOP[dist](theta, np.cumsum(a)[at], rb)
    return p, np.cumsum(p[::-1])[::-1]


def checked_recall_base(a: np.ndarray, recall_base: int | None) -> int:
    """RB of one ranking: ``recall_base`` checked against its relevant documents, or their number.

    Parameters
    ----------
    a : numpy.ndarray
        Binary relevance in rank order.
    recall_base : int, optional
        The query's relevant documents (default: those in the ranking).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``recall_base`` is not an integer >= the relevant documents in the ranking.
    """
    if recall_base is None:
        return int(a.sum())
    if isinstance(recall_base, bool) or int(recall_base) != recall_base or recall_base < a.sum():
        raise ValueError(f"recall_base must be an integer >= the relevant documents in the ranking "
                         f"({int(a.sum())}), got {recall_base!r}")
    return int(recall_base)


def as_binary_relevance(relevance: ArrayLike) -> np.ndarray:
    """Relevance in rank order as a float64 vector of 0/1.

    Parameters
    ----------
    relevance : array_like of 0/1
        Binary relevance in rank order.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If a value is neither 0 nor 1.
    """
    a = np.asarray(relevance, dtype=np.float64).ravel()
    if a.size and not np.all((a == 0) | (a == 1)):
        raise ValueError("relevance must be binary (0/1) in rank order")
    return a


#: static distributions whose tail vanishes too slowly to fill ranks up to a negligible remaining mass
HEAVY_TAILS = ("DCG", "RR")


def negligible_depth(model: str, dist: str, theta: float | None = None, f: str = "1/k", tol: float = 1e-17,
                     max_ranks: int = 1 << 20) -> int | None:
    """The rank L past which relevant documents at every rank add less than ``tol`` to a static model.

    What ranks past L can add: F(L+1) for M1, M4 and M3 with f = 1/k (their
    per-rank terms are at most P(k)); Σ_{k>L} F(k) for M2; Σ_{k>L} k P(k) for
    M3 with f = k.

    Parameters
    ----------
    model : {'M1', 'M2', 'M3', 'M4'}
        The model.
    dist : str
        A static distribution.
    theta : float, optional
        RBP's θ (default 0.8).
    f : {'1/k', 'k'}
        M3's effort.
    tol : float
        What the ranks past L may add at most.
    max_ranks : int
        Give up beyond this rank.

    Returns
    -------
    int or None
        L, or None when no L <= ``max_ranks`` is deep enough (DCG, RR, slowly vanishing registered tails).
    """
    if dist in HEAVY_TAILS:
        return None
    theta = theta_or_default(dist, theta)
    steep = model == "M2" or (model == "M3" and f == "k")
    if dist == "RBP":
        def rest(depth):
            mass = theta ** depth
            if model == "M2":
                return mass / (1.0 - theta)
            return mass * (depth + 1.0 / (1.0 - theta)) if steep else mass
        depth = max(0, int(np.floor(np.log(tol) / np.log(theta))) - 1)
        while rest(depth) >= tol and depth <= max_ranks:
            depth += 1
        return depth if depth <= max_ranks else None
    n = 1 << 10
    while n <= max_ranks:
        p, _ = static_tables(dist, theta, n)
        tail = np.cumsum(p[::-1])[::-1]                         # F(k) within the table
        beyond = max(0.0, 1.0 - float(p.sum()))                 # F(n+1): what the table leaves
        if beyond <= n * np.finfo(np.float64).eps:              # within the sum's rounding: none
            beyond = 0.0
        tail = tail + beyond
        if not steep:
            hit = np.flatnonzero(np.append(tail, beyond) < tol)   # F(L+1) at index L
            if hit.size:
                return int(hit[0])
        elif beyond == 0.0:                                     # finite support: every term is in the table
            terms = tail if model == "M2" else p * np.arange(1, n + 1)
            rest = np.append(np.cumsum(terms[::-1])[::-1], 0.0)   # Σ_{k>L} at index L
            return int(np.flatnonzero(rest < tol)[0])
        n <<= 1
    return None
