"""P@H classical instantiations and exact methods on every TREC-8 run (SPEC §3).

* PH(user='P')@k = trec_eval P_k (reference files, 4 decimals), scaled by k / min(k, retrieved);
* PH(user='AP') = pytrec_eval AP x RB / (relevant retrieved), in the same process on tie-free scores
  (the trec_eval order from our ranking preparation, so pytrec_eval's float32 cannot reorder);
* RBP(N), RBP(inf), DCG (max(1, log2 i)), ERR: direct vectorised formulas;
* random-walk models: the batch path equals the functional API, order 2 equals the dense
  fundamental matrix, and order 1 with utility loss agrees with simulated users.
"""
import gzip
import math

import numpy as np
import pytest

import irmeasures_markov as imm
from irmeasures_markov._util._segments import segment_cumsum, segment_sum
from irmeasures_markov.measures.stopping_time import browsing_model
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

HALF_ULP = 0.5e-4 + 1e-9
MEASURES = {
    "P": imm.PH(user="P"), "P10": imm.PH(user="P") @ 10, "AP": imm.PH(user="AP"),
    "RBPN": imm.PH(user="RBP", p=0.8), "RBPinf": imm.PH(user="RBP", p=0.8, tail="inf"),
    "DCG": imm.PH(user="DCG"), "ERR": imm.PH(user="ERR"),
}


@pytest.fixture(scope="module")
def values(trec8):
    qrels, runs = trec8
    ev = imm.PROVIDER.evaluator(list(MEASURES.values()), qrels)
    return {name: ev.values(run) for name, run in runs.items()}


def test_precision_equals_trec_eval(data_dir, trec8, values):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    assert len(values) == 129
    bad = []
    for name, run in runs.items():
        ref = {}
        with gzip.open(data_dir / "reference" / "trec8" / f"eval.{name}.gz", "rt") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and parts[0] == "P_10" and parts[1] != "all":
                    ref[parts[1]] = float(parts[2])
        b = PreparedRun(qi, run).batch()
        n10 = np.minimum(b.lengths, 10)
        got = values[name][MEASURES["P10"]]
        for q, n in zip(b.qids, n10.tolist()):
            if abs(got[q] * n / 10 - ref[q]) > HALF_ULP:
                bad.append((name, q, got[q], ref[q]))
        # P@H with DFBM over the whole ranking is precision at the ranking's length
        full = values[name][MEASURES["P"]]
        want = segment_sum(b.relevant, b.offsets) / np.maximum(b.lengths, 1)
        np.testing.assert_allclose([full[q] for q in b.qids], want, rtol=0, atol=1e-15)
    assert not bad, bad[:10]


def test_ap_over_retrieved_equals_pytrec_eval_map(trec8, values):
    import pytrec_eval
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
    for name in sorted(runs):
        prepared = PreparedRun(qi, runs[name])
        tie_free = {q.qid: {d: float(len(q.docids) - i) for i, d in enumerate(q.docids)} for q in prepared.queries}
        ref = evaluator.evaluate(tie_free)
        b = prepared.batch()
        retrieved_rel = segment_sum(b.relevant, b.offsets)
        got = values[name][MEASURES["AP"]]
        for q, rr, rb in zip(b.qids, retrieved_rel.tolist(), b.recall_base.tolist()):
            want = ref[q]["map"] * rb / rr if rr else 0.0
            assert got[q] == pytest.approx(want, abs=1e-12), (name, q)


