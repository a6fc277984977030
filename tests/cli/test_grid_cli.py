"""``irmeasures-markov pool-reduction``: the command line of the grid, checked against the Python API."""
import json

import pytest
from synthetic_collection import synthetic, write_run

from irmeasures_markov.cli import main
from irmeasures_markov.experiments import pool_reduction


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


def _table(out):
    return [line.split("\t") for line in out.strip().splitlines()]


def test_pool_reduction_command_equals_the_api(files, capsys, tmp_path):
    pytest.importorskip("pyarrow")  # --store
    qrels, runs, qpath, rdir = files
    argv = ["pool-reduction", qpath, rdir, "-m", "AP", "MP(recall=True)", "--percents", "50,10", "--seeds", "0-1",
            "-p", "-1", "--no-progress", "--store", str(tmp_path / "store")]
    assert main(argv) == 0
    header, *rows = _table(capsys.readouterr().out)
    assert header == ["percent", "seed", "measure", "mean", "tau"]
    assert len(rows) == 2 + 2 * 2 * 2
    measures = ["AP", "MP(recall=True)"]
    for seed in (0, 1):
        ref = pool_reduction(measures, qrels, runs, percents=(50, 10), seed=seed, progress=False)
        for k, pc in enumerate((100, 50, 10)):
            for j, m in enumerate(measures):
                want = ["100", "-"] if pc == 100 else [str(pc), str(seed)]
                row = next(r for r in rows if r[:3] == want + [m])
                assert float(row[3]) == ref.mean_scores[k, j] and float(row[4]) == ref.tau[k, j]
    # the same command again: every cell from the store, the same output
    assert main(argv) == 0
    assert _table(capsys.readouterr().out) == [header] + rows
    assert main(argv[:-2] + ["-o", "jsonl"]) == 0
    assert capsys.readouterr().out.count("\n") == len(rows)


def test_pool_reduction_tsv_has_a_header_naming_the_jsonl_keys(files, capsys):
    _, _, qpath, rdir = files
    argv = ["pool-reduction", qpath, rdir, "-m", "AP", "--percents", "50", "--no-progress"]
    assert main(argv) == 0
    header, *rows = _table(capsys.readouterr().out)
    assert header == ["percent", "seed", "measure", "mean", "tau"] and [r[:3] for r in rows] == [
        ["100", "-", "AP"], ["50", "0", "AP"]]
    assert main(argv + ["-o", "jsonl"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [list(r) for r in records] == [header] * 2  # no header line in jsonl: its keys name the values


@pytest.mark.parametrize("extra, message", [
    (["--seeds", "3-1"], "--seeds"),
    (["--seeds", "0,0"], "twice"),
    (["--percents", "100"], "in \\(0, 100\\)"),
    (["--percents", "x"], "--percents"),
    (["-j", "0"], "n-jobs"),
])
def test_pool_reduction_command_errors(files, capsys, extra, message):
    _, _, qpath, rdir = files
    assert main(["pool-reduction", qpath, rdir, "-m", "AP", "--no-progress"] + extra) == 2
    err = capsys.readouterr().err
    assert "irmeasures-markov: error:" in err
    import re
    assert re.search(message, err)


def test_pool_reduction_command_needs_two_runs_and_existing_files(files, capsys, tmp_path):
    _, _, qpath, rdir = files
    one = sorted((tmp_path / "runs").iterdir())[0]
    assert main(["pool-reduction", qpath, str(one), "-m", "AP", "--no-progress"]) == 2
    assert "at least 2 runs" in capsys.readouterr().err
    assert main(["pool-reduction", qpath, str(tmp_path / "nope"), "-m", "AP", "--no-progress"]) == 2
    assert "no such file" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / one.name).write_bytes(one.read_bytes())  # another file giving the same run name
    assert main(["pool-reduction", qpath, rdir, str(other / one.name), "-m", "AP", "--no-progress"]) == 2
    assert f"gives the run name {one.name.removeprefix('input.').removesuffix('.gz')!r}" in capsys.readouterr().err


@pytest.mark.parametrize("store", [False, True])
def test_pool_reduction_reads_each_run_file_once(files, capsys, tmp_path, monkeypatch, store):
    """The overlap check and the cells use one read of each run file (issue 34 item 5: the command read every run
    for the check, then the grid's workers read it again; with --store the key hashed its bytes a third time)."""
    import builtins
    import os

    if store:
        pytest.importorskip("pyarrow")
    _, runs, qpath, rdir = files
    opened = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.fspath(file).startswith(rdir):
            opened.append(os.path.basename(os.fspath(file)))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    argv = ["pool-reduction", qpath, rdir, "-m", "AP", "--percents", "50", "-j", "1", "--no-progress"]
    assert main(argv + (["--store", str(tmp_path / "store")] if store else [])) == 0
    assert sorted(opened) == sorted(f"input.{name}.gz" for name in runs)


def test_repeated_measure_options_add_up(files, capsys):
    # `-m AP -m P@10` used to keep only the last list (argparse's default 'store'): a measure dropped unsaid
    qrels, runs, qpath, rdir = files
    base = ["pool-reduction", qpath, rdir, "--percents", "50", "--seeds", "0", "--no-progress"]
    assert main(base + ["-m", "AP", "-m", "P@10"]) == 0
    repeated = capsys.readouterr().out
    assert main(base + ["-m", "AP", "P@10"]) == 0
    assert repeated == capsys.readouterr().out and "P@10" in repeated and "\tAP\t" in repeated
    assert main(["compare", qpath, rdir, "-m", "AP", "-m", "P@10", "--no-progress", "-o", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "AP" in header and "P@10" in header
