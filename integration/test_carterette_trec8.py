"""Carterette's exemplar identities on every TREC-8 run (SPEC §2).

* M4(AP) = AP and M2(DCG, norm) = nDCG, nDCG@10: against trec_eval's own per-topic
  output (``reference/trec8``, 4 decimals; TREC-8 qrels are binary);
* M3(ERR) = binary ERR with θ = 0.5: against a direct cumulative-product formula;
* M3(ERR, θ = 1/16)@20 = ir_measures' ``ERR@20`` (gdeval: gain (2^g − 1)/2^4,
  which is 1/16 on binary qrels) on every run;
* M1(RBP, θ) = RBP(p=θ): against ir_measures' RBP (cwl-eval) on every run,
  each fed its trec_eval-ordered ranking with tie-free scores (cwl-eval breaks
  score ties differently from trec_eval);
* the batch path equals a dense numpy evaluation written here (independent of
  the package) for all 24 combinations, with and without ``norm`` (a subset of
  runs); every normalised combination lies in [0, 1] on every run.
"""
import gzip
import time

import ir_measures
import numpy as np
import pytest

import irmeasures_markov as imm
from irmeasures_markov._util._segments import segment_cumsum, segment_sum
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

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


def test_m3_err_equals_gdeval_err(trec8, data_dir):
    """M3(ERR, θ = 1/16)@20 against ir_measures' ERR@20 (its gdeval provider) on all 129 runs.

    gdeval is a perl script that rereads the qrels and the run on every call
    (0.4 s a run on TREC-8: 55 s for all).  It reads only judgments > 0 and
    ERR@20 only the top 20 documents, so each run is handed over as its top 20
    with the relevant judgments: the same values, 0.05 s a run.  The scores
    given are -rank in trec_eval's order, so gdeval (ties by docid descending,
    as trec_eval, but on the scores as written to its input file) cannot
    reorder ties; a few runs also go through with the full qrels and their own
    scores to show the shortcut changes nothing.
    """
    provider = ir_measures.providers.registry["gdeval"]
    if not provider.is_available():
        pytest.skip(f"ir_measures provider gdeval not available: {provider.install_instructions()}")
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    relevant_only = {q: {d: g for d, g in docs.items() if g > 0} for q, docs in qrels.items()}
    err20 = ir_measures.parse_measure("ERR@20")
    ours_measure = imm.M3(dist="ERR", theta=1 / 16) @ 20
    ours_measure.validate_params()
    ours, t_gdeval, bad = {}, 0.0, []
    for name in sorted(runs):
        prepared = PreparedRun(qi, runs[name])
        ours[name] = dict(zip(prepared.qids, ours_measure.compute(prepared)))
        top20 = {q.qid: {d: -float(i) for i, d in enumerate(q.docids[:20])} for q in prepared.queries}
        start = time.perf_counter()
        ref = {m.query_id: m.value for m in provider.iter_calc([err20], relevant_only, top20)}
        t_gdeval += time.perf_counter() - start
        assert set(ref) == set(ours[name]), name   # every TREC-8 topic has relevant documents: gdeval reports all
        bad += [(name, q, ours[name][q], ref[q]) for q in ref
                if abs(ours[name][q] - ref[q]) > 6e-6]  # gdeval prints 5 decimals
    assert not bad, bad[:10]
    start = time.perf_counter()
    for name in sorted(runs)[::43]:
        # to_dict(): a provider called directly (not through ir_measures.calc) takes only dicts
        full = {m.query_id: m.value for m in provider.iter_calc([err20], qrels, runs[name].to_dict())}
        assert set(full) == set(ours[name]), name
        assert max(abs(ours[name][q] - full[q]) for q in full) <= 6e-6, name
    print(f"gdeval ERR@20: {len(runs)} runs in {t_gdeval:.1f} s (top 20, relevant judgments), "
          f"3 runs in {time.perf_counter() - start:.1f} s (full inputs)")


