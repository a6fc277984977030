"""The [`FitReport`][irmeasures_markov.calibration.FitReport]: every candidate fitted to one log, compared (table,
fit-file form, plots: one panel per
kind of diagnostic curve, `draw_panel`, laid out by
[`FitReport.plot`][irmeasures_markov.calibration.FitReport.plot])."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._plotting import pyplot
from irmeasures_markov.calibration._logs import split_text
from irmeasures_markov.calibration._result import FAMILIES, FamilyFit

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure
    import pandas

__all__ = ["FitReport", "label", "draw_panel"]


class FitReport:
    """All candidates fitted to one log, with their comparison.

    Every fit (and click model, and baseline) carries ``heldout_metrics`` and
    ``train_metrics``: [`click_metrics`][irmeasures_markov.calibration.click_metrics] on the held-out and
    the training sessions as a dict (log-likelihood per session, click
    perplexity overall and per rank, CTR predicted and observed), or None where
    the model does not predict clicks.

    Attributes
    ----------
    fits : list of FamilyFit
    diagnostics : dict
        ``"family/model" -> {curve name: list}`` for the plots (CTR by rank,
        jump distribution, stopping distribution, dwell survival).
    notes : list of str
        What could not be fitted and why (e.g. TBG clicks without qrels).
    unfitted : list of FamilyFit
        Candidates that give probability 0 to some training session whatever
        their parameters (e.g. a forward-only user and a backward click): no
        estimate, so they are not among ``fits`` (nor in a fit file); the table
        lists them, and ``notes`` names them.
    log : dict
        What the log was: ``description``, ``source``, ``n_sessions``,
        ``n_heldout``, ``split`` (how the held-out sessions were chosen:
        ``{"kind": "query"|"sessions", "fraction", "seed"}``, ``{"kind": "file"}``
        or ``{"kind": "none"}``) and, when the reader dropped clicks on documents
        that were not in the ranking shown, ``dropped_clicks`` (training sessions)
        and ``heldout_dropped_clicks``.
    click_models : dict
        ``name -> ClickModelFit``: the fitted click models themselves (their
        rows in ``fits`` are FamilyFit records of family ``'clickmodel'``,
        ``model`` the click model's name, what a fit file stores).
    baselines : list
        Reference click predictors that are not user models (the rank-CTR
        table, `RankCTR`, fitted with the click models): rows of
        the table, not written to a fit file.

    """

    def __init__(self, fits: list[FamilyFit], diagnostics: dict | None = None, notes: list[str] | None = None,
                 log: dict | None = None, unfitted: list[FamilyFit] | None = None,
                 baselines: list | None = None, click_models: dict | None = None) -> None:
        self.fits, self.notes, self.unfitted, self.baselines = (list(x or []) for x in
                                                                (fits, notes, unfitted, baselines))
        self.diagnostics, self.log, self.click_models = (dict(x or {}) for x in (diagnostics, log, click_models))
        self._sequence: list[FamilyFit] = []     # fit() sets it: every candidate in the order it was fitted

    @property
    def families(self) -> tuple[str, ...]:
        """The families with at least one fitted candidate (those a fit file of this report can serve)."""
        return tuple(f for f in FAMILIES if self.family(f))

    # -- selection ------------------------------------------------------------------------
    def family(self, family: str) -> list[FamilyFit]:
        """The fitted candidates of one family (``'mp'``, ``'ph'``, ``'carterette'``, ``'tbg'``), in fit order.

        Parameters
        ----------
        family : str
            The family's name: ``'mp'``, ``'ph'``, ``'carterette'`` or ``'tbg'``.

        Returns
        -------
        list of FamilyFit
            Its fitted candidates (empty when it has none).
        """
        return [f for f in self.fits if f.family == family]

    def best(self, family: str) -> FamilyFit:  # also 'clickmodel': the best click model
        """The family's best candidate: highest held-out log-likelihood when a test log was given, else lowest
        AIC ($2k - 2\\log L$; ties: fewer parameters).

        Parameters
        ----------
        family : {'mp', 'ph', 'carterette', 'tbg'}

        Returns
        -------
        FamilyFit

        Raises
        ------
        KeyError
            When the report has no fit of that family.
        """
        cands = self.family(family)
        if not cands:
            raise KeyError(f"no {family!r} fit in this report (fitted: {sorted({f.family for f in self.fits})})")
        held = [f.heldout_loglik if isinstance(f, FamilyFit) else metric(f, "loglik") for f in cands]
        if all(h is not None for h in held):
            return max(zip(cands, held), key=lambda fh: (_finite(fh[1]), -fh[0].n_params))[0]
        return min(cands, key=lambda f: (_aic(f), f.n_params))

    # -- tables ---------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """The comparison table, one dict per candidate (fitted or not) in the order they were fitted.

        Keys: ``family``, ``model``, ``k`` (free parameters), ``n`` (training
        sessions), ``loglik``, ``AIC``, ``BIC`` ($k\\log n - 2\\log L$),
        ``heldout_loglik``, ``perplexity`` ($\\exp(-\\log L / \\text{events})$
        with the family's own events, held out when a test log was given; None
        for click models), ``ll_per_session`` and ``click_perplexity`` (from
        [`click_metrics`][irmeasures_markov.calibration.click_metrics], on the held-out sessions when there
        are any, else on the training sessions; None where the model does not
        predict clicks), ``perplexity_per_rank`` (list or None) and ``params``
        (a short text).  Click models (family ``'clickmodel'``) and baselines
        (``'baseline'``) follow the families' candidates.

        Returns
        -------
        list of dict
            One row per candidate.
        """
        out = []
        listed = self.fits + self.unfitted + self.baselines
        # the candidates in the order they were fitted (fit() records it), then any added since
        ordered = [f for f in self._sequence if any(f is g for g in listed)]
        ordered += [f for f in listed if not any(f is g for g in ordered)]
        which = self._which()
        for f in ordered:
            own = isinstance(f, FamilyFit)  # else a baseline
            held, ppl = f.heldout_loglik if own else metric(f, "loglik"), None
            if own and f.family in FAMILIES:  # a click model has no events of its own
                ev, ll = (f.n_heldout_events, held) if held is not None else (f.n_events, f.loglik)
                ppl = math.exp(-ll / ev) if ev and np.isfinite(ll) else float("inf")
            out.append({"family": f.family, "model": f.model if own else f.name, "k": f.n_params, "n": f.n_sessions,
                        "loglik": f.loglik, "AIC": _aic(f), "BIC": _bic(f), "heldout_loglik": held, "perplexity": ppl,
                        "ll_per_session": metric(f, "loglik_per_session", which),
                        "click_perplexity": metric(f, "perplexity", which),
                        "perplexity_per_rank": metric(f, "perplexity_per_rank", which), "params": _short_params(f)})
        return out

    def to_frame(self) -> pandas.DataFrame:
        """[`rows`][irmeasures_markov.calibration.FitReport.rows] as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per candidate, the columns the keys of [`rows`][irmeasures_markov.calibration.FitReport.rows].
        """
        import pandas as pd
        return pd.DataFrame(self.rows())

    def __str__(self) -> str:
        rows = self.rows()
        which = self._which()
        head = f"{'family':10s} {'model':24s} {'k':>5s} {'loglik':>12s} {'AIC':>12s} {'BIC':>12s} " \
               f"{'held-out ll':>12s} {'ppl/event':>10s} {'LL/session':>10s} {'click ppl':>9s}  parameters"
        lines = [head, "-" * len(head)]
        for r in rows:
            held = "" if r["heldout_loglik"] is None else f"{r['heldout_loglik']:12.1f}"
            best = r["family"] != "baseline" and bool(self.family(r["family"])) \
                and label(self.best(r["family"])) == f"{r['family']}/{r['model']}"
            lines.append(f"{r['family']:10s} {r['model'] + (' *' if best else ''):24s} {r['k']:5d} "
                         f"{r['loglik']:12.1f} {r['AIC']:12.1f} {r['BIC']:12.1f} {held:>12s} "
                         f"{_num(r['perplexity'], 10, 4)} {_num(r['ll_per_session'], 10, 4)} "
                         f"{_num(r['click_perplexity'], 9, 4)}  {r['params']}")
        where = "held-out" if which == "heldout" else "training"
        lines.append("* best of its family (held-out log-likelihood, else AIC); ppl/event: exp(-loglik/events), "
                     "events as each family counts them; LL/session and click ppl: click metrics on the "
                     f"{where} sessions (the same for every row; — where the model does not predict clicks)")
        if self.log.get("split"):
            lines.append(split_text(self.log["split"]))
        lines += rank_tables(self.fits + self.baselines, which)
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    def _which(self) -> str:
        """The sessions the table's click metrics are on: held out when there are any."""
        listed = self.fits + self.unfitted + self.baselines
        held = self.log.get("n_heldout") or any(getattr(f, "heldout_metrics", None) for f in listed)
        return "heldout" if held else "train"

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The report as JSON-able data (fits, index of each family's best, diagnostics, notes, log, unfitted).

        Returns
        -------
        dict
            Keys ``fits``, ``best``, ``diagnostics``, ``notes``, ``log`` and ``unfitted``;
            [`from_dict`][irmeasures_markov.calibration.FitReport.from_dict] reads it.
        """
        best = {fam: self.fits.index(self.best(fam)) for fam in self.families}
        return {"fits": [f.to_dict() for f in self.fits], "best": best, "diagnostics": self.diagnostics,
                "notes": self.notes, "log": self.log, "unfitted": [f.to_dict() for f in self.unfitted]}

    @classmethod
    def from_dict(cls, d: dict) -> FitReport:
        """The report a [`to_dict`][irmeasures_markov.calibration.FitReport.to_dict] dict describes (every fit checked
        by [`FamilyFit.from_dict`][irmeasures_markov.calibration.FamilyFit.from_dict])."""
        return cls([FamilyFit.from_dict(x) for x in d.get("fits", [])], d.get("diagnostics"), d.get("notes"),
                   d.get("log"), [FamilyFit.from_dict(x) for x in d.get("unfitted", [])])

    # -- plots ----------------------------------------------------------------------------
    def plot(self, family: str | None = None, *, axes: matplotlib.axes.Axes | np.ndarray | None = None
             ) -> matplotlib.figure.Figure:
        """Draw the diagnostics of the best fit of each family (or of one family).

        Parameters
        ----------
        family : str, optional
            One family; default every family with a fit.
        axes : matplotlib Axes or array of them, optional
            Where to draw, one panel per axes; default a new figure.

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        ValueError
            When the report holds no diagnostics (e.g. one read from a fit file written before fit files kept
            the best fits' curves).
        """
        plt = pyplot("FitReport.plot")
        best = [self.best(fam) for fam in ([family] if family else self.families)]
        panels = [(b.family, b.model, key, diag) for b in best for diag in [self.diagnostics.get(label(b), {})]
                  for key in PANELS if any(k.startswith(key) for k in diag)]
        if not panels:
            raise ValueError("nothing to plot: the report holds no diagnostics")
        if axes is None:
            ncol = min(3, len(panels))
            nrow = int(math.ceil(len(panels) / ncol))
            _, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow), squeeze=False)
        axes = np.atleast_1d(axes).ravel()
        fig = axes[0].figure
        for ax, (fam, model, key, d) in zip(axes, panels):
            draw_panel(ax, fam, model, key, d)
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        fig.tight_layout()
        return fig

    def plot_clicks(self, models: Sequence[str] | None = None, *, which: str = "heldout",
                    axes: np.ndarray | None = None) -> matplotlib.figure.Figure:
        """Per-rank click-through rate (observed and predicted) and click perplexity, one curve per model.

        Parameters
        ----------
        models : sequence of str, optional
            ``'family/model'`` labels (e.g. ``'clickmodel/PBM'``, ``'carterette/RBP'``); default the best
            fit of each family, every click model and the baselines.
        which : {'heldout', 'train'}
            The sessions the metrics were computed on.
        axes : two matplotlib Axes, optional

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        ValueError
            When no chosen model has click metrics, or a label is unknown.
        """
        pool = self.fits + self.baselines
        if models is None:
            chosen = [self.best(f) for f in self.families]
            chosen += [m for m in pool if m.family not in FAMILIES]
        else:
            by = {label(m): m for m in pool}
            unknown = [m for m in models if m not in by]
            if unknown:
                raise ValueError(f"unknown model {unknown[0]!r}; the report has {', '.join(by)}")
            chosen = [by[m] for m in models]
        curves = [(label(m), d) for m in chosen if (d := getattr(m, f"{which}_metrics", None))]
        if not curves:
            raise ValueError(f"nothing to plot: no chosen model has {which} click metrics")
        return plot_click_metrics(curves, axes=axes)


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

def metric(model, key: str, which: str = "heldout"):
    """One number of a model's stored metrics (``'heldout'`` or ``'train'``), None when it has none."""
    v = (getattr(model, f"{which}_metrics", None) or {}).get(key)
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _cell(x, nd: int) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"


def label(model) -> str:
    """``family/model`` of a row (a click model's and the baseline's name)."""
    return f"{model.family}/{getattr(model, 'model', None) or model.name}"


def rank_tables(models: Sequence, which: str = "heldout") -> list[str]:
    """Text tables: click perplexity per rank, and CTR predicted by each model next to the observed one.

    Parameters
    ----------
    models : sequence
        Fits, click models and baselines carrying ``heldout_metrics`` / ``train_metrics``.
    which : {'heldout', 'train'}

    Returns
    -------
    list of str
        Lines (empty when no model has metrics).
    """
    scored = [(label(m), d) for m in models if (d := getattr(m, f"{which}_metrics", None))]
    if not scored:
        return []
    # the ranks some session shows (a column no model can fill is left out)
    seen = [r for r in range(max(d["depth"] for _, d in scored))
            if any(r < len(d["ctr_observed"]) and d["ctr_observed"][r] is not None for _, d in scored)]
    depth = max(seen) + 1 if seen else 1
    where = "held-out" if which == "heldout" else "training"
    ranks = "".join(f"{r:>7d}" for r in range(1, depth + 1))
    width = max(24, max(len(n) for n, _ in scored))

    def row(name, values):
        return f"{name:{width}s}" + "".join(f"{_cell(x, 3):>7s}" for x in values[:depth])

    lines = ["", f"click perplexity by rank ({where} sessions)", f"{'model':{width}s}{ranks}"]
    lines += [row(n, d["perplexity_per_rank"]) for n, d in scored]
    lines += ["", f"click-through rate by rank ({where} sessions): observed, and predicted by each model",
              f"{'model':{width}s}{ranks}", row("observed", scored[0][1]["ctr_observed"])]
    return lines + [row(n, d["ctr_predicted"]) for n, d in scored]


def _num(x, width: int, nd: int) -> str:
    return f"{'—':>{width}s}" if x is None else f"{x:{width}.{nd}f}"


def _finite(x):
    return x if x is not None and np.isfinite(x) else -np.inf


def _aic(f: FamilyFit) -> float:
    return 2 * f.n_params - 2 * f.loglik if np.isfinite(f.loglik) else float("inf")


def _bic(f: FamilyFit) -> float:
    return f.n_params * math.log(max(f.n_sessions, 1)) - 2 * f.loglik if np.isfinite(f.loglik) else float("inf")


def _short_params(f: FamilyFit) -> str:
    if not np.isfinite(f.loglik):
        return "probability 0 for some sessions: no estimate"
    parts = []
    if f.family == "clickmodel":  # what transfers to a measure: examination by rank (PBM), continuation
        exam, gamma = f.params.get("examination"), f.params.get("continuation")
        if exam and not isinstance(exam[0], list):
            parts.append("examination=" + ", ".join(f"{x:.3g}" for x in exam[:5]) + (", …" if len(exam) > 5 else ""))
        if isinstance(gamma, float):
            parts.append(f"continuation={gamma:.3g}")
        return ", ".join(parts)
    ivs = getattr(f, "intervals", {})  # a baseline has no intervals
    return ", ".join(f"{k}={v:.3g}" + (f" [{ivs[k][0]:.3g}, {ivs[k][1]:.3g}]" if ivs.get(k) else "")
                     for k, v in f.params.items() if isinstance(v, float)
                     and k not in ("continuation", "weights", "rates", "rates_low", "rates_high", "rates_events"))


# ---------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------

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
    fam : str
        The fit's family and model (for the title and legend).
    model : str
        The fit's family and model (for the title and legend).
    key : {'jumps', 'ctr', 'stop', 'survival', 'rates', 'dwell'}
        Which curves: MP's jump distribution, click-through by rank, P(stop at
        k), TBG's survival, MPcont's holding rates, the dwell-time survival.
    d : dict
        The fit's entry of `FitReport.diagnostics` (``'family/model'``).
    """
    def share(v):
        v = np.asarray(v)
        return v / v.sum() if v.sum() > 0 else v

    if key in ("jumps", "ctr"):   # observed (bars) and predicted: jumps j - i as shares, click-through by rank
        n, jumps = len(d[f"{key}_observed"]), key == "jumps"
        x, values = (np.arange(n) - (n - 1) // 2, share) if jumps else (np.arange(1, n + 1), lambda v: v)
        ax.bar(x, values(d[f"{key}_observed"]), color="0.75", label="observed")
        ax.plot(x, values(d[f"{key}_predicted"]), "o-", color="C0" if jumps else "C1", label=model)
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
    if key in _AXES:   # a panel kind without axis names is drawn unlabelled
        ax.set_xlabel(_AXES[key][0])
        ax.set_ylabel(_AXES[key][1])
    ax.set_title(f"{fam}: {model}", fontsize=9)
    ax.legend(fontsize=7)


def plot_click_metrics(curves: list[tuple[str, dict]], *, axes=None) -> matplotlib.figure.Figure:
    """Two panels: CTR by rank (observed and predicted) and click perplexity by rank, one curve per model.

    Parameters
    ----------
    curves : list of (label, metrics)
        ``metrics`` a `ClickMetrics.as_dict` dict
        ([`FitReport.plot_clicks`][irmeasures_markov.calibration.FitReport.plot_clicks] builds them).
    axes : two matplotlib Axes, optional
        Default: a new figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = pyplot("plot_click_metrics")
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
