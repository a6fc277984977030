"""Benchmark: ``ties='expected'`` against the default tie order, on all 129 TREC-8 runs (target <= 3x for MP, M1-M4).

Times, interleaved (integration/bench/benchkit.py), evaluating every run with
one measure through the provider (qrels index and ranking inside the timed
call, as a user pays them): the default measure and the same measure with
``ties='expected'`` (the mean over all orders of every tie group), for MP
and Carterette's M1-M4 with their default distributions.

    python integration/bench/bench_ties.py [--rounds 5] [--runs N] [--measures MP M1 ...]
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import ir_measures  # noqa: E402
from benchkit import interleaved, print_report, ratios, trec8_inputs  # noqa: E402

import irmeasures_markov  # noqa: E402,F401  registers the measures

TARGET = 3.0


def _evaluate_all(measure, qrels, runs):
    def go():
        evaluator = irmeasures_markov.PROVIDER.evaluator([measure], qrels)
        for run in runs:
            evaluator.calc_aggregate(run)
    return go


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=None, help="only the first N runs")
    ap.add_argument("--measures", nargs="+", default=["MP", "M1", "M2", "M3", "M4"])
    args = ap.parse_args(argv)
    qrels, runs = trec8_inputs(args.runs)
    print(f"{len(runs)} TREC-8 runs; target: ties='expected' <= {TARGET:g}x the default, per measure")
    worst = 0.0
    for name in args.measures:
        plain = ir_measures.parse_measure(name)
        expected = type(plain)(**{**plain.params, "ties": "expected"})
        times = interleaved({name: _evaluate_all(plain, qrels, runs),
                             str(expected): _evaluate_all(expected, qrels, runs)}, rounds=args.rounds)
        print_report(times, peer=name, targets={str(expected): TARGET})
        worst = max(worst, min(ratios(times, str(expected), name)))
    print(f"worst best-round ratio {worst:.2f} -> {'meets' if worst <= TARGET else 'MISSES'} the {TARGET:g}x target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
