"""Many systems at once: two-way ANOVA, Tukey's HSD (randomized and parametric), effect sizes, topic set size.

References: Sakai's book example (Table 5.1 of 情報アクセス評価方法論, 2015: three systems, 20 topics; the published
figures as quoted by kampersanda/elinor's tests), statsmodels' ``anova_lm`` on the OLS fit
``score ~ C(system) + C(topic)``, scipy's ``studentized_range``, exact enumeration of every within-topic
permutation, and statsmodels' power solvers.
"""
from itertools import permutations, product

import numpy as np
import pytest

from irmeasures_markov.inference import AnovaResult, TukeyResult, topic_set_size, tukey_hsd, two_way_anova
from irmeasures_markov.inference._letters import format_groups, letter_groups
from irmeasures_markov.inference._multiple import range_null
from irmeasures_markov.inference._studentized import studentized_range_ppf, studentized_range_sf

# Sakai (2015), Table 5.1: systems A, B, C on 20 topics
SAKAI = np.array([
    [0.70, 0.30, 0.20, 0.60, 0.40, 0.40, 0.00, 0.70, 0.10, 0.30, 0.50, 0.40, 0.00, 0.60, 0.50, 0.30, 0.10, 0.50,
     0.20, 0.10],
    [0.50, 0.10, 0.00, 0.20, 0.40, 0.30, 0.00, 0.50, 0.30, 0.30, 0.40, 0.40, 0.10, 0.40, 0.20, 0.10, 0.10, 0.60,
     0.30, 0.20],
    [0.00, 0.00, 0.20, 0.10, 0.30, 0.30, 0.10, 0.20, 0.40, 0.40, 0.40, 0.30, 0.30, 0.20, 0.20, 0.20, 0.10, 0.50,
     0.40, 0.30]]).T


def _scores(n_topics=30, n_systems=6, seed=0):
    rng = np.random.default_rng(seed)
    topic = rng.random(n_topics)[:, None]
    system = np.linspace(0, 0.15, n_systems)[None, :]
    return np.clip(topic * 0.6 + system + rng.normal(0, 0.08, (n_topics, n_systems)), 0, 1)


def test_anova_sakai_book():
    r = two_way_anova(SAKAI)
    assert isinstance(r, AnovaResult)
    assert r.sum_sq["system"] == pytest.approx(0.1083, abs=1e-4)
    assert r.sum_sq["topic"] == pytest.approx(1.0293, abs=1e-4)
    assert r.sum_sq["residual"] == pytest.approx(0.8317, abs=1e-4)
    assert r.mean_sq["system"] == pytest.approx(0.0542, abs=1e-4)
    assert r.residual_ms == pytest.approx(0.0219, abs=1e-4)
    assert r.f_system == pytest.approx(2.475, abs=1e-3)
    assert r.f_topic == pytest.approx(2.475, abs=1e-3)
    assert r.p_system == pytest.approx(0.098, abs=1e-3)
    assert r.p_topic == pytest.approx(0.009, abs=1e-3)
    assert list(r.to_frame().index) == ["system", "topic", "residual"]
    assert "residual" in repr(r)


def test_effect_sizes_sakai_book():
    r = tukey_hsd(SAKAI, "parametric")
    # ES_E = (mean_i - mean_j) / sqrt(V_E): A-B 0.5070, A-C 0.6760, B-C 0.1690 in the book
    assert r.effect_residual == pytest.approx([0.5070, 0.6760, 0.1690], abs=1e-4)
    d = SAKAI[:, r.a] - SAKAI[:, r.b]
    assert r.effect_paired == pytest.approx(d.mean(axis=0) / d.std(axis=0, ddof=1))
    # the intervals scale with the difference's interval
    assert r.effect_residual_low * np.sqrt(r.residual_ms) == pytest.approx(r.low)
    assert r.effect_paired_high * d.std(axis=0, ddof=1) == pytest.approx(r.high)


