"""Benchmark: loading all 129 TREC-8 runs.

    python integration/bench/bench_loading.py [--rounds 5]

Times, in one process on the same files (page cache warm), interleaved round
by round (integration/bench/benchkit.py: each round runs every loader once, in an
order that alternates between rounds; ratios are formed within a round):

* ``ir_measures.read_trec_run`` consumed into ``{qid: {docid: score}}`` dicts
  (the peer);
* ``irmeasures_markov.io.read_trec_run`` (the package's one run reader: the whole file at once);
* ``irmeasures_markov.io._run_files.load_run_dir`` with 1 and with 2 processes
  (vectorised parsing; identical dictionaries, checked here).

Prints each loader's best time and range, runs/second at the best time, and
each ratio loader / peer: best and per-round range (target for
``load_run_dir``: <= 0.333, i.e. >= 3x the peer's speed), and the ratio of
``load_run_dir`` with 2 processes to 1 (the default ``n_jobs`` is chosen from it).
"""
import argparse
import glob
import os
import sys

import ir_measures
from benchkit import format_report, interleaved, ratios

from irmeasures_markov.io import load_run_dir, read_trec_run
from irmeasures_markov.testing import shared_data_dir

PEER = "ir_measures.read_trec_run -> dict"


def peer_load(files):
    runs = {}
    for f in files:
        run = {}
        for r in ir_measures.read_trec_run(f):
            run.setdefault(r.query_id, {})[r.doc_id] = r.score
        runs[f] = run
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5)")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    run_dir = data / "runs" / "trec8"
    files = sorted(glob.glob(str(run_dir / "input.*")))
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} run files, {size / 1e6:.0f} MB compressed, {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # same content as the peer (ir_measures keeps scores as float too), checked before the timings
    peer = peer_load(files)
    for n_jobs in (1, 2):
        ours = load_run_dir(run_dir, progress=False, n_jobs=n_jobs)
        assert len(ours) == len(peer)
        for (f, p), r in zip(peer.items(), ours.values()):
            assert p == r, f
        del ours
    del peer

    # every loader's result is dropped at once, so that each runs with the same live memory
    times = interleaved({
        PEER: lambda: peer_load(files),
        "irmeasures_markov.io.read_trec_run": lambda: [read_trec_run(f) for f in files],
        "datasets.load_run_dir(n_jobs=1)": lambda: load_run_dir(run_dir, progress=False, n_jobs=1),
        "datasets.load_run_dir(n_jobs=2)": lambda: load_run_dir(run_dir, progress=False, n_jobs=2),
    }, rounds=args.rounds)
    print(format_report(times, peer=PEER, targets={"datasets.load_run_dir(n_jobs=1)": 0.333,
                                                   "datasets.load_run_dir(n_jobs=2)": 0.333}))
    # the measurement load_run_dir's default n_jobs is chosen from: 2 processes against 1, round by round
    one, two = "datasets.load_run_dir(n_jobs=1)", "datasets.load_run_dir(n_jobs=2)"
    r = ratios(times, two, one)
    print(f"  ratio {two} / {one}: best {min(r):.3f}, per-round range {min(r):.3f}-{max(r):.3f} "
          f"(below 1: workers pay)")
    n = len(files)
    print("  runs/s at the best time: " + ", ".join(f"{name} {n / min(ts):.1f}" for name, ts in times.items()))


if __name__ == "__main__":
    main()
