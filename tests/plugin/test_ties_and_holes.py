"""Issue 26, tie orders: ``ties=`` of every family against brute force over every order of every tie group.

The expectations never go through the variant engine: tests/ties_brute.py evaluates the plain measure
(default path) on runs whose tie orders are made explicit by distinct scores. Covered, for MP (several
models), MPcont (rates per rank, and TBG's time model), PH (several browsing models and users, with
tail='none' and tail='inf'), TBG (registered lengths, default_length, norm='ideal') and M1-M4 (static
and dynamic distributions), each with and without a cutoff, rel=1 and rel=2, and judged_only:

* ``ties='expected'`` is the mean over all orders to 1e-12 per query (exact path, <= 2000 orders);
* ``ties='optimistic'``/``'pessimistic'`` equal the explicitly reordered run bit for bit;
* the Monte Carlo path (> 10**4 arrangements) is within 4 reported standard errors of the exact mean;
* defaults print and evaluate as before, and the strings parse;
* the bounds "optimistic >= every order >= pessimistic" hold where the family is monotone in moving a
  better grade up, and a counterexample is kept for each family where they do not.

The hole variants (unjudged=, residual=) are in test_ties_and_holes_unjudged.py.
"""
from __future__ import annotations

import math
from importlib import import_module

import ir_measures
import numpy as np
import pytest
from ties_brute import (
    all_orders,
    batched,
    brute_expected,
    brute_sorted,
    explicit_run,
    grade_arrangements,
    multiset_orders,
    n_arrangements,
    n_orders,
    per_order_values,
    plain,
    random_case,
    sorted_within_ties,
    tie_groups,
    values,
)

import irmeasures_markov as imm
from irmeasures_markov.plugin import FAMILIES

pytestmark = pytest.mark.filterwarnings("ignore:.*no document with grade.*:RuntimeWarning")

#: every family with several parameters each (cutoffs, rel=2, judged_only, static/dynamic distributions): the
#: EXAMPLES of the families of FAMILIES
MEASURES = [e for f in FAMILIES if f.plugin for e in import_module(f"irmeasures_markov.plugin.{f.plugin}").EXAMPLES]
SEEDS = [11, 22, 33]


def engine(measure, qrels, run, **variant):
    return values(plain(measure)(**variant), qrels, run)


def engine_with_extras(measure, qrels, run, **variant):
    """(values, extras) of one variant measure through ``MarkovEvaluator.values_with_extras``."""
    m = plain(measure)(**variant)
    vals, extras = imm.PROVIDER.evaluator([m], qrels).values_with_extras(run)
    return vals[m], extras[m]


def assert_per_query(got, want, tol, what):
    """Every query of ``want`` within ``tol`` (0: bit for bit); failures listed as (qid, expected, got)."""
    assert set(got) == set(want), f"{what}: queries {sorted(got)} != expected {sorted(want)}"
    if tol == 0:
        bad = [(q, want[q], got[q]) for q in sorted(want) if not got[q] == want[q]]
    else:
        bad = [(q, want[q], got[q]) for q in sorted(want) if not abs(got[q] - want[q]) <= tol]
    assert not bad, f"{what}: (qid, expected, got) {bad}"


# --------------------------------------------------------------------------- the brute force itself

def test_brute_force_enumerates_every_order_of_every_tie_group():
    run = {"a": 1.0, "b": 2.0, "c": 1.0, "d": 2.0, "e": 0.5}
    assert tie_groups(run) == [["d", "b"], ["c", "a"], ["e"]]
    orders = list(all_orders(run))
    assert len(orders) == n_orders(run) == 4 and len({tuple(o) for o in orders}) == 4
    assert all(set(o[:2]) == {"b", "d"} and set(o[2:4]) == {"a", "c"} and o[4] == "e" for o in orders)
    assert sorted(explicit_run(["x", "y", "z"]), key=explicit_run(["x", "y", "z"]).get, reverse=True) == ["x", "y", "z"]
    grades = {"a": 2, "c": 0, "d": 1}  # b unjudged counts as 0
    assert sorted_within_ties(run, grades, "optimistic") == ["d", "b", "a", "c", "e"]
    assert sorted_within_ties(run, grades, "pessimistic") == ["b", "d", "c", "a", "e"]


