"""Benchmark: our measures through ir_measures' own entry points, per run, on the 129 TREC-8 runs.

    python integration/bench/bench_plugin.py [--rounds 5] [--runs 129]

``ir_measures.calc_aggregate(measures, qrels, run)`` and ``ir_measures.iter_calc``
are how most users call a measure: once per run, with the same qrels dict
every time, each call making a new evaluator.  Timed, per round, over every
run (the qrels cache is emptied at the start of each round, so every round
indexes the judgments once, as a fresh loop over runs does):

* ``AP``: ir_measures' own ``[AP]`` (pytrec_eval) through ``calc_aggregate``,
  the peer;
* ``MP@10``: ``[MP@10]`` through the same call (target: MP@10 / AP <= 0.5);
* ``MP@10 uncached``: the same with the qrels cache emptied before every
  call, as every call was before the cache (what the cache saves);
* the same pair through ``iter_calc`` (every per-query Metric consumed;
  target <= 0.5).

Peer and candidates run interleaved (integration/bench/benchkit.py); the report
gives the best time of each and each ratio's best and per-round range, dated.
"""
import argparse
import os
import sys

import ir_measures

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit import interleaved, print_report, trec8_inputs  # noqa: E402

from irmeasures_markov import MP
from irmeasures_markov.ranking import _cache as qrels_cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=None, help="use only the first N runs (default: all)")
    args = ap.parse_args()
    qrels, runs = trec8_inputs(args.runs)
    ours, peer = MP @ 10, ir_measures.AP
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings, "
          f"{sum(len(d) for q in qrels.values() for d in [q])} judgments", flush=True)

    def aggregate(measure, cached=True):
        def call():
            qrels_cache.clear()
            for run in runs:
                if not cached:
                    qrels_cache.clear()
                ir_measures.calc_aggregate([measure], qrels, run)
        return call

    def iterate(measure):
        def call():
            qrels_cache.clear()
            for run in runs:
                for _ in ir_measures.iter_calc([measure], qrels, run):
                    pass
        return call

    # both entry points agree with each other on our measure (and a cached call with a fresh one)
    first = ir_measures.calc_aggregate([ours], qrels, runs[0])[ours]
    mean = sum(m.value for m in ir_measures.iter_calc([ours], qrels, runs[0])) / len(qrels)
    assert abs(first - mean) < 1e-12, (first, mean)

    print("\nir_measures.calc_aggregate, one call per run:")
    times = interleaved({"AP": aggregate(peer), "MP@10": aggregate(ours),
                         "MP@10 uncached": aggregate(ours, cached=False)}, rounds=args.rounds)
    print_report(times, peer="AP", targets={"MP@10": 0.5})
    print("\nir_measures.iter_calc, one call per run:")
    times = interleaved({"AP": iterate(peer), "MP@10": iterate(ours)}, rounds=args.rounds)
    print_report(times, peer="AP", targets={"MP@10": 0.5})


if __name__ == "__main__":
    main()
