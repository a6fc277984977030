"""Experiment grids on one machine or a Dask cluster, resumable from a Parquet store.

An evaluation study is a grid of *cells* — (collection, run, measure set,
pool sample, resample) — each one array.  This package computes such grids
on a *backend* and keeps finished cells in a *store*:

* [`LocalBackend`][irmeasures_markov.grid.LocalBackend] — local processes (``n_jobs``; 1 = this process),
  the default, needs no Dask;
* [`DaskBackend`][irmeasures_markov.grid.DaskBackend] — a ``dask.distributed`` cluster: ``client=``, a
  scheduler address, or a ``LocalCluster`` when neither is given;
* [`ParquetStore`][irmeasures_markov.grid.ParquetStore] — finished cells keyed by the cell and by content
  hashes of its qrels and run; a rerun computes only the missing cells.

Every backend runs the same cell code on the same inputs, so the numbers are
bit-for-bit those of the local backend (and of
[`irmeasures_markov.experiments.evaluate`][irmeasures_markov.experiments.evaluate]).  ``docs/scaling.md`` says how
to run on a real cluster.

This package is the engine only; the grids built on it live with what they
compute: evaluation grids in `irmeasures_markov.experiments._grid`
([`EvaluationGrid`][irmeasures_markov.experiments.EvaluationGrid]), significance tests
and Bayesian fits in `irmeasures_markov.inference._grid`.
"""
from __future__ import annotations

from irmeasures_markov.grid._backends import Backend, DaskBackend, LocalBackend, Task
from irmeasures_markov.grid._cells import Cell
from irmeasures_markov.grid._runner import GridError, GridInputError, GridSummary, run_grid
from irmeasures_markov.grid._store import ParquetStore

__all__ = ["Backend", "Cell", "DaskBackend", "GridError", "GridInputError", "GridSummary", "LocalBackend",
           "ParquetStore", "Task", "run_grid"]
