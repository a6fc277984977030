"""`fit`: every candidate of every family on a log (the [`FitReport`][irmeasures_markov.calibration.FitReport] that
compares them: _fit_report.py);
`fit_candidate`, one candidate fitted by the likelihood machinery of `_likelihood`; and the click
metrics of every row of a report: the families' fits, the click models and a rank-CTR baseline.

Every click metric comes from [`click_metrics`][irmeasures_markov.calibration.click_metrics] (one rule
for every row); `attach_metrics` only decides which model is scored on which
sessions, and what a model that cannot predict clicks shows ("—").
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from irmeasures_markov._util._progress import progress_line, show_progress
from irmeasures_markov.calibration import _carterette as cart_mod
from irmeasures_markov.calibration import _mp as mp_mod
from irmeasures_markov.calibration import _ph as ph_mod
from irmeasures_markov.calibration import _tbg as tbg_mod
from irmeasures_markov.calibration._click_metrics import EPS, click_metrics, click_vector
from irmeasures_markov.calibration._fit_report import FitReport, label
from irmeasures_markov.calibration._likelihood import Candidate, PatternData, estimate
from irmeasures_markov.calibration._logs import SPLITS, ClickLog, Session, describe_split, split_log
from irmeasures_markov.calibration._result import FAMILIES, FamilyFit
from irmeasures_markov.calibration._walk import ctr_diagnostics, walk_data
from irmeasures_markov.calibration.click_models import fit_click_models
from irmeasures_markov.io._normalise import qrels_dict

__all__ = ["fit", "fit_candidate", "RankCTR", "click_model_record", "CLICKMODELS"]


#: the name ``fit(families=...)`` and ``--family`` give the click models
CLICKMODELS = "clickmodels"


# ---------------------------------------------------------------------------
# Click metrics of the report's rows
# ---------------------------------------------------------------------------

class RankCTR:
    """The trivial click predictor: P(click at rank r) = the training click-through rate at r, ranks independent.

    Parameters
    ----------
    sessions : ClickLog or sequence of Session
        The training sessions.

    Attributes
    ----------
    name : str
        ``'rank-CTR'``, ``'baseline'`` (how a report lists it).
    family : str
        ``'rank-CTR'``, ``'baseline'`` (how a report lists it).
    ctr : numpy.ndarray
        Click-through rate at ranks 1..deepest rank shown (every such rank is
        shown by some session: a ranking shown starts at rank 1).
    n_params : int
    n_sessions : int
    loglik : float
        Log-likelihood of the training sessions.
    """

    name = "rank-CTR"
    family = "baseline"

    def __init__(self, sessions: ClickLog | Sequence[Session]) -> None:
        sessions = list(sessions)
        depth = max((s.n_shown for s in sessions), default=0)
        shown, clicked = np.zeros(depth), np.zeros(depth)
        for s in sessions:
            c = click_vector(s)
            shown[:c.size] += 1
            clicked[:c.size] += c
        # the session that shows the deepest rank shows every rank above it: no rank has shown == 0
        self.ctr = ctr = clicked / shown
        self.n_params, self.n_sessions = int(depth), len(sessions)
        self.params = {"ctr": [float(x) for x in ctr]}
        self.loglik = float(sum(self.session_loglik(s) for s in sessions))

    def click_probabilities(self, session: Session) -> np.ndarray:
        """The training CTR at ranks 1..len(session.shown) (deeper ranks: the deepest trained rank's)."""
        n = session.n_shown
        return self.ctr[np.minimum(np.arange(n), self.ctr.size - 1)] if self.ctr.size else np.zeros(n)

    def session_loglik(self, session: Session) -> float:
        """log P(click vector) with independent ranks (probabilities clipped as click_metrics clips them)."""
        c = click_vector(session)
        p = np.clip(self.click_probabilities(session), EPS, 1.0 - EPS)
        return float(np.sum(np.where(c == 1, np.log(p), np.log1p(-p))))


def score(model, sessions: ClickLog | Sequence[Session] | None, *, qrels: dict | None = None,
          rel: int = 1) -> dict | None:
    """[`click_metrics`][irmeasures_markov.calibration.click_metrics] of a model as a dict with NaN (a rank no session
    shows) as None, so it survives JSON
    unchanged; None when there are no sessions or the model cannot predict clicks.

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
        d = click_metrics(predictor, sessions).as_dict()
    except NotImplementedError:
        return None
    return {k: ([None if (isinstance(x, float) and math.isnan(x)) else x for x in v] if isinstance(v, list)
                else (None if isinstance(v, float) and math.isnan(v) else v)) for k, v in d.items()}


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


def attach_metrics(model, train: ClickLog, test: ClickLog | None, notes: list[str], *, qrels: dict | None = None,
                   rel: int = 1) -> None:
    """Set ``model.train_metrics`` and ``model.heldout_metrics`` (`score`); when they are None although the
    model predicts clicks (a session it cannot score, e.g. a ``ValueError`` of its click-vector probability), say
    why in ``notes``."""
    model.train_metrics = model.heldout_metrics = None
    try:
        model.train_metrics, model.heldout_metrics = (score(model, train, qrels=qrels, rel=rel),
                                                      score(model, test, qrels=qrels, rel=rel))
    except ValueError as e:
        notes.append(f"click metrics of {label(model)} not computed: {e}")


def click_model_record(cm, description: str = "") -> FamilyFit:
    """A fitted click model as a row of a report and a fit of a fit file: a
    [`FamilyFit`][irmeasures_markov.calibration.FamilyFit] of family
    ``'clickmodel'`` whose ``model`` is the click model's name, with its click metrics (those of ``cm``,
    `attach_metrics`) and its held-out log-likelihood."""
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


# ---------------------------------------------------------------------------
# Fitting every candidate
# ---------------------------------------------------------------------------

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
        bootstrap: int = 200, seed: int = 0, progress: bool | None = None, rel: int = 1,
        test_split: float | None = None, split: str = "query") -> FitReport:
    """Fit every candidate user model of the chosen families to a click log.

    Parameters
    ----------
    train : ClickLog
    test : ClickLog, optional
        Held-out sessions: each candidate's held-out log-likelihood and perplexity.
    families : sequence of {'mp', 'ph', 'carterette', 'tbg', 'clickmodels'}, or one of them, or 'all'
        ``'clickmodels'`` adds the click models PBM, CM, UBM, DBN and SDBN
        (`click_models`) and the rank-CTR
        baseline as rows (family ``'clickmodel'`` / ``'baseline'``); ``'all'`` is
        the four families and the click models.  Every row gets the click
        metrics of [`click_metrics`][irmeasures_markov.calibration.click_metrics] (``heldout_metrics``,
        ``train_metrics``).
    qrels : dict or path, optional
        ``{query_id: {doc_id: grade}}`` or a TREC qrels file (any form
        [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] takes): enables P@H's p_rel/q_rel,
        the
        relevance-dependent click probabilities, Carterette's dynamic
        distributions and TBG's click probabilities.
    bootstrap : int
        Replicates of the bootstrap over sessions for the 95% intervals
        (linearised: one Newton step per replicate); 0 gives Wald intervals
        from the session-clustered sandwich variance.
    seed : int
        Seed of the bootstrap and of ``test_split``.
    test_split : float, optional
        Instead of ``test``: hold out this share of ``train``'s sessions, in (0, 1).
    split : {'query', 'sessions'}
        How ``test_split`` chooses them: ``'query'`` (default) keeps all sessions of
        a query on one side (`split_by_query`), ``'sessions'`` draws
        sessions at random ([`ClickLog.split`][irmeasures_markov.calibration.ClickLog.split]).  The report's
        ``log["split"]``
        says which held-out sessions were used.
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
        families = FAMILIES + (CLICKMODELS,) if families == "all" else (families,)
    families = tuple(families)
    bad = [f for f in families if f not in FAMILIES + (CLICKMODELS,)]
    if bad:
        raise ValueError(f"unknown families {bad}; choose from {list(FAMILIES + (CLICKMODELS,))} or 'all'")
    if not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"`bootstrap` must be a non-negative integer, got {bootstrap!r}.")
    if split not in SPLITS:
        raise ValueError(f"`split` must be one of {', '.join(SPLITS)}, got {split!r}")
    _check_log(train, "train")
    if test_split is not None:
        if test is not None:
            raise ValueError("give `test` or `test_split`, not both")
        train, test = split_log(train, test_split, by=split, seed=seed)
        how = describe_split(split, fraction=test_split, seed=seed)
    else:
        how = describe_split("file" if test is not None else "none", source=getattr(test, "source", None))
    if test is not None:
        _check_log(test, "test")
    if len(train) == 0:
        raise ValueError("the training log has no sessions")
    if qrels is not None:
        qrels = qrels_dict(qrels)
    progress = show_progress(progress)
    rng = np.random.default_rng(seed)
    desc = train.description
    fits, unfitted, sequence, notes, diagnostics = [], [], [], [], {}   # sequence: every candidate, in fit order

    def run(family, cands, tr, te, diag, extra=None):
        """Fit a family's candidates in turn; a note names those without an estimate."""
        for cand in cands:
            f = fit_candidate(family, cand, tr, te, bootstrap=bootstrap, rng=rng, description=desc, extra=extra)
            # one line per candidate; the command line turns these lines into a progress bar
            progress_line(f"fitted {family}/{cand.name}: loglik {f.loglik:.1f}", progress)
            sequence.append(f)
            if not np.isfinite(f.loglik):
                unfitted.append(f)
                continue
            fits.append(f)
            diagnostics[f"{family}/{f.model}"] = diag(f.params)
        names = [f.model for f in unfitted if f.family == family]
        if names:
            notes.append(f"{family}: {', '.join(names)} give probability 0 to some training sessions whatever "
                         "their parameters (no estimate; not written to a fit file)")

    one_doc = "every ranking shown has one document"
    with_rel = qrels is not None
    if "carterette" in families or "tbg" in families:
        strain, stest = (walk_data(x, qrels, rel, order="set") if x is not None else None for x in (train, test))
    if "mp" in families:
        dtr, dte = mp_mod.MPData(train), (mp_mod.MPData(test) if test is not None else None)
        rates = mp_mod.fit_rates(train)
        if dtr.n_long:
            notes.append(f"mp: {dtr.n_long} session{'s' if dtr.n_long != 1 else ''} on rankings longer than "
                         f"{mp_mod.MAX_RANKS} documents left out of the kernel fit (MP's chain over all ranks "
                         "needs memory in the square of the ranking's length)")

        def mp_diag(params):
            d = {"jumps_observed": dtr.observed_jumps.tolist(),
                 "jumps_predicted": mp_mod.predicted_jumps(dtr, params).tolist()}
            if rates:
                d.update(rates=rates["rates"], rates_low=rates["rates_low"], rates_high=rates["rates_high"],
                         **rates.get("dwell_survival", {}))
            return d

        if dtr.n_events == 0:
            notes.append("mp: no session clicks two different ranks on a ranking of at most "
                         f"{mp_mod.MAX_RANKS} documents; the kernel cannot be fitted")
        else:
            run("mp", mp_mod.candidates(dtr.T), dtr, dte, mp_diag,
                extra={k: v for k, v in rates.items() if k != "dwell_survival"} if rates else None)
        if rates is None:
            notes.append("mp: no dwell times in the log; MPcont holding rates not fitted")
        elif dtr.n_events == 0:
            notes.append("mp: the MPcont holding rates are stored with a kernel fit only; none was fitted")
    if "ph" in families:
        wtrain, wtest = (walk_data(x, qrels, rel) if x is not None else None for x in (train, test))
        if wtrain.T < 2:
            notes.append(f"ph: {one_doc}: the user never moves, so p and q cannot be fitted "
                         "(SFBM and RWBM left out)")
        run("ph", ph_mod.candidates(with_rel, wtrain.T), wtrain, wtest,
            lambda params: ctr_diagnostics(wtrain, ph_mod.walk_arrays, params))
    if "carterette" in families:
        if strain.T < 2:
            notes.append(f"carterette: {one_doc}: where a user stops cannot be seen, so no stopping parameter "
                         "is fitted (RBP and ERR with a fitted theta, and empirical, left out)")
        if not with_rel:
            notes.append("carterette: ERR, AP and RRR stop at relevant documents; they need qrels")
        run("carterette", cart_mod.candidates(with_rel, strain.T), strain, stest,
            lambda params: cart_mod.diagnostics(strain, params))
    if "tbg" in families:
        times = tbg_mod.fit_times(train, bootstrap=bootstrap, rng=rng)
        timed = times is not None
        if timed:
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
            run("tbg", tbg_mod.candidates(), strain, stest,
                lambda params: ctr_diagnostics(strain, tbg_mod.walk_arrays, params), extra=(times or {}).get("params"))
        else:
            notes.append("tbg: click probabilities P(C|R) need qrels (relevance of the shown documents)")
            if times:
                fits.append(FamilyFit("tbg", "times", dict(times["params"]), dict(times["intervals"]),
                                      loglik=times["loglik"], n_params=len(times["params"]),
                                      n_sessions=times["n_sessions"], n_events=times["n_ended"],
                                      log_description=desc))
        if times:
            for f in fits:
                if f.family == "tbg":
                    f.intervals.update(times["intervals"])  # the time parameters' (a no-op for the "times" fit)
                    diagnostics.setdefault(f"tbg/{f.model}", {}).update(times["survival"])
        elif not timed:
            notes.append("tbg: no click timestamps in the log; half-life and summary time not fitted")
    for f in fits:
        attach_metrics(f, train, test, notes, qrels=qrels, rel=rel)
    baselines, click_models = [], {}
    if CLICKMODELS in families:
        for cm in fit_click_models(train, qrels=qrels):
            progress_line(f"fitted clickmodel/{cm.name}: loglik {cm.loglik:.1f}", progress)
            attach_metrics(cm, train, test, notes)
            click_models[cm.name] = cm
            fits.append(click_model_record(cm, desc))
            sequence.append(fits[-1])
        baselines.append(RankCTR(train))
        attach_metrics(baselines[-1], train, test, notes)
    log = {"description": train.description, "source": train.source, "n_sessions": len(train),
           "n_heldout": len(test) if test is not None else 0, "split": how}
    for key, part in (("dropped_clicks", train), ("heldout_dropped_clicks", test)):
        if part is not None and "dropped_clicks" in part.meta:
            log[key] = int(part.meta["dropped_clicks"])
    report = FitReport(fits, diagnostics, notes, log, unfitted, baselines, click_models)
    report._sequence = sequence
    return report