def test_random_cases_have_heavy_ties_and_holes():
    for seed in SEEDS:
        qrels, run = random_case(seed)
        for scores in run.values():
            assert 3 <= len(scores) <= 10 and len(set(scores.values())) <= 3 and n_orders(scores) <= 2000
        assert any(len(g) > 1 for s in run.values() for g in tie_groups(s))
        assert any(d not in qrels[q] for q in run for d in run[q])


# --------------------------------------------------------------------------- ties='expected', exact path

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", MEASURES)
def test_expected_is_the_mean_over_every_order(measure, seed):
    qrels, run = random_case(seed)
    want = brute_expected(measure, qrels, run)
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    assert_per_query(got, want, 1e-12, f"{measure}(ties='expected') seed {seed}")
    # exact path: the reported standard error is 0 for every query
    assert extras["se"] == {q: 0.0 for q in want}


@pytest.mark.parametrize("measure", ["MP", "PH(tail='inf')", "TBG(lengths='brute-all')", "M4(dist='ERR')"])
def test_expected_through_strings_and_ir_measures(measure):
    qrels, run = random_case(5)
    want = brute_expected(measure, qrels, run)
    text = measure[:-1] + ",ties='expected')" if measure.endswith(")") else measure + "(ties='expected')"
    m = ir_measures.parse_measure(text)
    got = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels, run)}
    assert_per_query(got, want, 1e-12, text)
    agg = ir_measures.calc_aggregate([m], qrels, run)[m]
    assert agg == pytest.approx(np.mean(list(want.values())), abs=1e-12)


def test_expected_without_ties_is_the_plain_value():
    qrels, run = random_case(3)
    distinct = {q: explicit_run(sorted_within_ties(s, {}, "optimistic")) for q, s in run.items()}
    for measure in ["MP", "PH", "TBG(lengths='brute-all')", "M2(dist='RRR')"]:
        assert_per_query(engine(measure, qrels, distinct, ties="expected"), values(measure, qrels, distinct),
                         1e-12, measure)


def test_grade_arrangements_are_the_distinct_orders():
    assert multiset_orders(["a", "b", "a"]) == [("a", "a", "b"), ("a", "b", "a"), ("b", "a", "a")]
    run = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0}
    grades = {"a": 1, "b": 1, "c": 0}
    orders = list(grade_arrangements(run, grades))
    assert n_arrangements(run, grades) == len(orders) == 3
    assert [[grades.get(d) for d in o] for o in orders] == [[0, 1, 1, None], [1, 0, 1, None], [1, 1, 0, None]]
    # over every permutation, the mean of a grade-reading measure is the mean over the arrangements
    qrels, case = {"q": grades}, {"q": run}
    assert np.mean(batched("MP", [(grades, explicit_run(o)) for o in orders])) == pytest.approx(
        brute_expected("MP", qrels, case)["q"], abs=1e-15)


def one_big_group(counts, seed=0, extra=3):
    """One query whose first tie group holds ``counts[g]`` documents of each grade g (None: unjudged), in a
    shuffled docid order, followed by ``extra`` untied documents."""
    rng = np.random.default_rng(seed)
    grades = [g for g, c in counts.items() for _ in range(c)]
    docs = [f"D{k:03d}" for k in rng.choice(400, size=len(grades) + extra, replace=False).tolist()]
    run = {d: 5.0 for d in docs[:len(grades)]}
    run.update({d: 4.0 - i for i, d in enumerate(docs[len(grades):])})
    qrels = {d: g for d, g in zip(docs, grades) if g is not None}
    qrels.update({d: int(rng.integers(0, 3)) for d in docs[len(grades):]})
    return {"q": qrels}, {"q": run}


#: measures that read grades only (no per-document value): their tie keys are grades
GRADE_MEASURES = ["MP", "MP(model='LO_OR_LID',rel=2)", "MPcont(rates='brute')@6", "PH(browse='RWBM',p=0.6,q=0.3)",
                  "PH(tail='inf',gain='grade')", "M3(dist='ERR')", "M4(dist='RRR')@5", "M2(theta=0.9)",
                  "MP(judged_only=True)"]


