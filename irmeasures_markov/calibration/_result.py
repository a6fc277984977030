"""A fitted user model: what every fit returns and every registry stores.

:class:`FamilyFit` is plain data (JSON round-trip through ``to_dict`` /
``from_dict``) plus :meth:`FamilyFit.measure_parameters`, which turns the fitted
parameters into what the family's measure functions take.  The fitting code
(``calibration`` family modules) fills ``params``; the registry
(``register_fitted``, ``'fit:NAME'`` / ``'file:PATH'`` measure parameters)
reads only ``measure_parameters()``.  :meth:`FamilyFit.click_probabilities`
and :meth:`FamilyFit.session_loglik` give the clicks the fitted user model
predicts (:mod:`._click_probabilities`; MP has none), for a fit just made or
read from a fit file alike.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np

from irmeasures_markov.calibration import _parameters as parameters
from irmeasures_markov.calibration._click_probabilities import FamilyClickModel, family_click_model
from irmeasures_markov.calibration._logs import Session
from irmeasures_markov.calibration._parameters import COUNT, NUMBER, Field, field_error

__all__ = ["FamilyFit", "FAMILIES"]

#: The families a log can calibrate.
FAMILIES = ("mp", "ph", "carterette", "tbg")


def _float(v) -> float:
    return float("nan") if v is None else float(v)


_STRING = Field("a string", lambda v: isinstance(v, str))
#: field -> what it may be
_FIELD_RULES = {
    "family": _STRING, "model": _STRING, "log_description": _STRING, "loglik": NUMBER, "heldout_loglik": NUMBER,
    "params": Field("an object", lambda v: isinstance(v, dict)),
    "intervals": Field("an object mapping names to [low, high] pairs of numbers (or null)",
                       lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(i, (list, tuple))
                                                             and len(i) == 2 and all(map(NUMBER.ok, i))
                                                             for k, i in v.items())),
    **dict.fromkeys(("n_params", "n_sessions", "n_heldout", "n_events", "n_heldout_events"), COUNT),
    **dict.fromkeys(("heldout_metrics", "train_metrics"),
                    Field("an object (ClickMetrics.as_dict()) or null", lambda v: v is None or isinstance(v, dict))),
}


@dataclass
class FamilyFit:
    """One candidate user model of one family, fitted to a log by maximum likelihood.

    Attributes
    ----------
    family : {'mp', 'ph', 'carterette', 'tbg'}
    model : str
        The candidate's name within its family (e.g. ``'GL_AD_ID'``,
        ``'nonparametric'``, ``'RWBM'``, ``'RBP'``, ``'empirical'``).
    params : dict
        Fitted parameters (JSON-able: floats, ints, strings, lists).
    intervals : dict
        ``name -> [low, high]``: bootstrap-over-sessions 95% intervals.
    loglik : float
        Log-likelihood of the training sessions at the fitted parameters.
    n_params : int
        Free parameters (for AIC/BIC).
    n_sessions : int
        Training sessions.
    heldout_loglik : float or None
        Log-likelihood of held-out sessions, when a test log was given.
    n_heldout : int
        Held-out sessions (0 when none).
    n_events : int
        Observations the likelihood counts (for perplexity per event).
    log_description : str
        Where the log came from (kept so a calibrated measure can cite it).
    n_heldout_events : int
        Observations the held-out likelihood counts (held-out perplexity per event).
    heldout_metrics, train_metrics : dict or None
        Click metrics on the held-out and the training sessions
        (:meth:`~._click_metrics.ClickMetrics.as_dict`: log-likelihood per
        session, click perplexity overall and per rank, CTR predicted and
        observed); None where the model does not predict clicks.
    """

    family: str
    model: str
    params: dict[str, object]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    loglik: float = float("nan")
    n_params: int = 0
    n_sessions: int = 0
    heldout_loglik: float | None = None
    n_heldout: int = 0
    n_events: int = 0
    log_description: str = ""
    n_heldout_events: int = 0
    heldout_metrics: dict | None = None
    train_metrics: dict | None = None

    def to_dict(self) -> dict:
        """The fit as plain JSON-able data (intervals as ``[low, high]`` lists); :meth:`from_dict` reads it back.

        Returns
        -------
        dict
            One entry per field of the fit.
        """
        d = asdict(self)
        d["intervals"] = {k: [float(v[0]), float(v[1])] for k, v in self.intervals.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> FamilyFit:
        """The fit a :meth:`to_dict` dict describes, every field checked.

        Parameters
        ----------
        d : dict
            As :meth:`to_dict` writes it; a number written as null (not
            finite) reads as NaN.

        Returns
        -------
        FamilyFit

        Raises
        ------
        ValueError
            An unknown or missing field, or a value of the wrong type, naming
            the field, its value and what it may be.
        """
        d = dict(d)
        known = [f.name for f in fields(cls)]
        unknown = [k for k in d if k not in known]
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; the fields of a fit are {', '.join(known)}")
        missing = [k for k in ("family", "model", "params") if k not in d]
        if missing:
            raise ValueError(f"field {missing[0]!r} is missing")
        for name, value in d.items():
            what = _FIELD_RULES[name].check(value)
            if what is not None:
                raise field_error(name, value, what)
        d["intervals"] = {k: (_float(v[0]), _float(v[1])) for k, v in d.get("intervals", {}).items()}
        return cls(**d)

    def measure_parameters(self) -> dict:
        """What the family's measure takes, built from ``params``.

        - ``mp``: ``{'kernel': alpha, 'states': 'AD'|'OR', 'rates': None}``,
          ``alpha(i, j)`` a vectorised weight function of 1-based rank arrays
          (as :func:`~irmeasures_markov.measures.markov_precision.register_kernel` takes);
        - ``carterette``: ``{'stop_probabilities': f}``, ``f(n)`` an array of
          P(stop at rank k), k = 1..n (the mass beyond n is the remainder);
        - ``ph``: keyword arguments of the PH measure (``browse``, ``p``, ``q``, ...);
        - ``tbg``: keyword arguments of the TBG measure.

        Returns
        -------
        dict

        Raises
        ------
        ValueError
            When ``params`` break the family's schema
            (:func:`~irmeasures_markov.calibration._parameters.check_params`) or a
            value the measure reads is not finite.
        """
        return parameters.measure_parameters(self)

    def __getstate__(self) -> dict:
        # the click model cached by click_model() is rebuilt on demand: never pickled or deep-copied
        state = dict(self.__dict__)
        state.pop("_click_model_cache", None)
        return state

    def click_model(self, qrels: dict | None = None, rel: int = 1) -> FamilyClickModel:
        """The click model this user model defines: an object with ``click_probabilities(session)`` and
        ``session_loglik(session)``, as :func:`~irmeasures_markov.calibration._click_metrics.click_metrics` takes.

        Parameters
        ----------
        qrels : dict, optional
            ``{query_id: {doc_id: grade}}``; needed when the fit depends on
            relevance (it was fitted with qrels).
        rel : int
            The lowest grade that counts as relevant.

        Returns
        -------
        FamilyClickModel

        Raises
        ------
        NotImplementedError
            For MP (it models the order of the moves between the clicked ranks
            given which ranks were clicked, not which ranks get clicked) and for
            a TBG fit with time parameters only.
        ValueError
            When the fit depends on relevance and ``qrels`` is not given.
        """
        return family_click_model(self, qrels, rel)

    def click_probabilities(self, session: Session, qrels: dict | None = None, rel: int = 1) -> np.ndarray:
        """Unconditional P(click at rank r) for each rank r = 1..len(session.shown) under the fitted model.

        The marginals of the distribution over click vectors that
        :meth:`session_loglik` gives (docs/calibration.md, "Click probabilities
        of the fitted user models"); ``qrels`` and ``rel`` as in :meth:`click_model`.

        Parameters
        ----------
        session : Session
        qrels : dict, optional
        rel : int

        Returns
        -------
        numpy.ndarray of float64
        """
        return self.click_model(qrels, rel).click_probabilities(session)

    def session_loglik(self, session: Session, qrels: dict | None = None, rel: int = 1) -> float:
        """Natural log of the model's probability of the session's click vector (rank r clicked at least once).

        For P@H this sums the probabilities of every ordered click sequence
        with the same clicked ranks (the fit's own likelihood is of the ordered
        sequence); for Carterette and TBG it is the fit's likelihood of the session.

        Parameters
        ----------
        session : Session
        qrels : dict, optional
        rel : int

        Returns
        -------
        float
            ``-inf`` when the model gives the click vector probability 0.
        """
        return self.click_model(qrels, rel).session_loglik(session)
