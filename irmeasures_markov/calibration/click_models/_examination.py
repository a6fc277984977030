r"""The examination-hypothesis models: PBM and UBM (Chuklin, Markov & de Rijke 2015, §3.1, §3.4).

A click happens when the user examines the rank and finds the document
attractive: $P(C_r=1) = \gamma\cdot\alpha_{qd}$, examination and
attractiveness independent.

* **PBM** (position-based model): $\gamma_r$, one examination
  probability per rank.
* **UBM** (user browsing model, Dupret & Piwowarski 2008):
  $\gamma_{r,r'}$, by rank and the rank $r'$ of the previous click
  (0 = none), stored as a ``D x (D+1)`` matrix (row ``r-1``, column ``r'``;
  cells with ``r' >= r`` cannot occur and hold 0).  Given the click vector
  every $r'$ is observed, so ranks are independent given it, as in PBM.

EM: a click means E = A = 1; a skip gives
$P(A=1\mid C=0)=\alpha(1-\gamma)/(1-\gamma\alpha)$ and
$P(E=1\mid C=0)=\gamma(1-\alpha)/(1-\gamma\alpha)$; the M-step averages
these over the shows of each pair (with the pseudo-counts of ``_core``) and of
each rank (cell).  Both models are identified only up to a common scale
($\gamma c$, $\alpha/c$): EM starts from 0.5 everywhere and keeps
the scale it reaches; click probabilities do not depend on it.  A second fit
on the same log (attractiveness by grade) is put on the first one's scale by
holding the examination at the first fit's values (``exam``).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.calibration.click_models._core import Encoded, Flat, State, estimate, run_em, safe_log

__all__ = ["fit_examination", "pbm_exam", "ubm_exam", "loglik", "probabilities"]


def _exam_index(kind: str, enc: Encoded, flat: Flat) -> tuple[np.ndarray, int]:
    d = enc.depth
    if kind == "PBM":
        return flat.rank, d
    prev = enc.previous_click()[flat.session, flat.rank]
    return flat.rank * (d + 1) + prev, d * (d + 1)


def fit_examination(kind: str, enc: Encoded, flat: Flat, n_items: int, *, iterations: int, tol: float,
                    prior: tuple[float, float], exam: np.ndarray | None = None) -> State:
    """PBM or UBM (``kind``) by EM; with ``exam``, the examination is held at it (only attractiveness is fitted)."""
    ex, n_cells = _exam_index(kind, enc, flat)
    cell_counts = np.bincount(ex, minlength=n_cells).astype(np.float64)
    c = flat.click > 0

    def step(st: State):
        a = st.attr[flat.item]
        g = st.exam.ravel()[ex]
        p = g * a
        ll = float(np.log(np.where(c, p, 1.0 - p)).sum())
        skip = 1.0 - p
        post_a = np.where(c, 1.0, a * (1.0 - g) / skip)
        post_e = np.where(c, 1.0, g * (1.0 - a) / skip)
        attr = estimate(np.bincount(flat.item, post_a, n_items), flat.counts, prior)
        with np.errstate(invalid="ignore", divide="ignore"):
            new_exam = np.where(cell_counts > 0, np.bincount(ex, post_e, n_cells) / cell_counts, 0.0)
        return ll, State(attr=attr, exam=st.exam if exam is not None else new_exam.reshape(st.exam.shape))

    shape = (enc.depth,) if kind == "PBM" else (enc.depth, enc.depth + 1)
    init = State(attr=np.full(n_items, 0.5), exam=np.full(shape, 0.5) if exam is None else exam)
    st = run_em(step, init, prior=prior, iterations=iterations, tol=tol, n_sessions=enc.n_sessions)
    if kind == "UBM":  # cells that never occur (r' >= r, or unseen) hold 0
        st.exam = np.where(cell_counts.reshape(shape) > 0, st.exam, 0.0)
    return st


def pbm_exam(exam: np.ndarray, d: int) -> np.ndarray:
    """Examination of ranks 1..d (ranks past the fitted depth take the deepest value)."""
    return exam[np.minimum(np.arange(d), exam.shape[0] - 1)]


def ubm_exam(exam: np.ndarray, d: int) -> np.ndarray:
    """The ``d x (d+1)`` UBM matrix; past the fitted depth ``D`` a rank takes row ``D`` and a previous
    click below rank ``D - 1`` column ``D - 1`` (within the fitted depth no rank needs those)."""
    rows = np.minimum(np.arange(d), exam.shape[0] - 1)
    cols = np.minimum(np.arange(d + 1), exam.shape[0] - 1)
    return exam[np.ix_(rows, cols)]


def loglik(kind: str, exam: np.ndarray, a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Log-probability of each session's click vector (``a``: attractiveness per cell)."""
    d = enc.depth
    if kind == "PBM":
        g = np.broadcast_to(pbm_exam(exam, d), a.shape)
    else:
        g = ubm_exam(exam, d)[np.arange(d)[None, :], enc.previous_click()]
    p = g * a
    c = enc.clicks > 0
    return np.where(enc.mask, safe_log(np.where(c, p, 1.0 - p)), 0.0).sum(axis=1)


def probabilities(kind: str, exam: np.ndarray, a: np.ndarray, enc: Encoded) -> np.ndarray:
    """Unconditional click probability of each cell."""
    d = enc.depth
    if kind == "PBM":
        return np.where(enc.mask, pbm_exam(exam, d)[None, :] * a, 0.0)
    g = ubm_exam(exam, d)
    n = a.shape[0]
    f = np.zeros((n, d + 1))  # distribution of the previous click's rank (0 = none)
    f[:, 0] = 1.0
    out = np.zeros((n, d))
    for r in range(d):
        pe = f @ g[r]                      # P(examine r)
        p = a[:, r] * pe
        out[:, r] = p
        f = f * (1.0 - a[:, r:r + 1] * g[r][None, :])
        f[:, r + 1] += p
    return np.where(enc.mask, out, 0.0)
