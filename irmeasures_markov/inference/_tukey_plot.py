"""A picture of Tukey's HSD: pairwise differences with their simultaneous intervals, or, for many systems, each
system's comparison interval; grouping letters beside the systems.  matplotlib is imported here only.

With every system on the same topics, Tukey's intervals all have one half-width c, so two systems differ
significantly exactly when their comparison intervals, mean ± c/2, do not overlap (Hochberg & Tamhane 1987,
§3.3); that panel stays readable for a hundred systems, where a forest of all pairs would not.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from irmeasures_markov._util._plotting import pyplot
from irmeasures_markov.inference._inputs import check_choice

__all__ = ["tukey_panel", "PAIRS_SHOWN"]

#: up to this many pairs a panel shows every pair; beyond, one comparison interval per system
PAIRS_SHOWN = 45


def tukey_panel(result: Any, alpha: float = 0.05, ax: Any = None, title: str | None = None,
                kind: str = "auto") -> Any:
    """Draw ``result`` (a ``TukeyResult``) on ``ax`` (default: a new figure); returns the figure."""
    plt = pyplot("the Tukey plot")
    check_choice("kind", kind, ("auto", "pairs", "systems"))
    pairs = kind == "pairs" or (kind == "auto" and len(result.a) <= PAIRS_SHOWN)
    groups = result.groups(alpha, compact=len(result.systems) > 12)
    rows = len(result.a) if pairs else len(result.systems)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, max(2.0, 0.25 * rows + 1.0)))
    fig = ax.figure
    if pairs:
        order = np.argsort(result.mean_difference, kind="stable")
        sig = result.significant(alpha)[order]
        y = np.arange(order.size)
        d = result.mean_difference[order]
        ax.errorbar(d, y, xerr=[d - result.low[order], result.high[order] - d], fmt="o", color="none",
                    ecolor="lightgray", capsize=2)
        ax.scatter(d, y, c=np.where(sig, "tab:red", "tab:gray"), zorder=3, s=14)
        ax.axvline(0.0, color="black", linewidth=0.8)
        labels = [f"{result.systems[result.a[k]]} ({groups[result.systems[result.a[k]]]}) − "
                  f"{result.systems[result.b[k]]} ({groups[result.systems[result.b[k]]]})" for k in order]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_xlabel(f"difference of means, {result.level:.0%} simultaneous interval (red: p < {alpha:g})")
    else:
        order = np.argsort(result.means, kind="stable")
        y = np.arange(order.size)
        m = result.means[order]
        half = result.critical / 2
        ax.errorbar(m, y, xerr=half, fmt="o", markersize=3, color="tab:blue", ecolor="tab:blue", capsize=1.5)
        ax.set_yticks(y, [f"{result.systems[i]} ({groups[result.systems[i]]})" for i in order],
                      fontsize=max(3, min(8, 400 // max(1, order.size))))
        ax.set_xlabel("mean ± half Tukey's critical difference\n(no overlap: significantly different)")
    ax.set_title(title or f"Tukey HSD ({result.method})", fontsize=9)
    fig.tight_layout()
    return fig
