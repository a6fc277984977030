r"""Carterette's M1–M4 under a graded dynamic stopping distribution (e.g. a DBN fitted to a click log).

A :class:`~.carterette_distributions.GradedStopping` distribution stops the
user at an examined document of grade g with probability :math:`h(g)`, so on
a ranking with grades :math:`g_1..g_N`

.. math::

    F(k) = \prod_{j<k} (1 - h(g_j)), \qquad P(k) = h(g_k)\, F(k).

:math:`F(k)` is the probability of reaching rank k (whatever lies below the
ranking), as for the static distributions; :math:`P(k)` is not zero at
non-relevant ranks (the user may abandon there).  With binary relevance
:math:`a_k` (grade >= ``rel``), :math:`R_k = \sum_{i\le k} a_i`, sums over the
ranks of the ranking:

=====  ==========================================
M1     :math:`\sum_k a_k P(k)`
M2     :math:`\sum_k a_k F(k)` (relevant documents examined)
M3     :math:`\sum_k f(k) P(k)`, f = 1/k or k
M4     :math:`\sum_k P(k) R_k / k`
=====  ==========================================

Unjudged documents and grades <= 0 read as grade 0.  There is no ``norm``: the
ranking that maximises these values is not the grade-sorted one (a document
that satisfies stops the user before the relevant documents below it).
docs/user-model-framework.md, "Click models as user models".
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._segments import segment_cumsum, segment_sum
from irmeasures_markov.measures._carterette_distributions import CUSTOM_DISTRIBUTIONS, check_arguments

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from irmeasures_markov.ranking._prepared import RelevanceBatch

__all__ = ["graded_distribution", "graded_user_model_values", "graded_user_model_batch"]


def graded_distribution(grades: ArrayLike, offsets: ArrayLike, dist: str) -> tuple[np.ndarray, np.ndarray]:
    """``(P, F)`` at every rank of rankings laid out by ``offsets`` (module docstring).

    Parameters
    ----------
    grades : array_like of int
        The grade at each rank, rankings one after another (grades <= 0 and unjudged: 0).
    offsets : array_like of int
        The rankings' bounds (``n + 1`` entries).
    dist : str
        A graded distribution's registered name.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        P(k) and F(k), flat like ``grades``.
    """
    check_arguments("M1", dist, None, "1/k", graded=True)
    offsets = np.asarray(offsets, dtype=np.int64)
    grades = np.maximum(np.asarray(grades, dtype=np.int64), 0)
    h = CUSTOM_DISTRIBUTIONS[dist].hazard(grades)
    with np.errstate(divide="ignore"):
        log_go_on = np.log1p(-h)                       # -inf where h = 1: nobody goes past that rank
    through = segment_cumsum(log_go_on, offsets)       # log P(past rank k)
    before = np.zeros_like(through)
    if before.size:
        before[1:] = through[:-1]
        starts = offsets[:-1][np.diff(offsets) > 0]
        before[starts] = 0.0                           # nobody is stopped before rank 1
    reach = np.exp(before)
    return h * reach, reach


def graded_user_model_values(grades: ArrayLike, relevant: ArrayLike, offsets: ArrayLike, recall_base: ArrayLike,
                             model: str, dist: str, *, f: str = "1/k") -> np.ndarray:
    """M1–M4 under a graded distribution for every ranking (module docstring).

    Parameters
    ----------
    grades : array_like of int
        Grade at each rank (flat).
    relevant : array_like of bool
        Grade >= ``rel`` at each rank (flat).
    offsets : array_like of int
        The rankings' bounds (already cut at the cutoff).
    recall_base : array_like of int
        RB of each ranking's query (RB = 0 gives 0).
    model : {'M1', 'M2', 'M3', 'M4'}
    dist : str
        A graded distribution's registered name.
    f : {'1/k', 'k'}
        M3's effort.

    Returns
    -------
    numpy.ndarray
        One value per ranking.
    """
    check_arguments(model, dist, None, f, graded=True)
    offsets = np.asarray(offsets, dtype=np.int64)
    p, reach = graded_distribution(grades, offsets, dist)
    a = np.asarray(relevant, dtype=bool)
    lengths = np.diff(offsets)
    ranks = (np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths) + 1).astype(np.float64)
    if model == "M1":
        terms = np.where(a, p, 0.0)
    elif model == "M2":
        terms = np.where(a, reach, 0.0)
    elif model == "M3":
        terms = p / ranks if f == "1/k" else p * ranks
    else:
        terms = p * segment_cumsum(a.astype(np.int64), offsets) / ranks
    values = segment_sum(terms, offsets)
    return np.where(np.asarray(recall_base) > 0, values, 0.0)


def graded_user_model_batch(batch: RelevanceBatch, model: str, dist: str, *, f: str = "1/k",
                            norm: bool | None = None, cutoff: int | None = None) -> np.ndarray:
    """:func:`graded_user_model_values` for every query of a batch (its ``grades``, ``relevant``, cut rankings).

    Parameters
    ----------
    batch : RelevanceBatch
    model, dist, f
        As in :func:`graded_user_model_values`.
    norm : bool, optional
        Must be None or False (module docstring).
    cutoff : int, optional
        Checked only: the batch is already cut.

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.

    Raises
    ------
    ValueError
        For ``norm=True``.
    """
    check_cutoff(cutoff, "`cutoff`")
    if norm:
        raise ValueError(f"norm is not available with the graded stopping distribution {dist!r}: the ranking "
                         "that maximises it is not the grade-sorted one (give norm=False)")
    return graded_user_model_values(batch.grades, batch.relevant, batch.offsets, batch.recall_base, model, dist, f=f)
