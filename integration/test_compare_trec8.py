"""`irmeasures-markov compare` on 10 TREC-8 runs: AP p-values equal all_pairs', means equal trec_eval's.

The means are checked against trec_eval's own output (reference/trec8/eval.RUN.gz, `trec_eval -q -m
all_trec`); the p-values against :func:`irmeasures_markov.inference.all_pairs` on the per-topic AP.
"""
import gzip
import io
import json
from contextlib import redirect_stdout

import pytest

from irmeasures_markov.cli import main
from irmeasures_markov.experiments import evaluate
from irmeasures_markov.inference import all_pairs

RUNS = ["CL99SD", "CL99XT", "Flab8as", "READWARE", "uwmt8a0", "ok8alx", "Sab8A1", "INQ601", "fub99tt", "att99atc"]
TREC_EVAL = {"AP": "map", "P@10": "P_10", "Rprec": "Rprec"}


def _cli(argv):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _trec_eval_all(data_dir, run):
    with gzip.open(data_dir / "reference" / "trec8" / f"eval.{run}.gz", "rt") as f:
        rows = [line.split() for line in f]
    return {m: float(v) for m, q, v in (r for r in rows if len(r) == 3) if q == "all" and m != "runid"}


@pytest.fixture(scope="module")
def paths(data_dir):
    files = [str(data_dir / "runs" / "trec8" / f"input.{n}.gz") for n in RUNS]
    return str(data_dir / "qrels" / "trec8.qrels.gz"), files


@pytest.mark.parametrize("test", ["t", "randomization"])
def test_cli_pvalues_equal_all_pairs(trec8, paths, test):
    qrels_path, files = paths
    qrels, runs = trec8
    got = _cli(["compare", qrels_path, *files, "-m", "AP", "-o", "jsonl", "--pairs", "--test", test,
                "--no-progress"])
    ev = evaluate(["AP"], qrels, {n: runs[n] for n in RUNS}, progress=False)
    ref = all_pairs(ev.per_topic("AP").to_numpy(), test, correction="holm")
    assert [(g["run_a"], g["run_b"]) for g in got] == [(RUNS[a], RUNS[b]) for a, b in zip(ref.a, ref.b)]
    assert [g["pvalue"] for g in got] == ref.pvalue.tolist()  # exactly
    assert [g["adjusted_pvalue"] for g in got] == ref.adjusted_pvalue.tolist()


def test_cli_means_equal_trec_eval(data_dir, paths):
    qrels_path, files = paths
    got = _cli(["compare", qrels_path, *files, "-m", *TREC_EVAL, "-o", "jsonl", "--baseline", "CL99SD",
                "--no-progress"])
    assert len(got) == len(RUNS) * len(TREC_EVAL)
    for rec in got:
        ref = _trec_eval_all(data_dir, rec["run"])[TREC_EVAL[rec["measure"]]]
        assert round(rec["mean"], 4) == pytest.approx(ref, abs=1e-12), rec
    # uwmt8a0 is the float32 trap: trec_eval's 0.2142, not pytrec_eval's 0.2143
    assert round(next(r["mean"] for r in got if r["run"] == "uwmt8a0" and r["measure"] == "AP"), 4) == 0.2142


def test_tukey_example_of_the_docs(paths):
    """docs/comparing-systems.md's randomized Tukey example on the ten runs is what the command prints."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "comparing-systems.md").read_text(encoding="utf-8")
    block = page.split("-m AP P@10 --test tukey\n", 1)[1].split("\n```", 1)[0]
    qrels_path, files = paths
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["compare", qrels_path, *files, "-m", "AP", "P@10", "--test", "tukey", "--no-progress"]) == 0
    assert out.getvalue().rstrip("\n") == block
