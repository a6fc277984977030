"""The compiled docid probe (numba) answers exactly as the dict, and as the numpy probe, and TBG is unchanged."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.documents import _docid_table as docid_table
from irmeasures_markov.documents._docid_table import DocidTable, join_docids

numba = pytest.importorskip("numba")

# word-length multiples, prefixes and the empty string; characters the table refuses come separately
PLAIN = st.text(alphabet="abAB09-_.", min_size=0, max_size=26)
AWKWARD = st.text(alphabet="ab\né ", min_size=0, max_size=10)


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    # the tests use short lists: make the table answer them (normally short lists go to the dict)
    monkeypatch.setattr(docid_table, "SMALL_BATCH", 1)


def dict_reference(mapping, docids):
    """One plain dict probe per docid: NaN where absent."""
    return np.array([float(mapping[d]) if d in mapping else np.nan for d in docids])


def engines_answer(table, docids):
    joined = join_docids(docids)
    out = {}
    for engine in ("numba", "numpy"):
        values, found = table.lookup_joined(joined, len(docids), docids, engine=engine)
        np.testing.assert_array_equal(found, ~np.isnan(values))
        out[engine] = values
    return out


def assert_engines_equal_dict(mapping, docids):
    want = dict_reference(mapping, docids)
    for engine, values in engines_answer(DocidTable(mapping), docids).items():
        np.testing.assert_array_equal(values, want, err_msg=engine)  # NaN == NaN here


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(PLAIN, st.floats(0, 1e6), min_size=1, max_size=60), st.lists(PLAIN, max_size=40),
       st.randoms())
def test_compiled_probe_equals_dict(mapping, strangers, rnd):
    keys = list(mapping)
    # keys (some twice), strangers, and the near misses: cut short, extended, longer than every key
    docids = keys + keys[:5] + strangers + [k[:-1] for k in keys if k] + [k + "a" for k in keys] \
        + [max(keys, key=len) + "x" * 9]
    rnd.shuffle(docids)
    assert_engines_equal_dict(mapping, docids)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.one_of(PLAIN, AWKWARD), st.floats(0, 1e6), min_size=1, max_size=30),
       st.lists(st.one_of(PLAIN, AWKWARD), min_size=1, max_size=30))
def test_non_ascii_and_newlines_are_answered_like_the_dict(mapping, strangers):
    docids = list(mapping) + strangers
    want = dict_reference(mapping, docids)
    table = DocidTable(mapping)
    for engine in ("numba", "numpy"):
        # a docid holding a newline splits into too many pieces: the probe reports it and the dict answers
        values, _ = table.lookup_joined(join_docids(docids), len(docids), lambda: docids, engine=engine)
        np.testing.assert_array_equal(values, want)


def test_every_length_around_the_word_boundaries():
    rng = random.Random(7)
    keys = ["".join(rng.choice("abcXYZ019-") for _ in range(n)) for n in range(34) for _ in range(3)]
    mapping = {k: float(i) for i, k in enumerate(dict.fromkeys(keys))}
    # each key with its last character changed: same length, same words but one
    changed = [k[:-1] + ("q" if k[-1] != "q" else "r") for k in mapping if k]
    assert_engines_equal_dict(mapping, list(mapping) + changed + ["", "x" * 40])


def test_a_large_table_with_collisions_and_misses():
    rng = np.random.default_rng(3)
    keys = [f"FBIS{i}-{j}" for i, j in rng.integers(0, 10**6, size=(20000, 2)).tolist()]
    mapping = dict(zip(keys, rng.lognormal(5, 1, len(keys)).round().tolist()))
    docids = rng.choice(keys, 30000).tolist() + [f"FBIS{i}-x" for i in range(3000)] + ["LA" + k for k in keys[:2000]]
    random.Random(1).shuffle(docids)
    assert_engines_equal_dict(mapping, docids)


def test_a_docid_with_a_newline_falls_back_to_the_dict():
    mapping = {f"d{i}": float(i) for i in range(100)}
    docids = [f"d{i}" for i in range(50)] + ["d3\nd4"]
    values, found = DocidTable(mapping).lookup_joined("\n".join(docids), len(docids), docids, engine="numba")
    np.testing.assert_array_equal(values, dict_reference(mapping, docids))
    assert not found[-1]


def test_auto_takes_the_compiled_probe_after_enough_lookups(monkeypatch):
    mapping = {f"doc-{i}": float(i) for i in range(500)}
    docids = [f"doc-{i}" for i in range(0, 1000, 3)]
    calls = []
    real = docid_table._compiled_probe()

    def spy(*args):
        calls.append(args[2])
        return real(*args)
    monkeypatch.setattr(docid_table, "_compiled_probe", lambda: spy)
    monkeypatch.setattr(docid_table, "_PROBE", [])  # not loaded yet in this process
    monkeypatch.setattr(docid_table, "COMPILED_AFTER", 2 * len(docids))
    table = DocidTable(mapping)
    want = dict_reference(mapping, docids)
    for _ in range(4):
        values, _ = table.lookup_joined(join_docids(docids), len(docids), docids)
        np.testing.assert_array_equal(values, want)
    assert calls == [len(docids)] * 2  # the third and fourth lookups: past 2 * len(docids) docids
    # once loaded in the process, a new table takes it from its first lookup
    monkeypatch.setattr(docid_table, "_PROBE", [spy])
    values, _ = DocidTable(mapping).lookup_joined(join_docids(docids), len(docids), docids)
    np.testing.assert_array_equal(values, want)
    assert len(calls) == 3


def test_engines_are_checked_and_missing_numba_is_named(monkeypatch):
    table = DocidTable({"a": 1.0})
    with pytest.raises(ValueError, match="engine must be one of"):
        table.lookup_joined("a", 1, ["a"], engine="fast")
    monkeypatch.setattr(docid_table, "_compiled_probe", lambda: None)
    monkeypatch.setattr(docid_table, "_PROBE", [None])
    with pytest.raises(RuntimeError, match="pip install numba"):
        table.lookup_joined("a", 1, ["a"], engine="numba")
    monkeypatch.setattr(docid_table, "COMPILED_AFTER", 0)
    assert table.lookup_joined("a", 1, ["a"])[0].tolist() == [1.0]  # auto: numpy without numba


def test_tbg_values_are_bit_identical_with_either_probe(monkeypatch):
    monkeypatch.setattr(docid_table, "SMALL_BATCH", 64)
    rng = np.random.default_rng(11)
    docs = [f"DOC-{i:05d}" for i in range(3000)]
    lengths = dict(zip(docs, rng.lognormal(np.log(300), 0.8, len(docs)).round().tolist()))
    qrels = {f"q{q}": {d: int(g) for d, g in zip(rng.choice(docs, 80, replace=False).tolist(),
                                                   rng.integers(0, 3, 80).tolist())} for q in range(8)}
    run = {q: dict(zip(rng.choice(docs, 300, replace=False).tolist(), rng.random(300).tolist())) for q in qrels}
    imm.register_lengths("tbg-speed-probe", lengths)
    measures = [imm.TBG(lengths="tbg-speed-probe"), imm.TBG(lengths="tbg-speed-probe", norm="constant") @ 50]
    out = {}
    for after in (10**12, 0):  # numpy, then compiled
        monkeypatch.setattr(docid_table, "COMPILED_AFTER", after)
        monkeypatch.setattr(docid_table, "_PROBE", [])
        out[after] = imm.PROVIDER.evaluator(measures, qrels).values(run)
    assert out[0] == out[10**12]
    # and TBG read from a plain loop over the same lengths
    m = measures[0]
    from irmeasures_markov.measures import time_biased_gain
    for q, scores in run.items():
        ranked = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
        want = time_biased_gain([qrels[q].get(d, 0) for d in ranked], [lengths[d] for d in ranked])
        assert out[0][m][q] == pytest.approx(want, rel=1e-12, abs=1e-15)
