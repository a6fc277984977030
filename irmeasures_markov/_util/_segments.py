"""Kernels on the flat layout of many rankings: per-segment sums, prefix sums and sorts.

A run's rankings are stored one after another in flat arrays, ranking ``i``
at ``slice(offsets[i], offsets[i+1])`` ([`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch]).
These kernels work on every segment at once, with no Python step per
segment, and give the numbers the same operation gives on each segment
alone, bit for bit: segments are grouped by length (within a factor of 2)
and processed as the rows of 2-D arrays, padded after each row's values
(tests/ranking/test_batching.py).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice, repeat

import numpy as np

__all__ = ["segment_cumsum", "segment_sum", "SegmentSums", "segment_argsort_desc", "query_blocks", "within_segments",
           "expand_ranges", "consecutive", "offsets_of"]

#: rows x width of one block of the per-query sort (bounds its temporary memory to about 8 MB)
_SORT_BLOCK = 1 << 18


def _length_blocks(offsets: np.ndarray, which: np.ndarray | None = None):
    """Blocks of non-empty segments of similar length: ``(starts, lengths, columns)`` per block.

    Segments whose lengths share a power of two form a group; a group is cut
    into blocks of at most ``_SORT_BLOCK`` cells (rows x width).  ``starts``
    and ``lengths`` are column vectors (one row per segment), ``columns`` is
    ``arange(width)``, width being the longest segment of the group.
    ``which`` (segment numbers, increasing) restricts the blocks to those segments.
    """
    lengths = np.diff(offsets)
    begins = offsets[:-1]
    if which is not None:
        lengths, begins = lengths[which], begins[which]
    cls = np.frexp(lengths.astype(np.float64))[1]
    for c in np.unique(cls[lengths > 0]).tolist():
        group = np.flatnonzero(cls == c)
        width = int(lengths[group].max())
        step = max(1, _SORT_BLOCK // width)
        col = np.arange(width)
        for k in range(0, group.size, step):
            qs = group[k:k + step]
            yield begins[qs][:, None], lengths[qs][:, None], col


def within_segments(pairs: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``pairs`` (one flag per neighbouring pair ``(i, i+1)`` of a flat layout) with the pairs that straddle
    a segment boundary cleared, in place; returned for convenience.

    Parameters
    ----------
    pairs : numpy.ndarray of bool
        One flag per neighbouring pair of the flat layout (``size - 1`` flags).
    starts : numpy.ndarray of int
        Segment offsets (``n + 1`` bounds).

    Returns
    -------
    numpy.ndarray
        ``pairs`` itself.
    """
    inner = starts[1:-1]
    pairs[inner[(inner > 0) & (inner <= pairs.size)] - 1] = False
    return pairs


