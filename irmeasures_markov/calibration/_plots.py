"""Plots of a fit's diagnostics: one panel per kind of curve (:meth:`FitReport.plot` lays them out)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure

__all__ = ["draw_panel", "PANELS", "plot_click_metrics"]

#: the kinds of panel :func:`draw_panel` draws, in the order :meth:`FitReport.plot` shows them
PANELS = ("jumps", "ctr", "stop", "survival", "rates", "dwell")
#: each panel's axis labels (x, y)
_AXES = {"jumps": ("jump j - i between consecutive clicks (ranks)", "share of jumps"),
         "ctr": ("rank", "P(click at rank)"), "stop": ("rank", "probability"),
         "survival": ("seconds after the first click", "P(still searching)"),
         "rates": ("rank", "holding rate (1/s)"), "dwell": ("dwell time (s)", "P(dwell > t)")}


def draw_panel(ax: matplotlib.axes.Axes, fam: str, model: str, key: str, d: dict) -> None:
    """Draw one diagnostic panel of a fit on ``ax``.

    Parameters
    ----------
    ax : matplotlib Axes
    fam, model : str
        The fit's family and model (for the title and legend).
    key : {'jumps', 'ctr', 'stop', 'survival', 'rates', 'dwell'}
        Which curves: MP's jump distribution, click-through by rank, P(stop at
        k), TBG's survival, MPcont's holding rates, the dwell-time survival.
    d : dict
        The fit's entry of :attr:`FitReport.diagnostics` (``'family/model'``).
    """
    def share(v):
        v = np.asarray(v)
        return v / v.sum() if v.sum() > 0 else v

    if key == "jumps":
        T = (len(d["jumps_observed"]) + 1) // 2
        x = np.arange(-(T - 1), T)
        ax.bar(x, share(d["jumps_observed"]), color="0.75", label="observed")
        ax.plot(x, share(d["jumps_predicted"]), "o-", color="C0", label=model)
    elif key == "ctr":
        r = np.arange(1, len(d["ctr_observed"]) + 1)
        ax.bar(r, d["ctr_observed"], color="0.75", label="observed")
        ax.plot(r, d["ctr_predicted"], "o-", color="C1", label=model)
    elif key == "stop":
        r = np.arange(1, len(d["stop_probabilities"]) + 1)
        if "last_click_observed" in d:
            ax.bar(r, share(d["last_click_observed"][1:]), color="0.75",
                   label="last click (observed, sessions with a click)")
        ax.plot(r, d["stop_probabilities"], "o-", color="C2", label=f"P(stop at k), {model}")
    elif key == "survival":
        ax.plot(d["survival_t"], d["survival_fitted"], color="C3", label="fitted")
        ax.plot(d["survival_t"], d["survival_empirical"], color="0.5", label="observed ends")
    elif key == "rates":
        r = np.arange(1, len(d["rates"]) + 1)
        err = [np.clip(np.subtract(d["rates"], d["rates_low"]), 0, None),
               np.clip(np.nan_to_num(np.subtract(d["rates_high"], d["rates"])), 0, None)]
        ax.errorbar(r, d["rates"], yerr=err, fmt="o", color="C4",
                    label="fitted rate, 95% interval")
    elif key == "dwell":
        ax.plot(d["dwell_t"], d["dwell_km"], color="0.4", label="observed (Kaplan-Meier)")
        ax.plot(d["dwell_t"], d["dwell_fitted"], color="C4", label="exponential, pooled rate")
    if key in _AXES:
        ax.set_xlabel(_AXES[key][0])
        ax.set_ylabel(_AXES[key][1])
    ax.set_title(f"{fam}: {model}", fontsize=9)
    ax.legend(fontsize=7)


def plot_click_metrics(curves: list[tuple[str, dict]], *, axes=None) -> matplotlib.figure.Figure:
    """Two panels: CTR by rank (observed and predicted) and click perplexity by rank, one curve per model.

    Parameters
    ----------
    curves : list of (label, metrics)
        ``metrics`` a :meth:`ClickMetrics.as_dict` dict (:meth:`FitReport.plot_clicks` builds them).
    axes : two matplotlib Axes, optional
        Default: a new figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt  # imported when a plot is asked for
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    axes = np.atleast_1d(axes).ravel()

    def arr(v):
        return np.array([np.nan if x is None else x for x in v], dtype=float)

    # observed click-through rate by rank: bars, from the first model's metrics (the same sessions for all)
    obs = arr(curves[0][1]["ctr_observed"])
    r = np.arange(1, obs.size + 1)
    axes[0].bar(r, obs, color="0.8", label="observed")
    for i, (name, d) in enumerate(curves):
        axes[0].plot(r, arr(d["ctr_predicted"]), "o-", ms=3, color=f"C{i % 10}", label=name)
        p = arr(d["perplexity_per_rank"])
        axes[1].plot(np.arange(1, p.size + 1), p, "o-", ms=3, color=f"C{i % 10}",
                     label=f"{name} ({d['perplexity']:.3f})")
    axes[0].set_ylabel("P(click at rank)")
    axes[0].set_title("click-through rate by rank", fontsize=9)
    axes[1].set_ylabel("click perplexity")
    axes[1].set_title("click perplexity by rank (mean in brackets)", fontsize=9)
    for ax in axes[:2]:
        ax.set_xlabel("rank")
        ax.legend(fontsize=7)
    fig = axes[0].figure
    fig.tight_layout()
    return fig
