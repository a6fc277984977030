"""Carterette's M1–M4 (SPEC §2): brute force, identities with pytrec_eval/ir_measures, validation."""
import math

import ir_measures
import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.measures import user_model_measure, user_model_values
from irmeasures_markov.measures._carterette_distributions import (
    DISTRIBUTIONS,
    MODELS,
    NAMED_MEASURES,
    PAPER_MEASURES,
    default_norm,
    stopping_distribution,
)

COMBOS = [(m, d) for m in MODELS for d in DISTRIBUTIONS]


# --------------------------------------------------------------------------- brute force

def brute_p(a, k, dist, theta, rb):
    """P(k) straight from the paper's definitions (1-based k), with R_{k-1} counted by a loop."""
    if dist == "RBP":
        return (1 - theta) * theta ** (k - 1)
    if dist == "DCG":
        return 1 / math.log2(k + 1) - 1 / math.log2(k + 2)
    if dist == "RR":
        return 1 / (k * (k + 1))
    a_k = a[k - 1] if k <= len(a) else 0
    r_prev = sum(a[:k - 1])
    if dist == "ERR":
        return a_k * theta * (1 - theta) ** r_prev
    if dist == "AP":
        return a_k / rb
    return a_k / ((r_prev + a_k) * (r_prev + a_k + 1)) if a_k else 0.0


def brute(a, model, dist, theta=None, f="1/k", rb=None):
    """The defining sum of each model; M2 as expected total relevance over an infinite ranking
    completed with non-relevant documents (static P sums to 1, so the tail past N has mass 1 - Σ P)."""
    theta = theta if theta is not None else {"RBP": 0.8, "ERR": 0.5}.get(dist)
    rb = sum(a) if rb is None else rb
    if rb == 0:
        return 0.0
    n = len(a)
    P = [brute_p(a, k, dist, theta, rb) for k in range(1, n + 1)]
    R = [sum(a[:k]) for k in range(1, n + 1)]
    if model == "M1":
        return sum(a[k] * P[k] for k in range(n))
    if model == "M2":
        total = sum(P[k] * R[k] for k in range(n))
        if dist in ("RBP", "DCG", "RR") and n:
            total += (1 - sum(P)) * R[-1]
        return total
    if model == "M3":
        return sum((1 / (k + 1) if f == "1/k" else (k + 1)) * P[k] for k in range(n))
    return sum(P[k] * R[k] / (k + 1) for k in range(n))


def ideal_ranking(n, rb, cutoff=None):
    """The best permutation of a ranking of n documents holding all RB relevant ones: RB relevant first,
    then non-relevant up to max(n, RB), cut at the cutoff (SPEC §2, docs/user-model-framework.md)."""
    ideal = [1] * rb + [0] * max(0, n - rb)
    return ideal[:cutoff] if cutoff else ideal


def brute_norm(a, model, dist, theta=None, f="1/k", rb=None, cutoff=None):
    rb = sum(a) if rb is None else rb
    cut = a[:cutoff] if cutoff else a
    v = brute(cut, model, dist, theta, f, rb)
    best = brute(ideal_ranking(len(cut), rb, cutoff), model, dist, theta, f, rb)
    return v / best if best > 0 else 0.0


