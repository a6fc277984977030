"""Tie orders and unjudged documents for the standard measures (measures.standard), issue 26.

Every check is against something computed another way: the mean over every order of every tie group
(itertools.permutations, each order evaluated by the default native path on a run whose scores put the
documents in that order), explicitly reordered runs, explicitly modified qrels, and trec_eval-like
per-query formulas written here.
"""
from __future__ import annotations

import itertools
import math
import random

import ir_measures
import numpy as np
import pytest

from irmeasures_markov.experiments import evaluate
from irmeasures_markov.measures import standard_measure, standard_values
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

MEASURES = ["AP", "AP(rel=2)", "AP@5", "P@1", "P@3", "P(rel=2)@5", "RR", "RR@3", "RR(rel=2)", "nDCG", "nDCG@3",
            "Rprec", "Bpref", "Bpref(rel=2)", "RBP(rel=1,p=0.8)", "RBP(rel=2,p=0.5)", "R@3", "R(rel=2)@5",
            "Success@1", "Success@4", "Success(rel=2)@3", "SetP", "SetP(relative=True)", "SetR", "SetF(beta=2.0)",
            "NumRet", "NumRet(rel=2)", "NumRel"]
#: not monotone in moving a higher grade up (Judged@k), or without ties='expected' (IPrec@r)
OTHERS = ["Judged@3", "Judged", "IPrec@0.3", "IPrec(rel=2)@0.6"]
MAX_ORDERS = 2000


def _trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, docid descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def _groups(docs: dict[str, float]) -> list[list[str]]:
    """The tie groups of a query's ranking, in rank order, each in trec_eval order."""
    out: list[list[str]] = []
    last = None
    for d in _trec_order(docs):
        if out and docs[d] == last:
            out[-1].append(d)
        else:
            out.append([d])
        last = docs[d]
    return out


