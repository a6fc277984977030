r"""Markov Precision (MP) and MPcont: of one ranking (the closed form and the general solver) and of every query
of a batch at once (the closed form vectorised, the plugin path; registered kernels go through the general solver
one ranking at a time).

Ferrante, Ferro & Maistro, "Injecting User Models and Time into Precision via
Markov Chains", SIGIR 2014 (docs/markov-precision.md).

A user moves among the ranks of a ranking of length $T$ as a Markov chain
with $p_{ij} = \alpha(i,j) / \sum_k \alpha(i,k)$ (no self-loops).  Watching
the chain only on the ranks $\mathcal R$ of the relevant retrieved
documents gives a chain with invariant distribution $\pi$, and

$$
\mathrm{MP} = \sum_{i \in \mathcal R} \pi_i \,\mathrm{Prec}(i), \qquad
\mathrm{Prec}(i) = \frac{1}{i}\sum_{m \le i} a_m .
$$

Models ``CONN_STATES_KERNEL``:

* STATES ``AD`` — the chain lives on all ranks and is watched on $\mathcal R$;
  ``OR`` — it lives on $\mathcal R$ only (distances are still rank distances).
* CONN ``GL`` — every pair of distinct states is connected; ``LO`` — only
  neighbours in the state list.
* KERNEL, with $d = |i-j|$ in ranks: ``ID`` $\alpha = 1/(d+1)$;
  ``LID`` $\alpha = 1/\log_{10}(d+2)$.
* ``UNIFORM`` (paper §4.2): constant transitions among all ranks; with
  ``recall_base`` this is exactly AP.

Why the closed form is exact.  A symmetric $\alpha$ makes the chain a
random walk on a weighted graph, which is reversible with
$\pi_i \propto \deg_i = \sum_j \alpha(i,j)$.  The chain watched on a subset
$A$ of an irreducible chain has invariant distribution
$\pi|_A / \pi(A)$.  Hence $\mathrm{MP} = \sum_{i\in\mathcal R}\deg_i
\mathrm{Prec}(i) / \sum_{i\in\mathcal R}\deg_i$, and for the AD models
$\deg_i = C(i-1) + C(T-i)$ with $C(m) = \sum_{d=1}^m \alpha(d)$, a
prefix sum: O(T) per ranking.  Non-symmetric custom kernels use the general
censored-chain solve (paper eq. 8) in `irmeasures_markov.core`.

MPcont weights the watched invariant distribution by the mean holding times
$1/\mu_i$: $\tilde\pi_i = (\pi_i/\mu_i)/\sum_{j\in\mathcal R}\pi_j/\mu_j$.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov.core import (
    censored_transition_matrix,
    is_irreducible,
    stationary_distribution,
    transition_matrix_from_weights,
)
from irmeasures_markov.measures.markov_precision._kernels import KERNELS, batch_degrees, relevant_view
from irmeasures_markov.measures.markov_precision._models import KERNEL_REGISTRY, Model, parse_model
from irmeasures_markov.measures.markov_precision._rates import rates_array, rates_per_query
from irmeasures_markov.ranking._prepared import RelevanceBatch

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["markov_precision", "mp_degrees", "single_batch", "markov_precision_batch", "kernel_batch"]


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


def _recall_base_iv(recall_base):
    if recall_base is None:
        return None
    if isinstance(recall_base, (bool, np.bool_)) or not float(recall_base).is_integer() or recall_base < 0:
        raise ValueError(f"`recall_base` must be a nonnegative integer, got {recall_base!r}.")
    return int(recall_base)



def mp_degrees(relevant: np.ndarray, model: str) -> np.ndarray:
    r"""Degrees $\deg_i$ of the relevant ranks under a paper model (one ranking).

    The watched invariant distribution is ``deg / deg.sum()``.  With $d = |i - j|$ in ranks,

    $$
    \deg_i = \sum_{j \ne i} \alpha(i, j)
    $$

    over the states the model connects to $i$; for the AD models $\deg_i = C(i-1) + C(T-i)$ with
    $C(m) = \sum_{d=1}^m \alpha(d)$ (Ferrante, Ferro & Maistro, SIGIR 2014).

    Parameters
    ----------
    relevant : numpy.ndarray
        Binary (0/1 or boolean) relevance of the ranking, top first.
    model : str
        A paper model name (``'GL_AD_ID'``, ``'LO_OR_LID'``, ``'UNIFORM'``, ...).

    Returns
    -------
    numpy.ndarray
        $\deg_i$ for each relevant rank, top first.

    Raises
    ------
    ValueError
        ``relevant`` is not a 1-D binary sequence, or ``model`` is not a known model.
    TypeError
        ``model`` is not a string.
    """
    return batch_degrees(single_batch(_relevance_iv(relevant)), parse_model(model))


def single_batch(relevant: np.ndarray, recall_base: int = 0) -> RelevanceBatch:
    """One ranking's binary relevance as a one-query [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch]."""
    rel = relevant.astype(bool)
    return RelevanceBatch(["q"], np.array([0, rel.size]), rel.astype(np.int64), rel,
                          np.array([recall_base]), 1)


