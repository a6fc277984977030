r"""Click-model baselines: PBM, CM, UBM, DBN, SDBN (Chuklin, Markov & de Rijke, *Click Models for Web Search*, 2015).

``fit_click_model(name, sessions)`` fits one model to a log and returns a
[`ClickModelFit`][irmeasures_markov.calibration.click_models.ClickModelFit] whose ``click_probabilities(session)`` and
``session_loglik(session)`` are what
[`click_metrics`][irmeasures_markov.calibration.click_metrics] scores, so
the click models and the package's user models compare row by row.

* **PBM**, **UBM**: EM (`_examination`); **DBN**: EM (`_dbn`);
  **CM**, **SDBN**: counting, their maximum-likelihood estimates (`_dbn`).
* A session's click vector is "rank r clicked at least once", up to the ranks
  shown (`click_vector`).
* Query-document parameters (attractiveness; DBN/SDBN satisfaction) use the
  pseudo-counts ``prior = (1, 1)``: one success and one failure added to every
  pair's counts.  A pair never seen in training gets the prior mean, **0.5**,
  for attractiveness and satisfaction (``params["unseen"]``).
* With ``qrels``, the model is fitted a second time with attractiveness (and
  satisfaction) tied by the document's judged grade, every unjudged pair
  keeping a parameter of its own that is left out of the by-grade values.
  That fit holds the position parameters (PBM/UBM examination, DBN
  continuation) at the per-document fit's values, so every stored parameter
  is on one scale: ``examination[r-1] * attractiveness_by_grade[g]`` is the
  fitted P(click) of a grade-g document at rank r, and DBN's ``continuation``
  goes with its by-grade a(g), s(g).  (Fitted separately, PBM's two fits
  settle on different scales of its examination x attractiveness
  indeterminacy, and DBN's two continuations differ.)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from irmeasures_markov.calibration._logs import Session
from irmeasures_markov.calibration.click_models import _dbn as dbn
from irmeasures_markov.calibration.click_models import _examination as examination
from irmeasures_markov.calibration.click_models._core import (
    encode,
    flatten,
    grade_index,
    lookup,
    pair_index,
    unseen_value,
)

__all__ = ["fit_click_model", "fit_click_models", "ClickModelFit", "CLICK_MODELS"]

#: the click models, in the order reports list them
CLICK_MODELS = ("PBM", "CM", "UBM", "DBN", "SDBN")


@dataclass
class ClickModelFit:
    """One click model fitted to a log
    ([`fit_click_model`][irmeasures_markov.calibration.click_models.fit_click_model]).

    Attributes
    ----------
    name : str
        One of `CLICK_MODELS`.
    params : dict
        JSON-able parameters: ``"examination"`` (PBM: list by rank; UBM: matrix,
        row ``r-1`` = rank ``r``, column = rank of the previous click, 0 = none),
        ``"continuation"`` (DBN; 1.0 for SDBN), ``"attractiveness_by_grade"`` /
        ``"satisfaction_by_grade"`` (with qrels), ``"unseen"`` (the values used
        for query-document pairs absent from training), ``"prior"`` (pseudo-counts)
        and ``"per_document"`` (``{"attractiveness": {qid: {docid: value}}, "satisfaction": ...}``;
        a record that keeps ``"unseen"`` inside ``"per_document"`` is read the same).
    loglik : float
        Training log-likelihood (natural log, sum over sessions).
    n_params : int
        Free parameters.
    n_sessions : int
        Training sessions.
    history : list of float
        Training log-likelihood of every EM iterate (initial first, final last;
        one value for the counting models CM and SDBN).
    objective : list of float
        The same plus the log-prior of the pseudo-counts: what EM never decreases.
    family : str
        Always ``"clickmodel"``.
    """
    name: str
    params: dict
    loglik: float
    n_params: int
    n_sessions: int
    history: list[float] = field(default_factory=list)
    objective: list[float] = field(default_factory=list)
    family: str = "clickmodel"

    def __post_init__(self):
        if self.name not in CLICK_MODELS:
            raise ValueError(f"click model name must be one of {', '.join(CLICK_MODELS)}; got {self.name!r}")
        per = self.params.get("per_document", {})
        sat = per.get("satisfaction", {})
        pairs = [((q, d), v, sat.get(q, {}).get(d, 0.0)) for q, docs in per.get("attractiveness", {}).items()
                 for d, v in docs.items()]
        self._index = {key: k for k, (key, _, _) in enumerate(pairs)}
        self._attr, self._sat = (np.array([p[c] for p in pairs], dtype=np.float64) for c in (1, 2))
        # the unseen-pair values sit beside the tables in a report's fit-file record, at the top level here
        unseen = self.params.get("unseen", per.get("unseen", {}))
        self._unseen_a, self._unseen_s = (float(unseen.get(k, 0.5)) for k in ("attractiveness", "satisfaction"))
        exam = self.params.get("examination")
        self._exam = None if exam is None else np.asarray(exam, dtype=np.float64)
        self._gamma = float(self.params.get("continuation", 1.0))

    # -- predictions ---------------------------------------------------------------------------------
    def _batch(self, sessions, what: str):
        """The model module's ``what`` (``'probabilities'`` or ``'loglik'``) of the sessions, and their arrays."""
        enc = encode(sessions, self._index)
        a = lookup(self._attr, enc.items, self._unseen_a)
        if self.name in ("PBM", "UBM"):
            return getattr(examination, what)(self.name, self._exam, a, enc), enc
        if self.name == "CM":
            return getattr(dbn, f"cm_{what}")(a, enc), enc
        return getattr(dbn, what)(a, lookup(self._sat, enc.items, self._unseen_s), self._gamma, enc), enc

    def click_probabilities_batch(self, sessions: Iterable[Session]) -> list[np.ndarray]:
        """[`click_probabilities`][irmeasures_markov.calibration.click_models.ClickModelFit.click_probabilities] of many
        sessions at once (one array pass).

        Parameters
        ----------
        sessions : iterable of Session
            The sessions, each with the results it was shown.

        Returns
        -------
        list of numpy.ndarray
            One array per session: P(click at rank r), r = 1..len(session.shown).
        """
        sessions = list(sessions)
        if not sessions:
            return []
        p, enc = self._batch(sessions, "probabilities")
        return [p[i, :m] for i, m in enumerate(enc.lengths)]

    def session_loglik_batch(self, sessions: Iterable[Session]) -> np.ndarray:
        """[`session_loglik`][irmeasures_markov.calibration.click_models.ClickModelFit.session_loglik] of many sessions
        at once.

        Parameters
        ----------
        sessions : iterable of Session
            The sessions, each with its clicks.

        Returns
        -------
        numpy.ndarray
            The log-likelihood of each session's clicks (natural log), one value per session.
        """
        sessions = list(sessions)
        return self._batch(sessions, "loglik")[0] if sessions else np.zeros(0)

    def click_probabilities(self, session: Session) -> np.ndarray:
        """Unconditional P(click at rank r), r = 1..len(session.shown).

        Parameters
        ----------
        session : Session

        Returns
        -------
        numpy.ndarray
        """
        return self.click_probabilities_batch([session])[0]

    def session_loglik(self, session: Session) -> float:
        """Natural log of the model's probability of the session's click vector.

        Parameters
        ----------
        session : Session

        Returns
        -------
        float
        """
        return float(self.session_loglik_batch([session])[0])

    # -- JSON ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-able form; [`from_dict`][irmeasures_markov.calibration.click_models.ClickModelFit.from_dict] rebuilds
        an identical fit.

        Returns
        -------
        dict
        """
        return {"name": self.name, "family": self.family, "params": self.params, "loglik": self.loglik,
                "n_params": self.n_params, "n_sessions": self.n_sessions, "history": list(self.history),
                "objective": list(self.objective)}

    @classmethod
    def from_dict(cls, d: Mapping) -> ClickModelFit:
        """The fit [`to_dict`][irmeasures_markov.calibration.click_models.ClickModelFit.to_dict] stored.

        Parameters
        ----------
        d : mapping

        Returns
        -------
        ClickModelFit
        """
        missing = [k for k in ("name", "params", "loglik", "n_params", "n_sessions") if k not in d]
        if missing:
            raise ValueError(f"click-model fit dict lacks {', '.join(missing)}")
        if d.get("family", "clickmodel") != "clickmodel":
            raise ValueError(f"click-model fit dict has family {d.get('family')!r}; expected 'clickmodel'")
        return cls(name=d["name"], params=dict(d["params"]), loglik=float(d["loglik"]),
                   n_params=int(d["n_params"]), n_sessions=int(d["n_sessions"]),
                   history=list(d.get("history", [])), objective=list(d.get("objective", [])))


_FITTERS = {"PBM": partial(examination.fit_examination, "PBM"), "UBM": partial(examination.fit_examination, "UBM"),
            "CM": dbn.fit_cm, "DBN": dbn.fit_dbn, "SDBN": dbn.fit_sdbn}


def _table(index: Mapping[tuple[str, str], int], values: np.ndarray) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for (q, d), k in index.items():
        out.setdefault(q, {})[d] = float(values[k])
    return out


def _n_params(name: str, n_items: int, depth: int) -> int:
    return {"PBM": depth + n_items, "UBM": depth * (depth + 1) // 2 + n_items, "CM": n_items,
            "DBN": 2 * n_items + 1, "SDBN": 2 * n_items}[name]


def _check(name, sessions, iterations, tol, prior):
    if name not in CLICK_MODELS:
        raise ValueError(f"click model name must be one of {', '.join(CLICK_MODELS)}; got {name!r}")
    if not sessions:
        raise ValueError("sessions: no session to fit a click model to")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be an int >= 1, got {iterations!r}")
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    if len(prior) != 2 or min(prior) < 0:
        raise ValueError(f"prior must be two pseudo-counts (successes, failures) >= 0, got {prior!r}")


def fit_click_model(name: str, sessions: Iterable[Session], *, qrels: Mapping[str, Mapping[str, int]] | None = None,
                    iterations: int = 50, tol: float = 1e-6, prior: tuple[float, float] = (1.0, 1.0)
                    ) -> ClickModelFit:
    """Fit one click model to sessions.

    Parameters
    ----------
    name : {'PBM', 'CM', 'UBM', 'DBN', 'SDBN'}
    sessions : iterable of Session
        E.g. a [`ClickLog`][irmeasures_markov.calibration.ClickLog].
    qrels : dict, optional
        ``{qid: {docid: grade}}``: also estimate attractiveness (and DBN/SDBN
        satisfaction) by grade (``params["attractiveness_by_grade"]``,
        ``params["satisfaction_by_grade"]``, keyed by the grades as strings;
        documents without a judgment are left out).
    iterations : int
        Maximum EM iterations (PBM, UBM, DBN).
    tol : float
        EM stops when the objective (log-likelihood plus log-prior) rises by
        less than ``tol`` per session.
    prior : (float, float)
        Pseudo-counts (successes, failures) added to every query-document
        parameter's counts; ``(0, 0)`` gives the plain maximum-likelihood EM.

    Returns
    -------
    ClickModelFit
    """
    sessions = list(sessions)
    prior = tuple(float(x) for x in prior)
    _check(name, sessions, iterations, tol, prior)
    index = pair_index(sessions)
    enc = encode(sessions, index)
    st = _FITTERS[name](enc, flatten(enc, len(index)), len(index), iterations=iterations, tol=tol, prior=prior)
    unseen = unseen_value(prior)
    # the position parameters: examination, a list by rank (PBM) or of rows (UBM); continuation (DBN, SDBN)
    params = ({"examination": st.exam.tolist()} if st.exam is not None else
              {"continuation": float(st.gamma)} if st.gamma is not None else {})
    if qrels is not None:
        params.update(_by_grade(name, enc, sessions, index, qrels, st, iterations=iterations, tol=tol, prior=prior))
    params["unseen"] = {"attractiveness": unseen} | ({"satisfaction": unseen} if st.sat is not None else {})
    params["prior"] = list(prior)
    params["per_document"] = {k: _table(index, v) for k, v in (("attractiveness", st.attr), ("satisfaction", st.sat))
                              if v is not None}
    return ClickModelFit(name=name, params=params, loglik=float(st.history[-1]),
                         n_params=_n_params(name, len(index), enc.depth), n_sessions=len(sessions),
                         history=[float(x) for x in st.history], objective=[float(x) for x in st.objective])


def _by_grade(name, enc, sessions, index, qrels, fitted, **em) -> dict:
    """The by-grade values, fitted on the position parameters of the per-document fit ``fitted`` (one scale)."""
    mapping, grades = grade_index(sessions, qrels, index)
    if not grades:
        return {"attractiveness_by_grade": {}} | ({"satisfaction_by_grade": {}} if name in ("DBN", "SDBN") else {})
    n_tied = len(grades) + len(index)
    tied = replace(enc, items=np.where(enc.items >= 0, mapping[np.maximum(enc.items, 0)], -1))
    held = {"PBM": {"exam": fitted.exam}, "UBM": {"exam": fitted.exam}, "DBN": {"gamma": fitted.gamma}}.get(name, {})
    st = _FITTERS[name](tied, flatten(tied, n_tied), n_tied, **em, **held)
    return {f"{k}_by_grade": {str(g): float(v[i]) for i, g in enumerate(grades)}
            for k, v in (("attractiveness", st.attr), ("satisfaction", st.sat)) if v is not None}


def fit_click_models(sessions: Iterable[Session], names: Sequence[str] = CLICK_MODELS,
                     qrels: Mapping[str, Mapping[str, int]] | None = None, **kwargs) -> list[ClickModelFit]:
    """Fit several click models to the same sessions
    ([`fit_click_model`][irmeasures_markov.calibration.click_models.fit_click_model] for each name, in order).

    Parameters
    ----------
    sessions : iterable of Session
    names : sequence of str
        Models to fit (default: all of `CLICK_MODELS`).
    qrels : dict, optional
        As in [`fit_click_model`][irmeasures_markov.calibration.click_models.fit_click_model].
    **kwargs
        ``iterations``, ``tol``, ``prior`` for every model.

    Returns
    -------
    list of ClickModelFit
    """
    sessions = list(sessions)
    bad = [n for n in names if n not in CLICK_MODELS]
    if bad:
        raise ValueError(f"click model names must be among {', '.join(CLICK_MODELS)}; got {', '.join(map(repr, bad))}")
    return [fit_click_model(n, sessions, qrels=qrels, **kwargs) for n in names]
