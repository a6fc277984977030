"""TBG and MPcont(time='tbg') through the plug-in's code paths, against plain-Python loops.

Covers: MPcont(time='tbg') on runs large enough for the vectorised docid table (with and without
judged_only) against MPcont with hand-computed rates; TBG measure strings with norm='constant' and
norm='ideal' under several cutoffs; the unknown-length policy for unretrieved relevant documents under
norm='ideal'; the lengths='irds:<id>' route with a fake ir_datasets (word counts, disk cache); a fixed
200+ document case; the doctests of the TBG modules; parameter validation.

The click probability of non-relevant documents is never set here (only its default is used).
"""
import doctest
import gzip
import math
import types

import ir_measures
import numpy as np
import pytest
from fake_ir_datasets import FakeDataset, FakeIrDatasets

import irmeasures_markov as imm
import irmeasures_markov.documents._lengths as lengths_module
import irmeasures_markov.measures._tbg as tbg_module
import irmeasures_markov.measures._time_model as time_model_module
from irmeasures_markov.documents import UnknownLengthError, lengths_from_ir_datasets
from irmeasures_markov.plugin._tbg import REGISTERED_LENGTHS

LN2 = math.log(2)
#: the paper's calibration (Table 1), written out independently of the code
PAPER = dict(halflife=224.0, t_summary=4.4, a=0.018, b=7.8, pc_rel=0.64, ps_rel=0.77)
#: P(C=1|R=0) is read from the package: only its default is ever used in this module
PC_NONREL = tbg_module.TBG_DEFAULTS["pc_nonrel"]
#: non-default constants used by the measure-string tests
CUSTOM = dict(halflife=150.0, t_summary=2.5, a=0.03, b=6.0, pc_rel=0.8, ps_rel=0.6)


# --------------------------------------------------------------------------- helpers

def trec_order(scores):
    """Docids of ``{docid: score}`` in trec_eval order: score descending, then docid descending."""
    return sorted(scores, key=lambda d: (scores[d], d), reverse=True)


def brute_tbg(grades, lengths, p=PAPER, rel=1):
    """Σ_k g_k exp(−T(k) ln2/h) with T(k) = Σ_{i<k} [T_S + (a l_i + b) P(C=1|r_i)], as a plain loop."""
    total, t = 0.0, 0.0
    for g, length in zip(grades, lengths):
        relevant = g is not None and g >= rel
        if relevant:
            total += p["pc_rel"] * p["ps_rel"] * math.exp(-t * LN2 / p["halflife"])
        t += p["t_summary"] + (p["a"] * length + p["b"]) * (p["pc_rel"] if relevant else PC_NONREL)
    return total


def brute_ideal(relevant_lengths, cutoff, p):
    """Binary relevance: the judged relevant documents shortest first, cut at ``cutoff``."""
    best = sorted(relevant_lengths)[:cutoff]
    return brute_tbg([1] * len(best), best, p)


def brute_constant(p):
    """g / (1 − exp(−T_x ln2/h)) with g = pc_rel ps_rel and T_x = T_S + b pc_rel."""
    tx = p["t_summary"] + p["b"] * p["pc_rel"]
    return p["pc_rel"] * p["ps_rel"] / (1.0 - math.exp(-tx * LN2 / p["halflife"]))


def brute_run_tbg(qrels, run, lengths, p=PAPER, rel=1, cutoff=None, norm="none", default_length=None):
    """Per-query TBG of a run (unjudged documents count as non-relevant)."""
    out = {}
    for q, scores in run.items():
        ranked = trec_order(scores)[:cutoff]
        grades = [qrels.get(q, {}).get(d) for d in ranked]
        value = brute_tbg(grades, [lengths.get(d, default_length) for d in ranked], p, rel)
        if norm == "constant":
            value /= brute_constant(p)
        elif norm == "ideal":
            relevant = [lengths.get(d, default_length) for d, g in qrels.get(q, {}).items() if g >= rel]
            ideal = brute_ideal(relevant, cutoff, p)
            value = value / ideal if ideal > 0 else 0.0
        out[q] = value
    return out


