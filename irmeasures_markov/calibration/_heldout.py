"""Click metrics of every row of a report: the families' fits, the click models and a rank-CTR baseline.

Every number here comes from :func:`~.click_metrics.click_metrics` (one rule
for every row); this module only decides which model is scored on which
sessions, and what a model that cannot predict clicks shows ("—").
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from irmeasures_markov.calibration._click_metrics import EPS, ClickMetrics, click_metrics, click_vector
from irmeasures_markov.calibration._logs import ClickLog, Session
from irmeasures_markov.calibration._result import FamilyFit

__all__ = ["RankCTR", "score", "attach_metrics", "CLICKMODELS", "metric", "clean", "label",
           "rank_tables", "click_model_record"]

#: the name ``fit(families=...)`` and ``--family`` give the click models
CLICKMODELS = "clickmodels"


class RankCTR:
    """The trivial click predictor: P(click at rank r) = the training click-through rate at r, ranks independent.

    Parameters
    ----------
    sessions : ClickLog or sequence of Session
        The training sessions.

    Attributes
    ----------
    name, family : str
        ``'rank-CTR'``, ``'baseline'`` (how a report lists it).
    ctr : numpy.ndarray
        Click-through rate at ranks 1..deepest rank shown (a rank shown by no
        session gets the rate of the rank above).
    n_params, n_sessions : int
    loglik : float
        Log-likelihood of the training sessions.
    """

    name = "rank-CTR"
    family = "baseline"

    def __init__(self, sessions: ClickLog | Sequence[Session]) -> None:
        sessions = list(sessions)
        depth = max((s.n_shown for s in sessions), default=0)
        shown = np.zeros(depth)
        clicked = np.zeros(depth)
        for s in sessions:
            c = click_vector(s)
            shown[:c.size] += 1
            clicked[:c.size] += c
        ctr = np.zeros(depth)
        last = 0.0
        for r in range(depth):
            if shown[r] > 0:
                last = clicked[r] / shown[r]
            ctr[r] = last
        self.ctr = ctr
        self.n_params = int(depth)
        self.n_sessions = len(sessions)
        self.params = {"ctr": [float(x) for x in ctr]}
        self.loglik = float(sum(self.session_loglik(s) for s in sessions))

    def click_probabilities(self, session: Session) -> np.ndarray:
        """The training CTR at ranks 1..len(session.shown) (deeper ranks: the deepest trained rank's)."""
        n = session.n_shown
        p = self.ctr[:n]
        if p.size < n:
            p = np.concatenate([p, np.full(n - p.size, self.ctr[-1] if self.ctr.size else 0.0)])
        return p

    def session_loglik(self, session: Session) -> float:
        """log P(click vector) with independent ranks (probabilities clipped as click_metrics clips them)."""
        c = click_vector(session)
        p = np.clip(self.click_probabilities(session), EPS, 1.0 - EPS)
        return float(np.sum(np.where(c == 1, np.log(p), np.log1p(-p))))


def score(model, sessions: ClickLog | Sequence[Session] | None, *, qrels: dict | None = None,
          rel: int = 1) -> ClickMetrics | None:
    """:func:`click_metrics` of a model, or None when there are no sessions or the model cannot predict clicks.

    A family's fit is scored through its ``click_model(qrels, rel)`` (one
    predictor for all sessions); any other model directly.  A model cannot
    predict clicks when it has no ``click_probabilities`` or raises
    ``NotImplementedError`` (e.g. MP, which models no clicked set); the report
    shows "—" for it.
    """
    if sessions is None or len(sessions) == 0 or not hasattr(model, "click_probabilities"):
        return None
    try:
        predictor = model.click_model(qrels, rel) if isinstance(model, FamilyFit) else model
        if hasattr(predictor, "click_probabilities_batch") and hasattr(predictor, "session_loglik_batch"):
            predictor = _Batched(predictor, sessions)
        return click_metrics(predictor, sessions)
    except NotImplementedError:
        return None


class _Batched:
    """A model's predictions for known sessions, computed by its batch methods in one pass (a click model's
    ``click_probabilities_batch`` / ``session_loglik_batch``), served one session at a time to click_metrics."""

    def __init__(self, model, sessions) -> None:
        sessions = list(sessions)
        self._pos = {id(s): i for i, s in enumerate(sessions)}
        self._p = model.click_probabilities_batch(sessions)
        self._ll = np.asarray(model.session_loglik_batch(sessions), dtype=np.float64)

    def click_probabilities(self, session: Session) -> np.ndarray:
        return self._p[self._pos[id(session)]]

    def session_loglik(self, session: Session) -> float:
        return float(self._ll[self._pos[id(session)]])


def attach_metrics(model, train: ClickLog, test: ClickLog | None, *, qrels: dict | None = None,
                   rel: int = 1) -> str | None:
    """Set ``model.train_metrics`` and ``model.heldout_metrics`` (``ClickMetrics.as_dict()`` or None).

    Returns
    -------
    str or None
        Why the metrics are None although the model predicts clicks (a session it cannot score, e.g. a
        ``ValueError`` of its click-vector probability), for the report's notes; None otherwise.
    """
    model.train_metrics = model.heldout_metrics = None
    try:
        m = score(model, train, qrels=qrels, rel=rel)
        h = score(model, test, qrels=qrels, rel=rel)
    except ValueError as e:
        return f"click metrics of {label(model)} not computed: {e}"
    model.train_metrics = clean(m.as_dict()) if m is not None else None
    model.heldout_metrics = clean(h.as_dict()) if h is not None else None
    return None


def metric(model, key: str, which: str = "heldout"):
    """One number of a model's stored metrics (``'heldout'`` or ``'train'``), None when it has none."""
    m = getattr(model, f"{which}_metrics", None)
    if not m:
        return None
    v = m.get(key)
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return v


def clean(d: dict | None) -> dict | None:
    """A metrics dict with NaN (a rank no session shows) as None, so it survives JSON unchanged."""
    if d is None:
        return None
    return {k: ([None if (isinstance(x, float) and math.isnan(x)) else x for x in v] if isinstance(v, list)
                else (None if isinstance(v, float) and math.isnan(v) else v)) for k, v in d.items()}


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
    scored = [(label(m), getattr(m, f"{which}_metrics", None)) for m in models]
    scored = [(n, d) for n, d in scored if d]
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


def click_model_record(cm, description: str = "") -> FamilyFit:
    """A fitted click model as a row of a report and a fit of a fit file: a :class:`FamilyFit` of family
    ``'clickmodel'`` whose ``model`` is the click model's name, with its click metrics (those of ``cm``,
    :func:`attach_metrics`) and its held-out log-likelihood."""
    held = getattr(cm, "heldout_metrics", None)
    # the fit-file schema of a click model (parameters.py) names what transfers to the measures and keeps the
    # query-document side under "per_document": the values for unseen pairs and the prior go there too
    params = {k: v for k, v in cm.params.items() if k not in ("unseen", "prior")}
    extra = {k: cm.params[k] for k in ("unseen", "prior") if k in cm.params}
    if extra:
        params["per_document"] = {**params.get("per_document", {}), **extra}
    return FamilyFit("clickmodel", cm.name, params, loglik=float(cm.loglik), n_params=int(cm.n_params),
                     n_sessions=int(cm.n_sessions), log_description=description,
                     heldout_loglik=held["loglik"] if held else None, n_heldout=held["n_sessions"] if held else 0,
                     heldout_metrics=held, train_metrics=getattr(cm, "train_metrics", None))