rankings = st.lists(st.integers(0, 1), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(rankings, st.integers(0, 8), st.sampled_from(COMBOS), st.floats(0.05, 0.95), st.sampled_from(["1/k", "k"]))
def test_every_combination_equals_brute_force(a, extra, combo, theta, f):
    model, dist = combo
    rb = sum(a) + extra
    th = theta if dist in ("RBP", "ERR") else None
    f = f if model == "M3" else "1/k"
    got = user_model_measure(a, model, dist, theta=th, f=f, norm=False, recall_base=rb)
    assert got == pytest.approx(brute(a, model, dist, th, f, rb), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(rankings, st.integers(0, 8), st.sampled_from(sorted(PAPER_MEASURES)), st.one_of(st.none(), st.integers(1, 30)))
def test_paper_measures_normalised_brute_force_range_and_ideal(a, extra, name, cutoff):
    model, dist = PAPER_MEASURES[name]
    rb = sum(a) + extra
    norm = default_norm(model, dist)
    got = user_model_measure(a, model, dist, norm=norm, recall_base=rb, cutoff=cutoff)
    if norm:
        assert got == pytest.approx(brute_norm(a, model, dist, rb=rb, cutoff=cutoff), abs=1e-12)
    else:
        assert got == pytest.approx(brute(a[:cutoff] if cutoff else a, model, dist, rb=rb), abs=1e-12)
    # the paper's normalised measures (M2 family, ARR) lie in [0, 1] and score 1 on an ideal ranking
    if norm:
        assert -1e-12 <= got <= 1 + 1e-12
        if rb:
            ideal = [1] * rb + [0] * 5
            assert user_model_measure(ideal, model, dist, recall_base=rb, cutoff=cutoff) == pytest.approx(1.0)


@settings(max_examples=300, deadline=None)
@given(rankings, st.integers(0, 8), st.sampled_from(COMBOS), st.one_of(st.none(), st.integers(1, 30)),
       st.floats(0.05, 0.95))
def test_every_normalised_combination_in_unit_interval_and_one_on_the_ideal(a, extra, combo, cutoff, theta):
    """norm=True on any model x dist (f = 1/k): the brute-force ratio to the padded ideal ranking, in [0, 1],
    and 1 on that ideal ranking.  Without the non-relevant padding static M3/M4 exceeded 1."""
    model, dist = combo
    rb = sum(a) + extra
    th = theta if dist in ("RBP", "ERR") else None
    got = user_model_measure(a, model, dist, theta=th, norm=True, recall_base=rb, cutoff=cutoff)
    assert got == pytest.approx(brute_norm(a, model, dist, th, rb=rb, cutoff=cutoff), abs=1e-12)
    assert -1e-12 <= got <= 1 + 1e-12
    if rb:
        ideal = ideal_ranking(len(a), rb)
        assert user_model_measure(ideal, model, dist, theta=th, norm=True, recall_base=rb,
                                  cutoff=cutoff) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(rankings, st.integers(0, 8), st.sampled_from(DISTRIBUTIONS), st.one_of(st.none(), st.integers(1, 30)))
def test_normalised_expected_stopping_rank_is_times_the_ideal_effort(a, extra, dist, cutoff):
    """M3 with f='k' (lower is better) normalised reads "times the ideal effort": not bounded by 1."""
    rb = sum(a) + extra
    got = user_model_measure(a, "M3", dist, f="k", norm=True, recall_base=rb, cutoff=cutoff)
    assert got == pytest.approx(brute_norm(a, "M3", dist, f="k", rb=rb, cutoff=cutoff), rel=1e-12, abs=1e-12)
    cut = a[:cutoff] if cutoff else a
    n_rel = min(rb, cutoff) if cutoff else rb
    if rb and dist in ("RBP", "DCG", "RR") and len(cut) >= n_rel:
        assert got == pytest.approx(1.0, abs=1e-12)   # static: depends only on N, as the ideal
    if rb and dist in ("ERR", "AP", "RRR") and sum(cut) == n_rel:
        assert got >= 1 - 1e-12   # the j-th relevant document sits at rank >= j


def test_normalised_static_m3_m4_audit_examples():
    """Runs longer than RB used to beat their ideal ranking (RAP 1.135, RBAP@10 1.915, DAG 1.286)."""
    assert user_model_measure([1, 1, 1] + [0] * 50, "M4", "RR", norm=True, recall_base=3) == pytest.approx(1.0)
    assert user_model_measure([1, 0, 0, 0, 0, 0, 0], "M4", "RBP", norm=True, recall_base=1,
                              cutoff=10) == pytest.approx(1.0)
    assert user_model_measure([1, 0, 0, 0, 0], "M4", "DCG", norm=True, recall_base=1) == pytest.approx(1.0)
    # the ideal is padded only up to the run's length: a short run still loses to RB relevant documents
    assert user_model_measure([1], "M3", "RR", norm=True, recall_base=3) == pytest.approx(
        (1 / 2) / (1 / 2 + 1 / 12 + 1 / 36))


def test_distributions():
    p, tail = stopping_distribution([0, 1, 1, 0], "RBP", theta=0.5)
    np.testing.assert_allclose(p, [0.5, 0.25, 0.125, 0.0625])
    np.testing.assert_allclose(tail, [1, 0.5, 0.25, 0.125])
    p, tail = stopping_distribution([1, 0, 1, 1], "RRR")
    np.testing.assert_allclose(p, [1 / 2, 0, 1 / 6, 1 / 12])
    np.testing.assert_allclose(tail, [3 / 4, 1 / 4, 1 / 4, 1 / 12])
    p, _ = stopping_distribution([1, 0, 1], "AP", recall_base=4)
    np.testing.assert_allclose(p, [0.25, 0, 0.25])
    p, _ = stopping_distribution([1, 1, 0, 1], "ERR", theta=0.5)
    np.testing.assert_allclose(p, [0.5, 0.25, 0, 0.125])


def test_hand_values():
    a = [1, 0, 1, 0]
    assert user_model_measure(a, "M4", "AP", recall_base=3) == pytest.approx((1 + 2 / 3) / 3)
    assert user_model_measure(a, "M3", "AP", recall_base=2, norm=True) == pytest.approx((1 + 1 / 3) / 1.5)
    assert user_model_measure(a, "M2", "RBP", theta=0.5, norm=False) == pytest.approx(1 + 0.25)
    # at a cutoff RBTR completes with non-relevant documents: F(k) is the infinite tail
    assert user_model_measure(a, "M2", "RBP", theta=0.5, norm=False, cutoff=1) == pytest.approx(1.0)
    assert user_model_measure([1, 1], "M3", "RBP", f="k", norm=False) == pytest.approx(0.2 + 2 * 0.16)
    assert user_model_measure([0, 0, 0], "M2", "DCG", recall_base=0) == 0.0


def test_validation():
    with pytest.raises(ValueError, match="unknown stopping distribution"):
        user_model_measure([1], "M1", "XYZ")
    with pytest.raises(ValueError, match="unknown model"):
        user_model_measure([1], "M5", "RBP")
    with pytest.raises(ValueError, match=r"theta must be in \(0, 1\)"):
        user_model_measure([1], "M1", "RBP", theta=1.0)
    with pytest.raises(ValueError, match="no parameter theta"):
        user_model_measure([1], "M1", "AP", theta=0.5)
    with pytest.raises(ValueError, match="only applies to M3"):
        user_model_measure([1], "M1", "RBP", f="k")
    with pytest.raises(ValueError, match="binary"):
        user_model_measure([2, 0], "M1", "RBP")
    with pytest.raises(ValueError, match="recall_base"):
        user_model_measure([1, 1], "M4", "AP", recall_base=1)
    for bad in (0, -3, True, 2.5):
        with pytest.raises(ValueError, match="cutoff must be a positive integer"):
            user_model_measure([1, 0], "M2", "DCG", cutoff=bad)
    with pytest.raises(ValueError, match="f must be"):
        user_model_measure([1], "M3", "RBP", f="log")
    for bad in (True, np.bool_(True), "0.5", np.float32(1.0), float("nan")):
        with pytest.raises(ValueError, match=r"theta must be in \(0, 1\)"):
            user_model_measure([1], "M1", "RBP", theta=bad)
    for s in ["M1(dist='XYZ')", "M1(theta='x')", "M3(f='log')", "RBTR(dist='DCG')", "M2(norm=1)", "M1@0",
              "M1(theta=0)", "M2(dist='DCG',theta=0.5)", "M4(f='k')", "CDG(theta=0.5)",
              "EPR(theta=2)", "ARR(theta=0.5)"]:
        with pytest.raises(ValueError):
            m = ir_measures.parse_measure(s)
            m.validate_params()
            imm.PROVIDER.calc_aggregate([m], {"1": {"a": 1}}, {"1": {"a": 1.0}})


def test_numpy_theta_is_accepted():
    want = user_model_measure([1, 0, 1], "M1", "RBP", theta=0.5)
    for theta in (np.float32(0.5), np.float64(0.5), np.array(0.5)[()]):
        assert user_model_measure([1, 0, 1], "M1", "RBP", theta=theta) == want
        assert user_model_measure([1, 0, 1], "M3", "ERR", theta=theta) == user_model_measure([1, 0, 1], "M3", "ERR",
                                                                                            theta=0.5)
    # the plug-in stores a float, so the measure prints (and compares) as one written by hand
    m = imm.M1(theta=np.float32(0.5))
    assert m == imm.M1(theta=0.5) and str(m) == "M1(theta=0.5)"
    assert imm.EPR(theta=np.float64(0.5)) == imm.EPR
    assert imm.PROVIDER.calc_aggregate([m], {"1": {"a": 1}}, {"1": {"a": 1.0}})[m] == pytest.approx(0.5)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 1), max_size=30), st.integers(0, 4)), min_size=1, max_size=6),
       st.sampled_from(COMBOS), st.one_of(st.none(), st.integers(1, 20)), st.booleans())