def per_query(measure, qrels, run):
    return {r.query_id: r.value for r in imm.PROVIDER.iter_calc([measure], qrels, run)}


def assert_close(got, want, rel=1e-12, abs=1e-15):
    assert got.keys() == want.keys()
    for q in want:
        assert got[q] == pytest.approx(want[q], rel=rel, abs=abs), q


def assert_vectorised(name):
    """The registered LengthTable ``name`` answered through its numpy docid table."""
    table = REGISTERED_LENGTHS[name]._table
    assert table is not None and table.vectorised


def collection(seed, n_queries, n_retrieved, grades=(0, 1), n_unjudged=0, n_unretrieved=0):
    """qrels, run and lengths: per query ``n_retrieved`` documents with tied scores (so the docid
    tie-break matters), the first ``n_unjudged`` of them missing from the qrels, and ``n_unretrieved``
    judged relevant documents that the run does not retrieve."""
    rng = np.random.default_rng(seed)
    qrels, run, lengths = {}, {}, {}
    for j in range(n_queries):
        q = f"q{j}"
        docs = [f"{q}-d{i:03d}" for i in range(n_retrieved)]
        run[q] = {d: float(rng.integers(0, max(2, n_retrieved // 3))) for d in docs}
        qrels[q] = {d: int(rng.choice(grades)) for d in docs[n_unjudged:]}
        qrels[q].update({f"{q}-r{i}": max(grades) for i in range(n_unretrieved)})
        for d in list(docs) + list(qrels[q]):
            lengths[d] = float(rng.integers(0, 3000))
    return qrels, run, lengths


# --------------------------------------------------------------------------- 1. MPcont(time='tbg')

@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("model", ["GL_AD_ID", "LO_OR_LID"])
def test_mpcont_time_tbg_on_a_vectorised_table_equals_hand_computed_rates(judged_only, model):
    qrels, run, lengths = collection(11, n_queries=3, n_retrieved=70, grades=(0, 1, 2), n_unjudged=15)
    name = imm.register_lengths("paths-mpcont", lengths)
    p = dict(PAPER, t_summary=2.5, pc_rel=0.8)
    jo = ",judged_only=True" if judged_only else ""
    m = ir_measures.parse_measure(f"MPcont(time='tbg',lengths='{name}',model='{model}',"
                                  f"pc_rel=0.8,t_summary=2.5{jo})")
    got = per_query(m, qrels, run)
    assert_vectorised(name)

    rates = {}
    for q, scores in run.items():
        ranked = [d for d in trec_order(scores) if not judged_only or d in qrels[q]]
        mu = []
        for d in ranked:
            click = p["pc_rel"] if qrels[q].get(d, 0) >= 1 else PC_NONREL  # unjudged: not relevant
            mu.append(1.0 / (p["t_summary"] + (p["a"] * lengths[d] + p["b"]) * click))
        rates[q] = mu
    imm.register_rates("paths-mpcont-rates", rates)
    explicit = ir_measures.parse_measure(f"MPcont(rates='paths-mpcont-rates',model='{model}'{jo})")
    want = per_query(explicit, qrels, run)
    # (only the rates of relevant ranks enter MPcont: the chain is watched on them)
    assert_close(got, want, rel=0, abs=1e-12)
    # the rates matter: the discrete-time MP differs
    plain = per_query(ir_measures.parse_measure(f"MP(model='{model}'{jo})"), qrels, run)
    assert any(abs(plain[q] - want[q]) > 1e-6 for q in want)


# --------------------------------------------------------------------------- 2. normalisers

def _tbg_measures(name, norm, cutoff):
    """The same TBG measure from a measure string and from the Python object."""
    consts = ",".join(f"{k}={v!r}" for k, v in CUSTOM.items())
    at = f"@{cutoff}" if cutoff else ""
    parsed = ir_measures.parse_measure(f"TBG(lengths='{name}',norm='{norm}',{consts}){at}")
    built = imm.TBG(lengths=name, norm=norm, **CUSTOM)
    return parsed, (built @ cutoff if cutoff else built)


@pytest.mark.filterwarnings("ignore:.*no document with grade")
@pytest.mark.parametrize("n_retrieved", [12, 80])
@pytest.mark.parametrize("norm", ["constant", "ideal"])
@pytest.mark.parametrize("cutoff", [None, 5, 50])
def test_normalised_tbg_from_measure_strings_equals_brute_force(n_retrieved, norm, cutoff):
    qrels, run, lengths = collection(20 + n_retrieved, n_queries=3, n_retrieved=n_retrieved, n_unjudged=3,
                                     n_unretrieved=4)
    # a query without relevant documents scores 0 (ideal normaliser 0)
    qrels["q2"] = {d: 0 for d in qrels["q2"]}
    name = imm.register_lengths(f"paths-norm-{n_retrieved}", lengths)
    want = brute_run_tbg(qrels, run, lengths, CUSTOM, cutoff=cutoff, norm=norm)
    assert want["q2"] == 0.0 and want["q0"] > 0 and want["q1"] > 0
    for m in _tbg_measures(name, norm, cutoff):
        assert_close(per_query(m, qrels, run), want)
    if n_retrieved >= 64 and cutoff is None:  # the whole run is looked up at once
        assert_vectorised(name)
    if norm == "ideal" and cutoff is None:
        assert all(v <= 1 for v in want.values())


# --------------------------------------------------------------------------- 3. unknown lengths under norm='ideal'

def test_ideal_norm_needs_the_length_of_unretrieved_relevant_documents():
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "ghost-7": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    lengths = {"a": 400.0, "b": 100.0, "c": 50.0}
    name = imm.register_lengths("paths-ghost", lengths)
    with pytest.raises(UnknownLengthError, match=r"1 document\(s\), e.g. \['ghost-7'\]"):
        imm.PROVIDER.calc_aggregate([imm.TBG(lengths=name, norm="ideal")], qrels, run)
    # the unretrieved document's length is only needed by the ideal normaliser
    got = per_query(imm.TBG(lengths=name), qrels, run)
    assert_close(got, brute_run_tbg(qrels, run, lengths))
    for w in (0.0, 20.0, 5000.0):
        got = per_query(imm.TBG(lengths=name, norm="ideal", default_length=w), qrels, run)
        value = brute_tbg([1, 0, 1], [400.0, 100.0, 50.0])
        ideal = brute_ideal([400.0, 50.0, w], None, PAPER)
        assert got["q"] == pytest.approx(value / ideal, rel=1e-12)


# --------------------------------------------------------------------------- 4. lengths='irds:<id>'

SEPARATORS = [" ", "\t", "\n", "  ", " \r\n ", "\t \t"]


def _fake_docs(n=80, seed=4):
    """Documents with known word counts, words separated by assorted whitespace."""
    rng = np.random.default_rng(seed)
    docs = [("fixed-a", "one two three", 3), ("fixed-b", "  four\nfive ", 2), ("fixed-c", "", 0),
            ("fixed-d", " \t\n ", 0), ("fixed-e", "x\ty\t\tz-z, w.", 4)]
    for i in range(n - len(docs)):
        k = int(rng.integers(0, 40))
        text = SEPARATORS[i % len(SEPARATORS)]  # leading whitespace
        for j in range(k):
            text += f"w{j}" + SEPARATORS[int(rng.integers(len(SEPARATORS)))]
        docs.append((f"fd-{i:03d}", text, k))
    return docs


@pytest.fixture
def fake_irds(monkeypatch, tmp_path):
    """A fake ``ir_datasets`` module whose only dataset, 'fake/x', may be iterated once."""
    docs = _fake_docs()
    dataset = FakeDataset(docs=[(d, t, {"title": d, "body": t}) for d, t, _ in docs], docs_once=True, name="fake/x")
    FakeIrDatasets({"fake/x": dataset}).install(monkeypatch)
    monkeypatch.setenv("IRMEASURES_MARKOV_CACHE", str(tmp_path))

    def clear_caches():
        for f in (getattr(lengths_module, "_irds_cached", None),):
            if hasattr(f, "cache_clear"):
                f.cache_clear()

    clear_caches()
    yield types.SimpleNamespace(words={d: float(k) for d, _, k in docs}, iterations=dataset.docs_iterations,
                                cache=tmp_path / "lengths" / "fake__x.tsv.gz")
    clear_caches()


def test_irds_lengths_are_counted_once_and_read_back_from_the_cache(fake_irds):
    first = lengths_from_ir_datasets("fake/x", progress=False)
    assert first == fake_irds.words
    assert fake_irds.cache.exists() and len(fake_irds.iterations) == 1
    assert lengths_from_ir_datasets("fake/x", progress=False) == fake_irds.words
    # the second call reads the file: a changed cache shows through
    with gzip.open(fake_irds.cache, "wt") as fh:
        fh.write("fixed-a\t17\nfd-000\t2.5\n")
    assert lengths_from_ir_datasets("fake/x", progress=False) == {"fixed-a": 17.0, "fd-000": 2.5}
    assert len(fake_irds.iterations) == 1


def test_irds_field_counts_and_an_explicit_cache_dir_get_their_own_files(fake_irds, tmp_path):
    # counts of other fields are other data: not the default text's counts, and a file of their own
    fake_irds.iterations.clear()
    fields = lengths_from_ir_datasets("fake/x", progress=True, text_fields=["title", "body"],
                                      cache_dir=tmp_path / "elsewhere")
    assert fields == {d: 1.0 + k for d, k in fake_irds.words.items()}
    assert (tmp_path / "elsewhere" / "fake__x.fields-title+body.tsv.gz").exists()


def test_tbg_with_irds_lengths_equals_brute_force(fake_irds):
    words = fake_irds.words
    docids = sorted(words)
    rng = np.random.default_rng(8)
    run = {q: {d: float(rng.integers(0, 30)) for d in docids} for q in ("q1", "q2")}
    qrels = {q: {d: int(rng.random() < 0.3) for d in docids} for q in run}
    m = ir_measures.parse_measure("TBG(lengths='irds:fake/x')")
    for _ in range(2):  # the second evaluation reuses the counts
        assert_close(per_query(m, qrels, run), brute_run_tbg(qrels, run, words))
    assert fake_irds.cache.exists() and len(fake_irds.iterations) == 1


# --------------------------------------------------------------------------- 5. a fixed large case

def test_fixed_run_of_200_documents_equals_brute_force():
    qrels, run, lengths = collection(5, n_queries=3, n_retrieved=75, grades=(0, 1, 2), n_unjudged=10,
                                     n_unretrieved=2)
    assert sum(map(len, run.values())) >= 200
    name = imm.register_lengths("paths-fixed", lengths)
    # the table is built once lookups add up to the mapping's size: the dict answers the first pass
    # (rel=1), the table the second and third
    for rel in (1, 2, 1):
        got = per_query(imm.TBG(lengths=name, rel=rel), qrels, run)
        want = brute_run_tbg(qrels, run, lengths, rel=rel)
        assert all(v > 0 for v in want.values())
        assert_close(got, want)
    assert_vectorised(name)


# --------------------------------------------------------------------------- 6, 7. doctests, validation

@pytest.mark.parametrize("module", [tbg_module, time_model_module], ids=lambda m: m.__name__)
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_negative_seconds_per_word_is_refused():
    with pytest.raises(ValueError, match=r"TBG: a must be >= 0, got -1"):
        imm.PROVIDER.calc_aggregate([imm.TBG(a=-1)], {"q": {"d": 1}}, {"q": {"d": 1.0}})