def _case(seed: int, n_queries: int = 4, grades=(0, 1, 1, 2)):
    """A run with heavy ties (scores from 2-4 values, 3-12 documents per query), grades 0-2 and unjudged."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for k in range(n_queries):
        q = f"q{k}"
        while True:
            values = rng.sample([0.25, 0.5, 1.0, 2.0, 3.5], rng.randint(2, 4))
            n = rng.randint(3, 12)
            docs = {f"d{j:02d}": rng.choice(values) for j in rng.sample(range(40), n)}
            if math.prod(math.factorial(len(g)) for g in _groups(docs)) <= MAX_ORDERS:
                break
        judged = {d: rng.choice(grades) for d in docs if rng.random() < 0.7}
        for j in range(rng.randint(0, 3)):     # judged, not retrieved
            judged[f"x{j}"] = rng.choice([0, 1, 2])
        if not judged:
            judged["x9"] = 1
        qrels[q], run[q] = judged, docs
    return qrels, run


def _explicit_run(orders: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """A run without ties whose trec_eval order is ``orders``."""
    return {q: {d: float(len(o) - i) for i, d in enumerate(o)} for q, o in orders.items()}


def _default(measure: str, qrels, run) -> dict[str, float]:
    """The default native path (trec_eval order, unjudged non-relevant), per query."""
    m = ir_measures.parse_measure(measure)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    return dict(zip(prepared.qids, standard_values(standard_measure(m), prepared).tolist(), strict=True))


def _variant(measure: str, qrels, run, **kw) -> dict[str, float]:
    m = ir_measures.parse_measure(measure)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    return dict(zip(prepared.qids, standard_values(standard_measure(m), prepared, **kw).tolist(), strict=True))


def _filled_qrels(qrels, run):
    """Every unjudged retrieved document judged at max(1, the query's highest judged grade)."""
    out = {}
    for q, judged in qrels.items():
        fill = max(1, max(judged.values()))
        out[q] = {**judged, **{d: fill for d in run.get(q, {}) if d not in judged}}
    return out


def _dropped_run(qrels, run):
    return {q: {d: s for d, s in docs.items() if d in qrels.get(q, {})} for q, docs in run.items()}


def _brute_orders(measure: str, qrels, run) -> dict[str, tuple[float, float, float]]:
    """(mean, min, max) over every order of every tie group, each order evaluated by the default path."""
    out = {}
    for q, docs in run.items():
        if not docs:
            continue
        orders = [list(itertools.chain.from_iterable(p))
                  for p in itertools.product(*(itertools.permutations(g) for g in _groups(docs)))]
        virtual_run = _explicit_run({f"{q}#{j}": o for j, o in enumerate(orders)})
        values = _default(measure, {v: qrels[q] for v in virtual_run}, virtual_run)
        out[q] = (math.fsum(values.values()) / len(orders), min(values.values()), max(values.values()))
    return out


def _brute_expected(measure: str, qrels, run) -> dict[str, float]:
    """Mean over every order of every tie group."""
    return {q: v[0] for q, v in _brute_orders(measure, qrels, run).items()}


def _reordered(qrels, run, ties: str) -> dict[str, dict[str, float]]:
    """The run whose order is each tie group sorted by grade (unjudged, a negative grade too, as 0), stably."""
    orders = {}
    for q, docs in run.items():
        sign = -1 if ties == "optimistic" else 1
        orders[q] = [d for g in _groups(docs) for d in sorted(g, key=lambda d: sign * max(qrels[q].get(d, 0), 0))]
    return _explicit_run(orders)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("unjudged", ["nonrel", "drop", "rel"])
def test_expected_is_the_mean_over_every_tie_order(seed, unjudged):
    qrels, run = _case(seed)
    bq, brun = qrels, run
    if unjudged == "rel":
        bq = _filled_qrels(qrels, run)
    elif unjudged == "drop":
        brun = _dropped_run(qrels, run)
    for measure in MEASURES:
        got = _variant(measure, qrels, run, ties="expected", unjudged=unjudged)
        best = _variant(measure, qrels, run, ties="optimistic", unjudged=unjudged)
        worst = _variant(measure, qrels, run, ties="pessimistic", unjudged=unjudged)
        want = _brute_orders(measure, bq, brun)
        assert got.keys() == want.keys()
        for q in got:
            mean, lo, hi = want[q]
            assert got[q] == pytest.approx(mean, abs=1e-12, rel=0), (measure, unjudged, q)
            # these measures are monotone in moving a higher grade up: the two orders are the bounds
            assert (worst[q], best[q]) == pytest.approx((lo, hi), abs=1e-12, rel=0), (measure, unjudged, q)
    for measure in OTHERS[:2]:
        got = _variant(measure, qrels, run, ties="expected", unjudged=unjudged)
        assert got == pytest.approx(_brute_expected(measure, bq, brun), abs=1e-12, rel=0), (measure, unjudged)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", ["optimistic", "pessimistic", "docid"])
@pytest.mark.parametrize("unjudged", ["nonrel", "drop", "rel"])
def test_orders_equal_the_explicitly_reordered_run_bit_for_bit(seed, ties, unjudged):
    qrels, run = _case(100 + seed)
    bq, brun = qrels, run
    if unjudged == "rel":
        bq = _filled_qrels(qrels, run)
    elif unjudged == "drop":
        brun = _dropped_run(qrels, run)
    explicit = brun if ties == "docid" else _reordered(bq, brun, ties)
    for measure in MEASURES + OTHERS:
        got = _variant(measure, qrels, run, ties=ties, unjudged=unjudged)
        want = _default(measure, bq, explicit)
        assert got == want, (measure, ties, unjudged)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["docid", "optimistic", "expected"])
