"""The tokeniser's engines (numba, numpy) give the same columns, and the run reader the line reader's answer.

Random run files with every kind of ASCII whitespace (tabs, CR, CRLF, VT, FF,
blank and whitespace-only lines, no final newline), queries in pieces,
non-ASCII and invalid UTF-8 docids, and malformed lines: the two engines'
columns agree bit for bit, ``read_trec_run`` equals ``read_trec_run_lines``
(same dicts, same float bits, same error naming file and line).
"""
import gzip
import math
import struct

import numpy as np
import pytest
from reference_readers import read_trec_run_lines

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io import _tokens as tokens
from irmeasures_markov.io import read_run_columns, read_trec_run
from irmeasures_markov.io._run_columns import exact_dict, run_from_columns

ENGINES = ("numpy", "numba")
SEPARATORS = [b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c", b"\r", b"\t\r "]
ENDINGS = [b"\n", b"\r\n", b" \n", b"\t\r\n", b"\n\n", b"\n \t\n"]
SCORES = ["1", "-0", "0.0", "-0.0", "3.14159", "1e-300", "2.5E+10", "-7", ".5", "5.", "1_000", "+2",
          "0.1", "123456789.123456789", "4.9e-324", "1.7976931348623157e308", "1E5"]
DOCIDS = [b"d1", b"FBIS4-20472", "caf\u00e9".encode(), b"\xff\xfe", b"d\x00x", b"LA010189-0001", b"#", b"Q0"]


def random_file(rng, n_lines, *, pieces=True, bad=None):
    """A run file's bytes with random whitespace; ``bad`` in ('fields', 'score', 'nan', 'hex', 'dup') breaks a line."""
    qids = [b"401", b"q2", b"x" * 80, "\u00e9".encode(), b"7"]
    lines, seen = [], set()
    q = 0
    for i in range(n_lines):
        if rng.random() < 0.1:
            lines.append(rng.choice([b"", b" ", b"\t", b"\r", b" \t\x0b"]))
            continue
        if pieces and rng.random() < 0.2 or not pieces and rng.random() < 0.05:
            q = int(rng.integers(len(qids))) if pieces else min(q + 1, len(qids) - 1)
        doc = DOCIDS[int(rng.integers(len(DOCIDS)))] + str(i).encode()
        score = SCORES[int(rng.integers(len(SCORES)))] if rng.random() < 0.5 else repr(float(rng.normal()))
        fields = [qids[q], b"Q0", doc, str(i).encode(), score.encode(), b"tag"]
        seps = [SEPARATORS[int(rng.integers(len(SEPARATORS)))] for _ in range(5)]
        line = b"".join(f + s for f, s in zip(fields, seps)) + fields[-1]
        if rng.random() < 0.2:
            line = SEPARATORS[int(rng.integers(len(SEPARATORS)))] + line
        lines.append(line)
        seen.add((qids[q], doc))
    if bad is not None:
        k = int(rng.integers(len(lines)))
        if bad == "fields":
            lines[k] = b"401 Q0 d 1 2.0"
        elif bad == "score":
            lines[k] = b"401 Q0 dbad 1 2.0x tag"
        elif bad == "nan":
            lines[k] = b"401 Q0 dbad 1 nan tag"
        elif bad == "hex":
            lines[k] = b"401 Q0 dbad 1 0x10 tag"
        elif bad == "dup":
            lines[k] = b"401 Q0 ddup 1 1 tag"
            lines.insert(k + 1, b"401\tQ0\tddup\t2\t0.5\ttag")
    out = b""
    for line in lines:
        out += line + ENDINGS[int(rng.integers(len(ENDINGS)))]
    return out if rng.random() < 0.5 else out.rstrip(b"\n")


def force_engine(monkeypatch, engine):
    """Make the reader's 'auto' pick ``engine``: numba from the first byte, or numpy as in a process without it."""
    numba = engine == "numba"
    monkeypatch.setattr(tokens, "_KERNELS", [] if numba else [None])
    monkeypatch.setattr(tokens, "COMPILED_AFTER", 0 if numba else 10 ** 15)


def same_columns(a, b):
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2] and a[3].tobytes() == b[3].tobytes()


def bits(run):
    return {q: {d: struct.pack("<d", v) for d, v in docs.items()} for q, docs in run.items()}


