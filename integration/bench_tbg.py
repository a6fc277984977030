"""Benchmark: TBG on all 129 TREC-8 runs with a length for every retrieved document,
against pytrec_eval's `map` on the same parsed inputs in the same process, and against
cwl-eval's TBGCWLMetric given the same time model as item costs (first --cwl-runs runs).

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


def cwl_tbg(qrels, run, lengths, halflife=224.0):
    """cwl-eval's TBGCWLMetric given TBG's time model as item costs (the same inputs as ours).

    Ranking (trec_eval order), gains g_k and costs T_S + (a*l + b)*P(C|r) are built
    here per query, as a cwl-eval user would; the value times sum_k 2^(-T(k)/h)
    is our TBG (integration/crosscheck_cwl_tbg.py), returned as such.
    """
    from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
    from cwl.ruler.ranking import Ranking
    metric = TBGCWLMetric(halflife)
    out = {}
    for q, docs in run.items():
        judged = qrels.get(q)
        if judged is None:
            continue
        ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        relevant = np.array([judged.get(d, 0) >= 1 for d in ranked])
        words = np.array([lengths[d] for d in ranked])
        cost = 4.4 + (0.018 * words + 7.8) * np.where(relevant, 0.64, 0.39)
        gain = np.where(relevant, 0.64 * 0.77, 0.0)
        reach = np.concatenate(([0.0], np.cumsum(cost)[:-1]))
        out[q] = metric.measure(Ranking(q, gain, cost, max_n=len(ranked))) * np.sum(2.0 ** (-reach / halflife))
    return out


def best(fn, repeat):
    """Best wall time of ``repeat`` calls (a call may return its own timing of the part that counts)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        inner = fn()
        times.append(inner if isinstance(inner, float) else time.perf_counter() - t)
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
    lengths = assumed_lengths(runs)
    imm.register_lengths("bench-trec8", lengths)
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

    def run_prepare(subset=runs):
        ev = imm.PROVIDER.evaluator([tbg], qrels)
        for run in subset:
            ev.prepare(run)

    def run_lookup(subset=runs):
        # the lookup as TBG makes it: once per prepared run, from the docids joined during preparation
        from irmeasures_markov.plugin.tbg import document_lengths
        ev = imm.PROVIDER.evaluator([tbg], qrels)
        lookup = document_lengths(tbg).lookup_segments
        prepared = [ev.prepare(run) for run in subset]
        t = time.perf_counter()
        for p in prepared:
            p.document_values(lookup)
        return time.perf_counter() - t

    t_map = best(run_map, args.repeat)
    t_first = best(run_tbg, 1)  # includes building the length table, once per length source
    t_tbg = best(run_tbg, args.repeat)
    t_prep = best(run_prepare, args.repeat)
    t_look = best(run_lookup, args.repeat)
    n_docs = sum(len(docs) for run in runs for docs in run.values())
    print(f"pytrec_eval map:            {t_map:7.3f} s")
    print(f"irmeasures_markov TBG:      {t_tbg:7.3f} s  (ranking preparation and length lookup included)")
    print(f"ratio TBG / map:            {t_tbg / t_map:7.3f}  (target <= 1.0)")
    print(f"first pass, building the length table too: {t_first:.3f} s, ratio {t_first / t_map:.3f}")
    print(f"  of which ranking preparation {t_prep:.3f} s; {n_docs} length lookups (one per run) {t_look:.3f} s")

    subset = runs[:args.cwl_runs]
    t_cwl = best(lambda: [cwl_tbg(qrels, r, lengths) for r in subset], args.repeat)
    t_ours = best(lambda: run_tbg(subset), args.repeat)
    ev = imm.PROVIDER.evaluator([tbg], qrels)
    worst = max(abs(v - ev.values(r)[tbg][q]) for r in subset for q, v in cwl_tbg(qrels, r, lengths).items())
    print(f"cwl-eval TBG (our costs), {len(subset)} runs: {t_cwl:7.3f} s")
    print(f"irmeasures_markov, same runs:     {t_ours:7.3f} s  -> speed-up {t_cwl / t_ours:.1f}x "
          f"(values agree to {worst:.1g})")


if __name__ == "__main__":
    main()