def test_residual_is_filled_minus_default_qrels(seed, ties):
    qrels, run = _case(200 + seed)
    filled = _filled_qrels(qrels, run)
    for measure in MEASURES:
        got = _variant(measure, qrels, run, ties=ties, residual=True)
        if measure.startswith(("P", "RR", "RBP")):   # monotone in relevance (docs/ties-and-holes.md)
            assert min(got.values()) >= -1e-15, measure
        if ties == "expected":
            hi, lo = _brute_expected(measure, filled, run), _brute_expected(measure, qrels, run)
            for q in got:
                assert got[q] == pytest.approx(hi[q] - lo[q], abs=1e-12, rel=0), (measure, q)
        else:
            hi = _default(measure, filled, run if ties == "docid" else _reordered(filled, run, ties))
            lo = _default(measure, qrels, run if ties == "docid" else _reordered(qrels, run, ties))
            assert got == {q: hi[q] - lo[q] for q in got}, measure


def test_no_ties_and_no_holes_leave_every_value_unchanged():
    """Variant paths on a run without ties or unjudged documents give the default values bit for bit."""
    qrels, run = _case(7)
    orders = {q: _trec_order(d) for q, d in run.items()}
    run = _explicit_run(orders)
    qrels = _filled_qrels(qrels, run)
    for measure in MEASURES:
        want = _default(measure, qrels, run)
        for ties in ("docid", "optimistic", "pessimistic"):
            for unjudged in ("nonrel", "drop", "rel"):
                assert _variant(measure, qrels, run, ties=ties, unjudged=unjudged) == want, (measure, ties, unjudged)
        expected = _variant(measure, qrels, run, ties="expected")
        assert all(expected[q] == pytest.approx(want[q], abs=1e-13, rel=0) for q in want), measure


def _trec_like(measure: str, judged: dict[str, int], ranking: list[str]) -> float:
    """AP, P@k, RR and nDCG(@k) of one ranking, written from trec_eval's definitions (rel = 1)."""
    m = ir_measures.parse_measure(measure)
    k = m.params.get("cutoff")
    top = ranking[:k] if k else ranking
    rel = [judged.get(d, 0) >= 1 for d in top]
    if m.NAME == "P":
        return sum(rel) / k
    if m.NAME == "RR":
        return next((1.0 / (i + 1) for i, r in enumerate(rel) if r), 0.0)
    if m.NAME == "AP":
        R = sum(g >= 1 for g in judged.values())
        hits, total = 0, 0.0
        for i, r in enumerate(rel):
            if r:
                hits += 1
                total += hits / (i + 1)
        return total / R if R else 0.0
    gains = [max(judged.get(d, 0), 0) for d in top]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal_g = sorted((g for g in judged.values() if g > 0), reverse=True)[:k] if k else \
        sorted((g for g in judged.values() if g > 0), reverse=True)
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_g))
    return dcg / ideal if ideal else 0.0


@pytest.mark.parametrize("seed", range(4))
def test_default_and_expected_against_trec_like_brute_force(seed):
    qrels, run = _case(300 + seed)
    for measure in ["AP", "P@3", "P@5", "RR", "nDCG", "nDCG@3"]:
        got = _default(measure, qrels, run)
        for q, docs in run.items():
            assert got[q] == pytest.approx(_trec_like(measure, qrels[q], _trec_order(docs)), abs=1e-12)
        # 'expected' against the same formulas averaged over every order
        exp = _variant(measure, qrels, run, ties="expected")
        for q, docs in run.items():
            orders = [list(itertools.chain.from_iterable(p))
                      for p in itertools.product(*(itertools.permutations(g) for g in _groups(docs)))]
            mean = math.fsum(_trec_like(measure, qrels[q], o) for o in orders) / len(orders)
            assert exp[q] == pytest.approx(mean, abs=1e-12, rel=0), (measure, q)


def test_large_tie_group_rr_stays_a_probability_mean():
    """One group of 300 documents, 3 relevant: E[RR] from the closed form against the exact sum in fractions."""
    from fractions import Fraction
    docs = {f"d{i:03d}": 1.0 for i in range(300)}
    qrels = {"q": {"d010": 1, "d200": 1, "d299": 1}}
    got = _variant("RR", qrels, {"q": docs}, ties="expected")["q"]
    n, r = 300, 3
    want = sum(Fraction(math.comb(n - i, r - 1), math.comb(n, r)) / i for i in range(1, n - r + 2))
    assert got == pytest.approx(float(want), rel=1e-11)


