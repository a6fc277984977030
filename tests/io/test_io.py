"""TREC file readers: errors name the file and line."""
import gzip

import pytest

from irmeasures_markov.io import InputError, read_trec_qrels, read_trec_run, to_run_dict


def write(tmp_path, name, text, gz=False):
    p = tmp_path / name
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    else:
        p.write_text(text)
    return p


def test_read_run_plain_and_gz(tmp_path):
    text = "1 Q0 a 1 2.5 t\n1 Q0 b 2 1e-3 t\n\n2 Q0 a 0 -1 t\n"
    for gz in (False, True):
        run = read_trec_run(write(tmp_path, f"r{gz}", text, gz))
        assert run == {"1": {"a": 2.5, "b": 0.001}, "2": {"a": -1.0}}


def test_float64_precision(tmp_path):
    run = read_trec_run(write(tmp_path, "r", "1 Q0 a 1 0.12345678901234567 t\n"))
    assert run["1"]["a"] == 0.12345678901234567


@pytest.mark.parametrize("text,msg", [
    ("1 Q0 a 1 2.5 t\n1 Q0 b 2 x t\n", r"run.txt:2: score 'x' is not a number"),
    ("1 Q0 a 1 nan t\n", r"run.txt:1: score 'nan' is not finite"),
    ("1 Q0 a 1 -inf t\n", r"run.txt:1: score '-inf' is not finite"),
    ("1 Q0 a 1 2.5\n", r"run.txt:1: expected 6 fields"),
    ("1 Q0 a 1 2.5 t\n1 Q0 b 1 2.5 t\n1 Q0 a 3 1.0 t\n",
     r"run.txt:3: document 'a' appears twice for query '1' \(first at line 1\)"),
])
def test_malformed_run(tmp_path, text, msg):
    with pytest.raises(InputError, match=msg):
        read_trec_run(write(tmp_path, "run.txt", text))


@pytest.mark.parametrize("text,msg", [
    ("1 0 a 1\n1 0 b x\n", r"qrels.txt:2: relevance grade 'x' is not an integer"),
    ("1 0 a\n", r"qrels.txt:1: expected 4 fields"),
    ("1 0 a 1\n1 0 a 0\n", r"qrels.txt:2: document 'a' judged twice"),
])
def test_malformed_qrels(tmp_path, text, msg):
    with pytest.raises(InputError, match=msg):
        read_trec_qrels(write(tmp_path, "qrels.txt", text))


def test_to_run_dict_errors():
    with pytest.raises(InputError, match="Unsupported run format"):
        to_run_dict(42)
    with pytest.raises(InputError, match="item 1 is tuple"):
        to_run_dict([("q", "d", 1.0)])
