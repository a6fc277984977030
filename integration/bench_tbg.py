"""Benchmark: TBG on all 129 TREC-8 runs with a length for every retrieved document,
against pytrec_eval's `map` on the same parsed inputs in the same process, and against
cwl-eval's TBGCWLMetric on a subset of runs.

    python integration/bench_tbg.py [--repeat 3] [--cwl-runs 10]

TREC-8 has no public document lengths: every retrieved document gets a seeded
random length (log-normal, median ~300 words), registered as a mapping.
Prints wall times and the ratios (target: TBG / map <= 1.0).
"""
import argparse
import glob
import sys
import time

import numpy as np
import pytrec_eval

import irmeasures_markov as imm
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.testing import shared_data_dir


def assumed_lengths(runs, seed=0):
    docids = sorted({d for run in runs for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    return dict(zip(docids, np.round(rng.lognormal(np.log(300), 0.8, len(docids))).tolist()))


def cwl_tbg(qrels, run, halflife):
    """cwl-eval's TBG on unit costs (its construction; used for timing only)."""
    from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
    from cwl.ruler.ranking import Ranking
    metric = TBGCWLMetric(halflife)
    out = {}
    for q, docs in run.items():
        ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        gains = np.array([float(qrels.get(q, {}).get(d, 0) >= 1) for d in ranked])
        out[q] = metric.measure(Ranking(q, gains, np.ones(len(ranked))))
    return out


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cwl-runs", type=int, default=10)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    imm.register_lengths("bench-trec8", assumed_lengths(runs))
    tbg = imm.TBG(lengths="bench-trec8")
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings")

    def run_map(subset=runs):
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        for run in subset:
            ev.evaluate(run)

    def run_tbg(subset=runs):
        ev = imm.PROVIDER.evaluator([tbg], qrels)
        for run in subset:
            ev.values(run)

    t_map = best(run_map, args.repeat)
    t_tbg = best(run_tbg, args.repeat)
    print(f"pytrec_eval map:            {t_map:7.3f} s")
    print(f"irmeasures_markov TBG:      {t_tbg:7.3f} s  (ranking preparation and length lookup included)")
    print(f"ratio TBG / map:            {t_tbg / t_map:7.3f}  (target <= 1.0)")

    subset = runs[:args.cwl_runs]
    t_cwl = best(lambda: [cwl_tbg(qrels, r, 224) for r in subset], 1)
    t_ours = best(lambda: run_tbg(subset), args.repeat)
    print(f"cwl-eval TBG, {len(subset)} runs:      {t_cwl:7.3f} s")
    print(f"irmeasures_markov, same runs: {t_ours:7.3f} s  -> speed-up {t_cwl / t_ours:.0f}x")


if __name__ == "__main__":
    main()