def _runs_and_qrels():
    qrels, run = _case(400)
    _, run2 = _case(401)
    run2 = {q: run2[q] for q in run2}
    return qrels, {"a": run, "b": run2}


def test_evaluate_defaults_unchanged_and_settings_apply_to_native_measures():
    qrels, runs = _runs_and_qrels()
    measures = ["AP", "P@5", "RR", "nDCG@3", "Bpref"]
    base = evaluate(measures, qrels, runs)
    same = evaluate(measures, qrels, runs, ties="docid", unjudged="nonrel", residual=False)
    assert np.array_equal(base.values, same.values) and base.labels == same.labels
    opt = evaluate(measures, qrels, runs, ties="optimistic")
    explicit = evaluate(measures, qrels, {n: _reordered(qrels, r, "optimistic") for n, r in runs.items()})
    assert np.array_equal(opt.values, explicit.values)
    assert opt.labels == ["AP(ties='optimistic')", "P(ties='optimistic')@5", "RR(ties='optimistic')",
                          "nDCG(ties='optimistic')@3", "Bpref(ties='optimistic')"]
    assert opt.column("AP").tolist() == opt.column("AP(ties='optimistic')").tolist()
    res = evaluate(["AP"], qrels, runs, residual=True)
    hi = evaluate(["AP"], {q: j for q, j in _filled_qrels(qrels, runs["a"]).items()}, {"a": runs["a"]})
    assert res.values[0, 0].tolist() == (hi.values[0, 0] - base.values[0, 0]).tolist()
    assert res.labels == ["AP(residual=True)"]


def test_evaluate_refuses_settings_a_measure_does_not_have():
    qrels, runs = _runs_and_qrels()
    with pytest.raises(ValueError, match=r"ERR@10.*ties='expected'"):
        evaluate(["AP", "ERR@10"], qrels, runs, ties="expected")
    with pytest.raises(ValueError, match="AP"):
        evaluate(["AP"], qrels, runs, unjudged="range")
    with pytest.raises(ValueError, match="ties"):
        evaluate(["AP"], qrels, runs, ties="random")
    with pytest.raises(ValueError, match="residual"):
        evaluate(["AP"], qrels, runs, unjudged="rel", residual=True)
    with pytest.raises(ValueError, match="native"):
        evaluate(["AP"], qrels, runs, ties="expected", native=False)


def _family_values(measure: str, qrels, run):
    """Per-topic values and extras of one family measure through the ir_measures provider's evaluator."""
    from irmeasures_markov.plugin import MarkovEvaluator
    m = ir_measures.parse_measure(measure)
    values, extras = MarkovEvaluator([m], qrels).values_with_extras(run)
    return values[m], extras[m]


def test_evaluate_rewrites_family_measures_and_adds_their_extras_as_columns():
    qrels, runs = _runs_and_qrels()
    ev = evaluate(["MP", "M1(ties='pessimistic')", "AP", "TBG(default_length=50)@5"], qrels, runs, ties="expected")
    assert ev.labels == ["MP(ties='expected')", "M1(ties='pessimistic')", "AP(ties='expected')",
                         "TBG(default_length=50.0,ties='expected')@5", "MP(ties='expected')_se",
                         "TBG(default_length=50.0,ties='expected')@5_se"]
    assert ev.extras == {4: (0, "se"), 5: (3, "se")}
    assert ev.measures[4] is ev.measures[0] and ev.measure_index(ev.measures[0]) == 0
    for j, label in [(0, "MP(ties='expected')"), (1, "M1(ties='pessimistic')"),
                     (3, "TBG(default_length=50.0,ties='expected')@5")]:
        for i, name in enumerate(ev.runs):
            values, extras = _family_values(label, qrels, runs[name])
            assert ev.values[i, j].tolist() == [values.get(t, 0.0) for t in ev.topics], label
            if "se" in extras:
                se_col = next(c for c, (k, _) in ev.extras.items() if k == j)
                assert ev.values[i, se_col].tolist() == [extras["se"].get(t, 0.0) for t in ev.topics]