def test_user_model_values_is_user_model_measure_per_ranking(queries, combo, cutoff, norm):
    """The flat-array API: each ranking as user_model_measure (and brute force), cutoff applied per ranking."""
    model, dist = combo
    flat = [x for a, _ in queries for x in a]
    offsets = np.cumsum([0] + [len(a) for a, _ in queries])
    rbs = np.array([sum(a) + extra for a, extra in queries])
    got = user_model_values(flat, offsets, rbs, model, dist, norm=norm, cutoff=cutoff)
    assert got.shape == (len(queries),) and got.dtype == np.float64
    for i, (a, _) in enumerate(queries):
        rb = int(rbs[i])
        assert got[i] == user_model_measure(a, model, dist, norm=norm, recall_base=rb, cutoff=cutoff)
        want = (brute_norm(a, model, dist, rb=rb, cutoff=cutoff) if norm
                else brute(a[:cutoff] if cutoff else a, model, dist, rb=rb))
        assert got[i] == pytest.approx(want, abs=1e-12)
    np.testing.assert_array_equal(
        user_model_values(np.asarray(flat, dtype=bool), offsets, rbs, model, dist, norm=norm, cutoff=cutoff), got)


def test_user_model_values_validation():
    with pytest.raises(ValueError, match="offsets must be"):
        user_model_values([1, 0], [0, 1], [1])
    with pytest.raises(ValueError, match="offsets must be"):
        user_model_values([1, 0], [0, 2, 1, 2], [1, 1, 1])
    with pytest.raises(ValueError, match="offsets must be"):
        user_model_values([1, 0], [0.0, 2.0], [1])
    with pytest.raises(ValueError, match="recall_base must hold one integer per ranking"):
        user_model_values([1, 0], [0, 1, 2], [1])
    with pytest.raises(ValueError, match="recall_base must be >= the relevant documents"):
        user_model_values([1, 1, 1], [0, 1, 3], [1, 1])
    with pytest.raises(ValueError, match="binary"):
        user_model_values([1, 2], [0, 2], [2])
    with pytest.raises(ValueError, match="cutoff must be a positive integer"):
        user_model_values([1, 0], [0, 2], [1], cutoff=0)
    assert user_model_values([], [0], np.zeros(0, dtype=int)).shape == (0,)


