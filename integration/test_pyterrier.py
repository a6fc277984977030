"""PyTerrier end to end: ``pt.Experiment`` on TREC-8 result DataFrames with our measures beside 'map'.

No Java is needed: PyTerrier evaluates result DataFrames with ir_measures,
which finds our measures through the provider we append to its pipeline.
The values must equal our own evaluation and trec_eval's, and the
``baseline=`` columns must be paired t-tests on the per-topic values, or our
randomization / Bayesian tests when passed as ``test=`` callables.
Skipped when python-terrier is not installed (``pip install python-terrier``).
"""
import numpy as np
import pytest

pt = pytest.importorskip("pyterrier")
import pandas as pd  # noqa: E402

stats = pytest.importorskip("scipy.stats")

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.experiments import evaluate  # noqa: E402

RUNS = ["READWARE", "CL99SD", "uwmt8a0"]


def _frame(run):
    return pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                        columns=["qid", "docno", "score"])


@pytest.fixture(scope="module")
def experiment(trec8):
    qrels, runs = trec8
    qrels_df = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                            columns=["qid", "docno", "label"])
    topics = pd.DataFrame({"qid": sorted(qrels), "query": ["q"] * len(qrels)})
    measures = ["map", imm.MP, imm.MP(model="LO_OR_ID", recall=True)]
    res = pt.Experiment([_frame(runs[n]) for n in RUNS], topics, qrels_df, eval_metrics=measures,
                        names=RUNS, baseline=0)
    perq = pt.Experiment([_frame(runs[n]) for n in RUNS], topics, qrels_df, eval_metrics=measures,
                         names=RUNS, perquery=True)
    return res, perq


def test_values_equal_our_evaluation(trec8, experiment):
    qrels, runs = trec8
    res, _ = experiment
    sub = {n: runs[n] for n in RUNS}
    names = ["AP", "MP", "MP(model='LO_OR_ID',recall=True)"]
    ours = evaluate(names, qrels, sub, progress=False).means_array()
    via_pytrec = evaluate(names, qrels, sub, progress=False, native=False).means_array()
    res = res.set_index("name")
    for i, n in enumerate(RUNS):
        assert res.loc[n, "MP"] == pytest.approx(ours[i, 1], abs=1e-12)
        assert res.loc[n, "MP(model='LO_OR_ID',recall=True)"] == pytest.approx(ours[i, 2], abs=1e-12)
        # 'map' is pytrec_eval's, which holds scores as float32
        assert res.loc[n, "map"] == pytest.approx(via_pytrec[i, 0], abs=1e-12)
        if n != "uwmt8a0":
            assert res.loc[n, "map"] == pytest.approx(ours[i, 0], abs=1e-12)
    # uwmt8a0: trec_eval (float64) says 0.2142, pytrec_eval/PyTerrier 0.2143 (float32 reorders topic 441)
    assert round(ours[RUNS.index("uwmt8a0"), 0], 4) == 0.2142
    assert round(res.loc["uwmt8a0", "map"], 4) == 0.2143


def test_baseline_significance_columns(experiment):
    res, perq = experiment
    res = res.set_index("name")
    for col in ("map", "MP"):
        assert {f"{col} +", f"{col} -", f"{col} p-value"} <= set(res.columns)
        base = perq[(perq.name == RUNS[0]) & (perq.measure == col)].set_index("qid")["value"]
        for n in RUNS[1:]:
            other = perq[(perq.name == n) & (perq.measure == col)].set_index("qid")["value"].reindex(base.index)
            p = stats.ttest_rel(base.values, other.values).pvalue
            assert res.loc[n, f"{col} p-value"] == pytest.approx(p, rel=1e-9)
            assert res.loc[n, f"{col} +"] == np.sum(other.values > base.values)
            assert res.loc[n, f"{col} -"] == np.sum(other.values < base.values)


def test_no_java_needed(experiment):
    assert not pt.java.started()


def test_our_tests_as_pyterrier_callables(trec8):
    """``test=`` takes our randomization test and Bayesian P(A>B): PyTerrier calls test(system, baseline)[1]."""
    from irmeasures_markov.inference import pyterrier_test, randomization_test
    qrels, runs = trec8
    qrels_df = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                            columns=["qid", "docno", "label"])
    topics = pd.DataFrame({"qid": sorted(qrels), "query": ["q"] * len(qrels)})
    names = ["CL99SD", "CL99SDopt1", "Dm8Nbn"]
    systems = [_frame(runs[n]) for n in names]
    measures = ["map", imm.MP]
    perq = pt.Experiment(systems, topics, qrels_df, eval_metrics=measures, names=names, perquery=True)
    rand = pt.Experiment(systems, topics, qrels_df, eval_metrics=measures, names=names, baseline=0,
                         test=pyterrier_test("randomization", n_resamples=2000, seed=3)).set_index("name")
    bayes = pt.Experiment(systems, topics, qrels_df, eval_metrics=["map"], names=names, baseline=0,
                          test=pyterrier_test("bayes", seed=3)).set_index("name")
    for col in ("map", "MP"):
        base = perq[(perq.name == names[0]) & (perq.measure == col)].set_index("qid")["value"]
        for n in names[1:]:
            other = perq[(perq.name == n) & (perq.measure == col)].set_index("qid")["value"].reindex(base.index)
            ref = randomization_test(other.values, base.values, n_resamples=2000, seed=3)
            assert rand.loc[n, f"{col} p-value"] == pytest.approx(ref.pvalue, rel=1e-12)
    # Bayes: Dm8Nbn (AP 0.068) is far below the baseline (0.354) (posterior tail ~0); CL99SDopt1 is close to it
    base = perq[(perq.name == names[0]) & (perq.measure == "map")].set_index("qid")["value"]
    opt1 = perq[(perq.name == "CL99SDopt1") & (perq.measure == "map")].set_index("qid")["value"].reindex(base.index)
    expect = pyterrier_test("bayes", seed=3)(opt1.values, base.values)
    assert bayes.loc["CL99SDopt1", "map p-value"] == pytest.approx(expect.pvalue, abs=1e-12)
    assert bayes.loc["Dm8Nbn", "map p-value"] < 0.01
    assert 0.0 < expect.statistic < 1.0
