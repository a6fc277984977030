"""MP(model='UNIFORM', recall=True) == AP on every (run, topic) of TREC-8 (paper §4.2).

References: trec_eval's per-query `map` (printed to 4 decimals) in
reference/trec8/eval.RUN.gz, and a float64 AP computed here in trec_eval order
(score desc, docno desc) for the exact 1e-9 check.  pytrec_eval-terrier is not
the reference: it ranks with float32 scores and reorders near-ties (uwmt8a0).
"""
import gzip

import ir_measures
import numpy as np

from irmeasures_markov import MP

UNIFORM_AP = MP(model="UNIFORM", recall=True)


def reference_map(path):
    out = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            parts = line.split()
            if parts[0] == "map" and parts[1] != "all":
                out[parts[1]] = float(parts[2])
    return out


def float64_ap(qrels_q, docs):
    ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    rel = np.array([qrels_q.get(d, 0) >= 1 for d, _ in ranked])
    rb = sum(g >= 1 for g in qrels_q.values())
    prec = np.cumsum(rel) / np.arange(1, rel.size + 1)
    return float(prec[rel].sum() / rb) if rb else 0.0


def test_uniform_mp_with_recall_is_ap_on_every_trec8_run_and_topic(trec8, data_dir):
    qrels, runs = trec8
    assert len(runs) == 129
    n_checked = 0
    for name, run in runs.items():
        ours = {m.query_id: m.value for m in ir_measures.iter_calc([UNIFORM_AP], qrels, run)}
        ref = reference_map(data_dir / "reference" / "trec8" / f"eval.{name}.gz")
        assert set(ref) <= set(ours)
        for qid, value in ref.items():
            # trec_eval prints "%.4f": compare at exactly that precision
            assert f"{ours[qid]:.4f}" == f"{value:.4f}", (name, qid, ours[qid], value)
            if qid in run:
                assert abs(ours[qid] - float64_ap(qrels[qid], run[qid])) <= 1e-9, (name, qid)
            n_checked += 1
    assert n_checked == 129 * 50


def test_uwmt8a0_float32_trap(trec8):
    qrels, runs = trec8
    val = {m.query_id: m.value for m in ir_measures.iter_calc([UNIFORM_AP], qrels, runs["uwmt8a0"])}
    assert round(val["441"], 4) == 0.6326  # trec_eval (float64); float32 ordering gives 0.6105
