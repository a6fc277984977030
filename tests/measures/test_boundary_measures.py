"""Boundary cases of the measure families (issue 13): short rankings, ill-conditioned chains, sampler diagnostics."""
from fractions import Fraction

import ir_measures
import numpy as np
import pytest
import pytrec_eval

import irmeasures_markov as imm
from irmeasures_markov.measures.stopping_time import browsing_model


def per_query(measure, qrels, run):
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


# ----------------------------------------------------------------------------------------------
# PH(user='P')@k on rankings shorter than k
# ----------------------------------------------------------------------------------------------

def test_ph_precision_padded_to_the_cutoff_is_trec_eval_p_at_k():
    """A 2-document ranking with both documents relevant: trec_eval's P@10 is 2/10."""
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    padded = imm.PH(user="P", pad_to_cutoff=True) @ 10
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"P_10"}).evaluate(run)["q"]["P_10"]
    assert ref == pytest.approx(0.2)
    assert per_query(padded, qrels, run)["q"] == pytest.approx(ref, abs=1e-15)
    assert per_query(ir_measures.P @ 10, qrels, run)["q"] == pytest.approx(0.2, abs=1e-15)
    # the default is the paper's model: the DFBM user reads the N = 2 retrieved documents
    assert per_query(imm.PH(user="P") @ 10, qrels, run)["q"] == pytest.approx(1.0, abs=1e-15)
    assert str(ir_measures.parse_measure("PH(user='P',pad_to_cutoff=True)@10")) == str(padded)
    assert ir_measures.parse_measure("PH(user='P',pad_to_cutoff=False)@10") == imm.PH(user="P") @ 10


def random_collection(seed, n_topics=12, max_len=15):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(n_topics):
        q = f"q{t}"
        docs = [f"d{i}" for i in range(30)]
        qrels[q] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 20, replace=False)}
        qrels[q]["d0"] = 1
        n = int(rng.integers(1, max_len + 1))
        chosen = rng.choice(docs, n, replace=False)
        run[q] = {str(d): float(s) for d, s in zip(chosen, rng.permutation(n) + rng.random(n))}
    return qrels, run


@pytest.mark.parametrize("k", [1, 5, 10, 20])
def test_ph_precision_padded_equals_pytrec_eval_on_random_rankings(k):
    qrels, run = random_collection(seed=k)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {f"P_{k}"}).evaluate(run)
    padded = per_query(imm.PH(user="P", pad_to_cutoff=True) @ k, qrels, run)
    plain = per_query(imm.PH(user="P") @ k, qrels, run)
    for q in run:
        assert padded[q] == pytest.approx(ref[q][f"P_{k}"], abs=1e-14)
        n = min(k, len(run[q]))
        assert plain[q] == pytest.approx(ref[q][f"P_{k}"] * k / n, abs=1e-14)
        if len(run[q]) >= k:
            assert plain[q] == padded[q]


@pytest.mark.parametrize("params", [
    dict(user="AP"), dict(user="DCG", gain="grade"), dict(user="RBP", p=0.6),
    dict(user="RBP", p=0.6, tail="inf"), dict(user="ERR"),
    dict(browse="RWBM", p=0.5, q=0.25, loss=0.25), dict(browse="RWBM", p=0.5, q=0.25, tail="inf"),
    dict(browse="RWBM", p=0.6, q=0.3, order=1, top="forward"),
])
def test_padding_is_browsing_non_relevant_documents(params):
    """pad_to_cutoff=True equals the functional API on the grades completed with zeros (every model)."""
    qrels, run = random_collection(seed=3, max_len=8)
    k = 10
    ours = per_query(imm.PH(pad_to_cutoff=True, **params) @ k, qrels, run)
    plain = per_query(imm.PH(**params) @ k, qrels, run)
    for q in run:
        ranked = sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)
        grades = [qrels[q].get(d, 0) for d, _ in ranked][:k]
        g_max = max(1, max(qrels[q].values())) if params.get("user") == "ERR" else None
        expected = browsing_model(grades + [0] * (k - len(grades)), g_max=g_max, **params).value()
        assert ours[q] == pytest.approx(expected, rel=1e-12, abs=1e-15)
        if params.get("user") in ("AP", "DCG") or params.get("tail") == "inf":
            # the AP user stops at the last relevant document, DCG gains nothing from non-relevant
            # ones, and tail='inf' already continues the ranking with non-relevant documents
            assert ours[q] == pytest.approx(plain[q], rel=1e-12, abs=1e-15)


