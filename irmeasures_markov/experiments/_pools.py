"""Pool reduction (MP paper §5.3–5.4, after Buckley & Voorhees 2004): scores and τ on downsampled qrels.

[`pool_reduction`][irmeasures_markov.experiments.pool_reduction] evaluates every run on the full pool and on seeded,
nested reductions of it (an evaluation grid, `grid`), and returns the
mean scores and Kendall's τ between the full-pool and reduced-pool run
rankings of each measure (the MP paper's Figures 3 and 4);
`reduction_of` does the same for evaluations already computed.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov.experiments._correlations import column_taus
from irmeasures_markov.experiments._evaluation import (
    MeasuresLike,
    Qrels,
    QrelsLike,
    checked_topics,
    labelled_measures,
    read_runs,
)
from irmeasures_markov.experiments._evaluation_table import Evaluation, measure_frame
from irmeasures_markov.experiments._grid import RunSource, evaluate_grid
from irmeasures_markov.grid import Backend
from irmeasures_markov.grid._store import StoreLike
from irmeasures_markov.io._normalise import qrels_dict

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client

__all__ = ["PoolReduction", "pool_reduction", "reduction_of"]


@dataclass
class PoolReduction:
    """Results of [`pool_reduction`][irmeasures_markov.experiments.pool_reduction], one row per pool (100 % first).

    ``mean_scores[r, j]``: measure ``j`` averaged over topics and runs with pool ``percents[r]``;
    ``tau[r, j]``: τ-b between the run rankings of measure ``j`` on the full pool and on pool ``percents[r]``.
    These stay plain arrays (positions, as ``Evaluation.means_array()``);
    [`means`][irmeasures_markov.experiments.PoolReduction.means],
    [`taus`][irmeasures_markov.experiments.PoolReduction.taus] and
    [`run_means`][irmeasures_markov.experiments.PoolReduction.run_means] give the same numbers as DataFrames labelled by
    pool, measure and run.
    """
    percents: list[float]
    labels: list[str]
    mean_scores: np.ndarray
    tau: np.ndarray
    evaluations: list[Evaluation]

    def _frame(self, values: np.ndarray) -> pd.DataFrame:
        """One row per pool (index ``percent``), one column per measure (``measure``), as ``Evaluation.means()``."""
        import pandas as pd
        return measure_frame(values, pd.Index(self.percents, name="percent"), self.labels)

    def means(self) -> pd.DataFrame:
        """``mean_scores`` labelled: index ``percent`` (the pool kept, 100 first), columns ``measure``.

        Returns
        -------
        pandas.DataFrame
            Each measure averaged over topics and runs, one row per pool.
        """
        return self._frame(self.mean_scores)

    def taus(self) -> pd.DataFrame:
        """``tau`` labelled: index ``percent``, columns ``measure``.

        Returns
        -------
        pandas.DataFrame
            τ-b between the run rankings on the full pool and on each pool (1 on the full pool).
        """
        return self._frame(self.tau)

    def run_means(self) -> pd.DataFrame:
        """Each run's mean over topics on each pool: index (``percent``, ``run``), columns ``measure``.

        Returns
        -------
        pandas.DataFrame
            The ``means()`` of every evaluation, stacked pool after pool; averaging a pool's rows over the
            runs gives [`means`][irmeasures_markov.experiments.PoolReduction.means].
        """
        import pandas as pd
        return pd.concat([e.means() for e in self.evaluations], keys=self.percents, names=["percent", "run"])

    def to_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(means(), taus())``.

        Returns
        -------
        mean_scores : pandas.DataFrame
            Each measure averaged over topics and runs, one row per percent of the pool kept.
        tau : pandas.DataFrame
            τ-b between the run rankings on the full pool and on each reduced one, one row per percent.
        """
        return self.means(), self.taus()


def _check_full(full: Evaluation, measures: list, labels, qrels: Qrels, runs: Mapping[str, RunSource]) -> None:
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


