"""TBG on TREC-8: the cwl-eval identity (unit costs) and a plain-loop evaluation on real rankings."""
import math
import pathlib
import sys

import numpy as np
import pytest

import irmeasures_markov as imm
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "reproduce"))
pytest.importorskip("cwl")
from crosscheck_cwl_tbg import compare, compare_time_model, seeded_lengths  # noqa: E402


def test_unit_cost_tbg_equals_cwl_eval(trec8):
    qrels, runs = trec8
    worst, n = compare(qrels, [runs[name] for name in sorted(runs)[::8]])
    assert n == 17 * 50 * 3
    assert worst < 1e-12


def test_tbg_time_model_equals_cwl_eval_with_our_costs(trec8):
    qrels, runs = trec8
    subset = [runs[name] for name in sorted(runs)[3::16]]
    worst, n = compare_time_model(qrels, subset, seeded_lengths(subset))
    assert n == len(subset) * 50
    assert worst < 1e-12


def test_tbg_with_assumed_lengths_equals_plain_loop(trec8):
    qrels, runs = trec8
    rng = np.random.default_rng(1)
    names = sorted(runs)[::16]
    docs = sorted({d for n in names for ranking in runs[n].values() for d in ranking})
    lengths = dict(zip(docs, rng.integers(20, 3000, len(docs)).astype(float).tolist()))
    imm.register_lengths("trec8-assumed", lengths)
    m = imm.TBG(lengths="trec8-assumed")
    qi = QrelsIndex(qrels)
    for name in names:
        got = {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, runs[name])}
        for q in PreparedRun(qi, runs[name]).queries:
            total, t = 0.0, 0.0
            for d, g in zip(q.docids, q.grades.tolist()):
                if g >= 1:
                    total += 0.64 * 0.77 * math.exp(-t * math.log(2) / 224)
                t += 4.4 + (0.018 * lengths[d] + 7.8) * (0.64 if g >= 1 else 0.39)
            assert got[q.qid] == pytest.approx(total, rel=1e-12, abs=1e-15), (name, q.qid)


def test_figure_script(data_dir, tmp_path, monkeypatch):
    """docs/scripts/make_tbg_figures.py runs on the shared data and writes the PNG; assumed lengths are positive."""
    import runpy
    pytest.importorskip("matplotlib")
    script = pathlib.Path(__file__).resolve().parents[1] / "docs" / "scripts" / "make_tbg_figures.py"
    mod = runpy.run_path(str(script))
    out = tmp_path / "tbg.png"
    monkeypatch.setattr(sys, "argv", ["make_tbg_figures.py", "--out", str(out)])
    mod["main"]()
    assert out.stat().st_size > 10_000
    lengths = mod["assumed_lengths"]([{"q": {"b": 1.0, "a": 2.0}}])
    assert sorted(lengths) == ["a", "b"] and all(v > 0 for v in lengths.values())


def test_tbg_tie_groups_without_relevant_documents_in_file_order(trec8):
    """TBG adds the times of tie groups without a relevant document in file order: within rounding of the
    full docid order on real runs (integration/reproduce/crosscheck_tbg_tie_order.py prints the whole of TREC-8)."""
    from crosscheck_tbg_tie_order import compare, tied_share
    qrels, runs = trec8
    subset = [runs[name] for name in sorted(runs)[1::8]]
    tied, with_relevant = tied_share(qrels, subset)
    assert 0 < with_relevant < tied
    n, differing, worst = compare(qrels, subset)
    assert n == len(subset) * 50 * 3
    assert worst < 1e-13
