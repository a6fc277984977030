"""io.run_columns: a run read into columns is the run ``read_trec_run`` reads, and behaves as its dict.

Random run files (every ASCII whitespace, CRLF, blank lines, queries in
pieces, gzip, non-ASCII and invalid UTF-8 docids, 17-digit and exponent
scores) read by ``read_run_columns`` and ``load_run_dir`` equal
``read_trec_run``'s dicts: same queries, documents, order and float bits, and
the same error messages for malformed files; under both tokenisers and both
docid-set engines.
"""
import gzip
import pickle

import numpy as np
import pytest
from reference_readers import read_trec_run_lines
from test_fast_run_engines import bits, force_engine, random_file
from token_engines import TOKEN_ENGINES, force_token_engine

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io import _run_columns as run_columns_module
from irmeasures_markov.io._run_columns import RunColumns, columns_of_run, exact_dict, read_run_columns, run_from_columns
from irmeasures_markov.io._run_files import load_run_dir
from irmeasures_markov.io._tokens import run_columns

TOKENISERS = ("numpy", "numba")


def assert_same_run(got, expected):
    """Equal as mappings, with the same query order, document order and score bits."""
    assert isinstance(got, RunColumns)
    assert list(got) == list(expected)
    assert {q: list(got[q]) for q in got} == {q: list(d) for q, d in expected.items()}
    assert bits(got) == bits(expected) and bits(exact_dict(got)) == bits(expected)
    assert got == expected and exact_dict(got) == expected
    assert got.n_documents == sum(map(len, expected.values()))
    assert got.docid_list() == [d for docs in expected.values() for d in docs]


def scores_file(rng, n):
    """A clean file (one query in several pieces): 17 significant digits, exponents, signed zeros, non-ASCII ids."""
    forms = [lambda x: repr(x), lambda x: f"{x:.16e}", lambda x: f"{x:.17g}", lambda x: f"{x:E}", lambda x: "-0.0",
             lambda x: f"{x * 1e-310!r}", lambda x: f"{x:.3e}".replace("e+", "E+")]
    lines = []
    for i in range(n):
        q = ["401", "402", "4\u00e903"][int(rng.integers(3))]
        x = float(rng.normal() * 10.0 ** int(rng.integers(-5, 6)))
        doc = ["LA", "d\u00e9", "\udcff\udcfe", "FT9"][i % 4] + str(i)
        lines.append(f"{q} Q0 {doc} {i} {forms[int(rng.integers(len(forms)))](x)} run")
    return ("\r\n" if rng.random() < 0.5 else "\n").join(lines).encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
@pytest.mark.parametrize("seed", range(30))
def test_read_run_columns_is_read_trec_run_lines(tmp_path, seed, token_engine, monkeypatch):
    rng = np.random.default_rng(seed)
    data = random_file(rng, int(rng.integers(1, 80)), pieces=bool(seed % 2)) if seed % 5 else scores_file(rng, 60)
    path = tmp_path / ("run.gz" if seed % 3 == 0 else "run")
    path.write_bytes(gzip.compress(data) if seed % 3 == 0 else data)
    expected = read_trec_run_lines(path)
    asked = force_token_engine(monkeypatch, token_engine)
    for tokeniser in TOKENISERS:
        force_engine(monkeypatch, tokeniser)
        assert_same_run(read_run_columns(path), expected)
        cols = run_columns(data, engine=tokeniser)
        if cols is not None:          # the tokeniser's columns, as load_run_dir's workers send them
            assert_same_run(run_from_columns(cols), expected)
            assert_same_run(columns_of_run(data), expected)
    assert "auto" in asked      # the repeat check went through the engine asked for


def test_the_line_readers_run_becomes_the_same_columns(tmp_path, monkeypatch):
    """A file the whole-file tokeniser leaves to the line reader (here: every file) gives the same columns."""
    monkeypatch.setattr(run_columns_module, "columns_of_run", lambda data: None)
    for seed in range(10):
        rng = np.random.default_rng(50 + seed)
        path = tmp_path / f"run{seed}"
        path.write_bytes(random_file(rng, int(rng.integers(1, 60))) if seed % 2 else scores_file(rng, 40))
        assert_same_run(read_run_columns(path), read_trec_run_lines(path))


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
@pytest.mark.parametrize("bad", ["fields", "score", "nan", "hex", "dup"])
@pytest.mark.parametrize("seed", range(4))
def test_malformed_files_raise_read_trec_runs_error(tmp_path, seed, bad, token_engine, monkeypatch):
    rng = np.random.default_rng(1000 + seed)
    data = random_file(rng, int(rng.integers(2, 40)), bad=bad)
    path = tmp_path / ("input.bad.gz" if seed % 2 else "input.bad")
    path.write_bytes(gzip.compress(data) if seed % 2 else data)
    with pytest.raises(InputError) as ref:
        read_trec_run_lines(path)
    force_token_engine(monkeypatch, token_engine)
    for tokeniser in TOKENISERS:
        force_engine(monkeypatch, tokeniser)
        with pytest.raises(InputError) as got:
            read_run_columns(path)
        assert str(got.value) == str(ref.value)
        assert f"{path}:" in str(got.value)
    if bad == "dup":
        cols = run_columns(data)
        if cols is not None:      # the tokeniser takes the file: the repeat check refuses the columns
            assert run_from_columns(cols) is None


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
def test_a_document_twice_in_a_query_is_the_same_error(tmp_path, token_engine, monkeypatch):
    force_token_engine(monkeypatch, token_engine)
    for text in ("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 a 1 1 t\nq1 Q0 a 3 0.5 t\n",        # in a later piece
                 "q1 Q0 \u00e9 1 2 t\nq1 Q0 \u00e9 2 1 t\n",                              # the first two lines
                 "q1 Q0 a 1 2 t\nq2 Q0 b 1 1 t\nq2 Q0 c 2 1 t\nq2 Q0 b 3 1 t\n"):          # the last line
        path = tmp_path / "input.dup"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as ref:
            read_trec_run_lines(path)
        with pytest.raises(InputError) as got:
            read_run_columns(path)
        assert str(got.value) == str(ref.value) and f"{path}:" in str(got.value)


