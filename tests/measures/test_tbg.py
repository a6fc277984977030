"""TBG (SPEC §4): brute force, normalisers, duplicates, length sources and policies, MPcont(time='tbg')."""
import gzip
import itertools
import math

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.documents import DocumentLengths, UnknownLengthError, read_duplicates, read_lengths
from irmeasures_markov.io import InputError
from irmeasures_markov.measures._tbg import (
    TBGParameters,
    constant_normaliser,
    gain_curve,
    holding_times,
    ideal_normaliser,
    time_biased_gain,
    time_to_rank,
)
from irmeasures_markov.measures.markov_precision import markov_precision
from irmeasures_markov.plugin._tbg import tbg_flat_rates

LN2 = math.log(2)


def brute_tbg(grades, lengths, rel=1, h=224, ts=4.4, a=0.018, b=7.8, pcr=0.64, pcn=0.39, psr=0.77):
    """Σ_k g_k exp(−T(k) ln2/h), T(k) = Σ_{i<k} [T_S + T_D(l_i) P(C|r_i)], written as a plain loop."""
    total, t = 0.0, 0.0
    for g, length in zip(grades, lengths):
        relevant = g >= rel
        if relevant:
            total += pcr * psr * math.exp(-t * LN2 / h)
        t += ts + (a * length + b) * (pcr if relevant else pcn)
    return total


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.floats(0, 5000)), min_size=1, max_size=80),
       st.floats(10, 1000), st.floats(0, 20), st.floats(0, 0.1), st.floats(0, 20), st.floats(0, 1), st.floats(0, 1),
       st.floats(0, 1), st.sampled_from([1, 2]))
def test_tbg_equals_brute_force(docs, h, ts, a, b, pcr, pcn, psr, rel):
    grades, lengths = zip(*docs)
    kw = dict(halflife=h, t_summary=ts, a=a, b=b, pc_rel=pcr, pc_nonrel=pcn, ps_rel=psr)
    got = time_biased_gain(grades, lengths, rel=rel, **kw)
    assert got == pytest.approx(brute_tbg(grades, lengths, rel, h, ts, a, b, pcr, pcn, psr), rel=1e-12, abs=1e-15)


@pytest.mark.filterwarnings("ignore:.*no document with grade:RuntimeWarning")  # random queries may have none
@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3000)), min_size=1, max_size=60),
                min_size=1, max_size=4),
       st.one_of(st.none(), st.integers(1, 20)))
def test_plugin_equals_functional(queries, cutoff):
    # several queries: a run holds enough documents for the vectorised length table to answer
    qrels, run, lengths, want = {}, {}, {}, {}
    for j, docs in enumerate(queries):
        grades, lens = zip(*docs)
        docids = [f"q{j}-d{i:03d}" for i in range(len(docs))]
        qrels[f"q{j}"] = dict(zip(docids, grades))
        run[f"q{j}"] = {d: float(len(docs) - i) for i, d in enumerate(docids)}
        lengths.update(zip(docids, map(float, lens)))
        cut = slice(None, cutoff)
        want[f"q{j}"] = brute_tbg(grades[cut], lens[cut])
    imm.register_lengths("hyp", lengths)
    m = imm.TBG(lengths="hyp")
    m = m @ cutoff if cutoff else m
    got = {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)}
    assert got.keys() == want.keys()
    for q in want:
        assert got[q] == pytest.approx(want[q], rel=1e-12, abs=1e-15)


def test_constant_normaliser():
    n = constant_normaliser()
    assert 17.1 <= n <= 17.3
    partial = sum(0.4928 * math.exp(-9.392 * (k - 1) * LN2 / 224) for k in range(1, 20001))
    assert n == pytest.approx(partial, rel=1e-12)
    assert time_biased_gain([1], [0], norm="constant") == pytest.approx(0.4928 / n)


def test_time_model_and_gain_curve():
    grades, lengths = [1, 0, 2], [100, 300, 50]
    t = time_to_rank(grades, lengths)
    np.testing.assert_allclose(t, [0, 4.4 + 9.6 * 0.64, 4.4 + 9.6 * 0.64 + 4.4 + 13.2 * 0.39])
    h = holding_times(grades, lengths)
    np.testing.assert_allclose(np.cumsum(h)[:-1], t[1:])
    done, cum = gain_curve(grades, lengths)
    np.testing.assert_allclose(done, np.cumsum(h))
    np.testing.assert_allclose(cum, [0.4928, 0.4928, 0.9856])
    times, g = gain_curve(grades, lengths, times=[0, done[0] - 1e-9, done[0], 1e6])
    np.testing.assert_allclose(g, [0, 0, 0.4928, 0.9856])


