"""The experiment grid: bit-identical numbers on every backend, a resumable store, faults.

Checked against independent computations: :func:`experiments.evaluate` on the
downsampled qrels (the pre-grid code path) for every cell, and arrays that a
toy task derives from its cell alone for the store and fault tests.
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
from synthetic_collection import synthetic, write_run

from irmeasures_markov.experiments import EvaluationGrid, evaluate, evaluate_grid, pool_reduction
from irmeasures_markov.grid import Cell, DaskBackend, GridError, LocalBackend, ParquetStore, run_grid
from irmeasures_markov.grid._backends import resolve_backend
from irmeasures_markov.grid._cells import qrels_hash, run_hash
from irmeasures_markov.io import downsample_qrels

distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

MEASURES = {"AP": "AP", "P@5": "P@5", "bpref": "Bpref", "nDCG": "nDCG", "MP": "MP", "MP rec": "MP(recall=True)"}
POOLS = [100, (50, 1), (30, 0), (30, 7), (10, 2)]


def _topics(qrels):
    return sorted(qrels, key=lambda q: (len(q), q))


def _reference(qrels, runs, pools, measures=MEASURES):
    """Per pool, evaluate() on the downsampled qrels: the code path before the grid existed."""
    out = {}
    for p in pools:
        pc, seed = (p, 0) if not isinstance(p, tuple) else p
        q = qrels if pc == 100 else downsample_qrels(qrels, pc, seed=seed)
        out[(float(pc), 0 if pc == 100 else seed)] = evaluate(measures, q, runs, topics=_topics(qrels),
                                                              progress=False).values
    return out


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=21, n_runs=7, n_docs=90)


def _assert_same(evs, ref):
    assert set(evs) == set(ref)
    for pool, values in ref.items():
        np.testing.assert_array_equal(evs[pool].values, values, err_msg=str(pool))


def test_local_backend_equals_evaluate_bit_for_bit(data):
    qrels, runs = data
    ref = _reference(qrels, runs, POOLS)
    for n_jobs in (1, 2):
        evs, summary = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, n_jobs=n_jobs, progress=False)
        _assert_same(evs, ref)
        assert summary.done == summary.total == len(runs) * len(POOLS) and summary.cached == 0
    assert list(evs[(30.0, 7)].labels) == list(MEASURES)


def test_blocks_with_equal_judgments_share_their_qrels_and_changed_ones_do_not(data):
    """One qrels object (hence one token: sent and indexed once) for blocks judging alike, compared by content."""
    qrels, runs = data
    changed = {q: dict(d) for q, d in qrels.items()}
    q0 = next(iter(changed))
    d0 = next(iter(changed[q0]))
    changed[q0][d0] = 1 - min(changed[q0][d0], 1)
    g = EvaluationGrid()
    same = g.add(["AP"], qrels, runs)
    again = g.add(["MP"], qrels, runs)
    copy = g.add(["P@5"], {q: dict(d) for q, d in qrels.items()}, runs)
    other = g.add(["AP"], changed, runs)
    blocks = g._blocks
    assert blocks[again].qrels is blocks[same].qrels and blocks[copy].qrels is blocks[same].qrels
    assert blocks[other].qrels is not blocks[same].qrels and blocks[other].qrels == changed
    res = g.run(progress=False)
    topics = _topics(qrels)
    for b, measures, q in ((same, ["AP"], qrels), (again, ["MP"], qrels), (copy, ["P@5"], qrels),
                           (other, ["AP"], changed)):
        ref = evaluate(measures, q, runs, topics=topics, progress=False).values
        np.testing.assert_array_equal(res.evaluations(b)[(100.0, 0)].values, ref)


def test_scorers_kept_in_this_process_are_keyed_by_the_qrels_content(data):
    """A scorer kept from an earlier grid serves only judgments of the same content: qrels changed in place
    between two grids (the same dict) are scored anew."""
    qrels, runs = data
    qrels = {q: dict(d) for q, d in qrels.items()}
    pools = [100, (30, 0)]
    _assert_same(evaluate_grid(["AP", "MP"], qrels, runs, pools=pools, progress=False)[0],
                 _reference(qrels, runs, pools, ["AP", "MP"]))
    q0 = next(iter(qrels))
    for d in qrels[q0]:
        qrels[q0][d] = 1 - min(1, qrels[q0][d])
    _assert_same(evaluate_grid(["AP", "MP"], qrels, runs, pools=pools, progress=False)[0],
                 _reference(qrels, runs, pools, ["AP", "MP"]))


def test_dask_backend_equals_local_bit_for_bit(data, client, tmp_path):
    qrels, runs = data
    local, _ = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, progress=False)
    evs, summary = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, client=client, progress=False)
    _assert_same(evs, {p: e.values for p, e in local.items()})
    assert summary.backend == "dask" and summary.workers == 2
    import irmeasures_markov  # the workers compute with this very package, not another installed copy
    assert set(client.run(lambda: __import__("irmeasures_markov").__file__).values()) == {irmeasures_markov.__file__}
    # runs given as paths are read by the workers, never shipped from the client
    paths = {n: str(write_run(tmp_path / f"input.{n}.gz", r, gz=True)) for n, r in runs.items()}
    evs, _ = evaluate_grid(MEASURES, qrels, paths, pools=POOLS, client=client, progress=False)
    _assert_same(evs, {p: e.values for p, e in local.items()})


def test_pool_reduction_routes_through_the_grid(data, client, tmp_path):
    qrels, runs = data
    old = pool_reduction(MEASURES, qrels, runs, percents=(50, 10), seed=3, progress=False)
    ref = _reference(qrels, runs, [100, (50, 3), (10, 3)])
    for e, key in zip(old.evaluations, [(100.0, 0), (50.0, 3), (10.0, 3)]):
        np.testing.assert_array_equal(e.values, ref[key])
    new = pool_reduction(MEASURES, qrels, runs, percents=(50, 10), seed=3, progress=False, client=client,
                         store=tmp_path / "store")
    np.testing.assert_array_equal(new.tau, old.tau)
    np.testing.assert_array_equal(new.mean_scores, old.mean_scores)
    again = pool_reduction(MEASURES, qrels, runs, percents=(50, 10), seed=3, progress=False,
                           store=tmp_path / "store")
    np.testing.assert_array_equal(again.tau, old.tau)


def test_store_resumes_and_keys_by_content(data, tmp_path):
    qrels, runs = data
    store = ParquetStore(tmp_path / "s")
    _, s1 = evaluate_grid(MEASURES, qrels, runs, pools=POOLS[:2], store=store, progress=False)
    assert (s1.done, s1.cached) == (len(runs) * 2, 0)
    evs, s2 = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, store=store, progress=False)
    assert (s2.done, s2.cached) == (len(runs) * 3, len(runs) * 2)
    _assert_same(evs, _reference(qrels, runs, POOLS))
    # everything cached: nothing computed, same bits
    evs, s3 = evaluate_grid(MEASURES, qrels, runs, pools=POOLS, store=store, progress=False)
    assert (s3.done, s3.cached, s3.tasks) == (0, s3.total, 0)
    _assert_same(evs, _reference(qrels, runs, POOLS))
    # one changed judgment changes the qrels hash: every cell is recomputed, none reused
    q2 = {q: dict(d) for q, d in qrels.items()}
    q, d = next(iter(q2.items()))
    doc = next(iter(d))
    d[doc] = 1 - min(d[doc], 1)
    assert qrels_hash(q2) != qrels_hash(qrels)
    _, s4 = evaluate_grid(MEASURES, q2, runs, pools=POOLS[:1], store=store, progress=False)
    assert s4.cached == 0
    # one changed score: only that run's cells are recomputed
    r2 = dict(runs)
    name = next(iter(runs))
    r2[name] = {q: dict(docs) for q, docs in runs[name].items()}
    q = next(iter(r2[name]))
    doc = next(iter(r2[name][q]))
    r2[name][q][doc] += 1.0
    assert run_hash(r2[name]) != run_hash(runs[name])
    _, s5 = evaluate_grid(MEASURES, qrels, r2, pools=POOLS, store=store, progress=False)
    assert (s5.done, s5.cached) == (len(POOLS), (len(runs) - 1) * len(POOLS))


# --------------------------------------------------------------------------- generic grid: toy tasks

def _toy_value(cell):
    seed = int(cell.key[:8], 16)
    return np.random.default_rng(seed).random((2, 3))


@dataclass
class ToyTask:
    key: str
    cells: list[Cell]
    needs: list[str]
    sleep: float = 0.0

    def compute(self, shared):
        time.sleep(self.sleep)
        return [_toy_value(c) + shared["offset"] for c in self.cells]


def toy_cells(n):
    return [Cell("toy", "c", f"run{i}", "m", 100.0, 0) for i in range(n)]


def toy_tasks(per_task=2, sleep=0.0):
    def make(missing):
        return [ToyTask(f"toy-{missing[a].key}", missing[a:a + per_task], ["offset"], sleep)
                for a in range(0, len(missing), per_task)]
    return make


def test_two_clients_on_one_store_do_not_corrupt_it(tmp_path):
    cells = toy_cells(40)
    store_path = tmp_path / "shared"
    out = {}

    def client(i):
        out[i] = run_grid(cells, toy_tasks(per_task=1, sleep=0.002), lambda n: {"offset": 0.0},
                          backend=LocalBackend(1), store=ParquetStore(store_path), progress=False,
                          flush_seconds=0.0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = ParquetStore(store_path).get()
    assert set(stored) == {c.key for c in cells}
    for c in cells:
        np.testing.assert_array_equal(stored[c.key], _toy_value(c))
        for i in range(2):
            np.testing.assert_array_equal(out[i][0][c.key], _toy_value(c))
    assert not list(store_path.glob(".*"))  # no temporary file left behind
    parts, rows = ParquetStore(store_path).compact()
    assert parts >= 2 and rows == len(cells)
    assert set(ParquetStore(store_path).get()) == {c.key for c in cells}


def test_failed_tasks_are_counted_and_the_rest_stored(tmp_path):
    cells = toy_cells(6)

    class Bad(ToyTask):
        def compute(self, shared):
            if any(c.run == "run3" for c in self.cells):
                raise ValueError("broken run3")
            return super().compute(shared)

    def make(missing):
        return [Bad(f"bad-{c.key}", [c], ["offset"]) for c in missing]

    store = ParquetStore(tmp_path / "s")
    with pytest.raises(GridError, match="broken run3") as e:
        run_grid(cells, make, lambda n: {"offset": 0.0}, backend=LocalBackend(1), store=store, progress=False)
    assert (e.value.summary.done, e.value.summary.failed) == (5, 1)
    assert len(store.keys()) == 5


@pytest.mark.slow  # kills and restarts a child process
def test_a_killed_client_resumes(tmp_path):
    store_path = tmp_path / "s"
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{os.path.dirname(__file__)!r}, {os.path.dirname(os.path.dirname(__file__))!r}]  # + tests/
        from test_grid import toy_cells, toy_tasks
        from irmeasures_markov.grid import LocalBackend, ParquetStore, run_grid
        run_grid(toy_cells(60), toy_tasks(per_task=1, sleep=0.2), lambda n: {{"offset": 0.0}},
                 backend=LocalBackend(1), store=ParquetStore({str(store_path)!r}), progress=False,
                 flush_seconds=0.0)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    try:
        deadline = time.time() + 120  # the child's imports can take long on a loaded machine
        while time.time() < deadline and len(ParquetStore(store_path).parts()) < 5:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_before = len(ParquetStore(store_path).keys())
    assert 5 <= n_before < 60
    cells = toy_cells(60)
    res, summary = run_grid(cells, toy_tasks(), lambda n: {"offset": 0.0}, backend=LocalBackend(1),
                            store=ParquetStore(store_path), progress=False)
    assert (summary.cached, summary.done) == (n_before, 60 - n_before)
    for c in cells:
        np.testing.assert_array_equal(res[c.key], _toy_value(c))


def test_a_killed_worker_loses_and_doubles_nothing(client, tmp_path):
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import the test module
    cells = toy_cells(24)
    pids = list(client.run(os.getpid).values())
    killed, after = [], []

    backend = DaskBackend(client)
    inner = backend.run

    def run(tasks, shared):
        for k, item in enumerate(inner(tasks, shared)):
            if killed:
                after.append(item[1][2])  # the pid that computed this task
            if k == 0 and not killed:  # mid-grid: both workers are busy with a 0.25 s task right now
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            yield item

    backend.run = run
    store = ParquetStore(tmp_path / "s")
    res, summary = run_grid(cells, toy_tasks(per_task=1, sleep=0.25), lambda n: {"offset": 1.0}, backend=backend,
                            store=store, progress=False)
    # tasks that finished together are fetched together, so a few finished by the killed worker before its death
    # may come after the kill; the last ones cannot
    assert killed and len(after) == 23 and after[-1] != pids[0]
    assert summary.done == 24 and summary.failed == 0
    for c in cells:
        np.testing.assert_array_equal(res[c.key], _toy_value(c) + 1.0)
    stored = store.get()
    assert len(stored) == 24
    import pyarrow.parquet as pq
    rows = sum(pq.read_metadata(p).num_rows for p in store.parts())
    assert rows == 24  # each cell written exactly once
    client.wait_for_workers(2, timeout=30)  # the nanny restarted the worker
    # the restarted worker, too, runs with glibc's own allocation thresholds (see the next test)
    assert set(client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_").values()) == {None}


def test_local_cluster_workers_keep_glibc_allocation_thresholds(client):
    """Dask sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, making every grid cell ~30% slower; ours do not."""
    import dask
    assert dask.config.get("distributed.nanny.pre-spawn-environ").get("MALLOC_TRIM_THRESHOLD_") is not None
    assert set(client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_").values()) == {None}
    # the numpy thread limits Dask sets are kept: one thread per single-threaded worker
    assert set(client.run(os.environ.get, "OPENBLAS_NUM_THREADS").values()) == {"1"}


def test_local_cluster_workers_run_without_the_sampling_profiler(client):
    """Dask's profiler sampled the running cell's stack every 10 ms under the GIL (10-15% of a busy worker's CPU on
    an evaluation grid); the workers of local_cluster go without it, and with a slower event-loop tick."""
    import dask
    assert dask.config.get("distributed.worker.profile.enabled")  # Dask's default, left alone in this process

    def housekeeping(dask_worker):
        return len(set(dask_worker.periodic_callbacks) & {"profile", "profile-cycle"}), dask_worker._tick_interval

    assert set(map(tuple, client.run(housekeeping).values())) == {(0, 0.2)}


def test_backend_validation(data, tmp_path):
    qrels, runs = data
    with pytest.raises(ValueError, match="n_jobs"):
        LocalBackend(0)
    with pytest.raises(ValueError, match="unknown backend"):
        resolve_backend("spark")
    with pytest.raises(ValueError, match="not both"):
        DaskBackend(object(), scheduler="tcp://x:1")
    be, owned = resolve_backend(scheduler="local", n_jobs=1)
    try:
        assert isinstance(be, DaskBackend) and owned
    finally:
        be.close()  # a cluster it owns, if it started one, stops with it
    with pytest.raises(ValueError, match="percent"):
        evaluate_grid(["AP"], qrels, runs, pools=[0], progress=False)
    with pytest.raises(FileNotFoundError, match="no such file"):
        evaluate_grid(["AP"], qrels, {"x": "/nonexistent/run"}, progress=False)
    with pytest.raises(ValueError, match="empty"):
        EvaluationGrid().run()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="directory"):
        ParquetStore(tmp_path / "afile")


def test_without_dask_or_pyarrow_the_local_backend_still_works(data, monkeypatch, tmp_path):
    qrels, runs = data
    for m in ("distributed", "dask", "pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, m, None)  # import of these now raises ImportError
    evs, _ = evaluate_grid(["AP"], qrels, runs, pools=[100, (30, 1)], progress=False)
    np.testing.assert_array_equal(evs[(30.0, 1)].values, _reference(qrels, runs, [(30, 1)], ["AP"])[(30.0, 1)])
    with pytest.raises(ImportError, match=r"irmeasures-markov\[dask\]"):
        evaluate_grid(["AP"], qrels, runs, store=tmp_path / "s", progress=False)
    with pytest.raises(ImportError, match=r"irmeasures-markov\[dask\]"):
        evaluate_grid(["AP"], qrels, runs, scheduler="local", progress=False)


def test_cells_of_a_store_written_before_the_float64_standard_measures_are_recomputed(data, tmp_path, monkeypatch):
    """A store written when R@k, SetP, ... went through pytrec_eval's float32 scores (cell format 2, the same
    package version) holds other values under the same keys: they are recomputed, never served."""
    from irmeasures_markov.experiments import _grid as grid_module
    from irmeasures_markov.grid import _cells

    qrels, runs = data
    measures = ["R@10", "SetP", "AP"]
    store = ParquetStore(tmp_path / "s")
    fresh = _reference(qrels, runs, [100], measures)[(100.0, 0)]
    with monkeypatch.context() as m:  # the store as format 2 wrote it: other values (stand-ins for float32's)
        m.setattr(_cells, "CELL_FORMAT", "2")
        m.setattr(grid_module.RunScorer, "__call__", lambda self, run: np.full((3, len(self.topics)), -1.0))
        evaluate_grid(measures, qrels, runs, store=store, progress=False)
    evs, summary = evaluate_grid(measures, qrels, runs, store=store, progress=False)
    assert (summary.cached, summary.done) == (0, len(runs))
    np.testing.assert_array_equal(evs[(100.0, 0)].values, fresh)
