"""MP and MPcont through ir_measures: registration, parsing, per-query values, identities."""
import importlib
import warnings
from pathlib import Path

import ir_measures
import numpy as np
import pytest
import pytrec_eval

import irmeasures_markov
from irmeasures_markov import MP, PROVIDER, MPcont, markov_precision


def synthetic(seed=0, n_queries=12, n_docs=60):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(n_docs)]
        grades = rng.choice([0, 1, 2], size=n_docs, p=[0.6, 0.3, 0.1])
        qrels[qid] = {d: int(g) for d, g in zip(docs, grades) if rng.random() < 0.7}
        k = int(rng.integers(1, n_docs))
        chosen = rng.choice(n_docs, size=k, replace=False)
        # coarse scores create ties, resolved by docid descending (trec_eval)
        run[qid] = {docs[i]: float(np.round(rng.normal() + grades[i], 1)) for i in chosen}
    qrels["only_in_qrels"] = {"x": 1}
    run["only_in_run"] = {"y": 1.0}
    return qrels, run


def trec_order(doc_scores):
    return sorted(doc_scores, key=lambda d: (doc_scores[d], d), reverse=True)


def test_registered_and_parsed():
    assert ir_measures.parse_measure("MP") == MP
    assert ir_measures.parse_measure("MP(model='GL_AD_ID',recall=False)") == MP
    assert str(MP(model="GL_AD_ID", recall=False)) == "MP"
    assert str(MP(model="gl_ad_lid", recall=True) @ 100) == "MP(model='GL_AD_LID',recall=True)@100"
    m = ir_measures.parse_measure("MP(model='LO_OR_ID')@10")
    assert m == MP(model="LO_OR_ID") @ 10
    assert ir_measures.parse_measure("MPcont(rates='x.tsv')") == MPcont(rates="x.tsv")


def test_provider_registration_is_idempotent():
    before = sum(p is PROVIDER for p in ir_measures.DefaultPipeline.providers)
    importlib.reload(importlib.import_module("irmeasures_markov.plugin"))
    importlib.reload(irmeasures_markov)
    after = sum(getattr(p, "NAME", None) == PROVIDER.NAME for p in ir_measures.DefaultPipeline.providers)
    assert before == 1 and after == 1


def test_calc_aggregate_alongside_pytrec_eval_measures():
    qrels, run = synthetic()
    res = ir_measures.calc_aggregate([MP, MP(model="GL_AD_LID", recall=True) @ 100,
                                      ir_measures.parse_measure("MP(model='LO_OR_ID')"), ir_measures.AP], qrels, run)
    assert set(res) == {MP, MP(model="GL_AD_LID", recall=True) @ 100, MP(model="LO_OR_ID"), ir_measures.AP}
    assert all(0 <= v <= 1 for v in res.values())


@pytest.mark.parametrize("model", ["GL_AD_ID", "GL_OR_LID", "LO_AD_ID", "LO_OR_LID", "UNIFORM"])
@pytest.mark.parametrize("recall", [False, True])
@pytest.mark.parametrize("cutoff", [None, 5])
def test_per_query_equals_functional_api(model, recall, cutoff):
    qrels, run = synthetic(1)
    measure = MP(model=model, recall=recall)
    if cutoff:
        measure = measure @ cutoff
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    assert set(got) == set(qrels)  # every qrels query, missing ones with 0
    assert got["only_in_qrels"] == 0.0
    for qid, docs in run.items():
        if qid not in qrels:
            continue
        ranked = trec_order(docs)[:cutoff]
        rel = [qrels[qid].get(d, 0) >= 1 for d in ranked]
        rb = sum(g >= 1 for g in qrels[qid].values())
        want = markov_precision(rel, model, recall_base=rb if recall else None)
        assert got[qid] == pytest.approx(want, abs=1e-14)


