r"""Holding rates of MPcont (Ferrante, Ferro & Maistro, SIGIR 2014, §4.1 and §5.5): validation and estimation.

MPcont weights the watched invariant distribution by the mean holding times
$1/\mu_i$: $\tilde\pi_i = (\pi_i/\mu_i)/\sum_{j\in\mathcal R}\pi_j/\mu_j$.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["is_rate", "rates_array", "rates_per_query", "check_rates", "estimate_rates"]


def is_rate(value: object) -> bool:
    return not isinstance(value, (Mapping, bool, np.bool_, str, bytes)) and np.ndim(value) == 0


def _rank_rates_iv(rates: Mapping, T: int, where: str, ranking: str) -> np.ndarray:
    """A ``{rank: mu}`` mapping as the array of rates of ranks 1..T."""
    for k in rates:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"`rates` keys must be 1-based integer ranks{where}, got {k!r}.")
    for k, v in rates.items():
        if not is_rate(v):
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


def rates_array(rates: Sequence[float] | Mapping[int, float], T: int, where: str = "",
                ranking: str | None = None) -> np.ndarray:
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


def rates_per_query(rates: object) -> bool:
    """True when ``rates`` maps query ids to rates, False for one set of rates for all queries.

    A mapping whose values are numbers is ``{rank: mu}``; one whose values are
    sequences or mappings is ``{qid: rates}``.

    Parameters
    ----------
    rates : object
        A rates source: a sequence, a ``{rank: mu}`` mapping or a ``{qid: rates}`` mapping.

    Returns
    -------
    bool
        Whether ``rates`` holds rates per query.

    Raises
    ------
    ValueError
        ``rates`` is an empty mapping, or mixes numbers and sequences among its values.
    """
    if not isinstance(rates, Mapping):
        return False
    if not rates:
        raise ValueError("`rates` is an empty mapping.")
    scalar = [is_rate(v) for v in rates.values()]
    if all(scalar):
        return False
    if any(scalar):
        raise ValueError("`rates` mixes numbers and sequences: give {rank: mu} for all queries or "
                         "{qid: rates} per query, not both.")
    return True


def check_rates(rates: Sequence[float] | Mapping, where: str = "") -> np.ndarray | dict:
    """Validate every rate of a rates source once, e.g. at registration; returns a normalised copy.

    ``rates`` is a sequence (ranks 1, 2, ...), a ``{rank: mu}`` mapping or a
    ``{qid: sequence or {rank: mu}}`` mapping.  Query ids become strings, as
    ir_measures reads them.

    Parameters
    ----------
    rates : sequence of float or mapping
        The rates source.
    where : str
        Text naming the source in error messages (e.g. ``" of query '7'"``); empty at the top level.

    Returns
    -------
    numpy.ndarray or dict
        A float64 array for a sequence, ``{rank: mu}`` for a mapping of ranks, ``{qid: rates}`` per query.

    Raises
    ------
    ValueError
        An empty source, one that is not a 1-D sequence or mapping, or a rate that is not positive and finite.
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
    return rates_array(rates, len(rates), where).copy()


def estimate_rates(dwell_times: Mapping[int, Sequence[float]] | Sequence[Sequence[float]]) -> np.ndarray:
    r"""Estimate exponential holding rates per rank from observed dwell times (paper §5.5).

    For rank $k$ with $n \ge 2$ observations $t_1..t_n$,

    $$
    \hat\mu_k = \frac{n-1}{n\,\bar t} = \frac{n-1}{\sum_m t_m},
    $$

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
