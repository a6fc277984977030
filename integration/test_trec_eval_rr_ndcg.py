"""experiments.evaluate's float64 RR, nDCG and nDCG@k against trec_eval's own output, every TREC-8 run.

``reference/trec8/eval.RUN.gz`` is ``trec_eval -q -m all_trec`` (4 decimals).
pytrec_eval holds scores as float32: 47 of ``uwmt8a0``'s 50 rankings have
float32 score collisions, and its reciprocal rank there is off by up to 0.1667.
"""
import gzip

import numpy as np
import pytest

HALF_ULP = 0.5e-4 + 1e-9  # trec_eval prints 4 decimals
PAIRS = {"RR": "recip_rank", "nDCG": "ndcg", "nDCG@10": "ndcg_cut_10", "nDCG@100": "ndcg_cut_100",
         "Bpref": "bpref"}


def _reference(path):
    ref = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3 and parts[0] in PAIRS.values() and parts[1] != "all":
                ref.setdefault(parts[1], {})[parts[0]] = float(parts[2])
    return ref


@pytest.fixture(scope="module")
def harness(trec8):
    from irmeasures_markov.experiments import evaluate
    qrels, runs = trec8
    return evaluate(list(PAIRS), qrels, runs, n_jobs=2, progress=False)


def test_rr_ndcg_equal_trec_eval_every_run(harness, data_dir):
    bad = []
    for i, name in enumerate(harness.runs):
        ref = _reference(data_dir / "reference" / "trec8" / f"eval.{name}.gz")
        assert set(ref) == set(harness.topics), name
        for k, q in enumerate(harness.topics):
            for j, label in enumerate(harness.labels):
                if abs(harness.values[i, j, k] - ref[q][PAIRS[label]]) > HALF_ULP:
                    bad.append((name, q, label, harness.values[i, j, k], ref[q][PAIRS[label]]))
    assert not bad, f"{len(bad)} mismatches, e.g. {bad[:5]}"


def test_uwmt8a0_rr_per_topic_where_pytrec_eval_is_off(harness, trec8, data_dir):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs = trec8
    ref = _reference(data_dir / "reference" / "trec8" / "eval.uwmt8a0.gz")
    i, j = harness.runs.index("uwmt8a0"), harness.labels.index("RR")
    ours = dict(zip(harness.topics, harness.values[i, j].tolist()))
    for q, v in ours.items():
        assert abs(v - ref[q]["recip_rank"]) <= HALF_ULP, q
    # to_dict(): load_run_dir's runs are columns, and pytrec_eval takes only dicts
    f32 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(runs["uwmt8a0"].to_dict())
    worst = max(abs(f32[q]["recip_rank"] - ours[q]) for q in ours)
    assert worst == pytest.approx(1 / 6, abs=1e-9)  # the 0.1667: what the float64 route avoids
    assert np.isclose(np.mean(list(ours.values())), np.mean([ref[q]["recip_rank"] for q in ours]), atol=HALF_ULP)