# --------------------------------------------------------------------------- plug-in and identities

def synthetic(seed=0, n_topics=8, depth=50, graded=False):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(n_topics):
        q = str(t + 1)
        docs = [f"d{i}" for i in range(120)]
        qrels[q] = {d: int(rng.random() < 0.2) * (int(rng.integers(1, 3)) if graded else 1)
                    for d in rng.choice(docs, 80, replace=False)}
        chosen = rng.choice(docs, depth, replace=False)
        run[q] = {d: float(s) for d, s in zip(chosen, rng.permutation(depth) + rng.random(depth))}
    qrels["1"]["d0"] = 1
    return qrels, run


def ranked_relevance(qrels, run, q, rel=1):
    docs = sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)
    return [int(qrels[q].get(d, 0) >= rel) for d, _ in docs]


def per_query(measure, qrels, run):
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.slow  # exhaustive: every model x distribution
def test_plugin_equals_functional_for_all_combinations():
    qrels, run = synthetic(seed=1, graded=True)
    for model, dist in COMBOS:
        for cutoff in (None, 5, 20):
            for norm in (False, True):
                for rel in (1, 2):
                    cls = getattr(imm, model)
                    m = cls(dist=dist, norm=norm, rel=rel)
                    m = m @ cutoff if cutoff else m
                    got = per_query(m, qrels, run)
                    for q in run:
                        a = ranked_relevance(qrels, run, q, rel)
                        rb = sum(g >= rel for g in qrels[q].values())
                        want = user_model_measure(a, model, dist, norm=norm, recall_base=rb, cutoff=cutoff)
                        assert got[q] == pytest.approx(want, abs=1e-12), (str(m), q)