def test_truncated_compressed_data_is_read_trec_runs_answer(tmp_path):
    data = gzip.compress(b"".join(b"q%d Q0 d%d %d %d.5 t\n" % (i % 3, i, i, i) for i in range(3000)))
    path = tmp_path / "input.cut.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as ref:
        read_trec_run_lines(path)
    with pytest.raises(InputError) as got:
        read_run_columns(path)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("data", [b"", b"\n", b" \t\r\n\n"])
def test_an_empty_file_is_an_empty_run(tmp_path, data):
    path = tmp_path / "input.empty"
    path.write_bytes(data)
    run = read_run_columns(path)
    assert isinstance(run, RunColumns) and len(run) == 0 and list(run) == [] and run == {} == read_trec_run_lines(path)
    assert run.to_dict() == {} and run.n_documents == 0 and run.docid_list() == [] and "q" not in run
    assert repr(run) == "RunColumns(0 queries, 0 documents)"


def write_runs(directory, seed):
    rng = np.random.default_rng(seed)
    directory.mkdir()
    paths = []
    for k in range(5):
        data = random_file(rng, int(rng.integers(1, 50))) if k % 2 else scores_file(rng, 30)
        path = directory / (f"input.r{k}.gz" if k == 2 else f"input.r{k}")
        path.write_bytes(gzip.compress(data) if k == 2 else data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_load_run_dir_gives_columns_equal_to_read_trec_run_lines(tmp_path, n_jobs):
    paths = write_runs(tmp_path / "runs", 7)
    runs = load_run_dir(tmp_path / "runs", progress=False, n_jobs=n_jobs)
    assert list(runs) == [f"r{k}" for k in range(5)]
    for path in paths:
        assert_same_run(runs[path.name.split(".")[1]], read_trec_run_lines(path))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_load_run_dir_raises_read_trec_runs_error(tmp_path, n_jobs):
    write_runs(tmp_path / "runs", 8)
    bad = tmp_path / "runs" / "input.r3"
    bad.write_bytes(bad.read_bytes() + b"\nq9 Q0 dx 1 1 t\nq9 Q0 dx 2 0 t\n")
    with pytest.raises(InputError) as ref:
        read_trec_run_lines(bad)
    with pytest.raises(InputError) as got:
        load_run_dir(tmp_path / "runs", progress=False, n_jobs=n_jobs)
    assert str(got.value) == str(ref.value)


def test_a_run_is_a_read_only_mapping(tmp_path):
    path = tmp_path / "input.m"
    path.write_text("q2 Q0 b 1 2.5 t\nq1 Q0 a 1 1 t\nq2 Q0 c 2 -0.0 t\nq1 Q0 z 2 1e300 t\n", encoding="utf-8")
    run, expected = read_run_columns(path), read_trec_run_lines(path)
    assert len(run) == 2 and list(run) == ["q2", "q1"] and list(run.keys()) == ["q2", "q1"]
    assert "q1" in run and "q3" not in run and 5 not in run
    assert run["q2"] == {"b": 2.5, "c": -0.0} and np.signbit(run["q2"]["c"])
    with pytest.raises(KeyError):
        run["q3"]
    assert run.get("q3") is None and run.get("q3", 7) == 7 and run.get("q1") == {"a": 1.0, "z": 1e300}
    assert list(run.items()) == list(expected.items()) and list(run.values()) == list(expected.values())
    assert run == expected and expected == run and run != {"q2": expected["q2"]} and run != {**expected, "q3": {}}
    assert dict(run) == expected and type(run.to_dict()) is dict and run.to_dict() == expected
    with pytest.raises(TypeError):
        run["q1"]["a"] = 99.0                  # a query is a read-only view: a change would otherwise be lost
    assert run["q1"]["a"] == 1.0 and type(run.to_dict()["q1"]) is dict
    with pytest.raises(TypeError):
        run["q1"] = {}
    assert repr(run) == "RunColumns(2 queries, 4 documents)"
    back = pickle.loads(pickle.dumps(run))
    assert isinstance(back, RunColumns) and back == run and list(back) == list(run)
    assert back.scores.tobytes() == run.scores.tobytes() and back.docids == run.docids
    assert back.bounds.tolist() == run.bounds.tolist() == [0, 2, 4] and back.bounds.dtype == np.int64
