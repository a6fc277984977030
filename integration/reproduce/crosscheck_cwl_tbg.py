"""Cross-check our TBG against cwl-eval's ``TBGCWLMetric`` where the two constructions coincide.

cwl-eval (Azzopardi, Thomas & Moffat) builds TBG inside the C/W/L framework:
each ranked item has a cost, the weight of rank k is proportional to the
integral of the decay 2^(−t/h) from C_{k−1}, the cumulative cost of the items
before rank k, to infinity (its ``integral_decay``, h·2^(−C_{k−1}/h)/ln 2),
and the weights are normalised to sum to 1 over its ranking, which it pads or
cuts to ``max_n`` = 1000 items.  Its score is the expected utility per item,
Σ_k w_k gain_k.  Smucker & Clarke's TBG (ours) is Σ_k g_k 2^(−T(k)/h) with
T(k) built from summary time, document lengths and click probabilities, and
no normalisation (N = 1).

They coincide when every document costs one time unit and there is no click
or save model: ours with ``t_summary=1, a=0, b=0, pc_rel=pc_nonrel=1,
ps_rel=1`` is Σ_k a_k p^(k−1) with p = 2^(−1/h), and cwl-eval's value is the
same sum divided by Σ_{k=1}^{1000} p^(k−1).  This script checks that identity
on every TREC-8 run and topic (binary gains, trec_eval ranking order) for
several half-lives, and prints the largest difference.

A second check uses the real time model: cwl-eval's weights are proportional
to 2^(−C_{k−1}/h), C the cumulative cost, so with each item's cost set to our
expected holding time T_S + (a·l + b)·P(C|r) (computed here independently
from the lengths) and its gain to P(C=1|R=1)·P(S=1|R=1), and no padding
(``max_n`` = ranking length), ours = cwl-eval × Σ_k 2^(−T(k)/h) on every
ranking.  The lengths are seeded random (TREC-8 texts are not available).

Both checks hand cwl-eval our own ranking (trec_eval order) and gains through
its ``Ranking`` class, so they cover the discounting and normalisation, not
our ranking or qrels join; integration/test_trec_eval_reference.py checks
those against trec_eval.

Where they differ otherwise: cwl-eval has no document lengths, no summary/click
stage and no save probability (costs are per element type from a cost file);
it normalises to utility per item (so values are not "expected documents
saved"); the cwl-eval script takes the ranking in the run file's line order
and ignores the scores; and duplicate handling is left to preprocessing.
None of these is a bug in either: they are different measures that share a
name and a decay.

    python integration/reproduce/crosscheck_cwl_tbg.py [--runs N]
"""
import argparse
import glob
import sys

import numpy as np

import irmeasures_markov as imm
from irmeasures_markov.io import read_trec_qrels, read_trec_run
from irmeasures_markov.ranking import PreparedRun, QrelsIndex
from irmeasures_markov.testing import shared_data_dir

MAX_N = 1000


def cwl_values(prepared, halflife):
    from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
    from cwl.ruler.ranking import Ranking
    metric = TBGCWLMetric(halflife)
    out = {}
    for q in prepared.queries:
        gains = (q.grades >= 1).astype(float)
        out[q.qid] = metric.measure(Ranking(q.qid, gains, np.ones(gains.size), max_n=MAX_N))
    return out


def ours_unit_cost(prepared, qrels, run, halflife):
    m = imm.TBG(halflife=halflife, t_summary=1, a=0, b=0, pc_rel=1, pc_nonrel=1, ps_rel=1, default_length=0)
    return {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)}


def compare(qrels, runs, halflives=(10, 50, 224)):
    qi = QrelsIndex(qrels)
    worst = 0.0
    n = 0
    for run in runs:
        prepared = PreparedRun(qi, run)
        for h in halflives:
            p = 2.0 ** (-1.0 / h)
            z = (1 - p ** MAX_N) / (1 - p)
            theirs = cwl_values(prepared, h)
            ours = ours_unit_cost(prepared, qrels, run, h)
            for q, v in theirs.items():
                worst = max(worst, abs(ours[q] / z - v))
                n += 1
    return worst, n


PC_REL, PC_NONREL, PS_REL, T_S, A, B = 0.64, 0.39, 0.77, 4.4, 0.018, 7.8


def compare_time_model(qrels, runs, lengths, halflife=224):
    """max |ours − cwl-eval·Z| / ours over every ranking, cwl-eval given our per-item times as costs."""
    from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
    from cwl.ruler.ranking import Ranking
    imm.register_lengths("crosscheck-cwl", lengths)
    m = imm.TBG(lengths="crosscheck-cwl", halflife=halflife)
    metric = TBGCWLMetric(halflife)
    qi = QrelsIndex(qrels)
    worst, n = 0.0, 0
    for run in runs:
        ours = {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)}
        for q in PreparedRun(qi, run).queries:
            relevant = q.grades >= 1
            words = np.array([lengths[d] for d in q.docids])
            cost = T_S + (A * words + B) * np.where(relevant, PC_REL, PC_NONREL)
            gain = np.where(relevant, PC_REL * PS_REL, 0.0)
            reach = np.concatenate(([0.0], np.cumsum(cost)[:-1]))
            z = np.sum(2.0 ** (-reach / halflife))
            theirs = metric.measure(Ranking(q.qid, gain, cost, max_n=gain.size)) * z
            worst = max(worst, abs(ours[q.qid] - theirs) / max(abs(theirs), 1e-300))
            n += 1
    return worst, n


def seeded_lengths(runs, seed=0):
    """A seeded random length (words) for every retrieved document (sorted docids)."""
    docids = sorted({d for run in runs for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    return dict(zip(docids, rng.integers(0, 3000, len(docids)).astype(float).tolist()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=None, help="only the first N runs (default: all)")
    args = ap.parse_args(argv)
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    files = sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))[:args.runs]
    runs = [read_trec_run(f) for f in files]
    worst, n = compare(qrels, runs)
    print(f"unit costs: {n} (run, topic, half-life) cases: max |ours / Z - cwl-eval| = {worst:.3g}")
    worst_tm, n_tm = compare_time_model(qrels, runs, seeded_lengths(runs))
    print(f"time model (seeded lengths): {n_tm} (run, topic) cases: max relative |ours - cwl-eval * Z| = "
          f"{worst_tm:.3g}")
    return 0 if worst < 1e-12 and worst_tm < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