def test_anova_matches_statsmodels():
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    y = _scores()
    n, m = y.shape
    frame = pd.DataFrame({"score": y.ravel(), "topic": np.repeat(np.arange(n), m), "system": np.tile(np.arange(m), n)})
    table = sm.stats.anova_lm(smf.ols("score ~ C(system) + C(topic)", data=frame).fit())
    r = two_way_anova(y)
    assert r.f_system == pytest.approx(table.loc["C(system)", "F"], rel=1e-9)
    assert r.p_system == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-9)
    assert r.f_topic == pytest.approx(table.loc["C(topic)", "F"], rel=1e-9)
    assert r.p_topic == pytest.approx(table.loc["C(topic)", "PR(>F)"], rel=1e-9)
    assert r.residual_ms == pytest.approx(table.loc["Residual", "mean_sq"], rel=1e-9)
    assert r.df["residual"] == table.loc["Residual", "df"]


@pytest.mark.parametrize("k, df", [(2, 1), (3, 38), (5, 10), pytest.param(20, 400, marks=pytest.mark.slow),
                                   pytest.param(129, 6272, marks=pytest.mark.slow)])
def test_studentized_range_matches_scipy(k, df):
    from scipy.stats import studentized_range
    q = np.array([0.2, 1.0, 2.5, 3.7, 5.0, 7.5])
    assert studentized_range_sf(q, k, df) == pytest.approx(studentized_range.sf(q, k, df), abs=1e-8)
    assert studentized_range_ppf(0.95, k, df) == pytest.approx(studentized_range.ppf(0.95, k, df), abs=1e-7)


def test_parametric_hsd_is_the_studentized_range_over_the_residual_ms():
    from scipy.stats import studentized_range
    y = _scores(25, 5, seed=3)
    r = tukey_hsd(y, "parametric", level=0.9)
    n, m = y.shape
    v_e = two_way_anova(y).residual_ms
    q = np.abs(y.mean(axis=0)[r.a] - y.mean(axis=0)[r.b]) / np.sqrt(v_e / n)
    assert r.statistic == pytest.approx(q)
    assert r.pvalue == pytest.approx(studentized_range.sf(q, m, (m - 1) * (n - 1)), abs=1e-8)
    half = studentized_range.ppf(0.9, m, (m - 1) * (n - 1)) * np.sqrt(v_e / n)
    assert r.high - r.mean_difference == pytest.approx(np.full(len(r.a), half), abs=1e-8)


def _exact_tukey(y):
    """p-values of every pair from all (m!)^n within-topic arrangements (the observed one among them)."""
    n, m = y.shape
    means = y.mean(axis=0)
    obs = np.abs(means[:, None] - means[None, :])
    rows = [np.array([row[list(p)] for p in permutations(range(m))]) for row in y]
    ranges = []
    for choice in product(*(range(len(r)) for r in rows)):
        s = sum(rows[t][c] for t, c in enumerate(choice)) / n
        ranges.append(s.max() - s.min())
    ranges = np.array(ranges)
    return {(i, j): float(np.mean(ranges >= obs[i, j] - 1e-12)) for i in range(m) for j in range(i + 1, m)}


def test_randomized_tukey_within_monte_carlo_error_of_exact_enumeration():
    y = np.array([[0.9, 0.2, 0.4], [0.8, 0.1, 0.5], [0.7, 0.3, 0.35], [0.6, 0.05, 0.3]])
    exact = _exact_tukey(y)  # 6^4 = 1296 arrangements
    b = 20000
    r = tukey_hsd(y, n_resamples=b, engine="numpy", seed=1)
    for k in range(len(r.a)):
        p = exact[int(r.a[k]), int(r.b[k])]
        assert abs(r.pvalue[k] - p) <= 4 * np.sqrt(p * (1 - p) / b) + 2 / b, (k, r.pvalue[k], p)


