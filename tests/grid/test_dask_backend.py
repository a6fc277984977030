"""The Dask backend's costs and faults: inputs shipped once per content, one LocalCluster per process for
``scheduler="local"`` with no thread left behind, a killed worker survived on an evaluation grid.

Values are checked against the local backend (in this process), bit for bit.
"""
import gc
import os
import signal
import threading

import numpy as np
import pytest
from synthetic_collection import synthetic, write_run

from irmeasures_markov.experiments import evaluate_grid
from irmeasures_markov.grid import DaskBackend, ParquetStore
from irmeasures_markov.grid._backends import close_local_clusters, shared_local_cluster

distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

MEASURES = ["AP", "P@5", "MP", "MP(recall=True)"]
POOLS = [100] + [(pc, s) for s in range(4) for pc in (70, 30)]


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=38, n_runs=6, n_docs=80)


def _same(evs, ref):
    assert set(evs) == set(ref)
    for pool in ref:
        np.testing.assert_array_equal(evs[pool].values, ref[pool].values, err_msg=str(pool))


def test_inputs_are_shipped_once_per_content_and_client(data, client, monkeypatch):
    qrels, runs = data
    local, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, progress=False)
    shipped = []
    scatter = client.scatter

    def counting(data, **kwargs):
        shipped.extend(data)
        return scatter(data, **kwargs)
    monkeypatch.setattr(client, "scatter", counting)
    evs, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, client=client, progress=False, runs_per_task=1)
    _same(evs, local)
    assert len(shipped) == 1 + len(runs)  # the qrels and each run, once
    # the next grid on the same client (another seed, as pool_reduction calls do) ships nothing again
    evs, _ = evaluate_grid(MEASURES, qrels, runs, pools=[(50, 9)], client=client, progress=False)
    assert len(shipped) == 1 + len(runs)
    # changed judgments are other content: shipped, and their values are theirs
    changed = {q: dict(d) for q, d in qrels.items()}
    q0 = next(iter(changed))
    d0 = next(iter(changed[q0]))
    changed[q0][d0] = 1 - min(1, changed[q0][d0])
    evs, _ = evaluate_grid(MEASURES, changed, runs, pools=POOLS, client=client, progress=False)
    assert len(shipped) == 2 + len(runs)
    _same(evs, evaluate_grid(MEASURES, changed, runs, pools=POOLS, progress=False)[0])
    # two names for equal runs: one copy on the cluster, both names served
    first = next(iter(runs))
    twins = {"a": runs[first], "b": {q: dict(d) for q, d in runs[first].items()}}
    evs, _ = evaluate_grid(MEASURES, qrels, twins, pools=POOLS, client=client, progress=False)
    _same(evs, evaluate_grid(MEASURES, qrels, twins, pools=POOLS, progress=False)[0])


@pytest.mark.slow  # starts a LocalCluster
def test_workers_load_numba_when_the_client_has_it_and_values_stay(data):
    """The package takes its compiled kernels (the run-qrels join) once numba is loaded; forked local processes
    inherit it from the client, a Dask worker given its runs in memory loads it before its task (without it a
    cell cost twice its CPU on the benchmark's grid). The values are the same bits either way."""
    pytest.importorskip("numba")
    import sys
    qrels, runs = data
    local, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, progress=False)
    from irmeasures_markov.grid._backends import local_cluster
    with local_cluster(1) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        def loaded():
            return "numba" in sys.modules
        assert set(client.run(loaded).values()) == {False}
        evs, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, client=client, progress=False)
        _same(evs, local)
        assert set(client.run(loaded).values()) == {True}


@pytest.mark.slow  # starts a LocalCluster
def test_scheduler_local_reuses_one_cluster_and_leaves_no_thread(data):
    qrels, runs = data
    local, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, progress=False)
    before = set(threading.enumerate())
    try:
        evs, summary = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, scheduler="local", n_jobs=2,
                                     progress=False)
        _same(evs, local)
        assert summary.backend == "dask" and summary.workers == 2
        # no Dask thread outlives the call (one left running here pauses and restores the garbage collector
        # under later code)
        assert set(threading.enumerate()) <= before
        address = shared_local_cluster(2)  # the cluster the call started, not a new one
        evs, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, scheduler="local", n_jobs=2, progress=False)
        _same(evs, local)
        assert shared_local_cluster(2) == address
        assert set(threading.enumerate()) <= before and gc.isenabled()
    finally:
        close_local_clusters()
    assert set(threading.enumerate()) <= before


@pytest.mark.slow  # starts a LocalCluster and kills one of its workers
def test_a_killed_worker_mid_grid_is_survived_and_the_store_resumes(data, tmp_path):
    qrels, runs = data
    paths = {n: str(write_run(tmp_path / f"input.{n}.gz", r, gz=True)) for n, r in runs.items()}
    local, _ = evaluate_grid(MEASURES, qrels, paths, pools=POOLS, progress=False)
    from irmeasures_markov.grid._backends import local_cluster
    with local_cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        pids = list(client.run(os.getpid).values())
        backend = DaskBackend(client)
        inner = backend.run
        killed, after = [], []

        def run(tasks, shared):
            for k, item in enumerate(inner(tasks, shared)):
                if killed:
                    after.append(item)
                if k == 0:  # mid-grid: the other tasks are queued or running on both workers
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                yield item
        backend.run = run
        store = ParquetStore(tmp_path / "store")
        evs, summary = evaluate_grid(MEASURES, qrels, paths, pools=POOLS, backend=backend, store=store,
                                     runs_per_task=1, progress=False)
        assert killed and len(after) == len(runs) - 1 and all(err is None for _, _, err in after)
        assert (summary.done, summary.failed) == (len(runs) * len(POOLS), 0)
        _same(evs, local)
        assert len(store.keys()) == len(runs) * len(POOLS)  # each cell stored, once
        # a rerun on the same store computes nothing and returns the same bits
        evs, again = evaluate_grid(MEASURES, qrels, paths, pools=POOLS, backend=backend, store=store,
                                   progress=False)
        assert (again.done, again.cached) == (0, len(runs) * len(POOLS))
        _same(evs, local)


def _cached_scorers(client):
    """Scorers each worker keeps, by worker."""
    def count():
        from irmeasures_markov.experiments import _grid
        return len(_grid._SCORERS)
    return client.run(count)


def test_workers_keep_their_scorers_from_grid_to_grid_by_the_qrels_content(data, client):
    qrels, runs = data
    local, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, progress=False)
    evs, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, client=client, progress=False)
    _same(evs, local)
    kept = _cached_scorers(client)
    # equal judgments in another dict (a new grid, no store): every pool's scorer is taken from the cache
    copy = {q: dict(d) for q, d in qrels.items()}
    evs, _ = evaluate_grid(MEASURES, copy, runs, pools=POOLS, client=client, progress=False)
    _same(evs, local)
    assert _cached_scorers(client) == kept
    # changed judgments are other content (unlike any of the module's earlier grids): new scorers, and the values
    # are the changed qrels'
    copy[next(reversed(copy))]["D-new"] = 2
    evs, _ = evaluate_grid(MEASURES, copy, runs, pools=POOLS, client=client, progress=False)
    _same(evs, evaluate_grid(MEASURES, copy, runs, pools=POOLS, progress=False)[0])
    assert sum(_cached_scorers(client).values()) > sum(kept.values())
