r"""Markov Precision and MPcont of every query of a batch, vectorised (the plugin path).

For a symmetric kernel the MP chain is reversible, so
$\mathrm{MP} = \sum_{i\in\mathcal R}\deg_i\,\mathrm{Prec}(i) / \sum_{i\in\mathcal R}\deg_i$
(Ferrante, Ferro & Maistro, SIGIR 2014); registered kernels go through the
general solver one ranking at a time.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from irmeasures_markov.measures.markov_precision._kernels import batch_degrees, relevant_view
from irmeasures_markov.measures.markov_precision._models import KERNEL_REGISTRY, parse_model
from irmeasures_markov.measures.markov_precision._rates import rates_array, rates_per_query
from irmeasures_markov.measures.markov_precision._single import markov_precision
from irmeasures_markov.ranking._prepared import RelevanceBatch

__all__ = ["markov_precision_batch", "kernel_batch"]


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
