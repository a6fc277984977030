"""`fit`: every candidate of every family on a log, and the `FitReport` that compares them."""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._util.progress import progress_line, show_progress
from ..io.normalise import to_qrels_dict
from . import carterette as cart_mod
from . import mp as mp_mod
from . import ph as ph_mod
from . import tbg as tbg_mod
from ._walk import walk_data
from .fitting import fit_candidate
from .logs import ClickLog
from .plots import PANELS, draw_panel
from .result import FAMILIES, FamilyFit

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure
    import pandas

__all__ = ["fit", "FitReport"]


class FitReport:
    """All candidates fitted to one log, with their comparison.

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
        ``n_heldout`` and, when the reader dropped clicks on documents that were
        not in the ranking shown, ``dropped_clicks`` (training sessions) and
        ``heldout_dropped_clicks``.
    """

    def __init__(self, fits: list[FamilyFit], diagnostics: dict | None = None, notes: list[str] | None = None,
                 log: dict | None = None, unfitted: list[FamilyFit] | None = None) -> None:
        self.fits = list(fits)
        self.diagnostics = dict(diagnostics or {})
        self.notes = list(notes or [])
        self.log = dict(log or {})
        self.unfitted = list(unfitted or [])
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

    def best(self, family: str) -> FamilyFit:
        """The family's best candidate: highest held-out log-likelihood when a test log was given, else lowest
        AIC (:math:`2k - 2\\log L`; ties: fewer parameters).

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
        if all(f.heldout_loglik is not None for f in cands):
            return max(cands, key=lambda f: (_finite(f.heldout_loglik), -f.n_params))
        return min(cands, key=lambda f: (_aic(f), f.n_params))

    # -- tables ---------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """The comparison table, one dict per candidate (fitted or not) in the order they were fitted.

        Keys: ``family``, ``model``, ``k`` (free parameters), ``n`` (training
        sessions), ``loglik``, ``AIC``, ``BIC`` (:math:`k\\log n - 2\\log L`),
        ``heldout_loglik``, ``perplexity`` (:math:`\\exp(-\\log L / \\text{events})`,
        held out when a test log was given) and ``params`` (a short text).

        Returns
        -------
        list of dict
            One row per candidate.
        """
        out = []
        listed = self.fits + self.unfitted
        # the candidates in the order they were fitted (fit() records it), then any added since
        ordered = [f for f in self._sequence if any(f is g for g in listed)]
        ordered += [f for f in listed if not any(f is g for g in ordered)]
        for f in ordered:
            held = f.heldout_loglik
            ev = f.n_heldout_events if held is not None else f.n_events
            ll = held if held is not None else f.loglik
            out.append({
                "family": f.family, "model": f.model, "k": f.n_params, "n": f.n_sessions,
                "loglik": f.loglik, "AIC": _aic(f), "BIC": _bic(f),
                "heldout_loglik": held,
                "perplexity": math.exp(-ll / ev) if ev and np.isfinite(ll) else float("inf"),
                "params": _short_params(f),
            })
        return out

    def to_frame(self) -> pandas.DataFrame:
        """:meth:`rows` as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per candidate, the columns the keys of :meth:`rows`.
        """
        import pandas as pd
        return pd.DataFrame(self.rows())

    def __str__(self) -> str:
        rows = self.rows()
        head = f"{'family':10s} {'model':24s} {'k':>3s} {'loglik':>12s} {'AIC':>12s} {'BIC':>12s} " \
               f"{'held-out ll':>12s} {'perplexity':>10s}  parameters"
        lines = [head, "-" * len(head)]
        for r in rows:
            held = "" if r["heldout_loglik"] is None else f"{r['heldout_loglik']:12.1f}"
            best = bool(self.family(r["family"])) and self.best(r["family"]).model == r["model"]
            lines.append(f"{r['family']:10s} {r['model'] + (' *' if best else ''):24s} {r['k']:3d} "
                         f"{r['loglik']:12.1f} {r['AIC']:12.1f} {r['BIC']:12.1f} {held:>12s} "
                         f"{r['perplexity']:10.4f}  {r['params']}")
        lines.append("* best of its family (held-out log-likelihood, else AIC)")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The report as JSON-able data (fits, index of each family's best, diagnostics, notes, log, unfitted).

        Returns
        -------
        dict
            Keys ``fits``, ``best``, ``diagnostics``, ``notes``, ``log`` and ``unfitted``; :meth:`from_dict` reads it.
        """
        best = {}
        for fam in FAMILIES:
            if self.family(fam):
                best[fam] = self.fits.index(self.best(fam))
        return {"fits": [f.to_dict() for f in self.fits], "best": best, "diagnostics": self.diagnostics,
                "notes": self.notes, "log": self.log, "unfitted": [f.to_dict() for f in self.unfitted]}

    @classmethod
    def from_dict(cls, d: dict) -> FitReport:
        """The report a :meth:`to_dict` dict describes (every fit checked by :meth:`FamilyFit.from_dict`)."""
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
            When the report holds no diagnostics (e.g. one read from a fit file).
        """
        import matplotlib.pyplot as plt
        panels = []
        fams = [family] if family else [f for f in FAMILIES if self.family(f)]
        for fam in fams:
            b = self.best(fam)
            diag = self.diagnostics.get(f"{fam}/{b.model}", {})
            for key in PANELS:
                if any(k.startswith(key) for k in diag):
                    panels.append((fam, b.model, key, diag))
        if not panels:
            raise ValueError("nothing to plot: the report holds no diagnostics")
        if axes is None:
            ncol = min(3, len(panels))
            nrow = int(math.ceil(len(panels) / ncol))
            fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow), squeeze=False)
            axes = axes.ravel()
        else:
            axes = np.atleast_1d(axes).ravel()
            fig = axes[0].figure
        for ax, (fam, model, key, d) in zip(axes, panels):
            draw_panel(ax, fam, model, key, d)
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        fig.tight_layout()
        return fig


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
    for k, v in f.params.items():
        if k in ("continuation", "weights", "rates", "rates_low", "rates_high", "rates_events"):
            continue
        if isinstance(v, float):
            iv = f.intervals.get(k)
            parts.append(f"{k}={v:.3g}" + (f" [{iv[0]:.3g}, {iv[1]:.3g}]" if iv else ""))
        elif isinstance(v, str) and k in ("browse", "dist"):
            continue
    return ", ".join(parts)


def _check_log(log, name: str) -> None:
    """Every click a rank of its session's ranking (a bad in-memory session would index out of range)."""
    if not hasattr(log, "sessions"):
        raise TypeError(f"`{name}` must be a ClickLog, got {type(log).__name__}.")
    for s in log:
        c = s.clicks
        if c.size and (c.min() < 1 or c.max() > s.n_shown):
            bad = int(c[(c < 1) | (c > s.n_shown)][0])
            raise ValueError(f"`{name}` session {s.session_id!r} (query {s.query_id!r}): click on rank {bad}, "
                             f"outside the {s.n_shown} documents shown (ranks are 1-based).")


