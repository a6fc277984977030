r"""Click probabilities and click-vector likelihoods of the fitted user models (P@H, Carterette, TBG).

Every walk family of this package (P@H's browsing models, Carterette's stopping
distributions, TBG's reader) describes a user who visits ranks — forward with
:math:`p_r`, backward with :math:`q_r`, stopping with :math:`1-p_r-q_r`, from
rank 1 (:mod:`._walk`) — and clicks each visit of rank :math:`r` with
probability :math:`\gamma_r`.  That defines a distribution over a session's
**click vector** :math:`c_r` (rank :math:`r` clicked at least once), the
quantity click models are scored on
(:mod:`~irmeasures_markov.calibration.click_metrics`):

- the unconditional click probability is
  :math:`P(C_r=1) = 1 - Q(\{1..T\}\setminus\{r\})`, with :math:`Q(A)` the
  probability of no click outside :math:`A`:
  :math:`Q(A) = e_1^\top (I-D_AP)^{-1}D_A s`, :math:`D_A` the diagonal of
  1 on :math:`A` and :math:`1-\gamma_r` elsewhere, :math:`s` the stop
  probabilities;
- the click vector with clicked set :math:`S` has probability
  :math:`\sum_{A\subseteq S}(-1)^{|S\setminus A|}Q(A)` (inclusion-exclusion:
  :math:`Q(A)` is the probability that the clicked set lies within :math:`A`).

For a forward-only user (:math:`q=0`: SFBM, DFBM, Carterette, TBG) each rank is
visited at most once, so the closed forms are :math:`P(C_r=1)=\gamma_r\prod_{i<r}p_i`
and a product along the ranks up to the last click; they are used there.

How this relates to the likelihood the fit maximises: Carterette and TBG are
fitted on the set of clicked ranks, and with :math:`q=0` that likelihood *is*
the click-vector probability.  P@H is fitted on the ordered click sequence
(consecutive repeats merged), a finer observation: the click-vector
probability here is the sum of the sequence probabilities over every sequence
with the same set of clicked ranks (every order, every revisit).

MP defines no click probabilities: its observation model takes the clicked set
as the chain's relevant ranks and models only the order of the moves between
them, conditional on that set (:mod:`.mp`).
"""
from __future__ import annotations

import json

import numpy as np

from ._likelihood import safe_log
from ._walk import WalkData
from .click_metrics import click_vector
from .logs import Session

__all__ = ["FamilyClickModel", "family_click_model", "walk_click_probabilities", "walk_click_vector_probability",
           "NO_CLICKS_REASON"]

#: why a family (or a fit) has no click probabilities
NO_CLICKS_REASON = {
    "mp": "MP models the order of the moves between the clicked ranks given which ranks were clicked "
          "(the clicked set is its relevant set), not which ranks get clicked",
    "tbg": "this TBG fit has only time parameters (halflife, t_summary); its click probabilities P(C|R) "
           "are fitted with qrels only",
}

_REL_KEYS = ("gamma_rel", "gamma_nonrel", "p_rel", "q_rel")


