"""Experiment harness: many measures over many runs, system rankings and their correlations.

This reproduces the protocol of the papers' experimental sections (e.g. the MP
paper §5):

* :func:`evaluate` — per-topic values of many measures for many runs in one
  pass per run (our measures and AP, P@k, Rprec, bpref, RR, nDCG and binary
  RBP share one float64 ranking preparation per run, with trec_eval's
  definitions; other standard measures go through
  ``ir_measures``/``pytrec_eval``), over every qrels topic by default
  (trec_eval ``-c``), with a tqdm progress bar and optional parallelism
  across runs;
* :func:`kendall_tau` — Kendall's τ-b between two score vectors (ties
  handled as in scipy's default);
* :func:`tau_table` — τ between the system rankings of pairs of measures
  (the papers' Tables 2 and 3);
* :func:`compare` — runs × measures with significance tests against a
  baseline or between all pairs (:mod:`irmeasures_markov.comparison`);
* :func:`pool_reduction` — mean scores and τ (full pool vs reduced pool) for
  each pool reduction rate (the MP paper's Figures 3 and 4).

Results are small dataclasses holding numpy arrays; :class:`Evaluation`'s
summaries (``means()``, ``column()``, ``per_topic()``) are labelled pandas
objects, with the plain arrays under explicit names (``values``,
``means_array()``, ``column_array()``).
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from .comparison import compare  # noqa: F401  (re-exported as experiments.compare)
from .cutoffs import check_measure_cutoffs
from .inputs import to_qrels_dict
from .progress import progress_bar
from .pytrec_inputs import id_from_pytrec_eval, qrels_for_pytrec_eval, run_for_pytrec_eval

__all__ = [
    "Evaluation",
    "PoolReduction",
    "parse_measures",
    "evaluate",
    "kendall_tau",
    "tau_table",
    "system_ranking",
    "pool_reduction",
    "MP_PAPER_BASELINES",
    "mp_paper_measures",
    "compare",
]

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def parse_measures(measures) -> list:
    """Measure objects from objects or strings (``'AP'``, ``"MP(model='LO_OR_ID')"``, ``'P@10'``)."""
    import ir_measures
    import irmeasures_markov  # noqa: F401  (registers our measures)
    if isinstance(measures, (str, bytes)) or not isinstance(measures, Sequence):
        measures = [measures]
    out = []
    for m in measures:
        m = ir_measures.parse_measure(m) if isinstance(m, str) else m
        check_measure_cutoffs(m)
        out.append(m)
    if not out:
        raise ValueError("`measures` is empty.")
    if len(set(out)) != len(out):
        raise ValueError(f"`measures` lists a measure twice: {[str(m) for m in out]}")
    return out


#: The comparison measures of the MP paper (Table 2): AP, P@10, Rprec, bpref, RBP with p = 0.8.
MP_PAPER_BASELINES = ("AP", "P@10", "Rprec", "Bpref", "RBP(p=0.8,rel=1)")


def mp_paper_measures() -> Dict[str, object]:
    """The 21 measures of the MP paper's Table 3, keyed by the paper's labels.

    ``AP, P@10, Rprec, bpref, RBP`` and the 16 MP variants
    ``MP <model>`` / ``MP <model>@Rec(T)`` for the 8 models.
    """
    import ir_measures
    from .measures.markov_precision import PAPER_MODELS
    from .plugin import MP
    labels = ["AP", "P@10", "Rprec", "bpref", "RBP"]
    out = {lab: ir_measures.parse_measure(m) for lab, m in zip(labels, MP_PAPER_BASELINES)}
    for model in PAPER_MODELS:
        out[f"MP {model}"] = MP(model=model)
        out[f"MP {model}@Rec(T)"] = MP(model=model, recall=True)
    return out


def _is_ours(m) -> bool:
    from .plugin.base import FamilyMeasure
    return isinstance(m, FamilyMeasure)


def _param(m, name, default=None):
    v = m.params.get(name, default)
    return default if v is None else v


def _native_kind(m) -> Optional[str]:
    """Which standard ir_measures measures we compute on our own float64 ranking preparation.

    ``pytrec_eval`` (0.5.x) holds scores as float32, which reorders near-ties
    (TREC-8 ``uwmt8a0`` topic 441: AP 0.6105 instead of trec_eval's 0.6326;
    47 of that run's 50 rankings have float32 score collisions, and its RR
    differs from trec_eval's by up to 0.1667), so AP, P@k, Rprec,
    bpref, RR (also RR@k), nDCG, nDCG@k and binary RBP are computed here from
    :class:`~irmeasures_markov.rankings.PreparedRun` with trec_eval's
    definitions (checked against trec_eval's output for every TREC-8 run in
    integration/test_trec_eval_reference.py and test_trec_eval_rr_ndcg.py).  Other measures, these with
    ``judged_only=True``, nDCG with ``gains``/``dcg`` other than the
    default, or a negative ``rel`` go through ``ir_measures``.
    """
    if not type(m).__module__.startswith("ir_measures"):
        return None
    name = getattr(m, "NAME", None)
    if _param(m, "judged_only", False):
        return None
    if int(_param(m, "rel", 1)) < 0:
        return None
    if name == "AP":
        return "AP"
    if name == "P" and m.params.get("cutoff") is not None:
        return "P"
    if name == "Rprec":
        return "Rprec"
    if name == "Bpref":
        return "Bpref"
    if name == "RR":
        return "RR"
    if name == "nDCG" and m.params.get("gains") is None and _param(m, "dcg", "log2") == "log2":
        return "nDCG"
    if name == "RBP" and m.params.get("rel") is not None:
        return "RBP"
    return None


def _bpref(m, prepared) -> np.ndarray:
    """trec_eval's bpref: only judged documents count, and a negative grade means "in the pool, unjudged".

    R counts judged grades >= rel, N judged grades in [0, rel); each relevant
    document scores 1 - min(n, R) / min(R, N) with n the judged non-relevant
    documents ranked above it (1 when n = 0).
    """
    from .rankings import segment_cumsum, segment_sum
    rel = int(_param(m, "rel", 1))
    b = prepared.batch(rel=rel, judged_only=True)
    # judgment counts per query from the recall-base tables (made once per qrels and level, no loop per query):
    # N = #{0 <= g < rel} = #{g >= 0} - #{g >= rel}, empty when rel <= 0
    R = prepared.recall_bases(max(rel, 0)).astype(np.float64)
    N = (prepared.recall_bases(0) - prepared.recall_bases(rel)).astype(np.float64) if rel > 0 else np.zeros(R.size)
    counted = b.grades >= 0
    relevant = counted & (b.grades >= rel)
    nonrel = counted & ~relevant
    # judged non-relevant documents ranked above each one: exact integer counts
    before = (segment_cumsum(nonrel, b.offsets) - nonrel).astype(np.float64)
    Rq, Nq = np.repeat(R, b.lengths), np.repeat(N, b.lengths)
    denom = np.maximum(np.minimum(Rq, Nq), 1.0)
    term = np.where(before > 0, 1.0 - np.minimum(before, Rq) / denom, 1.0)
    total = segment_sum(np.where(relevant, term, 0.0), b.offsets)
    return np.where(R > 0, total / np.maximum(R, 1.0), 0.0)


def _ndcg(m, prepared) -> np.ndarray:
    """trec_eval's ndcg / ndcg_cut: gain = grade (0 for grades <= 0), discount log2(rank + 1).

    The ideal ranking holds every judged document with a positive grade,
    grades descending, cut at the cutoff; a query with none scores 0.
    """
    from .rankings import segment_sum
    cutoff = m.params.get("cutoff")
    b = prepared.batch(rel=1, cutoff=cutoff, judgments=False)
    gain = np.maximum(b.grades, 0).astype(np.float64)
    dcg = segment_sum(np.where(gain > 0, gain / np.log2(b.ranks + 1.0), 0.0), b.offsets)
    ideal = np.zeros(len(b.qids))
    for i, q in enumerate(b.qids):
        g = prepared.qrels_index.judged_grades(q)
        g = g[g > 0][:cutoff].astype(np.float64)
        ideal[i] = float(np.sum(g / np.log2(np.arange(2.0, g.size + 2.0))))
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


def _native_values(kind: str, m, prepared) -> np.ndarray:
    from .rankings import segment_cumsum, segment_sum
    if kind == "Bpref":
        return _bpref(m, prepared)
    if kind == "nDCG":
        return _ndcg(m, prepared)
    rel = int(_param(m, "rel", 1))
    cutoff = m.params.get("cutoff")
    b = prepared.batch(rel=rel, cutoff=cutoff, judgments=False)
    relv = b.relevant.astype(np.float64)
    R = b.recall_base.astype(np.float64)
    if kind == "RR":
        out = np.zeros(len(b.qids))
        nonempty = b.lengths > 0
        if b.relevant.size:
            first = np.minimum.reduceat(np.where(b.relevant, b.ranks, np.iinfo(np.int64).max),
                                        b.offsets[:-1][nonempty])
            found = first < np.iinfo(np.int64).max
            out[np.flatnonzero(nonempty)[found]] = 1.0 / first[found]
        return out
    if kind == "RBP":
        p = float(m["p"])
        return segment_sum(np.where(b.relevant, (1.0 - p) * np.power(p, b.ranks - 1.0), 0.0), b.offsets)
    if kind == "P":
        return segment_sum(relv, b.offsets) / float(cutoff)
    if kind == "Rprec":
        top = b.ranks <= np.repeat(R, b.lengths)
        return segment_sum(np.where(top, relv, 0.0), b.offsets) / np.maximum(R, 1.0)
    if kind == "AP":
        # an integer running count (exact, one cumsum): the same numbers as a float cumsum of 0/1 per query
        hits = segment_cumsum(b.relevant, b.offsets).astype(np.float64)
        return segment_sum(np.where(b.relevant, hits / b.ranks, 0.0), b.offsets) / np.maximum(R, 1.0)
    raise AssertionError(kind)


@dataclass
class Evaluation:
    """Per-topic values: ``values[i, j, k]`` is measure ``j`` of run ``i`` on topic ``k``.

    Topics a run did not answer hold the measure's DEFAULT (0), as in
    ``ir_measures``.  ``labels`` are the names the columns are shown with.

    The summaries are labelled pandas objects (:meth:`means`, :meth:`column`,
    :meth:`per_topic`); the same numbers as plain arrays are ``values`` and
    :meth:`means_array` / :meth:`column_array`.
    """
    runs: List[str]
    measures: list
    topics: List[str]
    values: np.ndarray
    labels: List[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.labels:
            self.labels = [str(m) for m in self.measures]

    def means_array(self) -> np.ndarray:
        """Mean over topics as a plain array ``[run, measure]`` (rows ``runs``, columns ``labels``)."""
        return self.values.mean(axis=2)

    def means(self):
        """Mean over topics: a DataFrame, index ``runs`` (named ``run``), columns ``labels`` (named ``measure``)."""
        import pandas as pd
        return pd.DataFrame(self.means_array(), index=pd.Index(list(self.runs), name="run"),
                            columns=pd.Index(list(self.labels), name="measure"))

    def column_array(self, measure) -> np.ndarray:
        """Per-run means of one measure (given as object, printed form or label), as an array in ``runs`` order."""
        return self.means_array()[:, self._index(measure)]

    def column(self, measure):
        """Per-run means of one measure as a Series indexed by run, named by the measure's label."""
        import pandas as pd
        j = self._index(measure)
        return pd.Series(self.means_array()[:, j], index=pd.Index(list(self.runs), name="run"), name=self.labels[j])

    def per_topic(self, measure):
        """Per-topic values of one measure: a DataFrame, index ``topics`` (named ``topic``), columns ``runs``.

        :func:`~irmeasures_markov.inference.score_matrix`, ``all_pairs`` and
        ``discriminative_power`` take it as it is.
        """
        import pandas as pd
        j = self._index(measure)
        return pd.DataFrame(self.values[:, j, :].T, index=pd.Index(list(self.topics), name="topic"),
                            columns=pd.Index(list(self.runs), name="run"))

    def _index(self, measure) -> int:
        key = str(measure)
        for j, (m, lab) in enumerate(zip(self.measures, self.labels)):
            if measure is m or key == lab or key == str(m):
                return j
        raise KeyError(f"{measure!r} is not among the evaluated measures {self.labels}")

    def to_frame(self):
        """Mean scores as a DataFrame (runs x measure labels); the same as :meth:`means`."""
        return self.means()


class _RunScorer:
    """Computes all measures for one run: our measures (and binary RBP) on one shared
    ranking preparation, everything else through one ``ir_measures`` evaluator."""

    def __init__(self, measures, qrels, topics, native=True):
        import ir_measures
        from .plugin.base import install_provider
        from .rankings import QrelsIndex
        install_provider()
        self.measures = measures
        self.topics = topics
        self.topic_index = {t: k for k, t in enumerate(topics)}
        self.qrels_index = QrelsIndex(qrels)
        self.native = {j: _native_kind(m) for j, m in enumerate(measures) if native and _native_kind(m)}
        self.ours = [j for j, m in enumerate(measures) if _is_ours(m) or j in self.native]
        self.others = [j for j, m in enumerate(measures) if j not in set(self.ours)]
        for j in self.ours:
            if _is_ours(measures[j]):
                measures[j].validate_params()
        self.other_eval = (ir_measures.evaluator([measures[j] for j in self.others], qrels_for_pytrec_eval(qrels))
                           if self.others else None)
        self.other_pos = {measures[j]: j for j in self.others}
        # bpref (and our measures with per-grade parameters) read every judgment: the run is then joined with
        # all of them once, while it is ranked, instead of with its positive judgments first and all on demand
        self.judgments = any(self.native.get(j) == "Bpref" or (_is_ours(measures[j]) and measures[j].needs_judgments())
                             for j in self.ours)

    def __call__(self, run) -> np.ndarray:
        from .io import to_run_dict
        from .rankings import PreparedRun
        out = np.zeros((len(self.measures), len(self.topics)))
        for j, m in enumerate(self.measures):
            out[j, :] = m.DEFAULT
        run = to_run_dict(run)
        if self.ours:
            # to_run_dict checked the ids
            prepared = PreparedRun(self.qrels_index, run, ids_checked=True, judgments=self.judgments)
            cols = np.array([self.topic_index.get(q, -1) for q in prepared.qids], dtype=np.int64)
            keep = cols >= 0
            for j in self.ours:
                m = self.measures[j]
                if _is_ours(m):
                    vals = np.asarray(m.compute(prepared), dtype=np.float64)
                else:
                    vals = _native_values(self.native[j], m, prepared)
                out[j, cols[keep]] = vals[keep]
        if self.other_eval is not None:
            for metric in self.other_eval.iter_calc(run_for_pytrec_eval(run)):
                k = self.topic_index.get(id_from_pytrec_eval(metric.query_id))
                if k is not None:
                    out[self.other_pos[metric.measure], k] = metric.value
        return out


# Worker state for fork-based parallelism: set before the pool forks, so runs are not pickled.
_WORKER = {}


def _worker_eval(names):
    scorer = _WORKER.get("scorer")
    if scorer is None:
        scorer = _WORKER["scorer"] = _RunScorer(_WORKER["measures"], _WORKER["qrels"], _WORKER["topics"],
                                                _WORKER["native"])
    runs = _WORKER["runs"]
    return [scorer(runs[n]) for n in names]


def _default_topics(qrels: Qrels) -> List[str]:
    """Every qrels topic, as trec_eval -c averages (a topic without relevant documents included)."""
    return sorted(qrels, key=lambda q: (len(q), q))


def _warn_no_relevant(qrels: Qrels, topics: Sequence[str]):
    empty = [t for t in topics if t in qrels and not any(g >= 1 for g in qrels[t].values())]
    if empty:
        warnings.warn(f"{len(empty)} topic{'' if len(empty) == 1 else 's'} with judgments but no relevant "
                      f"(grade >= 1) document score 0 and are averaged in, as trec_eval does: "
                      f"{', '.join(empty[:20])}{' ...' if len(empty) > 20 else ''}; pass topics=... to leave "
                      "them out.", RuntimeWarning, stacklevel=3)


def labelled_measures(measures, labels: Optional[Sequence[str]] = None):
    """``(parsed measures, labels)`` from a list of measures or a ``{label: measure}`` mapping.

    Labels default to the mapping's keys (None for a list); a ``labels`` list
    of another length than the measures is a ``ValueError``.
    """
    if isinstance(measures, Mapping):
        labels = list(measures) if labels is None else labels
        measures = list(measures.values())
    measures = parse_measures(list(measures))
    if labels is not None and len(labels) != len(measures):
        raise ValueError(f"`labels` has {len(labels)} names for {len(measures)} measures.")
    return measures, labels


def evaluate(measures, qrels: Qrels, runs: Mapping[str, Run], *, topics: Optional[Sequence[str]] = None,
             labels: Optional[Sequence[str]] = None, n_jobs: int = 1, progress: Optional[bool] = None,
             native: bool = True) -> Evaluation:
    """Evaluate every measure on every run, per topic.

    Parameters
    ----------
    measures : list of measures or strings, or dict {label: measure}
        ``ir_measures`` measures (ours included); strings are parsed.
    qrels : dict, path, DataFrame or Qrel namedtuples
        ``{qid: {docid: grade}}``, a TREC qrels file (``str`` or ``os.PathLike``;
        plain or compressed), or any form :func:`irmeasures_markov.io.to_qrels_dict` takes.
    runs : dict
        ``{run_name: {qid: {docid: score}}}``, e.g. from :func:`irmeasures_markov.datasets.load_run_dir`.
    topics : sequence of str, optional
        The topics to average over.  Default: every qrels topic, which is
        trec_eval ``-c`` (and ``ir_measures.calc_aggregate``): a topic a run did
        not answer scores the measure's DEFAULT (0), and a judged topic without
        a relevant document scores 0 (with a ``RuntimeWarning`` naming it);
        both are averaged in.  Topics absent from the qrels score 0.  Some
        papers drop topics without a relevant document (Robust04: 249 of 250
        topics); pass them explicitly for that.
    labels : sequence of str, optional
        Display names (default: the measures' printed forms, or the dict keys).
    n_jobs : int
        Processes to spread the runs over (1 = in this process).  Uses ``fork``
        where available, so runs are shared with the workers without copying.
    progress : bool or None
        A progress bar on standard error: ``None`` (default) only when it is a
        terminal, ``True`` always, ``False`` never.
    native : bool
        Compute AP, P@k, Rprec, bpref, RR, RR@k, nDCG, nDCG@k and binary RBP
        on our float64 ranking preparation (default; trec_eval's definitions
        and values, e.g. bpref ignores negative grades as trec_eval does)
        instead of through ``ir_measures``/``pytrec_eval``, whose float32
        scores can reorder near-ties.

    Raises
    ------
    ValueError
        Empty ``measures``, ``runs`` or topic set, a measure listed twice, a
        cutoff that is not a positive integer (``P@0``), or bad ``labels``/``n_jobs``.
    """
    measures, labels = labelled_measures(measures, labels)
    qrels = to_qrels_dict(qrels)
    if not runs:
        raise ValueError("`runs` is empty.")
    topics = list(topics) if topics is not None else _default_topics(qrels)
    if not topics:
        raise ValueError("no topics to evaluate: the qrels are empty and `topics` was not given.")
    _warn_no_relevant(qrels, topics)
    names = list(runs)
    n_jobs = int(n_jobs)
    if n_jobs < 1:
        raise ValueError(f"`n_jobs` must be a positive integer, got {n_jobs!r}.")
    values = np.zeros((len(names), len(measures), len(topics)))
    bar = progress_bar(None, progress, total=len(names), desc="evaluating", unit="run")
    try:
        if n_jobs == 1 or len(names) < 2 * n_jobs:
            scorer = _RunScorer(measures, qrels, topics, native)
            for i, n in enumerate(names):
                values[i] = scorer(runs[n])
                bar.update(1)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            if "fork" not in multiprocessing.get_all_start_methods():
                raise RuntimeError("n_jobs > 1 needs the 'fork' start method (Linux/macOS); use n_jobs=1.")
            _WORKER.clear()
            _WORKER.update(measures=measures, qrels=qrels, topics=topics, runs=runs, native=native)
            chunk = max(1, math.ceil(len(names) / (n_jobs * 8)))
            chunks = [names[a:a + chunk] for a in range(0, len(names), chunk)]
            try:
                with ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                    i = 0
                    for res in pool.map(_worker_eval, chunks):
                        for v in res:
                            values[i] = v
                            i += 1
                        bar.update(len(res))
            finally:
                _WORKER.clear()
    finally:
        bar.close()
    return Evaluation(names, measures, topics, values, list(labels) if labels is not None else [])


def kendall_tau(x, y) -> float:
    r"""Kendall's rank correlation τ-b between two score vectors.

    .. math::

        \tau_b = \frac{C - D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}

    with C/D the concordant/discordant pairs, :math:`n_0 = n(n-1)/2` and
    :math:`n_1, n_2` the pairs tied in ``x`` and in ``y``.  Without ties this is
    the τ of the papers.  Returns NaN when one vector is constant.
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


def system_ranking(evaluation: Evaluation, measure) -> List[str]:
    """Run names from best to worst by the mean of ``measure`` (ties by name)."""
    col = evaluation.column_array(measure)
    order = sorted(range(len(col)), key=lambda i: (-col[i], evaluation.runs[i]))
    return [evaluation.runs[i] for i in order]


def tau_table(evaluation: Evaluation, rows: Optional[Sequence] = None, cols: Optional[Sequence] = None):
    """Kendall τ-b between the system rankings of measures ``rows`` x ``cols``.

    Returns ``(array, row_labels, col_labels)``; the defaults are every
    measure against every measure.
    """
    rows = list(evaluation.labels if rows is None else rows)
    cols = list(evaluation.labels if cols is None else cols)
    means = evaluation.means_array()
    ri = [evaluation._index(r) for r in rows]
    ci = [evaluation._index(c) for c in cols]
    out = np.array([[kendall_tau(means[:, a], means[:, b]) for b in ci] for a in ri])
    return out, [evaluation.labels[a] for a in ri], [evaluation.labels[b] for b in ci]


@dataclass
class PoolReduction:
    """Results of :func:`pool_reduction`, one row per pool (100 % first).

    ``mean_scores[r, j]``: measure ``j`` averaged over topics and runs with pool ``percents[r]``;
    ``tau[r, j]``: τ-b between the run rankings of measure ``j`` on the full pool and on pool ``percents[r]``.
    """
    percents: List[float]
    labels: List[str]
    mean_scores: np.ndarray
    tau: np.ndarray
    evaluations: List[Evaluation]

    def to_frames(self):
        """``(mean_scores, tau)`` as DataFrames indexed by percent."""
        import pandas as pd
        return (pd.DataFrame(self.mean_scores, index=self.percents, columns=self.labels),
                pd.DataFrame(self.tau, index=self.percents, columns=self.labels))


def _check_full(full: Evaluation, measures: list, labels, qrels: Qrels, runs: Mapping[str, Run]):
    """τ pairs column j and row i of ``full`` with those of every reduced pool, so a ``full`` computed
    for other measures, runs or qrels would give wrong numbers without any error."""
    if not isinstance(full, Evaluation):
        raise TypeError(f"`full` must be an Evaluation from evaluate(), got {type(full).__name__}.")
    if list(full.measures) != list(measures):
        raise ValueError("`full` was computed for other measures: it has "
                         f"{[str(m) for m in full.measures]}, pool_reduction got {[str(m) for m in measures]}.")
    if labels is not None and list(labels) != list(full.labels):
        raise ValueError(f"`full` labels its measures {list(full.labels)}, pool_reduction got {list(labels)}.")
    names = list(runs)
    if list(full.runs) != names:
        missing = [n for n in names if n not in set(full.runs)]
        extra = [n for n in full.runs if n not in runs]
        detail = (f"missing {missing[:5]}" if missing else "") + ("; " if missing and extra else "") \
            + (f"not in `runs`: {extra[:5]}" if extra else "")
        raise ValueError("`full` was computed for other runs"
                         + (f" ({detail})" if detail else " (same names, other order)")
                         + ": evaluate() the same `runs` mapping.")
    unknown = [t for t in full.topics if t not in qrels]
    if unknown:
        raise ValueError(f"`full` was computed on topics absent from `qrels` ({unknown[:5]}"
                         f"{', ...' if len(unknown) > 5 else ''}): was it evaluated on other qrels?")


def pool_reduction(measures, qrels: Qrels, runs: Mapping[str, Run], *,
                   percents: Sequence[float] = (90, 70, 50, 30, 10), seed: int = 0,
                   labels: Optional[Sequence[str]] = None, n_jobs: int = 1, progress: Optional[bool] = None,
                   full: Optional[Evaluation] = None, native: bool = True, backend=None, client=None,
                   scheduler: Optional[str] = None, store=None, collection: str = "") -> PoolReduction:
    """Effect of pool downsampling (MP paper §5.3–5.4, after Buckley & Voorhees 2004).

    For each ``percent`` the qrels are reduced with
    :func:`irmeasures_markov.datasets.downsample_qrels` (seeded, nested) and all
    runs re-evaluated over the same topics as the full pool.  ``full`` may pass
    an :func:`evaluate` result on the complete qrels to avoid recomputing it;
    it must hold the same measures (and labels, when given) and the same runs
    in the same order, on topics of ``qrels``, else ``ValueError``.

    Every (run, pool) pair is a cell of an :mod:`irmeasures_markov.grid`
    evaluation grid, computed on a backend: local processes by default
    (``n_jobs``), or Dask with ``client=`` (a ``distributed.Client``),
    ``scheduler=`` (an address; ``"local"`` starts a ``LocalCluster`` of
    ``n_jobs`` workers, at least 2) or ``backend=``.  The numbers are the same
    bits on every backend and equal :func:`evaluate`'s.  ``store`` (a directory
    or :class:`~irmeasures_markov.grid.ParquetStore`) keeps finished cells, so
    a rerun computes only what is missing.  ``runs`` may map names to run file
    paths, which the workers read.  ``qrels`` is anything :func:`evaluate` takes
    (a dict, a qrels file path, ...).  ``progress``: the grid's bar and summary on
    standard error, as for :func:`evaluate`.
    """
    from .grid import evaluate_grid
    measures, labels = labelled_measures(measures, labels)
    qrels = to_qrels_dict(qrels)
    if full is not None:
        _check_full(full, measures, labels, qrels, runs)
    pools = [(float(pc), int(seed)) for pc in percents]
    if full is None:
        if not runs:
            raise ValueError("`runs` is empty.")
        topics = _default_topics(qrels)
        if topics:
            _warn_no_relevant(qrels, topics)
        pools = [(100.0, 0)] + pools
    else:
        topics = full.topics
    evs, _ = evaluate_grid(measures, qrels, runs, pools=pools, topics=topics, native=native,
                           labels=full.labels if full is not None else labels, collection=collection,
                           backend=backend, client=client, scheduler=scheduler, n_jobs=n_jobs, store=store,
                           progress=progress, desc="pool reduction")
    if full is None:
        full = evs[(100.0, 0)]
    return reduction_of(full, [evs[_pool_key(p)] for p in pools[len(pools) - len(percents):]], percents)


def reduction_of(full: Evaluation, reduced: Sequence[Evaluation], percents: Sequence[float]) -> PoolReduction:
    """The :class:`PoolReduction` of evaluations already computed: ``reduced[i]`` on the pool ``percents[i]``.

    For grids holding many pool samples at once (e.g. an
    :class:`~irmeasures_markov.grid.EvaluationGrid` over several seeds).
    """
    if len(reduced) != len(percents):
        raise ValueError(f"{len(reduced)} reduced evaluations for {len(percents)} percents.")
    evals = [full] + list(reduced)
    for e in reduced:
        if list(e.runs) != list(full.runs) or list(e.topics) != list(full.topics) or e.labels != full.labels:
            raise ValueError("every reduced evaluation must hold the runs, topics and measures of `full`, "
                             "in the same order.")
    full_means = full.means_array()
    mean_scores = np.array([e.means_array().mean(axis=0) for e in evals])
    tau = np.array([[kendall_tau(full_means[:, j], e.means_array()[:, j]) for j in range(len(full.labels))]
                    for e in evals])
    return PoolReduction([100.0] + [float(p) for p in percents], list(full.labels), mean_scores, tau, evals)


def _pool_key(pool):
    """The grid's key of a pool: the full pool (100 %) has no seed."""
    return (100.0, 0) if pool[0] == 100.0 else pool
