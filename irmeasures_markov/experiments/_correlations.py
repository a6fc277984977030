"""Agreement between system rankings: Kendall's τ-b, and the measures of the MP paper's tables.

* [`kendall_tau`][irmeasures_markov.experiments.kendall_tau] — τ-b between two score vectors (ties handled as in
  scipy's default);
* [`system_ranking`][irmeasures_markov.experiments.system_ranking] — runs from best to worst by one measure;
* [`tau_table`][irmeasures_markov.experiments.tau_table] — τ between the system rankings of pairs of measures
  (the MP paper's Tables 2 and 3);
* [`mp_paper_measures`][irmeasures_markov.experiments.mp_paper_measures] — the 21 measures of those tables.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import ir_measures
import numpy as np
from ir_measures import Measure
from numpy.typing import ArrayLike

from irmeasures_markov.experiments._evaluation_table import Evaluation
from irmeasures_markov.measures.markov_precision import PAPER_MODELS
from irmeasures_markov.plugin._mp import MP

__all__ = ["MP_PAPER_BASELINES", "column_taus", "kendall_tau", "mp_paper_measures", "system_ranking", "tau_table"]

#: The comparison measures of the MP paper (Table 2): AP, P@10, Rprec, bpref, RBP with p = 0.8.
MP_PAPER_BASELINES = ("AP", "P@10", "Rprec", "Bpref", "RBP(p=0.8,rel=1)")


def mp_paper_measures() -> dict[str, Measure]:
    """The 21 measures of the MP paper's Table 3, keyed by the paper's labels.

    Returns
    -------
    dict of str to ir_measures.Measure
        ``AP, P@10, Rprec, bpref, RBP`` and the 16 MP variants
        ``MP <model>`` / ``MP <model>@Rec(T)`` for the 8 models of
        `PAPER_MODELS`.
    """
    labels = ["AP", "P@10", "Rprec", "bpref", "RBP"]
    out = {lab: ir_measures.parse_measure(m) for lab, m in zip(labels, MP_PAPER_BASELINES)}
    for model in PAPER_MODELS:
        out[f"MP {model}"] = MP(model=model)
        out[f"MP {model}@Rec(T)"] = MP(model=model, recall=True)
    return out


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    r"""Kendall's rank correlation τ-b between two score vectors.

    $$
    \tau_b = \frac{C - D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}
    $$

    with C/D the concordant/discordant pairs, $n_0 = n(n-1)/2$ and
    $n_1, n_2$ the pairs tied in ``x`` and in ``y``.  Without ties this is
    the τ of the papers.

    Parameters
    ----------
    x : array_like
        Scores of the same systems, 1-D, finite, at least 2 each.
    y : array_like
        Scores of the same systems, 1-D, finite, at least 2 each.

    Returns
    -------
    float
        τ-b; NaN when one vector is constant.

    Raises
    ------
    ValueError
        Shapes that differ or are not 1-D, fewer than 2 systems, or a value that is not finite.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"`x` and `y` must be 1-D of the same length, got shapes {x.shape} and {y.shape}.")
    if x.size < 2:
        raise ValueError("Kendall's tau needs at least 2 systems.")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("`x` and `y` must be finite.")
    iu = np.triu_indices(x.size, 1)
    sx = np.sign(x[:, None] - x[None, :])[iu]
    sy = np.sign(y[:, None] - y[None, :])[iu]
    s = float(np.sum(sx * sy))
    n0 = sx.size
    tx = n0 - np.count_nonzero(sx)
    ty = n0 - np.count_nonzero(sy)
    denom = math.sqrt((n0 - tx) * (n0 - ty))
    return s / denom if denom > 0 else float("nan")


def column_taus(x: np.ndarray, y: np.ndarray) -> list[float]:
    """τ-b of each measure's per-run means in two ``[run, measure]`` tables: the row of every stability
    experiment (topic samples, pool depths, pool reductions)."""
    return [kendall_tau(x[:, j], y[:, j]) for j in range(x.shape[1])]


def system_ranking(evaluation: Evaluation, measure: Measure | str) -> list[str]:
    """Run names from best to worst by the mean of ``measure`` (ties by name).

    Parameters
    ----------
    evaluation : Evaluation
        Per-topic values of the runs.
    measure : ir_measures.Measure or str
        One of its measures (the object, its printed form or its label).

    Returns
    -------
    list of str
        The run names, best first.
    """
    col = evaluation.column_array(measure)
    order = sorted(range(len(col)), key=lambda i: (-col[i], evaluation.runs[i]))
    return [evaluation.runs[i] for i in order]


def tau_table(evaluation: Evaluation, rows: Sequence[Measure | str] | None = None,
              cols: Sequence[Measure | str] | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """Kendall τ-b between the system rankings of measures ``rows`` x ``cols``.

    Parameters
    ----------
    evaluation : Evaluation
        Per-topic values of the runs; rankings are by the mean over topics.
    rows : sequence of measures or labels, optional
        Default: every measure of ``evaluation``.
    cols : sequence of measures or labels, optional
        Default: every measure of ``evaluation``.

    Returns
    -------
    (numpy.ndarray, list of str, list of str)
        ``(tau, row_labels, col_labels)`` with ``tau[a, b]`` the
        [`kendall_tau`][irmeasures_markov.experiments.kendall_tau] of the
        per-run means of ``rows[a]`` and ``cols[b]``.
    """
    means = evaluation.means_array()
    ri = [evaluation.measure_index(r) for r in (evaluation.labels if rows is None else rows)]
    ci = [evaluation.measure_index(c) for c in (evaluation.labels if cols is None else cols)]
    out = np.array([[kendall_tau(means[:, a], means[:, b]) for b in ci] for a in ri])
    return out, [evaluation.labels[a] for a in ri], [evaluation.labels[b] for b in ci]

