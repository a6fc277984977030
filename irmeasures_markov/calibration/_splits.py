"""Train/test splits of a click log that compare models fairly.

A model that learns per query-document parameters (a click model) is favoured
when the same query's sessions are on both sides of a split; so
:func:`split_log` keeps all sessions of a query on one side by default
(``by='query'``).  ``by='sessions'`` is the per-session split of
:meth:`ClickLog.split`.  Both are seeded: the same seed gives the same split.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._logs import ClickLog

__all__ = ["split_log", "split_by_query", "describe_split", "split_text", "SPLITS"]

#: the kinds of split :func:`split_log` makes
SPLITS = ("query", "sessions")


def split_by_query(log: ClickLog, test_fraction: float = 0.3, seed: int = 0) -> tuple[ClickLog, ClickLog]:
    """A seeded split that puts all sessions of a query on the same side.

    The distinct query ids (sorted) are permuted with ``seed``; queries go to
    the test side in that order while the test side holds fewer than
    ``round(test_fraction * len(log))`` sessions, so the test share is close
    to ``test_fraction`` of the sessions (it overshoots by at most one query's
    sessions).

    Parameters
    ----------
    log : ClickLog
    test_fraction : float
        Target share of the sessions in the test log, in (0, 1).
    seed : int

    Returns
    -------
    (ClickLog, ClickLog)
        Training and test sessions, each in the log's order.

    Raises
    ------
    ValueError
        When ``test_fraction`` is not in (0, 1), or the log has fewer than two
        queries (one side would be empty).
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    queries = log.query_ids()
    if len(queries) < 2:
        raise ValueError(f"a split by query needs at least two queries; the log has {len(queries)} "
                         "(split by sessions instead: split='sessions', --split sessions)")
    index: dict[str, list[int]] = {q: [] for q in queries}
    for i, s in enumerate(log.sessions):
        index[s.query_id].append(i)
    order = np.random.default_rng(seed).permutation(len(queries))
    target = max(1, int(round(test_fraction * len(log))))
    test_q: set[str] = set()
    n_test = 0
    for k in order[:-1]:  # the last query in the order always trains: neither side is empty
        if n_test >= target:
            break
        test_q.add(queries[k])
        n_test += len(index[queries[k]])
    train_i = [i for i, s in enumerate(log.sessions) if s.query_id not in test_q]
    test_i = [i for i, s in enumerate(log.sessions) if s.query_id in test_q]
    return log.subset(train_i), log.subset(test_i)


def split_log(log: ClickLog, test_fraction: float = 0.3, *, by: str = "query",
              seed: int = 0) -> tuple[ClickLog, ClickLog]:
    """Split a log into (train, test): by query (default) or by session.

    Parameters
    ----------
    log : ClickLog
    test_fraction : float
        Share of the sessions held out, in (0, 1).
    by : {'query', 'sessions'}
        ``'query'``: all sessions of a query on one side (:func:`split_by_query`);
        ``'sessions'``: a random share of the sessions (:meth:`ClickLog.split`).
    seed : int

    Returns
    -------
    (ClickLog, ClickLog)

    Raises
    ------
    ValueError
        An unknown ``by``, a fraction outside (0, 1), or a split by query of a
        log with one query.
    """
    if by == "query":
        return split_by_query(log, test_fraction, seed)
    if by == "sessions":
        return log.split(test_fraction, seed=seed)
    raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {by!r}")


def describe_split(kind: str, *, fraction: float | None = None, seed: int | None = None,
                   source: str | None = None) -> dict:
    """What a report and its fit file record about the held-out sessions.

    Parameters
    ----------
    kind : {'query', 'sessions', 'file', 'none'}
        How the held-out sessions were chosen.
    fraction, seed : optional
        The split's share and seed (``'query'``/``'sessions'``).
    source : str, optional
        The test file (``'file'``).

    Returns
    -------
    dict
        ``{"kind": ..., "fraction": ..., "seed": ...}`` or ``{"kind": "file", "source": ...}``.
    """
    out: dict = {"kind": kind}
    if kind in SPLITS:
        out.update(fraction=float(fraction), seed=int(seed))
    elif kind == "file" and source:
        out["source"] = str(source)
    return out


def split_text(split: dict | None) -> str:
    """One line for a report: which sessions were held out."""
    if not split or split.get("kind") == "none":
        return "no held-out sessions (candidates compared by AIC)"
    kind = split.get("kind")
    if kind == "file":
        return f"held out: the test log{' ' + split['source'] if split.get('source') else ''}"
    how = "by query (all sessions of a query on one side)" if kind == "query" else "by session"
    return f"held out: {split.get('fraction', 0):.0%} of the sessions, split {how}, seed {split.get('seed')}"
