"""integration/reproduce/compare_revisions.py: its verdict is bit for bit (no data needed)."""
import numpy as np
import pytest
from compare_revisions import compare, measure_strings


def arrays(values):
    return {"MP": np.array(values, dtype=np.float64), "__runs__": np.array(["r1"]), "__qids__": np.array(["1", "2"]),
            "__extra__": np.array([], dtype=str)}


def test_identical_values_pass_and_nan_matches_nan(capsys):
    assert compare(arrays([[0.5, np.nan]]), arrays([[0.5, np.nan]])) == 0
    assert "IDENTICAL" in capsys.readouterr().out


def test_one_ulp_and_a_signed_zero_are_differences(capsys):
    assert compare(arrays([[0.5, 0.25]]), arrays([[np.nextafter(0.5, 1.0), 0.25]])) == 1
    assert "1 of 2 values differ" in capsys.readouterr().out
    assert compare(arrays([[0.0, 0.25]]), arrays([[-0.0, 0.25]])) == 1
    assert compare(arrays([[0.5, np.nan]]), arrays([[0.5, 0.0]])) == 1
    assert "present in one revision only" in capsys.readouterr().out


def test_every_family_is_compared(tmp_path):
    names = measure_strings(tmp_path)
    for family in ("MP(", "MPcont(", "PH(", "PatH(", "TBG(", "M1(", "M2(", "M3(", "M4(", "CDG", "RRG", "RBTR", "ARR",
                   "RRR", "RBAP", "DAG", "RAP", "EPR", "RRAP", "AP"):
        assert any(n.startswith(family) for n in names), family
    assert len(names) > 150


def test_columns_option_reaches_the_worker_and_picks_the_columnar_reader(tmp_path, monkeypatch):
    import compare_revisions as cr

    from irmeasures_markov.io import RunColumns, read_run_columns, read_trec_run
    args = ("py", tmp_path / "export", tmp_path / "aux", tmp_path / "q.gz", [tmp_path / "r1", tmp_path / "r2"],
            tmp_path / "out.npz")
    plain, columns = cr.worker_command(*args), cr.worker_command(*args, columns="dict")
    assert "--columns" not in " ".join(plain) and columns[columns.index("--worker") + 1] == "--columns=dict"
    seen = []
    monkeypatch.setattr(cr, "worker", lambda *a: seen.append(a))
    cr.worker_main(plain[plain.index("--worker") + 1:])
    cr.worker_main(columns[columns.index("--worker") + 1:])
    assert [a[-1] for a in seen] == [None, "dict"]
    assert seen[0][:-1] == seen[1][:-1] == (args[1], args[2], args[3], args[4], args[5])
    path = tmp_path / "input.r"
    path.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 -0.0 t\n", encoding="utf-8")
    for engine in cr.COLUMN_ENGINES:
        read, as_dict = cr.run_reader(engine)
        assert read is read_run_columns and isinstance(read(path), RunColumns)
        assert type(as_dict(read(path))) is dict and as_dict(read(path)) == read_trec_run(path)
    read, as_dict = cr.run_reader(None)
    assert read is read_trec_run and as_dict(read(path)) == read_trec_run(path)
    monkeypatch.setattr(cr, "COLUMNS_MODULE", "irmeasures_markov.io.no_such_module")
    with pytest.raises(SystemExit, match="has no irmeasures_markov.io.no_such_module.read_run_columns"):
        cr.run_reader("auto")


def test_a_dict_engine_worker_cannot_import_numba(tmp_path):
    import subprocess
    import sys

    import compare_revisions as cr
    export = tmp_path / "export"
    export.mkdir()
    assert cr.worker_path(export, "auto") == cr.worker_path(export, None) == str(export)
    probe = [sys.executable, "-c", "import numba"]
    blocked = subprocess.run(probe, env={"PYTHONPATH": cr.worker_path(export, "dict")}, capture_output=True,
                             text=True)
    assert blocked.returncode != 0 and "--columns-engine dict" in blocked.stderr
