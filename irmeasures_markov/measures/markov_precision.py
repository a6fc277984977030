r"""Markov Precision (MP) and continuous-time Markov Precision (MPcont).

Ferrante, Ferro & Maistro, "Injecting User Models and Time into Precision via
Markov Chains", SIGIR 2014 (docs/markov-precision.md).

A user moves among the ranks of a ranking of length :math:`T` as a Markov chain
with :math:`p_{ij} = \alpha(i,j) / \sum_k \alpha(i,k)` (no self-loops).  Watching
the chain only on the ranks :math:`\mathcal R` of the relevant retrieved
documents gives a chain with invariant distribution :math:`\pi`, and

.. math::

    \mathrm{MP} = \sum_{i \in \mathcal R} \pi_i \,\mathrm{Prec}(i), \qquad
    \mathrm{Prec}(i) = \frac{1}{i}\sum_{m \le i} a_m .

Models ``CONN_STATES_KERNEL``:

* STATES ``AD`` — the chain lives on all ranks and is watched on :math:`\mathcal R`;
  ``OR`` — it lives on :math:`\mathcal R` only (distances are still rank distances).
* CONN ``GL`` — every pair of distinct states is connected; ``LO`` — only
  neighbours in the state list.
* KERNEL, with :math:`d = |i-j|` in ranks: ``ID`` :math:`\alpha = 1/(d+1)`;
  ``LID`` :math:`\alpha = 1/\log_{10}(d+2)`.
* ``UNIFORM`` (paper §4.2): constant transitions among all ranks; with
  ``recall_base`` this is exactly AP.

Why the closed form is exact.  A symmetric :math:`\alpha` makes the chain a
random walk on a weighted graph, which is reversible with
:math:`\pi_i \propto \deg_i = \sum_j \alpha(i,j)`.  The chain watched on a subset
:math:`A` of an irreducible chain has invariant distribution
:math:`\pi|_A / \pi(A)`.  Hence :math:`\mathrm{MP} = \sum_{i\in\mathcal R}\deg_i
\mathrm{Prec}(i) / \sum_{i\in\mathcal R}\deg_i`, and for the AD models
:math:`\deg_i = C(i-1) + C(T-i)` with :math:`C(m) = \sum_{d=1}^m \alpha(d)`, a
prefix sum: O(T) per ranking.  Non-symmetric custom kernels use the general
censored-chain solve (paper eq. 8) in :mod:`irmeasures_markov.core`.

MPcont weights the watched invariant distribution by the mean holding times
:math:`1/\mu_i`: :math:`\tilde\pi_i = (\pi_i/\mu_i)/\sum_{j\in\mathcal R}\pi_j/\mu_j`.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence, Union

import numpy as np

from ..core import censored_transition_matrix, is_irreducible, stationary_distribution, transition_matrix_from_weights
from ..rankings import RelevanceBatch, segment_sum
from ..readers.content import registration_fingerprint
# the degree computations of the closed form live beside this module; these names stay importable from here
from .markov_precision_kernels import KERNELS, _TABLES, _batch_degrees, _kernel_prefix, _kernel_table  # noqa: F401
from ._choices import RegisteredNames
from .markov_precision_kernels import _relevant_view

__all__ = [
    "PAPER_MODELS",
    "MODELS",
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

PAPER_MODELS = tuple(f"{c}_{s}_{k}" for c in ("GL", "LO") for s in ("AD", "OR") for k in ("ID", "LID"))
MODELS = PAPER_MODELS + ("UNIFORM",)

Model = Union[str, Callable, np.ndarray]

#: name -> (kernel, states) for kernels registered with :func:`register_kernel`.
CUSTOM_KERNELS: dict = {}
#: name -> fingerprint of the registered kernel (see :func:`kernel_fingerprint`)
_KERNEL_FINGERPRINTS: dict = {}


def register_kernel(name: str, kernel, states: str = "AD") -> str:
    """Give a custom kernel a model name usable everywhere, e.g. ``MP(model='MYKERNEL')``.

    Parameters
    ----------
    name : str
        Model name (stored upper-case); must not clash with a paper model.
    kernel : callable or (n, n) array
        A weight function ``alpha(i, j)`` of 1-based ranks or a weight matrix
        indexed by rank-1; may be non-symmetric (then the general censored-chain
        solver is used per ranking).
    states : {'AD', 'OR'}
        Whether the chain lives on all ranks or on the relevant ranks only.
    """
    key = str(name).upper()
    if key in MODELS:
        raise ValueError(f"{name!r} is a paper model name; choose another name for a custom kernel.")
    if states not in ("AD", "OR"):
        raise ValueError(f"`states` must be 'AD' or 'OR', got {states!r}.")
    if not callable(kernel):
        kernel = np.asarray(kernel, dtype=np.float64)
        if kernel.ndim != 2 or kernel.shape[0] != kernel.shape[1]:
            raise ValueError(f"A custom kernel matrix must be square, got shape {kernel.shape}.")
    CUSTOM_KERNELS[key] = (kernel, states)
    _KERNEL_FINGERPRINTS[key] = registration_fingerprint(kernel, states)
    return key


def kernel_fingerprint(name: str) -> str:
    """What identifies the kernel registered under ``name``: its weights and states for a weight matrix;
    for a function (whose content cannot be read) this registration, so results are not kept beyond it."""
    key = str(name).upper()
    return _KERNEL_FINGERPRINTS.get(key) or registration_fingerprint(*CUSTOM_KERNELS.get(key, (None,)))


class ModelChoices(RegisteredNames):
    """The valid ``model`` values: the paper models, UNIFORM and registered kernels."""

    def __init__(self):
        super().__init__(MODELS, lambda: CUSTOM_KERNELS)


def parse_model(model: str):
    """Split a model name into ``(connectivity, states, kernel)``; ``UNIFORM`` gives ``('GL','AD','UNIFORM')``."""
    if not isinstance(model, str):
        raise TypeError(f"`model` must be a model name, got {type(model).__name__}.")
    name = model.upper()
    if name == "UNIFORM":
        return "GL", "AD", "UNIFORM"
    parts = name.split("_")
    if len(parts) != 3 or parts[0] not in ("GL", "LO") or parts[1] not in ("AD", "OR") or parts[2] not in KERNELS:
        known = ", ".join(MODELS + tuple(CUSTOM_KERNELS))
        raise ValueError(f"Unknown MP model {model!r}. Known models: {known} "
                         "(or pass a weight function / weight matrix as a custom kernel, or name one "
                         "with register_kernel).")
    return parts[0], parts[1], parts[2]


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

def _relevance_iv(relevance) -> np.ndarray:
    a = np.asarray(relevance)
    if a.ndim != 1:
        raise ValueError(f"`relevance` must be a 1-D sequence of 0/1 values in rank order, got shape {a.shape}.")
    if a.dtype != bool:
        if not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)):
            raise ValueError("`relevance` must hold finite 0/1 values.")
        if not np.all((a == 0) | (a == 1)):
            raise ValueError("`relevance` must be binary (0/1); apply a relevance threshold first.")
    return a.astype(bool)


def _is_rate(value) -> bool:
    return not isinstance(value, (Mapping, bool, np.bool_, str, bytes)) and np.ndim(value) == 0


def _rank_rates_iv(rates: Mapping, T: int, where: str, ranking: str) -> np.ndarray:
    """A ``{rank: mu}`` mapping as the array of rates of ranks 1..T."""
    for k in rates:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"`rates` keys must be 1-based integer ranks{where}, got {k!r}.")
    for k, v in rates.items():
        if not _is_rate(v):
            raise ValueError(f"`rates` maps rank {k}{where} to {v!r}; expected one number per rank.")
    missing = [k for k in range(1, T + 1) if k not in rates]
    if missing:
        raise ValueError(f"`rates` has no rate for rank {missing[0]}{ranking}: every rank of the ranking "
                         f"(1..{T}) needs one.")
    # every given rate is checked, not only those of ranks 1..T: a bad rate is a bad input either way
    for k in sorted(rates):
        mu = float(rates[k])
        if not (np.isfinite(mu) and mu > 0):
            raise ValueError(f"`rates` must be positive and finite; rank {k}{where} has rate {mu!r}.")
    return np.array([float(rates[k]) for k in range(1, T + 1)])


def _rates_iv(rates, T: int, where: str = "", ranking: Optional[str] = None) -> np.ndarray:
    """Rates of ranks 1..T from a sequence or a ``{rank: mu}`` mapping.

    ``where`` names the owner of the rates in value errors, ``ranking`` the
    ranking in coverage errors (defaults to ``where``).
    """
    ranking = where if ranking is None else ranking
    if isinstance(rates, Mapping):
        return _rank_rates_iv(rates, T, where, ranking)
    try:
        mu = np.asarray(rates, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"`rates`{where} must be a sequence of holding rates per rank or a mapping "
                         "{rank: rate}.") from None
    if mu.ndim != 1:
        raise ValueError(f"`rates` must be a 1-D sequence of holding rates per rank{where}.")
    if mu.size < T:
        raise ValueError(f"`rates` gives holding rates for ranks 1..{mu.size} but the ranking{ranking} has "
                         f"{T} documents; every rank needs a rate (evaluate with a cutoff, e.g. MPcont@{mu.size}, "
                         "or supply more rates).")
    mu = mu[:T]
    if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        bad = int(np.flatnonzero(~(np.isfinite(mu) & (mu > 0)))[0])
        raise ValueError(f"`rates` must be positive and finite; rank {bad + 1}{where} has rate {float(mu[bad])!r}.")
    return mu


def rates_per_query(rates) -> bool:
    """True when ``rates`` maps query ids to rates, False for one set of rates for all queries.

    A mapping whose values are numbers is ``{rank: mu}``; one whose values are
    sequences or mappings is ``{qid: rates}``.
    """
    if not isinstance(rates, Mapping):
        return False
    if not rates:
        raise ValueError("`rates` is an empty mapping.")
    scalar = [_is_rate(v) for v in rates.values()]
    if all(scalar):
        return False
    if any(scalar):
        raise ValueError("`rates` mixes numbers and sequences: give {rank: mu} for all queries or "
                         "{qid: rates} per query, not both.")
    return True


def check_rates(rates, where: str = ""):
    """Validate every rate of a rates source once, e.g. at registration; returns a normalised copy.

    ``rates`` is a sequence (ranks 1, 2, ...), a ``{rank: mu}`` mapping or a
    ``{qid: sequence or {rank: mu}}`` mapping.  Query ids become strings, as
    ir_measures reads them.
    """
    if not where and rates_per_query(rates):
        return {str(q): check_rates(v, f" of query {str(q)!r}") for q, v in rates.items()}
    if isinstance(rates, Mapping):
        if not rates:
            raise ValueError(f"`rates`{where} is empty.")
        _rank_rates_iv(rates, 0, where, where)
        return {int(k): float(v) for k, v in rates.items()}
    if isinstance(rates, (str, bytes)) or np.ndim(rates) != 1 or len(rates) == 0:
        raise ValueError(f"`rates`{where} must be a non-empty 1-D sequence of holding rates per rank, a "
                         "mapping {rank: mu}" + ("" if where else " or a mapping {qid: rates}") + ".")
    return _rates_iv(rates, len(rates), where).copy()


def _recall_base_iv(recall_base):
    if recall_base is None:
        return None
    if isinstance(recall_base, (bool, np.bool_)) or not float(recall_base).is_integer() or recall_base < 0:
        raise ValueError(f"`recall_base` must be a nonnegative integer, got {recall_base!r}.")
    return int(recall_base)


# ---------------------------------------------------------------------------
# Closed form (reversible chains)
# ---------------------------------------------------------------------------


def mp_degrees(relevant: np.ndarray, model: str) -> np.ndarray:
    r"""Degrees :math:`\deg_i` of the relevant ranks under a paper model (one ranking).

    The watched invariant distribution is ``deg / deg.sum()``.
    """
    relevant = _relevance_iv(relevant)
    batch = _single_batch(relevant)
    return _batch_degrees(batch, parse_model(model))


def _single_batch(relevant: np.ndarray, recall_base: int = 0) -> RelevanceBatch:
    rel = relevant.astype(bool)
    return RelevanceBatch(["q"], np.array([0, rel.size]), rel.astype(np.int64), rel,
                          np.array([recall_base]), 1)


def markov_precision_batch(batch: RelevanceBatch, model: str = "GL_AD_ID", *, recall: bool = False,
                           rates=None, flat_rates: Optional[np.ndarray] = None) -> np.ndarray:
    """MP (or MPcont when ``rates`` is given) of every query of a batch, vectorised.

    ``rates``: None, holding rates per rank for every query (a sequence or a
    ``{rank: mu}`` mapping), or a mapping ``{qid: rates}``.  ``flat_rates``
    instead gives the rate at every flat position of the batch, already
    checked positive and finite (e.g. from TBG's time model), with no
    per-query step.  Without rates the per-model values are memoised on the
    batch, so ``recall=True`` after ``recall=False`` (or the reverse) costs
    one multiplication.
    """
    if flat_rates is not None:
        if rates is not None:
            raise ValueError("give `rates` or `flat_rates`, not both")
        flat_rates = np.asarray(flat_rates, dtype=np.float64)
        if flat_rates.shape != batch.grades.shape:
            raise ValueError(f"`flat_rates` has shape {flat_rates.shape}; the batch has {batch.grades.size} "
                             "flat positions")
        rates = _FlatRates(flat_rates)
    if isinstance(model, str) and model.upper() in CUSTOM_KERNELS:
        return _custom_batch(batch, model.upper(), recall=recall, rates=rates)
    parsed = parse_model(model)
    key = ("mp", parsed)
    out = batch.cache.get(key) if rates is None else None
    if out is None:
        out = np.zeros(batch.n_queries)
        ranks, qidx, _, prec = _relevant_view(batch)
        if ranks.size:
            w = _batch_degrees(batch, parsed)
            if rates is not None:
                w = w / _batch_rates(batch, rates)[batch.relevant]
            num = np.bincount(qidx, weights=w * prec, minlength=batch.n_queries)
            den = np.bincount(qidx, weights=w, minlength=batch.n_queries)
            np.divide(num, den, out=out, where=den > 0)
        if rates is None:
            batch.cache[key] = out
    if recall:
        r, rb, judged = _recall_terms(batch)
        value = out * r
        value /= rb
        value[~judged] = 0.0  # RB = 0: trec_eval's 0
        return value
    return out.copy()


def _recall_terms(batch: RelevanceBatch):
    """``(r, max(RB, 1), RB > 0)`` per query, memoised: every recall variant of a batch rescales by them."""
    terms = batch.cache.get("mp:recall")
    if terms is None:
        _, qidx, _, _ = _relevant_view(batch)
        rb = batch.recall_base
        terms = (np.bincount(qidx, minlength=batch.n_queries), np.maximum(rb, 1), rb > 0)
        batch.cache["mp:recall"] = terms
    return terms


def _custom_batch(batch: RelevanceBatch, name: str, *, recall: bool, rates) -> np.ndarray:
    """A registered custom kernel: the general solver, one ranking at a time."""
    kernel, states = CUSTOM_KERNELS[name]
    return kernel_batch(batch, kernel, states, recall=recall, rates=rates, name=name)


def kernel_batch(batch: RelevanceBatch, kernel, states: str = "AD", *, recall: bool = False, rates=None,
                 name: str = "custom") -> np.ndarray:
    """MP of every query of a batch under a kernel given as a function or matrix (e.g. one fitted to a log).

    The general solver, one ranking at a time; ``name`` labels errors.
    """
    mu = _batch_rates(batch, rates) if rates is not None else None
    out = np.zeros(batch.n_queries)
    for i, (qid, rel, _, rb) in enumerate(batch.segments()):
        s = slice(batch.offsets[i], batch.offsets[i + 1])
        try:
            out[i] = markov_precision(rel, kernel, states=states, recall_base=rb if recall else None,
                                      rates=None if mu is None else mu[s])
        except ValueError as exc:
            # the kernel is the same for every query; which ranking broke it is what the user needs
            raise ValueError(f"model {name!r}, query {qid!r} (ranking of {rel.size} documents): {exc}") from exc
    return out


class _FlatRates:
    """Rates already laid out like the batch (``markov_precision_batch(flat_rates=...)``)."""
    __slots__ = ("values",)

    def __init__(self, values: np.ndarray):
        self.values = values


def _batch_rates(batch: RelevanceBatch, rates) -> np.ndarray:
    """Holding rate of every flat position."""
    if isinstance(rates, _FlatRates):
        return rates.values
    if rates_per_query(rates):
        parts = []
        for i, q in enumerate(batch.qids):
            T = int(batch.lengths[i])
            if q not in rates:
                raise ValueError(f"`rates` has no holding rates for query {q!r}.")
            parts.append(_rates_iv(rates[q], T, f" of query {q!r}"))
        return np.concatenate(parts) if parts else np.zeros(0)
    if batch.n_queries == 0:
        return np.zeros(0)
    longest = int(np.argmax(batch.lengths))
    # the rates apply to every query: a shortage is reported on the longest ranking
    mu = _rates_iv(rates, int(batch.lengths[longest]), ranking=f" of query {batch.qids[longest]!r}")
    return mu[batch.ranks - 1]


# ---------------------------------------------------------------------------
# General solver (any kernel)
# ---------------------------------------------------------------------------

def _weight_matrix(model, parsed, positions: np.ndarray) -> np.ndarray:
    """Weights among the given 1-based rank positions (zero diagonal)."""
    i = positions[:, None].astype(np.float64)
    j = positions[None, :].astype(np.float64)
    n = positions.size
    if parsed is not None:
        conn, states, kernel = parsed
        if kernel == "UNIFORM":
            W = np.ones((n, n))
        else:
            W = KERNELS[kernel](np.abs(i - j))
        if conn == "LO":
            idx = np.arange(n)
            W = np.where(np.abs(idx[:, None] - idx[None, :]) == 1, W, 0.0)
    elif callable(model):
        values = np.asarray(model(i, j), dtype=np.float64)
        try:
            W = np.broadcast_to(values, (n, n)).copy()
        except ValueError:
            raise ValueError(f"The custom kernel function returned an array of shape {values.shape}; expected "
                             f"shape ({n}, {n}) (or one that broadcasts to it): it is called with i of shape "
                             f"({n}, 1) and j of shape (1, {n}) holding 1-based ranks.") from None
    else:
        M = np.asarray(model, dtype=np.float64)
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"A custom kernel matrix must be square, got shape {M.shape}.")
        if M.shape[0] < positions.max():
            raise ValueError(f"The custom kernel matrix covers ranks 1..{M.shape[0]} but the ranking has "
                             f"{int(positions.max())} documents (evaluate with a cutoff @{M.shape[0]} or give "
                             "a larger matrix).")
        W = M[np.ix_(positions - 1, positions - 1)].copy()
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("Kernel weights must be finite and nonnegative.")
    np.fill_diagonal(W, 0.0)
    return W


def _solve_pi(model, parsed, relevant: np.ndarray, states: str) -> np.ndarray:
    """Watched invariant distribution on the relevant ranks by the general solver."""
    T = relevant.size
    rel_pos = np.flatnonzero(relevant) + 1
    if rel_pos.size == 1:
        return np.ones(1)
    positions = np.arange(1, T + 1) if states == "AD" else rel_pos
    W = _weight_matrix(model, parsed, positions)
    if not is_irreducible(W):
        kind = "custom kernel" if parsed is None else f"model {model}"
        raise ValueError(f"The {kind} gives a chain that is not irreducible on "
                         f"{'all ranks' if states == 'AD' else 'the relevant ranks'} (ranks "
                         f"{positions.tolist()[:10]}{'...' if positions.size > 10 else ''}); "
                         "MP needs every state to reach every other.")
    P = transition_matrix_from_weights(W)
    if states == "AD":
        P = censored_transition_matrix(P, rel_pos - 1)
    return stationary_distribution(P, check=False)


def markov_precision(relevance, model: Model = "GL_AD_ID", *, recall_base: Optional[int] = None,
                     rates: Union[Sequence[float], Mapping[int, float], None] = None, states: str = "AD",
                     method: str = "auto") -> float:
    r"""Markov Precision of one ranking (MPcont when ``rates`` is given).

    .. math:: \mathrm{MP} = \sum_{i\in\mathcal R}\pi_i\,\mathrm{Prec}(i)

    Parameters
    ----------
    relevance : sequence of {0, 1}
        Binary relevance in rank order (rank 1 first).
    model : str, callable or (n, n) array
        A paper model ``'GL_AD_ID'``, ``'GL_AD_LID'``, ``'GL_OR_ID'``, ``'GL_OR_LID'``,
        ``'LO_AD_ID'``, ``'LO_AD_LID'``, ``'LO_OR_ID'``, ``'LO_OR_LID'``, or ``'UNIFORM'``;
        a name given to a kernel with :func:`register_kernel` (case-insensitive);
        or a custom kernel: a function ``alpha(i, j)`` of 1-based ranks (called
        with broadcastable arrays) or a weight matrix indexed by rank-1.  Custom
        kernels may be non-symmetric; the diagonal is ignored (no self-loops).
    recall_base : int, optional
        The number RB of relevant documents for the topic.  When given the
        value is multiplied by :math:`r/RB` (the paper's ``@Rec(T)``); RB = 0 gives 0
        (trec_eval's convention), and RB smaller than the number r of relevant
        documents in the ranking is an error.
    rates : sequence of float or mapping {rank: float}, optional
        Holding-time rates :math:`\mu_1, \mu_2, \dots` per rank (MPcont, paper §4.1):
        a sequence for ranks 1, 2, ... or a mapping from 1-based rank to rate.
        Every rank of the ranking needs a positive, finite rate.
    states : {'AD', 'OR'}
        State space of a custom kernel function or matrix (ignored for paper
        models and registered names, which carry their own).
    method : {'auto', 'closed', 'solve'}
        ``'closed'``: reversible closed form (symmetric kernels only);
        ``'solve'``: general censored-chain linear solve; ``'auto'``: closed
        form whenever the kernel is symmetric.

    Returns
    -------
    float

    Examples
    --------
    >>> round(markov_precision([1, 1, 1, 1, 0, 0, 0, 1, 0, 0]), 4)
    0.9205
    >>> markov_precision([1, 0, 1, 0], 'UNIFORM', recall_base=3)  # AP
    0.5555555555555556
    """
    rel = _relevance_iv(relevance)
    rb = _recall_base_iv(recall_base)
    if method not in ("auto", "closed", "solve"):
        raise ValueError(f"`method` must be 'auto', 'closed' or 'solve', got {method!r}.")
    if states not in ("AD", "OR"):
        raise ValueError(f"`states` must be 'AD' or 'OR', got {states!r}.")
    if isinstance(model, str) and model.upper() in CUSTOM_KERNELS:
        # a registered kernel carries its own state space, as a paper model name does
        model, states = CUSTOM_KERNELS[model.upper()]
    parsed = parse_model(model) if isinstance(model, str) else None
    if parsed is None and not callable(model) and not hasattr(model, "shape") and not isinstance(model, (list, tuple)):
        raise TypeError("`model` must be a model name, a weight function alpha(i, j) or a weight matrix.")
    T = rel.size
    mu = _rates_iv(rates, T) if rates is not None else None
    r = int(rel.sum())
    if r == 0:
        return 0.0
    if rb is not None and rb == 0:
        # trec_eval's convention for a topic with nothing relevant (docs/conventions.md)
        return 0.0
    if rb is not None and rb < r:
        raise ValueError(f"`recall_base` ({rb}) is smaller than the {r} relevant documents in the ranking; "
                         "it must count every relevant document of the topic (retrieved or not).")
    prec = (np.cumsum(rel) / np.arange(1, T + 1))[rel]
    if parsed is not None:
        st = parsed[1]
    else:
        st = states
    use_closed = parsed is not None and method != "solve"
    if parsed is None and method != "solve":
        # a symmetric custom kernel is reversible too
        positions = np.arange(1, T + 1) if st == "AD" else np.flatnonzero(rel) + 1
        W = _weight_matrix(model, None, positions)
        if np.allclose(W, W.T, rtol=1e-13, atol=0):
            if not is_irreducible(W) and r > 1:
                raise ValueError("The custom kernel gives a chain that is not irreducible; "
                                 "MP needs every state to reach every other.")
            deg = W.sum(axis=1)
            pi = (deg[rel] if st == "AD" else deg)
            pi = np.where(pi > 0, pi, 1.0) if r == 1 else pi
            pi = pi / pi.sum()
        elif method == "closed":
            raise ValueError("`method='closed'` needs a symmetric kernel; this custom kernel is not symmetric.")
        else:
            pi = _solve_pi(model, None, rel, st)
    elif use_closed:
        pi = _batch_degrees(_single_batch(rel), parsed)
        pi = pi / pi.sum()
    else:
        pi = _solve_pi(model, parsed, rel, st)
    if mu is not None:
        pi = pi / mu[rel]
        pi = pi / pi.sum()
    value = float(np.dot(pi, prec))
    if rb is not None:
        value *= r / rb
    return value


def estimate_rates(dwell_times) -> np.ndarray:
    r"""Estimate exponential holding rates per rank from observed dwell times (paper §5.5).

    For rank :math:`k` with :math:`n \ge 2` observations :math:`t_1..t_n`,

    .. math:: \hat\mu_k = \frac{n-1}{n\,\bar t} = \frac{n-1}{\sum_m t_m},

    the unbiased estimator of an exponential rate.

    Parameters
    ----------
    dwell_times : mapping rank -> sequence of float, or sequence of sequences
        Dwell times (any time unit) observed at each 1-based rank; a sequence is
        read as ranks 1, 2, ...  Ranks must be contiguous from 1.

    Returns
    -------
    ndarray
        ``mu[k-1]`` is the rate for rank ``k`` (pass as ``rates=``).
    """
    if isinstance(dwell_times, Mapping):
        ranks = sorted(dwell_times)
        if not ranks or ranks != list(range(1, len(ranks) + 1)):
            raise ValueError(f"`dwell_times` must cover ranks 1..K contiguously, got ranks {ranks}.")
        samples = [dwell_times[k] for k in ranks]
    else:
        samples = list(dwell_times)
        if not samples:
            raise ValueError("`dwell_times` is empty.")
    mu = np.empty(len(samples))
    for k, s in enumerate(samples, start=1):
        t = np.asarray(s, dtype=np.float64).ravel()
        if t.size < 2:
            raise ValueError(f"rank {k} has {t.size} dwell-time observation(s); the estimator needs at least 2.")
        if not np.all(np.isfinite(t)) or np.any(t <= 0):
            raise ValueError(f"rank {k}: dwell times must be positive and finite.")
        mu[k - 1] = (t.size - 1) / t.sum()
    return mu