def fit_candidate(family: str, cand: Candidate, train: PatternData, test: PatternData | None = None, *,
                  bootstrap: int = 0, rng: np.random.Generator | None = None, description: str = "",
                  extra: dict | None = None) -> FamilyFit:
    """Fit one candidate by maximum likelihood on prepared training data; score it on prepared test data.

    Parameters
    ----------
    family : str
    cand : Candidate
    train : prepared data of the family (``test`` optional)
    test : prepared data of the family (``test`` optional)
    bootstrap : int
        Linearised bootstrap replicates for the 95% intervals (0: Wald, from the sandwich covariance).
    rng : numpy Generator, optional
    description : str
        The log's description, kept in the fit.
    extra : dict, optional
        Parameters added to the fit's (e.g. MPcont's holding rates).

    Returns
    -------
    FamilyFit
        A candidate that gives probability 0 to some training session at every
        parameter value has log-likelihood ``-inf`` and only its fixed parameters.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    g, sc = cand.grad, cand.scores
    est = estimate(lambda th: cand.loglik(train, th), train.counts, cand.x0, bootstrap=bootstrap, rng=rng,
                   grad=(lambda th: g(train, th)) if g is not None else None, penalty=cand.penalty,
                   scores=(lambda th: sc(train, th)) if sc is not None else None)
    fixed = cand.fixed or {}
    params = {**fixed, **cand.unpack(est.theta)}
    fitted = bool(np.isfinite(est.loglik))
    if not fitted:
        # probability 0 for some session at every parameter value: the fitted parameters would be the
        # start values, which are no estimate; keep only what the candidate fixes (its name, fixed values)
        for key in _free_keys(cand):
            params.pop(key, None)
    intervals = {}
    if est.cov is not None:
        draws = est.draws
        if draws is None:
            cov = 0.5 * (est.cov + est.cov.T)
            draws = rng.multivariate_normal(est.theta, cov, size=4000, check_valid="ignore")
        # a draw far out on the unconstrained scale (a boundary estimate has a huge variance) maps to 0 or
        # inf through exp: the right limits, and the intervals below keep only finite values
        with np.errstate(over="ignore"):
            nat = [cand.unpack(d) for d in draws]
        for key, val in params.items():
            # a dict of values (e.g. the non-parametric kernel's weights) has one interval per entry: 'weights[+2]'
            number = isinstance(val, (float, int)) and not isinstance(val, bool) and key not in fixed
            for sub in list(val) if isinstance(val, dict) else [None] if number else []:
                vals = np.array([float(d[key] if sub is None else d[key][sub]) for d in nat])
                vals = vals[np.isfinite(vals)]
                if vals.size and np.ptp(vals) > 0:
                    lo, hi = np.percentile(vals, [2.5, 97.5])
                    intervals[key if sub is None else f"{key}[{sub}]"] = (float(lo), float(hi))
    if extra:
        params.update(extra)
    held, n_held, n_held_events = None, 0, 0
    if test is not None:
        # no estimate: no held-out value either (one at the start values would mean nothing)
        held = float(test.counts @ cand.loglik(test, est.theta)) if fitted else float("-inf")
        n_held = int(test.counts.sum())
        n_held_events = int(test.n_events)
    return FamilyFit(family=family, model=cand.name, params=params, intervals=intervals,
                     loglik=float(est.loglik), n_params=int(np.size(est.theta)),
                     n_sessions=int(train.counts.sum()), heldout_loglik=held, n_heldout=n_held,
                     n_events=int(train.n_events), log_description=description,
                     n_heldout_events=n_held_events)


def _free_keys(cand: Candidate) -> list:
    """The parameters of ``cand.unpack`` that depend on the fitted vector (those a fit estimates)."""
    x0 = np.asarray(cand.x0, dtype=np.float64)
    if x0.size == 0:
        return []
    a, b = cand.unpack(x0), cand.unpack(x0 + 0.5)
    return [k for k in a if k not in b or a[k] != b[k]]