def test_ideal_normaliser_is_the_best_order():
    rng = np.random.default_rng(0)
    p = TBGParameters(pc_by_grade="1:0.5,2:0.8,3:0.9", ps_by_grade="1:0.6,2:0.8,3:0.95")
    for _ in range(20):
        n = int(rng.integers(1, 7))
        grades = rng.integers(1, 4, n)
        lengths = rng.integers(0, 3000, n).astype(float)
        best = max(time_biased_gain(grades[list(o)], lengths[list(o)], params=p)
                   for o in itertools.permutations(range(n)))
        assert ideal_normaliser(grades, lengths, p) == pytest.approx(best, rel=1e-12)
    # a run scores at most 1 under norm='ideal' when it holds only judged relevant documents
    v = time_biased_gain([1, 1], [400, 10], norm="ideal", relevant_lengths=[400, 10])
    assert v < 1 and time_biased_gain([1, 1], [10, 400], norm="ideal", relevant_lengths=[400, 10]) == pytest.approx(1)


def test_graded_gain():
    p = TBGParameters(pc_by_grade="2:0.9", ps_by_grade="2:0.95")
    got = time_biased_gain([2, 1, 0], [100, 100, 100], params=p)
    t2 = 4.4 + (1.8 + 7.8) * 0.9
    assert got == pytest.approx(0.9 * 0.95 + 0.64 * 0.77 * math.exp(-t2 * LN2 / 224))
    with pytest.raises(ValueError, match="pc_by_grade"):
        TBGParameters(pc_by_grade="2=0.9")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        TBGParameters(ps_by_grade="2:1.5")


def test_duplicates_are_read_as_length_zero(tmp_path):
    lengths = {"a": 100, "b": 200, "c": 300, "d": 400}
    dl = DocumentLengths(lengths, duplicates={"a": "g1", "c": "g1", "d": "g2"})
    np.testing.assert_allclose(dl.for_ranking(["c", "a", "b", "d"]), [300, 0, 200, 400])
    np.testing.assert_allclose(dl.for_ranking(["a", "c"]), [100, 0])
    f = tmp_path / "dups.tsv"
    f.write_text("a\tg1\nc\tg1\n")
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    imm.register_lengths("dupdocs", lengths)
    m = ir_measures.parse_measure(f"TBG(lengths='dupdocs',duplicates='{f}')")
    got = imm.PROVIDER.calc_aggregate([m], qrels, run)[m]
    assert got == pytest.approx(brute_tbg([1, 0, 1], [100, 200, 0]))
    assert read_duplicates(f) == {"a": "g1", "c": "g1"}
    f.write_text("a\tg1\na\tg2\n")
    with pytest.raises(InputError, match=r"dups.tsv:2: .*two duplicate groups"):
        read_duplicates(f)


def test_a_later_duplicate_needs_no_length():
    dl = DocumentLengths({"a": 100, "b": 200}, duplicates={"a": "g", "x": "g"})
    np.testing.assert_allclose(dl.for_ranking(["a", "b", "x"]), [100, 200, 0])
    with pytest.raises(UnknownLengthError, match=r"\['x'\]"):
        dl.for_ranking(["x", "a"])  # x comes first: its length counts


def test_plain_mappings_are_validated_like_registered_ones():
    for bad in (-1, float("nan"), "12", True):
        with pytest.raises(ValueError, match="non-negative"):
            DocumentLengths({"d": bad})
    with pytest.raises(ValueError, match="not a path"):
        imm.register_lengths("it's", {"d": 1})
    with pytest.raises(TypeError, match="duplicates must be a mapping"):
        imm.register_lengths("dups", {"d": 1}, duplicates=[("d", "g")])


