"""Evaluation grids: per-topic values of a measure set for runs x pool samples x collections.

A cell is one run evaluated on one pool (the full qrels, or
[`downsample_qrels`][irmeasures_markov.io.downsample_qrels] at ``pool`` percent with
``seed``): an array ``[measure, topic]``, computed by the same
``experiments.evaluation.RunScorer`` as [`evaluate`][irmeasures_markov.experiments.evaluate],
so the numbers are those of ``evaluate`` bit for bit on every backend.

Tasks group a few runs with every pool missing for them: a worker reads each
run once per task (from its path, or from the copy scattered once), and
keeps the scorer of each pool in a small per-process cache keyed by the
qrels' content (building one, with its reduced pool, takes about as long as
two cells), so a task of one TREC-8 run on 101 pools costs seconds while
scheduling it costs milliseconds (docs/benchmarks.md, ``bench_grid.py``), and
a Dask worker, which outlives the grid, reuses its scorers in the next grid
on the same judgments (another seed's pools share the full pool, a rerun all).
"""
from __future__ import annotations

import hashlib
import math
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.experiments._evaluation import (
    MeasuresLike,
    QrelsLike,
    RunLike,
    RunScorer,
    default_topics,
    labelled_measures,
    warn_float32,
)
from irmeasures_markov.experiments._evaluation_table import Evaluation
from irmeasures_markov.grid._backends import Backend, LocalBackend, content_key, resolve_backend
from irmeasures_markov.grid._cells import Cell, fresh_token, measures_key, qrels_hash, run_hash
from irmeasures_markov.grid._runner import GridSummary, run_grid
from irmeasures_markov.grid._store import ParquetStore, StoreLike
from irmeasures_markov.io._content import REGISTRATION, read_once
from irmeasures_markov.io._datasets import downsample_qrels
from irmeasures_markov.io._normalise import qrels_dict
from irmeasures_markov.io._pytrec import check_gdeval_ids, gdeval_measures
from irmeasures_markov.io._run_columns import read_run_columns as read_run  # arrays: read_trec_run's runs and errors
from irmeasures_markov.plugin import FamilyMeasure, measure_inputs

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["EvaluationGrid", "GridResult", "Pool", "PoolSpec", "RunSource", "evaluate_grid"]

#: A pool sample: ``(percent of the qrels kept, seed)``; the full qrels are ``(100.0, 0)``.
Pool = tuple[float, int]
#: What :meth:`EvaluationGrid.add` takes as a pool: a percent (seed 0) or a ``(percent, seed)`` pair.
PoolSpec = float | tuple[float, int]
#: A run of a grid: a run in memory, or the path of a run file the workers read.
RunSource = RunLike | str | os.PathLike[str]
FULL: Pool = (100.0, 0)

#: Cells a task should hold at least (tens of milliseconds each on TREC-8), so that the
#: scheduler's few milliseconds per task stay far below 5% of the work.
MIN_CELLS_PER_TASK = 16
#: Tasks per worker aimed at, so that workers finish together.
TASKS_PER_WORKER = 4
#: Pools per task at most: half the scorer cache, so a worker's current pools stay cached.
POOLS_PER_TASK = 128

# Per-process caches of the worker side.
_SCORERS: OrderedDict[tuple, object] = OrderedDict()
_SCORER_CACHE = 256
_RUNS: OrderedDict[tuple, object] = OrderedDict()
_RUN_CACHE = 4


def _pool(p) -> Pool:
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        p = (p, 0)
    try:
        pc, seed = p
    except (TypeError, ValueError):
        raise ValueError(f"a pool is a percent or a (percent, seed) pair, got {p!r}") from None
    if isinstance(pc, bool) or not isinstance(pc, (int, float)) or not (0 < pc <= 100):
        raise ValueError(f"a pool's percent must be in (0, 100], got {pc!r}.")
    if isinstance(seed, bool) or int(seed) != seed:
        raise ValueError(f"a pool's seed must be an integer, got {seed!r}.")
    pc = float(pc)
    return (pc, 0) if pc == 100.0 else (pc, int(seed))


