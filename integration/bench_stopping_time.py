"""Benchmark P@H (SPEC §3): single-ranking order-2 latency, simulation throughput, and the whole
TREC-8 set under an RWBM model (exact order 2) against pytrec_eval `map` on the same parsed inputs,
in the same process.

    python integration/bench_stopping_time.py [--repeat 3] [--skip-trec]

Targets: order-2 expectation of a 1000-document ranking <= 1 ms; simulation >= 5e7 user-steps/s
on one core; TREC-8 ratio (ours / pytrec_eval map) <= 2.
"""
import argparse
import glob
import sys
import time
import timeit

import numpy as np

import irmeasures_markov as imm
from irmeasures_markov.measures.stopping_time import browsing_model
from irmeasures_markov.testing import shared_data_dir


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_single(repeat):
    rng = np.random.default_rng(0)
    grades = (rng.random(1000) < 0.1).astype(int)
    print("single ranking, N = 1000 (best of 7 x loops):")
    for label, params in (("RWBM p=.5 q=.25, order 2", dict(browse="RWBM", p=0.5, q=0.25)),
                          ("RWBM p=.5 q=.25 loss=.25, order 2", dict(browse="RWBM", p=0.5, q=0.25, loss=0.25)),
                          ("RWBM p=.5 q=.25 loss=.25, order 1", dict(browse="RWBM", p=0.5, q=0.25, loss=0.25,
                                                                    order=1)),
                          ("SFBM p=.8, order 1", dict(p=0.8, order=1))):
        model = browsing_model(grades, **params)
        t = timeit.Timer(model.value)
        n, _ = t.autorange()
        per = min(t.repeat(7, n)) / n
        t2 = timeit.Timer(lambda: browsing_model(grades, **params).value())
        n2, _ = t2.autorange()
        per2 = min(t2.repeat(7, n2)) / n2
        print(f"  {label:38s} expectation {per * 1e3:8.3f} ms   build + expectation {per2 * 1e3:8.3f} ms")


def bench_simulation(repeat):
    from irmeasures_markov.measures.stopping_time import _numba_walk
    engines = ["numba", "numpy"] if _numba_walk() is not None else ["numpy"]
    print(f"simulation, one core, 10^6 users (engines: {', '.join(engines)}):")
    r = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    rng = np.random.default_rng(1)
    long_r = (rng.random(1000) < 0.1).astype(int)
    for label, grades, params in (
            ("Fig. 1d RWBM N=10, loss .25", r, dict(browse="RWBM", p=0.5, q=0.25, loss=0.25, top="forward")),
            ("RWBM N=10, no loss", r, dict(browse="RWBM", p=0.5, q=0.25, top="forward")),
            ("RWBM N=1000 p=.7 q=.29, no loss", long_r, dict(browse="RWBM", p=0.7, q=0.29)),
            ("RWBM N=1000 p=.7 q=.29, loss .25", long_r, dict(browse="RWBM", p=0.7, q=0.29, loss=0.25)),
            ("SFBM N=10 p=.5 (RBP)", r, dict(p=0.5))):
        model = browsing_model(grades, **params)
        for engine in engines:
            _, steps = model.simulate(1_000_000, seed=0, return_steps=True, engine=engine)
            total = int(steps.sum())
            t = best_of(lambda: model.simulate(1_000_000, seed=0, engine=engine), repeat)
            print(f"  {label:34s} {engine:6s} {t:7.3f} s  {total / 1e6:7.2f} steps/user  "
                  f"{total / t:10.3e} user-steps/s")


def bench_trec8(repeat):
    data = shared_data_dir()
    if data is None:
        print("TREC-8: shared data not found (set IRMEASURES_MARKOV_DATA); skipped")
        return
    import pytrec_eval
    from irmeasures_markov.io import read_trec_qrels, read_trec_run
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    n_rank = sum(len(r) for r in runs)
    print(f"TREC-8: {len(runs)} runs, {n_rank} (run, topic) rankings, same parsed dicts for both tools")

    def run_pytrec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        for run in runs:
            ev.evaluate(run)

    t_ref = best_of(run_pytrec, repeat)
    print(f"  pytrec_eval map                              {t_ref:7.3f} s")
    for label, m in (("PH(browse='RWBM',p=0.5,q=0.25) order 2", imm.PH(browse="RWBM", p=0.5, q=0.25)),
                     ("PH(browse='RWBM',p=0.5,q=0.25,loss=0.25)", imm.PH(browse="RWBM", p=0.5, q=0.25, loss=0.25)),
                     ("PH(user='AP')", imm.PH(user="AP"))):
        def run_ours():
            ev = imm.PROVIDER.evaluator([m], qrels)
            for run in runs:
                ev.values(run)
        t = best_of(run_ours, repeat)
        print(f"  {label:44s} {t:7.3f} s   ratio {t / t_ref:5.2f}")
    m = imm.PH(browse="RWBM", p=0.5, q=0.25, loss=0.25, order=1)
    ev = imm.PROVIDER.evaluator([m], qrels)
    t = best_of(lambda: [ev.values(run) for run in runs[:10]], 1)
    print(f"  {str(m):44s} {t:7.3f} s for 10 runs (order 1, generating-function integral)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-trec", action="store_true")
    args = ap.parse_args()
    bench_single(args.repeat)
    bench_simulation(args.repeat)
    if not args.skip_trec:
        bench_trec8(args.repeat)


if __name__ == "__main__":
    sys.exit(main())