def test_uniform_recall_equals_pytrec_eval_ap():
    for seed in range(5):
        qrels, run = synthetic(seed)
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        ap = {q: v["map"] for q, v in ev.evaluate(run).items()}
        got = {m.query_id: m.value for m in ir_measures.iter_calc([MP(model="UNIFORM", recall=True)], qrels, run)}
        for q, v in ap.items():
            # pytrec_eval stores scores as float32-rounded doubles; the synthetic scores are exact in both
            assert got[q] == pytest.approx(v, abs=1e-12)


def test_rel_and_judged_only():
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 1.0, "u": 3.0, "b": 2.0, "c": 0.5}}  # u is unjudged
    val = lambda m: ir_measures.calc_aggregate([m], qrels, run)[m]  # noqa: E731
    assert val(MP(model="UNIFORM")) == pytest.approx(markov_precision([0, 1, 1, 0], "UNIFORM"))
    assert val(MP(model="UNIFORM", judged_only=True)) == pytest.approx(markov_precision([1, 1, 0], "UNIFORM"))
    assert val(MP(model="UNIFORM", rel=2)) == pytest.approx(markov_precision([0, 0, 1, 0], "UNIFORM"))


def test_ties_follow_trec_eval_order():
    qrels = {"q": {"b": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}  # trec_eval order: c, b, a
    assert MP(model="UNIFORM").calc_aggregate(qrels, run) == pytest.approx(0.5)


def test_float64_scores_are_not_rounded():
    qrels = {"q": {"a": 1}}
    # equal in float32, distinct in float64: 'a' must rank first
    run = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert MP(model="UNIFORM").calc_aggregate(qrels, run) == 1.0


def test_recall_base_zero_warns_and_scores_zero():
    qrels = {"q": {"a": 0}, "r": {"a": 1}}
    run = {"q": {"a": 1.0}, "r": {"a": 1.0}}
    with pytest.warns(RuntimeWarning, match="no document with grade >= 1.*q"):
        res = {m.query_id: m.value for m in MP(recall=True).iter_calc(qrels, run)}
    assert res == {"q": 0.0, "r": 1.0}


def test_mpcont_rates_file(tmp_path):
    path = tmp_path / "rates.tsv"
    path.write_text("# rank\tmu\n1\t0.2\n2\t0.0357\n3\t0.2\n4\t0.04\n5\t0.0056\n6\t0.0005\n7\t0.0035\n"
                    "8\t0.0017\n9\t0.0034\n10\t0.0024\n")
    rel = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    docs = [f"d{i}" for i in range(10)]
    qrels = {"q": {d: r for d, r in zip(docs, rel)}}
    run = {"q": {d: 10.0 - i for i, d in enumerate(docs)}}
    m = ir_measures.parse_measure(f"MPcont(rates='{path}')")
    assert abs(m.calc_aggregate(qrels, run) - 0.6603) < 5e-4
    # per-query rates
    path2 = tmp_path / "rates_q.tsv"
    path2.write_text("".join(f"q\t{k}\t1.0\n" for k in range(1, 11)))
    assert MPcont(rates=str(path2)).calc_aggregate(qrels, run) == pytest.approx(MP.calc_aggregate(qrels, run))
    # too few rates for the ranking: clear error suggesting a cutoff
    run_long = {"q": {**run["q"], "extra": -1.0}}
    with pytest.raises(ValueError, match="every rank needs a rate.*MPcont@10"):
        m.calc_aggregate(qrels, run_long)
    assert abs((m @ 10).calc_aggregate(qrels, run_long) - 0.6603) < 5e-4


@pytest.mark.parametrize("content,msg", [
    ("1\t0.2\n2\t0\n", r"rates.tsv:2: rate must be positive"),
    ("1\t0.2\n2\t-1\n", r"rates.tsv:2: rate must be positive"),
    ("1\t0.2\n2\tabc\n", r"rates.tsv:2: rate 'abc' is not a number"),
    ("1\t0.2\n3\t0.1\n", r"no rate for rank 2"),
    ("1\t0.2\n1\t0.1\n", r"rates.tsv:2: rank 1 given twice"),
    ("1\t0.2\tx\tz\n", r"rates.tsv:1: expected 'rank<TAB>mu'"),
    ("1\tinf\n", r"rates.tsv:1: rate 'inf' is not finite"),
])
def test_mpcont_bad_rates_file(tmp_path, content, msg):
    path = tmp_path / "rates.tsv"
    path.write_text(content)
    with pytest.raises(ValueError, match=msg):
        MPcont(rates=str(path)).calc_aggregate({"q": {"a": 1}}, {"q": {"a": 1.0}})


@pytest.mark.parametrize("spec,msg", [
    ("MP(model='GL_XX_ID')", "model.*not one of"),
    ("MP(recall=1)", "recall.*must be bool"),
    ("MP@0", "cutoff must be a positive integer"),
    ("MPcont", "MPcont needs holding rates"),
])
def test_bad_parameters(spec, msg):
    m = ir_measures.parse_measure(spec)
    with pytest.raises(ValueError, match=msg):
        ir_measures.calc_aggregate([m], {"q": {"a": 1}}, {"q": {"a": 1.0}})


def test_unknown_parameter():
    with pytest.raises(ValueError, match=r"MP: unknown parameter\(s\) \['foo'\]"):
        ir_measures.parse_measure("MP(foo=1)")


def test_bad_scores_and_duplicates():
    with pytest.raises(ValueError, match="query 'q': document 'a' has a non-finite score"):
        MP.calc_aggregate({"q": {"a": 1}}, {"q": {"a": float("nan")}})
    with pytest.raises(ValueError, match="non-finite"):
        MP.calc_aggregate({"q": {"a": 1}}, {"q": {"a": float("inf"), "b": 1.0}})
    dup = [ir_measures.ScoredDoc("q", "a", 1.0), ir_measures.ScoredDoc("q", "a", 2.0)]
    with pytest.raises(ValueError, match="document 'a' appears twice for query 'q'"):
        PROVIDER.calc_aggregate([MP], {"q": {"a": 1}}, dup)


def test_provider_direct_and_dataframe_inputs():
    import pandas as pd
    qrels, run = synthetic(3)
    qdf = pd.DataFrame([(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
                       columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([(q, d, s) for q, ds in run.items() for d, s in ds.items()],
                       columns=["query_id", "doc_id", "score"])
    a = PROVIDER.calc_aggregate([MP], qrels, run)[MP]
    b = PROVIDER.calc_aggregate([MP], qdf, rdf)[MP]
    c = ir_measures.calc_aggregate([MP], qdf, rdf)[MP]
    assert a == pytest.approx(b) and a == pytest.approx(c)


def test_empty_run_gives_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = list(ir_measures.iter_calc([MP], {"q": {"a": 1}}, {}))
    assert [(m.query_id, m.value) for m in res] == [("q", 0.0)]


def test_trec_order_with_many_tie_groups():
    from irmeasures_markov.ranking._order import rank_documents
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        docs = {f"d{int(x)}": float(rng.integers(0, 6)) for x in rng.choice(10**6, size=n, replace=False)}
        docids, scores = rank_documents(docs)
        assert docids == trec_order(docs)
        assert list(scores) == [docs[d] for d in docids]


def test_registered_custom_kernel_in_measure_strings():
    rng = np.random.default_rng(2)
    W = rng.random((80, 80)) + 0.01
    name = irmeasures_markov.register_kernel("test_asym", W)
    assert name == "TEST_ASYM"
    qrels, run = synthetic(4, n_docs=80)
    m = ir_measures.parse_measure("MP(model='test_asym',recall=True)")
    assert str(m) == "MP(model='TEST_ASYM',recall=True)"
    got = {x.query_id: x.value for x in m.iter_calc(qrels, run)}
    for qid, docs in run.items():
        if qid in qrels:
            rel = [qrels[qid].get(d, 0) >= 1 for d in trec_order(docs)]
            rb = sum(g >= 1 for g in qrels[qid].values())
            assert got[qid] == pytest.approx(markov_precision(rel, W, recall_base=rb), abs=1e-14)
    # a symmetric registered kernel equal to ID reproduces GL_OR_ID
    irmeasures_markov.register_kernel("id_or", lambda i, j: 1 / (abs(i - j) + 1), states="OR")
    a = MP(model="ID_OR").calc_aggregate(qrels, run)
    b = MP(model="GL_OR_ID").calc_aggregate(qrels, run)
    assert a == pytest.approx(b, abs=1e-14)
    with pytest.raises(ValueError, match="paper model name"):
        irmeasures_markov.register_kernel("GL_AD_ID", W)


def readme_block(heading):
    """The first python code block after ``heading`` in README.md."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rest = text[text.index(heading):]
    start = rest.index("```python\n") + len("```python\n")
    return rest[start:rest.index("```", start)]


def test_readme_ir_measures_example_prints_every_query(tmp_path, monkeypatch, capsys):
    data = Path(irmeasures_markov.__file__).parent / "data"
    (tmp_path / "qrels.txt").write_text((data / "sample.qrels").read_text())
    (tmp_path / "run.txt").write_text((data / "sample.run").read_text())
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(readme_block("### ir_measures"), "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    qids = {line.split()[0] for line in (data / "sample.qrels").read_text().splitlines() if line.strip()}
    # the per-query loop runs after calc_aggregate: with one-shot readers it would print nothing
    assert {line.split()[0] for line in lines} == qids
    assert len(lines) == len(qids)


class TestCustomKernelErrorsNameTheQuery:
    QRELS = {"q1": {"a": 1, "b": 1, "c": 0, "d": 1}, "q2": {"a": 1}}
    RUN = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q2": {"a": 1.0}}

    def calc(self, kernel, **kw):
        name = irmeasures_markov.register_kernel("test_errors_kernel", kernel, **kw)
        return MP(model=name).calc_aggregate(self.QRELS, self.RUN)

    def test_not_irreducible(self):
        W = np.zeros((4, 4))
        W[0, 1] = W[1, 0] = W[2, 3] = W[3, 2] = 1
        with pytest.raises(ValueError, match=r"model 'TEST_ERRORS_KERNEL', query 'q1'.*not irreducible"):
            self.calc(W)
        W2 = W + np.triu(np.ones((4, 4)), 1)  # non-symmetric: the general solver's check
        W2[0, 1] = W2[1, 0] = 0
        with pytest.raises(ValueError, match=r"query 'q1'.*(not irreducible|no outgoing weight)"):
            self.calc(W2)

    def test_matrix_too_small(self):
        with pytest.raises(ValueError, match=r"query 'q1'.*covers ranks 1\.\.2 but the ranking has 4 documents"):
            self.calc(np.ones((2, 2)))

    @pytest.mark.parametrize("kernel", [lambda i, j: np.ones(3), lambda i, j: np.ones((i.size + 1, j.size))])
    def test_function_wrong_shape(self, kernel):
        with pytest.raises(ValueError, match=r"query 'q1'.*returned an array of shape \((3,|5, 4)\); "
                                             r"expected shape \(4, 4\)"):
            self.calc(kernel)

    def test_mpcont_too(self):
        irmeasures_markov.register_kernel("test_errors_kernel", np.ones((2, 2)))
        irmeasures_markov.register_rates("test_errors_rates", [1.0] * 4)
        with pytest.raises(ValueError, match=r"query 'q1'.*covers ranks 1\.\.2"):
            MPcont(model="TEST_ERRORS_KERNEL", rates="test_errors_rates").calc_aggregate(self.QRELS, self.RUN)


class TestRegisteredRates:
    REL = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    MU = [0.2, 0.0357, 0.2, 0.04, 0.0056, 0.0005, 0.0035, 0.0017, 0.0034, 0.0024]
    DOCS = [f"d{i}" for i in range(10)]
    QRELS = {"q": dict(zip(DOCS, REL)), "r": {"d0": 1}}
    RUN = {"q": {d: 10.0 - i for i, d in enumerate(DOCS)}, "r": {"d1": 2.0, "d0": 1.0}}

    def values(self, name, cutoff=None):
        m = ir_measures.parse_measure(f"MPcont(rates='{name}')" + (f"@{cutoff}" if cutoff else ""))
        return {x.query_id: x.value for x in m.iter_calc(self.QRELS, self.RUN)}

    def test_sequence_mapping_and_per_query(self):
        want_q = markov_precision(self.REL, rates=self.MU)
        want_r = markov_precision([0, 1], rates=self.MU[:2])
        irmeasures_markov.register_rates("test_seq", self.MU)
        irmeasures_markov.register_rates("test_map", {k + 1: m for k, m in enumerate(self.MU)})
        for name in ("test_seq", "test_map"):
            got = self.values(name)
            assert got["q"] == pytest.approx(want_q, abs=1e-15) and got["r"] == pytest.approx(want_r, abs=1e-15)
        assert abs(want_q - 0.6603) < 5e-4  # paper Table 4, run 1
        irmeasures_markov.register_rates("test_perq", {"q": self.MU, "r": {1: 1.0, 2: 5.0}})
        got = self.values("test_perq")
        assert got["q"] == pytest.approx(want_q, abs=1e-15)
        assert got["r"] == pytest.approx(markov_precision([0, 1], rates=[1.0, 5.0]), abs=1e-15)

    def test_registered_name_wins_over_file(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "test_shadow").write_text("".join(f"{k}\t1.0\n" for k in range(1, 11)))
        irmeasures_markov.register_rates("test_shadow", self.MU)
        assert self.values("test_shadow")["q"] == pytest.approx(markov_precision(self.REL, rates=self.MU))

    def test_missing_rank_and_query(self):
        irmeasures_markov.register_rates("test_short", {k: 1.0 for k in range(1, 6)})
        with pytest.raises(ValueError, match=r"no rate for rank 6 of query 'q'"):
            self.values("test_short")
        assert self.values("test_short", cutoff=5)["q"] == pytest.approx(markov_precision(self.REL[:5]))
        irmeasures_markov.register_rates("test_perq_missing", {"q": self.MU})
        with pytest.raises(ValueError, match="no holding rates for query 'r'"):
            self.values("test_perq_missing")

    @pytest.mark.parametrize("rates,msg", [
        ([], "non-empty"),
        ([1.0, 0.0], "positive and finite; rank 2 has rate 0.0"),
        ([1.0, float("nan")], "positive and finite; rank 2"),
        ({1: 1.0, 2: -2.0}, "positive and finite; rank 2"),
        ({"q": [1.0, float("inf")]}, "rank 2 of query 'q'"),
        ({"q": {1: 1.0, 2: 0}}, "rank 2 of query 'q'"),
        ({0: 1.0}, "1-based integer ranks"),
        ({1: 1.0, "q": [1.0]}, "mixes numbers and sequences"),
        ("rates.tsv", "non-empty 1-D sequence"),
    ])
    def test_invalid_rates_rejected_at_registration(self, rates, msg):
        with pytest.raises(ValueError, match=msg):
            irmeasures_markov.register_rates("test_invalid", rates)

    def test_bad_name_and_unknown_name(self):
        with pytest.raises(ValueError, match="plain word"):
            irmeasures_markov.register_rates("dir/rates.tsv", [1.0])
        irmeasures_markov.register_rates("test_known", [1.0] * 10)
        with pytest.raises(FileNotFoundError, match=r"rates='test_nope' is neither.*register_rates.*test_known"):
            self.values("test_nope")