def test_engines_and_blocks_agree():
    pytest.importorskip("numba")
    x = np.random.default_rng(2).random((2, 7, 9))
    a = range_null(x, 700, 5, "numpy")
    assert np.array_equal(a, range_null(x, 700, 5, "numba"))
    assert np.array_equal(a[:, :300], range_null(x, 300, 5, "numpy"))  # one stream: prefixes agree
    y = _scores(10, 4)
    assert np.array_equal(tukey_hsd(y, n_resamples=500, engine="numpy").pvalue,
                          tukey_hsd(y, n_resamples=500, engine="numba").pvalue)


def test_randomized_and_parametric_order_the_pairs_alike():
    # not equal: the permutation null spreads the systems' real effects into the noise (conservative with effects)
    from scipy.stats import spearmanr
    y = _scores(40, 5, seed=4)
    p_rand = tukey_hsd(y, n_resamples=4000).pvalue
    p_par = tukey_hsd(y, "parametric").pvalue
    assert spearmanr(p_rand, p_par).statistic > 0.9


def test_result_views():
    y = _scores(12, 4)
    r = tukey_hsd(y, n_resamples=200)
    assert isinstance(r, TukeyResult)
    frame = r.to_frame()
    assert list(frame.columns[:7]) == ["system_a", "system_b", "mean_difference", "low", "high", "statistic",
                                       "pvalue"]
    mat = r.matrix()
    assert mat.shape == (4, 4) and np.allclose(mat.values, mat.values.T) and np.all(np.diag(mat.values) == 1)
    assert "groups:" in repr(r) and "TukeyResult (randomized" in repr(r)
    assert set(r.groups()) == set(r.systems)


def _check_letters(means, sig):
    groups = letter_groups(means, sig)
    m = len(means)
    share = np.zeros((m, m), dtype=bool)
    for g in groups:
        share[np.ix_(g, g)] = True
    assert np.all(share[sig] == False)  # noqa: E712 - no significant pair shares a letter
    off = ~sig & ~np.eye(m, dtype=bool)
    assert np.all(share[off])  # every non-significant pair shares one
    assert all(any(p in g for g in groups) for p in range(m))


def test_letter_groups_are_a_compact_letter_display():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = int(rng.integers(2, 12))
        means = rng.random(m)
        gap = np.abs(means[:, None] - means[None, :])
        sig = gap > rng.uniform(0.1, 0.5)
        _check_letters(means, sig)
        noisy = sig ^ np.triu(rng.random((m, m)) < 0.1, 1)
        _check_letters(means, np.triu(noisy, 1) | np.triu(noisy, 1).T)


def test_letter_groups_order_and_format():
    means = np.array([0.1, 0.5, 0.3, 0.45])
    sig = np.zeros((4, 4), dtype=bool)
    sig[0, 1] = sig[1, 0] = sig[0, 3] = sig[3, 0] = True
    groups = letter_groups(means, sig)
    assert groups[0][0] == 1  # the best system is in group a
    assert format_groups(groups, 4) == ["b", "a", "ab", "a"]
    assert format_groups([[0], [0], [0], [1]], 2, compact=True) == ["a-c", "d"]
    assert format_groups([[i] for i in range(60)], 60)[59] == "60"


def test_topic_set_size_matches_statsmodels_power():
    power = pytest.importorskip("statsmodels.stats.power")
    for min_d, var, m in [(0.1, 0.02, 2), (0.05, 0.01, 5), (0.1, 0.0219, 3), (0.2, 0.05, 10)]:
        n = topic_set_size(min_d, var, m, alpha=0.05, beta=0.2)
        f = np.sqrt(min_d ** 2 / (2 * m * var))  # Cohen's f of the least favourable configuration
        at = power.FTestAnovaPower().power(effect_size=f, nobs=n * m, alpha=0.05, k_groups=m)
        below = power.FTestAnovaPower().power(effect_size=f, nobs=(n - 1) * m, alpha=0.05, k_groups=m)
        assert at >= 0.8 > below
    # m = 2: the two-sample t-test design (effect size minD / sigma), per group
    t_n = power.TTestIndPower().solve_power(effect_size=0.1 / np.sqrt(0.02), alpha=0.05, power=0.8)
    assert topic_set_size(0.1, 0.02, 2) == int(np.ceil(t_n))