@pytest.mark.parametrize("seed", range(40))
def test_engines_agree_and_the_reader_is_the_line_reader(tmp_path, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    data = random_file(rng, int(rng.integers(1, 60)), pieces=bool(seed % 2))
    cols = {e: tokens.run_columns(data, engine=e) for e in ENGINES}
    assert same_columns(cols["numpy"], cols["numba"])
    path = tmp_path / ("run.gz" if seed % 3 == 0 else "run")
    path.write_bytes(gzip.compress(data) if seed % 3 == 0 else data)
    expected = read_trec_run_lines(path)
    for e in ENGINES:
        if cols[e] is not None:
            assert bits(exact_dict(run_from_columns(cols[e]))) == bits(expected)
            assert list(exact_dict(run_from_columns(cols[e]))) == list(expected)
    for engine in ENGINES:
        force_engine(monkeypatch, engine)
        assert bits(exact_dict(read_run_columns(path))) == bits(expected)   # ids that are not UTF-8 kept


def test_the_numba_engine_takes_the_common_file_whole():
    """A clean file (tabs, CRLF, blank lines, a query in two pieces) is tokenised, not left to the line reader."""
    data = (b"401\tQ0\tFBIS4-1\t1\t3.5\tt\r\n\r\n 401 Q0 FBIS4-2 2 -0.0 t\n402 Q0 d 1 1e-300 t\n"
            b"401 Q0 FBIS4-3 3 0.1 t")
    for e in ENGINES:
        cols = tokens.run_columns(data, engine=e)
        assert cols is not None
        assert cols[0] == ["401", "402"] and cols[1] == [0, 3, 4]
        assert cols[2] == "FBIS4-1\nFBIS4-2\nFBIS4-3\nd"
        assert cols[3].tolist() == [3.5, -0.0, 0.1, 1e-300] and math.copysign(1, cols[3][1]) == -1


@pytest.mark.parametrize("bad", ["fields", "score", "nan", "hex", "dup"])
@pytest.mark.parametrize("seed", range(6))
def test_malformed_files_raise_the_line_readers_error(tmp_path, seed, bad, monkeypatch):
    rng = np.random.default_rng(1000 + seed)
    data = random_file(rng, int(rng.integers(2, 40)), bad=bad)
    if bad != "dup":
        for e in ENGINES:
            assert tokens.run_columns(data, engine=e) is None
    path = tmp_path / "input.bad"
    path.write_bytes(data)
    with pytest.raises(InputError) as ref:
        read_trec_run_lines(path)
    assert f"{path}:" in str(ref.value)
    for engine in ENGINES:
        force_engine(monkeypatch, engine)
        with pytest.raises(InputError) as got:
            read_trec_run(path)
        assert str(got.value) == str(ref.value)


def test_empty_and_blank_files():
    for data in (b"", b"\n", b" \t\r\n\n", b"\x0c"):
        for e in ENGINES:
            assert same_columns(tokens.run_columns(data, engine=e), ([], [0], "", np.zeros(0)))


def test_an_unknown_engine_is_named():
    with pytest.raises(ValueError, match="`engine` must be one of 'auto', 'numba', 'numpy', got 'c'"):
        tokens.run_columns(b"q Q0 d 1 1 t\n", engine="c")


def random_numbers(rng, n):
    """Decimal strings of every shape float() reads, near the compiled parser's limits (2**53, 10**±22)."""
    out = []
    for _ in range(n):
        kind = int(rng.integers(6))
        if kind == 0:
            out.append(repr(float(rng.normal() * 10.0 ** int(rng.integers(-30, 30)))))
        elif kind == 1:   # up to 20 digits, a point anywhere
            digits = "".join(str(int(d)) for d in rng.integers(0, 10, size=int(rng.integers(1, 21))))
            p = int(rng.integers(0, len(digits) + 1))
            out.append(digits[:p] + "." + digits[p:] if rng.random() < 0.7 else digits)
        elif kind == 2:   # mantissa around 2**53, exponents around ±22
            m = 2 ** 53 + int(rng.integers(-3, 4))
            out.append(f"{m}e{int(rng.integers(-25, 26))}")
        elif kind == 3:
            out.append(f"{float(rng.random()):.{int(rng.integers(1, 20))}f}")
        elif kind == 4:   # leading zeros, signs, exponent forms
            out.append(rng.choice(["-", "+", ""]) + "0" * int(rng.integers(0, 4)) + str(int(rng.integers(0, 10 ** 6)))
                       + rng.choice(["", ".", ".0", ".000125"]) + rng.choice(["", "e0", "E+3", "e-7", "e-22", "e22",
                                                                            "e23", "e-23", "e-0"]))
        else:             # forms left to float(): underscores, subnormal, huge
            out.append(rng.choice(["1_000.5", "4.9e-324", "2.2250738585072014e-308", "1e308", "0.1e-400",
                                   "123456789012345678901234567890", "-0", "0e999999999"]))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_compiled_scores_are_float_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    numbers = random_numbers(rng, 4000)
    data = "".join(f"q Q0 d{i} {i} {x} t\n" for i, x in enumerate(numbers)).encode()
    cols = tokens.run_columns(data, engine="numba")
    assert cols is not None
    expected = np.array([float(x) for x in numbers])
    assert cols[3].tobytes() == expected.tobytes()
    assert tokens.run_columns(data, engine="numpy")[3].tobytes() == expected.tobytes()


def test_auto_takes_the_compiled_engine_after_compiled_after_bytes(monkeypatch):
    """One small file stays on numpy (no numba import); the bytes add up to COMPILED_AFTER, then numba."""
    monkeypatch.setattr(tokens, "_KERNELS", [])
    monkeypatch.setattr(tokens, "_TOKENISED", [0])
    monkeypatch.setattr(tokens, "numba_loaded", lambda: False)
    monkeypatch.setattr(tokens, "COMPILED_AFTER", 100)
    data = b"q Q0 d1 1 1.5 t\nq Q0 d2 2 0.5 t\n"   # 32 bytes
    picked = [tokens._engine_kernels("auto", len(data)) for _ in range(4)]
    assert picked[:3] == [None, None, None] and picked[3] is not None
    assert tokens._engine_kernels("numpy", len(data)) is None
    assert tokens._engine_kernels("auto", len(data)) is picked[3]      # loaded: stays compiled