def fit(train: ClickLog, *, test: ClickLog | None = None, families: Sequence[str] | str = FAMILIES,
        qrels: dict | str | os.PathLike | None = None,
        bootstrap: int = 200, seed: int = 0, progress: bool | None = None, rel: int = 1) -> FitReport:
    """Fit every candidate user model of the chosen families to a click log.

    Parameters
    ----------
    train : ClickLog
    test : ClickLog, optional
        Held-out sessions: each candidate's held-out log-likelihood and perplexity.
    families : sequence of {'mp', 'ph', 'carterette', 'tbg'}, or one of them, or 'all'
    qrels : dict or path, optional
        ``{query_id: {doc_id: grade}}`` or a TREC qrels file (any form
        :func:`irmeasures_markov.io.to_qrels_dict` takes): enables P@H's p_rel/q_rel, the
        relevance-dependent click probabilities, Carterette's dynamic
        distributions and TBG's click probabilities.
    bootstrap : int
        Replicates of the bootstrap over sessions for the 95% intervals
        (linearised: one Newton step per replicate); 0 gives Wald intervals
        from the session-clustered sandwich variance.
    seed : int
    progress : bool or None
        Print ``fitted FAMILY/MODEL: loglik X`` on standard error after each
        candidate (``irmeasures-markov fit`` shows these lines as a progress bar):
        ``None`` (default) only when standard error is a terminal, ``True``
        always, ``False`` never.

    Returns
    -------
    FitReport

    Raises
    ------
    ValueError
        An unknown family, a negative ``bootstrap``, an empty training log, or
        a session with a click outside its ranking.
    TypeError
        When ``train`` or ``test`` is not a ClickLog.
    """
    if isinstance(families, str):
        families = FAMILIES if families == "all" else (families,)
    families = tuple(families)
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise ValueError(f"unknown families {bad}; choose from {list(FAMILIES)}")
    if not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"`bootstrap` must be a non-negative integer, got {bootstrap!r}.")
    _check_log(train, "train")
    if test is not None:
        _check_log(test, "test")
    if len(train) == 0:
        raise ValueError("the training log has no sessions")
    if qrels is not None:
        qrels = to_qrels_dict(qrels)
    progress = show_progress(progress)
    rng = np.random.default_rng(seed)
    desc = train.description
    fits: list[FamilyFit] = []
    unfitted: list[FamilyFit] = []
    sequence: list[FamilyFit] = []
    diagnostics: dict[str, dict] = {}
    notes: list[str] = []

    def run(family, cand, tr, te, extra=None):
        f, _ = fit_candidate(family, cand, tr, te, bootstrap=bootstrap, rng=rng, description=desc, extra=extra)
        # one line per candidate; the command line turns these lines into a progress bar
        progress_line(f"fitted {family}/{cand.name}: loglik {f.loglik:.1f}", progress)
        sequence.append(f)
        if not np.isfinite(f.loglik):
            unfitted.append(f)
            return None
        fits.append(f)
        return f

    def left_out(family):
        names = [f.model for f in unfitted if f.family == family]
        if names:
            notes.append(f"{family}: {', '.join(names)} give probability 0 to some training sessions whatever "
                         "their parameters (no estimate; not written to a fit file)")

    one_doc = "every ranking shown has one document"
    with_rel = qrels is not None
    wtrain = walk_data(train, qrels, rel) if "ph" in families else None
    wtest = walk_data(test, qrels, rel) if "ph" in families and test is not None else None
    if "carterette" in families or "tbg" in families:
        strain = walk_data(train, qrels, rel, order="set")
        stest = walk_data(test, qrels, rel, order="set") if test is not None else None
    if "mp" in families:
        dtr, dte = mp_mod.mp_data(train), (mp_mod.mp_data(test) if test is not None else None)
        rates = mp_mod.fit_rates(train)
        if dtr.n_long:
            notes.append(f"mp: {dtr.n_long} session{'s' if dtr.n_long != 1 else ''} on rankings longer than "
                         f"{mp_mod.MAX_RANKS} documents left out of the kernel fit (MP's chain over all ranks "
                         "needs memory in the square of the ranking's length)")
        if dtr.n_events == 0:
            notes.append("mp: no session clicks two different ranks on a ranking of at most "
                         f"{mp_mod.MAX_RANKS} documents; the kernel cannot be fitted")
        else:
            for cand in mp_mod.candidates(dtr.T):
                f = run("mp", cand, dtr, dte,
                        extra={k: v for k, v in rates.items() if k != "dwell_survival"} if rates else None)
                if f is not None:
                    diagnostics[f"mp/{f.model}"] = {"jumps_observed": dtr.observed_jumps.tolist(),
                                                    "jumps_predicted": mp_mod.predicted_jumps(dtr, f.params).tolist()}
                    if rates:
                        diagnostics[f"mp/{f.model}"].update(rates=rates["rates"], rates_low=rates["rates_low"],
                                                            rates_high=rates["rates_high"])
                        if "dwell_survival" in rates:
                            ds = rates["dwell_survival"]
                            diagnostics[f"mp/{f.model}"].update(dwell_t=ds["t"], dwell_km=ds["kaplan_meier"],
                                                                dwell_fitted=ds["exponential"])
            left_out("mp")
        if rates is None:
            notes.append("mp: no dwell times in the log; MPcont holding rates not fitted")
        elif dtr.n_events == 0:
            notes.append("mp: the MPcont holding rates are stored with a kernel fit only; none was fitted")
    if "ph" in families:
        for cand in ph_mod.candidates(with_rel, wtrain.T):
            f = run("ph", cand, wtrain, wtest)
            if f is not None:
                diagnostics[f"ph/{f.model}"] = ph_mod.diagnostics(wtrain, f.params)
        if wtrain.T < 2:
            notes.append(f"ph: {one_doc}: the user never moves, so p and q cannot be fitted "
                         "(SFBM and RWBM left out)")
        left_out("ph")
    if "carterette" in families:
        for cand in cart_mod.candidates(with_rel, strain.T):
            f = run("carterette", cand, strain, stest)
            if f is not None:
                diagnostics[f"carterette/{f.model}"] = cart_mod.diagnostics(strain, f.params)
        if strain.T < 2:
            notes.append(f"carterette: {one_doc}: where a user stops cannot be seen, so no stopping parameter "
                         "is fitted (RBP and ERR with a fitted theta, and empirical, left out)")
        if not with_rel:
            notes.append("carterette: ERR, AP and RRR stop at relevant documents; they need qrels")
        left_out("carterette")
    if "tbg" in families:
        times = tbg_mod.fit_times(train, bootstrap=bootstrap, rng=rng)
        timed = times is not None
        if times:
            # a time parameter the log cannot estimate is not stored (no infinite or missing values in a fit)
            why = {"halflife": "no session has an observed end (ended, with the last dwell known)",
                   "t_summary": "no pair of consecutive clicks with the first one's dwell known"}
            for key in [k for k, v in times["params"].items() if not np.isfinite(v)]:
                notes.append(f"tbg: {key} not fitted: {why.get(key, 'not estimable from this log')}")
                del times["params"][key]
                times["intervals"].pop(key, None)
            if not times["params"]:
                times = None
        if with_rel:
            for cand in tbg_mod.candidates():
                f = run("tbg", cand, strain, stest, extra=(times or {}).get("params"))
                if f is None:
                    continue
                if times:
                    f.intervals.update(times["intervals"])
                diagnostics[f"tbg/{f.model}"] = tbg_mod.diagnostics(strain, cand, f.params)
            left_out("tbg")
        else:
            notes.append("tbg: click probabilities P(C|R) need qrels (relevance of the shown documents)")
            if times:
                f = FamilyFit("tbg", "times", dict(times["params"]), dict(times["intervals"]),
                              loglik=times["loglik"], n_params=len(times["params"]), n_sessions=times["n_sessions"],
                              n_events=times["n_ended"], log_description=desc)
                fits.append(f)
        if times:
            for f in fits:
                if f.family == "tbg":
                    s = times["survival"]
                    diagnostics.setdefault(f"tbg/{f.model}", {}).update(
                        survival_t=s["t"], survival_fitted=s["fitted"], survival_empirical=s["ended_only_empirical"])
        elif not timed:
            notes.append("tbg: no click timestamps in the log; half-life and summary time not fitted")
    log = {"description": train.description, "source": train.source, "n_sessions": len(train),
           "n_heldout": len(test) if test is not None else 0}
    if "dropped_clicks" in train.meta:
        log["dropped_clicks"] = int(train.meta["dropped_clicks"])
    if test is not None and "dropped_clicks" in test.meta:
        log["heldout_dropped_clicks"] = int(test.meta["dropped_clicks"])
    report = FitReport(fits, diagnostics, notes, log, unfitted)
    report._sequence = sequence
    return report
