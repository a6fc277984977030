"""Other orders of a reading's tie groups: sorted by grade, every distinct arrangement, random orders.

The readings (`ScenarioRun`) these
functions make are what ``ties='optimistic'``/``'pessimistic'`` evaluate and what
``ties='expected'`` averages over (`irmeasures_markov.plugin._variants`).
"""
from __future__ import annotations

from collections.abc import Iterator
from math import lgamma, log

import numpy as np

from irmeasures_markov._util._segments import offsets_of
from irmeasures_markov.ranking._scenarios import ScenarioRun

__all__ = ["reorder_ties", "arrangement_counts", "iter_arrangements", "sample_orders", "log_limit"]


def reorder_ties(reading: ScenarioRun, keys: np.ndarray, descending: bool) -> ScenarioRun:
    """Inside every tie group, ranks sorted by ``keys`` (descending or ascending), stable otherwise.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    keys : numpy.ndarray
        A sort key per rank (e.g. the grade).
    descending : bool
        Higher keys first.

    Returns
    -------
    ScenarioRun
    """
    k = -np.asarray(keys) if descending else np.asarray(keys)
    order = np.lexsort((np.arange(k.size), k, reading.group_ids))
    return reading.permuted(order)


def _log_multinomial(counts: np.ndarray) -> float:
    return lgamma(int(counts.sum()) + 1) - sum(lgamma(int(c) + 1) for c in counts)


def arrangement_counts(reading: ScenarioRun, keys: np.ndarray) -> tuple[np.ndarray, list[list[np.ndarray]]]:
    """How many distinct arrangements of ``keys`` the tie groups of each pseudo-query allow.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    keys : numpy.ndarray
        int64 tie key per rank: ranks with equal keys are interchangeable.

    Returns
    -------
    log_counts : numpy.ndarray
        Per pseudo-query, the natural log of the product over its tie groups
        of the multinomial number of distinct arrangements.
    groups : list of list of numpy.ndarray
        Per pseudo-query, the flat positions of each of its groups with more than one distinct key.
    """
    n_pseudo = reading.offsets.size - 1
    log_counts = np.zeros(n_pseudo)
    groups: list[list[np.ndarray]] = [[] for _ in range(n_pseudo)]
    gid = reading.group_ids
    starts = np.flatnonzero(np.diff(gid, prepend=-1))
    # only a group holding more than one distinct key has orders that can matter (groups are contiguous)
    mixed = np.flatnonzero(np.minimum.reduceat(keys, starts) != np.maximum.reduceat(keys, starts))
    if not mixed.size:
        return log_counts, groups
    ends = np.append(starts[1:], gid.size)
    owner = np.searchsorted(reading.offsets, starts[mixed], side="right") - 1
    for g, p in zip(mixed.tolist(), owner.tolist()):
        pos = np.arange(starts[g], ends[g])
        _, counts = np.unique(keys[pos], return_counts=True)
        log_counts[p] += _log_multinomial(counts)
        groups[p].append(pos)
    return log_counts, groups


def _distinct_permutations(keys: np.ndarray) -> np.ndarray:
    """Every distinct arrangement of a multiset of keys, one per row (lexicographic order)."""
    seq = np.sort(keys).tolist()
    out = [list(seq)]
    n = len(seq)
    while True:
        i = n - 2
        while i >= 0 and seq[i] >= seq[i + 1]:
            i -= 1
        if i < 0:
            return np.asarray(out, dtype=np.int64)
        j = n - 1
        while seq[j] <= seq[i]:
            j -= 1
        seq[i], seq[j] = seq[j], seq[i]
        seq[i + 1:] = reversed(seq[i + 1:])
        out.append(list(seq))


