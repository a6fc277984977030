"""compare(test='tukey'|'anova'): Tukey's HSD in the comparison table, grouping letters, the matrix and the picture.

The numbers come from `irmeasures_markov.inference.tukey_hsd` (checked there against scipy, statsmodels, Sakai's
book and exact enumeration); here: that compare reports those same numbers, and its groups, renderings and options.
"""
import io

import numpy as np
import pandas as pd
import pytest
from comparison_inputs import collection

from irmeasures_markov import comparison, experiments
from irmeasures_markov.comparison import _render as render
from irmeasures_markov.comparison import compare_evaluation
from irmeasures_markov.experiments import Evaluation
from irmeasures_markov.inference import tukey_hsd


@pytest.fixture(scope="module")
def ev():
    qrels, runs = collection(n_topics=15, n_runs=5)
    return experiments.evaluate(["AP", "P@5"], qrels, runs, progress=False)


def _many(n_runs=20, n_topics=25, seed=0):
    rng = np.random.default_rng(seed)
    values = np.clip(rng.random((1, 1, n_topics)) * 0.5 + np.linspace(0, 0.5, n_runs)[:, None, None]
                     + rng.normal(0, 0.1, (n_runs, 1, n_topics)), 0, 1)
    return Evaluation([f"run{i:02d}" for i in range(n_runs)], ["AP"], [str(t) for t in range(n_topics)], values,
                      ["AP"])


@pytest.mark.parametrize("test, method", [("tukey", "randomized"), ("anova", "parametric")])
def test_compare_reports_tukey_hsd(ev, test, method):
    cmp = compare_evaluation(ev, test=test, n_resamples=2000, seed=3)
    assert cmp.correction == "none"
    for j, label in enumerate(ev.labels):
        ref = tukey_hsd(ev.values[:, j, :].T, method, n_resamples=2000, seed=3, level=0.95)
        rows = cmp.tests[cmp.tests.measure == label]
        assert rows.pvalue.to_numpy() == pytest.approx(ref.pvalue, rel=1e-12)
        assert rows.adjusted_pvalue.tolist() == rows.pvalue.tolist()
        assert rows.significant.tolist() == (ref.pvalue < 0.05).tolist()
        assert cmp.tukey[label].pvalue == pytest.approx(ref.pvalue, rel=1e-12)
        groups = ref.groups(0.05)
        assert cmp.markers[label].tolist() == list(groups.values())
    assert cmp.letters == {}
    text = cmp.to_text()
    assert "Tukey groups" in text and "(a) r0" not in text
    frame = pd.read_csv(io.StringIO(cmp.to_csv()), keep_default_na=False)
    assert "letter" not in frame.columns and list(frame["AP markers"]) == cmp.markers["AP"].tolist()


def test_baseline_pairs_come_from_the_all_pairs_family(ev):
    every = compare_evaluation(ev, test="anova")
    base = compare_evaluation(ev, test="anova", baseline="r2")
    for r in base.tests.itertuples(index=False):
        pair = every.tests[(every.tests.measure == r.measure) &
                           (((every.tests.run_a == r.run_a) & (every.tests.run_b == r.run_b)) |
                            ((every.tests.run_a == r.run_b) & (every.tests.run_b == r.run_a)))]
        assert r.pvalue == pytest.approx(pair.pvalue.iloc[0], rel=1e-12)
    assert set(base.markers.to_numpy().ravel()) <= {"", "\u25b2", "\u25bc"}


def test_many_runs_compact_groups_and_matrix():
    ev = _many()
    cmp = compare_evaluation(ev, test="anova")
    marks = cmp.markers["AP"].tolist()
    assert any("-" in m for m in marks) and max(len(m) for m in marks) <= 7
    assert "a-d stands for abcd" in cmp.to_text()
    matrix = pd.read_csv(io.StringIO(render.significance_matrix(cmp)))
    assert matrix.shape == (20, 22)
    p = matrix.set_index("run").drop(columns="measure")
    ref = cmp.tukey["AP"].matrix().to_numpy().copy()
    np.fill_diagonal(ref, np.nan)
    assert np.allclose(p.to_numpy(dtype=float), ref, equal_nan=True, rtol=1e-15)


def test_tukey_options_are_checked(ev):
    with pytest.raises(ValueError, match="takes no correction"):
        compare_evaluation(ev, test="tukey", correction="holm")
    with pytest.raises(ValueError, match="two-sided"):
        compare_evaluation(ev, test="anova", alternative="greater")


def test_plot_pairs(ev, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cmp = compare_evaluation(ev, test="tukey", n_resamples=300)
    fig = cmp.plot_pairs(str(tmp_path / "pairs.png"))
    assert len(fig.axes) == 2 and (tmp_path / "pairs.png").stat().st_size > 0
    plt.close(fig)
    fig = compare_evaluation(_many(), test="t").plot_pairs()  # another test: the ANOVA's Tukey HSD for the picture
    assert len(fig.axes[0].get_yticklabels()) == 20
    plt.close(fig)


def test_existing_tests_unchanged(ev):
    # the Tukey tests sit beside the others: the default comparison keeps its letters and p-values
    cmp = compare_evaluation(ev)
    assert cmp.tukey == {} and cmp.letters["r0"] == "a"
    assert comparison.COMPARE_TESTS[:7] == ("t", "wilcoxon", "sign", "randomization", "bootstrap", "bayes", "none")
