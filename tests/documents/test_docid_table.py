"""The vectorised docid table answers exactly as the dict it was built from."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.documents import DocumentLengths, LengthTable, UnknownLengthError
from irmeasures_markov.documents import _docid_table as docid_table
from irmeasures_markov.documents._docid_table import DocidTable, encode_joined, join_docids


def setup_module():
    # the tests use short lists: make the table answer them (normally short lists go to the dict)
    global _small_batch
    _small_batch, docid_table.SMALL_BATCH = docid_table.SMALL_BATCH, 1


def teardown_module():
    docid_table.SMALL_BATCH = _small_batch


# docids that exercise every boundary: word-length multiples, prefixes, the empty string,
# and characters the table must refuse (newline, NUL, non-ASCII)
PLAIN = st.text(alphabet="abAB09-_.", min_size=0, max_size=26)
AWKWARD = st.text(alphabet="ab\n\x00é ", min_size=0, max_size=10)


def dict_answer(mapping, docids):
    values = np.array([mapping.get(d, np.nan) for d in docids], dtype=np.float64)
    return values, ~np.isnan(values)


def assert_same(table, mapping, docids):
    values, found = table.lookup(docids)
    want, want_found = dict_answer(mapping, docids)
    np.testing.assert_array_equal(found, want_found)
    np.testing.assert_array_equal(values[found], want[want_found])
    assert np.isnan(values[~found]).all()


def probes(keys, extra):
    """Keys, strangers, and keys cut short or extended by a character (the near misses)."""
    near = [k[:-1] for k in keys if k] + [k + "a" for k in keys] + [k + "\x00" for k in keys[:3]]
    return list(keys) + list(extra) + near


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(PLAIN, st.floats(0, 1e6), max_size=60), st.lists(PLAIN, max_size=40), st.randoms())
def test_plain_ascii_table_equals_dict(mapping, strangers, rnd):
    table = DocidTable(mapping)
    assert table.vectorised == bool(mapping)
    docids = probes(list(mapping), strangers)
    rnd.shuffle(docids)
    assert_same(table, mapping, docids)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.one_of(PLAIN, AWKWARD), st.floats(0, 1e6), max_size=30),
       st.lists(st.one_of(PLAIN, AWKWARD), max_size=30))
def test_awkward_characters_fall_back_to_the_dict(mapping, strangers):
    table = DocidTable(mapping)
    assert_same(table, mapping, probes(list(mapping), strangers))


def test_near_misses_in_the_vectorised_path():
    # the longest key fills its two words exactly: a longer docid with it as prefix must not match
    mapping = {"LA010189-0001": 1.0, "FBIS3-10082": 2.0, "abcdefgh": 3.0, "": 4.0, "0123456789abcdef": 5.0}
    table = DocidTable(mapping)
    assert table.vectorised
    docids = ["abcdefgh", "abcdefghX", "abcdefg", "0123456789abcdefX", "0123456789abcdef", "FBIS3-10082",
              "FBIS3-1008", "", "LA010189-0001" + "x" * 20]
    joined = join_docids(docids)
    assert encode_joined(joined, len(docids), 2) is not None
    values, found = table.lookup_joined(joined, len(docids), docids)
    assert found.tolist() == [True, False, False, False, True, True, False, True, False]
    assert values[found].tolist() == [3.0, 5.0, 2.0, 4.0]


def test_docids_the_table_cannot_encode_are_answered_by_the_dict():
    table = DocidTable({"abcdefgh": 3.0, "a": 1.0})
    values, found = table.lookup(["abcdefgh\x00", "a\x00", 7, None, "é", "a"])
    assert found.tolist() == [False, False, False, False, False, True]
    # a newline inside a docid changes the number of separators
    assert table.lookup(["a\nb", "abcdefgh"])[0][1] == 3.0
    assert table.lookup_joined("a\nb\nabcdefgh", 2, lambda: ["a\nb", "abcdefgh"])[1].tolist() == [False, True]
    assert join_docids(["é"]) is None and join_docids(["a\x00"]) is None and join_docids([1]) is None
    assert encode_joined("a\nb\nc", 2, 1) is None


def test_many_keys_with_collisions_and_rebuilds(monkeypatch):
    rng = np.random.default_rng(5)
    keys = [f"FT{rng.integers(10**9):09d}-{i}" for i in range(20000)]
    mapping = dict(zip(keys, rng.random(len(keys)).tolist()))
    strangers = [f"FT{rng.integers(10**9):09d}-x" for _ in range(5000)]
    assert_same(DocidTable(mapping), mapping, probes(keys, strangers))
    # with no room after the last home slot, building must grow the table until every probe run fits
    monkeypatch.setattr(docid_table, "_OVERFLOW", 0)
    table = DocidTable(mapping)
    assert table._table.shape[0] > 2 * len(keys)
    assert_same(table, mapping, probes(keys, strangers))


def test_keys_sharing_one_hash_give_up_growing(monkeypatch):
    # more keys than the overflow area holds, all on the last home slot: every size fails, so the dict answers
    mapping = {f"doc-{i}": float(i) for i in range(200)}
    last_home = lambda columns, shift: np.full(columns[0].size, (1 << (64 - int(shift))) - 1, dtype=np.intp)  # noqa: E731
    monkeypatch.setattr(docid_table, "_slot_hash", last_home)
    table = DocidTable(mapping)
    assert not table.vectorised
    assert_same(table, mapping, probes(list(mapping), ["doc-200", "doc"]))


def test_no_table_beyond_the_memory_cap(monkeypatch):
    mapping = {f"doc-{i}": float(i) for i in range(1000)}
    monkeypatch.setattr(docid_table, "MAX_TABLE_BYTES", 1000)
    table = DocidTable(mapping)
    assert not table.vectorised
    assert_same(table, mapping, probes(list(mapping), ["doc-1000", "doc"]))


def test_nan_values_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        DocidTable({"a": float("nan")})


def test_length_table_is_a_validated_snapshot():
    source = {"a": 10, "b": 2.5}
    table = LengthTable(source)
    source["a"] = 99
    assert table["a"] == 10 and dict(table) == {"a": 10, "b": 2.5} and len(table) == 2
    for bad in (-1, float("inf"), float("nan"), "12", True, 10 ** 400, np.float64(-2)):
        with pytest.raises(ValueError, match="non-negative"):
            LengthTable({"x": bad})
    imm.register_lengths("snapshot-test", source)
    source["b"] = 1000
    assert imm.plugin._tbg.REGISTERED_LENGTHS["snapshot-test"]["b"] == 2.5


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["d1", "d2", "d3", "é4", "d\n5", "long-document-identifier-6"]),
                         max_size=6), max_size=4),
       st.sampled_from([None, 0.0, 300.0]))
def test_segments_lookup_equals_lookup_of_the_concatenation(segments, default):
    known = {"d1": 100.0, "d2": 0.0, "é4": 40.0, "long-document-identifier-6": 6.0}
    flat = [d for s in segments for d in s]
    for source in (known, LengthTable(known)):
        lengths = DocumentLengths(source, default_length=default)
        try:
            want = np.array([known.get(d, default) for d in flat], dtype=np.float64)
            assert default is not None or all(d in known for d in flat)
        except AssertionError:
            with pytest.raises(UnknownLengthError, match="no length for"):
                lengths.lookup_segments(segments)
            continue
        np.testing.assert_array_equal(lengths.lookup_segments(segments), want)
        np.testing.assert_array_equal(lengths.lookup(flat), want)


def test_unknown_lengths_are_named_from_a_segment_lookup():
    lengths = DocumentLengths(LengthTable({"a": 1.0}))
    with pytest.raises(UnknownLengthError, match=r"2 document\(s\), e.g. \['b', 'c'\]"):
        lengths.lookup_segments([["a", "b"], ["c", "a"]])


def test_length_table_builds_once_lookups_add_up_to_its_size(monkeypatch):
    monkeypatch.setattr(docid_table, "SMALL_BATCH", 64)  # this module lowers it for the other tests
    table = LengthTable({f"d{i}": float(i) for i in range(1000)})
    docids = [f"d{i}" for i in range(0, 1000, 3)]  # 334 per lookup
    for _ in range(2):
        values, found = table.lookup(docids)
        assert table._table is None and found.all()
    table.lookup(docids[:10])  # too few to count
    assert table._table is None
    values, found = table.lookup(docids)  # 1002 looked up: now the table answers
    assert table._table is not None and table._table.vectorised
    np.testing.assert_array_equal(values, [float(d[1:]) for d in docids])
    # sources made for reuse build at their first lookup of 64+ documents
    imm.register_lengths("eager-test", dict(table))
    eager = imm.plugin._tbg.REGISTERED_LENGTHS["eager-test"]
    eager.lookup(docids[:63])
    assert eager._table is None
    eager.lookup(docids[:64])
    assert eager._table is not None
    with pytest.raises(ValueError, match="build_after"):
        LengthTable({}, build_after=-1)
