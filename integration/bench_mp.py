"""Benchmark: all 16 MP variants (8 paper models x recall on/off) on all 129 TREC-8 runs,
against pytrec_eval's `map` on the same parsed inputs, in the same process.

    python integration/bench_mp.py [--repeat 3]

Prints both wall times (best of --repeat) and the ratio MP16 / map (target <= 1.0).
"""
import argparse
import glob
import os
import sys
import time

import pytrec_eval

from irmeasures_markov import MP, PROVIDER
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.measures.markov_precision import PAPER_MODELS
from irmeasures_markov.testing import shared_data_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    measures = [MP(model=m, recall=r) for m in PAPER_MODELS for r in (False, True)]
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings, {len(measures)} MP variants")

    def run_map():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        for run in runs:
            ev.evaluate(run)

    def run_mp():
        ev = PROVIDER.evaluator(measures, qrels)
        for run in runs:
            ev.values(run)

    def best(fn):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    t_map = best(run_map)
    t_mp = best(run_mp)
    print(f"pytrec_eval map:            {t_map:7.3f} s")
    print(f"irmeasures_markov 16 x MP:  {t_mp:7.3f} s  (ranking preparation included)")
    print(f"ratio MP16 / map:           {t_mp / t_map:7.3f}  (target <= 1.0)")


if __name__ == "__main__":
    main()
