"""The input layer's rules: one run reader behind every path that reads a run file, one PathLike, one frozen()."""
import ast
import gzip
import pathlib

import numpy as np
import pytest
from reference_readers import read_trec_run_lines

import irmeasures_markov  # noqa: F401
import irmeasures_markov.io._run_columns as run_columns_module
from irmeasures_markov.io import read_trec_run, to_run_dict
from irmeasures_markov.io._run_files import load_run_dir

PACKAGE = pathlib.Path(irmeasures_markov.__file__).parent

RUN = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.25 t\nq2 Q0 d3 1 0.5 t\n"


@pytest.fixture
def counted(monkeypatch):
    """Count the calls of the whole-file tokeniser that the run readers (dicts and columns) use."""
    calls = []
    real = run_columns_module.run_columns

    def wrapper(data):
        calls.append(len(data))
        return real(data)
    monkeypatch.setattr(run_columns_module, "run_columns", wrapper)
    return calls


def test_every_run_path_goes_through_the_one_reader(tmp_path, counted):
    p = tmp_path / "input.r1.gz"
    p.write_bytes(gzip.compress(RUN))
    expected = read_trec_run_lines(p)
    assert read_trec_run(p) == expected
    assert to_run_dict(str(p)) == expected                 # in-memory normalisation of a path
    assert load_run_dir(tmp_path, n_jobs=1) == {"r1": expected}
    assert len(counted) == 3, counted


def test_the_one_reader_falls_back_to_the_line_grammar_for_exact_errors(tmp_path):
    p = tmp_path / "bad.run"
    p.write_bytes(RUN + b"q2 Q0 d4 2 nan t\n")
    with pytest.raises(irmeasures_markov.io.InputError, match=r"bad.run:4: score 'nan' is not finite"):
        read_trec_run(p)


def _assignments(name, folders):
    found = []
    for folder in folders:
        for f in sorted((PACKAGE / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                    found.append(str(f.relative_to(PACKAGE)))
                elif isinstance(node, ast.FunctionDef) and node.name == name:
                    found.append(str(f.relative_to(PACKAGE)))
    return found


def test_pathlike_is_defined_once_in_the_lower_layers():
    assert _assignments("PathLike", ["_util", "io"]) == ["_util/_types.py"]


def test_frozen_arrays_refuse_writes():
    from irmeasures_markov._util._arrays import frozen
    a = np.arange(3)
    assert frozen(a) is a
    with pytest.raises(ValueError):
        a[0] = 5


def test_load_run_dir_reads_in_this_process_by_default(tmp_path, monkeypatch):
    # the default n_jobs is 1 (measured: on the 129 TREC-8 runs, workers made loading 1.4x slower), whatever the
    # number of CPUs
    import concurrent.futures
    import os

    from irmeasures_markov.io._run_files import load_run_dir as load

    for i in range(5):
        (tmp_path / f"input.r{i}").write_text(f"1 Q0 d{i} 1 2.5 r{i}\n1 Q0 e 2 1.5 r{i}\n")

    def no_pool(*args, **kwargs):
        raise AssertionError("load_run_dir started worker processes")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    runs = load(tmp_path, progress=False)
    assert runs == {f"r{i}": {"1": {f"d{i}": 2.5, "e": 1.5}} for i in range(5)}