def test_pad_to_cutoff_needs_a_cutoff():
    with pytest.raises(ValueError, match="pad_to_cutoff=True .* give one"):
        imm.PROVIDER.calc_aggregate([imm.PH(user="P", pad_to_cutoff=True)], {"q": {"a": 1}}, {"q": {"a": 1.0}})


def test_stopping_time_docs_state_both_precision_conventions():
    from pathlib import Path
    doc = Path(__file__).resolve().parents[2].joinpath("docs", "stopping-time.md").read_text("utf-8")
    assert "PH(user='P',pad_to_cutoff=True)@k = P@k" in doc
    assert "PH(user='P')@k = P@k for rankings with at least k documents" in doc


# ----------------------------------------------------------------------------------------------
# P@H on nearly non-absorbing chains (p + q = 1): exact rational reference
# ----------------------------------------------------------------------------------------------

def exact_chain(grades, p, q, top, p_rel=None, q_rel=None, z=Fraction(1)):
    """(forward, backward, stop) of the RWBM chain in exact arithmetic, moves weighted by z."""
    n = len(grades)

    def pair(a, b):
        # p + q == 1 in floating point means a user who never stops there (the model's stop is 1 - p - q = 0)
        a = Fraction(a)
        return a, (1 - a if float(a) + b == 1.0 else Fraction(b))

    plain, relevant = pair(p, q), pair(p if p_rel is None else p_rel, q if q_rel is None else q_rel)
    fwd = [(relevant if g else plain)[0] for g in grades]
    bwd = [(relevant if g else plain)[1] for g in grades]
    if top == "forward":
        fwd[0] += bwd[0]
    bwd[0] = Fraction(0)
    fwd[n - 1] = Fraction(0)
    stop = [1 - f - b for f, b in zip(fwd, bwd)]
    return [z * f for f in fwd], [z * b for b in bwd], stop


def _principal_minors(fwd, bwd):
    """(theta, phi): the leading and trailing principal minors of M = I - Q, Q tridiagonal with a zero diagonal.

    theta[i] is the determinant of M's leading i x i block (theta[0] = 1), phi[i] that of its trailing block
    from row i on (phi[n + 1] = 1); both are 1-based, as in Usmani's formulas.
    """
    n = len(fwd)
    theta = [Fraction(1), Fraction(1)]
    for i in range(1, n):
        theta.append(theta[-1] - fwd[i - 1] * bwd[i] * theta[-2])
    phi = [Fraction(0)] * (n + 2)
    phi[n + 1], phi[n] = Fraction(1), Fraction(1)
    for i in range(n - 1, 0, -1):
        phi[i] = phi[i + 1] - fwd[i - 1] * bwd[i] * phi[i + 2]
    return theta, phi


def exact_fundamental(fwd, bwd):
    """Row 1 and diagonal of N = (I - Q)^{-1} for tridiagonal Q, from the principal minors.

    theta_i: leading minors of M = I - Q, phi_i: trailing ones; (M^{-1})_jj = theta_{j-1} phi_{j+1} / theta_n
    and (M^{-1})_1j = prod_{i<j} fwd_i phi_{j+1} / theta_n (Usmani's formulas).
    """
    n = len(fwd)
    theta, phi = _principal_minors(fwd, bwd)
    det = theta[n]
    diag = [theta[j - 1] * phi[j + 1] / det for j in range(1, n + 1)]
    row, prod = [], Fraction(1)
    for j in range(1, n + 1):
        row.append(prod * phi[j + 1] / det)
        prod *= fwd[j - 1]
    return row, diag


def exact_order2(grades, p, q, loss, top, **rel):
    fwd, bwd, _ = exact_chain(grades, p, q, top, **rel)
    row, diag = exact_fundamental(fwd, bwd)
    c = 1 - Fraction(loss)
    gain = sum(r / ((1 - c) * d + c) for g, r, d in zip(grades, row, diag) if g)
    return gain / sum(row)


CHAINS = [  # (p, q, loss, top, p_rel, q_rel)
    (0.3, 0.7, 0.5, "forward", None, None),
    (0.4, 0.6, 0.5, "forward", None, None),
    (0.2, 0.8, 0.5, "forward", None, None),
    (0.25, 0.75, 0.5, "forward", None, None),
    (0.375, 0.625, 0.5, "forward", None, None),
    (0.5, 0.5, 0.5, "forward", None, None),
    (0.625, 0.375, 0.25, "forward", None, None),
    (0.25, 0.75, 0.0, "forward", None, None),
    (0.3125, 0.6875, 1.0, "forward", None, None),
    (0.25, 0.625, 0.5, "stop", None, None),
    (0.5, 0.25, 0.25, "forward", 0.25, 0.75),
    (0.5, 0.5, 0.5, "forward", 0.25, 0.625),
]


