r"""P@H browsing models fitted to click sequences (Ferrante & Ferro, ICTIR 2020).

The P@H user (:mod:`irmeasures_markov.measures.stopping_time`) starts at rank 1
and, at rank :math:`i`, moves forward with :math:`p`, backward with :math:`q`
or stops with :math:`1-p-q`; DFBM reads every document (:math:`p=1`), SFBM has
:math:`q=0`, RWBM both.  The log shows clicks, not visits: each visit is
clicked with probability :math:`\gamma` (``gamma``; ``gamma_rel`` /
``gamma_nonrel`` with qrels) and the likelihood of a session's click sequence
is the walk likelihood of :mod:`._walk`.  With qrels, ``p_rel`` / ``q_rel``
apply at relevant documents, ``p`` / ``q`` at the others, as in the measure.

The parameters mean exactly the measure's ``PH(browse=..., p=..., q=...)``;
:math:`\gamma` belongs to the observation model and is not a measure parameter.
Paper defaults are candidates too, with only :math:`\gamma` fitted: the
measure's default SFBM :math:`p=0.8`, and the paper's Figure 1 users SFBM
:math:`p=0.5` and RWBM :math:`p=0.5, q=0.25`.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration._likelihood import Candidate, expit, logit
from irmeasures_markov.calibration._walk import WalkData, click_gammas, gamma_names, walk_loglik

__all__ = ["candidates", "walk_arrays", "DEFAULTS"]

#: (name, browse, p, q) of the default users compared with the fits.
DEFAULTS = (("SFBM(p=0.8)", "SFBM", 0.8, 0.0), ("SFBM(p=0.5)", "SFBM", 0.5, 0.0),
            ("RWBM(p=0.5,q=0.25)", "RWBM", 0.5, 0.25))


def _softmax_pq(a, b):
    """(p, q) from two unconstrained numbers: forward, backward, stop as a softmax (stop's logit 0)."""
    m = max(a, b, 0.0)
    ea, eb, e0 = np.exp(a - m), np.exp(b - m), np.exp(-m)
    s = ea + eb + e0
    return ea / s, eb / s


def _inv_softmax_pq(p, q):
    s = max(1.0 - p - q, 1e-9)
    return np.log(max(p, 1e-9) / s), np.log(max(q, 1e-9) / s)


def walk_arrays(data: WalkData, values: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, gamma) per group and rank (flat, ``data.n_ranks``) for the natural parameters ``values``.

    ``p_rel``/``q_rel`` apply at relevant ranks, ``p``/``q`` at the others
    (DFBM: :math:`p = 1, q = 0`); :math:`\\gamma` from :func:`~._walk.click_gammas`.
    """
    shape = data.rel.shape
    rel = data.rel
    p = np.full(shape, values.get("p", 1.0))
    q = np.full(shape, values.get("q", 0.0))
    if "p_rel" in values:
        p = np.where(rel, values["p_rel"], p)
    if "q_rel" in values:
        q = np.where(rel, values["q_rel"], q)
    return p, q, click_gammas(data, values)


def _make(name: str, browse: str, with_rel: bool, *, fixed_pq=None) -> Candidate:
    gnames = gamma_names(with_rel)
    if fixed_pq is not None or browse == "DFBM":
        blocks = []
    elif browse == "SFBM":
        blocks = [("p",)] + ([("p_rel",)] if with_rel else [])
    else:
        blocks = [("p", "q")] + ([("p_rel", "q_rel")] if with_rel else [])

    def unpack(theta):
        theta = np.asarray(theta, dtype=np.float64)
        out, k = {"browse": browse}, 0
        if fixed_pq is not None:
            out["p"], out["q"] = fixed_pq
        elif browse == "DFBM":
            out["p"], out["q"] = 1.0, 0.0
        for block in blocks:
            if len(block) == 1:
                out[block[0]] = float(expit(theta[k])); k += 1
            else:
                pp, qq = _softmax_pq(theta[k], theta[k + 1])
                out[block[0]], out[block[1]] = float(pp), float(qq); k += 2
        for gname in gnames:
            out[gname] = float(expit(theta[k])); k += 1
        return out

    x0 = []
    for block in blocks:
        x0 += [logit(0.7)] if len(block) == 1 else list(_inv_softmax_pq(0.6, 0.2))
    x0 += [logit(0.3)] * len(gnames)

    def loglik(data, theta):
        return walk_loglik(data, *walk_arrays(data, unpack(theta)))

    return Candidate(name, x0, loglik, unpack)


def candidates(with_rel: bool = False, T: int = 2) -> list[Candidate]:
    r"""The P@H browsing models of Ferrante & Ferro (ICTIR 2020) as candidates.

    DFBM, SFBM, RWBM fitted, and the paper-default users (:data:`DEFAULTS`,
    with only the click probability fitted).  The likelihood of a session is
    the walk likelihood (:mod:`._walk`) with forward :math:`p`, backward
    :math:`q`, stop :math:`1-p-q` and click probability :math:`\gamma` per visit.

    Parameters
    ----------
    with_rel : bool
        Whether the log has qrels: then ``p_rel``/``q_rel`` and
        ``gamma_rel``/``gamma_nonrel`` are fitted too.
    T : int
        The longest ranking of the log; with one document the user never
        moves, p and q change nothing, and SFBM and RWBM (which fit them) are
        left out.

    Returns
    -------
    list of Candidate
    """
    out = [_make(b, b, with_rel) for b in (("DFBM", "SFBM", "RWBM") if T > 1 else ("DFBM",))]
    out += [_make(name, browse, with_rel, fixed_pq=(p, q)) for name, browse, p, q in DEFAULTS]
    return out
