"""Inference on TREC-8 per-topic scores: tests agree with scipy on real data; the Bayesian posterior
tracks the t-test as Carterette (2011) reports; discriminative power is consistent across tests."""
import numpy as np
import pytest
from scipy import stats

from irmeasures_markov.experiments import evaluate
from irmeasures_markov.inference import all_pairs, bayesian_linear_model, discriminative_power, score_matrix


@pytest.fixture(scope="module")
def mats(trec8):
    qrels, runs = trec8
    ev = evaluate({"AP": "AP", "P@10": "P@10", "MP": "MP"}, qrels, runs, n_jobs=2, progress=False)
    return {lab: score_matrix(ev.values[:, j, :].T, topics=ev.topics, systems=ev.runs)
            for j, lab in enumerate(ev.labels)}


def test_all_pairs_t_equals_scipy(mats):
    sm = mats["AP"]
    res = all_pairs(sm, "t", correction=None)
    assert res.pvalue.size == 129 * 128 // 2
    ref = stats.ttest_rel(sm.values[:, res.a], sm.values[:, res.b], axis=0).pvalue
    ok = np.isfinite(ref)
    np.testing.assert_allclose(res.pvalue[ok], ref[ok], rtol=1e-9)


def test_discriminative_power_consistent(mats):
    table = discriminative_power(mats, n_resamples=2000, progress=False)
    assert table.shape == (3, 3)
    # the three tests agree within a few points, as in the TBG paper's Table 2
    assert float((table.max(axis=1) - table.min(axis=1)).max()) < 0.03
    assert table.loc["AP", "t"] > table.loc["P@10", "t"]


def test_posterior_tracks_the_t_test(mats):
    sm = mats["P@10"]
    post = bayesian_linear_model(sm, backend="gibbs", draws=1000, tune=500, chains=2, seed=0, progress=False)
    rng = np.random.default_rng(0)
    pairs = [tuple(rng.choice(sm.n_systems, 2, replace=False)) for _ in range(200)]
    probs = [np.mean(post.system_effects[:, a] > post.system_effects[:, b]) for a, b in pairs]
    pvals = [stats.ttest_rel(sm.values[:, a], sm.values[:, b], alternative="greater").pvalue for a, b in pairs]
    assert np.corrcoef(pvals, probs)[0, 1] < -0.98


def _reproduce():
    """The reproduction script's module (integration/reproduce/inference_trec8.py)."""
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "reproduce"))
    import inference_trec8
    return inference_trec8


@pytest.mark.filterwarnings("ignore::irmeasures_markov.inference.SamplingWarning")  # short chains
def test_direct_model_on_real_judgments(mats, trec8):
    """§3.2 on TREC-8 top-10 judgments of 6 runs, both variants (a small version of the script's Fig. 1b/2a):
    p_ij estimates P@10 and P(A > B) tracks the t-test; the page's table has a row per variant."""
    pytest.importorskip("pymc", reason='PyMC not installed: pip install "irmeasures-markov[bayes]"')
    script = _reproduce()
    qrels, runs = trec8
    out = script.figure1_direct(mats, qrels, runs, ["P@10"], n_runs=6, progress=False, draws=200)
    for variant in ("package", "paper"):
        d = out["P@10", variant]
        assert len(d["pvals"]) == 15
        assert d["measure_r"] > 0.9
        assert d["r"] < -0.8
    # the full-run P@10 of the judgments the model sees is the evaluator's P@10
    names = script.seeded_runs(mats["P@10"].systems, 6)
    x = script.judgments(qrels, runs, names, mats["P@10"].topics, 10)
    sm = mats["P@10"]
    np.testing.assert_allclose(x.mean(axis=2), sm.values[:, [sm.systems.index(n) for n in names]], atol=1e-12)
    fig = {"P@10": (out["P@10", "package"]["pvals"], out["P@10", "package"]["probs"], out["P@10", "package"]["r"])}
    import pandas as pd
    text = script.markdown(pd.DataFrame({"t": [0.5]}, index=["P@10"]), fig, 129, 50, 100, True, out)
    assert "variant='paper'" in text and "variant='package'" in text


@pytest.mark.filterwarnings("ignore::irmeasures_markov.inference.SamplingWarning")  # short chains
def test_corpus_effect_analogue(mats, trec8):
    """The Figure 3(a) analogue, small: 3 runs split by sub-collection; every row's P@10 is the run restricted to
    that sub-collection's documents, the four sub-collections cover every retrieved document, and the fit
    returns one posterior probability per pair."""
    pytest.importorskip("pymc", reason='PyMC not installed: pip install "irmeasures-markov[bayes]"')
    script = _reproduce()
    qrels, runs = trec8
    prefixes = tuple(script.CORPORA.values())
    assert all(d.startswith(prefixes) for run in runs.values() for docs in run.values() for d in docs)
    names = script.seeded_runs(mats["P@10"].systems, 3, 1)
    rows = script.corpus_table(qrels, runs, names, mats["P@10"].topics)
    assert set(rows["corpus"]) == set(script.CORPORA)
    assert len(rows["value"]) <= 3 * 50 * 4 and all(0 <= v <= 1 for v in rows["value"])
    res = script.figure3a(mats, qrels, runs, n_runs=3, progress=False, draws=100)
    assert len(res["probs"]) == 3 and all(0 <= p <= 1 for p in res["probs"])
