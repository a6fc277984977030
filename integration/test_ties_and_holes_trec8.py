"""integration/ties_and_holes_trec8.py on a few TREC-8 runs: identities the tables rest on.

- P@10 under ties='optimistic' >= under 'pessimistic' on every run and topic, and the docid order lies between;
- the residual of P@10 is the number of unjudged documents in the top 10 over 10, on the full and on a
  reduced pool;
- every measure's ties='optimistic'/'pessimistic' equals the measure on the explicitly reordered run, bit
  for bit, and the native residual of AP/P@10 equals AP/P@10 on the qrels filled with the run's unjudged
  documents;
- the script runs end to end (--quick, two measures) and writes its tables and figures.
"""
import pathlib
import sys

import numpy as np
import pytest

from irmeasures_markov.io import downsample_qrels

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ties_and_holes_trec8 as th  # noqa: E402

#: runs with many tied scores (UB99SW and uwmt8a0 have the largest tie spreads of TREC-8), two without, and
#: READWARE, whose rankings are short (as few as 2 documents): its user reads far past them
RUNS = ("UB99SW", "uwmt8a0", "CL99XT", "Flab8as", "READWARE")


@pytest.fixture(scope="module")
def col(data_dir):
    return th.load_collection("trec8", data_dir, RUNS)


def _unjudged_top10(run, qrels, topics):
    out = np.zeros((len(run), len(topics)))
    for i, r in enumerate(run.values()):
        for j, q in enumerate(topics):
            docs = r.get(q, {})
            top = sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:10]
            out[i, j] = sum(d not in qrels.get(q, {}) for d in top) / 10
    return out


def test_p10_optimistic_dominates_pessimistic(col):
    opt = th.tie_values("P@10", col, "optimistic")
    pes = th.tie_values("P@10", col, "pessimistic")
    base = th.tie_values("P@10", col, "docid")
    assert (opt >= pes).all() and (pes <= base).all() and (base <= opt).all()
    assert (opt > pes).any()  # UB99SW's ties reach into the top 10


@pytest.mark.parametrize("percent", [100, 30])
def test_p10_residual_counts_unjudged_top10(col, percent):
    qrels = col.qrels if percent == 100 else downsample_qrels(col.qrels, percent, seed=th.SEED)
    got = th.residual_values("P@10", col, qrels)
    want = _unjudged_top10(col.runs, qrels, col.topics)
    assert want.max() > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    explicit = th.residual_values("P@10", col, qrels, reorder=True)
    np.testing.assert_allclose(explicit, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("label", list(th.MEASURES))
def test_tie_orders_equal_reordered_runs(col, label):
    for ties in ("optimistic", "pessimistic"):
        package = th.tie_values(label, col, ties)
        explicit = th.tie_values(label, col, ties, reorder=True)
        assert np.array_equal(package, explicit), (label, ties)


@pytest.mark.parametrize("label", th.NATIVE)
def test_native_residual_equals_filled_qrels(col, label):
    qrels = downsample_qrels(col.qrels, 50, seed=th.SEED)
    package = th.residual_values(label, col, qrels)
    explicit = th.residual_values(label, col, qrels, reorder=True)
    np.testing.assert_allclose(package, explicit, rtol=0, atol=1e-12)


def test_m1_rbp_residual_is_rbp_evals(col):
    """M1 RBP's residual is rbp_eval's: (1 - p) * sum of p^(k-1) over unjudged ranks k <= N, plus p^N."""
    got = th.residual_values("M1 RBP", col, col.qrels)
    p = 0.8
    short = 0
    for i, run in enumerate(col.runs.values()):
        for j, q in enumerate(col.topics):
            docs = run.get(q)
            if not docs:
                continue
            ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
            unjudged = sum(p ** k for k, d in enumerate(ranked) if d not in col.qrels[q])
            want = (1 - p) * unjudged + p ** len(ranked)
            short += len(ranked) < 100
            assert got[i, j] == pytest.approx(want, rel=1e-12, abs=1e-12), (list(col.runs)[i], q)
    assert short > 0


def test_swapped_pairs():
    a = np.array([0.3, 0.2, 0.1])
    assert th.swapped_pairs(a, a) == 0
    assert th.swapped_pairs(a, np.array([0.2, 0.3, 0.1])) == 1
    assert th.swapped_pairs(a, np.array([0.1, 0.2, 0.3])) == 3
    assert th.swapped_pairs(a, np.array([0.3, 0.3, 0.1])) == 1  # a tie is a change of sign


def test_script_quick(data_dir, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert th.main(["--quick", "--out", str(tmp_path), "--measures", "P@10;M1 RBP"]) == 0
    text = (tmp_path / "tables.md").read_text()
    assert "### Ties, TREC-8" in text and "### Holes, Robust 2004" in text
    assert "| P@10 | 10 % |" in text and "| M1 RBP | 100 % |" in text
    for name in ("ties_trec8", "ties_robust04", "holes_trec8", "holes_robust04"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    assert "Elapsed" in capsys.readouterr().out


def test_evaluate_applies_family_variants(col):
    """experiments.evaluate gives a family measure's ties/residual variants as ir_measures' path does."""
    for params in ({"ties": "optimistic"}, {"residual": True}):
        m = th.measure_of("M1 RBP", col.lengths, **params)
        got = th._evaluate(m, col.qrels, col.runs, col.topics, 1)
        evaluator = th.imm.PROVIDER.evaluator([m], col.qrels)
        for i, run in enumerate(col.runs.values()):
            values = evaluator.values(run, warn_empty=False)[m]
            assert got[i].tolist() == [values.get(t, 0.0) for t in col.topics], params
