"""Stability of system rankings (Carterette, SIGIR 2011, §5): smaller topic samples and shallower pools.

* [`topic_sample_stability`][irmeasures_markov.experiments.topic_sample_stability] — Kendall's τ-b between the
  ranking of the runs on every topic and on random topic samples of each size (the paper's Figure 3);
* [`pool_depth_robustness`][irmeasures_markov.experiments.pool_depth_robustness] — τ-b between the ranking with
  the full qrels and with the qrels cut to the union of every run's top d documents (the paper's Figure 4).

Both evaluate on an evaluation grid (`irmeasures_markov.experiments._grid`), so they run in this process, on
local processes or on a Dask cluster, and resume from a store; the τ's are computed here from the grid's
per-topic values.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov.experiments._correlations import column_taus
from irmeasures_markov.experiments._evaluation import (
    MeasuresLike,
    Qrels,
    QrelsLike,
    checked_topics,
    default_topics,
    labelled_measures,
    read_runs,
)
from irmeasures_markov.experiments._evaluation_table import measure_frame
from irmeasures_markov.experiments._grid import FULL, EvaluationGrid, RunSource, evaluate_grid
from irmeasures_markov.experiments._settings import apply_settings
from irmeasures_markov.grid import Backend
from irmeasures_markov.grid._store import StoreLike
from irmeasures_markov.io._normalise import qrels_dict
from irmeasures_markov.ranking._order import read_scores, top_order, trec_order

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client

__all__ = ["DEPTHS", "MAX_SUBSETS", "UNJUDGED_CUT", "depth_pools", "pool_depth_robustness", "topic_samples",
           "topic_sample_stability"]

#: The default pool depths of [`pool_depth_robustness`][irmeasures_markov.experiments.pool_depth_robustness].
DEPTHS = (1, 2, 3, 5, 10, 20, 30, 50, 100)
#: ``trials=None`` (every topic subset) enumerates at most this many subsets in all: each is a τ per measure.
MAX_SUBSETS = 1_000_000
#: What a document outside the cut pool is: ``'nonrel'`` (unjudged, counted as not relevant, as trec_eval) or
#: ``'drop'`` (removed from the ranking first: condensed lists, Sakai 2007).
UNJUDGED_CUT = ("nonrel", "drop")


def _integers(values: Sequence, low: int, high: float = math.inf) -> bool:
    """Whether every value is an integer in [low, high], bools refused: the rule of sizes, trials and depths."""
    return all(not isinstance(v, bool) and int(v) == v and low <= v <= high for v in values)


def topic_samples(n_topics: int, size: int, trials: int | None, rng: np.random.Generator) -> np.ndarray:
    """The topic indices of each trial, ``[trial, size]``: ``trials`` seeded draws without replacement, or every
    subset in ``itertools.combinations`` order when ``trials`` is None (the exact mean the tests check)."""
    if trials is None:
        return np.array(list(itertools.combinations(range(n_topics), size)), dtype=np.int64).reshape(-1, size)
    return np.array([np.sort(rng.choice(n_topics, size, replace=False)) for _ in range(trials)],
                    dtype=np.int64).reshape(trials, size)


def topic_sample_stability(measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunSource], *,
                           sizes: Sequence[int] | None = None, trials: int | None = 100, seed: int = 0,
                           labels: Sequence[str] | None = None, native: bool = True, n_jobs: int = 1,
                           progress: bool | None = None, backend: Backend | str | None = None,
                           client: Client | None = None, scheduler: str | None = None, store: StoreLike = None,
                           collection: str = "") -> pd.DataFrame:
    r"""Kendall's τ-b between the run ranking on every topic and on random topic samples (Carterette 2011, §5,
    Figure 3).

    Every run is evaluated once on every qrels topic (trec_eval ``-c``; an evaluation grid). For each sample
    size $n$ and trial $t$ a sample $S_{n,t}$ of $n$ topics is drawn without replacement, the same sample for
    every measure (as in the paper), and for measure $j$

    $$
    \tau_{n,t,j} = \tau_b\Big(\big(\bar v_{i,j}\big)_i,\ \big(\tfrac{1}{n}\textstyle\sum_{q \in S_{n,t}}
    v_{i,j,q}\big)_i\Big)
    $$

    with $v_{i,j,q}$ the value of run $i$ on topic $q$ and $\bar v_{i,j}$ its mean over every topic
    ([`kendall_tau`][irmeasures_markov.experiments.kendall_tau]). A measure constant over the runs (e.g. M3 with a
    static distribution on runs of equal length) has τ NaN.

    Parameters
    ----------
    measures, qrels, labels, native
        As for [`evaluate`][irmeasures_markov.experiments.evaluate].
    runs : mapping of str to run or path
        Run names to run dicts or run file paths (each read once, here), at least 2.
    sizes : sequence of int, optional
        Sample sizes, each in [1, number of topics]; default 5, 10, ... below the number of topics (the paper's
        5 to 45 of 50).
    trials : int or None
        Random samples per size (default 100, as the paper); None: every subset of each size (at most
        `MAX_SUBSETS` in all), for an exact mean.
    seed : int
        Seed of the samples (``numpy.random.default_rng``); the draws for each size follow those of the sizes
        before it.
    n_jobs, progress, backend, client, scheduler, store, collection
        As for [`pool_reduction`][irmeasures_markov.experiments.pool_reduction]: where the full evaluation runs and
        where its cells are kept (a rerun with the same ``store`` computes nothing).

    Returns
    -------
    pandas.DataFrame
        τ-b, index (``size``, ``trial``), one column per measure (named ``measure``);
        ``.groupby(level="size").mean()`` gives the paper's curves.

    Raises
    ------
    ValueError
        Fewer than 2 runs, a size outside [1, number of topics], ``trials`` not a positive integer or None, more
        than `MAX_SUBSETS` subsets, or what [`evaluate`][irmeasures_markov.experiments.evaluate] raises.
    """
    import pandas as pd
    if trials is not None and not _integers([trials], 1):
        raise ValueError(f"`trials` must be a positive integer or None (every subset), got {trials!r}.")
    measures, labels = labelled_measures(measures, labels)
    qrels = qrels_dict(qrels)
    n = len(default_topics(qrels))
    sizes = list(range(5, n, 5)) if sizes is None else list(sizes)
    if not sizes or not _integers(sizes, 1, n):
        raise ValueError(f"`sizes` must be integers in [1, {n}] (the number of topics), got {sizes!r}.")
    if trials is None:
        count = sum(math.comb(n, int(s)) for s in sizes)
        if count > MAX_SUBSETS:
            raise ValueError(f"trials=None enumerates {count} topic subsets for sizes {sizes}; at most {MAX_SUBSETS} "
                             "are allowed: give a number of trials.")
    runs = read_runs(runs)
    evs, _ = evaluate_grid(measures, qrels, runs, pools=[FULL], topics=checked_topics(qrels, runs, 2), native=native,
                           labels=labels, collection=collection, desc="topic samples", n_jobs=n_jobs,
                           progress=progress, backend=backend, client=client, scheduler=scheduler, store=store)
    full = evs[FULL]
    full_means = full.values.mean(axis=2)
    rng = np.random.default_rng(seed)
    rows, index = [], []
    for s in sizes:
        for t, sample in enumerate(topic_samples(n, int(s), trials, rng)):
            rows.append(column_taus(full_means, full.values[:, :, sample].mean(axis=2)))
            index.append((int(s), t))
    return measure_frame(np.array(rows, dtype=np.float64).reshape(len(rows), len(full.labels)),
                         pd.MultiIndex.from_tuples(index, names=["size", "trial"]), full.labels)


def depth_pools(qrels: Qrels, runs: Mapping[str, Mapping[str, Mapping[str, float]]],
                depths: Sequence[int]) -> dict[int, dict[str, dict[str, int]]]:
    """``{depth: qrels}``: the judgments of ``qrels`` on documents some run ranks in its top ``depth`` (trec_eval's
    order); every qrels topic is kept, possibly with no judgment left. Each run's top ``max(depths)`` is sorted
    once per topic and cut for every depth."""
    deepest = max(depths)
    pooled = {d: {q: set() for q in qrels} for d in depths}
    for run in runs.values():
        for q in qrels:
            docs = run.get(q)
            if not docs:
                continue
            keys = list(docs)
            scores = read_scores(docs, q, keys)
            order = top_order(keys, scores, deepest) if deepest < len(keys) else trec_order(keys, scores)
            ranked = [keys[i] for i in order.tolist()]
            for d in depths:
                pooled[d][q].update(ranked[:d])
    return {d: {q: {doc: g for doc, g in judged.items() if doc in pooled[d][q]} for q, judged in qrels.items()}
            for d in depths}


def pool_depth_robustness(measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunSource], *,
                          depths: Sequence[int] = DEPTHS, unjudged: str = "nonrel",
                          labels: Sequence[str] | None = None, native: bool = True, n_jobs: int = 1,
                          progress: bool | None = None, backend: Backend | str | None = None,
                          client: Client | None = None, scheduler: str | None = None, store: StoreLike = None,
                          collection: str = "") -> pd.DataFrame:
    r"""Kendall's τ-b between the run ranking with the full qrels and with the qrels of a depth-d pool
    (Carterette 2011, §5, Figure 4).

    The depth-$d$ pool of topic $q$ is the union over every run of its top $d$ documents (trec_eval's order:
    score descending, docid descending); its qrels keep the judgments of ``qrels`` on those documents. A document
    outside the cut pool is then unjudged: with ``unjudged='nonrel'`` (the default, as trec_eval) it counts as
    not relevant; with ``'drop'`` every measure first removes unjudged documents from the ranking (condensed
    lists, Sakai 2007), on the full qrels as well. The recall base is the cut pool's. Every run is evaluated
    with the full qrels and with each depth's on the full qrels' topics, each (run, depth) a cell of one
    evaluation grid (a block per depth), and for measure $j$

    $$
    \tau_{d,j} = \tau_b\big((\bar v^{\text{full}}_{i,j})_i,\ (\bar v^{(d)}_{i,j})_i\big).
    $$

    Parameters
    ----------
    measures, qrels, labels, native
        As for [`evaluate`][irmeasures_markov.experiments.evaluate].
    runs : mapping of str to run or path
        Run names to run dicts or run file paths (each read once, here), at least 2; the pools are made from
        these runs.
    depths : sequence of int
        Pool depths, each at least 1 (default `DEPTHS`: 1, 2, 3, 5, 10, 20, 30, 50, 100).
    unjudged : str
        ``'nonrel'`` or ``'drop'`` (`UNJUDGED_CUT`); ``'drop'`` rewrites this package's families with
        ``unjudged='drop'`` and refuses the other measures.
    n_jobs, progress, backend, client, scheduler, store, collection
        As for [`pool_reduction`][irmeasures_markov.experiments.pool_reduction] (the cells of each depth are
        keyed by the content of its cut qrels).

    Returns
    -------
    pandas.DataFrame
        τ-b, index ``depth`` (ascending), one column per measure (named ``measure``); ``attrs["judgments"]``
        holds the number of judgments each depth keeps, ``attrs["full_judgments"]`` that of ``qrels``.

    Raises
    ------
    ValueError
        Fewer than 2 runs, no depth or a depth that is not a positive integer, an unknown ``unjudged``, a measure
        without ``unjudged='drop'``, or what [`evaluate`][irmeasures_markov.experiments.evaluate] raises.
    """
    import pandas as pd
    depths = sorted(dict.fromkeys(depths)) if depths is not None else []
    if not depths or not _integers(depths, 1):
        raise ValueError(f"`depths` must be positive integers, got {list(depths)!r}.")
    depths = [int(d) for d in depths]
    if unjudged not in UNJUDGED_CUT:
        raise ValueError(f"`unjudged` must be one of {list(UNJUDGED_CUT)}, got {unjudged!r}.")
    measures, labels = labelled_measures(measures, labels)
    if unjudged != "nonrel":
        measures, native_settings, default_labels = apply_settings(measures, unjudged=unjudged, native=native)
        if native_settings:
            names = [str(measures[j]) for j in native_settings]
            raise ValueError(f"unjudged={unjudged!r} on a grid is for this package's families only; {names} would "
                             "need evaluate()'s setting: use the family's form (e.g. M4(dist='AP') for AP).")
        labels = labels if labels is not None else default_labels
    qrels = qrels_dict(qrels)
    runs = read_runs(runs)
    topics = checked_topics(qrels, runs, 2)
    cut = depth_pools(qrels, runs, depths)
    grid = EvaluationGrid()
    blocks = {d: grid.add(measures, cut[d], runs, pools=[FULL], topics=topics, labels=labels, native=native,
                          collection=collection) for d in depths}
    whole = grid.add(measures, qrels, runs, pools=[FULL], topics=topics, labels=labels, native=native,
                     collection=collection)
    res = grid.run(desc="pool depths", n_jobs=n_jobs, progress=progress, backend=backend, client=client,
                   scheduler=scheduler, store=store)
    full = res.evaluations(whole)[FULL]
    rows = [column_taus(full.means_array(), res.evaluations(blocks[d])[FULL].means_array()) for d in depths]
    out = measure_frame(np.array(rows, dtype=np.float64), pd.Index(depths, name="depth"), full.labels)
    out.attrs["judgments"] = {d: sum(map(len, cut[d].values())) for d in depths}
    out.attrs["full_judgments"] = sum(map(len, qrels.values()))
    return out
