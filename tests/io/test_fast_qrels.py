"""The whole-file qrels reader gives the line reader's dictionaries and errors.

Random qrels files with every kind of ASCII whitespace (tabs, CR, CRLF, VT,
FF, blank and whitespace-only lines, no final newline), queries in pieces,
documents judged twice (same grade: one judgment; different grades: an
error), negative, signed, zero-padded and multi-digit grades, long qids,
NUL and invalid UTF-8 bytes in ids: ``read_trec_qrels`` equals
``read_trec_qrels_lines`` (same dicts, same order, same grade types), the
tokeniser takes the valid files itself, and a malformed file raises the line
reader's error naming the file and line.
"""
import gzip

import numpy as np
import pytest
from reference_readers import read_trec_qrels_lines

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io._text import BOM
from irmeasures_markov.io._tokens import SEPARATORS, joined_tokens, qrels_from_bytes, token_bounds
from irmeasures_markov.io._trec import qrels_of_file, read_trec_qrels

WHITESPACE = [b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c", b"\r", b"\t\r "]
ENDINGS = [b"\n", b"\r\n", b" \n", b"\t\r\n", b"\n\n", b"\n \t\n"]
GRADES = [b"0", b"1", b"2", b"3", b"-1", b"-2", b"10", b"+1", b"007", b"1_0", b"2147483647", b"-2147483648"]
DOCIDS = [b"d1", b"FBIS4-20472", "caf\u00e9".encode(), b"\xff\xfe", b"d\x00x", b"LA010189-0001", b"#", b"0"]
QIDS = [b"401", b"q2", b"x" * 80, "\u00e9".encode(), b"7", b"40"]
#: one defect each: (name, lines to put in the file)
DEFECTS = {
    "fields": [b"401 0 d 1 extra"],
    "three fields": [b"401 0 d"],
    "wrapped": [b"401 0", b"dwrap 1"],
    "grade": [b"401 0 dbad 1.0"],
    "word": [b"401 0 dbad high"],
    "above int32": [b"401 0 dbad 2147483648"],
    "below int32": [b"401 0 dbad -2147483649"],
    "conflict": [b"401 0 ddup 1", b"401\t0\tddup\t2"],
    "non-ASCII digit": ["401 0 dbad \u0661".encode()],
}


def random_file(rng, n_lines, *, pieces=True, exotic=True, defect=None):
    """A qrels file's bytes with random whitespace, queries in pieces or in blocks, repeated judgments.

    Not ``exotic``: one-digit grades, qids of at most 64 bytes, no NUL (the tokeniser's quickest paths).
    """
    qids = QIDS if exotic else [q for q in QIDS if len(q) <= 64]
    docids = DOCIDS if exotic else [d for d in DOCIDS if b"\0" not in d]
    grades = GRADES if exotic else [b"0", b"1", b"2", b"3"]
    lines, judged = [], []
    q = 0
    for i in range(n_lines):
        if rng.random() < 0.1:
            lines.append(rng.choice([b"", b" ", b"\t", b"\r", b" \t\x0b"]))
            continue
        if pieces and rng.random() < 0.2 or not pieces and rng.random() < 0.05:
            q = int(rng.integers(len(qids))) if pieces else min(q + 1, len(qids) - 1)
        if judged and rng.random() < 0.1:   # a document judged again with the same grade
            qid, doc, grade = judged[int(rng.integers(len(judged)))]
        else:
            qid = qids[q]
            doc = docids[int(rng.integers(len(docids)))] + str(i).encode()
            grade = grades[int(rng.integers(len(grades)))] if rng.random() < 0.5 else b"01"[i % 2:i % 2 + 1]
            judged.append((qid, doc, grade))
        fields = [qid, str(int(rng.integers(3))).encode(), doc, grade]
        seps = [WHITESPACE[int(rng.integers(len(WHITESPACE)))] for _ in range(3)]
        line = b"".join(f + s for f, s in zip(fields, seps)) + fields[-1]
        if rng.random() < 0.2:
            line = WHITESPACE[int(rng.integers(len(WHITESPACE)))] + line
        if rng.random() < 0.2:
            line += WHITESPACE[int(rng.integers(len(WHITESPACE)))]
        lines.append(line)
    if defect is not None:
        k = int(rng.integers(len(lines) + 1))
        lines[k:k] = DEFECTS[defect]
    out = b""
    for line in lines:
        out += line + ENDINGS[int(rng.integers(len(ENDINGS)))]
    return out if rng.random() < 0.5 else out.rstrip(b"\n")


def same(a, b):
    """Equal dicts, queries and documents in the same order, grades of the same type."""
    return (a == b and list(a) == list(b) and all(list(a[q]) == list(b[q]) for q in a)
            and all(type(g) is int for docs in a.values() for g in docs.values()))


@pytest.mark.parametrize("seed", range(60))
def test_the_whole_file_reader_is_the_line_reader(tmp_path, seed):
    rng = np.random.default_rng(seed)
    data = random_file(rng, int(rng.integers(1, 80)), pieces=bool(seed % 2), exotic=bool(seed // 2 % 2))
    if seed % 5 == 0:
        data = BOM + data
    path = tmp_path / ("qrels.gz" if seed % 3 == 0 else "qrels")
    path.write_bytes(gzip.compress(data) if seed % 3 == 0 else data)
    expected = read_trec_qrels_lines(path)
    assert same(qrels_of_file(path), expected)   # ids that are not UTF-8 kept
    # the tokeniser takes every valid file itself: the line reader is only the fallback
    fast = qrels_from_bytes(data[len(BOM):] if data.startswith(BOM) else data)
    assert fast is not None and same(fast, expected)


def test_the_common_file_is_tokenised():
    """A TREC qrels file (tabs, CRLF, blank lines, a query in two pieces, a repeated judgment) is taken whole."""
    data = (b"401\t0\tFBIS4-1\t1\r\n\r\n 401 0 FBIS4-2 0\n402 0 d 2\n401 0 FBIS4-3 1\n"
            b"401 0 FBIS4-1 1\n402 0 e -1")
    assert same(qrels_from_bytes(data), {"401": {"FBIS4-1": 1, "FBIS4-2": 0, "FBIS4-3": 1}, "402": {"d": 2, "e": -1}})


@pytest.mark.parametrize("defect", list(DEFECTS))
@pytest.mark.parametrize("seed", range(4))
def test_malformed_files_raise_the_line_readers_error(tmp_path, seed, defect):
    rng = np.random.default_rng(1000 + seed)
    data = random_file(rng, int(rng.integers(2, 40)), pieces=bool(seed % 2), exotic=bool(seed // 2 % 2),
                       defect=defect)
    assert qrels_from_bytes(data) is None
    path = tmp_path / "qrels.bad"
    path.write_bytes(data)
    with pytest.raises(InputError) as ref:
        read_trec_qrels_lines(path)
    assert f"{path}:" in str(ref.value)
    with pytest.raises(InputError) as got:
        read_trec_qrels(path)
    assert str(got.value) == str(ref.value)


def test_empty_and_blank_files(tmp_path):
    for data in (b"", b"\n", b" \t\r\n\n", b"\x0c", BOM):
        path = tmp_path / "blank"
        path.write_bytes(data)
        assert read_trec_qrels(path) == read_trec_qrels_lines(path) == {}


def test_truncated_and_utf16_files_give_the_line_readers_error(tmp_path):
    whole = gzip.compress(b"".join(b"401 0 d%d 1\n" % i for i in range(2000)))
    cases = {"truncated.gz": whole[:len(whole) // 2], "utf16": b"\xff\xfe4\x000\x001\x00"}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError) as ref:
            read_trec_qrels_lines(path)
        with pytest.raises(InputError) as got:
            read_trec_qrels(path)
        assert str(got.value) == str(ref.value) and f"{path}:" in str(got.value)


def test_joined_tokens_gathers_any_columns():
    data = b" 401\t0 d1 1\r\n\n402 0 \xff 2"
    buf = np.frombuffer(data, dtype=np.uint8)
    start, end = token_bounds(buf, 4)
    assert joined_tokens(buf, start.ravel(), end.ravel()).split(b"\n") == data.split()
    for k in range(4):
        assert joined_tokens(buf, start[:, k], end[:, k]).split(b"\n") == data.split()[k::4]
    assert token_bounds(np.frombuffer(b"401 0 d1 1 x\n", dtype=np.uint8), 4) is None


def test_the_separators_are_those_of_bytes_split():
    assert SEPARATORS == bytes(b for b in range(256) if len((b"a" + bytes([b]) + b"a").split()) == 2)
    for b in range(256):   # a separator between the first two fields; LF ends the line
        line = b"q" + bytes([b]) + b"0 d 1\n"
        start_end = token_bounds(np.frombuffer(line, dtype=np.uint8), 4)
        assert (start_end is not None) is (b in SEPARATORS and b != 10)
