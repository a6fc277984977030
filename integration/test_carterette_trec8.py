"""Carterette's exemplar identities on every TREC-8 run (SPEC §2).

* M4(AP) = AP and M2(DCG, norm) = nDCG, nDCG@10: against trec_eval's own per-topic
  output (``reference/trec8``, 4 decimals; TREC-8 qrels are binary);
* M3(ERR) = binary ERR with θ = 0.5: against a direct cumulative-product formula;
* M1(RBP, θ) = RBP(p=θ): against ir_measures' RBP (cwl-eval) on every run,
  each fed its trec_eval-ordered ranking with tie-free scores (cwl-eval breaks
  score ties differently from trec_eval);
* the vectorised batch path equals the per-ranking functional API for all 24
  combinations (a subset of runs), and the paper's normalised measures lie in
  [0, 1] on every run.
"""
import gzip

import ir_measures
import numpy as np
import pytest

import irmeasures_markov as imm
from irmeasures_markov.rankings import PreparedRun, QrelsIndex, segment_cumsum, segment_sum

HALF_ULP = 0.5e-4 + 1e-9
REF = {"map": imm.M4(dist="AP"), "ndcg": imm.M2(dist="DCG"), "ndcg_cut_10": imm.M2(dist="DCG") @ 10}


@pytest.fixture(scope="module")
def values(trec8):
    qrels, runs = trec8
    measures = list(REF.values()) + [imm.M3(dist="ERR"), imm.M1(dist="RBP", theta=0.8)]
    ev = imm.PROVIDER.evaluator(measures, qrels)
    return {name: ev.values(run) for name, run in runs.items()}


def test_ap_and_ndcg_equal_trec_eval(data_dir, values):
    assert len(values) == 129
    bad = []
    for name, per_measure in values.items():
        ref = {}
        with gzip.open(data_dir / "reference" / "trec8" / f"eval.{name}.gz", "rt") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and parts[0] in REF and parts[1] != "all":
                    ref.setdefault(parts[0], {})[parts[1]] = float(parts[2])
        for key, m in REF.items():
            assert set(ref[key]) == set(per_measure[m]), name
            for q, v in per_measure[m].items():
                if abs(v - ref[key][q]) > HALF_ULP:
                    bad.append((name, key, q, v, ref[key][q]))
    assert not bad, bad[:10]


def test_m3_err_is_binary_err(trec8, values):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    for name, run in runs.items():
        b = PreparedRun(qi, run).batch(rel=1)
        a = b.relevant.astype(np.float64)
        seen_before = segment_cumsum(a, b.offsets) - a
        err = segment_sum(a * 0.5 * 0.5 ** seen_before / b.ranks, b.offsets)
        got = values[name][imm.M3(dist="ERR")]
        np.testing.assert_allclose([got[q] for q in b.qids], err, rtol=0, atol=1e-12, err_msg=name)


def test_m1_rbp_equals_ir_measures_rbp(trec8, values):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    rbp = ir_measures.parse_measure("RBP(p=0.8,rel=1)")
    for name in sorted(runs):
        prepared = PreparedRun(qi, runs[name])
        tie_free = {q.qid: {d: -float(i) for i, d in enumerate(q.docids)} for q in prepared.queries}
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([rbp], qrels, tie_free)}
        got = values[name][imm.M1(dist="RBP", theta=0.8)]
        for q, v in got.items():
            assert v == pytest.approx(ref[q], abs=1e-12), (name, q)


def test_batch_equals_functional_all_combinations(trec8):
    from irmeasures_markov.measures.carterette import DISTRIBUTIONS, MODELS, user_model_batch, user_model_measure
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    for name in sorted(runs)[::16]:
        prepared = PreparedRun(qi, runs[name])
        for cutoff in (None, 20):
            b = prepared.batch(rel=1, cutoff=cutoff)
            for model in MODELS:
                for dist in DISTRIBUTIONS:
                    got = user_model_batch(b, model, dist, cutoff=cutoff)
                    want = [user_model_measure(b.relevant[b.offsets[i]:b.offsets[i + 1]], model, dist,
                                               recall_base=int(b.recall_base[i]), cutoff=cutoff)
                            for i in range(b.n_queries)]
                    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13,  # M4 static: prefix differences
                                               err_msg=f"{name} {model} {dist} @{cutoff}")


def test_normalised_paper_measures_in_unit_interval(trec8):
    from irmeasures_markov.measures.carterette import PAPER_MEASURES, default_norm, user_model_batch
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    normed = [(m, d) for m, d in PAPER_MEASURES.values() if default_norm(m, d)]
    assert len(normed) == 4  # RBTR, DCG, RR, ARR
    for name, run in runs.items():
        b = PreparedRun(qi, run).batch(rel=1)
        for model, dist in normed:
            v = user_model_batch(b, model, dist)
            assert np.all((v >= 0) & (v <= 1 + 1e-12)), (name, model, dist)
