"""Backends that compute the tasks of a grid: local processes or a ``dask.distributed`` cluster.

A *task* computes a batch of cells (see `runner`): an object with
``cells`` (list of `Cell`), ``needs`` (names of shared inputs
it reads, e.g. the qrels and in-memory runs), ``key`` (a deterministic name)
and ``compute(shared) -> list of arrays``.  Every backend calls the same
``compute`` on the same inputs, so the numbers do not depend on the backend.

Shared inputs move once: the local backend forks its worker processes after
publishing them (nothing is pickled); the Dask backend scatters each under a
key naming its content, to every worker (all of a grid's inputs up to
`BROADCAST_BYTES`, beyond it those several tasks need, so any worker can take
any task), and keeps it there for the next grid on the same client, so a
worker receives and
unpickles each input once per content, not once per grid.  Runs given as
file paths are not shared at all: workers read them.  Results come back as
tasks finish, those finished together in one call.

``scheduler="local"`` starts one ``LocalCluster`` per (process, worker count)
in a child process and keeps it for the next grid; each grid connects a client
and closes it, so no Dask thread outlives the call in this process (a thread
left running here pauses and restores the garbage collector under other code).
The cluster ends with this process.
"""
from __future__ import annotations

import atexit
import copy
import hashlib
import importlib
import multiprocessing
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from irmeasures_markov._util._compiled import numba_loaded
from irmeasures_markov.grid._cells import Cell

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

__all__ = ["BROADCAST_BYTES", "Backend", "DaskBackend", "LocalBackend", "QUIET_WORKERS", "SCATTER_KEEP_BYTES", "Task",
           "TaskOutcome", "close_local_clusters", "content_key", "local_cluster", "resolve_backend", "scatter_shared",
           "serve_local_cluster", "shared_local_cluster"]

#: What a backend yields per task: ``(task index, (arrays, seconds computing, worker pid), None)`` when it
#: finished, ``(task index, None, error)`` when it raised.
TaskOutcome = tuple[int, tuple[list, float, int] | None, BaseException | None]


class Task(Protocol):
    """A batch of cells computed together (the grid's unit of work).

    Attributes
    ----------
    key : str
        A deterministic name (the Dask key of the task).
    cells : list of Cell
        The cells it computes, in the order of ``compute``'s arrays.
    needs : list of str
        Names of the shared inputs it reads (qrels, in-memory runs, score matrices).
    """

    key: str
    cells: list[Cell]
    needs: list[str]

    def compute(self, shared: Mapping[str, Any]) -> list[np.ndarray]:
        """One array per cell, from the shared inputs ``{name: value}`` it ``needs``.

        Parameters
        ----------
        shared : mapping of str to any
            The shared inputs ``{name: value}``, holding at least every name in ``needs``.

        Returns
        -------
        list of numpy.ndarray
            One array per cell, in the order of ``cells``.
        """
        ...


class Backend(Protocol):
    """Where tasks run: [`LocalBackend`][irmeasures_markov.grid.LocalBackend],
    [`DaskBackend`][irmeasures_markov.grid.DaskBackend] or any object with these members."""

    name: str

    @property
    def n_workers(self) -> int:
        """Tasks that can run at once."""
        ...

    def describe(self) -> str:
        """One line saying where the tasks run (shown with the progress bar).

        Returns
        -------
        str
            The description.
        """
        ...

    def run(self, tasks: Sequence[Task], shared: Mapping[str, Any]) -> Iterator[TaskOutcome]:
        """Run ``tasks`` with the ``shared`` inputs, yielding each task's outcome as it finishes.

        Parameters
        ----------
        tasks : sequence of Task
            The tasks to compute; outcomes name them by their index in this sequence.
        shared : mapping of str to any
            The shared inputs ``{name: value}`` the tasks ``need``.

        Yields
        ------
        TaskOutcome
            ``(task index, (arrays, seconds computing, worker pid), None)`` for a task that finished,
            ``(task index, None, error)`` for one that raised.
        """
        ...

    def close(self) -> None:
        """Release what the backend started (processes, a cluster)."""
        ...

# Inputs of the running grid, published before the local pool forks.
_SHARED: dict[str, Any] = {}


def _execute(task, *payloads):
    """Run one task; returns (arrays, seconds spent computing, worker pid)."""
    shared = dict(zip(task.needs, payloads))
    t0 = time.perf_counter()
    out = task.compute(shared)
    return out, time.perf_counter() - t0, os.getpid()


