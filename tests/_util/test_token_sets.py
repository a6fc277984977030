"""_util.token_sets: both engines (dicts, compiled hash tables) give what Python sets and dicts give.

Random newline-joined tokens in segments (a run's docids, query after query):
segments of every length from 0 up (1 included), tokens of 1 to 40 bytes
(ASCII, non-ASCII, invalid UTF-8 decoded with surrogateescape as the readers
decode fields, NUL and other control bytes), tokens that are prefixes of one
another or differ in one byte only, repeats at a segment's first and last
token, and equal tokens in different segments (which are no repeat).
"""
import sys

import numba  # the [test] extra installs it: the compiled engine is always checked
import numpy as np
import pytest

from irmeasures_markov._util import _token_hash_numba
from irmeasures_markov._util import _token_sets as token_sets
from irmeasures_markov._util._token_sets import ENGINES, KeyTables, first_repeat, lookup, token_bounds

ENGINE_NAMES = ("dict", "numba")
INT64_MIN, INT64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
#: characters tokens are made of (never a newline): ASCII, control bytes, 2-, 3- and 4-byte UTF-8
ALPHABET = list("abcXYZ0189-_.#") + ["\t", "\r", " ", "\x00", "\x7f", "\u00e9", "\u00fc", "\u4e2d", "\U0001f600"]


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")   # as io.text.decode reads a field


def random_token(rng) -> str:
    """1 to 40 bytes: valid characters, invalid UTF-8 bytes, or both."""
    length = int(rng.integers(1, 41))
    kind = rng.random()
    if kind < 0.2:        # raw bytes, most of them invalid UTF-8 alone
        raw = bytes(int(b) for b in rng.integers(0, 256, size=length) if b != 10) or b"\x80"
        return decode(raw)
    chars = "".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), size=length))
    out = decode(chars.encode()[:length])   # cut to `length` bytes: a cut character becomes invalid bytes
    return out or "a"


def token_pool(rng, size: int) -> list[str]:
    """Distinct tokens, with near-twins: prefixes of one another, one byte changed, one word of four shifted."""
    pool = {random_token(rng) for _ in range(size)}
    for t in list(pool)[: size // 3]:
        raw = t.encode("utf-8", "surrogateescape")
        pool.add(decode(raw[:-1]) if len(raw) > 1 else t + "x")
        pool.add(decode(raw + b"\x00"))
        k = int(rng.integers(len(raw)))
        changed = (raw[k] + 1) % 256
        pool.add(decode(raw[:k] + bytes([11 if changed == 10 else changed]) + raw[k + 1:]))
        pool.add(decode(raw[4:] + raw[:4]))
    return sorted(pool)


def random_segments(rng, pool: list[str], *, repeats: bool):
    """``(joined, bounds, segments)``: segments of random lengths (0 and 1 included), distinct tokens each unless
    ``repeats`` (then a few segments repeat a token, some at the segment's first or last token)."""
    n_seg = int(rng.integers(1, 12))
    segments = []
    for _ in range(n_seg):
        length = int(rng.choice([0, 1, 1, 2, 3, int(rng.integers(1, 60))]))
        length = min(length, len(pool))
        seg = [pool[i] for i in rng.choice(len(pool), size=length, replace=False).tolist()]
        if repeats and len(seg) >= 1 and rng.random() < 0.3:
            where = rng.random()
            if where < 0.3:
                seg.append(seg[0])                   # the last token repeats the first
            elif where < 0.5:
                seg.insert(1, seg[0])                 # the second repeats the first
            else:
                k = int(rng.integers(len(seg)))
                seg.insert(int(rng.integers(k + 1, len(seg) + 1)), seg[k])
        segments.append(seg)
    # equal tokens across segments: the first token of a segment is the last of the previous one
    for s in range(1, n_seg):
        if segments[s - 1] and segments[s] and rng.random() < 0.5 and segments[s - 1][-1] not in segments[s]:
            segments[s][0] = segments[s - 1][-1]
    return join(segments)


def join(segments):
    bounds = np.zeros(len(segments) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in segments], out=bounds[1:])
    return "\n".join(t for s in segments for t in s), bounds, segments


def brute_first_repeat(segments) -> int:
    r = 0
    for seg in segments:
        seen = set()
        for t in seg:
            if t in seen:
                return r
            seen.add(t)
            r += 1
    return -1


def brute_lookup(segments, table_of, tables, missing):
    return [tables[t].get(tok, missing) if t >= 0 else missing for seg, t in zip(segments, table_of) for tok in seg]


