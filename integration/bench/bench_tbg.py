"""Benchmark: TBG on all 129 TREC-8 runs with a length for every retrieved document,
against pytrec_eval's `map` on the same parsed inputs in the same process, and against
cwl-eval's TBGCWLMetric given the same time model as item costs (first --cwl-runs runs).

    python integration/bench/bench_tbg.py [--rounds 5] [--cwl-runs 10]

TREC-8 has no public document lengths: every retrieved document gets a seeded
random length (log-normal, median ~300 words), registered as a mapping.
pytrec_eval map and TBG are timed interleaved, round by round
(integration/bench/benchkit.py; target: TBG / map <= 0.6); so are cwl-eval and TBG
on the first --cwl-runs runs.  Also printed: the first pass (which also
builds the length table) and the ranking preparation, once each; as best of
--rounds passes, the docid tie-break that waits for the first use of the
rank order (TBG's, in the tie groups that hold a relevant document, and
that of every tie group) and the length lookups (with numba installed, the
compiled probe: the first passes, up to docid_table.COMPILED_AFTER docids,
use the numpy probe).
"""
import argparse
import glob
import os
import sys
import time

import numpy as np
import pytrec_eval

import irmeasures_markov as imm
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.testing import shared_data_dir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit import interleaved, print_report  # noqa: E402


def assumed_lengths(runs, seed=0):
    docids = sorted({d for run in runs for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    return dict(zip(docids, np.round(rng.lognormal(np.log(300), 0.8, len(docids))).tolist()))


def cwl_tbg(qrels, run, lengths, halflife=224.0):
    """cwl-eval's TBGCWLMetric given TBG's time model as item costs (the same inputs as ours).

    Ranking (trec_eval order), gains g_k and costs T_S + (a*l + b)*P(C|r) are built
    here per query, as a cwl-eval user would; the value times sum_k 2^(-T(k)/h)
    is our TBG (integration/reproduce/crosscheck_cwl_tbg.py), returned as such.
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


def docid_table_engine():
    """The probe 'auto' uses once the table has answered COMPILED_AFTER docids (numba when installed)."""
    from irmeasures_markov.documents import _docid_table as docid_table
    return "compiled" if docid_table._compiled_probe() is not None else "numpy"


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
    ap.add_argument("--rounds", type=int, default=5)
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
        from irmeasures_markov.plugin._tbg import document_lengths
        ev = imm.PROVIDER.evaluator([tbg], qrels)
        lookup = document_lengths(tbg).lookup_segments
        prepared = [ev.prepare(run) for run in subset]
        for p in prepared:
            # the docid tie-break of long rankings waits for the first use of the rank order (the first
            # document_values): made here, so that it is not counted as lookups (run_tie_break times it)
            p._flat.positive_tie_order  # noqa: B018
        t = time.perf_counter()
        for p in prepared:
            p.document_values(lookup, exact_tie_order=False)
        return time.perf_counter() - t

    def run_tie_break(subset=runs, whole=False):
        # TBG orders only the tie groups that hold a relevant document (it sums the lengths of the others);
        # whole=True: every tie group, as a measure that reads the whole rank order does
        ev = imm.PROVIDER.evaluator([tbg], qrels)
        prepared = [ev.prepare(run) for run in subset]
        t = time.perf_counter()
        for p in prepared:
            p._flat.order if whole else p._flat.positive_tie_order  # noqa: B018
        return time.perf_counter() - t

    t_first = best(run_tbg, 1)  # includes building the length table, once per length source
    times = interleaved({"map": run_map, "TBG": run_tbg}, rounds=args.rounds)
    print_report(times, peer="map", targets={"TBG": 0.6})
    t_map = min(times["map"])
    t_prep = best(run_prepare, 1)
    t_ties = best(run_tie_break, args.rounds)
    t_all_ties = best(lambda: run_tie_break(whole=True), args.rounds)
    t_look = best(run_lookup, args.rounds)
    n_docs = sum(len(docs) for run in runs for docs in run.values())
    print(f"  first pass, building the length table too: {t_first:.3f} s, ratio {t_first / t_map:.3f}")
    print(f"  once: ranking preparation {t_prep:.3f} s; best of {args.rounds}: docid tie-break on first use of "
          f"the order {t_ties:.3f} s (the tie groups holding a relevant document; all tie groups {t_all_ties:.3f} s)")
    print(f"  {n_docs} length lookups (one per run, {docid_table_engine()} probe; best of {args.rounds}) "
          f"{t_look:.3f} s")

    subset = runs[:args.cwl_runs]
    times = interleaved({"cwl-eval": lambda: [cwl_tbg(qrels, r, lengths) for r in subset],
                         "TBG": lambda: run_tbg(subset)}, rounds=args.rounds)
    ev = imm.PROVIDER.evaluator([tbg], qrels)
    worst = max(abs(v - ev.values(r)[tbg][q]) for r in subset for q, v in cwl_tbg(qrels, r, lengths).items())
    print(f"cwl-eval TBG (our costs) vs ours, {len(subset)} runs (values agree to {worst:.1g}):")
    print_report(times, peer="cwl-eval")


if __name__ == "__main__":
    main()