@pytest.mark.parametrize("measure", GRADE_MEASURES)
def test_expected_is_exact_beyond_what_permutations_allow(measure):
    """A group of 10 documents: 10! = 3,628,800 orders but 2,520 arrangements of the grades (0 x5, 1 x3,
    2 x2): the exact path, checked against every arrangement."""
    qrels, run = one_big_group({0: 5, 1: 3, 2: 2})
    assert n_arrangements(run["q"], qrels["q"]) == 2520
    want = float(np.mean(batched(measure, [(qrels["q"], explicit_run(o))
                                           for o in grade_arrangements(run["q"], qrels["q"])])))
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    assert got["q"] == pytest.approx(want, abs=1e-12) and extras["se"]["q"] == 0.0, (measure, want, got["q"])


def assert_mean(measure, want, got, se):
    """A Monte Carlo estimate within 4 of its reported standard errors (0 < se < 1e-3) of the exact mean
    ``want``, or, where the engine found the mean exactly (a closed form, se = 0), equal to it to 1e-12."""
    if se == 0:
        assert abs(got - want) <= 1e-12, (measure, "exact", want, got)
    else:
        assert abs(got - want) <= 4 * se, (measure, want, got, se)
        assert 0 < se < 1e-3, (measure, se)


#: a group of 16 documents, 8 of grade 0 and 8 of grade 2: C(16, 8) = 12,870 arrangements whether a
#: measure reads grades or relevance (rel 1 or 2), beyond the exact path (10**4)
BEYOND_EXACT = {0: 8, 2: 8}


@pytest.mark.parametrize("measure", [m if m in ("MP", "M3(dist='ERR')") else pytest.param(m, marks=pytest.mark.slow)
                                     for m in GRADE_MEASURES])
def test_monte_carlo_within_four_standard_errors_of_the_exact_mean(measure):
    """The exact mean over every arrangement is the reference."""
    qrels, run = one_big_group(BEYOND_EXACT)
    assert n_arrangements(run["q"], qrels["q"]) == 12870
    want = float(np.mean(batched(measure, [(qrels["q"], explicit_run(o))
                                           for o in grade_arrangements(run["q"], qrels["q"])])))
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    assert_mean(measure, want, got["q"], extras["se"]["q"])


@pytest.mark.parametrize("measure", ["PH(browse='RWBM',p=0.6,q=0.3)", "MPcont(rates='brute')"])
def test_monte_carlo_path_reports_its_standard_error(measure):
    """Families without a closed form for the mean over tie orders take the Monte Carlo path here."""
    qrels, run = one_big_group(BEYOND_EXACT)
    want = float(np.mean(batched(measure, [(qrels["q"], explicit_run(o))
                                           for o in grade_arrangements(run["q"], qrels["q"])])))
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    se = extras["se"]["q"]
    assert 0 < se < 1e-3, (measure, se)
    assert abs(got["q"] - want) <= 4 * se, (measure, want, got["q"], se)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("measure", ["MP", "MP(judged_only=True)", "MP(rel=0)", "PH(gain='grade',rel=0)",
                                     "PH(judged_only=True,tail='inf')", "TBG(lengths='brute-all',rel=0)",
                                     "M1(judged_only=True)", "M4(dist='AP',rel=0)", "M3(dist='ERR',rel=0)@5"])
def test_expected_with_negative_grades_and_rel_0(measure, seed):
    """Grades -1..2: a judged document of grade -1 or 0 is not an unjudged one for judged_only or rel=0."""
    qrels, run = random_case(seed, grades=(-1, 2))
    assert any(g < 0 for j in qrels.values() for g in j.values())
    want = brute_expected(measure, qrels, run)
    assert_per_query(engine(measure, qrels, run, ties="expected"), want, 1e-12, f"{measure} seed {seed}")
    for how in ("optimistic", "pessimistic"):
        assert_per_query(engine(measure, qrels, run, ties=how), brute_sorted(measure, qrels, run, how), 0,
                         f"{measure}(ties={how!r}) seed {seed}")


