"""comparison.compare, the `compare` subcommand, and the labelled results of experiments.evaluate.

Independent checks: scipy.stats (ttest_rel, t intervals), statsmodels' multipletests (corrections),
all_pairs (the same tests through the other entry point), and a LaTeX structure check.
"""
import io
import json
import re
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from comparison_inputs import collection, write_collection

from irmeasures_markov import comparison, experiments
from irmeasures_markov.cli import main
from irmeasures_markov.comparison import compare_evaluation, effect_size
from irmeasures_markov.comparison._runs import resolve_run_paths
from irmeasures_markov.inference import adjust_pvalues, all_pairs, pairwise, randomization_test
from irmeasures_markov.inference._letters import letter_names

# FIXTURES

@pytest.fixture(scope="module")
def data():
    return collection()


@pytest.fixture(scope="module")
def ev(data):
    qrels, runs = data
    return experiments.evaluate(["AP", "P@5", "MP"], qrels, runs, progress=False)


def cli(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


# TESTS: labelled results

def test_evaluation_results_are_labelled(ev):
    means = ev.means()
    assert isinstance(means, pd.DataFrame)
    assert list(means.index) == ev.runs and means.index.name == "run"
    assert list(means.columns) == ["AP", "P@5", "MP"] and means.columns.name == "measure"
    np.testing.assert_array_equal(means.to_numpy(), ev.means_array())
    np.testing.assert_array_equal(ev.means_array(), ev.values.mean(axis=2))
    col = ev.column("AP")
    assert isinstance(col, pd.Series) and col.name == "AP" and list(col.index) == ev.runs
    np.testing.assert_array_equal(col.to_numpy(), ev.column_array("AP"))
    per = ev.per_topic("MP")
    assert list(per.index) == ev.topics and list(per.columns) == ev.runs
    np.testing.assert_array_equal(per.to_numpy(), ev.values[:, 2, :].T)
    assert ev.to_frame().equals(means)


# TESTS: corrections and pairwise

@pytest.mark.slow  # external reference (statsmodels)
def test_corrections_equal_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(3)
    for method in ("holm", "bonferroni", "fdr_bh"):
        for m in (1, 2, 7, 30):
            p = rng.uniform(size=m) ** 3
            p[::3] = p[0]  # ties
            np.testing.assert_allclose(adjust_pvalues(p, method), multitest.multipletests(p, method=method)[1],
                                       rtol=0, atol=1e-15)


def test_pairwise_p_values_equal_all_pairs_for_every_test(ev):
    scores = ev.per_topic("AP").to_numpy()
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap"):
        ref = all_pairs(scores, test, correction=None, n_resamples=999, seed=4)
        # baseline orientation (run − baseline) reverses a pair: two-sided p-values do not change
        sub = pairwise(scores, [(3, 0), (1, 2)], test, correction=None, n_resamples=999, seed=4)
        k30 = list(zip(ref.a, ref.b)).index((0, 3))
        k12 = list(zip(ref.a, ref.b)).index((1, 2))
        assert sub.pvalue[1] == ref.pvalue[k12]
        assert sub.pvalue[0] == pytest.approx(ref.pvalue[k30], rel=1e-12, abs=1e-300)
        assert sub.mean_difference[0] == pytest.approx(-ref.mean_difference[k30])


def test_pairwise_input_validation(ev):
    scores = ev.per_topic("AP").to_numpy()
    with pytest.raises(ValueError, match="against itself"):
        pairwise(scores, [(1, 1)])
    with pytest.raises(ValueError, match="no system 'x'"):
        pairwise(scores, [("x", 1)])
    with pytest.raises(ValueError, match="out of range"):
        pairwise(scores, [(0, 9)])
    with pytest.raises(ValueError, match="correction must be one of"):
        pairwise(scores, [(0, 1)], correction="sidak")
    with pytest.raises(ValueError, match="no pairs"):
        pairwise(scores, [])


# TESTS: compare

def test_compare_all_pairs_matches_all_pairs_and_scipy(data, ev):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP", "P@5", "MP"], ci=0.9)
    pd.testing.assert_frame_equal(cmp.table, ev.means())
    ap = ev.per_topic("AP").to_numpy()
    ref = all_pairs(ap, "t", correction="holm")
    np.testing.assert_array_equal(cmp.pvalues("AP").to_numpy(), ref.pvalue)
    np.testing.assert_array_equal(cmp.pvalues("AP", adjusted=True).to_numpy(), ref.adjusted_pvalue)
    rows = cmp.tests[cmp.tests.measure == "AP"]
    for r, (i, j) in zip(rows.itertuples(), zip(ref.a, ref.b)):
        d = ap[:, i] - ap[:, j]
        assert r.pvalue == pytest.approx(scipy.stats.ttest_rel(ap[:, i], ap[:, j]).pvalue, rel=1e-10)
        assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    # t intervals of the means
    for k, run in enumerate(ev.runs):
        ci = scipy.stats.t.interval(0.9, len(ap) - 1, loc=ap[:, k].mean(), scale=scipy.stats.sem(ap[:, k]))
        assert cmp.intervals.loc[run, ("AP", "low")] == pytest.approx(ci[0], rel=1e-12)
        assert cmp.intervals.loc[run, ("AP", "high")] == pytest.approx(ci[1], rel=1e-12)


def test_all_pairs_markers_name_the_runs_beaten(data):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP"], correction="none", alpha=0.2)
    letters = cmp.letters
    assert list(letters.values()) == letter_names(len(runs))[:len(runs)] == ["a", "b", "c", "d", "e"]
    expected = {r: set() for r in runs}
    for t in cmp.tests.itertuples():
        if t.pvalue < 0.2:
            winner, loser = (t.run_a, t.run_b) if t.mean_difference > 0 else (t.run_b, t.run_a)
            expected[winner].add(letters[loser])
    assert any(expected.values())  # the fixture has significant differences
    for r in runs:
        assert set(cmp.markers.loc[r, "AP"]) == expected[r]


def test_baseline_markers_and_randomization(data):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP"], baseline="r2", test="randomization", correction="bonferroni",
                              n_resamples=2000, seed=1)
    ap = cmp.evaluation.per_topic("AP")
    others = [r for r in runs if r != "r2"]
    assert list(cmp.tests.run_a) == others and set(cmp.tests.run_b) == {"r2"}
    for t in cmp.tests.itertuples():
        ref = randomization_test(ap[t.run_a].to_numpy(), ap["r2"].to_numpy(), n_resamples=2000, seed=1)
        assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
        assert t.adjusted_pvalue == pytest.approx(min(1.0, ref.pvalue * len(others)), rel=1e-12)
        mark = cmp.markers.loc[t.run_a, "AP"]
        assert mark == ("" if not t.significant else "\u25b2" if t.mean_difference > 0 else "\u25bc")
    assert cmp.markers.loc["r2", "AP"] == ""
    assert (cmp.tests.significant).any() and (~cmp.tests.significant).any()


