"""Classic paired tests: equal scipy.stats, exact enumeration, seeds, corrections, inputs and errors."""
import itertools

import ir_measures
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import irmeasures_markov as imm
from irmeasures_markov.inference import (
    adjust_pvalues,
    all_pairs,
    bootstrap_test,
    discriminative_power,
    paired_t_test,
    randomization_test,
    score_matrix,
    sign_test,
    wilcoxon_test,
)

ALTS = ("two-sided", "greater", "less")


@pytest.fixture
def scores():
    rng = np.random.default_rng(42)
    base = rng.random((30, 1))
    return np.clip(base + rng.normal(0, 0.1, (30, 6)) + np.linspace(0, 0.08, 6), 0, 1)


@pytest.mark.parametrize("alternative", ALTS)
def test_t_wilcoxon_sign_equal_scipy(scores, alternative):
    for j in range(1, 6):
        a, b = scores[:, 0], scores[:, j]
        t = paired_t_test(a, b, alternative)
        ref = stats.ttest_rel(a, b, alternative=alternative)
        assert t.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
        w = wilcoxon_test(a, b, alternative)
        ref = stats.wilcoxon(a - b, alternative=alternative)
        assert (w.statistic, w.pvalue) == pytest.approx((ref.statistic, ref.pvalue))
        s = sign_test(a, b, alternative)
        d = a - b
        ref = stats.binomtest(int((d > 0).sum()), int((d != 0).sum()), 0.5, alternative=alternative)
        assert s.pvalue == pytest.approx(ref.pvalue)


@pytest.mark.parametrize("alternative", ALTS)
def test_randomization_matches_exact_enumeration(alternative):
    rng = np.random.default_rng(7)
    for n in (3, 6, 10):
        a, b = rng.random(n), rng.random(n)
        d = a - b
        obs = d.mean()
        perms = [np.mean(np.array(s) * d) for s in itertools.product((-1, 1), repeat=n)]
        if alternative == "two-sided":
            want = np.mean([abs(x) >= abs(obs) - 1e-12 for x in perms])
        elif alternative == "greater":
            want = np.mean([x >= obs - 1e-12 for x in perms])
        else:
            want = np.mean([x <= obs + 1e-12 for x in perms])
        r = randomization_test(a, b, alternative, n_resamples=10000)
        assert r.exact and r.n_resamples == 2 ** n
        assert r.pvalue == pytest.approx(want, abs=1e-15)
        assert all_pairs(np.column_stack([a, b]), "randomization", alternative=alternative,
                         correction=None).pvalue[0] == pytest.approx(want, abs=1e-15)


def test_resampling_tests_are_seeded_and_close_to_t(scores):
    a, b = scores[:, 0], scores[:, 5]
    for fn in (randomization_test, bootstrap_test):
        r1, r2, r3 = fn(a, b, seed=1), fn(a, b, seed=1), fn(a, b, seed=2)
        assert r1 == r2
        assert r1.pvalue != r3.pvalue
        assert r1.pvalue == pytest.approx(paired_t_test(a, b).pvalue, abs=0.03)
    p1 = all_pairs(scores, "bootstrap", seed=3).pvalue
    p2 = all_pairs(scores, "bootstrap", seed=3).pvalue
    np.testing.assert_array_equal(p1, p2)


def test_all_pairs_equal_single_tests(scores):
    for test in ("t", "randomization", "bootstrap", "wilcoxon", "sign"):
        res = all_pairs(scores, test, correction=None, n_resamples=2000, seed=5)
        assert res.a.size == 15
        for k in range(res.a.size):
            single = {"t": paired_t_test, "wilcoxon": wilcoxon_test, "sign": sign_test}.get(test)
            if single is not None:
                want = single(scores[:, res.a[k]], scores[:, res.b[k]]).pvalue
                assert res.pvalue[k] == pytest.approx(want, rel=1e-10)
        if test == "randomization":
            one = randomization_test(scores[:, 0], scores[:, 1], n_resamples=2000, seed=5)
            assert res.pvalue[0] == pytest.approx(one.pvalue)
        if test == "bootstrap":
            one = bootstrap_test(scores[:, 0], scores[:, 1], n_resamples=2000, seed=5)
            assert res.pvalue[0] == pytest.approx(one.pvalue)
    frame = res.to_frame()
    assert list(frame.columns[:2]) == ["system_a", "system_b"]