@pytest.mark.parametrize("measure", ["M1(dist='ERR')", "M3(dist='AP')", "M4(dist='RRR')", "M2(dist='ERR',rel=2)"])
def test_expected_when_the_ranking_retrieves_no_relevant_document(measure):
    """The smallest case: one retrieved document, non-relevant; a relevant one not retrieved. Every order
    (there is one) gives the plain value, 0."""
    qrels = {"q": {"a": 0, "b": 1, "x": 2}}
    run = {"q": {"a": 1.0, "u": 1.0}}
    assert values(measure, qrels, run)["q"] == 0.0
    assert engine(measure, qrels, run, ties="expected") == {"q": 0.0}


def test_optimistic_puts_grade_0_above_grade_minus_1():
    """Higher grades first: with rel=0 a grade-0 document is relevant and a grade -1 one is not, so the
    optimistic order of the tie {'b': -1, 'a': 0} (trec order b, a) is a, b: M1(rel=0) = 1 - 0.8."""
    qrels = {"q": {"b": -1, "a": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert values("M1(rel=0)", qrels, {"q": {"a": 2.0, "b": 1.0}})["q"] == pytest.approx(0.2, abs=1e-15)
    assert engine("M1(rel=0)", qrels, run, ties="optimistic")["q"] == pytest.approx(0.2, abs=1e-15)
    assert engine("M1(rel=0)", qrels, run, ties="pessimistic")["q"] == pytest.approx(0.16, abs=1e-15)


def test_iter_calc_yields_the_standard_error_as_an_extra():
    qrels, run = random_case(5)
    plain_m = plain("M1")
    _, extras = imm.PROVIDER.evaluator([plain_m], qrels).values_with_extras(run)
    assert extras[plain_m] == {}
    m = plain("M1")(ties="expected")
    got = list(imm.PROVIDER.iter_calc([m], qrels, run))
    want = brute_expected("M1", qrels, run)
    assert {r.query_id for r in got} == set(want)
    for r in got:
        assert r.extras == {"se": 0.0}
        assert r == ir_measures.Metric(r.query_id, m, r.value)
        assert r.value == pytest.approx(want[r.query_id], abs=1e-12)


# --------------------------------------------------------------------------- optimistic / pessimistic

@pytest.mark.parametrize("how", ["optimistic", "pessimistic"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", MEASURES)
def test_optimistic_and_pessimistic_are_the_reordered_run(measure, seed, how):
    qrels, run = random_case(seed)
    assert_per_query(engine(measure, qrels, run, ties=how), brute_sorted(measure, qrels, run, how), 0,
                     f"{measure}(ties={how!r}) seed {seed}")


@pytest.mark.parametrize("measure", ["MP", "M1", "TBG(lengths='brute-all')", "PH(tail='inf')"])
def test_docid_is_the_default(measure):
    qrels, run = random_case(8)
    m = plain(measure)
    assert m(ties="docid", unjudged="nonrel") == m and str(m(ties="docid", unjudged="nonrel")) == str(m)
    assert_per_query(engine(measure, qrels, run, ties="docid", unjudged="nonrel"), values(m, qrels, run), 0,
                     measure)


# --------------------------------------------------------------------------- Monte Carlo path

def big_case(seed=4, n=40):
    """One query of ``n`` documents with 3 scores and grades 0-2 (far more than 10**4 arrangements)."""
    rng = np.random.default_rng(seed)
    docs = [f"D{k:03d}" for k in rng.choice(400, size=n, replace=False).tolist()]
    run = {"big": {d: float(rng.choice([1.0, 2.0, 3.0])) for d in docs}}
    qrels = {"big": {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.8}}
    return qrels, run


def linear_expected(measure, qrels, run, q):
    """E over uniform tie orders of M1/M2/M4 with a static distribution, no cutoff: these are linear in
    the relevance a_k (M4 through R_k = Σ_{i<=k} a_i), so each a_k is replaced by the share of relevant
    documents in k's tie group; the value is then that of the plain formula, computed here directly."""
    m = plain(measure)
    theta = m.params.get("theta", 0.8)
    rel = m.params.get("rel", 1)
    a = []
    for g in tie_groups(run[q]):
        share = sum(qrels[q].get(d, 0) >= rel for d in g) / len(g)
        a.extend([share] * len(g))
    a = np.array(a)
    k = np.arange(1, len(a) + 1)
    p = (1 - theta) * theta ** (k - 1)
    if m.NAME == "M1":
        return float(np.sum(a * p))
    if m.NAME == "M2":  # F(k) = theta^(k-1); norm=False
        return float(np.sum(a * theta ** (k - 1)))
    return float(np.sum(p * np.cumsum(a) / k))  # M4


def test_monte_carlo_case_is_beyond_the_exact_path():
    qrels, run = big_case()
    groups = tie_groups(run["big"])
    arrangements = math.prod(math.factorial(len(g)) // math.prod(
        math.factorial(sum(1 for d in g if qrels["big"].get(d, -1) == v)) for v in (-1, 0, 1, 2)) for g in groups)
    assert arrangements > 10**4


@pytest.mark.parametrize("measure", ["M1", "M1(theta=0.9)", "M2(norm=False)", "M4(rel=2)"])
def test_monte_carlo_within_four_standard_errors_of_the_linear_mean(measure):
    qrels, run = big_case()
    # the brute formula agrees with the plain measure on an untied order (it is the measure)
    order = sorted_within_ties(run["big"], qrels["big"], "optimistic")
    untied = {"big": explicit_run(order)}
    assert linear_expected(measure, qrels, untied, "big") == pytest.approx(
        values(measure, qrels, untied)["big"], abs=1e-12)
    exact = linear_expected(measure, qrels, run, "big")
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    assert_mean(measure, exact, got["big"], extras["se"]["big"])


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["MP", "TBG(lengths='brute-all')", "PH(browse='RWBM',p=0.6,q=0.3)",
                                     "M3(dist='ERR')", "MPcont(rates='brute')"])
def test_monte_carlo_within_four_standard_errors_of_a_long_brute_monte_carlo(measure):
    """Families that are not linear: a Monte Carlo of our own over 40,000 explicit orders."""
    qrels, run = big_case()
    rng = np.random.default_rng(99)
    groups = tie_groups(run["big"])
    scenarios = []
    for _ in range(40_000):
        order = [d for g in groups for d in rng.permutation(g).tolist()]
        scenarios.append((qrels["big"], explicit_run(order)))
    v = batched(measure, scenarios)
    mine, mine_se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v)))
    got, extras = engine_with_extras(measure, qrels, run, ties="expected")
    se = extras["se"]["big"]
    assert abs(got["big"] - mine) <= 4 * math.hypot(se, mine_se), (measure, mine, mine_se, got["big"], se)
    assert se < 1e-3, (measure, se)