@pytest.mark.slow  # Bayesian sampling
def test_bayes_probabilities(data):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP"], baseline="r0", test="bayes")
    t = cmp.tests.set_index("run_a")
    # the best run beats the worst almost surely; P(A > B) and the two-sided tail agree
    assert t.loc["r4", "statistic"] > 0.95
    np.testing.assert_allclose(t.pvalue, np.minimum(1, 2 * np.minimum(t.statistic, 1 - t.statistic)), atol=1e-12)
    with pytest.raises(ValueError, match="takes no correction"):
        comparison.compare(qrels, runs, ["AP"], test="bayes", correction="holm")


def test_compare_input_validation(data, ev):
    qrels, runs = data
    with pytest.raises(ValueError, match="`test` must be one of"):
        compare_evaluation(ev, test="z")
    with pytest.raises(ValueError, match="`correction` must be one of"):
        compare_evaluation(ev, correction="sidak")
    with pytest.raises(ValueError, match="`alpha` must be in"):
        compare_evaluation(ev, alpha=1.5)
    with pytest.raises(ValueError, match="`ci` must be"):
        compare_evaluation(ev, ci=95)
    with pytest.raises(ValueError, match="`baseline` 'zz'"):
        compare_evaluation(ev, baseline="zz")
    with pytest.raises(ValueError, match="at least 2 runs"):
        comparison.compare(qrels, {"r0": runs["r0"]}, ["AP"])


def test_effect_size_edge_cases():
    d = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 3.0]])
    np.testing.assert_array_equal(effect_size(d), [0.0, np.inf, 2.0 / np.std([1.0, 3.0], ddof=1)])


# TESTS: renderings