def test_unknown_length_policies():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 2.0, "b": 1.0, "zz": 0.5}}
    imm.register_lengths("partial", {"a": 100, "b": 100})
    with pytest.raises(UnknownLengthError, match=r"1 document\(s\), e.g. \['zz'\].*default_length"):
        imm.PROVIDER.calc_aggregate([ir_measures.parse_measure("TBG(lengths='partial')")], qrels, run)
    with pytest.raises(UnknownLengthError, match="3 document"):
        imm.PROVIDER.calc_aggregate([imm.TBG], qrels, run)  # no lengths at all
    m = ir_measures.parse_measure("TBG(lengths='partial',default_length=1000)")
    assert imm.PROVIDER.calc_aggregate([m], qrels, run)[m] == pytest.approx(brute_tbg([1, 0, 0], [100, 100, 1000]))
    m = ir_measures.parse_measure("TBG(default_length=250)")
    assert imm.PROVIDER.calc_aggregate([m], qrels, run)[m] == pytest.approx(brute_tbg([1, 0, 0], [250] * 3))
    # parsing TBG alone never needs lengths
    assert str(ir_measures.parse_measure("TBG")) == "TBG"
    with pytest.raises(ValueError, match="default_length"):
        DocumentLengths({}, default_length=-3)


def test_length_files(tmp_path):
    good = tmp_path / "len.tsv.gz"
    with gzip.open(good, "wt") as fh:
        fh.write("# docid length\nd1\t120\nd2 7.5\n\nd1\t120\n")
    assert read_lengths(good) == {"d1": 120.0, "d2": 7.5}
    qrels = {"q": {"d1": 1, "d2": 1}}
    run = {"q": {"d1": 1.0, "d2": 2.0}}
    m = ir_measures.parse_measure(f"TBG(lengths='{good}')")
    assert imm.PROVIDER.calc_aggregate([m], qrels, run)[m] == pytest.approx(brute_tbg([1, 1], [7.5, 120]))
    for text, message in [("d1\t12\nd2\tmany\n", r":2: length 'many' of document 'd2' is not a number"),
                          ("d1\t-4\n", r":1: length of document 'd1' must be a non-negative"),
                          ("d1\tnan\n", r":1: length of document 'd1' must be a non-negative"),
                          ("d1\n", r":1: expected 'docid<TAB>length'"),
                          ("d1\t1\nd1\t2\n", r":2: document 'd1' has two lengths")]:
        bad = tmp_path / "bad.tsv"
        bad.write_text(text)
        with pytest.raises(InputError, match=message):
            read_lengths(bad)
    with pytest.raises(FileNotFoundError, match="neither a registered name nor an existing file"):
        imm.PROVIDER.calc_aggregate([ir_measures.parse_measure("TBG(lengths='missing.tsv')")], qrels, run)


def test_parameter_validation():
    # ir_measures' parser itself refuses a negative literal; the measure object refuses a negative constant
    with pytest.raises(ValueError, match="a must be >= 0"):
        imm.PROVIDER.calc_aggregate([imm.TBG(a=-1.0)], {"q": {"a": 1}}, {"q": {"a": 1.0}})
    for s, message in [("TBG(halflife=0)", "halflife"), ("TBG(pc_rel=1.5)", "pc_rel"), ("TBG(a=-1)", "problem parsing"),
                       ("TBG(norm='max')", "norm"), ("TBG(ps_by_grade='x')", "ps_by_grade")]:
        with pytest.raises(ValueError, match=message):
            m = ir_measures.parse_measure(s)
            imm.PROVIDER.calc_aggregate([m], {"q": {"a": 1}}, {"q": {"a": 1.0}})
    with pytest.raises(ValueError, match="not a path"):
        imm.register_lengths("a/b", {"x": 1})
    with pytest.raises(ValueError, match="non-negative"):
        imm.register_lengths("neg", {"x": -1})


def test_mpcont_time_tbg_equals_explicit_rates():
    rng = np.random.default_rng(3)
    docids = [f"d{i}" for i in range(40)]
    lengths = {d: float(rng.integers(0, 2000)) for d in docids}
    qrels = {"q1": {d: int(rng.random() < 0.3) for d in docids}, "q2": {d: int(rng.random() < 0.5) for d in docids}}
    qrels["q1"]["d0"] = qrels["q2"]["d1"] = 1
    run = {q: {d: float(rng.random()) for d in docids[:30]} for q in qrels}
    imm.register_lengths("mpc", lengths, duplicates={"d3": "g", "d4": "g"})
    for model in ("GL_AD_ID", "LO_OR_LID"):
        for extra in ("", ",t_summary=2.0,pc_rel=0.5", ",duplicates='mpc'"):
            m = ir_measures.parse_measure(f"MPcont(time='tbg',lengths='mpc',model='{model}'{extra})@25")
            got = {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)}
            ts = 2.0 if "t_summary" in extra else 4.4
            pcr = 0.5 if "pc_rel" in extra else 0.64
            for q, docs in run.items():
                ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:25]
                rel = [int(qrels[q][d] >= 1) for d in ranked]
                lens = [lengths[d] for d in ranked]
                if "duplicates" in extra:
                    later = [d for d in ranked if d in ("d3", "d4")][1:]
                    lens = [0.0 if d in later else length for d, length in zip(ranked, lens)]
                mean = [ts + (0.018 * length + 7.8) * (pcr if r else 0.39) for r, length in zip(rel, lens)]
                want = markov_precision(rel, model, rates=[1 / x for x in mean])
                assert got[q] == pytest.approx(want, abs=1e-12), (str(m), q)
                # and the rates themselves, at the ranks the chain visits
                prepared = imm.PROVIDER.evaluator([m], qrels).prepare(run)
                batch = m.batch(prepared)
                i = batch.qids.index(q)
                rates = tbg_flat_rates(prepared, batch, m)[batch.offsets[i]:batch.offsets[i + 1]]
                visited = np.flatnonzero(rel)
                np.testing.assert_allclose(rates[visited], [1 / mean[i] for i in visited], rtol=1e-14)


