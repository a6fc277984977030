"""Compact letter display: groups of systems no two of which differ significantly, named a, b, ... best first."""
from __future__ import annotations

import string

import numpy as np

__all__ = ["letter_groups", "format_groups", "letter_names"]


def letter_groups(means: np.ndarray, significant: np.ndarray) -> list[list[int]]:
    """Groups of systems no two of which differ significantly (compact letter display; Piepho, *J. Comput. Graph.
    Stat.* 13(2), 2004, insert-and-absorb), ordered by their best mean (the first group holds the best system).

    Parameters
    ----------
    means : numpy.ndarray
        Mean of each system.
    significant : numpy.ndarray
        Symmetric boolean matrix, True where two systems differ significantly.

    Returns
    -------
    list of list of int
        Each group's system positions, best mean first.
    """
    m = len(means)
    cols = [(1 << m) - 1]
    for i, j in zip(*np.nonzero(np.triu(significant, 1))):
        i, j = int(i), int(j)
        kept, split = [], []
        for c in cols:
            if (c >> i) & 1 and (c >> j) & 1:
                split += [c & ~(1 << j), c & ~(1 << i)]
            else:
                kept.append(c)
        # before a split no column is inside another; only the new ones can be inside one now
        for c in split:
            if not any(c != d and c & d == c for d in kept) and c not in kept:
                kept.append(c)
        cols = kept
    order = np.argsort(-np.asarray(means), kind="stable")
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m)
    groups = [sorted((p for p in range(m) if (c >> p) & 1), key=lambda p: rank[p]) for c in cols]
    groups.sort(key=lambda g: [rank[p] for p in g])
    return groups


def letter_names(n: int) -> list[str]:
    """The names of n groups, and of n runs in the all-pairs markers of a comparison: a..z, A..Z, then 53, 54, ...
    as numbers."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    return [alphabet[i] if i < len(alphabet) else str(i + 1) for i in range(n)]


def format_groups(groups: list[list[int]], n_systems: int, compact: bool = False) -> list[str]:
    """Each system's group letters: ``'ab'``; ``compact``: three or more consecutive letters as a range ``'a-d'``;
    beyond 52 groups the names are numbers, joined by commas.

    Returns
    -------
    list of str
        One string per system position.
    """
    names = letter_names(len(groups))
    member: list[list[int]] = [[] for _ in range(n_systems)]
    for g, members in enumerate(groups):
        for p in members:
            member[p].append(g)
    sep = "," if len(groups) > 52 else ""
    out = []
    for gs in member:
        parts, i = [], 0
        while i < len(gs):
            j = i
            while compact and j + 1 < len(gs) and gs[j + 1] == gs[j] + 1:
                j += 1
            if j - i >= 2:
                parts.append(f"{names[gs[i]]}-{names[gs[j]]}")
            else:
                parts += [names[g] for g in gs[i:j + 1]]
            i = j + 1
        out.append(sep.join(parts))
    return out
