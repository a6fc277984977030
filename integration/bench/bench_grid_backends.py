"""Benchmark: one pool-reduction study on local processes and on Dask, 1 to ``--max-workers`` workers.

The grid of the Dask-scaling issue: ``--runs`` TREC-8 run files (read once per
call by ``pool_reduction`` in this process, which hands the runs in memory to
the backend: forked into local processes, scattered to the Dask workers once
per content and client) x 5 measures (AP, MP, MP(recall=True),
MP(model='GL_AD_LID'), PH(browse='RWBM',p=0.5,q=0.25)) x the full pool and 5
pool sizes, ``experiments.pool_reduction`` once per seed for ``--seeds``
seeds, so ``runs x 6 x seeds`` cells.  For each worker count ``w`` it runs on

* ``local`` -- ``n_jobs=w`` forked local processes (the peer);
* ``dask client=`` -- a ``Client`` of a ``LocalCluster`` of ``w`` single-threaded
  workers started beforehand (its start is not timed), passed as ``client=``;
* ``dask scheduler="local"`` -- the process's own ``LocalCluster`` (``w >= 2``;
  started by the warm-up call, reused by every later call, a client per call),

interleaved over ``--rounds`` rounds (benchkit.py: the order alternates
between rounds, ratios are formed within a round).  It prints a markdown
table: the best time (range) of each backend, the ratio to local processes
with as many workers (best and per-round range), and the per-cell overhead of
each Dask backend, ``(T_dask - T_local) x w / cells`` per round (the worker
time a cell costs beyond the local processes' cost; target <= 5 ms).  Every
contender's means and tau equal the local processes' bit for bit (checked).
The load average before and after is printed: on a shared machine it, not
the backends, may set the times.  So the table also gives what a loaded
machine moves far less: the CPU seconds per cell of each contender's own
processes (this process, which holds the client, the nannies and, for
``client=``, the scheduler; the forked processes, or that cluster's workers,
or ``scheduler="local"``'s child process), and the Dask contenders' CPU per
cell beyond the local processes' in the same round.

A Dask worker outlives the call: it keeps the scattered inputs and each
pool's scorer (keyed by the qrels' content) for the next call on the same
judgments, where forked local processes start afresh every call.  The
rounds repeat the same grids, so after the warm-up the Dask workers build no
scorer; a study that calls ``pool_reduction`` once per seed gains the full
pool's only.

    python integration/bench/bench_grid_backends.py [--data-dir ../shared/data] [--runs 8] [--seeds 3]
        [--rounds 5] [--max-workers N]

On a 2-core machine a round takes about 20 s with 8 runs when the machine is quiet.
"""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import psutil  # noqa: E402  (Dask's own dependency)
from benchkit import interleaved  # noqa: E402

from irmeasures_markov.experiments import pool_reduction  # noqa: E402
from irmeasures_markov.io import read_trec_qrels  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402

MEASURES = ["AP", "MP", "MP(recall=True)", "MP(model='GL_AD_LID')", "PH(browse='RWBM',p=0.5,q=0.25)"]
PERCENTS = (90, 70, 50, 30, 10)
#: Per-cell overhead a Dask backend may add (the issue's target).
TARGET_MS = 5.0


def study(qrels, runs, seeds, **where):
    """The benchmark's grid: ``pool_reduction`` once per seed; their (means, tau) arrays."""
    out = []
    for seed in range(seeds):
        r = pool_reduction(MEASURES, qrels, runs, percents=PERCENTS, seed=seed, progress=False, **where)
        out.append((r.mean_scores, r.tau))
    return out


def cpu_seconds(pids) -> float:
    """CPU seconds so far of this process, of its children it has waited for (the forked local processes) and of
    the processes ``pids`` and their descendants (a cluster's workers)."""
    import resource
    total = sum(psutil.Process().cpu_times()[:2])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total += usage.ru_utime + usage.ru_stime
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            total += sum(sum(p.cpu_times()[:2]) for p in [proc, *proc.children(recursive=True)])
        except psutil.Error:
            pass  # ended meanwhile
    return total