def test_monte_carlo_does_not_depend_on_query_order():
    qrels, run = big_case()
    qrels2, run2 = big_case(seed=6)
    both_q = {"big": qrels["big"], "other": qrels2["big"]}
    forward = {"big": run["big"], "other": run2["big"]}
    backward = {"other": run2["big"], "big": run["big"]}
    m = "M4"
    assert engine(m, both_q, forward, ties="expected") == engine(m, both_q, backward, ties="expected")
    alone = engine(m, {"big": qrels["big"]}, {"big": run["big"]}, ties="expected")
    assert alone["big"] == engine(m, both_q, forward, ties="expected")["big"]


# --------------------------------------------------------------------------- defaults and strings

@pytest.mark.parametrize("name", MEASURES)
def test_defaults_print_as_before(name):
    m = plain(name)
    assert str(m(ties="docid", unjudged="nonrel", residual=False, seed=0)) == str(m)
    assert str(ir_measures.parse_measure("MP")) == "MP"


def test_strings_parse():
    m = ir_measures.parse_measure("MP(ties='expected')")
    assert m.NAME == "MP" and m["ties"] == "expected" and str(m) == "MP(ties='expected')"
    r = ir_measures.parse_measure("M1(residual=True)")
    assert r.NAME == "M1" and r["residual"] is True
    t = ir_measures.parse_measure("TBG(unjudged='range')@10")
    assert t["unjudged"] == "range" and t["cutoff"] == 10
    assert ir_measures.parse_measure(str(t)) == t