def test_evaluate_family_orders_equal_the_explicitly_reordered_run():
    """Before issue 26, evaluate computed MP(ties='optimistic') as plain MP (the parameter was ignored)."""
    qrels, runs = _runs_and_qrels()
    default = evaluate(["MP", "M2", "AP"], qrels, runs).values
    for ties in ("optimistic", "pessimistic"):
        ev = evaluate(["MP", "M2", "AP"], qrels, runs, ties=ties)
        explicit = evaluate(["MP", "M2", "AP"], qrels, {n: _reordered(qrels, r, ties) for n, r in runs.items()})
        assert np.array_equal(ev.values, explicit.values), ties
        if ties == "optimistic":
            assert not np.array_equal(ev.values[:, :2], default[:, :2])


def test_evaluate_range_gives_lo_and_hi_columns():
    qrels, runs = _runs_and_qrels()
    ev = evaluate(["MP", "M1(unjudged='nonrel')"], qrels, runs, unjudged="range")
    assert ev.labels == ["MP(unjudged='range')", "M1", "MP(unjudged='range')_lo", "MP(unjudged='range')_hi"]
    lo, hi = ev.values[:, 2], ev.values[:, 3]
    assert np.all(lo <= hi) and np.allclose(ev.values[:, 0], hi - lo, rtol=0, atol=1e-15)
    values, extras = _family_values("MP(unjudged='range')", qrels, runs["a"])
    assert lo[0].tolist() == [extras["lo"].get(t, 0.0) for t in ev.topics]


def test_residual_is_negative_where_a_filled_document_raises_the_normaliser():
    """One relevant document at rank 1, one unjudged at rank 4 (docs/ties-and-holes.md)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    got = {m: _variant(m, qrels, run, residual=True)["q"] for m in ["AP", "Rprec", "Bpref", "nDCG", "P@4", "RR"]}
    assert got["AP"] == (1.0 + 2.0 / 4.0) / 2.0 - 1.0
    assert got["Rprec"] == -0.5 and got["Bpref"] == -0.5
    assert got["nDCG"] == pytest.approx((1.0 + 1.0 / math.log2(5.0)) / (1.0 + 1.0 / math.log2(3.0)) - 1.0, abs=1e-15)
    assert got["P@4"] == 0.25 and got["RR"] == 0.0


def test_evaluate_settings_in_worker_processes():
    qrels, runs = _runs_and_qrels()
    runs = {f"{n}{k}": r for k in range(2) for n, r in runs.items()}
    measures = ["MP", "AP", "nDCG@3"]
    one = evaluate(measures, qrels, runs, ties="expected")
    two = evaluate(measures, qrels, runs, ties="expected", n_jobs=2)
    assert np.array_equal(one.values, two.values) and one.labels == two.labels and one.extras == two.extras


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("unjudged", ["nonrel", "drop", "rel"])
def test_negative_grades(seed, unjudged):
    """Judged grades below 0 (bpref's "in the pool, unjudged"; non-relevant, gain 0, for the others): unjudged
    for 'drop' and 'rel' (trec_eval's -J), like a document absent from the qrels."""
    qrels, run = _case(500 + seed, grades=(-1, 0, 1, 2))
    absent = {q: {d: g for d, g in judged.items() if g >= 0} for q, judged in qrels.items()}
    bq = _filled_qrels(absent, run) if unjudged == "rel" else qrels
    brun = _dropped_run(absent, run) if unjudged == "drop" else run
    for measure in MEASURES:
        got = _variant(measure, qrels, run, ties="expected", unjudged=unjudged)
        want = _brute_expected(measure, bq, brun)
        assert all(got[q] == pytest.approx(want[q], abs=1e-12, rel=0) for q in got), measure
        for ties in ("optimistic", "pessimistic"):
            assert _variant(measure, qrels, run, ties=ties, unjudged=unjudged) == \
                _default(measure, bq, _reordered(bq, brun, ties)), (measure, ties)