def test_corrections():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    np.testing.assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.8])
    # Holm by hand: sorted 0.01*4, 0.03*3, 0.04*2, 0.2*1 with running max
    np.testing.assert_allclose(adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(adjust_pvalues(p, None), p)
    with pytest.raises(ValueError, match="holm"):
        adjust_pvalues(p, "fdr")


def test_inputs_from_ir_measures_pyterrier_and_evaluator():
    rng = np.random.default_rng(0)
    qrels = {str(q): {f"d{i}": int(rng.random() < 0.3) for i in range(30)} for q in range(1, 6)}
    for q in qrels:
        qrels[q]["d0"] = 1
    runs = {f"sys{j}": {q: {f"d{i}": float(rng.random()) for i in range(30)} for q in qrels} for j in range(3)}
    measures = [ir_measures.AP, imm.MP]
    per_system = {n: list(ir_measures.iter_calc(measures, qrels, r)) for n, r in runs.items()}
    m1 = score_matrix(per_system, measure="AP")
    assert m1.values.shape == (5, 3) and m1.topics == ["1", "2", "3", "4", "5"]
    frame = pd.concat([pd.DataFrame([r._asdict() for r in rows]).assign(name=n) for n, rows in per_system.items()])
    m2 = score_matrix(frame, measure=ir_measures.AP)
    np.testing.assert_array_equal(m1.values, m2.values)
    pt_style = frame.rename(columns={"query_id": "qid"})
    np.testing.assert_array_equal(score_matrix(pt_style, measure="AP").values, m1.values)
    ev = imm.RelevanceEvaluator(qrels, {"map", "MP"})
    m3 = score_matrix({n: ev.evaluate(r) for n, r in runs.items()}, measure="map")
    np.testing.assert_allclose(m3.values, m1.values, atol=1e-6)
    m4 = score_matrix({n: {q: v["MP"] for q, v in ev.evaluate(r).items()} for n, r in runs.items()})
    np.testing.assert_allclose(m4.values, score_matrix(per_system, measure="MP").values)
    with pytest.raises(ValueError, match="several measures"):
        score_matrix(per_system)


def test_bad_input():
    good = {"A": {"1": 0.1, "2": 0.2, "3": 0.3}, "B": {"1": 0.2, "2": 0.1, "3": 0.4}}
    with pytest.raises(ValueError, match=r"'B' lacks 1 topic\(s\): \['3'\]"):
        score_matrix({"A": good["A"], "B": {"1": 0.2, "2": 0.1}})
    with pytest.raises(ValueError, match=r"system 'B' on topic '2' is nan"):
        score_matrix({"A": good["A"], "B": {"1": 0.2, "2": float("nan"), "3": 0.1}})
    with pytest.raises(ValueError, match="at least 2 topics"):
        score_matrix({"A": {"1": 0.1}, "B": {"1": 0.2}})
    with pytest.raises(ValueError, match="at least 2 topics"):
        paired_t_test([0.1], [0.2])
    with pytest.raises(ValueError, match="finite"):
        randomization_test([0.1, np.nan], [0.2, 0.3])
    with pytest.raises(ValueError, match="alternative"):
        paired_t_test([0.1, 0.2], [0.2, 0.3], "bigger")
    with pytest.raises(ValueError, match=r"systems \['C'\] are not in the input"):
        score_matrix(good, systems=["A", "C"])
    assert score_matrix(good, systems=["B", "A"]).systems == ["B", "A"]
    with pytest.raises(ValueError, match=r"test must be one of \['t', 'wilcoxon', 'sign', 'randomization', "
                       r"'bootstrap'\], got 'anova'"):
        all_pairs(score_matrix(good), "anova")


def test_discriminative_power(scores):
    table = discriminative_power({"good": scores, "noise": np.random.default_rng(1).random((30, 6))},
                                 n_resamples=2000, progress=False)
    assert list(table.columns) == ["t", "randomization", "bootstrap"]
    assert table.loc["good"].min() > table.loc["noise"].max()
    sig = all_pairs(scores, "t", correction=None).pvalue < 0.05
    assert table.loc["good", "t"] == pytest.approx(sig.mean())


def test_input_from_a_real_pyterrier_experiment():
    """``pt.Experiment(..., perquery=True)`` output goes straight in; our t-test equals PyTerrier's baseline p-value."""
    pt = pytest.importorskip("pyterrier")
    rng = np.random.default_rng(3)
    qids = [str(q) for q in range(1, 9)]
    topics = pd.DataFrame({"qid": qids, "query": ["q"] * len(qids)})
    qrels = pd.DataFrame([(q, f"d{i}", int(rng.random() < 0.4)) for q in qids for i in range(20)],
                         columns=["qid", "docno", "label"])
    systems = [pd.DataFrame([(q, f"d{i}", float(rng.random() + 0.3 * s * (i % 2))) for q in qids for i in range(20)],
                            columns=["qid", "docno", "score"]) for s in range(3)]
    names = ["A", "B", "C"]
    perq = pt.Experiment(systems, topics, qrels, eval_metrics=["map", imm.MP], names=names, perquery=True)
    sm = score_matrix(perq, measure="map")
    assert sm.systems == names and sm.topics == qids
    by_hand = perq[perq.measure == "map"].pivot(index="qid", columns="name", values="value").loc[qids, names]
    np.testing.assert_array_equal(sm.values, by_hand.to_numpy())
    summary = pt.Experiment(systems, topics, qrels, eval_metrics=["map"], names=names, baseline=0)
    for j in (1, 2):
        # PyTerrier's baseline column: scipy's two-sided paired t-test of system j against system 0
        assert paired_t_test(sm.values[:, j], sm.values[:, 0]).pvalue == pytest.approx(
            summary["map p-value"].iloc[j], rel=1e-9)
    assert score_matrix(perq, measure=imm.MP).values.shape == (8, 3)


@pytest.mark.filterwarnings("ignore::irmeasures_markov.inference._posterior.SamplingWarning")  # 20 draws: R-hat warns
def test_bayes_without_pymc_says_how_to_install(monkeypatch):
    """Without PyMC the Gibbs backend still works and the PyMC models name the extra to install."""
    import sys

    from irmeasures_markov.inference import bayesian_linear_model, direct_relevance_model
    monkeypatch.setitem(sys.modules, "pymc", None)
    y = np.random.default_rng(0).random((5, 3))
    assert bayesian_linear_model(y, backend="gibbs", draws=20, tune=20, progress=False).system_effects.shape == (80, 3)
    with pytest.raises(ImportError, match=r'pip install "irmeasures-markov\[bayes\]"'):
        bayesian_linear_model(y, backend="pymc")
    assert bayesian_linear_model(y, draws=20, tune=20).system_effects.shape == (80, 3)  # the default: Gibbs
    with pytest.raises(ImportError, match="bayes"):
        direct_relevance_model(np.zeros((2, 2, 3)))


def test_t_test_with_constant_differences_is_documented_not_nan():
    a = np.array([0.5, 0.25, 0.75, 0.125])   # dyadic: a + 0.25 - a is exactly 0.25 for every topic
    same = paired_t_test(a, a)
    assert (same.statistic, same.pvalue) == (0.0, 1.0)
    shifted = paired_t_test(a + 0.25, a)
    assert shifted.statistic == np.inf and shifted.pvalue == 0.0
    assert paired_t_test(a + 0.25, a, alternative="less").pvalue == 1.0
