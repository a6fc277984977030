"""Benchmark: the TREC-8 pool-reduction grid on a 2-worker Dask LocalCluster vs the local backend.

The grid of the MP paper's Figures 3/4 with its seed check widened to
``--seeds`` seeds: every TREC-8 run file x the 9 measures of
``reproduce_mp_figures.py`` x (the full pool + 5 pool sizes x seeds).  With
20 seeds that is 129 x 101 = 13,029 cells.  The same ``evaluate_grid`` call
runs on

* ``local`` — the local backend with 1 process (the peer);
* ``dask`` — a ``LocalCluster`` of ``--workers`` single-threaded worker
  processes (or ``--scheduler ADDRESS``),

interleaved over ``--rounds`` rounds (integration/bench/benchkit.py), runs read by
the workers from their paths.  Reported, with the date:

* the speed-up local / dask (target >= 1.6 with 2 workers on 2 free cores);
* the efficiency projected from measured per-cell costs: the local run's
  summed cell time / (workers x the Dask wall time) (target >= 0.9), and the
  Dask run's own overhead share (1 - compute / (wall x workers));
* the scheduler's cost per task (no-op tasks) against the mean task cost
  (target: under 5% of the work);
* a cached rerun from a Parquet store vs the first run that filled it
  (target: under 5%);
* the cost of a 40-measure cell (16 MP variants, Carterette's 10 named
  measures, 14 trec_eval measures; ``--projection-runs`` runs x 6 pools on
  the local backend, ``--rounds`` rounds) and from it, with the efficiency
  measured above, the wall time of a 5,000-run x 40-measure x 100-seed grid
  (5 pool sizes x 100 seeds + the full pool) on 8 and 64 workers.

    python integration/bench/bench_grid.py [--data-dir ../shared/data] [--seeds 20] [--runs N] [--rounds 5]
        [--workers 2] [--scheduler ADDRESS] [--projection-runs 8] [--skip-grid]

Numbers equal bit for bit between the backends (checked on every round).
On a quiet 2-core machine the full benchmark (20 seeds, 5 rounds) takes
about 40 minutes (a round is about 4 minutes local and 2 on Dask, 2026-11-23);
``--seeds 5`` takes about a quarter of that.
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import shutil
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reproduce"))  # reproduce_mp_figures

import numpy as np  # noqa: E402
from benchkit import interleaved, print_report  # noqa: E402
from reproduce_mp_figures import MEASURES, PERCENTS  # noqa: E402

from irmeasures_markov.experiments import evaluate_grid  # noqa: E402
from irmeasures_markov.grid import DaskBackend, LocalBackend  # noqa: E402
from irmeasures_markov.io._datasets import collection, load_qrels  # noqa: E402
from irmeasures_markov.io._run_files import list_run_files, run_name  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402


def _noop(x):
    return x


def scheduler_cost(client, n=400):
    """Seconds per task of submitting and gathering ``n`` no-op tasks (the scheduler's cost per task)."""
    t = time.perf_counter()
    futs = client.map(_noop, range(n), pure=False)
    client.gather(futs)
    return (time.perf_counter() - t) / n


#: A 40-measure set for the projection: every MP variant, Carterette's named measures, common trec_eval ones.
CLASSIC_MEASURES = ["AP", "P@5", "P@10", "P@20", "P@100", "Rprec", "Bpref", "nDCG", "nDCG@10", "nDCG@20", "RR",
                    "RBP(p=0.8,rel=1)", "R@100", "R@1000"]


def projection_measures():
    from irmeasures_markov.measures import NAMED_MEASURES
    from irmeasures_markov.measures.markov_precision import PAPER_MODELS
    mp = [f"MP(model='{m}'{',recall=True' if r else ''})" for m in PAPER_MODELS for r in (False, True)]
    out = mp + list(NAMED_MEASURES) + CLASSIC_MEASURES
    assert len(out) == 40, len(out)
    return out


def projection(qrels, runs, rounds, efficiency, n_runs=5000, seeds=100, pool_sizes=5):
    """Measured cost of a 40-measure cell and the projected wall time of a large grid."""
    measures = projection_measures()
    pools = [100] + list(PERCENTS)
    local = LocalBackend(1)
    costs = []
    for _ in range(rounds):
        _, s = evaluate_grid(measures, qrels, runs, pools=pools, backend=local, progress=False)
        costs.append(s.seconds_per_cell)
    cost = min(costs)
    cells = n_runs * (pool_sizes * seeds + 1)
    core_hours = cells * cost / 3600
    print(f"  40-measure cell (local, 1 process, {len(runs)} runs x {len(pools)} pools): {1e3 * cost:.1f} ms "
          f"best, per-round range {1e3 * min(costs):.1f}-{1e3 * max(costs):.1f} ms")
    print(f"  projection, {n_runs} runs x 40 measures x {seeds} seeds ({cells:,} cells): "
          f"{core_hours:.1f} core-hours at the best cell cost")
    for eff_name, eff in ((("measured", efficiency),) if efficiency is not None else ()) + (("target", 0.9),):
        walls = ", ".join(f"{w} workers {core_hours / (w * eff):.2f} h" for w in (8, 64))
        print(f"    at the {eff_name} efficiency {eff:.2f}: {walls}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seeds", type=int, default=20, help="pool samples per pool size (default 20)")
    ap.add_argument("--runs", type=int, default=None, help="only the first N run files (default: all 129)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", default=None, help="address of a running scheduler (default: a LocalCluster)")
    ap.add_argument("--projection-runs", type=int, default=8, help="runs timed with 40 measures (default 8)")
    ap.add_argument("--skip-grid", action="store_true",
                    help="only the 40-measure cell cost and projection (at the target efficiency)")
    args = ap.parse_args(argv)
    ddir = pathlib.Path(args.data_dir) if args.data_dir else shared_data_dir()
    if ddir is None:
        print("TREC data not found: pass --data-dir or set IRMEASURES_MARKOV_DATA; nothing to benchmark.")
        return 0
    qrels = load_qrels("trec8", data_dir=ddir, source="local")
    files = list_run_files(ddir / collection("trec8").runs_dir)[:args.runs]
    runs = {run_name(f): str(f) for f in files}
    pools = [100] + [(pc, s) for s in range(args.seeds) for pc in PERCENTS]
    n_cells = len(runs) * len(pools)
    print(f"{datetime.date.today().isoformat()}: TREC-8, {len(runs)} runs x {len(MEASURES)} measures x "
          f"{len(pools)} pools ({args.seeds} seeds) = {n_cells} cells", flush=True)

    if args.skip_grid:
        projection(qrels, dict(list(runs.items())[:args.projection_runs]), max(args.rounds, 5), None)
        return 0

    from distributed import Client

    from irmeasures_markov.grid._backends import local_cluster
    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = local_cluster(args.workers)
        client = Client(cluster)
    print(f"dask: {client.dashboard_link}", flush=True)
    dask = DaskBackend(client)
    local = LocalBackend(1)
    summaries = {"local": [], "dask": []}
    results = {}

    def grid(name, backend, store=None, pools=pools, runs=runs):
        evs, summary = evaluate_grid(MEASURES, qrels, runs, pools=pools, backend=backend, store=store,
                                     progress=False)
        summaries.setdefault(name, []).append(summary)
        results[name] = evs
        return evs

    # warm-up outside the timings: imports and the first pools on every worker
    small = dict(list(runs.items())[:4])
    grid("warm-local", local, pools=pools[:3], runs=small)
    grid("warm-dask", dask, pools=pools[:3], runs=small)

    def check():
        for pool, ev in results["local"].items():
            if not np.array_equal(ev.values, results["dask"][pool].values):
                raise SystemExit(f"dask and local differ on pool {pool}")

    times = interleaved({"local": lambda: grid("local", local), "dask": lambda: grid("dask", dask)},
                        rounds=args.rounds, warmup=False)
    check()
    print_report(times, peer="local")
    workers = dask.n_workers
    speedups = [loc / d for loc, d in zip(times["local"], times["dask"])]
    per_cell = [s.seconds_per_cell for s in summaries["local"]]
    eff = [sl.compute_seconds / (workers * td) for sl, td in zip(summaries["local"], times["dask"])]
    own = [1.0 - s.overhead for s in summaries["dask"]]
    print(f"  speed-up local / dask with {workers} workers: best {max(speedups):.2f}x, per-round range "
          f"{min(speedups):.2f}-{max(speedups):.2f} (target >= 1.6)")
    print(f"  per-cell cost (local, 1 process): {1e3 * min(per_cell):.1f} ms best, "
          f"{1e3 * float(np.median(per_cell)):.1f} ms median over rounds")
    print(f"  efficiency projected from per-cell costs (local cell time / (workers x dask wall)): best "
          f"{max(eff):.2f}, range {min(eff):.2f}-{max(eff):.2f} (target >= 0.9)")
    print(f"  dask's own busy share (compute / (wall x workers)): best {max(own):.2f}, range "
          f"{min(own):.2f}-{max(own):.2f}")
    s = summaries["dask"][-1]
    per_task = scheduler_cost(client)
    mean_task = s.compute_seconds / max(s.tasks, 1)
    print(f"  scheduler cost per task (no-op tasks): {1e3 * per_task:.2f} ms; {s.tasks} tasks of "
          f"{mean_task:.2f} s mean -> {per_task / mean_task:.2%} of the work (target < 5%)")

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-grid-store-"))
    try:
        t = time.perf_counter()
        grid("first", dask, store=tmp)
        first = time.perf_counter() - t
        cached = []
        for _ in range(max(3, args.rounds)):
            t = time.perf_counter()
            grid("cached", dask, store=tmp)
            cached.append(time.perf_counter() - t)
        assert summaries["cached"][-1].done == 0
        print(f"  cached rerun from the Parquet store: {min(cached):.2f} s best ({min(cached):.2f}-"
              f"{max(cached):.2f}) vs {first:.1f} s for the first run: {min(cached) / first:.2%} (target < 5%)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    projection(qrels, dict(list(runs.items())[:args.projection_runs]), args.rounds, max(eff))
    client.close()
    if cluster is not None:
        cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
