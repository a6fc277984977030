r"""A fitted user model: what every fit returns and every registry stores.

[`FamilyFit`][irmeasures_markov.calibration.FamilyFit] is plain data (JSON round-trip through ``to_dict`` /
``from_dict``) plus [`FamilyFit.measure_parameters`][irmeasures_markov.calibration.FamilyFit.measure_parameters], which
turns the fitted
parameters into what the family's measure functions take.  The fitting code
(``calibration`` family modules) fills ``params``; the registry
(``register_fitted``, ``'fit:NAME'`` / ``'file:PATH'`` measure parameters)
reads only ``measure_parameters()``.
[`FamilyFit.click_probabilities`][irmeasures_markov.calibration.FamilyFit.click_probabilities]
and [`FamilyFit.session_loglik`][irmeasures_markov.calibration.FamilyFit.session_loglik] give the clicks the fitted user
model
predicts (MP has none), for a fit just made or read from a fit file alike:

Click probabilities and click-vector likelihoods of the fitted user models (P@H, Carterette, TBG).
Every walk family of this package (P@H's browsing models, Carterette's stopping
distributions, TBG's reader) describes a user who visits ranks — forward with
$p_r$, backward with $q_r$, stopping with $1-p_r-q_r$, from
rank 1 (`_walk`) — and clicks each visit of rank $r$ with
probability $\gamma_r$.  That defines a distribution over a session's
**click vector** $c_r$ (rank $r$ clicked at least once), the
quantity click models are scored on
(`_click_metrics`):

- the unconditional click probability $P(C_r=1)$ is the walk code's
  (`click_probability_by_rank`, what the fit's CTR diagnostics use);
- for a forward reader ($q=0$ past rank 1: SFBM, DFBM, Carterette,
  TBG) each rank is visited at most once, and the probability of the click
  vector is the walk likelihood of its clicked ranks in rank order
  (`walk_loglik`);
- for a user who goes back (RWBM) the click vector with clicked set $S$
  has probability $\sum_{A\subseteq S}(-1)^{|S\setminus A|}Q(A)$
  (inclusion-exclusion), with $Q(A)$ the probability of no click
  outside $A$: $Q(A) = e_1^\top (I-D_AP)^{-1}D_A s$, $D_A$
  the diagonal of 1 on $A$ and $1-\gamma_r$ elsewhere, $s$
  the stop probabilities (one tridiagonal solve per set); at most
  `MAX_CLICKED_RANKS` clicked ranks.

How this relates to the likelihood the fit maximises: Carterette and TBG are
fitted on the set of clicked ranks, and with $q=0$ that likelihood *is*
the click-vector probability.  P@H is fitted on the ordered click sequence
(consecutive repeats merged), a finer observation: the click-vector
probability here is the sum of the sequence probabilities over every sequence
with the same set of clicked ranks (every order, every revisit).

MP defines no click probabilities: its observation model takes the clicked set
as the chain's relevant ranks and models only the order of the moves between
them, conditional on that set (`_mp`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from irmeasures_markov.calibration import _carterette as carterette
from irmeasures_markov.calibration import _parameters as parameters
from irmeasures_markov.calibration import _ph as ph
from irmeasures_markov.calibration import _tbg as tbg
from irmeasures_markov.calibration._click_metrics import click_vector
from irmeasures_markov.calibration._likelihood import safe_log
from irmeasures_markov.calibration._logs import Session
from irmeasures_markov.calibration._parameters import COUNT, NUMBER, Field, check_fields
from irmeasures_markov.calibration._walk import WalkData, boundary, click_probability_by_rank, walk_loglik
from irmeasures_markov.calibration.click_models import ClickModelFit

__all__ = ["FamilyFit", "FAMILIES", "FamilyClickModel", "walk_click_vector_probability", "MAX_CLICKED_RANKS"]

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
    heldout_metrics : dict or None
        Click metrics on the held-out and the training sessions
        (`as_dict`: log-likelihood per
        session, click perplexity overall and per rank, CTR predicted and
        observed); None where the model does not predict clicks.
    train_metrics : dict or None
        Click metrics on the held-out and the training sessions
        (`as_dict`: log-likelihood per
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
        """The fit as plain JSON-able data (intervals as ``[low, high]`` lists);
        [`from_dict`][irmeasures_markov.calibration.FamilyFit.from_dict] reads it back.

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
        """The fit a [`to_dict`][irmeasures_markov.calibration.FamilyFit.to_dict] dict describes, every field checked.

        Parameters
        ----------
        d : dict
            As [`to_dict`][irmeasures_markov.calibration.FamilyFit.to_dict] writes it; a number written as null (not
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
        check_fields(d, _FIELD_RULES.get, f"; the fields of a fit are {', '.join(f.name for f in fields(cls))}")
        missing = [k for k in ("family", "model", "params") if k not in d]
        if missing:
            raise ValueError(f"field {missing[0]!r} is missing")
        d["intervals"] = {k: (_float(v[0]), _float(v[1])) for k, v in d.get("intervals", {}).items()}
        return cls(**d)

    def measure_parameters(self) -> dict:
        """What the family's measure takes, built from ``params``.

        - ``mp``: ``{'kernel': alpha, 'states': 'AD'|'OR', 'rates': None}``,
          ``alpha(i, j)`` a vectorised weight function of 1-based rank arrays
          (as [`register_kernel`][irmeasures_markov.register_kernel] takes);
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
            (`check_params`) or a
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
        ``session_loglik(session)``, as [`click_metrics`][irmeasures_markov.calibration.click_metrics] takes.

        Parameters
        ----------
        qrels : dict, optional
            ``{query_id: {doc_id: grade}}``; needed when the fit depends on
            relevance (it was fitted with qrels).
        rel : int
            The lowest grade that counts as relevant.

        Returns
        -------
        FamilyClickModel or ClickModelFit
            Cached on the fit per parameters, qrels and ``rel``; for a click-model
            row, the click model it stores.

        Raises
        ------
        NotImplementedError
            For MP (it models the order of the moves between the clicked ranks
            given which ranks were clicked, not which ranks get clicked) and for
            a TBG fit with time parameters only.
        ValueError
            When the fit depends on relevance and ``qrels`` is not given.
        """
        if self.family == "clickmodel":
            # a click-model row (of a report, or read back from a fit file) predicts as the click model it stores
            return ClickModelFit.from_dict({"name": self.model, "params": self.params, "loglik": self.loglik,
                                            "n_params": self.n_params, "n_sessions": self.n_sessions})
        if self.family == "mp" or (self.family == "tbg" and "pc_rel" not in self.params):
            raise NotImplementedError(f"{self.family} {self.model!r}: no click probabilities: "
                                      f"{NO_CLICKS_REASON[self.family]}")
        if self.family not in WALK_FAMILIES:
            raise NotImplementedError(f"{self.family} {self.model!r}: no click probabilities for family "
                                      f"{self.family!r} (the families with them are {', '.join(WALK_FAMILIES)})")
        # one model per fit (never pickled: __getstate__), made again when its parameters changed or other qrels
        # are given
        key = (json.dumps(self.params, sort_keys=True, default=str), self.family, rel)
        cached = self.__dict__.get("_click_model_cache")
        if cached is None or cached[0] != key or cached[1].qrels is not qrels:
            cached = (key, FamilyClickModel(self.family, self.params, qrels, rel))
            self.__dict__["_click_model_cache"] = cached
        return cached[1]

    def click_probabilities(self, session: Session, qrels: dict | None = None, rel: int = 1) -> np.ndarray:
        """Unconditional P(click at rank r) for each rank r = 1..len(session.shown) under the fitted model.

        The marginals of the distribution over click vectors that
        [`session_loglik`][irmeasures_markov.calibration.FamilyFit.session_loglik] gives (docs/calibration.md, "Click
        probabilities
        of the fitted user models"); ``qrels`` and ``rel`` as in
        [`click_model`][irmeasures_markov.calibration.FamilyFit.click_model].

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


# ---------------------------------------------------------------------------
# Click probabilities of the fitted user models
# ---------------------------------------------------------------------------

#: each walk family's (p, q, gamma) of one ranking: the rule its likelihood uses
_WALK_ARRAYS = {"ph": ph.walk_arrays, "carterette": carterette.walk_arrays, "tbg": tbg.walk_arrays}
#: the families whose user models define clicks (a walk with clicks on visits)
WALK_FAMILIES = tuple(_WALK_ARRAYS)
#: why a family (or a fit) has no click probabilities
NO_CLICKS_REASON = {
    "mp": "MP models the order of the moves between the clicked ranks given which ranks were clicked "
          "(the clicked set is its relevant set), not which ranks get clicked",
    "tbg": "this TBG fit has only time parameters (halflife, t_summary); its click probabilities P(C|R) "
           "are fitted with qrels only",
}

#: most distinct clicked ranks of a session under a user who goes back (the exact sum has 2^k terms of
#: alternating sign: beyond, its cost and its rounding error grow too large)
MAX_CLICKED_RANKS = 16
#: sets per batch of the inclusion-exclusion sum
_CHUNK = 4096

_REL_KEYS = ("gamma_rel", "gamma_nonrel", "p_rel", "q_rel")


def _no_click_outside(p, q, stop, gamma, inside: np.ndarray) -> np.ndarray:
    """Q(A) for a batch of sets A (``inside``: (B, T) bool): the probability of no click at a rank outside A.

    ``Q(A)`` is the first entry of the solution of the tridiagonal system ``(I - D P) x = D s``; it is
    eliminated from rank T up to rank 1 (Thomas's algorithm in reverse order, stable because the matrix is
    diagonally dominant: p + q <= 1), so the answer is the last pivot step and costs O(T) per set."""
    d = np.where(inside, 1.0, 1.0 - gamma[None, :])                     # (B, T)
    T = p.size
    # row r: x_r - d_r p_r x_{r+1} - d_r q_r x_{r-1} = d_r s_r; eliminate x_{r+1} from the bottom row up
    up = np.zeros(d.shape[0])          # coefficient of x_{r-1} after elimination (divided by the pivot)
    y = np.zeros(d.shape[0])
    for r in range(T - 1, -1, -1):
        a = d[:, r] * p[r]                                                # coefficient of x_{r+1}
        pivot = 1.0 - a * up
        y = (d[:, r] * stop[r] + a * y) / pivot
        up = d[:, r] * q[r] / pivot
    return y


def walk_click_vector_probability(p, q, gamma, clicked) -> float:
    """P(the set of ranks clicked at least once is exactly ``clicked``) under the walk (module docstring).

    Parameters
    ----------
    p : array_like, shape (T,)
        Forward, backward and click probabilities per rank (the forward
        probability at rank T and the backward one at rank 1 are ignored: the user stops).
    q : array_like, shape (T,)
        Forward, backward and click probabilities per rank (the forward
        probability at rank T and the backward one at rank 1 are ignored: the user stops).
    gamma : array_like, shape (T,)
        Forward, backward and click probabilities per rank (the forward
        probability at rank T and the backward one at rank 1 are ignored: the user stops).
    clicked : array_like of bool or 0/1, shape (T,)
        The click vector.

    Returns
    -------
    float
    """
    p, q = boundary(p, q)
    stop = 1.0 - p - q
    gamma = np.asarray(gamma, dtype=np.float64)
    c = np.asarray(clicked).astype(bool)
    T = p.size
    S = np.flatnonzero(c)
    if S.size > MAX_CLICKED_RANKS:
        raise ValueError(f"a click vector with {S.size} clicked ranks under a user who goes back (q > 0): the "
                         f"exact sum has 2^{S.size} terms; at most {MAX_CLICKED_RANKS} clicked ranks are supported")
    total = 0.0
    for start in range(0, 1 << S.size, _CHUNK):
        codes = np.arange(start, min(start + _CHUNK, 1 << S.size))
        subsets = ((codes[:, None] >> np.arange(S.size)[None, :]) & 1).astype(bool)
        inside = np.zeros((codes.size, T), dtype=bool)
        inside[:, S] = subsets
        sign = np.where((S.size - subsets.sum(axis=1)) % 2 == 0, 1.0, -1.0)
        total += float(sign @ _no_click_outside(p, q, stop, gamma, inside))
    return total


class FamilyClickModel:
    """A fitted walk-family user model as a click model: ``click_probabilities`` and ``session_loglik``.

    Build it with ``FamilyFit.click_model``.
    Results are cached per ranking (length and relevance) and click vector,
    so scoring a log costs its distinct sessions.
    """

    def __init__(self, family: str, params: dict, qrels: dict | None = None, rel: int = 1) -> None:
        self.family, self.params, self.qrels, self.rel = family, dict(params), qrels, rel
        # (length, relevance) -> (walk data, p, q, gamma), kept so that ids stay unique; (length, query and
        # documents if needs_qrels) -> the same; click probabilities by id(data); log-likelihoods by (id, clicks)
        self._rankings, self._sessions, self._marginals, self._loglik = {}, {}, {}, {}
        self.needs_qrels = family == "tbg" or any(k in params for k in _REL_KEYS) or \
            (family == "carterette" and params.get("dist") in ("ERR", "AP", "RRR"))
        if self.needs_qrels and qrels is None:
            what = params.get('browse') or params.get('dist') or 'clicks'
            raise ValueError(f"this {family} fit ({what}) depends on relevance: pass qrels={{query_id: {{doc_id: "
                             "grade}} (and rel, the lowest relevant grade)")

    def ranking(self, session: Session) -> tuple[WalkData, np.ndarray, np.ndarray, np.ndarray]:
        """The ranking ``session`` shows as walk data (no clicks) and its forward, backward and click
        probabilities at each rank, by the family's own rule (the one its likelihood uses); looked up by the
        ranking's length (and query and documents, when the model reads relevance) before its relevance is read."""
        by_session = (session.n_shown, (session.query_id, session.shown) if self.needs_qrels else None)
        hit = self._sessions.get(by_session)
        if hit is not None:
            return hit
        judged = self.qrels.get(session.query_id, {}) if self.needs_qrels else None
        relv = tuple(judged.get(d, 0) >= self.rel for d in session.shown) if self.needs_qrels else None
        key = (session.n_shown, relv)
        hit = self._rankings.get(key)
        if hit is None:
            T = session.n_shown
            data = WalkData(np.array([T]), np.array(relv if relv is not None else (False,) * T, dtype=bool),
                            [()], [0])
            hit = self._rankings[key] = (data, *_WALK_ARRAYS[self.family](data, self.params))
        self._sessions[by_session] = hit
        return hit

    def click_probabilities(self, session: Session) -> np.ndarray:
        """Unconditional P(click at rank r), r = 1..len(session.shown) (module docstring).

        Parameters
        ----------
        session : Session

        Returns
        -------
        ndarray of float64
        """
        data, p, q, g = self.ranking(session)
        hit = self._marginals.get(id(data))
        if hit is None:
            hit = self._marginals[id(data)] = click_probability_by_rank(data, p, q, g)
        return hit.copy()

    def session_loglik(self, session: Session) -> float:
        """Natural log of the probability of the session's click vector (``-inf`` when the model rules it out).

        Parameters
        ----------
        session : Session

        Returns
        -------
        float
        """
        c = click_vector(session)
        data, p, q, g = self.ranking(session)
        key = (id(data), c.tobytes())
        hit = self._loglik.get(key)
        if hit is None:
            if not np.any(q[1:]):      # (a backward move from rank 1 stops: q at rank 1 changes nothing)
                # a forward reader: the walk likelihood of the clicked ranks in rank order is the vector's
                seq = tuple(int(r) for r in np.flatnonzero(c) + 1)
                one = WalkData(data.group_len, data.rel, [seq], [0])
                hit = float(walk_loglik(one, p, q, g)[0])
            else:
                prob = walk_click_vector_probability(p, q, g, c)
                hit = float(safe_log(min(max(prob, 0.0), 1.0)))
            self._loglik[key] = hit
        return hit