def random_tables(rng, pool, n_tables):
    values = [0, -1, 1, 7, -5, INT64_MIN, INT64_MAX, INT64_MIN + 1]
    tables = []
    for _ in range(n_tables):
        size = min(int(rng.choice([0, 1, 2, int(rng.integers(0, len(pool) + 1))])), len(pool))
        keys = [pool[i] for i in rng.choice(len(pool), size=size, replace=False).tolist()]
        tables.append({k: int(rng.choice(values)) if rng.random() < 0.5 else int(rng.integers(-10 ** 12, 10 ** 12))
                       for k in keys})
    return tables


@pytest.mark.parametrize("engine", ENGINE_NAMES)
@pytest.mark.parametrize("seed", range(8))
def test_first_repeat_is_the_first_token_seen_before_in_its_segment(engine, seed):
    rng = np.random.default_rng(seed)
    found = 0
    for case in range(60):
        pool = token_pool(rng, int(rng.integers(1, 80)))
        joined, bounds, segments = random_segments(rng, pool, repeats=case % 2 == 1)
        expected = brute_first_repeat(segments)
        found += expected >= 0
        assert first_repeat(joined, bounds, engine=engine) == expected, (case, segments)
        if engine == "dict":
            assert first_repeat(joined, bounds, keys=joined.split("\n"), engine=engine) == expected
    assert 10 <= found <= 45     # the cases hold repeats as well as none


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_first_repeat_edge_cases(engine):
    def check(segments):
        joined, bounds, _ = join(segments)
        assert first_repeat(joined, bounds, engine=engine) == brute_first_repeat(segments), segments
    check([])
    check([[]])
    check([[], ["a"], []])
    check([["a"]])
    check([["a"], ["a"]])                          # across segments: no repeat
    check([["a", "b"], ["b", "a"], ["a"]])
    check([["a", "b", "a"]])                       # last repeats first
    check([["x"], ["a", "a"]])                     # a two-token segment of one token
    check([["abcd", "abcde", "abc", "abcd"]])      # prefixes; the repeat at the end
    check([["abcdefgh", "efghabcd"]])              # the same 4-byte words in another order: no repeat
    check([["\udcff", "\u00ff", "\udcc3", "\u00c3"]])  # invalid bytes beside the characters of those codes
    check([["\udcff", "\udcff"]])
    check([[f"d{i}" for i in range(5000)] + ["d4999"]])      # a table that grows; the repeat last
    check([[f"d{i}" for i in range(100)], [f"d{i}" for i in range(100)]])


@pytest.mark.parametrize("engine", ENGINE_NAMES)
@pytest.mark.parametrize("seed", range(8))
def test_lookup_is_a_dict_get_per_token_in_its_segments_table(engine, seed):
    rng = np.random.default_rng(100 + seed)
    for case in range(40):
        pool = token_pool(rng, int(rng.integers(1, 80)))
        joined, bounds, segments = random_segments(rng, pool, repeats=False)
        n_tables = int(rng.integers(0, 5))
        tables = random_tables(rng, pool, n_tables)
        table_of = rng.integers(-1, n_tables, size=len(segments)).astype(np.int64)   # -1: no table
        missing = int(rng.choice([-1, 0, INT64_MIN, 3]))
        keytables = KeyTables(tables)
        expected = brute_lookup(segments, table_of.tolist(), tables, missing)
        got = lookup(joined, bounds, table_of, keytables, missing, engine=engine)
        assert got.dtype == np.int64 and got.tolist() == expected, (case, segments, tables, table_of)
        again = lookup(joined, bounds, table_of, keytables, missing, keys=joined.split("\n"), engine=engine)
        assert again.tolist() == expected     # the tables' packed form is made once and reused


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_lookup_edge_cases(engine):
    def check(segments, tables, table_of, missing=-7):
        joined, bounds, _ = join(segments)
        got = lookup(joined, bounds, np.array(table_of, dtype=np.int64), KeyTables(tables), missing, engine=engine)
        assert got.dtype == np.int64
        assert got.tolist() == brute_lookup(segments, table_of, tables, missing), (segments, tables, table_of)
    check([], [], [])
    check([[]], [{"a": 1}], [0])
    check([["a"]], [], [-1])                                   # no tables at all
    check([["a"], ["a"]], [{}, {"a": INT64_MIN}], [0, 1])      # an empty table; int64's minimum as a value
    check([["a", "b"]], [{"a": INT64_MAX, "b": -1}], [0], missing=INT64_MIN)
    check([["a", "b"], ["a", "b"]], [{"a": 1}], [0, 0])        # two segments share a table
    check([["abc", "abcd", "ab"]], [{"abcd": 4, "abc": 3}], [0])
    check([["\udcff", "\u00ff"]], [{"\u00ff": 2}], [0])
    check([[f"d{i}" for i in range(3000)]], [{f"d{i}": i - 1500 for i in range(0, 6000, 2)}], [0])
    check([["a"], ["b"], ["c"]], [{"a": 1, "b": 2, "c": 3}, {}], [1, -1, 0])