def test_constants_either_as_params_or_keywords():
    with pytest.raises(TypeError, match="not both"):
        time_biased_gain([1], [100], params={"halflife": 100}, t_summary=2.0)
    assert time_biased_gain([0, 1], [100, 100], params={"halflife": 100}) == \
        time_biased_gain([0, 1], [100, 100], halflife=100)


def test_ideal_norm_counts_every_document_with_a_gain():
    # grade 0 given a gain by per-grade probabilities: the ideal ranking must include such documents too
    qrels = {"q": {"a": 0, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    m = ir_measures.parse_measure("TBG(default_length=100,norm='ideal',pc_by_grade='0:1',ps_by_grade='0:1')")
    value = imm.PROVIDER.calc_aggregate([m], qrels, run)[m]
    assert 0 < value <= 1
    # the run: two gain-1 documents first, then c; the ideal puts them first too (highest g / (1 - e^{-c t}))
    assert value == pytest.approx(1.0, abs=1e-12)


def test_mpcont_refuses_inert_click_probability_and_tolerates_zero_time_off_the_chain():
    with pytest.raises(ValueError, match="pc_nonrel has no effect"):
        ir_measures.parse_measure("MPcont(time='tbg',default_length=100,pc_nonrel=0.2)")
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    # t_summary = 0 and pc_by_grade makes non-relevant clicks free: zero time off the chain is fine ...
    m = imm.MPcont(time="tbg", default_length=100, t_summary=0.0, pc_by_grade="0:0")
    rates = [1 / (0.018 * 100 + 7.8) / 0.64] * 3
    want = markov_precision([1, 0, 1], "GL_AD_ID", rates=rates)
    assert imm.PROVIDER.calc_aggregate([m], qrels, run)[m] == pytest.approx(want, abs=1e-12)
    # ... but not at a relevant rank
    m0 = imm.MPcont(time="tbg", default_length=100, t_summary=0.0, pc_by_grade="1:0")
    with pytest.raises(ValueError, match="relevant rank is 0"):
        imm.PROVIDER.calc_aggregate([m0], qrels, run)


def test_ideal_normaliser_under_a_cutoff_is_the_best_subset_and_order():
    """Graded gains with a cutoff k: the best of all orderings of all subsets of at most k relevant documents."""
    rng = np.random.default_rng(5)
    p = TBGParameters(pc_by_grade="1:0.5,2:0.8,3:0.9", ps_by_grade="1:0.6,2:0.8,3:0.95", halflife=30)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        k = int(rng.integers(1, n + 2))
        grades = rng.integers(1, 4, n)
        lengths = rng.integers(0, 5000, n).astype(float)
        best = max(time_biased_gain(grades[list(o)], lengths[list(o)], params=p)
                   for r in range(1, min(k, n) + 1) for o in itertools.permutations(range(n), r))
        assert ideal_normaliser(grades, lengths, p, cutoff=k) == pytest.approx(best, rel=1e-12)
    # the index order cut at k is not enough: a long, high-gain document beats a short, low-gain one at k = 1
    q = TBGParameters(pc_by_grade="1:1,2:1", ps_by_grade="1:0.5,2:1")   # index order: grade 1 (0.5, 12.2 s) first
    assert ideal_normaliser([1, 2], [0, 3000], q, cutoff=1) == pytest.approx(1.0)
    assert ideal_normaliser([1, 2], [0, 3000], q) == pytest.approx(0.5 + 2 ** (-12.2 / 224))