def _execute_like_caller(compiled: bool, task, *payloads):
    """`_execute` on a Dask worker with numba loaded when the caller (``compiled``) has it loaded.

    The package takes its compiled kernels (the join of a run with its qrels
    among them) once numba is loaded in the process, and a forked local
    process inherits the caller's modules; a Dask worker that gets its runs
    in memory never loaded numba and joined through dict probes: twice a
    cell's CPU on the benchmark's grid (docs/benchmarks.md).  Loaded here, a
    worker computes with the engines a local process would use.
    """
    if compiled and not numba_loaded():
        try:
            importlib.import_module("numba")
        except ImportError:  # not installed on this worker: the other engines give the same values
            pass
    return _execute(task, *payloads)


def _execute_forked(task):
    return _execute(task, *[_SHARED[n] for n in task.needs])


def _outcome(i, call) -> TaskOutcome:
    """``(i, call(), None)``, or ``(i, None, error)`` when the call raises."""
    try:
        return i, call(), None
    except Exception as e:
        return i, None, e


class LocalBackend:
    """Today's local parallelism: ``n_jobs`` forked processes (1 = in this process, no Dask needed)."""

    name = "local"

    def __init__(self, n_jobs: int = 1) -> None:
        if isinstance(n_jobs, bool) or int(n_jobs) != n_jobs or n_jobs < 1:
            raise ValueError(f"`n_jobs` must be a positive integer, got {n_jobs!r}.")
        self.n_jobs = int(n_jobs)

    @property
    def n_workers(self) -> int:
        """``n_jobs``."""
        return self.n_jobs

    def __repr__(self) -> str:
        return f"LocalBackend(n_jobs={self.n_jobs})"

    def describe(self) -> str:
        """``local backend, N processes``.

        Returns
        -------
        str
            The description, with the number of processes.
        """
        return f"local backend, {self.n_jobs} process{'es' if self.n_jobs > 1 else ''}"

    def run(self, tasks: Sequence[Task], shared: Mapping[str, Any]) -> Iterator[TaskOutcome]:
        """Yield ``(task index, (arrays, seconds, pid), None)`` or ``(index, None, error)`` as tasks finish.

        Parameters
        ----------
        tasks : sequence of Task
            The tasks to compute; outcomes name them by their index in this sequence.
        shared : mapping of str to any
            The shared inputs ``{name: value}`` the tasks ``need``.

        Yields
        ------
        TaskOutcome
            ``(task index, (arrays, seconds computing, worker pid), None)`` for a task that finished,
            ``(task index, None, error)`` for one that raised.

        Raises
        ------
        RuntimeError
            ``n_jobs > 1`` where the ``fork`` start method is not available.
        """
        if self.n_jobs == 1 or len(tasks) < 2:
            for i, t in enumerate(tasks):
                yield _outcome(i, lambda t=t: _execute(t, *[shared[n] for n in t.needs]))
            return
        if "fork" not in multiprocessing.get_all_start_methods():
            raise RuntimeError("the local backend with n_jobs > 1 needs the 'fork' start method (Linux/macOS); "
                               "use n_jobs=1 or the Dask backend.")
        _SHARED.clear()
        _SHARED.update(shared)
        try:
            with ProcessPoolExecutor(self.n_jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                futs = [pool.submit(_execute_forked, t) for t in tasks]
                index = {f: i for i, f in enumerate(futs)}
                for f in as_completed(futs):
                    yield _outcome(index[f], f.result)
        finally:
            _SHARED.clear()

    def close(self) -> None:
        """Nothing to release: the processes end with each [`run`][irmeasures_markov.grid.LocalBackend.run]."""


#: Dask settings of the workers (and scheduler) of `local_cluster`: a grid's cells are Python code holding the GIL,
#: and Dask's sampling profiler (many times a second, on the worker's event loop) walked the running cell's stack
#: under that GIL: it took a tenth or more of a busy worker's CPU on the evaluation grid, the event-loop tick and
#: system monitor most of the rest of Dask's own share (docs/benchmarks.md, ``bench_grid_backends.py``).  The
#: profile only feeds the dashboard's profile page; the tick only warns of a blocked event loop.
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "200ms",
                 "distributed.admin.system-monitor.interval": "2s"}


