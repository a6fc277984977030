"""Benchmark: loading all 129 TREC-8 runs.

    python integration/bench_loading.py [--repeat 3]

Times, in one process on the same files (best of --repeat, page cache warm):

* ``ir_measures.read_trec_run`` consumed into ``{qid: {docid: score}}`` dicts
  (the peer);
* ``irmeasures_markov.io.read_trec_run`` (our validating line-by-line reader);
* ``irmeasures_markov.datasets.load_run_dir`` with 1 and with 2 processes
  (vectorised parsing; identical dictionaries, checked here).

Prints runs/second and the speed-up over the peer (target >= 3x).
"""
import argparse
import glob
import os
import sys
import time

import ir_measures

from irmeasures_markov.datasets import load_run_dir
from irmeasures_markov.io import read_trec_run
from irmeasures_markov.testing import shared_data_dir


def peer_load(files):
    runs = {}
    for f in files:
        run = {}
        for r in ir_measures.read_trec_run(f):
            run.setdefault(r.query_id, {})[r.doc_id] = r.score
        runs[f] = run
    return runs


def best(fn, repeat):
    """Best wall time of ``fn``; its result is dropped, so every loader runs with the same live memory."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    run_dir = data / "runs" / "trec8"
    files = sorted(glob.glob(str(run_dir / "input.*")))
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} run files, {size / 1e6:.0f} MB compressed, {os.cpu_count()} CPUs")

    t_peer = best(lambda: peer_load(files), args.repeat)
    t_io = best(lambda: [read_trec_run(f) for f in files], args.repeat)
    t_one = best(lambda: load_run_dir(run_dir, progress=False, n_jobs=1), args.repeat)
    t_two = best(lambda: load_run_dir(run_dir, progress=False, n_jobs=2), args.repeat)

    # same content as the peer (ir_measures keeps scores as float too), checked after the timings
    peer = peer_load(files)
    for n_jobs in (1, 2):
        ours = load_run_dir(run_dir, progress=False, n_jobs=n_jobs)
        assert len(ours) == len(peer)
        for (f, p), r in zip(peer.items(), ours.values()):
            assert p == r, f
        del ours

    n = len(files)
    print(f"{'loader':<42} {'seconds':>8} {'runs/s':>8} {'speed-up':>9}")
    for label, t in [("ir_measures.read_trec_run -> dict (peer)", t_peer),
                     ("irmeasures_markov.io.read_trec_run", t_io),
                     ("datasets.load_run_dir(n_jobs=1)", t_one),
                     ("datasets.load_run_dir(n_jobs=2)", t_two)]:
        print(f"{label:<42} {t:8.2f} {n / t:8.1f} {t_peer / t:8.2f}x")


if __name__ == "__main__":
    main()
