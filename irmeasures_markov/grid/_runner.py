"""Running a grid: skip the cells a store already holds, compute the rest on a backend, store them.

[`run_grid`][irmeasures_markov.grid.run_grid] is the one loop every grid goes through (evaluation grids,
all-pairs tests, Bayesian fits): it reads the stored cells, asks the caller to
group the missing ones into tasks, runs the tasks on the backend, writes each
finished batch to the store (every ``flush_seconds``, and at the end or on an
error, so an interrupted grid keeps what it finished) and returns every
cell's array with a [`GridSummary`][irmeasures_markov.grid.GridSummary].
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._progress import progress_bar, progress_line, show_progress
from irmeasures_markov.grid._backends import Backend, Task
from irmeasures_markov.grid._cells import Cell

if TYPE_CHECKING:
    from irmeasures_markov.grid._store import ParquetStore

__all__ = ["GridError", "GridInputError", "GridSummary", "run_grid"]


@dataclass
class GridSummary:
    """What a grid run did.

    ``done``: cells computed now; ``cached``: cells read from the store;
    ``failed``: cells whose task raised.  ``compute_seconds`` is the time
    tasks spent computing (summed over workers), ``wall_seconds`` the grid's
    wall time and ``workers`` the backend's parallelism, so
    [`overhead`][irmeasures_markov.grid.GridSummary.overhead] is the share of worker time not spent computing cells
    (scheduling, data movement, idle workers at the end).
    """
    total: int = 0
    done: int = 0
    cached: int = 0
    failed: int = 0
    tasks: int = 0
    workers: int = 1
    backend: str = ""
    wall_seconds: float = 0.0
    run_seconds: float = 0.0
    compute_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def seconds_per_cell(self) -> float:
        """Mean compute time of a computed cell (NaN when none was computed)."""
        return self.compute_seconds / self.done if self.done else float("nan")

    @property
    def overhead(self) -> float:
        """1 − compute time / (run time × workers); NaN when nothing was computed."""
        if not self.done or self.run_seconds <= 0:
            return float("nan")
        return max(0.0, 1.0 - self.compute_seconds / (self.run_seconds * self.workers))

    def __str__(self) -> str:
        s = (f"{self.total} cells: {self.done} computed, {self.cached} cached, {self.failed} failed "
             f"({self.tasks} tasks, {self.backend}, {self.wall_seconds:.1f} s")
        if self.done:
            s += f", {self.seconds_per_cell * 1e3:.1f} ms/cell, overhead {self.overhead:.1%}"
        return s + ")"


class GridError(RuntimeError):
    """Some tasks of a grid failed; the others' cells are stored.  ``summary`` says how many."""

    def __init__(self, message: str, summary: GridSummary, first: BaseException | None = None) -> None:
        super().__init__(message)
        self.summary = summary
        self.first = first


class GridInputError(GridError, InputError):
    """A [`GridError`][irmeasures_markov.grid.GridError] whose first failure is an input error (e.g. a file changed
    while the grid ran):
    the user's to fix, not a bug (the command line exits with status 2 and its message)."""


def run_grid(cells: Sequence[Cell], make_tasks: Callable[[list[Cell]], list[Task]],
             shared: Callable[[set[str]], Mapping[str, Any]], *, backend: Backend,
             store: ParquetStore | None = None, progress: bool | None = None, desc: str = "grid",
             flush_seconds: float = 2.0) -> tuple[dict[str, np.ndarray], GridSummary]:
    """Every cell's array, ``{cell.key: array}``, and a [`GridSummary`][irmeasures_markov.grid.GridSummary].

    Parameters
    ----------
    cells : sequence of Cell
        The grid's cells (a key listed twice is computed once).
    make_tasks : callable
        ``make_tasks(missing)`` groups the cells to compute into tasks (see `Task`).
    shared : callable
        ``shared(names)`` returns the shared inputs the tasks name in ``needs`` (called only when
        something is to be computed, so a fully cached grid loads nothing).
    backend : Backend
        Where the tasks run (`resolve_backend`).
    store : ParquetStore, optional
        Cells read from it are not computed; computed cells are written to it every
        ``flush_seconds``, at the end and on an error.
    progress : bool or None
        A bar, the number of cells to compute and the summary on standard error; ``None`` only when it
        is a terminal (`irmeasures_markov._util._progress.show_progress`).
    desc : str
        The bar's label.
    flush_seconds : float
        Seconds between writes to the store.

    Returns
    -------
    (dict of str to numpy.ndarray, GridSummary)

    Raises
    ------
    GridError
        A task failed (after every cell that finished was stored).
    RuntimeError
        A task returned another number of arrays than it has cells.
    """
    t0 = time.perf_counter()
    progress = show_progress(progress)
    cells = list(cells)
    keys = {c.key for c in cells}
    summary = GridSummary(total=len(keys), backend=getattr(backend, "name", type(backend).__name__))
    results: dict[str, np.ndarray] = dict(store.get(keys)) if store is not None else {}
    summary.cached = len(results)
    seen, missing = set(results), []
    for c in cells:
        if c.key not in seen:
            seen.add(c.key)
            missing.append(c)
    if not missing:
        summary.wall_seconds = time.perf_counter() - t0
        progress_line(str(summary), progress)
        return results, summary
    tasks = make_tasks(missing)
    summary.tasks = len(tasks)
    names = {n for t in tasks for n in t.needs}
    data = shared(names) if names else {}
    summary.workers = backend.n_workers
    t_run = time.perf_counter()
    if progress:
        progress_line(f"{desc}: {len(missing)} cells to compute in {len(tasks)} tasks ({summary.cached} cached) "
                      f"on the {backend.describe()}", progress)
    bar = progress_bar(None, progress, total=len(missing), desc=desc, unit="cell")
    pending_cells: list[Cell] = []
    pending_arrays: list[np.ndarray] = []
    last_flush = time.perf_counter()
    first_error = None

    def flush():
        nonlocal last_flush
        if store is not None and pending_cells:
            store.write(pending_cells, pending_arrays)
        pending_cells.clear()
        pending_arrays.clear()
        last_flush = time.perf_counter()

    try:
        for i, res, err in backend.run(tasks, data):
            task = tasks[i]
            if err is not None:
                summary.failed += len(task.cells)
                summary.errors.append(f"{task.key}: {type(err).__name__}: {err}")
                first_error = first_error or err
                bar.update(len(task.cells))
                continue
            arrays, seconds, _pid = res
            if len(arrays) != len(task.cells):
                raise RuntimeError(f"task {task.key} returned {len(arrays)} arrays for {len(task.cells)} cells")
            summary.compute_seconds += seconds
            for c, a in zip(task.cells, arrays):
                if c.key not in results:  # a retried task is taken once; cells are keyed, never added twice
                    results[c.key] = a
                    summary.done += 1
                    pending_cells.append(c)
                    pending_arrays.append(a)
            bar.update(len(task.cells))
            if time.perf_counter() - last_flush >= flush_seconds:
                flush()
    finally:
        flush()
        bar.close()
        summary.wall_seconds = time.perf_counter() - t0
        summary.run_seconds = time.perf_counter() - t_run
    progress_line(str(summary), progress)
    if isinstance(first_error, InputError):
        raise GridInputError(f"{first_error} ({summary.failed} of {summary.total} cells not computed)", summary,
                             first_error) from first_error
    if summary.failed:
        raise GridError(f"{summary.failed} of {summary.total} cells failed ({len(summary.errors)} tasks); "
                        f"first: {summary.errors[0]}", summary, first_error) from first_error
    return results, summary