def _weight_matrix(model, parsed, positions: np.ndarray) -> np.ndarray:
    """Weights among the given 1-based rank positions (zero diagonal)."""
    i = positions[:, None].astype(np.float64)
    j = positions[None, :].astype(np.float64)
    n = positions.size
    if parsed is not None:
        conn, states, kernel = parsed
        W = np.ones((n, n)) if kernel == "UNIFORM" else KERNELS[kernel](np.abs(i - j))
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


def markov_precision(relevance: ArrayLike, model: Model = "GL_AD_ID", *, recall_base: int | None = None,
                     rates: Sequence[float] | Mapping[int, float] | None = None, states: str = "AD",
                     method: str = "auto") -> float:
    r"""Markov Precision of one ranking (MPcont when ``rates`` is given).

    $$
    \mathrm{MP} = \sum_{i\in\mathcal R}\pi_i\,\mathrm{Prec}(i)
    $$

    Parameters
    ----------
    relevance : sequence of {0, 1}
        Binary relevance in rank order (rank 1 first).
    model : str, callable or (n, n) array
        A paper model ``'GL_AD_ID'``, ``'GL_AD_LID'``, ``'GL_OR_ID'``, ``'GL_OR_LID'``,
        ``'LO_AD_ID'``, ``'LO_AD_LID'``, ``'LO_OR_ID'``, ``'LO_OR_LID'``, or ``'UNIFORM'``;
        a name given to a kernel with [`register_kernel`][irmeasures_markov.register_kernel] (case-insensitive);
        or a custom kernel: a function ``alpha(i, j)`` of 1-based ranks (called
        with broadcastable arrays) or a weight matrix indexed by rank-1.  Custom
        kernels may be non-symmetric; the diagonal is ignored (no self-loops).
    recall_base : int, optional
        The number RB of relevant documents for the topic.  When given the
        value is multiplied by $r/RB$ (the paper's ``@Rec(T)``); RB = 0 gives 0
        (trec_eval's convention), and RB smaller than the number r of relevant
        documents in the ranking is an error.
    rates : sequence of float or mapping {rank: float}, optional
        Holding-time rates $\mu_1, \mu_2, \dots$ per rank (MPcont, paper §4.1):
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
    if isinstance(model, str) and model in KERNEL_REGISTRY:
        # a registered kernel carries its own state space, as a paper model name does
        model, states = KERNEL_REGISTRY.get(model)
    parsed = parse_model(model) if isinstance(model, str) else None
    if parsed is None and not callable(model) and not hasattr(model, "shape") and not isinstance(model, (list, tuple)):
        raise TypeError("`model` must be a model name, a weight function alpha(i, j) or a weight matrix.")
    T = rel.size
    mu = rates_array(rates, T) if rates is not None else None
    r = int(rel.sum())
    if r == 0 or rb == 0:
        # nothing relevant retrieved; RB = 0 is trec_eval's convention for a topic with nothing relevant
        # (docs/conventions.md)
        return 0.0
    if rb is not None and rb < r:
        raise ValueError(f"`recall_base` ({rb}) is smaller than the {r} relevant documents in the ranking; "
                         "it must count every relevant document of the topic (retrieved or not).")
    prec = (np.cumsum(rel) / np.arange(1, T + 1))[rel]
    st = parsed[1] if parsed is not None else states
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
    elif parsed is not None and method != "solve":
        pi = batch_degrees(single_batch(rel), parsed)
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


def markov_precision_batch(batch: RelevanceBatch, model: str = "GL_AD_ID", *, recall: bool = False,
                           rates: Sequence[float] | Mapping | None = None,
                           flat_rates: np.ndarray | None = None) -> np.ndarray:
    r"""MP (or MPcont when ``rates`` is given) of every query of a batch, vectorised.

    $$
    \mathrm{MP} = \frac{\sum_{i\in\mathcal R}\deg_i\,\mathrm{Prec}(i)}{\sum_{i\in\mathcal R}\deg_i},
    \qquad \mathrm{MPcont}: \deg_i \to \deg_i / \mu_i
    $$

    (Ferrante, Ferro & Maistro, SIGIR 2014; the closed form of a reversible chain).
    Without rates the per-model values are memoised on the batch, so
    ``recall=True`` after ``recall=False`` (or the reverse) costs one multiplication.

    Parameters
    ----------
    batch : RelevanceBatch
        The run's rankings, flattened.
    model : str
        A paper model, ``'UNIFORM'`` or a name given with `register_kernel`.
    recall : bool
        Multiply by $r / RB$ (the paper's ``@Rec(T)``; RB = 0 gives 0).
    rates : sequence, mapping or None
        Holding rates per rank for every query (a sequence or a ``{rank: mu}``
        mapping), or a mapping ``{qid: rates}``.
    flat_rates : numpy.ndarray, optional
        Instead of ``rates``: the rate at every flat position of the batch,
        already checked positive and finite (e.g. from TBG's time model).

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.

    Raises
    ------
    ValueError
        For an unknown model, both ``rates`` and ``flat_rates``, or rates that do not cover a ranking.
    """
    if flat_rates is not None:
        if rates is not None:
            raise ValueError("give `rates` or `flat_rates`, not both")
        flat_rates = np.asarray(flat_rates, dtype=np.float64)
        if flat_rates.shape != batch.grades.shape:
            raise ValueError(f"`flat_rates` has shape {flat_rates.shape}; the batch has {batch.grades.size} "
                             "flat positions")
        rates = _FlatRates(flat_rates)
    if isinstance(model, str) and model in KERNEL_REGISTRY:   # a registered kernel: the general solver
        kernel, states = KERNEL_REGISTRY.get(model.upper())
        return kernel_batch(batch, kernel, states, recall=recall, rates=rates, name=model.upper())
    parsed = parse_model(model)
    key = ("mp", parsed)
    out = batch.cache.get(key) if rates is None else None
    if out is None:
        out = np.zeros(batch.n_queries)
        ranks, qidx, _, prec = relevant_view(batch)
        if ranks.size:
            w = batch_degrees(batch, parsed)
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
        _, qidx, _, _ = relevant_view(batch)
        rb = batch.recall_base
        terms = (np.bincount(qidx, minlength=batch.n_queries), np.maximum(rb, 1), rb > 0)
        batch.cache["mp:recall"] = terms
    return terms


def kernel_batch(batch: RelevanceBatch, kernel: Callable | np.ndarray, states: str = "AD", *, recall: bool = False,
                 rates: Sequence[float] | Mapping | None = None,
                 name: str = "custom") -> np.ndarray:
    """MP of every query of a batch under a kernel given as a function or matrix (e.g. one fitted to a log).

    The general solver (`markov_precision`), one ranking at a time.

    Parameters
    ----------
    batch : RelevanceBatch
        The run's rankings, flattened.
    kernel : callable or numpy.ndarray
        A weight function ``alpha(i, j)`` of 1-based ranks or a weight matrix indexed by rank-1.
    states : {'AD', 'OR'}
        Whether the chain lives on all ranks or on the relevant ranks only.
    recall : bool
        Multiply by $r / RB$.
    rates : sequence, mapping or None
        Holding rates (MPcont), as in
        [`markov_precision_batch`][irmeasures_markov.measures.markov_precision.markov_precision_batch].
    name : str
        Labels errors.

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.

    Raises
    ------
    ValueError
        Naming the model, the query and its ranking's length when the kernel fails on it.
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
            parts.append(rates_array(rates[q], T, f" of query {q!r}"))
        return np.concatenate(parts) if parts else np.zeros(0)
    if batch.n_queries == 0:
        return np.zeros(0)
    longest = int(np.argmax(batch.lengths))
    # the rates apply to every query: a shortage is reported on the longest ranking
    mu = rates_array(rates, int(batch.lengths[longest]), ranking=f" of query {batch.qids[longest]!r}")
    return mu[batch.ranks - 1]
