"""Grades to gains: the one rule every family that weighs documents by their grade uses."""
from __future__ import annotations

import numpy as np

__all__ = ["GAINS", "grade_gains"]

#: the gain of a document of grade g >= rel: 1, g, or 2^g - 1
GAINS = ("binary", "grade", "exp2")


def grade_gains(grades: np.ndarray, rel: int, gain: str) -> np.ndarray:
    """Gain per rank: 1 (``'binary'``), the grade (``'grade'``) or $2^{g} - 1$ (``'exp2'``)
    for grades ``>= rel``, 0 otherwise.

    Parameters
    ----------
    grades : numpy.ndarray
        The grade at each rank.
    rel : int
        The smallest grade with a gain.
    gain : {'binary', 'grade', 'exp2'}
        The gain of a relevant grade.

    Returns
    -------
    numpy.ndarray
        float64 gains.

    Raises
    ------
    ValueError
        If ``gain`` is not one of [`GAINS`][irmeasures_markov.measures.stopping_time.GAINS].
    """
    g = np.asarray(grades)
    relevant = g >= rel
    if gain == "binary":
        return relevant.astype(np.float64)
    if gain == "grade":
        return np.where(relevant, g, 0).astype(np.float64)
    if gain == "exp2":
        return np.where(relevant, np.exp2(np.where(relevant, g, 0).astype(np.float64)) - 1.0, 0.0)
    raise ValueError(f"`gain` must be one of {list(GAINS)}, got {gain!r}.")
