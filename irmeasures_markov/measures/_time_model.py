"""TBG's time model on whole runs: T(k) per query, the cumulative gain curve G(t), and its plot.

Smucker & Clarke (SIGIR 2012) model a user who reads the summary at rank i
(T_S seconds), clicks it with probability P(C=1|r_i) and then spends
T_D(l_i) = a·l_i + b seconds on the document.  The expected time to reach
rank k is

$$
T(k) = \\sum_{i<k} \\big[T_S + T_D(l_i)\\, P(C{=}1 \\mid r_i)\\big],
$$

and the cumulative gain G(t) (their Figure 4) is the expected gain collected
by time t *without* decay: G jumps by g_k = P(C=1|R=1)·P(S=1|R=1) when the
user has finished rank k, at T(k+1).  TBG itself is Σ_k g_k e^{−T(k) ln2/h}.

The per-ranking formulas are in `irmeasures_markov.measures._tbg`
([`time_to_rank`][irmeasures_markov.measures.time_to_rank],
[`gain_curve`][irmeasures_markov.measures.gain_curve]); this module applies them
to a run in trec_eval ranking order with document lengths from any source of
[`DocumentLengths`][irmeasures_markov.documents.DocumentLengths], and draws G(t).

Examples
--------
>>> from irmeasures_markov.measures._time_model import time_models, mean_gain_curve
>>> qrels = {"q1": {"a": 1, "b": 0}}
>>> run = {"q1": {"a": 2.0, "b": 1.0}}
>>> tm = time_models(qrels, run, {"a": 100, "b": 300})["q1"]
>>> [round(float(t), 3) for t in tm.reach]          # T(1) = 0, T(2) = 4.4 + (1.8 + 7.8)·0.64
[0.0, 10.544]
>>> [round(float(g), 4) for g in mean_gain_curve(qrels, run, {"a": 100, "b": 300}, [0, 10.544, 60])]
[0.0, 0.4928, 0.4928]
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._plotting import pyplot
from irmeasures_markov.documents._lengths import DocumentLengths
from irmeasures_markov.io._normalise import qrels_dict, run_dict
from irmeasures_markov.measures._tbg import (
    TBGParameters,  # noqa: F401  (annotations only)
    as_parameters,
    gain_at,
    reach_times,
)
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import QrelsIndex, judged

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["QueryTimeModel", "time_models", "gain_curves", "mean_gain_curve", "plot_gain_curves"]

LengthSource = DocumentLengths | Mapping[str, float] | str | os.PathLike | None


@dataclass(frozen=True)
class QueryTimeModel:
    """TBG's time model for one ranked query (arrays indexed by rank − 1).

    Attributes
    ----------
    qid : str
    docids : list of str
        Documents in trec_eval ranking order.
    grades : ndarray
        Their grades (``UNJUDGED`` where there is none).
    lengths : ndarray
        Lengths in words used (0 for a later member of a duplicate group).
    holding : ndarray
        Expected seconds spent at each rank, T_S + T_D(l_i)·P(C=1|r_i).
    reach : ndarray
        T(k), expected time (s) at which rank k is reached; ``reach[0] = 0``.
    gain : ndarray
        g_k, expected gain of the document at rank k.
    """
    qid: str
    docids: list[str]
    grades: np.ndarray
    lengths: np.ndarray
    holding: np.ndarray
    reach: np.ndarray
    gain: np.ndarray

    @property
    def done(self) -> np.ndarray:
        """Time at which the user has finished rank k: T(k) + holding time = T(k+1)."""
        return self.reach + self.holding

    def gain_at(self, times: ArrayLike) -> np.ndarray:
        """G(t) at each of ``times`` (seconds): total g_k over ranks finished by t.

        Parameters
        ----------
        times : array_like of float
            Times in seconds since the query was issued.

        Returns
        -------
        numpy.ndarray
            The gain collected by each time.
        """
        return gain_at(self.done, self.gain, np.asarray(times, dtype=np.float64))


def _lengths_iv(lengths: LengthSource, default_length: float | None) -> DocumentLengths:
    if isinstance(lengths, DocumentLengths):
        if default_length is not None:
            raise ValueError("`default_length` goes into the DocumentLengths object, not next to it")
        return lengths
    return DocumentLengths(lengths, default_length=default_length)


def time_models(qrels: object, run: object, lengths: LengthSource = None, *,
                params: TBGParameters | Mapping[str, float] | None = None, rel: int = 1,
                judged_only: bool = False, cutoff: int | None = None,
                default_length: float | None = None) -> dict[str, QueryTimeModel]:
    """The time model of every query present in both ``qrels`` and ``run``.

    Parameters
    ----------
    qrels, run
        Anything ``ir_measures`` accepts (dicts, namedtuples, DataFrames, TREC files).
    lengths : DocumentLengths, mapping, path or None
        Document lengths in words (a ``docid<TAB>length`` file, ``'irds:<id>'``,
        or ``{docid: words}``); duplicate groups go through a
        [`DocumentLengths`][irmeasures_markov.documents.DocumentLengths].
    params : TBGParameters or dict, optional
        Calibration constants (defaults: the paper's Table 1).
    rel, judged_only, cutoff
        As for the ``TBG`` measure.
    default_length : float, optional
        Words assumed for documents without a length; without it a missing
        length raises [`UnknownLengthError`][irmeasures_markov.documents.UnknownLengthError].

    Returns
    -------
    dict
        ``{qid: QueryTimeModel}`` in run order.
    """
    cutoff = check_cutoff(cutoff, "`cutoff`")
    p = as_parameters(params)
    dl = _lengths_iv(lengths, default_length)
    prepared = PreparedRun(QrelsIndex(qrels_dict(qrels)), run_dict(run))
    out = {}
    for q in prepared.queries:
        docids, grades = q.docids, q.grades
        if judged_only:
            keep = judged(grades)
            docids = [d for d, k in zip(docids, keep.tolist()) if k]
            grades = grades[keep]
        docids, grades = docids[:cutoff], grades[:cutoff]
        lens = dl.for_ranking(docids)
        holding, gain = p.holding_and_gain(grades, lens, rel)
        out[q.qid] = QueryTimeModel(q.qid, list(docids), grades, lens, holding, reach_times(holding), gain)
    return out


def gain_curves(qrels: object, run: object, lengths: LengthSource = None, times: Sequence[float] = (), **kwargs: object
                ) -> dict[str, np.ndarray]:
    r"""G(t) at ``times`` (seconds) for every query in both qrels and run.

    $G(t) = \sum_{k:\,T(k) \le t} g_k$, the gain collected by time $t$
    without decay (Smucker & Clarke, "Time-Based Calibration of Effectiveness
    Measures", SIGIR 2012, Figure 4).

    Parameters
    ----------
    qrels, run
        Qrels and run in any form [`time_models`][irmeasures_markov.measures.time_models] takes.
    lengths
        Document lengths (a file, ``'irds:<id>'``, a mapping or a registered name).
    times : sequence of float
        The times (seconds) at which G is read.
    **kwargs
        The keyword arguments of [`time_models`][irmeasures_markov.measures.time_models].

    Returns
    -------
    dict of str to numpy.ndarray
        ``{qid: G(times)}``.
    """
    times = np.asarray(times, dtype=np.float64)
    return {q: tm.gain_at(times) for q, tm in time_models(qrels, run, lengths, **kwargs).items()}


def mean_gain_curve(qrels: object, run: object, lengths: LengthSource = None, times: Sequence[float] = (),
                    **kwargs: object
                    ) -> np.ndarray:
    r"""G(t) averaged over the qrels queries (a query the run does not answer contributes 0).

    This is the curve of Smucker & Clarke (SIGIR 2012), Figure 4, for one run
    (there drawn for the TREC 2005 Robust track, here for any run).

    Parameters
    ----------
    qrels, run, lengths, times, **kwargs
        As in [`gain_curves`][irmeasures_markov.measures.gain_curves].

    Returns
    -------
    numpy.ndarray
        $\frac{1}{|Q|}\sum_{q \in Q} G_q(t)$ at ``times``, $Q$ the qrels queries.

    Raises
    ------
    ValueError
        If ``qrels`` holds no query.
    """
    qrels = qrels_dict(qrels)
    times = np.asarray(times, dtype=np.float64)
    curves = gain_curves(qrels, run, lengths, times, **kwargs)
    if not qrels:
        raise ValueError("`qrels` holds no query")
    return sum(curves.values(), np.zeros(times.shape)) / len(qrels)


def plot_gain_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], ax: object | None = None, *,
                     minutes: bool = True, title: str | None = None) -> object:
    """Draw G(t) curves on ``ax`` (a new figure when None); matplotlib is imported only here.

    Parameters
    ----------
    curves : mapping of str to (times, G)
        ``{label: (times in seconds, G at those times)}``.
    ax : matplotlib Axes, optional
        Where to draw.
    minutes : bool
        Label the time axis in minutes rather than seconds.
    title : str, optional
        The plot's title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = pyplot("plot_gain_curves")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    scale = 60.0 if minutes else 1.0
    for label, (t, g) in curves.items():
        ax.step(np.asarray(t, dtype=np.float64) / scale, g, where="post", label=label)
    ax.set_xlabel("time t (minutes)" if minutes else "time t (seconds)")
    ax.set_ylabel("G(t), expected cumulative gain")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
