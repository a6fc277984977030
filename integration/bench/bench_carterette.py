"""Benchmark: Carterette's measures on all 129 TREC-8 runs in one pass, against pytrec_eval
computing `map` and `ndcg` on the same parsed inputs, in the same process.

    python integration/bench/bench_carterette.py [--rounds 5]

Contenders, interleaved round by round (integration/bench/benchkit.py): pytrec_eval
map + ndcg (the peer); the paper's ten new names (CDG, RRG, RBTR, ARR, RRR,
RBAP, DAG, RAP, EPR, RRAP; target ratio <= 0.4); all 15 measures of the
paper's table (target <= 1.0).  Each time includes building the evaluator and
ranking every run.  Also printed, once: how the 15 split into ranking
preparation and the measures themselves, and how the ten names' evaluation
(the timed path: ``MarkovEvaluator.prepare`` then ``prepared_values``) splits.
"""
import argparse
import glob
import os
import sys
import time

import pytrec_eval

import irmeasures_markov as imm
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.measures import NAMED_MEASURES, PAPER_MEASURES
from irmeasures_markov.ranking import PreparedRun, QrelsIndex
from irmeasures_markov.testing import shared_data_dir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit import interleaved, print_report  # noqa: E402


def paper_measures():
    out = []
    for name, (model, dist) in PAPER_MEASURES.items():
        out.append(getattr(imm, name) if name in NAMED_MEASURES else getattr(imm, model)(dist=dist))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    named = [getattr(imm, name) for name in NAMED_MEASURES]
    measures = paper_measures()
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings; {len(named)} new names: "
          + ", ".join(map(str, named)) + f"; {len(measures)} paper measures: " + ", ".join(map(str, measures)))

    def run_pytrec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg"})
        for run in runs:
            ev.evaluate(run)

    def ours(ms):
        def run_ours():
            ev = imm.PROVIDER.evaluator(ms, qrels)
            for run in runs:
                ev.values(run)
        return run_ours

    times = interleaved({"map+ndcg": run_pytrec, "10 names": ours(named), "15 paper": ours(measures)},
                        rounds=args.rounds)
    print_report(times, peer="map+ndcg", targets={"10 names": 0.4, "15 paper": 1.0})

    qrels_index = QrelsIndex(qrels)
    for m in measures:
        m.validate_params()
    t = time.perf_counter()
    prepared = []
    for run in runs:
        prepared.append(PreparedRun(qrels_index, run))
    t_prep = time.perf_counter() - t
    t = time.perf_counter()
    for p in prepared:
        for m in measures:
            m.compute(p)
    t_meas = time.perf_counter() - t
    print(f"  the 15, once: ranking + qrels join {t_prep:.3f} s, the measures themselves {t_meas:.3f} s")

    # the timed path of the ten names: the evaluator ranks to what they read and joins positive grades only
    ev = imm.PROVIDER.evaluator(named, qrels)
    t = time.perf_counter()
    prepared = [ev.prepare(run) for run in runs]
    t_prep = time.perf_counter() - t
    t = time.perf_counter()
    for p, run in zip(prepared, runs):
        ev.prepared_values(p, run)
    t_meas = time.perf_counter() - t
    print(f"  the 10 names, once, through the evaluator: prepare {t_prep:.3f} s, "
          f"batches + measures + result dicts {t_meas:.3f} s")


if __name__ == "__main__":
    main()