def _cached(cache: OrderedDict, limit: int, key: tuple, make, *args):
    """``cache[key]``, made by ``make(*args)`` when missing; the least recently used entries beyond ``limit`` go."""
    value = cache.get(key)
    if value is None:
        value = cache[key] = make(*args)
        while len(cache) > limit:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return value


def _scorer(measures, mkey, topics, native, qrels, qtoken, pool: Pool):
    """The scorer of a pool, kept per process: building one takes about as long as scoring a run."""
    def make():
        reduced = qrels if pool == FULL else downsample_qrels(qrels, pool[0], seed=pool[1])
        return RunScorer(list(measures), reduced, list(topics), native)
    return _cached(_SCORERS, _SCORER_CACHE, (qtoken, mkey, pool), make)


@dataclass
class _EvalTask:
    """Cells of one block: ``pairs[k] = (run index, pool)`` gives ``cells[k]``."""
    key: str
    cells: list[Cell]
    needs: list[str]
    measures: list
    mkey: str
    topics: list[str]
    native: bool
    qrels_name: str
    qrels_token: str  # names the qrels by content: the key of the scorers a worker keeps from grid to grid
    runs: list[tuple[str, str | None, str]]  # (name, path or None, shared name or hash)
    pairs: list[tuple[int, Pool]]
    inputs: list[dict[str, str]] | None = None  # measure_inputs of each measure when the cells were keyed

    def compute(self, shared) -> list[np.ndarray]:
        qrels = shared[self.qrels_name]
        out, current, run = [], None, None
        # every file a measure reads is read once for the whole task, first by the check: the cells' values come
        # from the very bytes their keys name, whatever happens to the files meanwhile
        with read_once():
            if self.inputs is not None:
                _check_inputs(self.measures, self.inputs)
            for r, pool in self.pairs:
                if r != current:
                    name, path, ref = self.runs[r]
                    run = _cached(_RUNS, _RUN_CACHE, (path, ref), read_run, path) if path is not None else shared[ref]
                    current = r
                scorer = _scorer(self.measures, self.mkey, self.topics, self.native, qrels, self.qrels_token, pool)
                out.append(scorer(run))
        return out


def _check_inputs(measures, keyed: list[dict[str, str]]) -> None:
    """Refuse the cells of a task if a file a measure reads is no longer the content its cells were keyed by:
    their values would be another content's.

    Inputs identified by a registration (a kernel given as a function) are
    not compared: another process registers them under another token.
    """
    for m, before in zip(measures, keyed):
        now = measure_inputs(m)
        for param, fp in before.items():
            if not fp.startswith(REGISTRATION) and now.get(param) != fp:
                raise InputError(f"{m}: the content of {param}={m[param]!r} changed while the grid ran; its cells "
                                 "were not stored (run the grid again)")


@dataclass
class _Block:
    collection: str
    measures: list
    labels: list[str]
    topics: list[str]
    native: bool
    qrels: Mapping
    runs: Mapping
    pools: list[Pool]


class GridResult:
    """Evaluations of an [`EvaluationGrid`][irmeasures_markov.experiments.EvaluationGrid]:
    ``result.evaluations(block)[(pool, seed)]``."""

    def __init__(self, blocks: list[_Block], arrays: Mapping[str, np.ndarray],
                 cells: list[dict[tuple[str, Pool], Cell]], summary: GridSummary) -> None:
        self._blocks = blocks
        self._arrays = arrays
        self._cells = cells
        self.summary = summary

    def evaluations(self, block: int = 0) -> dict[Pool, Evaluation]:
        """``{(percent, seed): Evaluation}`` of block ``block`` (the full pool is ``(100.0, 0)``).

        Parameters
        ----------
        block : int
            What [`EvaluationGrid.add`][irmeasures_markov.experiments.EvaluationGrid.add] returned for the block.

        Returns
        -------
        dict of (float, int) to Evaluation
        """
        b = self._blocks[block]
        cells = self._cells[block]
        names = list(b.runs)
        out = {}
        for pool in b.pools:
            values = np.stack([self._arrays[cells[(n, pool)].key] for n in names])
            out[pool] = Evaluation(names, list(b.measures), list(b.topics), values, list(b.labels))
        return out


