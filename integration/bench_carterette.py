"""Benchmark: the 15 measures of Carterette's paper on all 129 TREC-8 runs in one pass,
against pytrec_eval computing `map` and `ndcg` on the same parsed inputs, in the same process.

    python integration/bench_carterette.py [--repeat 3]

Prints both wall times (best of --repeat) and the ratio (target <= 1.0).
"""
import argparse
import glob
import sys
import time

import pytrec_eval

import irmeasures_markov as imm
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.measures.carterette import PAPER_MEASURES
from irmeasures_markov.rankings import PreparedRun, QrelsIndex
from irmeasures_markov.testing import shared_data_dir


def paper_measures():
    out = []
    for name, (model, dist) in PAPER_MEASURES.items():
        out.append(getattr(imm, name) if hasattr(imm, name) and name not in ("RBP", "DCG", "RR", "ERR", "AP")
                   else getattr(imm, model)(dist=dist))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    measures = paper_measures()
    print(f"{len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings, {len(measures)} measures: "
          + ", ".join(map(str, measures)))

    def run_pytrec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg"})
        for run in runs:
            ev.evaluate(run)

    def run_ours():
        ev = imm.PROVIDER.evaluator(measures, qrels)
        for run in runs:
            ev.values(run)

    def best(fn):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    qrels_index = QrelsIndex(qrels)
    for m in measures:
        m.validate_params()

    def run_prepare():
        # one run at a time, as the evaluator does: keeping all 129 alive would time the garbage collector
        for run in runs:
            PreparedRun(qrels_index, run)

    def run_measures_only():
        prepared = [PreparedRun(qrels_index, run) for run in runs]
        t = time.perf_counter()
        for p in prepared:
            for m in measures:
                m.compute(p)
        return time.perf_counter() - t

    t_ref = best(run_pytrec)
    t_ours = best(run_ours)
    t_prep = best(run_prepare)
    t_meas = min(run_measures_only() for _ in range(args.repeat))
    print(f"pytrec_eval map + ndcg:             {t_ref:7.3f} s")
    print(f"irmeasures_markov 15 paper measures: {t_ours:7.3f} s  (ranking preparation included)")
    print(f"  of which: ranking + qrels join     {t_prep:7.3f} s,  the 15 measures {t_meas:7.3f} s")
    print(f"ratio ours / pytrec_eval:            {t_ours / t_ref:7.3f}  (target <= 1.0)")


if __name__ == "__main__":
    main()