def grades_for(n, seed):
    rng = np.random.default_rng(seed)
    g = (rng.random(n) < 0.3).astype(int)
    g[0] = 1
    return g.tolist()


@pytest.mark.parametrize("n", [10, 40, 50, pytest.param(200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("chain", CHAINS)
def test_order2_on_nearly_non_absorbing_chains_is_exact(n, chain):
    """E[sum g] / E[H] to 1e-10 relative against exact rationals, including p + q = 1 with the drift to the top
    (expected absorption times up to 3^200), where the LAPACK path raised 'singular' from N = 50 on."""
    p, q, loss, top, p_rel, q_rel = chain
    for seed in (0, 1):
        grades = grades_for(n, seed + n)
        exact = float(exact_order2(grades, p, q, loss, top, p_rel=p_rel, q_rel=q_rel))
        model = browsing_model(grades, browse="RWBM", p=p, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top)
        got = model.expectation(2)
        assert got == pytest.approx(exact, rel=1e-10), (grades, exact, got)


def exact_inverse(fwd, bwd):
    """N = (I - Q)^{-1} of a tridiagonal Q, entry by entry from the principal minors."""
    n = len(fwd)
    theta, phi = _principal_minors(fwd, bwd)
    inv = [[Fraction(0)] * n for _ in range(n)]
    for j in range(1, n + 1):
        prod = Fraction(1)
        for k in range(j, n + 1):          # j <= k: products of forward moves
            inv[j - 1][k - 1] = prod * theta[j - 1] * phi[k + 1] / theta[n]
            prod *= fwd[k - 1]
        prod = Fraction(1)
        for k in range(j - 1, 0, -1):      # k < j: products of backward moves
            prod *= bwd[k]
            inv[j - 1][k - 1] = prod * theta[k - 1] * phi[j + 1] / theta[n]
    return inv


@pytest.mark.slow  # exact rational references
@pytest.mark.parametrize("n", [10, 40, 50])
@pytest.mark.parametrize("chain", CHAINS[:4] + CHAINS[7:8])
def test_subtraction_free_elimination_is_exact_at_every_node(n, chain):
    """The order-1 integrand's parts at z = 1 - w, w in {0, 2^-60, 1/1000, 1/2}: row of N^z, its diagonal and
    psi^z = N^z s, each to 1e-10 relative against exact rationals (Usmani's minors)."""
    from irmeasures_markov.core._birth_death import stable_parts
    p, q, _, top, p_rel, q_rel = chain
    grades = grades_for(n, n)
    model = browsing_model(grades, browse="RWBM", p=p, q=q, p_rel=p_rel, q_rel=q_rel, top=top)
    for w in (Fraction(0), Fraction(1, 2 ** 60), Fraction(1, 1000), Fraction(1, 2)):
        fwd, bwd, stop = exact_chain(grades, p, q, top, p_rel=p_rel, q_rel=q_rel, z=1 - w)
        inv = exact_inverse(fwd, bwd)
        psi = [sum(a * s for a, s in zip(r, stop)) for r in inv]
        h, e, g = stable_parts(model.forward, model.backward, model.stop, np.array([0, n]), np.array([0]),
                               np.array([float(w)]), need_absorption=True)
        np.testing.assert_allclose(h[0] / e[0], [float(x) for x in inv[0]], rtol=1e-10, atol=0)
        np.testing.assert_allclose(1 / e[0], [float(inv[j][j]) for j in range(n)], rtol=1e-10, atol=0)
        np.testing.assert_allclose(g[0] / e[0], [float(x) for x in psi], rtol=1e-10, atol=0)


@pytest.mark.parametrize("chain", CHAINS)
def test_order1_subtraction_free_path_agrees_with_lapack_where_both_are_exact(chain, monkeypatch):
    """Moderately ill-conditioned chains (expected absorption times 1e2..1e4): the w-quadrature of the
    subtraction-free path equals the LAPACK generating function, and the batch of stacked queries mixes both."""
    import irmeasures_markov.core._birth_death as bd
    p, q, loss, top, p_rel, q_rel = chain
    for n in (6, 8, 12):
        grades = grades_for(n, n)
        model = browsing_model(grades, browse="RWBM", p=p, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top)
        monkeypatch.setattr(bd, "WELL_CONDITIONED_VISITS", 1e300)
        lapack = model.expectation(1)
        monkeypatch.setattr(bd, "WELL_CONDITIONED_VISITS", 0.5)
        stable = model.expectation(1)
        assert stable == pytest.approx(lapack, rel=1e-11)
        monkeypatch.undo()


def test_stacked_queries_mix_both_paths():
    """A run with one well-conditioned and one nearly non-absorbing query: each block goes its own way."""
    qrels = {"a": {"d1": 1, "d5": 1}, "b": {"d2": 1}}
    run = {"a": {f"d{i}": float(-i) for i in range(1, 61)}, "b": {f"d{i}": float(-i) for i in range(1, 9)}}
    for order in (1, 2):
        for p, q in ((0.3, 0.7), (0.5, 0.25)):
            measure = imm.PH(browse="RWBM", p=p, q=q, loss=0.5, top="forward", order=order)
            got = per_query(measure, qrels, run)
            for qid in run:
                ranked = sorted(run[qid], key=lambda d: run[qid][d], reverse=True)
                grades = [qrels[qid].get(d, 0) for d in ranked]
                alone = browsing_model(grades, browse="RWBM", p=p, q=q, loss=0.5, top="forward").expectation(order)
                assert got[qid] == pytest.approx(alone, rel=1e-12)
    exact = float(exact_order2([qrels["a"].get(f"d{i}", 0) for i in range(1, 61)], 0.3, 0.7, 0.5, "forward"))
    assert got_order2(qrels, run) == pytest.approx(exact, rel=1e-10)


def got_order2(qrels, run):
    return per_query(imm.PH(browse="RWBM", p=0.3, q=0.7, loss=0.5, top="forward"), qrels, run)["a"]


def test_step_recursion_refuses_nearly_non_absorbing_chains():
    """It used to loop for ~(7/3)^50 steps; now it says why and names the exact alternative."""
    model = browsing_model(grades_for(50, 1), browse="RWBM", p=0.3, q=0.7, loss=0.5, top="forward")
    with pytest.raises(ValueError, match=r"step recursion would take about .* steps.*method='generating'"):
        model.expectation(1, method="recursion")
    assert model.expectation(1, method="generating") == model.expectation(1) > 0
    stuck = imm.BrowsingModel([1.0, 0.0], [0.0, 1.0], [1.0, 0.0], order=1)
    for method in ("recursion", "generating"):
        with pytest.raises(ValueError, match="singular"):
            stuck.expectation(1, method=method)
    with pytest.raises(ValueError, match="singular"):
        stuck.expectation(2)


@pytest.mark.slow  # high-precision (mpmath) reference
def test_order1_integral_against_high_precision_quadrature():
    """E[sum g / H] for p + q = 1 (expected absorption time ~(7/3)^12): the same generating-function integral
    evaluated with 30-digit arithmetic (dense solves, no cancellation left) and mpmath's Gauss-Legendre."""
    mp = pytest.importorskip("mpmath")
    n, p, loss = 12, 0.3, 0.5
    grades = grades_for(n, 1)
    with mp.workdps(30):
        P = [mp.mpf(p)] * n
        Qb = [1 - mp.mpf(p)] * n
        P[0], Qb[0], P[-1] = P[0] + Qb[0], mp.mpf(0), mp.mpf(0)
        S = [1 - a - b for a, b in zip(P, Qb)]
        c = 1 - mp.mpf(loss)

        def integrand(w):
            z = 1 - w
            M = mp.eye(n)
            for i in range(n):
                if i + 1 < n:
                    M[i, i + 1] = -z * P[i]
                if i:
                    M[i, i - 1] = -z * Qb[i]
            N = M ** -1
            return sum(N[0, j] * sum(N[j, k] * S[k] for k in range(n)) / ((1 - c) * N[j, j] + c)
                       for j in range(n) if grades[j])

        pieces = [mp.mpf(0)] + [mp.mpf(2) ** -k for k in range(24, -1, -1)]
        reference = float(mp.quad(integrand, pieces, method="gauss-legendre", maxdegree=2))
    got = browsing_model(grades, browse="RWBM", p=p, q=1 - p, loss=loss, top="forward").expectation(1)
    assert got == pytest.approx(reference, rel=1e-10)