def _worker_pythonpath() -> str:
    """The ``PYTHONPATH`` of a cluster's processes: this package's root first, so that they import this copy."""
    root = str(pathlib.Path(__file__).resolve().parents[2])
    paths = [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    return os.pathsep.join(paths)


def local_cluster(n_workers: int = 2, **kwargs: Any) -> LocalCluster:
    """A ``LocalCluster`` of ``n_workers`` single-threaded worker processes that import this very package.

    Workers are new processes: without help they would import
    ``irmeasures_markov`` from wherever their ``sys.path`` finds it (e.g. an
    installed copy while the client runs a source tree), and could compute
    with other code.  The package's parent directory is put first on their
    ``PYTHONPATH``.

    Dask starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which fixes
    glibc's allocation thresholds: every array above 128 KiB is then mapped
    and unmapped anew, and a grid cell costs about 30% more than in a plain
    process (docs/benchmarks.md, ``bench_grid.py``).  Workers started here go
    without it, and without Dask's statistical profiler (`QUIET_WORKERS`); for
    workers you start yourself see docs/scaling.md.
    """
    import dask  # optional: the [dask] extra
    from distributed import LocalCluster
    kwargs.setdefault("dashboard_address", ":0")
    # None drops the variable from what the nannies set before spawning a worker (also on a restart).
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None, **QUIET_WORKERS}):
        # a copy for the nannies: they keep the settings they were started with for the workers they restart
        settings = {"distributed": copy.deepcopy(dask.config.get("distributed"))}
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                            env={"PYTHONPATH": _worker_pythonpath()}, config=settings, **kwargs)


def serve_local_cluster(n_workers: int) -> None:
    """Child-process side of ``scheduler="local"``: start a `local_cluster`, print its address, hold it until the
    parent closes our standard input (at its exit) or dies."""
    parent = os.getppid()
    cluster = local_cluster(n_workers)
    print(cluster.scheduler_address, flush=True)
    reader = threading.Thread(target=sys.stdin.read, daemon=True)
    reader.start()
    try:
        # the parent's death is watched too: a process it forked may still hold our input open
        while reader.is_alive() and os.getppid() == parent:
            reader.join(1.0)
    finally:
        cluster.close()


# The clusters of ``scheduler="local"``, by worker count: {n: (child process, scheduler address)}.
_CLUSTERS: dict[int, tuple[subprocess.Popen, str]] = {}
_CLUSTERS_LOCK = threading.Lock()


def shared_local_cluster(n_workers: int) -> str:
    """Scheduler address of this process's ``LocalCluster`` of ``n_workers``, started in a child process at first
    use (a second one is not started: each start costs seconds, more than a small grid)."""
    with _CLUSTERS_LOCK:
        known = _CLUSTERS.get(n_workers)
        if known is not None and known[0].poll() is None:
            return known[1]
        env = {**os.environ, "PYTHONPATH": _worker_pythonpath()}
        code = ("import sys; from irmeasures_markov.grid._backends import serve_local_cluster; "
                "serve_local_cluster(int(sys.argv[1]))")
        log = tempfile.TemporaryFile()  # Dask's log lines stay out of the user's terminal; shown if the start fails
        # its own session: a Ctrl-C meant for this process does not tear the cluster down under a running grid
        proc = subprocess.Popen([sys.executable, "-c", code, str(n_workers)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, env=env, text=True, start_new_session=True)
        address = proc.stdout.readline().strip()
        if not address:
            proc.wait()
            log.seek(0)
            tail = log.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"the LocalCluster of {n_workers} workers did not start (exit status "
                               f"{proc.returncode}):\n{tail}")
        if not _CLUSTERS:
            atexit.register(close_local_clusters)
        _CLUSTERS[n_workers] = (proc, address)
        return address


def close_local_clusters() -> None:
    """Stop the clusters of ``scheduler="local"`` (at exit; a later call starts a new one)."""
    with _CLUSTERS_LOCK:
        procs = [proc for proc, _ in _CLUSTERS.values()]
        _CLUSTERS.clear()
    for proc in procs:
        try:
            proc.stdin.close()  # the child closes its cluster on end of input
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


#: Inputs of a grid (pickled bytes, together) sent to every worker, so that any worker can take any task.
BROADCAST_BYTES = 256 * 2**20
#: Bytes of inputs kept scattered per client for later grids (least recently used beyond it are released).
SCATTER_KEEP_BYTES = 512 * 2**20
# Inputs scattered per open client, by content key: {client: {key: (future, bytes)}}, least recently used first.
_SCATTERED: dict[Any, OrderedDict[str, tuple[Any, int]]] = {}
_SCATTERED_LOCK = threading.Lock()  # grids may run from several threads of one process