def latex_is_well_formed(text):
    """A tabular: one begin/end, balanced braces, every row ending in \\\\ with as many cells as columns."""
    body = [line for line in text.splitlines() if not line.startswith("%")]
    assert body[0].startswith(r"\begin{tabular}{") and body[-1] == r"\end{tabular}"
    spec = re.match(r"\\begin\{tabular\}\{([lrc]+)\}$", body[0]).group(1)
    depth = 0
    for ch in re.sub(r"\\[{}]", "", "\n".join(body)):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    rows = [line for line in body[1:-1] if line != r"\hline"]
    assert rows
    for line in rows:
        assert line.endswith(r" \\")
        cells = re.split(r"(?<!\\)&", line[:-3])
        assert len(cells) == len(spec), line
        assert line.count("$") % 2 == 0
        for raw in ("_", "#", "%"):  # escaped everywhere outside math
            assert not re.search(r"(?<!\\)" + re.escape(raw), re.sub(r"\$[^$]*\$", "", line)), line
    return rows


def test_latex_is_a_well_formed_tabular(data):
    qrels, runs = data
    runs = {("run_" + k + "&%#"): v for k, v in runs.items()}  # names that need escaping
    cmp = comparison.compare(qrels, runs, ["AP", "P@5"], baseline="run_r0&%#", ci=0.95)
    rows = latex_is_well_formed(cmp.to_latex())
    assert len(rows) == 1 + len(runs)
    assert r"run\_r0\&\%\# (baseline)" in cmp.to_latex()
    latex_is_well_formed(comparison.compare(qrels, runs, ["AP"]).to_latex())
    latex_is_well_formed(cmp.to_latex(pairs=True))


def test_markdown_text_and_csv(data):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP", "MP"])
    md = cmp.to_markdown().splitlines()
    assert md[0] == "| run | AP | MP |" and len(md) >= 2 + len(runs)
    assert sum("**" in line for line in md[2:2 + len(runs)]) >= 1  # the best mean is bold
    assert "Letters:" in cmp.to_text() and "Holm correction" in cmp.to_text()
    frame = pd.read_csv(io.StringIO(cmp.to_csv()), keep_default_na=False)
    assert list(frame.run) == list(runs)
    np.testing.assert_allclose(frame["AP"].to_numpy(), cmp.table["AP"].to_numpy(), rtol=1e-14)  # 15 digits
    frame = pd.read_csv(io.StringIO(cmp.to_csv(places=-1)), keep_default_na=False)
    np.testing.assert_array_equal(frame["AP"].to_numpy(), cmp.table["AP"].to_numpy())  # every digit
    pairs = pd.read_csv(io.StringIO(cmp.to_csv(pairs=True, places=-1)))
    np.testing.assert_array_equal(pairs.pvalue.to_numpy(), cmp.tests.pvalue.to_numpy())


def noisy_collection():
    """Two topics on which run a's P@10 is 0.1 and 0.2: its mean is 0.15000000000000002 in float64."""
    qrels = {q: {f"{q}r{i}": 1 for i in range(10)} for q in ("1", "2")}

    def run(hits):
        return {q: {(f"{q}r{i}" if i < k else f"{q}n{i}"): float(10 - i) for i in range(10)}
                for q, k in zip(qrels, hits)}
    return qrels, {"a": run((1, 2)), "b": run((3, 3))}


def test_csv_prints_the_shortest_form_of_15_digits():
    cmp = comparison.compare(*noisy_collection(), ["P@10"])
    assert repr(float(cmp.table.loc["a", "P@10"])) == "0.15000000000000002"
    assert cmp.to_csv().splitlines()[1] == "a,a,0.15,"  # not the arithmetic's noise
    assert cmp.to_csv(places=-1).splitlines()[1] == "a,a,0.15000000000000002,"  # every digit, when asked
    assert cmp.to_csv(places=3).splitlines()[1] == "a,a,0.150,"
    assert cmp.to_csv(pairs=True).splitlines()[1].startswith("P@10,a,b,-0.15,")


def test_markdown_escapes_only_what_markdown_needs():
    qrels, runs = noisy_collection()
    md = comparison.compare(qrels, {"a|1": runs["a"], "b": runs["b"]}, ["P@10"]).to_markdown()
    assert "p < 0.05" in md and "&lt;" not in md  # a paragraph, not HTML
    assert r"| (a) a\|1 |" in md  # a pipe inside a table cell is escaped