@pytest.mark.parametrize("call, match", [
    (lambda: tukey_hsd(SAKAI, "fisher"), "method must be one of"),
    (lambda: tukey_hsd(SAKAI, level=1.0), "level must be"),
    (lambda: tukey_hsd(SAKAI, n_resamples=0), "n_resamples must be"),
    (lambda: tukey_hsd(SAKAI, engine="gpu"), "engine must be one of"),
    (lambda: tukey_hsd(SAKAI[:, :1]), "at least 2 systems"),
    (lambda: two_way_anova(SAKAI[:1]), "at least 2 topics"),
    (lambda: topic_set_size(0, 0.1), "min_difference"),
    (lambda: topic_set_size(0.1, -1), "variance"),
    (lambda: topic_set_size(0.1, 0.1, 1), "n_systems"),
    (lambda: topic_set_size(0.1, 0.1, alpha=2), "alpha"),
    (lambda: topic_set_size(1e-6, 1.0, max_topics=100), "no topic set size"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_constant_residuals():
    y = np.array([[0.1, 0.3], [0.2, 0.4], [0.5, 0.7]])  # additive: V_E = 0
    r = tukey_hsd(y, "parametric")
    assert r.residual_ms == 0 and r.pvalue[0] == 0.0 and np.isinf(r.effect_residual[0])
    same = tukey_hsd(np.array([[0.1, 0.1], [0.2, 0.2]]), "parametric")
    assert same.pvalue[0] == 1.0


def test_plot_panels():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = tukey_hsd(_scores(10, 4), n_resamples=100).plot()
    assert len(fig.axes) == 1
    plt.close(fig)
    fig = tukey_hsd(_scores(10, 14), "parametric").plot()
    assert len(fig.axes[0].get_yticklabels()) == 14  # 91 pairs: one interval per system
    plt.close(fig)


@pytest.mark.slow  # a peer tool's numba compile and 20,000 permutations per pair
def test_randomized_tukey_against_ranx():
    """ranx's Tukey is scipy's one-way ``tukey_hsd`` (no topic blocking), not comparable; its Fisher randomization
    test is: with two systems, permuting a topic's scores is flipping the sign of its difference and the range of
    two means is their |difference|, so the randomized Tukey HSD is that test.  With more systems the range is the
    largest of the pairs' statistics, so no pair's Tukey p-value falls below its own randomization p-value."""
    pytest.importorskip("ranx")
    from ranx.statistical_tests.fisher_randomization_test import fisher_randomization_test
    b = 20000
    y = _scores(30, 4, seed=5)
    ours = tukey_hsd(y, n_resamples=b, seed=2)
    for k in range(len(ours.a)):
        i, j = int(ours.a[k]), int(ours.b[k])
        pair = tukey_hsd(y[:, [i, j]], n_resamples=b, seed=2).pvalue[0]
        peer = fisher_randomization_test(y[:, i].copy(), y[:, j].copy(), b, 0.05, 42)[0]
        assert abs(pair - peer) <= 4 * np.sqrt(2 * peer * (1 - peer) / b) + 3 / b, (i, j, pair, peer)
        assert ours.pvalue[k] >= peer - 4 * np.sqrt(2 * peer * (1 - peer) / b) - 3 / b


def test_without_numba_the_numpy_engine_serves(monkeypatch):
    from irmeasures_markov.inference import _multiple
    monkeypatch.setattr(_multiple, "_KERNELS", [None])  # as optional_kernels leaves it when numba is missing
    monkeypatch.setattr(_multiple, "_NUMBA_WORK", 0)  # 'auto' would reach for numba here
    y = _scores(8, 3)
    assert np.array_equal(tukey_hsd(y, n_resamples=300).pvalue, tukey_hsd(y, n_resamples=300, engine="numpy").pvalue)
    with pytest.raises(ImportError, match="needs numba"):
        tukey_hsd(y, n_resamples=10, engine="numba")