def content_key(value: Any) -> tuple[str, int]:
    """A Dask key naming ``value``'s content (its pickle's hash) and the pickle's size: equal bytes, equal data."""
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return "grid-input-" + hashlib.sha256(blob).hexdigest()[:32], len(blob)


def scatter_shared(client: Client, shared: Mapping[str, Any], uses: Mapping[str, int],
                   n_workers: int) -> dict[str, Future]:
    """Futures of the inputs ``shared``, each scattered once per content and client.

    Inputs go to every worker at once when the grid's inputs together hold at
    most `BROADCAST_BYTES`, and any input several tasks use (``uses[name]``)
    does in any case: no worker waits for a copy from a busy peer, and a task
    is not tied to the worker holding its run, so the scheduler spreads the
    tasks by load alone (pinned to their runs, 8 tasks went 5 and 3 to two
    workers, the second then idle for most of a task).  Larger inputs used by
    one task go to one worker.  Futures are kept for later grids up to
    `SCATTER_KEEP_BYTES` per client.
    """
    with _SCATTERED_LOCK:
        for c in [c for c in _SCATTERED if c.status in ("closing", "closed")]:
            del _SCATTERED[c]  # its futures are gone with it
        kept = _SCATTERED.setdefault(client, OrderedDict())
        out, todo = {}, {}  # todo: {key: [value, size, names, tasks using it]}
        everywhere, grid_bytes = n_workers > 1, 0
        for name, value in shared.items():
            key, size = content_key(value)
            grid_bytes += size
            held = kept.get(key)
            if held is not None and held[0].status == "finished":
                kept.move_to_end(key)
                out[name] = held[0]
            else:
                entry = todo.setdefault(key, [value, size, [], 0])
                entry[2].append(name)
                entry[3] += uses.get(name, 0)
        for broadcast in (False, True):
            items = {k: e for k, e in todo.items()
                     if (everywhere and (e[3] > 1 or grid_bytes <= BROADCAST_BYTES)) == broadcast}
            if not items:
                continue
            futures = client.scatter({k: e[0] for k, e in items.items()}, broadcast=broadcast, hash=False)
            for k, (_, size, names, _) in items.items():
                kept[k] = (futures[k], size)
                out.update(dict.fromkeys(names, futures[k]))
        total = sum(size for _, size in kept.values())
        current = {f.key for f in out.values()}
        for k in list(kept):
            if total <= SCATTER_KEEP_BYTES:
                break
            if k not in current:
                total -= kept.pop(k)[1]
    return out


