"""Pool downsampling on TREC-8 (MP paper §5.3-5.4, Figures 3 and 4), on a subset of runs to stay fast.

Checks the qualitative findings the paper reports and the invariants of the
protocol; the full figures come from integration/reproduce/reproduce_mp_figures.py.
"""
import numpy as np
import pytest
from reproduce_mp_figures import MEASURES as FIGURE_MEASURES
from reproduce_mp_figures import findings, markdown

from irmeasures_markov.experiments import PoolReduction, evaluate, kendall_tau, pool_reduction
from irmeasures_markov.io import downsample_qrels

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
    full = reduction.evaluations[0].means_array()
    j = reduction.labels.index("AP")
    assert kendall_tau(full[:, j], reduction.evaluations[2].means_array()[:, j]) == pytest.approx(reduction.tau[2, j])


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


def test_gl_rec_improves_on_gl_but_is_not_close_to_bpref(reduction):
    """What docs/mp-figures-trec8.md reports, on this other subset and seed: @Rec(T) helps the GL model
    (the paper's finding), but at 10% its τ stays well below bpref's (the paper's TREC-8 claim)."""
    t = reduction.tau
    lab = reduction.labels
    gl, glr, bp = lab.index("MP GL_AD_ID"), lab.index("MP GL_AD_ID@Rec(T)"), lab.index("bpref")
    assert np.all(t[1:, glr] > t[1:, gl])
    assert t[2, bp] - t[2, glr] > 0.05


def _figure_result(tau_gl_rec=None):
    """A PoolReduction shaped like the script's, from the seed-0 TREC-8 numbers (no data needed)."""
    labels = list(FIGURE_MEASURES)
    mean = np.array([[0.2345, 0.4269, 0.2719, 0.2411, 0.4436, 0.2991, 0.2308, 0.2864, 0.2213],
                     [0.2166, 0.3861, 0.2579, 0.2464, 0.4014, 0.2757, 0.2126, 0.2641, 0.2038],
                     [0.1790, 0.3071, 0.2228, 0.2461, 0.3223, 0.2267, 0.1740, 0.2171, 0.1669],
                     [0.1407, 0.2178, 0.1776, 0.2457, 0.2281, 0.1750, 0.1354, 0.1684, 0.1306],
                     [0.0954, 0.1163, 0.1145, 0.2354, 0.1229, 0.1167, 0.0907, 0.1129, 0.0882],
                     [0.0594, 0.0418, 0.0470, 0.2625, 0.0442, 0.0711, 0.0557, 0.0693, 0.0545]])
    tau = np.array([[1.0] * 9,
                    [0.9816, 0.9600, 0.9629, 0.9755, 0.9576, 0.9760, 0.9828, 0.9741, 0.9811],
                    [0.9595, 0.9112, 0.9251, 0.9654, 0.9072, 0.9423, 0.9644, 0.9435, 0.9629],
                    [0.9162, 0.8813, 0.8653, 0.9445, 0.8747, 0.8917, 0.9213, 0.8878, 0.9203],
                    [0.8486, 0.8267, 0.7266, 0.9217, 0.8098, 0.8016, 0.8534, 0.8052, 0.8486],
                    [0.6579, 0.6396, 0.5744, 0.8246, 0.6358, 0.5735, 0.6739, 0.5748, 0.6613]])
    if tau_gl_rec is not None:
        tau[:, labels.index("MP GL_AD_ID@Rec(T)")] = tau_gl_rec
    return PoolReduction([100.0, 90.0, 70.0, 50.0, 30.0, 10.0], labels, mean, tau, [])


def test_figure_findings_follow_the_numbers():
    """The document's verdicts are computed, not written: the same script says 'reproduced' when
    GL_AD_ID@Rec(T) tracks bpref and 'not reproduced' for the numbers we actually get."""
    verdict = {f: v for f, _, v in findings(_figure_result())}
    close = next(f for f in verdict if "closely to bpref" in f)
    above_ap = next(f for f in verdict if "outperform AP" in f)
    assert verdict[close].startswith("not reproduced")
    assert verdict[above_ap].startswith("not reproduced")
    assert verdict[next(f for f in verdict if "bpref tends to stay constant" in f)] == "reproduced"
    res = _figure_result()
    moved = findings(_figure_result(tau_gl_rec=res.tau[:, res.labels.index("bpref")] - 0.01))
    verdict = {f: v for f, _, v in moved}
    assert verdict[close] == "reproduced"
    text = markdown(res, 129, 50, 0, "f3.png", "f4.png")
    assert "third decimal" not in text and "As in the paper" not in text
    assert "| Fig. 4 (TREC 8): with @Rec(T) the GL models perform closely to bpref |" in text
