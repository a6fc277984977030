"""Benchmark: all 16 MP variants (8 paper models x recall on/off) on all 129 TREC-8 runs,
against pytrec_eval's `map` on the same parsed inputs, in the same process.

    python integration/bench/bench_mp.py [--rounds 5] [--runs 129]

Contenders, each over every run (evaluator made inside the timed call, qrels
cache emptied first, so each pays for indexing the judgments once):

* ``map``: ``pytrec_eval.RelevanceEvaluator(qrels, {'map'})`` (the peer);
* ``MP16 RelevanceEvaluator``: ``irmeasures_markov.RelevanceEvaluator(qrels,
  the 16 variants).evaluate(run)`` (target: MP16 / map <= 0.5);
* ``MP16 PROVIDER.evaluator``: ``PROVIDER.evaluator(the 16 variants,
  qrels).values(run)``, the same work without pytrec_eval's dict of dicts.

They run interleaved (integration/bench/benchkit.py): the report gives each best
time and each ratio's best and per-round range, with the date.
"""
import argparse
import os
import sys

import pytrec_eval

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit import interleaved, print_report, trec8_inputs  # noqa: E402

from irmeasures_markov import MP, PROVIDER, RelevanceEvaluator
from irmeasures_markov.measures.markov_precision import PAPER_MODELS  # noqa: E402
from irmeasures_markov.ranking import _cache as qrels_cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=None, help="use only the first N runs (default: all)")
    args = ap.parse_args()
    qrels, runs = trec8_inputs(args.runs)
    measures = [MP(model=m, recall=r) for m in PAPER_MODELS for r in (False, True)]
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings, {len(measures)} MP variants",
          flush=True)

    def run_map():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        for run in runs:
            ev.evaluate(run)

    def run_evaluator():
        qrels_cache.clear()
        ev = RelevanceEvaluator(qrels, measures)
        for run in runs:
            ev.evaluate(run)

    def run_provider():
        qrels_cache.clear()
        ev = PROVIDER.evaluator(measures, qrels)
        for run in runs:
            ev.values(run)

    times = interleaved({"map": run_map, "MP16 RelevanceEvaluator": run_evaluator,
                         "MP16 PROVIDER.evaluator": run_provider}, rounds=args.rounds)
    print_report(times, peer="map", targets={"MP16 RelevanceEvaluator": 0.5})


if __name__ == "__main__":
    main()
