"""Multiple-comparison corrections of a family of p-values (Holm, Bonferroni, Benjamini–Hochberg)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov.inference._inputs import check_choice

__all__ = ["CORRECTIONS", "adjust_pvalues"]


#: the multiple-comparison corrections of :func:`adjust_pvalues` (None also means "none")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")


def adjust_pvalues(pvalues: ArrayLike, method: str | None = "holm") -> np.ndarray:
    """Multiple-comparison correction of m p-values.

    * ``'holm'``: Holm's step-down family-wise correction, p_(i) ↦ max_{j≤i} min(1, (m − j + 1) p_(j));
    * ``'bonferroni'``: min(1, m p) (family-wise);
    * ``'fdr_bh'``: Benjamini–Hochberg false discovery rate, p_(i) ↦ min_{j≥i} min(1, m p_(j) / j)
      (the same values as statsmodels' ``multipletests(method='fdr_bh')``);
    * ``'none'`` or None: the p-values unchanged.

    Parameters
    ----------
    pvalues : array_like
        The m p-values of one family.
    method : {'holm', 'bonferroni', 'fdr_bh', 'none'} or None

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given.

    Raises
    ------
    ValueError
        An unknown ``method``.
    """
    check_choice("correction", method, (*CORRECTIONS, None))
    p = np.asarray(pvalues, dtype=np.float64)
    if method is None or method == "none":
        return p.copy()
    m = p.size
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    if method == "fdr_bh":
        adj = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    else:
        adj = np.maximum.accumulate(p[order] * (m - np.arange(m)))  # holm
    out = np.empty(m)
    out[order] = np.minimum(1.0, adj)
    return out
