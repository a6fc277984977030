"""trec_eval order: scores read and checked, sorted descending, ties broken by docid descending.

For one query (`rank_documents`, `trec_order`, `top_order`)
and for every query of a run stored flat (query ``i`` occupies
``slice(starts[i], starts[i+1])``): `tie_slots` finds the tie groups of
scores, `fix_ties` orders them by docid, and `in_rank_order` puts
per-document values in rank order ordering only the groups where it matters.
Why ties are handled this way: docs/design.md.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import gt, itemgetter, lt

import numpy as np

from irmeasures_markov._util._segments import expand_ranges, offsets_of, segment_sum, within_segments

__all__ = ["read_scores", "rank_documents", "trec_order", "top_order", "tie_slots", "tie_groups", "fix_ties",
           "in_rank_order", "cut_to_depth"]

#: mixed-grade tie groups with at most this many members off the group's smallest grade place those members by
#: comparing each with the whole group, instead of ordering the group (:func:`in_rank_order`)
_ODD_COMPARE_MAX = 4
#: tie groups of at most this many documents are ordered by comparing every pair of members (:func:`fix_ties`)
_PAIRWISE_MAX_GROUP = 8
#: tied slots (whole tie groups) per block of :func:`fix_ties`: its comparisons hold several numbers and Python
#: objects per slot, for one block at a time
_FIX_BLOCK = 1 << 16


def trec_order(keys: list[str], scores: np.ndarray) -> np.ndarray:
    """Indices ordering one query's documents as trec_eval does: score descending, then docid descending.

    Parameters
    ----------
    keys : list of str
        The docids.
    scores : numpy.ndarray
        Their scores (float64, finite).

    Returns
    -------
    numpy.ndarray
        ``order``: ``keys[order[k]]`` is the document at rank k+1.
    """
    order = np.argsort(-scores, kind="stable")
    # one query is a flat layout of one segment: its tie groups are ordered as every run's are
    starts = np.array([0, scores.size])
    ties = tie_slots(scores[order], starts)
    return order if ties is None else fix_ties(order, keys, starts, *ties)


def top_order(keys: list[str], scores: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` indices of `trec_order`, without sorting the rest.

    Every document of the top k scores at least the k-th largest score t,
    so ranking just the documents scoring >= t (a whole tie group at t
    included) and keeping the first k gives the same k documents in the same
    order as the full ranking.

    Parameters
    ----------
    keys : list of str
        The docids.
    scores : numpy.ndarray
        Their scores (float64, finite).
    k : int
        How many ranks, ``1 <= k < len(keys)``.

    Returns
    -------
    numpy.ndarray
        ``trec_order(keys, scores)[:k]``.
    """
    n = scores.size
    t = np.partition(scores, n - k)[n - k]
    candidates = np.flatnonzero(scores >= t)
    if candidates.size == n:
        return trec_order(keys, scores)[:k]
    sub = trec_order([keys[i] for i in candidates.tolist()], scores[candidates])
    return candidates[sub[:k]]


def read_scores(doc_scores: Mapping[str, float], qid: str, keys: list[str] | None = None) -> np.ndarray:
    """The scores of one query as float64, in the dict's order: the one pass that reads and checks them.

    Parameters
    ----------
    doc_scores : mapping
        ``{docid: score}`` of one query.
    qid : str
        The query id, for messages.
    keys : list of str, optional
        The dict's keys as a list; only serves the message (listed if needed).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        A score that is not a number, or is NaN or infinite, naming the query
        and the document.
    """
    try:
        scores = np.fromiter(doc_scores.values(), dtype=np.float64, count=len(doc_scores))
    except (TypeError, ValueError):
        for docid, score in doc_scores.items():
            try:
                float(score)
            except (TypeError, ValueError):
                raise ValueError(f"query {qid!r}: document {docid!r} has score {score!r}, "
                                 "which is not a number.") from None
        raise
    if not np.isfinite(scores).all():
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        docid = (list(doc_scores) if keys is None else keys)[bad]
        given = doc_scores[docid]
        if given is None or isinstance(given, (str, bytes)):
            # numpy reads None as NaN: name what the run holds, not the NaN it became
            raise ValueError(f"query {qid!r}: document {docid!r} has score {given!r}, which is not a number.")
        raise ValueError(f"query {qid!r}: document {docid!r} has a non-finite score "
                         f"({float(scores[bad])!r}); scores must be finite numbers.")
    return scores