def pool_reduction(measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunSource], *,
                   percents: Sequence[float] = (90, 70, 50, 30, 10), seed: int = 0,
                   labels: Sequence[str] | None = None, n_jobs: int = 1, progress: bool | None = None,
                   full: Evaluation | None = None, native: bool = True, backend: Backend | str | None = None,
                   client: Client | None = None, scheduler: str | None = None, store: StoreLike = None,
                   collection: str = "") -> PoolReduction:
    """Effect of pool downsampling (MP paper §5.3–5.4, after Buckley & Voorhees 2004).

    For each ``percent`` the qrels are reduced with
    [`irmeasures_markov.io._datasets.downsample_qrels`][irmeasures_markov.io.downsample_qrels] (seeded, nested) and all
    runs re-evaluated over the same topics as the full pool.  Every (run, pool)
    pair is a cell of an evaluation grid (`EvaluationGrid`): the
    numbers are the same bits on every backend and equal [`evaluate`][irmeasures_markov.experiments.evaluate]'s.

    Parameters
    ----------
    measures, qrels, labels, native
        As for [`evaluate`][irmeasures_markov.experiments.evaluate] (``qrels`` may be a dict, a qrels file path, ...).
    runs : mapping of str to run or path
        Run names to run dicts or to run file paths (each read once, here: the overlap warning and every cell
        use that copy).
    percents : sequence of float
        Pool sizes, in percent of the judged documents kept.
    seed : int
        Seed of the (nested) reductions.
    n_jobs : int
        Local processes, or the workers of a ``LocalCluster``.
    progress : bool or None
        The grid's bar and summary on standard error, as for [`evaluate`][irmeasures_markov.experiments.evaluate].
    full : Evaluation, optional
        An [`evaluate`][irmeasures_markov.experiments.evaluate] result on the complete qrels, not computed again; it
        must hold the same
        measures (and labels, when given) and the same runs in the same order, on topics of ``qrels``.
    backend, client, scheduler
        Local processes by default, or Dask with ``client=`` (a ``distributed.Client``), ``scheduler=``
        (an address; ``"local"`` starts a ``LocalCluster`` of ``n_jobs`` workers, at least 2) or
        ``backend=`` (`resolve_backend`).
    store : ParquetStore, path or None
        Keeps finished cells, so a rerun computes only what is missing.
    collection : str
        The collection's name in the cells' keys.

    Returns
    -------
    PoolReduction

    Raises
    ------
    ValueError
        No run, a ``full`` evaluation of other measures, labels, runs or qrels, or what
        [`evaluate`][irmeasures_markov.experiments.evaluate]
        raises for its arguments.
    TypeError
        ``full`` is not an [`Evaluation`][irmeasures_markov.experiments.Evaluation].
    """
    measures, labels = labelled_measures(measures, labels)
    qrels = qrels_dict(qrels)
    if full is not None:
        _check_full(full, measures, labels, qrels, runs)
    # keyed as the grid keys them: the full pool has seed 0 whatever the seed
    pools = [(float(pc), 0 if float(pc) == 100.0 else int(seed)) for pc in percents]
    runs = read_runs(runs)
    if full is None:
        topics = checked_topics(qrels, runs)
        pools = [(100.0, 0)] + pools
    else:
        topics = full.topics
    evs, _ = evaluate_grid(measures, qrels, runs, pools=pools, topics=topics, native=native,
                           labels=full.labels if full is not None else labels, collection=collection,
                           backend=backend, client=client, scheduler=scheduler, n_jobs=n_jobs, store=store,
                           progress=progress, desc="pool reduction")
    if full is None:
        full = evs[(100.0, 0)]
    return reduction_of(full, [evs[p] for p in pools[len(pools) - len(percents):]], percents)


def reduction_of(full: Evaluation, reduced: Sequence[Evaluation], percents: Sequence[float]) -> PoolReduction:
    """The [`PoolReduction`][irmeasures_markov.experiments.PoolReduction] of evaluations already computed:
    ``reduced[i]`` on the pool ``percents[i]``.

    For grids holding many pool samples at once (e.g. an
    [`EvaluationGrid`][irmeasures_markov.experiments.EvaluationGrid] over several seeds).

    Parameters
    ----------
    full : Evaluation
        The evaluation on the full pool.
    reduced : sequence of Evaluation
        Evaluations of the same runs, topics and measures (same order) on reduced pools.
    percents : sequence of float
        The pool size of each of ``reduced``.

    Returns
    -------
    PoolReduction

    Raises
    ------
    ValueError
        ``reduced`` and ``percents`` of different lengths, or a reduced evaluation of other runs,
        topics or measures than ``full``.
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
    tau = np.array([column_taus(full_means, e.means_array()) for e in evals])
    return PoolReduction([100.0] + [float(p) for p in percents], list(full.labels), mean_scores, tau, evals)