class EvaluationGrid:
    """A grid of evaluation cells: blocks of (collection, measure set, runs, pools).

    >>> g = EvaluationGrid()                                        # doctest: +SKIP
    >>> b = g.add(["AP", "MP"], qrels, runs, pools=[100, (30, 0), (30, 1)], collection="trec8")
    >>> res = g.run(client=client, store="grid-store")             # or n_jobs=2, or scheduler="tcp://..."
    >>> res.evaluations(b)[(30.0, 1)].means()

    ``runs`` maps run names to run dicts or to run file paths; a path is read
    by the worker (on a cluster it must be on storage every worker sees), a
    dict is scattered to the cluster once.
    """

    def __init__(self) -> None:
        self._blocks: list[_Block] = []

    def add(self, measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunSource], *,
            pools: Sequence[PoolSpec] = (100,), topics: Sequence[str] | None = None,
            labels: Sequence[str] | None = None, native: bool = True, collection: str = "") -> int:
        """Add a block; returns its index for
        [`GridResult.evaluations`][irmeasures_markov.experiments.GridResult.evaluations].

        Parameters
        ----------
        measures, qrels, topics, labels, native
            As for [`evaluate`][irmeasures_markov.experiments.evaluate]: ``qrels`` may be any form it takes
            (a dict, a qrels file path, ...), ``topics`` default to every qrels topic (trec_eval ``-c``).
        runs : mapping of str to run or path
            Run names to run dicts or to run file paths (read by the workers).
        pools : sequence of float or (float, int)
            Percents (seed 0) or ``(percent, seed)`` pairs; 100 is the full qrels.
        collection : str
            The collection's name, part of every cell's key.

        Returns
        -------
        int
            The block's index.

        Raises
        ------
        ValueError
            No run, no topic, no pool, a pool's percent outside (0, 100] or a seed that is not an integer.
        TypeError
            A run name that is not a str, or a run that is neither a mapping nor a path.
        FileNotFoundError
            A run path that is not a file.
        irmeasures_markov.io.InputError
            A query id gdeval cannot read when ir_measures computes a measure with gdeval (ERR@k).
        """
        measures, labels = labelled_measures(measures, labels)
        warn_float32(measures)
        qrels = self._shared_qrels(qrels_dict(qrels))
        if not runs:
            raise ValueError("`runs` is empty.")
        for name, r in runs.items():
            if not isinstance(name, str):
                raise TypeError(f"run names must be str, got {name!r}")
            if not isinstance(r, (str, os.PathLike, Mapping)):
                raise TypeError(f"run {name!r}: give a run dict or a run file path, got {type(r).__name__}.")
            if isinstance(r, (str, os.PathLike)) and not os.path.isfile(r):
                raise FileNotFoundError(f"run {name!r}: no such file {os.fspath(r)!r}")
        topics = default_topics(qrels, topics)
        pools = list(dict.fromkeys(_pool(p) for p in pools))
        if not pools:
            raise ValueError("`pools` is empty.")
        for m in measures:  # here, not on a worker: a bad parameter is the caller's error, not a failed task
            if isinstance(m, FamilyMeasure):
                m.validate_params()
        gdeval = gdeval_measures(measures)  # so are ids gdeval cannot read (a run file's: when a worker reads it)
        check_gdeval_ids(gdeval, qrels)
        for r in runs.values():
            if isinstance(r, Mapping):
                check_gdeval_ids(gdeval, (), r)
        self._blocks.append(_Block(str(collection), measures, list(labels) if labels is not None else
                                   [str(m) for m in measures], topics, bool(native), qrels, runs, pools))
        return len(self._blocks) - 1

    def _shared_qrels(self, qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        # blocks holding equal judgments share one object, hence one token: the qrels go to the workers (and are
        # indexed) once, not once per block; compared by content, so changed judgments are never merged
        return next((b.qrels for b in self._blocks if b.qrels == qrels), qrels)

    def run(self, *, backend: Backend | str | None = None, client: Client | None = None,
            scheduler: str | None = None, n_jobs: int = 1, store: StoreLike = None, progress: bool | None = None,
            runs_per_task: int | None = None, desc: str = "evaluation grid") -> GridResult:
        """Compute every cell not in ``store`` on the backend.

        Parameters
        ----------
        backend, client, scheduler, n_jobs
            Where the cells are computed (`resolve_backend`).
        store : ParquetStore, path or None
            Finished cells are read from and written to it; a rerun computes only the missing ones.
        progress : bool or None
            A bar and a summary on standard error; None: only when it is a terminal.
        runs_per_task : int, optional
            Runs per task (default: enough cells per task for the scheduling to stay cheap).
        desc : str
            The progress bar's label.

        Returns
        -------
        GridResult

        Raises
        ------
        ValueError
            An empty grid or a ``runs_per_task`` that is not a positive integer.
        irmeasures_markov.grid.GridError
            A task failed (the other cells are stored).
        """
        if not self._blocks:
            raise ValueError("the grid is empty: add() a block first.")
        if runs_per_task is not None and (isinstance(runs_per_task, bool) or int(runs_per_task) != runs_per_task
                                          or runs_per_task < 1):
            raise ValueError(f"`runs_per_task` must be a positive integer, got {runs_per_task!r}.")
        if store is not None and not isinstance(store, ParquetStore):
            store = ParquetStore(store)
        hashed = store is not None
        qtokens: dict[int, str] = {}
        rtokens: dict[tuple[object, str], str] = {}
        # the shared inputs, by the names tasks need them under: the qrels, and the runs held in memory
        published: dict[str, object] = {}
        refs, cells_by_block, all_cells, where = [], [], [], {}
        # what each measure reads (files by content), read once: the cell keys hold it, and a worker checks
        # that it is still what it reads before its cells are stored
        inputs = [[measure_inputs(m) for m in b.measures] for b in self._blocks]
        mkeys = [measures_key(b.measures, b.topics, b.native, inputs[bi]) for bi, b in enumerate(self._blocks)]
        for bi, b in enumerate(self._blocks):
            if id(b.qrels) not in qtokens:
                qtokens[id(b.qrels)] = qrels_hash(b.qrels) if hashed else fresh_token()
            qt = qtokens[id(b.qrels)]
            published[f"qrels:{qt}"] = b.qrels
            cells, run_refs = {}, {}
            for name, r in b.runs.items():
                path = os.fspath(r) if isinstance(r, (str, os.PathLike)) else None
                rid = (id(r) if path is None else path, name)
                if rid not in rtokens:
                    rtokens[rid] = run_hash(r) if hashed else fresh_token()
                # (path, its hash) for a run file the workers read, (None, its shared name) for a run held in memory
                run_refs[name] = (path, rtokens[rid] if path is not None else f"run:{rtokens[rid]}")
                if path is None:
                    published.setdefault(run_refs[name][1], r)
                for pool in b.pools:
                    c = Cell("evaluate", b.collection, name, mkeys[bi], pool[0], pool[1], "", qt, rtokens[rid])
                    cells[(name, pool)] = c
                    all_cells.append(c)
                    where.setdefault(c.key, (bi, name, pool))
            cells_by_block.append(cells)
            refs.append(run_refs)

        be, owned = resolve_backend(backend, client=client, scheduler=scheduler, n_jobs=n_jobs)
        # the qrels' content names the scorers a worker keeps: the next grid on the same judgments (another seed's
        # pools, a rerun) reuses them on a Dask worker or in this process, also when no store keys the cells;
        # processes forked for this grid end with it, and hashing the qrels (20 ms for TREC-8's) would buy nothing
        try:
            forked = isinstance(be, LocalBackend) and be.n_jobs > 1
            ctokens = {id(b.qrels): qtokens[id(b.qrels)] if hashed or forked else content_key(b.qrels)[0]
                       for b in {id(b.qrels): b for b in self._blocks}.values()}

            def make_tasks(missing: list[Cell]):
                workers = be.n_workers
                by_block: dict[int, dict[str, list[Pool]]] = {}
                for c in missing:
                    bi, name, pool = where[c.key]
                    by_block.setdefault(bi, {}).setdefault(name, []).append(pool)
                tasks = []
                for bi, per_run in by_block.items():
                    b = self._blocks[bi]
                    qt = qtokens[id(b.qrels)]
                    mkey = mkeys[bi]
                    # Pools in chunks that fit the workers' scorer cache; tasks ordered chunk by chunk, so a
                    # worker (Dask runs tasks about in submission order) builds each pool's scorer about once.
                    groups: dict[tuple, list[str]] = {}
                    for name, pools in per_run.items():
                        for a in range(0, len(pools), POOLS_PER_TASK):
                            groups.setdefault(tuple(pools[a:a + POOLS_PER_TASK]), []).append(name)
                    n_tasks_min = TASKS_PER_WORKER * workers
                    n_pairs = sum(len(p) * len(ns) for p, ns in groups.items())
                    for pools, names in groups.items():
                        k = runs_per_task or max(1, min(math.ceil(MIN_CELLS_PER_TASK / len(pools)),
                                                        math.ceil(n_pairs / len(pools) / n_tasks_min)))
                        for a in range(0, len(names), k):
                            chunk = names[a:a + k]
                            runs, pairs, tcells, needs = [], [], [], [f"qrels:{qt}"]
                            for ri, name in enumerate(chunk):
                                path, ref = refs[bi][name]
                                if path is None:
                                    needs.append(ref)
                                runs.append((name, path, ref))
                                for pool in pools:
                                    pairs.append((ri, pool))
                                    tcells.append(cells_by_block[bi][(name, pool)])
                            key = "grid-eval-" + hashlib.sha256("".join(c.key for c in tcells).encode()
                                                                ).hexdigest()[:24]
                            tasks.append(_EvalTask(key, tcells, needs, b.measures, mkey, b.topics, b.native,
                                                   f"qrels:{qt}", ctokens[id(b.qrels)], runs, pairs,
                                                   inputs[bi] if hashed else None))
                return tasks

            def shared(names):
                return {n: published[n] for n in names}

            arrays, summary = run_grid(all_cells, make_tasks, shared, backend=be, store=store, progress=progress,
                                       desc=desc)
        finally:
            if owned:
                be.close()
        return GridResult(self._blocks, arrays, cells_by_block, summary)


def evaluate_grid(measures: MeasuresLike, qrels: QrelsLike, runs: Mapping[str, RunSource], *,
                  pools: Sequence[PoolSpec] = (100,), topics: Sequence[str] | None = None,
                  labels: Sequence[str] | None = None, native: bool = True, collection: str = "",
                  **run_kwargs: Any) -> tuple[dict[Pool, Evaluation], GridSummary]:
    """One block's evaluations ``{(percent, seed): Evaluation}`` and the
    [`GridSummary`][irmeasures_markov.grid.GridSummary].

    Parameters
    ----------
    measures, qrels, runs, pools, topics, labels, native, collection
        As for [`EvaluationGrid.add`][irmeasures_markov.experiments.EvaluationGrid.add].
    **run_kwargs
        For [`EvaluationGrid.run`][irmeasures_markov.experiments.EvaluationGrid.run] (``backend``, ``client``,
        ``scheduler``, ``n_jobs``, ``store``,
        ``progress``, ``desc``).

    Returns
    -------
    (dict of (float, int) to Evaluation, GridSummary)
    """
    g = EvaluationGrid()
    b = g.add(measures, qrels, runs, pools=pools, topics=topics, labels=labels, native=native,
              collection=collection)
    res = g.run(**run_kwargs)
    return res.evaluations(b), res.summary