def served_cluster(n_workers: int) -> list[int]:
    """Pid of the child process holding ``scheduler="local"``'s cluster of ``n_workers`` (none before it starts)."""
    return [p.pid for p in psutil.Process().children()
            if "serve_local_cluster" in " ".join(p.cmdline()) and p.cmdline()[-1] == str(n_workers)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--runs", type=int, default=8, help="TREC-8 run files, the first N by name (default 8)")
    ap.add_argument("--seeds", type=int, default=3, help="pool_reduction calls, one per seed (default 3)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    ddir = pathlib.Path(args.data_dir) if args.data_dir else shared_data_dir()
    if ddir is None:
        print("TREC data not found: pass --data-dir or set IRMEASURES_MARKOV_DATA; nothing to benchmark.")
        return 0
    qrels = read_trec_qrels(ddir / "qrels" / "trec8.qrels.gz")
    files = sorted((ddir / "runs" / "trec8").glob("input.*.gz"))[:args.runs]
    runs = {f.name[len("input."):-len(".gz")]: str(f) for f in files}
    cells = len(runs) * (len(PERCENTS) + 1) * args.seeds

    from distributed import Client

    from irmeasures_markov.grid._backends import local_cluster
    counts = list(range(1, max(1, args.max_workers) + 1))
    clusters, contenders = [], {}
    results = {}

    cpu: dict[str, list[float]] = {}

    def contender(name, pids, **where):
        def call():
            before = cpu_seconds(pids())
            results[name] = study(qrels, runs, args.seeds, **where)
            cpu.setdefault(name, []).append(cpu_seconds(pids()) - before)
        contenders[name] = call

    for w in counts:
        contender(f"local {w}", list, n_jobs=w)
        cluster = local_cluster(w)
        client = Client(cluster, set_as_default=False)
        clusters.append((client, cluster))
        contender(f"dask client= {w}", lambda c=client: list(c.run(os.getpid).values()), client=client)
        if w >= 2:
            contender(f'dask scheduler="local" {w}', lambda w=w: served_cluster(w), scheduler="local", n_jobs=w)
    print(f"{datetime.date.today().isoformat()}: TREC-8, {len(runs)} runs x {len(MEASURES)} measures x "
          f"{len(PERCENTS) + 1} pools x {args.seeds} seeds = {cells} cells; {args.rounds} interleaved rounds, "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} (1 min)", flush=True)
    try:
        times = interleaved(contenders, rounds=args.rounds)  # the warm-up call starts scheduler="local"'s cluster
    finally:
        for client, cluster in clusters:
            client.close()
            cluster.close()
    for name, res in results.items():
        for (m, t), (m0, t0) in zip(res, results["local 1"]):
            if not (np.array_equal(m, m0) and np.array_equal(t, t0, equal_nan=True)):
                raise SystemExit(f"{name} differs from local 1")
    print(f"(every backend's means and tau equal bit for bit; load average at the end "
          f"{os.getloadavg()[0]:.1f} (1 min), {os.getloadavg()[2]:.1f} (15 min))\n")

    def best(ts):
        return f"{min(ts):.2f} s ({min(ts):.2f}-{max(ts):.2f})"

    header = "| backend | " + " | ".join(f"{w} worker{'s' if w > 1 else ''}" for w in counts) + " |"
    lines = [header, "|---" * (len(counts) + 1) + "|"]
    kinds = ["local", "dask client=", 'dask scheduler="local"']
    timed_cpu = {name: c[1:] for name, c in cpu.items()}  # the warm-up call first
    for kind in kinds:
        row = [best(times[f"{kind} {w}"]) if f"{kind} {w}" in times else "—" for w in counts]
        lines.append(f"| {kind} | " + " | ".join(row) + " |")
    for kind in kinds:
        row = [f"{1e3 * min(timed_cpu[n]) / cells:.1f} ms ({1e3 * min(timed_cpu[n]) / cells:.1f}-"
               f"{1e3 * max(timed_cpu[n]) / cells:.1f})" if (n := f"{kind} {w}") in timed_cpu else "—" for w in counts]
        lines.append(f"| {kind}: CPU per cell, all its processes | " + " | ".join(row) + " |")
    for kind in kinds[1:]:
        ratio, over, extra = [], [], []
        for w in counts:
            name = f"{kind} {w}"
            if name not in times:
                ratio.append("—")
                over.append("—")
                extra.append("—")
                continue
            r = [d / loc for d, loc in zip(times[name], times[f"local {w}"])]
            o = [1e3 * (d - loc) * w / cells for d, loc in zip(times[name], times[f"local {w}"])]
            c = [1e3 * (d - loc) / cells for d, loc in zip(timed_cpu[name], timed_cpu[f"local {w}"])]
            ratio.append(f"{min(r):.2f}× ({min(r):.2f}-{max(r):.2f})")
            over.append(f"{min(o):.1f} ms ({min(o):.1f} to {max(o):.1f})")
            extra.append(f"{min(c):.1f} ms ({min(c):.1f} to {max(c):.1f})")
        lines.append(f"| {kind} / local, same round | " + " | ".join(ratio) + " |")
        lines.append(f"| {kind}: overhead per cell (target ≤ {TARGET_MS:g} ms) | " + " | ".join(over) + " |")
        lines.append(f"| {kind}: CPU per cell beyond local's, same round | " + " | ".join(extra) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