def test_token_bounds():
    buf = np.frombuffer("ab\n\ncd\u00e9".encode(), dtype=np.uint8)
    start, end = token_bounds(buf, 3)
    assert start.tolist() == [0, 3, 4] and end.tolist() == [2, 3, 8]
    start, end = token_bounds(np.zeros(0, dtype=np.uint8), 1)      # one empty token
    assert start.tolist() == [0] and end.tolist() == [0]
    assert [a.size for a in token_bounds(np.zeros(0, dtype=np.uint8), 0)] == [0, 0]


@pytest.mark.parametrize("call", ["first_repeat", "lookup"])
@pytest.mark.parametrize("segments", [[["a", "b"]], []])
def test_an_unknown_engine_is_named(call, segments):
    joined, bounds, _ = join(segments)
    message = "`engine` must be one of 'auto', 'dict', 'numba', got 'c'"
    with pytest.raises(ValueError, match=message):
        if call == "first_repeat":
            first_repeat(joined, bounds, engine="c")
        else:
            lookup(joined, bounds, np.zeros(len(segments), dtype=np.int64), KeyTables([{}]), 0, engine="c")
    assert ENGINES == ("auto", "dict", "numba")


def test_auto_takes_the_compiled_engine_only_once_numba_is_loaded(monkeypatch):
    """'auto' in a process without numba loaded answers with the dicts (the compiled kernels are not called);
    once numba is loaded, with the compiled kernels."""
    first_repeat("a\nb", np.array([0, 2]), engine="numba")      # the kernels loaded (and compiled) beforehand
    calls = []

    def spy(name):
        def kernel(*args):
            calls.append(name)
            raise RuntimeError("compiled kernel called")
        return kernel
    monkeypatch.setattr(_token_hash_numba, "first_repeat", spy("first_repeat"))
    monkeypatch.setattr(_token_hash_numba, "lookup", spy("lookup"))
    tables = KeyTables([{"a": 5}])
    monkeypatch.delitem(sys.modules, "numba")
    assert first_repeat("a\nb\na", np.array([0, 3]), engine="auto") == 2
    assert lookup("a\nb", np.array([0, 2]), np.array([0]), tables, -1, engine="auto").tolist() == [5, -1]
    assert first_repeat("a\nb\na", np.array([0, 3]), engine="dict") == 2
    assert calls == []
    monkeypatch.setitem(sys.modules, "numba", numba)    # the module itself, never imported a second time
    with pytest.raises(RuntimeError, match="compiled kernel called"):
        first_repeat("a\nb\na", np.array([0, 3]), engine="auto")
    with pytest.raises(RuntimeError, match="compiled kernel called"):
        lookup("a\nb", np.array([0, 2]), np.array([0]), tables, -1, engine="auto")
    assert calls == ["first_repeat", "lookup"]
    assert token_sets.ENGINES == ENGINES


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_keys_that_no_decoded_field_can_be_match_nothing(engine):
    """Table keys from a hand-made dict: escaped bytes that spell valid UTF-8 ("\\udcc3\\udca9" is the bytes of
    "\\u00e9"), lone surrogates outside surrogateescape's range: the compiled engine matched the first to
    "\\u00e9" and could not encode the second; both engines now answer as a dict does."""
    segments = [["\u00e9", "\udcc3", "b", "\udcff"], ["\u00e9"]]
    # zip: ruff's duplicate-key check takes distinct surrogate literals for one key
    tables = [dict(zip(["\udcc3\udca9", "\ud800", "\udc41", "b", "\udcc3", "\udcff"], [5, 6, 7, 1, 2, 3])),
              {"\udcc3\udca9": 5, "\u00e9": 4}]
    joined, bounds, _ = join(segments)
    got = lookup(joined, bounds, np.array([0, 1]), KeyTables(tables), -1, engine=engine)
    assert got.tolist() == brute_lookup(segments, [0, 1], tables, -1) == [-1, 2, 1, 3, 4]