def test_named_measures_are_their_model_and_distribution():
    qrels, run = synthetic(seed=2)
    for name, (model, dist) in NAMED_MEASURES.items():
        named = ir_measures.parse_measure(name)
        assert str(named) == name
        generic = getattr(imm, model)(dist=dist)
        assert per_query(named, qrels, run) == per_query(generic, qrels, run)
        assert per_query(named @ 10, qrels, run) == per_query(generic @ 10, qrels, run)
    assert str(imm.RBTR(theta=0.9) @ 10) == "RBTR(theta=0.9)@10"
    assert str(ir_measures.parse_measure("M2(dist='DCG')")) == "M2(dist='DCG')"
    assert str(imm.M1) == "M1"  # dist='RBP' is the default and omitted
    # the classic names stay ir_measures' own
    for name in ("RBP", "DCG", "RR", "ERR", "AP"):
        existing = ir_measures.measures.registry.get(name)  # ir_measures has no DCG: we do not claim it either
        assert existing is None or not type(existing).__module__.startswith("irmeasures_markov")


def test_identities_with_pytrec_eval():
    """M4(AP) = AP; M2(DCG, norm) = binary nDCG (also @10); on binary qrels."""
    qrels, run = synthetic(seed=3)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg", "ndcg_cut_10"})
    ref = ev.evaluate(run)
    ours = {m: per_query(m, qrels, run) for m in (imm.M4(dist="AP"), imm.M2(dist="DCG"), imm.M2(dist="DCG") @ 10)}
    for q in run:
        assert ours[imm.M4(dist="AP")][q] == pytest.approx(ref[q]["map"], abs=1e-12)
        assert ours[imm.M2(dist="DCG")][q] == pytest.approx(ref[q]["ndcg"], abs=1e-12)
        assert ours[imm.M2(dist="DCG") @ 10][q] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-12)


def provider_or_skip(name):
    provider = ir_measures.providers.registry[name]
    if not provider.is_available():
        pytest.skip(f"ir_measures provider {name} not available: {provider.install_instructions()}")
    return provider


def test_m1_rbp_is_rbp():
    """M1(RBP, θ) = (1−θ) Σ a_k θ^{k−1}, Moffat & Zobel's RBP (direct formula)."""
    qrels, run = synthetic(seed=4)
    for theta in (0.5, 0.8, 0.95):
        ours = per_query(imm.M1(dist="RBP", theta=theta), qrels, run)
        for q in run:
            a = ranked_relevance(qrels, run, q)
            assert ours[q] == pytest.approx((1 - theta) * sum(x * theta ** k for k, x in enumerate(a)), abs=1e-12)


def test_m1_rbp_equals_ir_measures_rbp():
    """Against ir_measures' RBP (cwl-eval 1.0.12 provider)."""
    provider_or_skip("cwl_eval")
    qrels, run = synthetic(seed=4)
    for theta in (0.5, 0.8, 0.95):
        ours = per_query(imm.M1(dist="RBP", theta=theta), qrels, run)
        ref = per_query(ir_measures.parse_measure(f"RBP(p={theta},rel=1)"), qrels, run)
        for q in run:
            assert ours[q] == pytest.approx(ref[q], abs=1e-12)


def test_m3_err_is_binary_err():
    """θ = 0.5: ERR = Σ_k (1/k) θ a_k Π_{i<k} (1 − θ a_i); θ = 1/16 is gdeval's ERR on 0/1 grades."""
    qrels, run = synthetic(seed=5)
    ours = per_query(imm.M3(dist="ERR"), qrels, run)
    for q in run:
        a = ranked_relevance(qrels, run, q)
        err, stay = 0.0, 1.0
        for k, ak in enumerate(a, 1):
            err += stay * 0.5 * ak / k
            stay *= 1 - 0.5 * ak
        assert ours[q] == pytest.approx(err, abs=1e-12)
    provider_or_skip("gdeval")
    gd = per_query(ir_measures.parse_measure("ERR@20"), qrels, run)
    ours16 = per_query(imm.M3(dist="ERR", theta=1 / 16) @ 20, qrels, run)
    for q in run:
        assert ours16[q] == pytest.approx(gd[q], abs=6e-6)  # gdeval prints 5 decimals


def chapelle_err(grades, g_max, cutoff=None):
    """Chapelle's ERR written out: stop at rank k with R_k = (2^g_k - 1) / 2^g_max."""
    err, stay = 0.0, 1.0
    for k, g in enumerate(grades[:cutoff], 1):
        r = (2.0 ** g - 1.0) / 2.0 ** g_max
        err += stay * r / k
        stay *= 1.0 - r
    return err


