r"""Time-Biased Gain (Smucker & Clarke, SIGIR 2012; docs/time-biased-gain.md).

$$
TBG = \frac{1}{N} \sum_k g_k \, e^{-T(k) \ln 2 / h}, \qquad
T(k) = \sum_{i<k} \big[T_S + T_D(l_i)\, P(C{=}1 \mid r_i)\big], \qquad T_D(l) = a\,l + b
$$

with g_k = P(C=1|R=1)·P(S=1|R=1) for a relevant document and 0 otherwise,
l_i the length in words of the document at rank i (0 for a duplicate of an
earlier-ranked document) and h the users' half-life.  Calibration of the
paper (Table 1), all parameters here:

==============  ==========================================  =========
parameter       meaning                                     default
==============  ==========================================  =========
``halflife``    h, half-life of users (s)                   224
``t_summary``   T_S, time to read a summary (s)             4.4
``a``           seconds per word of a document              0.018
``b``           fixed time per document (s)                 7.8
``pc_rel``      P(C=1|R=1), click on a relevant summary     0.64
``pc_nonrel``   P(C=1|R=0), click on a non-relevant one     0.39
``ps_rel``      P(S=1|R=1), save a clicked relevant doc     0.77
``ps_nonrel``   P(S=1|R=0) (unused: gain 0)                 0.27
==============  ==========================================  =========

Normalisation ``norm``: ``'none'`` (N = 1, the paper's choice: TBG is then a
lower bound on the expected number of documents saved), ``'constant'`` (the
paper's RBP-like normaliser over an unlimited list of zero-length relevant
documents, N = g / (1 − e^{−T_x ln2/h}) with T_x = T_S + T_D(0)·P(C=1|R=1),
≈ 17.2 with the defaults), or ``'ideal'`` (the query's judged relevant
documents in the order that maximises TBG: by g/(1 − e^{−t ln2/h})
descending, t the time a document costs — shortest first for binary gain;
under a cutoff k the best k of them, exactly, by a small dynamic programme
for graded gains; duplicate groups are ignored there).

Graded gain (an extension the paper leaves open): per-grade click and save
probabilities ``pc_by_grade``/``ps_by_grade`` override the binary ones for
the listed grades.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._segments import query_blocks, segment_cumsum, segment_sum

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from irmeasures_markov.ranking._prepared import RelevanceBatch

__all__ = [
    "TBG_DEFAULTS",
    "TBGParameters",
    "as_parameters",
    "NORMS",
    "time_to_rank",
    "reach_times",
    "gain_at",
    "holding_times",
    "time_biased_gain",
    "constant_normaliser",
    "ideal_normaliser",
    "gain_curve",
    "tbg_batch",
]

NORMS = ("none", "constant", "ideal")


def _parse_by_grade(spec, name) -> dict[int, float]:
    if spec is None or spec == "":
        return {}
    if isinstance(spec, Mapping):
        items = spec.items()
    else:
        parts = str(spec).split(",")
        if any(":" not in part for part in parts):
            raise ValueError(f"{name} must look like '1:0.64,2:0.8' (grade:probability), got {spec!r}")
        items = [part.split(":", 1) for part in parts]
    out = {}
    for g, p in items:
        try:
            g, p = int(g), float(p)
        except ValueError:
            raise ValueError(f"{name}: cannot read grade:probability pair {g!r}:{p!r}") from None
        if not 0 <= p <= 1:
            raise ValueError(f"{name}: probability for grade {g} must be in [0, 1], got {p}")
        out[g] = p
    return out


@dataclass(frozen=True)
class TBGParameters:
    """The calibration constants of TBG, validated (defaults: the paper's Table 1)."""
    halflife: float = 224.0
    t_summary: float = 4.4
    a: float = 0.018
    b: float = 7.8
    pc_rel: float = 0.64
    pc_nonrel: float = 0.39
    ps_rel: float = 0.77
    ps_nonrel: float = 0.27
    pc_by_grade: str | None = None
    ps_by_grade: str | None = None

    def __post_init__(self):
        for name in TBG_DEFAULTS:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"TBG: {name} must be a finite number, got {v!r}")
        if self.halflife <= 0:
            raise ValueError(f"TBG: halflife must be > 0 seconds, got {self.halflife!r}")
        for name in ("t_summary", "a", "b"):
            if getattr(self, name) < 0:
                raise ValueError(f"TBG: {name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("pc_rel", "pc_nonrel", "ps_rel", "ps_nonrel"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"TBG: {name} is a probability and must be in [0, 1], got {getattr(self, name)!r}")
        object.__setattr__(self, "_pc", _parse_by_grade(self.pc_by_grade, "pc_by_grade"))
        object.__setattr__(self, "_ps", _parse_by_grade(self.ps_by_grade, "ps_by_grade"))

    @property
    def decay_rate(self) -> float:
        return math.log(2.0) / self.halflife

    def click_and_gain(self, grades: np.ndarray, rel: int = 1) -> tuple[np.ndarray, np.ndarray]:
        r"""(P(C=1|r_i), g_i) per document from its grade (UNJUDGED: not relevant).

        A relevant document (grade ``>= rel``) is clicked with probability ``pc_rel`` and has gain
        $g_i = P(C{=}1 \mid R{=}1)\,P(S{=}1 \mid R{=}1)$; any other is clicked with probability
        ``pc_nonrel`` and has gain 0; grades listed in ``pc_by_grade``/``ps_by_grade`` use those
        probabilities instead (Smucker & Clarke, SIGIR 2012).

        Parameters
        ----------
        grades : numpy.ndarray
            Relevance grade of each document.
        rel : int
            Grades ``>= rel`` are relevant.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            ``(P(C=1|r_i), g_i)``, each of the shape of ``grades``.
        """
        grades = np.asarray(grades)
        relevant = grades >= rel
        pc = np.where(relevant, self.pc_rel, self.pc_nonrel)
        gain = np.where(relevant, self.pc_rel * self.ps_rel, 0.0)
        for g in set(self._pc) | set(self._ps):
            at = grades == g
            if not at.any():
                continue
            pcg = self._pc.get(g, self.pc_rel if g >= rel else self.pc_nonrel)
            psg = self._ps.get(g, self.ps_rel if g >= rel else 0.0)
            pc = np.where(at, pcg, pc)
            gain = np.where(at, pcg * psg, gain)
        return pc, gain

    def holding_and_gain(self, grades: np.ndarray, lengths: np.ndarray, rel: int = 1) -> tuple[np.ndarray, np.ndarray]:
        r"""(h_i, g_i) per document: the expected time spent at it, $T_S + (a\,l_i + b)\,P(C{=}1 \mid r_i)$
        (its summary, then its reading time when clicked; Smucker & Clarke, SIGIR 2012), and its gain.

        Parameters
        ----------
        grades : numpy.ndarray
            Relevance grade of each document.
        lengths : numpy.ndarray
            Length (words) of each document, validated.
        rel : int
            Grades ``>= rel`` are relevant.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            ``(h_i, g_i)``, each of the shape of ``grades``.
        """
        pc, gain = self.click_and_gain(grades, rel)
        return self.t_summary + (self.a * lengths + self.b) * pc, gain


#: the paper's calibration (Table 1), read from the fields of TBGParameters: the defaults are declared once
TBG_DEFAULTS = {f.name: f.default for f in fields(TBGParameters) if f.default is not None}


def as_parameters(params: TBGParameters | Mapping[str, float] | None) -> TBGParameters:
    """TBG's constants as a [`TBGParameters`][irmeasures_markov.measures.TBGParameters]: the defaults for ``None``, a
    mapping as keywords.

    Parameters
    ----------
    params : TBGParameters or mapping of str to float or None
        The constants: an instance (returned as it is), keywords of
        [`TBGParameters`][irmeasures_markov.measures.TBGParameters], or None.

    Returns
    -------
    TBGParameters
        The validated constants.

    Raises
    ------
    TypeError
        If a mapping names a field [`TBGParameters`][irmeasures_markov.measures.TBGParameters] does not have.
    ValueError
        If a constant is out of its range (e.g. a probability outside [0, 1]).
    """
    if params is None:
        return TBGParameters()
    if isinstance(params, TBGParameters):
        return params
    return TBGParameters(**params)


def _as_lengths(lengths, n):
    lengths = np.asarray(lengths, dtype=np.float64).ravel()
    if lengths.size != n:
        raise ValueError(f"lengths has {lengths.size} values for a ranking of {n} documents")
    if not np.all(np.isfinite(lengths)) or np.any(lengths < 0):
        raise ValueError("lengths must be non-negative finite numbers of words")
    return lengths


def holding_times(grades: ArrayLike, lengths: ArrayLike, params: TBGParameters | Mapping[str, float] | None = None,
                  rel: int = 1) -> np.ndarray:
    r"""Expected time spent at each rank (seconds), Smucker & Clarke (SIGIR 2012):

    $$
    h_i = T_S + (a\,l_i + b)\,P(C = 1 \mid r_i)
    $$

    (summary time, then the document's reading time $a l_i + b$ when it is
    clicked).  This is also the mean holding time MPcont uses with ``time='tbg'``.

    Parameters
    ----------
    grades : array_like of int
        Relevance grade at each rank.
    lengths : array_like of float
        Document length (words) at each rank.
    params : TBGParameters or mapping, optional
        TBG's constants ([`TBG_DEFAULTS`][irmeasures_markov.measures.TBG_DEFAULTS] when None).
    rel : int
        Grades ``>= rel`` are relevant.

    Returns
    -------
    numpy.ndarray
        $h_i$ per rank.
    """
    p = as_parameters(params)
    grades = np.asarray(grades)
    return p.holding_and_gain(grades, _as_lengths(lengths, grades.size), rel)[0]


def time_to_rank(grades: ArrayLike, lengths: ArrayLike, params: TBGParameters | Mapping[str, float] | None = None,
                 rel: int = 1) -> np.ndarray:
    r"""$T(k) = \sum_{i<k} h_i$, the expected time (s) at which the user reaches rank k (T(1) = 0).

    The holding times $h_i$ are those of [`holding_times`][irmeasures_markov.measures.holding_times] (Smucker & Clarke,
    SIGIR 2012).

    Parameters
    ----------
    grades : array_like of int
        Relevance grade at each rank.
    lengths : array_like of float
        Document length (words) at each rank.
    params : TBGParameters or mapping of str to float, optional
        TBG's constants ([`TBG_DEFAULTS`][irmeasures_markov.measures.TBG_DEFAULTS] when None).
    rel : int
        Grades ``>= rel`` are relevant.

    Returns
    -------
    numpy.ndarray
        $T(k)$ for k = 1..N.
    """
    return reach_times(holding_times(grades, lengths, params, rel))


def reach_times(holding: np.ndarray) -> np.ndarray:
    """T(k) from the holding times: the one running sum every per-ranking function and the time model read."""
    return np.concatenate(([0.0], np.cumsum(holding)[:-1])) if holding.size else holding


def gain_at(done: np.ndarray, gain: np.ndarray, times: np.ndarray) -> np.ndarray:
    """G(t) at ``times``: the gains of the ranks finished (``done``) by then, for `gain_curve` and the time model."""
    return np.concatenate(([0.0], np.cumsum(gain)))[np.searchsorted(done, times, side="right")]


def constant_normaliser(params: TBGParameters | Mapping[str, float] | None = None) -> float:
    r"""The paper's normaliser over unlimited zero-length relevant documents (≈ 17.2 with defaults).

    $$
    N = \frac{g}{1 - e^{-T_x \ln 2 / h}}, \qquad T_x = T_S + T_D(0)\,P(C{=}1 \mid R{=}1)
    $$

    with $g = P(C{=}1 \mid R{=}1)\,P(S{=}1 \mid R{=}1)$ (Smucker & Clarke, SIGIR 2012).

    Parameters
    ----------
    params : TBGParameters or mapping of str to float, optional
        TBG's constants ([`TBG_DEFAULTS`][irmeasures_markov.measures.TBG_DEFAULTS] when None).

    Returns
    -------
    float
        The ``norm='constant'`` normaliser N (``inf`` when $T_x = 0$).
    """
    p = as_parameters(params)
    g = p.pc_rel * p.ps_rel
    tx = p.t_summary + p.b * p.pc_rel
    if tx == 0:
        return math.inf
    return g / -math.expm1(-tx * p.decay_rate)


def ideal_normaliser(relevant_grades: ArrayLike, relevant_lengths: ArrayLike,
                     params: TBGParameters | Mapping[str, float] | None = None, rel: int = 1,
                     cutoff: int | None = None) -> float:
    """TBG of the best ordering of the query's judged relevant documents (cut at ``cutoff``).

    Parameters
    ----------
    relevant_grades : array_like
        Grades and lengths (words) of the query's judged relevant documents.
    relevant_lengths : array_like
        Grades and lengths (words) of the query's judged relevant documents.
    params, rel
        As in [`holding_times`][irmeasures_markov.measures.holding_times].
    cutoff : int, optional
        Cut the ideal ranking at this rank.

    Returns
    -------
    float
        The ``norm='ideal'`` normaliser.
    """
    p = as_parameters(params)
    grades = np.asarray(relevant_grades)
    if grades.size == 0:
        return 0.0
    h, gain = p.holding_and_gain(grades, _as_lengths(relevant_lengths, grades.size), rel)
    c = p.decay_rate
    # exchange argument: i before j iff g_i / (1 - e^{-c t_i}) >= g_j / (1 - e^{-c t_j})
    with np.errstate(divide="ignore"):
        index = np.where(h > 0, gain / -np.expm1(-c * h), np.inf)
    order = np.lexsort((h, -index))
    h, gain = h[order], gain[order]
    if cutoff is None or cutoff >= h.size or np.all(gain == gain[0]):
        # all documents fit (or equal gains: the `cutoff` shortest, shortest first, are best)
        return float(np.dot(gain[:cutoff], np.exp(-c * reach_times(h[:cutoff]))))
    # Graded gains under a cutoff: the best k-subset, read in index order (the exchange argument holds
    # within any subset).  Backwards over the index order, best[j] is the best value of j documents
    # chosen among those seen so far; putting document i in front of them gives g_i + e^{-c h_i} best[j].
    best = np.full(cutoff + 1, -np.inf)
    best[0] = 0.0
    for g_i, d_i in zip(gain[::-1].tolist(), np.exp(-c * h[::-1]).tolist()):
        np.maximum(best[1:], g_i + d_i * best[:-1], out=best[1:])
    return float(best.max())


def time_biased_gain(relevance: ArrayLike, lengths: ArrayLike, *,
                     params: TBGParameters | Mapping[str, float] | None = None, norm: str = "none", rel: int = 1,
                     cutoff: int | None = None, relevant_lengths: ArrayLike | None = None,
                     relevant_grades: ArrayLike | None = None, **constants: float) -> float:
    """TBG of one ranking.

    Parameters
    ----------
    relevance : array_like of int
        Grades of the ranked documents, top first (binary 0/1 works; use
        `UNJUDGED` or 0 for unjudged).
    lengths : array_like of float
        Length in words of each ranked document (0 for a duplicate of an earlier one).
    params : TBGParameters or dict, optional
        Calibration constants; or pass them as keywords (``halflife=...``).
    norm : {'none', 'constant', 'ideal'}
        Normaliser N (module docstring).
    rel : int
        Minimum grade counted as relevant.
    cutoff : int, optional
        Evaluate the first ``cutoff`` documents.
    relevant_lengths : array_like, optional
        Lengths (and grades; default: all ``rel``) of the query's judged
        documents that carry a gain, for ``norm='ideal'``: those with a grade
        >= ``rel``, and any other grade that ``pc_by_grade``/``ps_by_grade``
        give a gain.
    relevant_grades : array_like, optional
        Lengths (and grades; default: all ``rel``) of the query's judged
        documents that carry a gain, for ``norm='ideal'``: those with a grade
        >= ``rel``, and any other grade that ``pc_by_grade``/``ps_by_grade``
        give a gain.
    **constants : float
        The calibration constants as keywords (``halflife=...``), instead of ``params``.

    Returns
    -------
    float
        TBG of the ranking, divided by the normaliser ``norm`` names.

    Raises
    ------
    TypeError
        Constants given both as ``params`` and as keywords, or a constant
        [`TBGParameters`][irmeasures_markov.measures.TBGParameters] does not have.
    ValueError
        An unknown ``norm``, bad ``lengths`` or constants, or ``norm='ideal'`` without ``relevant_lengths``.

    Examples
    --------
    >>> round(time_biased_gain([1, 0, 1], [100, 300, 50]), 4)   # 0.4928 * (1 + 2^(-20.092/224))
    0.9559
    """
    if params is not None and constants:
        raise TypeError(f"time_biased_gain: give the constants either as params= or as keywords, not both "
                        f"(got params and {sorted(constants)})")
    p = as_parameters(params if params is not None else (constants or None))
    if norm not in NORMS:
        raise ValueError(f"TBG: norm must be one of {list(NORMS)}, got {norm!r}")
    grades = np.asarray(relevance).ravel()
    lengths = _as_lengths(lengths, grades.size)
    grades, lengths = grades[:cutoff], lengths[:cutoff]   # all of them for cutoff=None
    h, gain = p.holding_and_gain(grades, lengths, rel)
    value = float(np.dot(gain, np.exp(-p.decay_rate * reach_times(h))))
    if norm == "none":
        return value
    if norm == "constant":
        return value / constant_normaliser(p)
    if relevant_lengths is None:
        raise ValueError("TBG: norm='ideal' needs relevant_lengths (the lengths of the query's relevant documents)")
    rg = np.full(len(relevant_lengths), rel) if relevant_grades is None else relevant_grades
    best = ideal_normaliser(rg, relevant_lengths, p, rel, cutoff)
    return value / best if best > 0 else 0.0


def gain_curve(grades: ArrayLike, lengths: ArrayLike, params: TBGParameters | Mapping[str, float] | None = None,
               rel: int = 1, times: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Cumulative gain G(t) (Smucker & Clarke, SIGIR 2012, Figure 4): expected gain collected by time t,
    without decay, $G(t) = \sum_{k:\,T(k+1) \le t} g_k$.

    Parameters
    ----------
    grades, lengths, params, rel
        As in [`holding_times`][irmeasures_markov.measures.holding_times].
    times : array_like of float, optional
        Times (s) at which to read G; without them, the step points: G jumps
        by $g_k$ when the user has finished reading rank k, at T(k+1).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(times, G)``.
    """
    p = as_parameters(params)
    grades = np.asarray(grades)
    h, gain = p.holding_and_gain(grades, _as_lengths(lengths, grades.size), rel)
    done = np.cumsum(h)
    if times is None:
        return done, np.cumsum(gain)
    times = np.asarray(times, dtype=np.float64)
    return times, gain_at(done, gain, times)


#: documents per block of :func:`tbg_batch`
_BLOCK = 1 << 16


def tbg_batch(batch: RelevanceBatch, lengths_flat: np.ndarray,
              params: TBGParameters | Mapping[str, float] | None = None, norm: str = "none",
              ideal: np.ndarray | None = None) -> np.ndarray:
    r"""TBG for every query of a [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch]:
    $\sum_k g_k\, e^{-T(k) \ln 2 / h}$ per query, divided by the normaliser ``norm`` names
    ([`time_biased_gain`][irmeasures_markov.time_biased_gain]).

    Parameters
    ----------
    batch : RelevanceBatch
        The run's rankings and grades, flattened.
    lengths_flat : numpy.ndarray
        Lengths of the flattened rankings (duplicates already applied).
    params : TBGParameters or mapping, optional
        TBG's constants.
    norm : str
        One of `NORMS` (checked by the caller, the ``TBG`` measure).
    ideal : numpy.ndarray, optional
        Per-query ideal normalisers, for ``norm='ideal'``.

    Returns
    -------
    numpy.ndarray
        One value per query of the batch.
    """
    p = as_parameters(params)
    offsets = batch.offsets
    values = np.zeros(batch.n_queries)
    # whole queries at a time, about _BLOCK documents each: the temporaries (click probabilities, gains,
    # times) stay in cache and their memory stays bounded, whatever the run's size
    for q0, q1 in query_blocks(offsets, _BLOCK):
        a, b = int(offsets[q0]), int(offsets[q1])
        o = offsets[q0:q1 + 1] - a
        h, gain = p.holding_and_gain(batch.grades[a:b], lengths_flat[a:b], batch.rel)
        # T(k), the time before rank k, and its discount only where there is a gain (a few percent of the
        # ranks): elsewhere the term is 0 * a discount in [0, 1], which is 0.0, as written here
        useful = np.flatnonzero(gain)
        reach = segment_cumsum(h, o)[useful] - h[useful]
        terms = np.zeros(b - a)
        terms[useful] = gain[useful] * np.exp(-p.decay_rate * reach)
        values[q0:q1] = segment_sum(terms, o)
    if norm == "constant":
        values = values / constant_normaliser(p)
    elif norm == "ideal":
        values = np.divide(values, ideal, out=np.zeros_like(values), where=ideal > 0)
    return values