def _unsorted_segments(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Numbers of the segments whose scores are not already non-increasing (flat layout).

    One flag per neighbouring pair (a byte per document) and one reduction per segment of two or more
    documents: no temporary of an index per rising pair, whose count can be half the run.
    """
    rises = within_segments(scores[1:] > scores[:-1], starts)   # pair (i, i+1) out of order
    lengths = np.diff(starts)
    several = np.flatnonzero(lengths > 1)
    if several.size == 0:
        return several
    # segment k's pairs start at starts[k]; the pairs between two such starts that belong to no segment of
    # two or more (those of shorter segments, and boundaries) are cleared, so each reduction is its segment's
    flags = np.logical_or.reduceat(rises, starts[:-1][several])
    return several[flags]


def segment_argsort_desc(scores: np.ndarray, starts: np.ndarray, *, sort_scores: bool = False) -> np.ndarray:
    """Per query, a stable argsort of the scores, highest first, as global indices (flat layout).

    A query whose scores are already non-increasing keeps its file order
    (the stable sort of such a segment is the identity; runs are usually
    written in rank order).  The others are grouped
    by length (lengths within a factor of 2 share a group) and each group is
    sorted as a 2-D array of negated scores, one row per query, padded with
    +inf (sorted last): the stable order of each row is the stable order of
    its query alone, and a row sort stays in cache where one sort over the
    whole run would not.
    Scores must not be NaN (the rankings check them first).

    Parameters
    ----------
    scores : numpy.ndarray of float
        The scores of every query, one after another.
    starts : numpy.ndarray of int
        Segment offsets (``n + 1`` bounds).
    sort_scores : bool
        Also put ``scores`` itself in that order, in place (what
        ``scores[order]`` gives, bit for bit, without a second array of the
        run's size).

    Returns
    -------
    numpy.ndarray of int64
        Global indices: the ranking of each query inside its own segment.
    """
    order = np.arange(scores.size, dtype=np.int64)
    if scores.size == 0:
        return order
    unsorted = _unsorted_segments(scores, starts)
    if unsorted.size == 0:
        return order
    for a, n, col in _length_blocks(starts, unsorted):
        width = col.size
        pos = a + col
        if np.all(n == width):
            keys = -scores[pos]
            local = np.argsort(keys, axis=1, kind="stable")
            order[pos] = local + a
            if sort_scores:
                # negation is exact: minus the sorted negated scores are the scores in rank order
                scores[pos] = -np.take_along_axis(keys, local, axis=1)
        else:
            real = col < n
            keys = np.full(pos.shape, np.inf)
            keys[real] = -scores[pos[real]]
            local = np.argsort(keys, axis=1, kind="stable")
            # each row's real entries sort before its padding, so they are its first n
            order[pos[real]] = (local + a)[real]
            if sort_scores:
                scores[pos[real]] = -np.take_along_axis(keys, local, axis=1)[real]
    return order


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at every query boundary (flat layout).

    Integer sums use one running cumsum (exact); floating-point sums are taken
    per segment, so a query's partial sums never carry the rounding error of
    the large running total of the queries before it: the same numbers, bit
    for bit, as ``np.cumsum`` of each segment alone.

    Parameters
    ----------
    values : numpy.ndarray
        The values of every query, one after another.
    offsets : numpy.ndarray of int
        Segment offsets (``n + 1`` bounds).

    Returns
    -------
    numpy.ndarray
        The per-segment cumulative sums, in the flat layout.
    """
    values = np.asarray(values)
    if values.dtype.kind == "f":
        return _cumsum_float(values, np.asarray(offsets))
    c = np.cumsum(values)
    if c.size == 0:
        return c
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    base = np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)
    base = np.where(lengths > 0, base, 0)
    return c - np.repeat(base, lengths)


def _cumsum_float(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per-segment ``np.cumsum`` of floats without a Python loop over segments.

    Segments are grouped by length (within a factor of 2) and summed as the
    rows of a zero-padded 2-D array: ``np.cumsum(axis=1)`` adds each row
    left to right, exactly as ``np.cumsum`` adds the segment alone, and the
    padding comes after a row's values, so it changes none of them.
    """
    out = np.empty_like(values)
    if values.size == 0:
        return out
    for a, n, col in _length_blocks(offsets):
        width = col.size
        if np.all(n == width):
            first, rows = int(a[0, 0]), a.shape[0]
            if int(a[-1, 0]) == first + (rows - 1) * width:
                # consecutive segments of one length (e.g. TREC runs of 1000 per query): the block is a
                # 2-D view of the flat arrays, summed in place without a gather and a scatter
                span = slice(first, first + rows * width)
                np.cumsum(values[span].reshape(rows, width), axis=1, out=out[span].reshape(rows, width))
                continue
            pos = a + col
            out[pos] = np.cumsum(values[pos], axis=1)
        else:
            real = col < n
            pos = (a + col)[real]
            block = np.zeros(real.shape, dtype=values.dtype)
            block[real] = values[pos]
            out[pos] = np.cumsum(block, axis=1)[real]
    return out


def segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values`` per query (0 for empty queries).

    ``np.add.reduceat`` sums each segment with numpy's pairwise summation:
    faster than a running cumsum and without its cancellation error.

    Parameters
    ----------
    values : numpy.ndarray
        The values of every query, one after another.
    offsets : numpy.ndarray of int
        Segment offsets (``n + 1`` bounds).

    Returns
    -------
    numpy.ndarray
        One sum per segment.
    """
    return SegmentSums(offsets)(values)


class SegmentSums:
    """`segment_sum` over fixed ``offsets``, its layout (the non-empty segments) worked out once.

    For many value arrays over the same segments (e.g. every measure of one
    evaluation summing over the same relevant positions); each call gives
    what ``segment_sum(values, offsets)`` gives, bit for bit.

    Parameters
    ----------
    offsets : numpy.ndarray of int
        Segment offsets (``n + 1`` bounds); calling the object with a value
        array gives one sum per segment.
    """
    __slots__ = ("n", "_starts", "_nonempty")

    def __init__(self, offsets: np.ndarray):
        lengths = np.diff(offsets)
        self.n = lengths.size
        nonempty = lengths > 0
        if self.n == 0 or not nonempty.any():
            self._starts, self._nonempty = None, None
        elif nonempty.all():
            self._starts, self._nonempty = offsets[:-1], None
        else:
            self._starts, self._nonempty = offsets[:-1][nonempty], nonempty

    def __call__(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values)
        if values.dtype == bool:
            values = values.astype(np.int64)
        dtype = np.result_type(values.dtype, np.float64) if values.dtype.kind == "f" else np.int64
        if self._starts is None:
            return np.zeros(self.n, dtype=dtype)
        sums = np.add.reduceat(values, self._starts)
        if self._nonempty is None:
            return sums.astype(dtype, copy=False)
        out = np.zeros(self.n, dtype=dtype)
        out[self._nonempty] = sums
        return out


def query_blocks(offsets: np.ndarray, size: int) -> list[tuple[int, int]]:
    """``(a, b)`` bounds of blocks of whole queries, about ``size`` documents each.

    A block starts wherever a query starts in a new multiple of ``size``
    documents, so a block holds at most ``size`` documents plus one ranking
    (queries without documents are one block; no queries, no block).  Work
    done block by block then keeps its temporaries bounded without
    splitting a query.

    Parameters
    ----------
    offsets : numpy.ndarray of int
        Query offsets (``n + 1`` bounds).
    size : int
        The documents a block aims at.

    Returns
    -------
    list of tuple of int
        ``(a, b)``: queries ``a`` to ``b - 1`` form a block.
    """
    nq = offsets.size - 1
    if nq < 1:
        return []
    group = np.asarray(offsets[:-1]) // size
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(group)) + 1, [nq]])
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def offsets_of(lengths) -> np.ndarray:
    """The ``n + 1`` int64 offsets of segments of the given lengths (0, then their running total): the flat
    layout's one rule."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def expand_ranges(begin: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``concatenate([arange(b, b + s) for b, s in zip(begin, size)])`` without a Python loop.

    Parameters
    ----------
    begin : numpy.ndarray
        Start and length of each range (integers).
    size : numpy.ndarray
        Start and length of each range (integers).

    Returns
    -------
    numpy.ndarray
    """
    total = int(size.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.zeros(size.size, dtype=np.int64)
    np.cumsum(size[:-1], out=starts[1:])
    return np.arange(total, dtype=np.int64) - np.repeat(starts - begin, size)


def consecutive(items: Sequence, lengths: list[int]) -> Iterator[Iterator]:
    """``items`` cut into consecutive runs of the given lengths (each to be read in turn, once).

    Parameters
    ----------
    items : sequence
    lengths : list of int

    Returns
    -------
    iterator of iterators
    """
    return map(islice, repeat(iter(items)), lengths)