def test_effect_sizes_against_the_baseline(data):
    qrels, runs = data
    cmp = comparison.compare(qrels, runs, ["AP"], baseline="r0")
    ap = cmp.evaluation.per_topic("AP")
    d = ap["r3"] - ap["r0"]
    expected = d.mean() / d.std(ddof=1)
    assert f"(d={expected:+.2f})" in cmp.to_text(effect=True)
    assert "(d=" not in cmp.to_text()
    latex_is_well_formed(cmp.to_latex(effect=True))
    frame = pd.read_csv(io.StringIO(cmp.to_csv()), keep_default_na=False).set_index("run")
    assert float(frame.loc["r3", "AP effect_size"]) == pytest.approx(expected, rel=1e-12)
    assert frame.loc["r0", "AP effect_size"] == ""  # the baseline against itself: nothing
    p = cmp.tests.set_index("run_a").loc["r3", "adjusted_pvalue"]
    assert float(frame.loc["r3", "AP adjusted_pvalue"]) == pytest.approx(p, rel=1e-12)
    with pytest.raises(ValueError, match="need a baseline"):
        comparison.compare(qrels, runs, ["AP"]).to_text(effect=True)


def test_plot(data):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    qrels, runs = data
    fig = comparison.compare(qrels, runs, ["AP"], baseline="r1").plot()
    assert sum(ax.get_visible() for ax in fig.axes) == len(runs) - 1
    assert fig.axes[0].get_title().startswith("r0 − r1")


# TESTS: command line

def test_cli_reproduces_python(tmp_path, data, capsys):
    qrels, runs = data
    qpath, rdir = write_collection(tmp_path, qrels, runs)
    code, out = cli("compare", str(qpath), str(rdir), "-m", "AP", "P@5", "-o", "jsonl", "--pairs",
                    "--test", "randomization", "--resamples", "500", "--no-progress")
    assert code == 0
    got = [json.loads(line) for line in out.splitlines()]
    cmp = comparison.compare(qrels, runs, ["AP", "P@5"], test="randomization", n_resamples=500)
    assert [g["pvalue"] for g in got] == cmp.tests.pvalue.tolist()
    assert [g["adjusted_pvalue"] for g in got] == cmp.tests.adjusted_pvalue.tolist()
    # a glob and single files give the same runs; the baseline may be named by its path
    code, out = cli("compare", str(qpath), str(rdir / "input.r[0-2]"), str(rdir / "input.r4"), "-m", "AP",
                    "--baseline", str(rdir / "input.r4"), "-o", "csv")
    assert code == 0
    frame = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert list(frame.run) == ["r4", "r0", "r1", "r2"]  # the baseline first
    err = capsys.readouterr().err
    assert "evaluating" not in err and "reading runs" not in err  # no progress bar when stderr is no terminal
    code, out = cli("compare", str(qpath), str(rdir), "-m", "AP", "-o", "latex", "--ci")
    assert code == 0 and len(latex_is_well_formed(out.strip())) == 1 + len(runs)


def test_cli_errors(tmp_path, data, capsys):
    qrels, runs = data
    qpath, rdir = write_collection(tmp_path, qrels, runs)
    assert cli("compare", str(qpath), str(tmp_path / "nope*"), "-m", "AP")[0] == 2
    assert "nope*: no run file matches this pattern" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir / "input.r0"), "-m", "AP")[0] == 2
    assert "at least 2 runs" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir), "-m", "AP", "--baseline", "zz")[0] == 2
    assert "--baseline zz: not one of the runs" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir), "-m", "AP", "--test", "bayes", "--correction", "holm")[0] == 2
    assert "takes no correction" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir), "-m", "AP", "--effect-size")[0] == 2
    assert "--effect-size needs --baseline" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir), "-m", "APP")[0] == 2
    assert "bad measure" in capsys.readouterr().err
    (tmp_path / "runs" / "input.r0.gz").write_bytes(b"")
    assert cli("compare", str(qpath), str(rdir / "input.r0"), str(rdir / "input.r0.gz"), "-m", "AP")[0] == 2
    assert "gives the run name 'r0'" in capsys.readouterr().err


def test_resolve_run_paths(tmp_path):
    (tmp_path / "b").write_text("")
    (tmp_path / "a").write_text("")
    sub = tmp_path / "d"
    sub.mkdir()
    (sub / "input.x.gz").write_text("")
    (sub / "notes").write_text("")
    got = resolve_run_paths([str(tmp_path / "b"), str(sub), str(tmp_path / "[ab]")])
    assert got == {"b": str(tmp_path / "b"), "x": str(sub / "input.x.gz"), "a": str(tmp_path / "a")}
    assert list(got) == ["b", "x", "a"]
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        resolve_run_paths([str(tmp_path / "zz")])
