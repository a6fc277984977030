"""Pool downsampling on TREC-8 (MP paper §5.3-5.4, Figures 3 and 4), on a subset of runs to stay fast.

Checks the qualitative findings the paper reports and the invariants of the
protocol; the full figures come from integration/reproduce_mp_figures.py.
"""
import numpy as np
import pytest

from irmeasures_markov.datasets import downsample_qrels
from irmeasures_markov.experiments import evaluate, kendall_tau, pool_reduction

MEASURES = {"AP": "AP", "P@10": "P@10", "bpref": "Bpref", "RBP": "RBP(p=0.8,rel=1)",
            "MP GL_AD_ID": "MP", "MP GL_AD_ID@Rec(T)": "MP(recall=True)",
            "MP LO_AD_ID": "MP(model='LO_AD_ID')"}


@pytest.fixture(scope="module")
def reduction(trec8):
    qrels, runs = trec8
    names = sorted(runs)[::3]  # 43 runs
    sub = {n: runs[n] for n in names}
    return pool_reduction(MEASURES, qrels, sub, percents=(50, 10), seed=1, n_jobs=2, progress=False)


def test_full_pool_row(reduction):
    assert reduction.percents == [100.0, 50.0, 10.0]
    np.testing.assert_allclose(reduction.tau[0], 1.0)


def test_mean_scores_fall_except_bpref(reduction):
    """Fig. 3: AP, P@10, RBP and MP fall as the pool shrinks; bpref stays almost constant."""
    m = reduction.mean_scores
    lab = reduction.labels
    for name in ("AP", "P@10", "RBP", "MP GL_AD_ID", "MP GL_AD_ID@Rec(T)", "MP LO_AD_ID"):
        j = lab.index(name)
        assert m[0, j] > m[1, j] > m[2, j], name
    j = lab.index("bpref")
    assert abs(m[2, j] - m[0, j]) < 0.35 * abs(m[2, lab.index("AP")] - m[0, lab.index("AP")]) + 0.02


def test_tau_falls_with_the_pool(reduction):
    """Fig. 4: τ with the full-pool ranking decreases with the pool; bpref is the most robust."""
    t = reduction.tau
    lab = reduction.labels
    assert np.all(t[1] >= t[2] - 0.02)
    assert np.all((t[1:] > 0.3) & (t[1:] <= 1))
    assert t[2, lab.index("bpref")] >= max(t[2, lab.index("AP")], t[2, lab.index("P@10")]) - 0.02


def test_reduced_evaluation_matches_direct(trec8, reduction):
    """The harness' 10% pool row equals evaluating the downsampled qrels directly."""
    qrels, runs = trec8
    names = sorted(runs)[::3]
    reduced = downsample_qrels(qrels, 10, seed=1)
    ev = evaluate(MEASURES, reduced, {n: runs[n] for n in names[:5]}, topics=reduction.evaluations[0].topics,
                  progress=False)
    np.testing.assert_allclose(ev.values, reduction.evaluations[2].values[:5], rtol=0, atol=1e-12)
    full = reduction.evaluations[0].means()
    j = reduction.labels.index("AP")
    assert kendall_tau(full[:, j], reduction.evaluations[2].means()[:, j]) == pytest.approx(reduction.tau[2, j])


def test_downsampled_pools(trec8):
    qrels, _ = trec8
    p50, p10 = downsample_qrels(qrels, 50, seed=3), downsample_qrels(qrels, 10, seed=3)
    assert downsample_qrels(qrels, 10, seed=3) == p10
    for q, docs in qrels.items():
        rel = sum(g >= 1 for g in docs.values())
        non = len(docs) - rel
        r10 = sum(g >= 1 for g in p10[q].values())
        n10 = len(p10[q]) - r10
        assert r10 == min(rel, max(1, int(np.floor(rel * 0.1 + 0.5))))
        assert n10 == min(non, max(10, int(np.floor(non * 0.1 + 0.5))))
        assert set(p10[q]) <= set(p50[q]) <= set(docs)  # nested pools
        assert all(p10[q][d] == docs[d] for d in p10[q])