def _boundary(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward, backward and stop probabilities with the measures' rule (forward mass at T and backward at 1 stop)."""
    p = np.array(p, dtype=np.float64)
    q = np.array(q, dtype=np.float64)
    p[-1] = 0.0
    q[0] = 0.0
    return p, q, 1.0 - p - q


def _no_click_outside(p, q, stop, gamma, inside: np.ndarray) -> np.ndarray:
    """Q(A) for a batch of sets A (``inside``: (B, T) bool): the probability of no click at a rank outside A."""
    T = p.size
    P = np.zeros((T, T))
    if T > 1:
        P[np.arange(T - 1), np.arange(1, T)] = p[:-1]
        P[np.arange(1, T), np.arange(T - 1)] = q[1:]
    d = np.where(inside, 1.0, 1.0 - gamma[None, :])                     # (B, T)
    M = np.eye(T)[None] - d[:, :, None] * P[None]
    rhs = d * stop[None, :]
    # row 1 of (I - DP)^{-1} D s: solve (I - DP) x = D s and read x_1
    x = np.linalg.solve(M, rhs[:, :, None])[:, :, 0]
    return x[:, 0]


def walk_click_probabilities(p, q, gamma) -> np.ndarray:
    """Unconditional P(rank r clicked at least once), r = 1..T, under the walk with clicks on visits.

    Parameters
    ----------
    p, q, gamma : array_like, shape (T,)
        Forward, backward and click probabilities per rank (the forward
        probability at rank T and the backward one at rank 1 are ignored: the user stops).

    Returns
    -------
    ndarray, shape (T,)
    """
    p, q, stop = _boundary(p, q)
    gamma = np.asarray(gamma, dtype=np.float64)
    if not q.any():
        reach = np.concatenate(([1.0], np.cumprod(p[:-1])))
        return reach * gamma
    inside = ~np.eye(p.size, dtype=bool)
    return 1.0 - _no_click_outside(p, q, stop, gamma, inside)


def walk_click_vector_probability(p, q, gamma, clicked) -> float:
    """P(the set of ranks clicked at least once is exactly ``clicked``) under the walk (module docstring).

    Parameters
    ----------
    p, q, gamma : array_like, shape (T,)
        As :func:`walk_click_probabilities`.
    clicked : array_like of bool or 0/1, shape (T,)
        The click vector.

    Returns
    -------
    float
    """
    p, q, stop = _boundary(p, q)
    gamma = np.asarray(gamma, dtype=np.float64)
    c = np.asarray(clicked).astype(bool)
    T = p.size
    if not q.any():
        # forward reader: ranks up to the last click m are all read (clicked or not), then the session ends
        obs = np.where(c, gamma, 1.0 - gamma)
        tail = np.ones(T + 1)                           # tail[k]: P(no click at ranks > k | rank k read), 0-based
        for k in range(T - 1, -1, -1):
            nxt = (1.0 - gamma[k + 1]) * tail[k + 1] if k + 1 < T else 0.0
            tail[k] = stop[k] + p[k] * nxt
        if not c.any():
            return float((1.0 - gamma[0]) * tail[0])
        m = int(np.flatnonzero(c)[-1])
        return float(np.prod(obs[:m] * p[:m]) * gamma[m] * tail[m])
    S = np.flatnonzero(c)
    subsets = ((np.arange(1 << S.size)[:, None] >> np.arange(S.size)[None, :]) & 1).astype(bool)
    inside = np.zeros((subsets.shape[0], T), dtype=bool)
    inside[:, S] = subsets
    sign = np.where((S.size - subsets.sum(axis=1)) % 2 == 0, 1.0, -1.0)
    return float(sign @ _no_click_outside(p, q, stop, gamma, inside))


class FamilyClickModel:
    """A fitted walk-family user model as a click model: ``click_probabilities`` and ``session_loglik``.

    Build it with :func:`family_click_model` (or ``FamilyFit.click_model``).
    Results are cached per ranking (length and relevance) and click vector,
    so scoring a log costs its distinct sessions.
    """

    def __init__(self, family: str, params: dict, qrels: dict | None = None, rel: int = 1) -> None:
        self.family, self.params, self.qrels, self.rel = family, dict(params), qrels, rel
        self._arrays: dict = {}
        self._loglik: dict = {}
        self.needs_qrels = family == "tbg" or any(k in params for k in _REL_KEYS) or \
            (family == "carterette" and params.get("dist") in ("ERR", "AP", "RRR"))
        if self.needs_qrels and qrels is None:
            raise ValueError(f"this {family} fit ({params.get('browse') or params.get('dist') or 'clicks'}) depends "
                             "on relevance: pass "
                             "qrels={query_id: {doc_id: grade}} (and rel, the lowest relevant grade)")

    def _relevance(self, session: Session) -> tuple[bool, ...] | None:
        if not self.needs_qrels:
            return None
        judged = self.qrels.get(session.query_id, {})
        return tuple(judged.get(d, 0) >= self.rel for d in session.shown)

    def arrays(self, session: Session) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Forward, backward and click probabilities at each rank shown in ``session``."""
        relv = self._relevance(session)
        key = (session.n_shown, relv)
        hit = self._arrays.get(key)
        if hit is None:
            hit = self._arrays[key] = _walk_arrays(self.family, self.params, session.n_shown, relv)
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
        p, q, g = self.arrays(session)
        key = (session.n_shown, self._relevance(session), "marginal")
        hit = self._loglik.get(key)
        if hit is None:
            hit = self._loglik[key] = walk_click_probabilities(p, q, g)
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
        key = (session.n_shown, self._relevance(session), c.tobytes())
        hit = self._loglik.get(key)
        if hit is None:
            p, q, g = self.arrays(session)
            prob = walk_click_vector_probability(p, q, g, c)
            hit = self._loglik[key] = float(safe_log(min(max(prob, 0.0), 1.0)))
        return hit


def _walk_arrays(family: str, params: dict, T: int, relv: tuple[bool, ...] | None):
    """(p, q, gamma) of one ranking of T documents (``relv``: relevance per rank, None without qrels)."""
    rel = np.array(relv if relv is not None else (False,) * T, dtype=bool)
    if family == "ph":
        p = np.where(rel, params.get("p_rel", params.get("p", 1.0)), params.get("p", 1.0))
        q = np.where(rel, params.get("q_rel", params.get("q", 0.0)), params.get("q", 0.0))
        return p, q, _gammas(params, rel)
    if family == "carterette":
        from .carterette import continuation
        data = WalkData(np.array([T]), rel, [()], [0])
        p = continuation(data, params["dist"], params)
        return p, np.zeros(T), _gammas(params, rel)
    if family == "tbg":
        p = np.full(T, params["p_continue"])
        return p, np.zeros(T), np.where(rel, params["pc_rel"], params["pc_nonrel"])
    raise NotImplementedError(f"no click model for family {family!r}")


def _gammas(params: dict, rel: np.ndarray) -> np.ndarray:
    if "gamma_rel" in params or "gamma_nonrel" in params:
        return np.where(rel, params["gamma_rel"], params["gamma_nonrel"])
    return np.full(rel.shape, params["gamma"])


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
    FamilyClickModel

    Raises
    ------
    NotImplementedError
        For MP (it models the order of the moves between clicked ranks, not which ranks get clicked)
        and for a TBG fit with time parameters only.
    ValueError
        When the fit depends on relevance and ``qrels`` is not given.
    """
    if fit.family == "mp" or (fit.family == "tbg" and "pc_rel" not in fit.params):
        raise NotImplementedError(f"{fit.family} {fit.model!r}: no click probabilities: "
                                  f"{NO_CLICKS_REASON[fit.family]}")
    key = (json.dumps(fit.params, sort_keys=True, default=str), fit.family, id(qrels), rel)
    cache = fit.__dict__.setdefault(_CACHE_ATTR, {})
    model = cache.get(key)
    if model is None or model.qrels is not qrels:
        cache.clear()       # one model per fit: parameters changed, or other qrels
        model = cache[key] = FamilyClickModel(fit.family, fit.params, qrels, rel)
    return model