@pytest.mark.parametrize("text", ["MP(ties='random')", "PH(unjudged='maybe')",
                                  "M1(ties='expected',unjudged='range')", "M1(residual=True,unjudged='rel')"])
def test_bad_combinations_are_refused(text):
    qrels, run = random_case(1)
    with pytest.raises(ValueError):
        ir_measures.calc_aggregate([ir_measures.parse_measure(text)], qrels, run)


# --------------------------------------------------------------------------- bounds over all orders

#: families where moving a document of a higher grade above one of a lower grade never lowers the value,
#: so the optimistic and pessimistic orders are the maximum and minimum over every order of the tie
#: groups: M1/M2/M4 with static or dynamic distributions (binary relevance at `rel`), M3 with f='1/k'
#: (dynamic; static M3 does not read the judgments), PH with the SFBM/DFBM/RWBM walks, users, gains and
#: tails below (P@H's gain per visit grows when a better document comes earlier). Verified by brute force
#: over every order of 60 random cases per measure while writing these tests.
MONOTONE = [
    "M1", "M1(dist='DCG')@5", "M1(dist='RR',rel=2)", "M1(dist='ERR')@4", "M2", "M2(dist='RRR')", "M2(dist='DCG')@5",
    "M3(dist='ERR')", "M3(dist='AP')", "M3(dist='RRR')@5", "M3", "M4", "M4(dist='AP')", "M4(dist='ERR')",
    "M4(dist='RRR',rel=2)", "M4(dist='DCG')@4",
    "PH", "PH(browse='RWBM',p=0.6,q=0.3)", "PH(user='AP')", "PH(user='ERR')", "PH(tail='inf')", "PH(order=1)",
    "PH(p=0.5,p_rel=0.9)", "PH(gain='grade',rel=2)", "PH(browse='DFBM')@5", "MP(model='UNIFORM')",
]
#: families where the bounds fail, with a case (random_case seed, qid) whose brute force shows it:
#: * MP (Markov kernels other than UNIFORM): the walk's invariant distribution depends on where the
#:   relevant documents sit, and moving a relevant document down can raise it: seed 16 q0, grades in
#:   trec order [1, 1, -, -, -, 2, 0] (optimistic) give MP = 0.822497, [1, 1, -, -, -, 0, 2] give 0.822770;
#:   with rel=2 the pessimistic order is not the minimum either (seed 57 q0).
#: * MPcont: the holding rates weight ranks unequally (seed 40 q2).
#: * TBG: two relevant documents of different lengths are equally good for the order (grades) but not
#:   for the time they cost (seed 48 q0).
#: * M3 with f='k' (expected stopping rank, lower is better): the bounds are reversed (seed 43 q2).
NOT_MONOTONE = [
    ("MP", 16, "q0", "max"), ("MP(model='LO_OR_LID')", 8, "q1", "max"), ("MP(rel=2)", 57, "q0", "min"),
    ("MPcont(rates='brute')", 40, "q2", "max"), ("TBG(lengths='brute-all')", 48, "q0", "max"),
    ("M3(dist='RRR',f='k')", 43, "q2", "max"),
]


@pytest.mark.parametrize("seed", [16, 26, 40, 43, 48, 57])
@pytest.mark.parametrize("measure", MONOTONE)
def test_optimistic_and_pessimistic_bound_every_order(measure, seed):
    qrels, run = random_case(seed, max_orders=720)
    hi = engine(measure, qrels, run, ties="optimistic")
    lo = engine(measure, qrels, run, ties="pessimistic")
    for q in run:
        v = per_order_values(measure, qrels, run, q)
        assert v.max() <= hi[q] + 1e-12 and lo[q] - 1e-12 <= v.min(), (measure, seed, q, lo[q], v.min(),
                                                                        v.max(), hi[q])


@pytest.mark.parametrize("measure,seed,q,side", NOT_MONOTONE)
def test_where_the_bounds_fail(measure, seed, q, side):
    qrels, run = random_case(seed, max_orders=720)
    v = per_order_values(measure, qrels, run, q)
    if side == "max":
        assert v.max() > engine(measure, qrels, run, ties="optimistic")[q] + 1e-9
    else:
        assert v.min() < engine(measure, qrels, run, ties="pessimistic")[q] - 1e-9