def test_m3_err_mapping_to_gdeval():
    """The mapping stated in docs/user-model-framework.md and the module docstring.

    On 0/1 grades: M3(dist='ERR') (θ = 1/2) is Chapelle's ERR with g_max = 1, and
    M3(dist='ERR',theta=1/16)@20 is gdeval's ERR@20 (g_max fixed at 4), which is
    ir_measures' ERR; the two differ from each other.
    """
    from pathlib import Path

    import irmeasures_markov.measures._carterette as cart
    doc = Path(__file__).resolve().parents[2].joinpath("docs", "user-model-framework.md").read_text("utf-8")
    for text in (doc, cart.__doc__):
        assert "theta=1/16)@20" in text and "g_max = 1" in text and "g_max" in text
    qrels, run = synthetic(seed=6)
    half = per_query(imm.M3(dist="ERR"), qrels, run)
    half20 = per_query(imm.M3(dist="ERR") @ 20, qrels, run)
    sixteenth = per_query(imm.M3(dist="ERR", theta=1 / 16) @ 20, qrels, run)
    differs = 0
    for q in run:
        g = ranked_relevance(qrels, run, q)
        assert half[q] == pytest.approx(chapelle_err(g, g_max=1), abs=1e-14)
        assert half20[q] == pytest.approx(chapelle_err(g, g_max=1, cutoff=20), abs=1e-14)
        assert sixteenth[q] == pytest.approx(chapelle_err(g, g_max=4, cutoff=20), abs=1e-14)
        if any(g[:20]):
            differs += 1
            assert abs(half20[q] - sixteenth[q]) > 1e-3
    assert differs >= 4
    if ir_measures.providers.registry["gdeval"].is_available():
        gd = per_query(ir_measures.parse_measure("ERR@20"), qrels, run)
        for q in run:
            assert sixteenth[q] == pytest.approx(gd[q], abs=6e-6)  # gdeval prints 5 decimals


def test_batch_edge_cases():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"x": 0}, "3": {"z": 1}}
    run = {"1": {"b": 2.0, "a": 1.0}, "2": {"x": 1.0}, "3": {"u": 1.0}}
    with pytest.warns(RuntimeWarning, match="1 qrels query has no document with grade >= 1"):
        res = imm.PROVIDER.calc_aggregate([imm.M4(dist="AP"), imm.ARR, imm.RBTR @ 1], qrels, run)
        per = per_query(imm.RBTR @ 1, qrels, run)
    assert res[imm.M4(dist="AP")] == pytest.approx((0.5 + 0 + 0) / 3)
    assert per == {"1": 0.0, "2": 0.0, "3": 0.0}


def test_canonical_printed_form():
    """Defaults that depend on dist/model are dropped, so equal measures compare and hash equal."""
    parse = ir_measures.parse_measure
    assert imm.M1(theta=0.8) == imm.M1 and str(parse("M1(dist='RBP',theta=0.8)")) == "M1"
    assert parse("M2(dist='DCG',norm=True)") == parse("M2(dist='DCG')")
    assert str(parse("M2(dist='dcg',norm=False)")) == "M2(dist='DCG',norm=False)"
    assert str(parse("ARR(norm=True)")) == "ARR" and str(parse("EPR(theta=0.5)")) == "EPR"
    assert str(parse("M3(dist='ERR',f='1/k')@10")) == "M3(dist='ERR')@10"
    assert str(parse("M4(dist='ERR',theta=0.3)@10")) == "M4(dist='ERR',theta=0.3)@10"
    assert len({imm.M1, imm.M1(theta=0.8), imm.M1(dist="RBP"), imm.M1(dist="RBP", norm=False)}) == 1
    # theta given for a distribution without one is kept (and rejected at validation)
    with pytest.raises(ValueError, match="no parameter theta"):
        imm.M1(dist="AP", theta=0.8).validate_params()


