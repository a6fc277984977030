"""Experiment grids on one machine or a Dask cluster, resumable from a Parquet store.

An evaluation study is a grid of *cells* — (collection, run, measure set,
pool sample, resample) — each one array.  This package computes such grids
on a *backend* and keeps finished cells in a *store*:

* :class:`LocalBackend` — local processes (``n_jobs``; 1 = this process),
  the default, needs no Dask;
* :class:`DaskBackend` — a ``dask.distributed`` cluster: ``client=``, a
  scheduler address, or a ``LocalCluster`` when neither is given;
* :class:`ParquetStore` — finished cells keyed by the cell and by content
  hashes of its qrels and run; a rerun computes only the missing cells.

Every backend runs the same cell code on the same inputs, so the numbers are
bit-for-bit those of the local backend (and of
:func:`irmeasures_markov.experiments.evaluate`).  ``docs/scaling.md`` says how
to run on a real cluster.
"""
from .backends import DaskBackend, LocalBackend, resolve_backend
from .cells import Cell, file_hash, measures_key, qrels_hash, run_hash
from .evaluation import EvaluationGrid, GridResult, evaluate_grid
from .runner import GridError, GridSummary, run_grid
from .store import ParquetStore

__all__ = ["Cell", "DaskBackend", "EvaluationGrid", "GridError", "GridResult", "GridSummary", "LocalBackend",
           "ParquetStore", "evaluate_grid", "file_hash", "measures_key", "qrels_hash", "resolve_backend",
           "run_grid", "run_hash"]
