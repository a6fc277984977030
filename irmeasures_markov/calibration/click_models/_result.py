"""A fitted click model: parameters, training likelihood, predictions for any session, a JSON form."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from irmeasures_markov.calibration._logs import Session
from irmeasures_markov.calibration.click_models import _cascade as cascade
from irmeasures_markov.calibration.click_models import _dbn as dbn
from irmeasures_markov.calibration.click_models import _examination as examination
from irmeasures_markov.calibration.click_models._core import lookup
from irmeasures_markov.calibration.click_models._data import encode

__all__ = ["ClickModelFit", "CLICK_MODELS"]

#: the click models, in the order reports list them
CLICK_MODELS = ("PBM", "CM", "UBM", "DBN", "SDBN")


@dataclass
class ClickModelFit:
    """One click model fitted to a log (:func:`~irmeasures_markov.calibration.click_models.fit_click_model`).

    Attributes
    ----------
    name : str
        One of :data:`CLICK_MODELS`.
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
        self._index: dict[tuple[str, str], int] = {}
        attr, sat = [], []
        sat_table = per.get("satisfaction", {})
        for q, docs in per.get("attractiveness", {}).items():
            sq = sat_table.get(q, {})
            for d, v in docs.items():
                self._index[(q, d)] = len(attr)
                attr.append(v)
                sat.append(sq.get(d, 0.0))
        self._attr = np.asarray(attr, dtype=np.float64)
        self._sat = np.asarray(sat, dtype=np.float64)
        # the unseen-pair values sit beside the tables in a report's fit-file record, at the top level here
        unseen = self.params.get("unseen", per.get("unseen", {}))
        self._unseen_a = float(unseen.get("attractiveness", 0.5))
        self._unseen_s = float(unseen.get("satisfaction", 0.5))
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
            return getattr(cascade, what)(a, enc), enc
        return getattr(dbn, what)(a, lookup(self._sat, enc.items, self._unseen_s), self._gamma, enc), enc

    def click_probabilities_batch(self, sessions: Iterable[Session]) -> list[np.ndarray]:
        """:meth:`click_probabilities` of many sessions at once (one array pass).

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
        """:meth:`session_loglik` of many sessions at once.

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
        """A JSON-able form; :meth:`from_dict` rebuilds an identical fit.

        Returns
        -------
        dict
        """
        return {"name": self.name, "family": self.family, "params": self.params, "loglik": self.loglik,
                "n_params": self.n_params, "n_sessions": self.n_sessions, "history": list(self.history),
                "objective": list(self.objective)}

    @classmethod
    def from_dict(cls, d: Mapping) -> ClickModelFit:
        """The fit :meth:`to_dict` stored.

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
