r"""Click probabilities and click-vector likelihoods of the fitted user models (P@H, Carterette, TBG).

Every walk family of this package (P@H's browsing models, Carterette's stopping
distributions, TBG's reader) describes a user who visits ranks — forward with
:math:`p_r`, backward with :math:`q_r`, stopping with :math:`1-p_r-q_r`, from
rank 1 (:mod:`._walk`) — and clicks each visit of rank :math:`r` with
probability :math:`\gamma_r`.  That defines a distribution over a session's
**click vector** :math:`c_r` (rank :math:`r` clicked at least once), the
quantity click models are scored on
(:mod:`~irmeasures_markov.calibration._click_metrics`):

- the unconditional click probability :math:`P(C_r=1)` is the walk code's
  (:func:`~._walk.click_probability_by_rank`, what the fit's CTR diagnostics use);
- for a forward reader (:math:`q=0` past rank 1: SFBM, DFBM, Carterette,
  TBG) each rank is visited at most once, and the probability of the click
  vector is the walk likelihood of its clicked ranks in rank order
  (:func:`~._walk.walk_loglik`);
- for a user who goes back (RWBM) the click vector with clicked set :math:`S`
  has probability :math:`\sum_{A\subseteq S}(-1)^{|S\setminus A|}Q(A)`
  (inclusion-exclusion), with :math:`Q(A)` the probability of no click
  outside :math:`A`: :math:`Q(A) = e_1^\top (I-D_AP)^{-1}D_A s`, :math:`D_A`
  the diagonal of 1 on :math:`A` and :math:`1-\gamma_r` elsewhere, :math:`s`
  the stop probabilities (one tridiagonal solve per set); at most
  :data:`MAX_CLICKED_RANKS` clicked ranks.

How this relates to the likelihood the fit maximises: Carterette and TBG are
fitted on the set of clicked ranks, and with :math:`q=0` that likelihood *is*
the click-vector probability.  P@H is fitted on the ordered click sequence
(consecutive repeats merged), a finer observation: the click-vector
probability here is the sum of the sequence probabilities over every sequence
with the same set of clicked ranks (every order, every revisit).

MP defines no click probabilities: its observation model takes the clicked set
as the chain's relevant ranks and models only the order of the moves between
them, conditional on that set (:mod:`._mp`).
"""
from __future__ import annotations

import json

import numpy as np

from irmeasures_markov.calibration import _carterette as carterette
from irmeasures_markov.calibration import _ph as ph
from irmeasures_markov.calibration import _tbg as tbg
from irmeasures_markov.calibration._click_metrics import click_vector
from irmeasures_markov.calibration._likelihood import safe_log
from irmeasures_markov.calibration._logs import Session
from irmeasures_markov.calibration._walk import WalkData, boundary, click_probability_by_rank, walk_loglik
from irmeasures_markov.calibration.click_models import ClickModelFit

__all__ = ["FamilyClickModel", "family_click_model", "walk_click_vector_probability",
           "NO_CLICKS_REASON", "MAX_CLICKED_RANKS", "WALK_FAMILIES"]

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
    p, q, gamma : array_like, shape (T,)
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

    Build it with :func:`family_click_model` (or ``FamilyFit.click_model``).
    Results are cached per ranking (length and relevance) and click vector,
    so scoring a log costs its distinct sessions.
    """

    def __init__(self, family: str, params: dict, qrels: dict | None = None, rel: int = 1) -> None:
        self.family, self.params, self.qrels, self.rel = family, dict(params), qrels, rel
        self._rankings: dict = {}       # (length, relevance) -> (walk data, p, q, gamma); kept, so ids stay unique
        self._sessions: dict = {}       # (length, query and documents if needs_qrels) -> the same
        self._marginals: dict = {}
        self._loglik: dict = {}
        self.needs_qrels = family == "tbg" or any(k in params for k in _REL_KEYS) or \
            (family == "carterette" and params.get("dist") in ("ERR", "AP", "RRR"))
        if self.needs_qrels and qrels is None:
            raise ValueError(f"this {family} fit ({params.get('browse') or params.get('dist') or 'clicks'}) depends "
                             "on relevance: pass "
                             "qrels={query_id: {doc_id: grade}} (and rel, the lowest relevant grade)")

    def ranking(self, session: Session) -> tuple[WalkData, np.ndarray, np.ndarray, np.ndarray]:
        """The ranking ``session`` shows as walk data (no clicks) and its forward, backward and click
        probabilities at each rank, by the family's own rule (the one its likelihood uses); looked up by the
        ranking's length (and query and documents, when the model reads relevance) before its relevance is read."""
        by_session = (session.n_shown, (session.query_id, session.shown) if self.needs_qrels else None)
        hit = self._sessions.get(by_session)
        if hit is not None:
            return hit
        relv = None
        if self.needs_qrels:
            judged = self.qrels.get(session.query_id, {})
            relv = tuple(judged.get(d, 0) >= self.rel for d in session.shown)
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


_CACHE_ATTR = "_click_model_cache"


def family_click_model(fit, qrels: dict | None = None, rel: int = 1) -> FamilyClickModel:
    """The click model a fitted user model defines (cached on the fit per parameters, qrels and ``rel``).

    Parameters
    ----------
    fit : FamilyFit
    qrels : dict, optional
        ``{query_id: {doc_id: grade}}``; needed when the fit depends on relevance
        (fitted with qrels: ``gamma_rel``, ``p_rel``, Carterette's ERR/AP/RRR, TBG's P(C|R)).
    rel : int
        The lowest grade that counts as relevant (as in ``fit(..., rel=...)``).

    Returns
    -------
    FamilyClickModel or ClickModelFit
        For a click-model row, the click model it stores.

    Raises
    ------
    NotImplementedError
        For MP (it models the order of the moves between clicked ranks, not which ranks get clicked)
        and for a TBG fit with time parameters only.
    ValueError
        When the fit depends on relevance and ``qrels`` is not given.
    """
    if fit.family == "clickmodel":
        # a click-model row (of a report, or read back from a fit file) predicts as the click model it stores
        return ClickModelFit.from_dict({"name": fit.model, "params": fit.params, "loglik": fit.loglik,
                                        "n_params": fit.n_params, "n_sessions": fit.n_sessions})
    if fit.family == "mp" or (fit.family == "tbg" and "pc_rel" not in fit.params):
        raise NotImplementedError(f"{fit.family} {fit.model!r}: no click probabilities: "
                                  f"{NO_CLICKS_REASON[fit.family]}")
    if fit.family not in WALK_FAMILIES:
        raise NotImplementedError(f"{fit.family} {fit.model!r}: no click probabilities for family {fit.family!r} "
                                  f"(the families with them are {', '.join(WALK_FAMILIES)})")
    # one model per fit, made again when its parameters changed or other qrels are given
    key = (json.dumps(fit.params, sort_keys=True, default=str), fit.family, rel)
    cached = fit.__dict__.get(_CACHE_ATTR)
    if cached is None or cached[0] != key or cached[1].qrels is not qrels:
        cached = fit.__dict__[_CACHE_ATTR] = (key, FamilyClickModel(fit.family, fit.params, qrels, rel))
    return cached[1]