def dense_value(a, rb, model, dist, theta, f="1/k"):
    """The defining sums over every rank of one ranking, written from the paper (no package code)."""
    if rb == 0:
        return 0.0
    k = np.arange(1, a.size + 1, dtype=np.float64)
    r = np.cumsum(a)
    if dist == "RBP":
        p, tail = (1 - theta) * theta ** (k - 1), theta ** (k - 1)
    elif dist == "DCG":
        p, tail = 1 / np.log2(k + 1) - 1 / np.log2(k + 2), 1 / np.log2(k + 1)
    elif dist == "RR":
        p, tail = 1 / (k * (k + 1)), 1 / k
    else:
        tail = None
        if dist == "ERR":
            p = a * theta * (1 - theta) ** (r - a)
        elif dist == "AP":
            p = a / rb
        else:
            p = np.where(a > 0, 1 / (r * (r + 1) + (a == 0)), 0.0)
    if model == "M1":
        return float(a @ p)
    if model == "M2":
        return float(a @ tail) if tail is not None else float(p @ r)
    if model == "M3":
        return float(p @ (1 / k if f == "1/k" else k))
    return float(p @ (r / k))


def dense_normalised(a, rb, model, dist, theta, cutoff):
    """Ratio to the ideal ranking: RB relevant, then non-relevant up to the run's length, cut at the cutoff."""
    ideal = np.concatenate((np.ones(rb), np.zeros(max(0, a.size - rb))))[:cutoff]
    best = dense_value(ideal, rb, model, dist, theta)
    return dense_value(a, rb, model, dist, theta) / best if best > 0 else 0.0


def test_batch_equals_dense_sums_all_combinations(trec8):
    from irmeasures_markov.measures import DEFAULT_THETA, DISTRIBUTIONS, MODELS, user_model_batch
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    for name in sorted(runs)[::16]:
        prepared = PreparedRun(qi, runs[name])
        for cutoff in (None, 20):
            b = prepared.batch(rel=1, cutoff=cutoff)
            rankings = [(b.relevant[b.offsets[i]:b.offsets[i + 1]].astype(np.float64), int(b.recall_base[i]))
                        for i in range(b.n_queries)]
            for model in MODELS:
                for dist in DISTRIBUTIONS:
                    theta = DEFAULT_THETA.get(dist)
                    for norm in (False, True):
                        got = user_model_batch(b, model, dist, norm=norm, cutoff=cutoff)
                        want = [dense_normalised(a, rb, model, dist, theta, cutoff) if norm
                                else dense_value(a, rb, model, dist, theta) for a, rb in rankings]
                        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13,  # M4 static: prefix differences
                                                   err_msg=f"{name} {model} {dist} @{cutoff} norm={norm}")


def test_normalised_paper_measures_in_unit_interval(trec8):
    from irmeasures_markov.measures import user_model_batch
    from irmeasures_markov.measures._carterette_distributions import PAPER_MEASURES, default_norm
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    normed = [(m, d) for m, d in PAPER_MEASURES.values() if default_norm(m, d)]
    assert len(normed) == 4  # RBTR, DCG, RR, ARR
    for name, run in runs.items():
        b = PreparedRun(qi, run).batch(rel=1)
        for model, dist in normed:
            v = user_model_batch(b, model, dist)
            assert np.all((v >= 0) & (v <= 1 + 1e-12)), (name, model, dist)


def test_every_normalised_combination_in_unit_interval(trec8):
    """norm=True on all 24 combinations (f = 1/k), with and without a cutoff: TREC-8 runs retrieve up to
    1000 documents for topics with a few relevant ones, where an unpadded ideal ranking was beaten."""
    from irmeasures_markov.measures import DISTRIBUTIONS, MODELS, user_model_batch
    qrels, runs = trec8
    qi = QrelsIndex(qrels)
    for name, run in runs.items():
        prepared = PreparedRun(qi, run)
        for cutoff in (None, 10):
            b = prepared.batch(rel=1, cutoff=cutoff)
            for model in MODELS:
                for dist in DISTRIBUTIONS:
                    v = user_model_batch(b, model, dist, norm=True, cutoff=cutoff)
                    assert np.all((v >= 0) & (v <= 1 + 1e-12)), (name, model, dist, cutoff, v.max())
