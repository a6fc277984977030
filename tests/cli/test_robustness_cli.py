"""``irmeasures-markov robustness``: topic samples and pool depths on the command line, against the Python API."""
import json

import numpy as np
import pytest
from synthetic_collection import synthetic, write_run

from irmeasures_markov.cli import main
from irmeasures_markov.experiments import pool_depth_robustness, topic_sample_stability


@pytest.fixture
def files(tmp_path):
    qrels, runs = synthetic(seed=8, n_runs=5, n_docs=70)
    qpath = tmp_path / "qrels.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rdir = tmp_path / "runs"
    rdir.mkdir()
    for name, run in runs.items():
        write_run(rdir / f"input.{name}.gz", run, gz=True)
    return qrels, runs, str(qpath), str(rdir)


def test_robustness_command_equals_the_api(files, capsys):
    qrels, runs, qpath, rdir = files
    measures = ["AP", "M2(dist='DCG')"]
    argv = ["robustness", qpath, rdir, "-m", *measures, "--sizes", "2,3", "--trials", "7", "--seed", "5",
            "--depths", "1,5", "-p", "-1", "--no-progress"]
    assert main(argv) == 0
    header, *rows = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    assert header == ["experiment", "level", "measure", "tau", "sd"]
    taus = topic_sample_stability(measures, qrels, runs, sizes=[2, 3], trials=7, seed=5, progress=False)
    depth = pool_depth_robustness(measures, qrels, runs, depths=[1, 5], progress=False)
    want = [["topics", str(s), m, taus.loc[s, m].mean(), np.std(taus.loc[s, m].to_numpy())]
            for s in (2, 3) for m in measures]
    want += [["depth", str(d), m, depth.loc[d, m], None] for d in (1, 5) for m in measures]
    assert [r[:3] for r in rows] == [w[:3] for w in want]
    for r, w in zip(rows, want):
        assert float(r[3]) == pytest.approx(w[3], abs=1e-15)
        assert (r[4] == "-") if w[4] is None else float(r[4]) == pytest.approx(w[4], abs=1e-15)
    assert main(argv + ["-o", "jsonl", "--depths", "none"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["experiment"] for r in records] == ["topics"] * 4 and list(records[0]) == header


@pytest.mark.parametrize("extra, message", [
    (["--sizes", "none", "--depths", "none"], "nothing to compute"),
    (["--depths", "0"], "--depths: every value must be a positive integer"),
    (["--sizes", "99"], "`sizes` must be integers in"),
    (["--trials", "0"], "--trials must be a positive integer"),
])
def test_robustness_usage_errors_exit_2(files, capsys, extra, message):
    _, _, qpath, rdir = files
    assert main(["robustness", qpath, rdir, "-m", "AP", "--no-progress", *extra]) == 2
    assert message in capsys.readouterr().err