def _group_arrangements(pos: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Every distinct arrangement of one tie group, as rows of flat positions.

    Ranks with equal keys keep their relative (trec) order: they are interchangeable for the measure.
    """
    k = keys[pos]
    rows = _distinct_permutations(k)
    # the members of each key in rank order, placed into the slots that key takes in each row
    members = pos[np.argsort(k, kind="stable")]
    slots = np.argsort(rows, axis=1, kind="stable")
    out = np.empty_like(rows)
    np.put_along_axis(out, slots, np.broadcast_to(members, rows.shape), axis=1)
    return out


def iter_arrangements(reading: ScenarioRun, keys: np.ndarray, pseudo: list[int],
                      groups: list[list[np.ndarray]], max_ranks: int = 1 << 21
                      ) -> Iterator[tuple[ScenarioRun, np.ndarray]]:
    """Every distinct arrangement of the tie groups of the pseudo-queries ``pseudo``, in chunks.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    keys : numpy.ndarray
        Tie key per rank.
    pseudo : list of int
        The pseudo-queries to arrange.
    groups : list of list of numpy.ndarray
        As `arrangement_counts` returns it.
    max_ranks : int
        Ranks per chunk (bounds memory).

    Yields
    ------
    chunk : ScenarioRun
        Arrangements, one pseudo-query each.
    owner : numpy.ndarray
        For each of them, the pseudo-query of ``reading`` it arranges.
    """
    pending: list[tuple[int, np.ndarray]] = []   # (pseudo-query, flat positions of every arrangement: rows)
    pending_ranks = 0
    for p in pseudo:
        a, b = int(reading.offsets[p]), int(reading.offsets[p + 1])
        per_group = [_group_arrangements(pos, keys) for pos in groups[p]]
        total = 1
        for rows in per_group:
            total *= rows.shape[0]
        n = b - a
        per_chunk = max(1, max_ranks // max(n, 1))
        for c0 in range(0, total, per_chunk):
            combos = np.arange(c0, min(total, c0 + per_chunk), dtype=np.int64)
            table = np.broadcast_to(np.arange(a, b, dtype=np.int64), (combos.size, n)).copy()
            stride = 1
            for pos, rows in zip(groups[p], per_group):
                pick = (combos // stride) % rows.shape[0]
                table[:, pos - a] = rows[pick]
                stride *= rows.shape[0]
            pending.append((p, table))
            pending_ranks += table.size
            if pending_ranks >= max_ranks:
                yield _assemble(reading, pending)
                pending, pending_ranks = [], 0
    if pending:
        yield _assemble(reading, pending)


def _assemble(reading: ScenarioRun, pending: list[tuple[int, np.ndarray]]) -> tuple[ScenarioRun, np.ndarray]:
    owner = np.concatenate([np.full(t.shape[0], p, dtype=np.int64) for p, t in pending])
    positions = np.concatenate([t.ravel() for _, t in pending])
    lengths = np.concatenate([np.full(t.shape[0], t.shape[1], dtype=np.int64) for _, t in pending])
    offsets = offsets_of(lengths)
    chunk = ScenarioRun(reading.base, reading.query[owner], offsets, *reading.gathered(positions, scores=False))
    return chunk, owner


def sample_orders(reading: ScenarioRun, p: int, groups: list[np.ndarray], n_samples: int,
                  rng: np.random.Generator) -> ScenarioRun:
    """``n_samples`` uniformly random orders of the tie groups ``groups`` of pseudo-query ``p``.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    p : int
        The pseudo-query.
    groups : list of numpy.ndarray
        Its groups to shuffle (flat positions), e.g. from `arrangement_counts`.
    n_samples : int
        Orders to draw.
    rng : numpy.random.Generator
        The draws.

    Returns
    -------
    ScenarioRun
        One pseudo-query per order.
    """
    a, b = int(reading.offsets[p]), int(reading.offsets[p + 1])
    n = b - a
    table = np.broadcast_to(np.arange(a, b, dtype=np.int64), (n_samples, n)).copy()
    for pos in groups:
        perm = np.argsort(rng.random((n_samples, pos.size)), axis=1)
        table[:, pos - a] = pos[perm]
    chunk, _ = _assemble(reading, [(p, table)])
    return chunk


def log_limit(limit: int) -> float:
    """The natural log of an arrangement limit, with room for rounding of `arrangement_counts`."""
    return log(limit) + 1e-9