def test_rbp_dcg_err_direct_formulas(trec8, values):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    for name, run in runs.items():
        b = PreparedRun(qi, run).batch()
        a = b.relevant.astype(np.float64)
        i = b.ranks.astype(np.float64)
        disc = 0.8 ** (i - 1)
        num = segment_sum(a * disc, b.offsets)
        rbp_n = num / ((1 - 0.8 ** b.lengths) / 0.2)
        rbp_inf = 0.2 * num
        dcg = segment_sum(a / np.maximum(1.0, np.log2(i)), b.offsets)
        # ERR, binary: stop with 1/2 at a relevant document, with 1 at rank N (SPEC §3)
        stop = 0.5 * a
        last = b.offsets[1:] - 1
        stop[last] = 1.0
        before = segment_cumsum(a, b.offsets) - a
        err = segment_sum(stop * 0.5 ** before / i, b.offsets)
        for key, want in (("RBPN", rbp_n), ("RBPinf", rbp_inf), ("DCG", dcg), ("ERR", err)):
            got = values[name][MEASURES[key]]
            want = np.where(b.recall_base > 0, want, 0.0)
            np.testing.assert_allclose([got[q] for q in b.qids], want, rtol=1e-12, atol=1e-14,
                                       err_msg=f"{name} {key}")


RW = [dict(browse="RWBM", p=0.5, q=0.25), dict(browse="RWBM", p=0.5, q=0.25, top="forward", loss=0.25),
      dict(browse="RWBM", p=0.6, q=0.3, p_rel=0.3, q_rel=0.5, order=1),
      dict(browse="RWBM", p=0.5, q=0.25, top="forward", loss=0.25, order=1)]


def test_random_walk_batch_equals_functional(trec8):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    names = sorted(runs)[::32]
    for params in RW:
        m = imm.PH(**params)
        for name in names:
            prepared = PreparedRun(qi, runs[name])
            got = m.compute(prepared)
            b = m.batch(prepared)
            for k, (q, relevant, _grades, rb) in enumerate(b.segments()):
                if k % 7:
                    continue
                want = browsing_model(np.where(relevant, 1, 0), **params).value() if rb else 0.0
                assert got[k] == pytest.approx(want, rel=1e-10, abs=1e-13), (name, q, params)


def test_order2_against_dense_fundamental_matrix(trec8):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    prepared = PreparedRun(qi, runs[sorted(runs)[0]])
    b = prepared.batch()
    got = imm.PH(browse="RWBM", p=0.5, q=0.3, loss=0.4).compute(prepared)
    for k, (_q, relevant, _grades, _rb) in list(enumerate(b.segments()))[:4]:
        n = relevant.size
        fw = np.full(n, 0.5)
        bw = np.full(n, 0.3)
        fw[-1] = bw[0] = 0
        N = np.linalg.inv(np.eye(n) - np.diag(fw[:-1], 1) - np.diag(bw[1:], -1))
        h, f = N[0] / np.diag(N), 1 - 1 / np.diag(N)
        eg = np.sum(relevant * h / (1 - 0.6 * f))
        assert got[k] == pytest.approx(eg / N[0].sum(), rel=1e-10)


def test_order1_with_loss_against_simulation(trec8):
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    prepared = PreparedRun(qi, runs[sorted(runs)[5]])
    b = prepared.batch()
    params = dict(browse="RWBM", p=0.55, q=0.35, loss=0.25, order=1)
    got = imm.PH(**params).compute(prepared)
    for k, (q, relevant, _grades, _rb) in list(enumerate(b.segments()))[:6]:
        model = browsing_model(relevant.astype(int), **params)
        v = model.simulate(300_000, seed=k)
        assert abs(v.mean() - got[k]) < 4 * v.std() / math.sqrt(v.size) + 1e-12, q


def test_order1_generating_function_equals_step_recursion(trec8):
    # the plugin's stacked generating-function integral against SPEC §3's step recursion, on full
    # 1000-document TREC-8 rankings (many steps, tens of relevant documents)
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    prepared = PreparedRun(qi, runs[sorted(runs)[11]])
    b = prepared.batch()
    for params in (dict(browse="RWBM", p=0.55, q=0.35, loss=0.25, order=1),
                   dict(browse="RWBM", p=0.6, q=0.3, p_rel=0.3, q_rel=0.5, top="forward", order=1)):
        got = imm.PH(**params).compute(prepared)
        for k, (q, relevant, _grades, _rb) in list(enumerate(b.segments()))[:5]:
            model = browsing_model(relevant.astype(int), **params)
            assert got[k] == pytest.approx(model.expectation(1, method="recursion"), rel=1e-11, abs=2e-12), q