@pytest.mark.parametrize("r,rb", [(0, 3), (1, 1), (3, 5), (6, 6)])
def test_degenerate_combinations_depend_only_on_r(r, rb):
    """The closed forms documented for M1/M2 with dynamic distributions and M3 with static ones."""
    rng = np.random.default_rng(r)
    for _ in range(3):
        a = rng.permutation([1] * r + [0] * 7).tolist()
        um = lambda m, d, a=a, **kw: user_model_measure(a, m, d, norm=False, recall_base=rb, **kw)  # noqa: E731
        assert um("M1", "AP") == pytest.approx(r / rb)
        assert um("M1", "RRR") == pytest.approx(r / (r + 1))
        assert um("M1", "ERR", theta=0.3) == pytest.approx(1 - 0.7 ** r)
        assert um("M2", "AP") == pytest.approx(r * (r + 1) / (2 * rb))
        assert um("M2", "RRR") == pytest.approx(sum(1 / (j + 1) for j in range(1, r + 1)))
        assert um("M2", "ERR", theta=0.3) == pytest.approx(sum(j * 0.3 * 0.7 ** (j - 1) for j in range(1, r + 1)))
        assert um("M3", "RBP") == pytest.approx(sum(0.2 * 0.8 ** (k - 1) / k for k in range(1, len(a) + 1)))
        assert um("M3", "RR") == pytest.approx(user_model_measure([0] * len(a), "M3", "RR", norm=False,
                                                                  recall_base=rb))


def test_normalised_arr_equals_normalised_sum_of_reciprocal_ranks():
    """M3(AP) = M2(RR) / RB, so with the paper's normalisation ARR and RR coincide."""
    qrels, run = synthetic(seed=6)
    for cutoff in (None, 7):
        arr = per_query(imm.ARR @ cutoff if cutoff else imm.ARR, qrels, run)
        rr = imm.M2(dist="RR")
        rr = per_query(rr @ cutoff if cutoff else rr, qrels, run)
        assert arr == pytest.approx(rr, abs=1e-12)


def test_judged_only_and_empty_condensed_rankings():
    qrels, run = synthetic(seed=7)
    run["1"]["unjudged-top"] = 1e9   # ranks first, removed by judged_only
    run["2"] = {"u1": 2.0, "u2": 1.0}  # nothing judged: empty condensed ranking
    for model, dist in COMBOS:
        m = getattr(imm, model)(dist=dist, judged_only=True)
        got = per_query(m @ 10, qrels, run)
        for q in run:
            docs = sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)
            a = [int(qrels[q][d] >= 1) for d, _ in docs if d in qrels[q]]
            rb = sum(g >= 1 for g in qrels[q].values())
            want = user_model_measure(a, model, dist, recall_base=rb, cutoff=10)
            assert got[q] == pytest.approx(want, abs=1e-12), (str(m), q)
        assert got["2"] == 0.0


def test_docstring_examples():
    import doctest

    import irmeasures_markov.measures._carterette as module
    assert doctest.testmod(module).failed == 0


@pytest.mark.slow  # runs a documentation script (matplotlib)
def test_figure_script(tmp_path):
    """docs/scripts/make_carterette_fig1.py draws the distributions the measures use."""
    import runpy
    import sys
    from pathlib import Path

    pytest.importorskip("matplotlib")
    script = Path(__file__).resolve().parents[2] / "docs" / "scripts" / "make_carterette_fig1.py"
    mod = runpy.run_path(str(script))
    curves = mod["curves"]()
    for dist in ("RBP", "DCG", "RR"):   # static: F(k) is the infinite tail, F(1) = 1
        p, tail = curves[dist]
        assert tail[0] == pytest.approx(1.0) and np.all(np.diff(tail) <= 0)
        np.testing.assert_allclose(tail[:-1] - tail[1:], p[:-1], atol=1e-15)
    np.testing.assert_allclose(curves["AP"][1][0], mod["EXAMPLE"].sum() / mod["RECALL_BASE"])
    out = tmp_path / "fig.png"
    argv, sys.argv = sys.argv, ["make_carterette_fig1.py", "--out", str(out)]
    try:
        mod["main"]()
    finally:
        sys.argv = argv
    assert out.stat().st_size > 10_000


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 2), max_size=40), st.integers(0, 4)), min_size=1, max_size=6),
       st.sampled_from(COMBOS), st.one_of(st.none(), st.integers(1, 25)), st.booleans(), st.integers(1, 2))