class DaskBackend:
    """Tasks on a ``dask.distributed`` cluster.

    Parameters
    ----------
    client : distributed.Client, optional
        An existing client (left open at the end).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``) to connect to.
    n_workers : int, optional
        With neither: this process's ``LocalCluster`` of ``n_workers`` single-threaded worker processes (default
        2), started at first use and kept for later grids until the process exits; the backend's client is closed
        with the backend.

    Notes
    -----
    A worker that dies mid-grid loses its running tasks; the scheduler
    reruns them elsewhere (Dask's ``distributed.scheduler.allowed-failures``,
    3 by default), and each task's result is taken once, when its future
    completes, so no cell is lost or counted twice.  Shared inputs stay
    scattered on the cluster for the next grid on the same client (up to
    `SCATTER_KEEP_BYTES`).
    """

    name = "dask"

    def __init__(self, client: Client | None = None, *, scheduler: str | None = None,
                 n_workers: int | None = None) -> None:
        if client is not None and scheduler is not None:
            raise ValueError("give `client` or `scheduler`, not both.")
        if n_workers is not None and (isinstance(n_workers, bool) or int(n_workers) != n_workers or n_workers < 1):
            raise ValueError(f"`n_workers` must be a positive integer, got {n_workers!r}.")
        self._client = client
        self.scheduler = scheduler
        self._n_workers = n_workers
        self._own = []

    def __repr__(self) -> str:
        where = self.scheduler or ("client" if self._client is not None else f"LocalCluster({self._n_workers or 2})")
        return f"DaskBackend({where})"

    @property
    def client(self) -> Client:
        """The ``distributed.Client``, connected (to this process's ``LocalCluster``, started if needed) at first
        use.

        Raises
        ------
        ImportError
            ``dask.distributed`` is not installed.
        """
        if self._client is None:
            try:
                from distributed import Client
            except ImportError as e:  # pragma: no cover - depends on the installation
                raise ImportError("the Dask backend needs dask.distributed: pip install "
                                  "'irmeasures-markov[dask]'") from e
            self._client = Client(self.scheduler or shared_local_cluster(self._n_workers or 2),
                                  set_as_default=False)
            self._own.insert(0, self._client)
        return self._client

    @property
    def n_workers(self) -> int:
        """Worker threads of the cluster (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def describe(self) -> str:
        """The scheduler's address, worker threads and dashboard link.

        Returns
        -------
        str
            The description (connecting the client, or starting its cluster, if not done yet).
        """
        c = self.client
        return f"dask backend, scheduler {c.scheduler.address}, {self.n_workers} worker threads; " \
               f"dashboard {c.dashboard_link}"

    def run(self, tasks: Sequence[Task], shared: Mapping[str, Any]) -> Iterator[TaskOutcome]:
        """Scatter the shared inputs (once per content), submit every task, yield each outcome as it completes.

        Parameters
        ----------
        tasks : sequence of Task
            The tasks to compute; outcomes name them by their index in this sequence.
        shared : mapping of str to any
            The shared inputs ``{name: value}`` the tasks ``need``.

        Yields
        ------
        TaskOutcome
            ``(task index, (arrays, seconds computing, worker pid), None)`` for a task that finished,
            ``(task index, None, error)`` for one that raised.
        """
        from distributed import as_completed
        client = self.client
        uses = Counter(n for t in tasks for n in t.needs)
        futures = scatter_shared(client, {n: shared[n] for n in sorted(uses)}, uses,
                                 self.n_workers) if uses else {}
        compiled = numba_loaded()
        futs = [client.submit(_execute_like_caller, compiled, t, *[futures[n] for n in t.needs], key=t.key,
                              pure=False) for t in tasks]
        index = {f.key: i for i, f in enumerate(futs)}
        try:
            # the tasks finished since the last look are fetched in one call, not one round trip each
            for batch in as_completed(futs, loop=client.loop).batches():
                done = [f for f in batch if f.status == "finished"]
                for f in batch:
                    if f.status != "finished":
                        yield _outcome(index[f.key], f.result)
                values = client.gather(done) if done else []
                for f, value in zip(done, values):
                    yield index[f.key], value, None
                    f.release()
        finally:
            for f in futs:
                f.release()

    def close(self) -> None:
        """Close the client this backend connected (a client given to it, and the process's ``LocalCluster``,
        stay)."""
        owned = bool(self._own)
        for obj in self._own:
            with _SCATTERED_LOCK:
                _SCATTERED.pop(obj, None)
            obj.close()
        self._own = []
        if owned:
            self._client = None


def resolve_backend(backend: Backend | str | None = None, *, client: Client | None = None,
                    scheduler: str | None = None, n_jobs: int = 1) -> tuple[Backend, bool]:
    """The backend asked for: an instance, ``"local"``/None, ``"dask"``, or ``client=``/``scheduler=``.

    ``scheduler="local"`` (or ``backend="dask"`` without an address) runs on this
    process's ``LocalCluster`` of ``n_jobs`` workers (at least 2 when ``n_jobs`` is 1),
    started at the first such call and kept until the process exits.

    Parameters
    ----------
    backend : Backend, {'local', 'dask'} or None
        An instance is used as it is; None means local unless ``client`` or ``scheduler`` is given.
    client : distributed.Client, optional
        Run on this client's cluster.
    scheduler : str, optional
        A scheduler address, or ``"local"`` for this process's ``LocalCluster``.
    n_jobs : int
        Local processes, or the workers of the ``LocalCluster``.

    Returns
    -------
    (Backend, bool)
        The backend and whether it is ``owned``: owned backends are closed by the caller.

    Raises
    ------
    ValueError
        An unknown backend name, or an instance together with ``client``/``scheduler``.
    """
    if backend is not None and not isinstance(backend, str):
        if client is not None or scheduler is not None:
            raise ValueError("give a backend instance or `client`/`scheduler`, not both.")
        return backend, False
    if client is not None or scheduler is not None or backend == "dask":
        if backend not in (None, "dask"):
            raise ValueError(f"backend={backend!r} with a Dask client or scheduler: use backend='dask' or None.")
        if scheduler == "local":
            scheduler = None
        if client is not None:
            return DaskBackend(client), False
        return DaskBackend(scheduler=scheduler, n_workers=None if scheduler else max(2, int(n_jobs))), True
    if backend in (None, "local"):
        return LocalBackend(n_jobs), False
    raise ValueError(f"unknown backend {backend!r}; choose 'local' or 'dask' (or pass a DaskBackend).")