def rank_documents(doc_scores: Mapping[str, float], qid: str = "?") -> tuple[list[str], np.ndarray]:
    """Order one query's documents as trec_eval does: score descending, then docid descending.

    Parameters
    ----------
    doc_scores : mapping
        ``{docid: score}`` of one query; scores are read as float64.
    qid : str
        The query id, for messages.

    Returns
    -------
    docids : list of str
        In rank order.
    scores : numpy.ndarray
        Their scores, in rank order.

    Raises
    ------
    ValueError
        A score that is not a finite number, naming the query and document.
    """
    keys = list(doc_scores)
    scores = read_scores(doc_scores, qid, keys)
    order = trec_order(keys, scores)
    return [keys[i] for i in order.tolist()], scores[order]


def tie_slots(ranked: np.ndarray, starts: np.ndarray, *, compact: bool = False
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """The ranked positions inside a tie group of scores, every query of a flat layout at once.

    Parameters
    ----------
    ranked : numpy.ndarray
        Scores in score order, query after query.
    starts : numpy.ndarray
        Query ``i`` occupies ``slice(starts[i], starts[i+1])``.
    compact : bool
        Give int32 positions and, in place of the slots' scores, a bool per
        slot marking each group's first slot, when the run has fewer than
        2**31 documents: 5 bytes per tied document instead of 16, and the
        same groups for `tie_groups`, `fix_ties` and
        `in_rank_order` (also for any selection of whole groups).

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(slots, scores)``: the tied positions and their scores (or, compact,
        the first-slot marks); None when no two documents of a query tie.
    """
    tie = within_segments(ranked[1:] == ranked[:-1], starts)
    if not tie.any():
        return None
    in_group = np.zeros(ranked.size, dtype=bool)
    in_group[1:] = tie
    in_group[:-1] |= tie
    slots = np.flatnonzero(in_group)
    if not compact or ranked.size >= 2 ** 31:
        return slots, ranked[slots]
    first = in_group                         # reused: a group's first slot does not tie with the one before
    first[1:] &= ~tie
    del tie
    return slots.astype(np.int32), first[slots]


def tie_groups(slots: np.ndarray, slot_scores: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tie groups of `tie_slots`: consecutive tied slots of one query with one score.

    -0.0 and 0.0 are one score, as in the sort.

    Parameters
    ----------
    slots : numpy.ndarray
        As `tie_slots` returns them (compact or not), or a selection of
        whole groups of them.
    slot_scores : numpy.ndarray
        As `tie_slots` returns them (compact or not), or a selection of
        whole groups of them.
    starts : numpy.ndarray
        Query offsets of the flat layout.

    Returns
    -------
    new : numpy.ndarray of bool
        Marks each group's first slot.
    group_start : numpy.ndarray
        Index into ``slots`` of each group's first slot.
    """
    new = _group_firsts(slots, slot_scores, starts)
    return new, np.flatnonzero(new)


def _group_firsts(slots: np.ndarray, slot_scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """`tie_groups`' ``new``: whether each tied slot is its group's first (a byte per slot, nothing more)."""
    if slot_scores.dtype == bool:   # the compact form of tie_slots marks them already (whole groups only)
        return slot_scores.copy()
    new = np.ones(slots.size, dtype=bool)
    new[1:] = slot_scores[1:] != slot_scores[:-1]
    # a slot starts a new query where a query starts after the slot before it: each query start marks the
    # first slot at or after it (one index per query, not one per slot)
    first = np.searchsorted(slots, starts[1:-1], side="left")
    new[first[first < slots.size]] = True
    return new


def fix_ties(order: np.ndarray, keys: list[str], starts: np.ndarray, slots: np.ndarray,
              slot_scores: np.ndarray) -> np.ndarray:
    """Sort the tie groups of a stable score order by docid descending, in place.

    Groups already in docid order (ascending or descending) are reversed or
    kept; small groups are ordered by comparing every pair of members, groups
    larger than ``_PAIRWISE_MAX_GROUP`` by sorting their members
    (docs/design.md, "Tie groups").  The groups are ordered in blocks of
    about ``_FIX_BLOCK`` tied slots (whole groups), which bounds the memory
    of the comparisons; each group's order is its own, whatever the blocks.

    Parameters
    ----------
    order : numpy.ndarray
        Index into ``keys`` of the document at each rank, sorted by score;
        changed in place.
    keys : list of str
        The docids in file order, query after query.
    starts : numpy.ndarray
        Query offsets of the flat layout.
    slots : numpy.ndarray
        The tie groups to order, as `tie_slots` gives them.
    slot_scores : numpy.ndarray
        The tie groups to order, as `tie_slots` gives them.

    Returns
    -------
    numpy.ndarray
        ``order``.
    """
    m = slots.size
    if m <= _FIX_BLOCK:
        return _fix_ties_block(order, keys, starts, slots, slot_scores)
    # blocks of whole groups: each cut at a multiple of _FIX_BLOCK moves on to the next group's first slot
    # (argmax of a bool view stops at the first True), with no array per group
    first = _group_firsts(slots, slot_scores, starts)
    cuts = [0]
    for c in range(_FIX_BLOCK, m, _FIX_BLOCK):
        j = c + int(np.argmax(first[c:]))
        if not first[j]:
            break          # c is inside the last group
        if j > cuts[-1]:
            cuts.append(j)
    del first
    cuts.append(m)
    for sa, sb in zip(cuts[:-1], cuts[1:], strict=True):
        _fix_ties_block(order, keys, starts, slots[sa:sb], slot_scores[sa:sb])
    return order


def _fix_ties_block(order: np.ndarray, keys: list[str], starts: np.ndarray, slots: np.ndarray,
                    slot_scores: np.ndarray) -> np.ndarray:
    """`fix_ties` of whole tie groups at once."""
    members = order[slots]
    m = slots.size
    # a tuple from one C-level call (itemgetter of one index gives the item itself)
    member_keys = itemgetter(*members.tolist())(keys) if m > 1 else tuple(map(keys.__getitem__, members.tolist()))
    new, group_start = tie_groups(slots, slot_scores, starts)
    group_size = np.diff(np.append(group_start, m))
    # rises[j]: member j's docid is smaller than member j+1's (docids of a query are distinct)
    rises = np.fromiter(map(lt, member_keys[:-1], member_keys[1:]), dtype=bool, count=m - 1)
    rises &= ~new[1:]                                           # only pairs inside a group
    n_rises = np.add.reduceat(rises, group_start) if m > 1 else np.zeros(0, dtype=np.int64)
    ascending = n_rises == group_size - 1
    dest = np.arange(m, dtype=np.int64)  # where, among the slots, each member goes: kept where descending
    if ascending.any():
        g0, gs = group_start[ascending], group_size[ascending]
        idx = expand_ranges(g0, gs)
        dest[idx] = np.repeat(2 * g0 + gs - 1, gs) - idx        # reversed: g0 + (g0 + gs - 1 - idx)
    other = (n_rises > 0) & ~ascending
    small = other & (group_size <= _PAIRWISE_MAX_GROUP)
    if small.any():
        g0, gs = group_start[small], group_size[small]
        idx = expand_ranges(g0, gs)                                    # the members of small groups
        after = np.repeat(g0 + gs, gs) - idx - 1                 # members of its group after each member
        this = np.repeat(idx, after)
        other_member = expand_ranges(idx + 1, after)                   # every pair of a group once, this < other
        larger = np.fromiter(map(gt, map(member_keys.__getitem__, other_member.tolist()),
                                 map(member_keys.__getitem__, this.tolist())), dtype=bool, count=this.size)
        # members with a larger docid go first: each pair counts once for one of its two members
        above = np.bincount(this[larger], minlength=m) + np.bincount(other_member[~larger], minlength=m)
        dest[idx] = np.repeat(g0, gs) + above[idx]
    big = other & ~small
    if big.any():
        big_start, big_size = group_start[big], group_size[big]
        idx = expand_ranges(big_start, big_size)
        big_keys = list(map(member_keys.__getitem__, idx.tolist()))
        by_key = np.fromiter(sorted(range(idx.size), key=big_keys.__getitem__, reverse=True), dtype=np.int64,
                             count=idx.size)
        group = np.repeat(np.arange(big_start.size), big_size)
        # docid descending within each group (a stable sort by group keeps the docid order)
        dest[idx[by_key[np.argsort(group[by_key], kind="stable")]]] = idx
    order[slots[dest]] = members
    return order


def cut_to_depth(order: np.ndarray, positive: np.ndarray, grades: np.ndarray | None, starts: np.ndarray,
                 lengths: np.ndarray, depth: int, keys: list[str],
                 ties: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                                                      np.ndarray, None]:
    """Full rankings cut to their first ``min(depth, n)`` ranks: ``(order, positive, grades, starts, None)``.

    A full sort of short rankings then a cut costs less than a partial sort
    per query.  Pending tie groups are ordered first (a cut may fall inside
    one), so the returned ties are None.

    Parameters
    ----------
    order : numpy.ndarray
        The full rankings' order and positive grades (flat layout).
    positive : numpy.ndarray
        The full rankings' order and positive grades (flat layout).
    grades : numpy.ndarray or None
        Every grade at each rank, when joined already.
    starts : numpy.ndarray
        Query offsets of the full rankings.
    lengths : numpy.ndarray
        Each query's number of documents.
    depth : int
    keys : list of str
        The docids in file order (for the pending tie groups).
    ties : tuple of numpy.ndarray or None
        Pending tie groups (`tie_slots`).

    Returns
    -------
    tuple
    """
    if ties is not None:
        # only the groups that start above the cut matter: a group wholly below it is cut away unordered
        slots, marks = ties
        _, group_start = tie_groups(slots, marks, starts)
        first = slots[group_start].astype(np.int64)
        above = first - starts[np.searchsorted(starts, first, side="right") - 1] < depth
        if not above.all():
            kept = np.repeat(above, np.diff(np.append(group_start, slots.size)))
            slots, marks = slots[kept], marks[kept]
        if slots.size:
            order = fix_ties(order, keys, starts, slots, marks)
    # the kept positions themselves: no temporary of an index per ranked document (most are cut away)
    kept_lengths = np.minimum(lengths, depth)
    top = expand_ranges(starts[:-1], kept_lengths)
    order, positive = order[top], positive[top]
    if grades is not None:
        grades = grades[top]
    return order, positive, grades, offsets_of(kept_lengths), None


def in_rank_order(values: np.ndarray, order: np.ndarray, keys: list[str] | Callable[[], list[str]],
                  key_starts: np.ndarray, ties: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """``values[order]`` as it reads once the tie groups of ``order`` are ordered by docid.

    Only the groups whose members have different values are ordered: a group
    of equal values reads the same in any order.  In a group where at most
    ``_ODD_COMPARE_MAX`` members differ from the group's smallest value, each
    of those is placed by counting the members with a larger docid; other
    mixed groups are ordered by `fix_ties` (docs/design.md, "Tie groups").
    ``order`` itself is left as it is.

    Parameters
    ----------
    values : numpy.ndarray
        One value per document of ``keys``.
    order : numpy.ndarray
        Index into ``keys`` of the document at each rank, sorted by score.
    keys : list of str, or a callable returning it
        The docids in file order, query after query; a callable is called
        only when a tie group of mixed values needs them.
    key_starts : numpy.ndarray
        Query offsets of ``keys``.
    ties : tuple of numpy.ndarray or None
        The tie groups still in file order (`tie_slots`), or None when
        ``order`` is final.

    Returns
    -------
    numpy.ndarray
        The value at each rank.
    """
    out = values[order]
    if ties is None:
        return out
    slots, slot_scores = ties
    m = slots.size
    new, group_start = tie_groups(slots, slot_scores, key_starts)
    group = np.cumsum(new) - 1
    member = out[slots]
    low = np.minimum.reduceat(member, group_start)
    mixed = low != np.maximum.reduceat(member, group_start)
    if not mixed.any():
        return out
    if callable(keys):
        keys = keys()
    odd = member != low[group]
    few = mixed & (np.add.reduceat(odd, group_start) <= _ODD_COMPARE_MAX)
    many = mixed & ~few
    if many.any():
        keep = many[group]
        kept = slots[keep]
        fixed = fix_ties(order.copy(), keys, key_starts, kept, slot_scores[keep])
        out[kept] = values[fixed[kept]]
    if few.any():
        placed = few[group]
        mover = np.flatnonzero(odd & placed)              # members (indices into slots) to place
        begin = group_start[group[mover]]
        size = np.append(group_start[1:], m)[group[mover]] - begin
        others = expand_ranges(begin, size)                     # every member of each mover's group
        movers = np.repeat(mover, size)
        ranked_keys = itemgetter(*order[slots].tolist())(keys)      # slots: at least one group of two
        larger = np.fromiter(map(gt, map(ranked_keys.__getitem__, others.tolist()),
                                 map(ranked_keys.__getitem__, movers.tolist())), dtype=bool, count=others.size)
        offsets = offsets_of(size)
        out[slots[placed]] = low[group[placed]]
        # docids are distinct within a query: a mover goes after the members with a larger docid
        out[slots[begin + segment_sum(larger, offsets)]] = member[mover]
    return out