def test_batch_kernel_equals_functional(queries, combo, cutoff, norm, rel):
    """The batch path (RelevanceBatch from a PreparedRun) against the functional API and brute force, on random
    multi-query runs (graded judgments, unjudged documents as grade 2 -> absent, empty rankings, RB = 0)."""
    from irmeasures_markov.measures import user_model_batch
    from irmeasures_markov.ranking import PreparedRun, QrelsIndex
    model, dist = combo
    qrels, run, want = {}, {}, []
    for i, (grades, extra) in enumerate(queries):
        q = str(i)
        qrels[q] = {f"x{j}": 1 for j in range(extra)}  # relevant, not retrieved
        qrels[q][f"n{i}"] = 0
        run[q] = {f"d{j}": float(len(grades) - j) for j in range(len(grades))}
        for j, g in enumerate(grades):
            if g < 2:
                qrels[q][f"d{j}"] = g * 2 if rel == 2 else g  # grades 0/1 (rel=1) or 0/2 (rel=2); 2 = unjudged
    prepared = PreparedRun(QrelsIndex(qrels), run)
    batch = prepared.batch(rel=rel, cutoff=cutoff)
    got = user_model_batch(batch, model, dist, norm=norm, cutoff=cutoff)
    for qi, q in enumerate(prepared.qids):
        grades = queries[int(q)][0]
        a = [int(g == 1) for g in grades]
        rb = sum(v >= rel for v in qrels[q].values())
        want = user_model_measure(a, model, dist, norm=norm, recall_base=rb, cutoff=cutoff)
        assert got[qi] == pytest.approx(want, abs=1e-12), (q, a, rb)
        independent = (brute_norm(a, model, dist, rb=rb, cutoff=cutoff) if norm
                       else brute(a[:cutoff] if cutoff else a, model, dist, rb=rb))
        assert got[qi] == pytest.approx(independent, abs=1e-12), (q, a, rb)


@pytest.mark.filterwarnings("ignore:.*no document with grade")   # generated queries with RB = 0 score 0
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 2), min_size=1, max_size=40), st.integers(0, 4)),
                min_size=1, max_size=5),
       st.one_of(st.none(), st.integers(1, 25)), st.booleans(), st.floats(0.05, 0.95))
def test_plugin_normalised_in_unit_interval_and_one_on_the_ideal(queries, cutoff, judged_only, theta):
    """All 24 combinations with norm=True through ir_measures: in [0, 1], equal to brute force, and 1 on
    each query's ideal ranking (RB relevant, then judged non-relevant documents; grade 2 = unjudged)."""
    qrels, run, rankings_of = {}, {}, {}
    for i, (grades, extra) in enumerate(queries):
        q = str(i)
        qrels[q] = {f"x{j}": 1 for j in range(extra)}   # relevant, not retrieved
        run[q] = {f"d{j}": float(len(grades) - j) for j in range(len(grades))}
        qrels[q].update({f"d{j}": g for j, g in enumerate(grades) if g < 2})
        rankings_of[q] = [int(g == 1) for g in grades if g < 2 or not judged_only]
        rb = sum(g == 1 for g in qrels[q].values())
        if rb:   # the ideal: every relevant document first, then judged non-relevant ones
            qi = f"{i}ideal"
            n = max(len(rankings_of[q]), rb)
            qrels[qi] = {f"r{j}": 1 for j in range(rb)} | {f"n{j}": 0 for j in range(n - rb)}
            run[qi] = {f"r{j}": 2.0 + n - j for j in range(rb)} | {f"n{j}": 1.0 - j / (n + 1) for j in range(n - rb)}
            rankings_of[qi] = [1] * rb + [0] * (n - rb)
    measures = []
    for model, dist in COMBOS:
        m = getattr(imm, model)(dist=dist, norm=True, judged_only=judged_only,
                                **({"theta": theta} if dist in ("RBP", "ERR") else {}))
        measures.append((m @ cutoff if cutoff else m, model, dist))
    got = {}
    for metric in imm.PROVIDER.iter_calc([m for m, _, _ in measures], qrels, run):
        got[metric.measure, metric.query_id] = metric.value
    for m, model, dist in measures:
        th = theta if dist in ("RBP", "ERR") else None
        for q, a in rankings_of.items():
            rb = sum(g == 1 for g in qrels[q].values())
            v = got[m, q]
            assert -1e-12 <= v <= 1 + 1e-12, (str(m), q)
            assert v == pytest.approx(brute_norm(a, model, dist, th, rb=rb, cutoff=cutoff), abs=1e-12), (str(m), q)
            if q.endswith("ideal"):
                assert v == pytest.approx(1.0, abs=1e-12), (str(m), q)
