"""Every arrangement of a reading's tie groups, random orders of them, and judgments of its unjudged documents.

The readings (:class:`~irmeasures_markov.ranking.scenarios.ScenarioRun`) these
functions make are what ``ties='expected'`` averages over and what
``unjudged='range'`` takes the extremes of (:mod:`irmeasures_markov.plugin.variants`).
"""
from __future__ import annotations

from collections.abc import Iterator
from math import lgamma, log

import numpy as np

from .scenarios import ScenarioRun, fill_grades

__all__ = ["arrangement_counts", "iter_arrangements", "sample_orders", "judgment_patterns", "log_limit"]


def _mixed_groups(reading: ScenarioRun, keys: np.ndarray) -> np.ndarray:
    """The groups that hold more than one distinct key (the only ones whose order can matter)."""
    gid = reading.group_ids
    if not gid.size:
        return np.zeros(0, dtype=np.int64)
    n_groups = int(gid[-1]) + 1
    lo = np.full(n_groups, np.iinfo(np.int64).max)
    hi = np.full(n_groups, np.iinfo(np.int64).min)
    np.minimum.at(lo, gid, keys)
    np.maximum.at(hi, gid, keys)
    return np.flatnonzero(lo != hi)


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
    mixed = _mixed_groups(reading, keys)
    if not mixed.size:
        return log_counts, groups
    gid = reading.group_ids
    starts = np.flatnonzero(np.diff(gid, prepend=-1))
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
        As :func:`arrangement_counts` returns it.
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
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    chunk = ScenarioRun(reading.base, reading.query[owner], offsets, reading.source[positions],
                        reading.grades[positions], reading.added[positions], reading.scores[positions])
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
        Its groups to shuffle (flat positions), e.g. from :func:`arrangement_counts`.
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


def judgment_patterns(reading: ScenarioRun, p: int, targets: np.ndarray, fill_from: int | None,
                      max_exact: int, n_samples: int, rng: np.random.Generator) -> tuple[ScenarioRun, bool]:
    """Readings of pseudo-query ``p`` under judgments of its unjudged documents: every pattern, or a sample.

    Each target rank is judged non-relevant (grade 0) or relevant at
    :func:`fill_grades`; the filled ranks past the ranking (from flat
    position ``fill_from`` on, if any) count as one more target: all absent
    (the ranking ends) or all present.

    Parameters
    ----------
    reading : ScenarioRun
        The readings (with filled ranks, if the measure reads past the ranking).
    p : int
        The pseudo-query.
    targets : numpy.ndarray
        Flat positions of its unjudged documents that the measure reads.
    fill_from : int or None
        Flat position of its first filled rank.
    max_exact : int
        Enumerate every pattern when there are at most this many targets.
    n_samples : int
        Otherwise, patterns drawn at random (each target relevant with
        probability 1/2), plus all-non-relevant and all-relevant.
    rng : numpy.random.Generator
        The draws.

    Returns
    -------
    readings : ScenarioRun
        One pseudo-query per pattern.
    exact : bool
        Whether every pattern was read.
    """
    a, b = int(reading.offsets[p]), int(reading.offsets[p + 1])
    u = targets.size + (fill_from is not None)
    exact = u <= max_exact
    if exact:
        bits = ((np.arange(1 << u, dtype=np.int64)[:, None] >> np.arange(u)) & 1).astype(bool)
    else:
        bits = rng.random((n_samples, u)) < 0.5
        bits = np.vstack([np.zeros((1, u), dtype=bool), np.ones((1, u), dtype=bool), bits])
    fill = int(fill_grades(reading)[p])
    n_pat = bits.shape[0]
    end = np.full(n_pat, b - a, dtype=np.int64)
    if fill_from is not None:
        end = np.where(bits[:, -1], b - a, fill_from - a)
    grades = np.broadcast_to(reading.grades[a:b], (n_pat, b - a)).copy()
    grades[:, targets - a] = np.where(bits[:, :targets.size], fill, 0)
    added = np.broadcast_to(reading.added[a:b], (n_pat, b - a)).copy()
    added[:, targets - a] = True
    keep = np.arange(b - a)[None, :] < end[:, None]
    offsets = np.zeros(n_pat + 1, dtype=np.int64)
    np.cumsum(end, out=offsets[1:])
    src = np.broadcast_to(reading.source[a:b], (n_pat, b - a))[keep]
    scores = np.broadcast_to(reading.scores[a:b], (n_pat, b - a))[keep]
    chunk = ScenarioRun(reading.base, np.full(n_pat, reading.query[p]), offsets, src, grades[keep],
                        added[keep], scores)
    return chunk, exact


def log_limit(limit: int) -> float:
    """The natural log of an arrangement limit, with room for rounding of :func:`arrangement_counts`."""
    return log(limit) + 1e-9
