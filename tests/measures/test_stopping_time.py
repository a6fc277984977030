"""P@H (SPEC §3): reference values, classical identities, exact vs brute force and simulation."""
import math

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov  # noqa: F401  (registers PH)
from irmeasures_markov.core import birth_death_average_reward, birth_death_average_reward_recursion
from irmeasures_markov.core._birth_death import (
    birth_death_discounted_visits,
    birth_death_inverse_diagonal,
    birth_death_solve,
    birth_death_solve_pair,
)
from irmeasures_markov.measures.stopping_time import (
    BrowsingModel,
    browsing_model,
    compare_distributions,
    k_infinite,
    path_at_h,
    path_at_h_batch,
    rbp_normaliser,
)
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

R = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
S = [0, 1, 1, 1, 1, 0, 0, 0, 0, 0]


# ---------------------------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------------------------

def brute_force(model, tol=1e-15, max_steps=3000):
    """Exact (E[sum g / f(H)], E[sum g], E[H]) by propagating every path state (pos, visit counts, gain)."""
    n, c = model.n, 1.0 - model.loss
    track = model.loss > 0          # visit counts only matter with utility loss
    fw, bw, stop = model.forward, model.backward, model.stop
    states = {(0, (0,) * (n if track else 0), 0.0): 1.0}
    e1 = eg = eh = 0.0
    step = 0
    while states and step < max_steps:
        step += 1
        new = {}
        for (pos, cnt, acc), pr in states.items():
            if track:
                acc2 = acc + model.gain[pos] * c ** cnt[pos]
                cnt2 = cnt[:pos] + (cnt[pos] + 1,) + cnt[pos + 1:]
            else:
                acc2, cnt2 = acc + model.gain[pos], cnt
            if stop[pos] > 0:
                ps = pr * stop[pos]
                e1 += ps * (acc2 / step if model.f == "h" else acc2)
                eg += ps * acc2
                eh += ps * step
            for nxt, pp in ((pos + 1, fw[pos]), (pos - 1, bw[pos])):
                if pp > 0:
                    key = (nxt, cnt2, round(acc2, 13))
                    new[key] = new.get(key, 0.0) + pr * pp
        states = {k: v for k, v in new.items() if v > tol}
    return e1, eg, eh


def direct_ap_retrieved(r):
    r = np.asarray(r)
    if r.sum() == 0:
        return 0.0
    prec = np.cumsum(r) / np.arange(1, r.size + 1)
    return float((prec * r).sum() / r.sum())


def direct_err(grades, g_max):
    Rs = (2.0 ** np.asarray(grades, dtype=float) - 1) / 2.0 ** g_max
    Rs[-1] = 1.0                       # SPEC: the user stops at rank N with probability 1
    out, keep = 0.0, 1.0
    for i, Ri in enumerate(Rs, start=1):
        out += keep * Ri / i
        keep *= 1 - Ri
    return out


# ---------------------------------------------------------------------------------------------
# reference values of SPEC §3 / the paper
# ---------------------------------------------------------------------------------------------

class TestReferenceValues:
    def test_dfbm_precision(self):
        for run in (R, S):
            m = browsing_model(run, browse="DFBM")
            assert m.expectation(1) == pytest.approx(0.4, abs=1e-15)
            assert m.expectation(2) == pytest.approx(0.4, abs=1e-15)
            d = m.distribution()
            assert d.exact and d.support.tolist() == [0.4] and d.probabilities.tolist() == [1.0]

    def test_ap_like_sfbm_order1(self):
        assert browsing_model(R, user="AP").value() == pytest.approx((1 + 2 / 4 + 3 / 7 + 4 / 10) / 4, abs=1e-15)
        assert browsing_model(S, user="AP").value() == pytest.approx((1 / 2 + 2 / 3 + 3 / 4 + 4 / 5) / 4, abs=1e-15)
        assert round(browsing_model(R, user="AP").value(), 2) == 0.58
        assert round(browsing_model(S, user="AP").value(), 2) == 0.68

    def test_rbp_like_order2(self):
        vals = [browsing_model(x, user="RBP", p=0.5).value() for x in (R, S)]
        assert [round(v, 2) for v in vals] == [0.57, 0.47]
        for x, v in zip((R, S), vals):
            direct = sum(ri * 0.5 ** i for i, ri in enumerate(x)) / ((1 - 0.5 ** 10) / (1 - 0.5))
            assert v == pytest.approx(direct, abs=1e-15)
            # the SFBM with p = 0.5 is the same model
            assert browsing_model(x, browse="SFBM", p=0.5).value() == pytest.approx(direct, abs=1e-15)

    @pytest.mark.parametrize("p,q", [(p, q) for p in (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95)
                                     for q in (0.0, 0.04, 0.15, 0.3, 0.45) if p + q <= 1])
    def test_appendix_rational_function(self, p, q):
        rational = (1 - 4 * p * q + p ** 3 + 3 * p ** 2 * q ** 2 - p ** 4 * q + p ** 5) / \
                   (1 - 5 * p * q + 6 * p ** 2 * q ** 2 - p ** 3 * q ** 3)
        m = browsing_model([1, 0, 0, 1, 0, 1], browse="RWBM", p=p, q=q)
        eg, eh = m.expected_gain_and_steps()
        assert eg == pytest.approx(rational, rel=1e-12)

    @pytest.mark.parametrize("p,q", [(0.5, 0.25), (0.3, 0.3), (0.8, 0.1), (0.45, 0.5), (0.9, 0.0), (0.2, 0.0)])
    def test_k_infinite(self, p, q):
        closed = (2 * p - 1 + math.sqrt(1 - 4 * p * q)) / (2 * p * (1 - p - q))
        assert k_infinite(p, q) == pytest.approx(closed, rel=1e-14)
        # an empty ranking... of one non-relevant document followed by the endless tail
        m = browsing_model([0], browse="RWBM", p=p, q=q, tail="inf")
        assert m.expected_gain_and_steps()[1] == pytest.approx(closed, rel=1e-12)
        # a long finite homogeneous ranking converges to it
        long = browsing_model(np.zeros(3000, int), browse="RWBM", p=p, q=q)
        assert long.expected_gain_and_steps()[1] == pytest.approx(closed, rel=1e-9)
        if q == 0:
            assert closed == pytest.approx(1 / (1 - p))

    @pytest.mark.parametrize("N", [1, 2, 7, 30])
    def test_k_p_n(self, N):
        for p in (0.1, 0.5, 0.93, 1.0):
            m = browsing_model(np.zeros(N, int), browse="SFBM", p=p)
            assert m.expected_gain_and_steps()[1] == pytest.approx(rbp_normaliser(p, N), rel=1e-13)


# ---------------------------------------------------------------------------------------------
# classical instantiations on random rankings
# ---------------------------------------------------------------------------------------------

binary_runs = st.lists(st.integers(0, 1), min_size=1, max_size=40)
graded_runs = st.lists(st.integers(0, 3), min_size=1, max_size=40)


class TestClassicalMeasures:
    @given(binary_runs)
    def test_precision(self, r):
        assert path_at_h(r, user="P") == pytest.approx(sum(r) / len(r), abs=1e-14)
        assert path_at_h(r, user="P", order=1) == pytest.approx(sum(r) / len(r), abs=1e-14)

    @given(binary_runs)
    def test_ap_over_retrieved_relevant(self, r):
        assert path_at_h(r, user="AP") == pytest.approx(direct_ap_retrieved(r), abs=1e-13)

    @given(graded_runs, st.floats(0.05, 0.97))
    def test_rbp_n_and_infinity(self, r, p):
        r = np.asarray(r)
        g = (r >= 1).astype(float)
        disc = p ** np.arange(r.size)
        assert path_at_h(r, user="RBP", p=p) == pytest.approx((g @ disc) / rbp_normaliser(p, r.size), rel=1e-12,
                                                              abs=1e-15)
        assert path_at_h(r, user="RBP", p=p, tail="inf") == pytest.approx((1 - p) * (g @ disc), rel=1e-12, abs=1e-15)

    @given(graded_runs, st.sampled_from([2, 3, math.e, 10]))
    def test_dcg(self, r, b):
        r = np.asarray(r)
        i = np.arange(1, r.size + 1)
        direct = np.sum(r / np.maximum(1, np.log(i) / np.log(b)))
        assert path_at_h(r, user="DCG", gain="grade", b=b) == pytest.approx(direct, rel=1e-12, abs=1e-15)

    @given(graded_runs)
    def test_err(self, r):
        gm = max(1, max(r))
        assert path_at_h(r, user="ERR") == pytest.approx(direct_err(r, gm), rel=1e-12)

    def test_err_binary_is_half_stop(self):
        m = browsing_model([0, 1, 1, 0], user="ERR")
        assert m.forward.tolist() == [1.0, 0.5, 0.5, 0.0]


# ---------------------------------------------------------------------------------------------
# exact methods vs independent computations
# ---------------------------------------------------------------------------------------------

rw_params = st.tuples(st.lists(st.integers(0, 2), min_size=1, max_size=4), st.floats(0.05, 0.6),
                      st.floats(0.0, 1.0), st.sampled_from([0.0, 0.25, 0.6, 1.0]),
                      st.sampled_from(["stop", "forward"]), st.sampled_from(["h", "1"]))


class TestExactMethods:
    @settings(max_examples=25, deadline=None)
    @given(rw_params)
    def test_rwbm_against_brute_force(self, args):
        grades, p, qfrac, loss, top, f = args
        q = qfrac * (0.8 - p)
        m = browsing_model(grades, browse="RWBM", p=p, q=q, loss=loss, top=top, f=f, gain="grade")
        e1, eg, eh = brute_force(m)
        assert m.expectation(1) == pytest.approx(e1, rel=1e-9, abs=1e-12)
        assert m.expectation(1, method="recursion") == pytest.approx(e1, rel=1e-9, abs=1e-12)
        got_g, got_h = m.expected_gain_and_steps()
        assert got_g == pytest.approx(eg, rel=1e-9, abs=1e-12)
        assert got_h == pytest.approx(eh, rel=1e-9)

    def test_relevance_dependent_and_callables(self):
        grades = [1, 0, 2, 1]
        m = browsing_model(grades, browse="RWBM", p=0.6, q=0.2, p_rel=0.3, q_rel=0.5, loss=0.3)
        assert m.forward.tolist() == [0.3, 0.6, 0.3, 0.0]
        assert m.backward.tolist() == [0.0, 0.2, 0.5, 0.5]
        m2 = browsing_model(grades, browse="RWBM", p=lambda i, g: np.where(g >= 1, 0.3, 0.6),
                            q=lambda i, g: np.where(g >= 1, 0.5, 0.2), loss=0.3)
        assert np.array_equal(m.forward, m2.forward) and np.array_equal(m.backward, m2.backward)
        e1, eg, _ = brute_force(m)
        assert m.expectation(1) == pytest.approx(e1, rel=1e-9)
        assert m.expected_gain_and_steps()[0] == pytest.approx(eg, rel=1e-9)

    def test_visit_count_formula_matches_dense_fundamental_matrix(self, rng):
        n, lam = 12, 0.4
        fw = rng.uniform(0.2, 0.6, n)
        bw = rng.uniform(0, 0.35, n)
        fw[-1] = bw[0] = 0
        gain = rng.integers(0, 3, n).astype(float)
        m = BrowsingModel(fw, bw, gain, loss=lam)
        Q = np.diag(fw[:-1], 1) + np.diag(bw[1:], -1)
        N = np.linalg.inv(np.eye(n) - Q)
        h, fret = N[0] / np.diag(N), 1 - 1 / np.diag(N)
        assert m.expected_gain_and_steps()[0] == pytest.approx(np.sum(gain * h / (1 - (1 - lam) * fret)), rel=1e-12)
        assert m.expected_gain_and_steps()[1] == pytest.approx(N[0].sum(), rel=1e-12)

    def test_lapack_inverse_diagonal_of_stacked_chains(self, rng):
        n = 40
        fw, bw = rng.uniform(0, 0.6, n), rng.uniform(0, 0.4, n)
        fw[[9, 25, n - 1]] = 0          # three uncoupled chains ...
        bw[[0, 10, 26]] = 0
        bw[5] = 0                      # ... one with a one-way link inside
        d = np.ones(n)
        d[-1] = 0.7                    # a folded tail
        M = np.diag(d) - np.diag(fw[:-1], 1) - np.diag(bw[1:], -1)
        np.testing.assert_allclose(birth_death_inverse_diagonal(fw, bw, d), np.diag(np.linalg.inv(M)), rtol=1e-13)
        assert birth_death_inverse_diagonal([0.0], [0.0]).tolist() == [1.0]
        with pytest.raises(ValueError, match="never absorbed"):
            birth_death_inverse_diagonal([1.0, 0.0], [0.0, 1.0])

    @pytest.mark.parametrize("seed", range(8))
    def test_step_recursion_equals_generating_function(self, seed):
        # SPEC §3's step recursion and the generating-function integral are independent exact methods
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 30))
        grades = rng.integers(0, 3, n)
        p = rng.uniform(0.05, 0.9)
        q = rng.uniform(0.0, 0.99 - p)
        p_rel = rng.uniform(0.0, 1.0 - q)
        for loss in (0.0, 0.3, 1.0):
            for top in ("stop", "forward"):
                for f in ("h", "1"):
                    m = browsing_model(grades, browse="RWBM", p=p, q=q, p_rel=p_rel, loss=loss, top=top, f=f,
                                       gain="grade")
                    rec = m.expectation(1, method="recursion")
                    assert rec == pytest.approx(m.expectation(1), rel=1e-12, abs=3e-12), (loss, top, f)
                    assert rec == pytest.approx(m.expectation(1, method="generating"), rel=1e-12, abs=3e-12)

    def test_order1_methods_on_forward_models(self):
        for m in (browsing_model(R, user="AP"), browsing_model(S, p=0.6, p_rel=0.3, order=1),
                  browsing_model(R, user="ERR")):
            closed = m.expectation(1)
            assert m.expectation(1, method="generating") == pytest.approx(closed, rel=1e-13)
            assert m.expectation(1, method="recursion") == pytest.approx(closed, rel=1e-12, abs=1e-12)

    def test_core_birth_death_kernels_against_dense(self, rng):
        # three stacked chains (forward 0 at each last state, backward 0 at each first state)
        n = 23
        fw, bw = rng.uniform(0, 0.6, n), rng.uniform(0, 0.35, n)
        fw[[6, 14, n - 1]] = 0
        bw[[0, 7, 15]] = 0
        starts = [0, 7, 15]
        d = np.ones(n)
        d[14] = 0.8
        M = np.diag(d) - np.diag(fw[:-1], 1) - np.diag(bw[1:], -1)
        N = np.linalg.inv(M)
        rhs = rng.normal(size=(n, 2))
        np.testing.assert_allclose(birth_death_solve(fw, bw, rhs, diag=d), N @ rhs, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(birth_death_solve(fw, bw, rhs[:, 0], diag=d, transpose=True), N.T @ rhs[:, 0],
                                   rtol=1e-12, atol=1e-14)
        x, y = birth_death_solve_pair(fw, bw, rhs[:, 0], rhs[:, 1], diag=d)
        np.testing.assert_allclose(x, N @ rhs[:, 0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(y, N.T @ rhs[:, 1], rtol=1e-12, atol=1e-14)
        row = N[starts].sum(axis=0)     # blocks are uncoupled: each block holds its start's row
        visits, disc = birth_death_discounted_visits(fw, bw, starts, 0.35, diag=d)
        np.testing.assert_allclose(visits, row, rtol=1e-12)
        np.testing.assert_allclose(disc, row / (0.65 * np.diag(N) + 0.35), rtol=1e-12)
        # the generating-function terms summed per block equal the per-block recursion
        reward = rng.uniform(0, 2, n)
        terms = birth_death_average_reward(fw, bw, reward, starts, 0.4)
        for a, b in ((0, 7), (7, 15), (15, n)):
            rec = birth_death_average_reward_recursion(fw[a:b], bw[a:b], reward[a:b], 0, 0.4)
            assert terms[a:b].sum() == pytest.approx(rec, rel=1e-11, abs=1e-12)
        # without 1/H the recursion gives the discounted visit-count formula
        rec = birth_death_average_reward_recursion(fw[:7], bw[:7], reward[:7], 2, 0.4, average=False)
        _, disc = birth_death_discounted_visits(fw[:7], bw[:7], [2], 0.4)
        assert rec == pytest.approx(reward[:7] @ disc, rel=1e-11)
        for n_small in (0, 1, 2):
            z = np.zeros(n_small)
            assert birth_death_solve(z, z, np.ones(n_small)).tolist() == [1.0] * n_small
            assert [a.tolist() for a in birth_death_solve_pair(z, z, np.ones(n_small), np.ones(n_small))] == \
                [[1.0] * n_small] * 2
        with pytest.raises(ValueError, match="never absorbed"):
            birth_death_solve([1.0, 0.0], [0.0, 1.0], [1.0, 1.0])
        with pytest.raises(ValueError, match="never absorbed"):
            birth_death_average_reward_recursion([1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0])
        with pytest.raises(ValueError, match="`discount` must be in"):
            birth_death_discounted_visits(fw, bw, [0], 1.5)
        with pytest.raises(ValueError, match="`starts` must be states"):
            birth_death_discounted_visits(fw, bw, [n])

    def test_singular_chain_is_rejected(self):
        m = BrowsingModel([1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1, 0, 1])
        for order in (1, 2):
            with pytest.raises(ValueError, match="never absorbed"):
                m.expectation(order)
        with pytest.raises(ValueError, match="never absorbed"):
            m.expectation(1, method="recursion")
        with pytest.raises(ValueError, match="never absorbed"):
            BrowsingModel([1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1, 0, 1], loss=0.5).expectation(2)

    def test_long_ranking_order1_needs_many_nodes(self):
        # p + q = 0.99: E[H] in the hundreds; still agrees with the dense generating function sum
        n = 200
        m = browsing_model(np.tile([1, 0, 0, 0], n // 4), browse="RWBM", p=0.6, q=0.39)
        v = m.simulate(200_000, seed=5)
        assert abs(m.expectation(1) - v.mean()) < 4 * v.std() / math.sqrt(v.size)

    def test_forward_distribution_variance_matches_appendix(self):
        # appendix B: Var_1[T(H)] for SFBM with constant p, f = 1
        for run, p in ((R, 0.5), (S, 0.7), ([1, 1, 0, 1, 0, 1, 1], 0.35)):
            r = np.asarray(run, dtype=float)
            N = r.size
            var = sum(r[m - 1] * p ** (m - 1) * (1 - p ** (m - 1)) *
                      (r[m - 1] + 2 * sum(r[i - 1] * p ** (i - m) for i in range(m + 1, N + 1)))
                      for m in range(2, N + 1))
            m = browsing_model(run, p=p, f="1")
            assert m.variance() == pytest.approx(var, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------------------------

def _random_rwbm(seed, loss):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    grades = rng.integers(0, 3, n)
    p = rng.uniform(0.3, 0.7)
    q = rng.uniform(0.05, 0.95 - p)
    return browsing_model(grades, browse="RWBM", p=p, q=q, p_rel=rng.uniform(0.1, 1 - q), loss=loss,
                          gain="grade", top=["stop", "forward"][seed % 2])


try:
    import numba  # noqa: F401
    ENGINES = ["numpy", "numba"]
except ImportError:  # the compiled engine is optional
    ENGINES = ["numpy"]


class TestSimulation:
    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("seed,loss", [(1, 0.0), (2, 0.0), (3, 0.25), (4, 0.6), (5, 1.0)])
    def test_exact_within_four_standard_errors(self, seed, loss, engine):
        m = _random_rwbm(seed, loss)
        n = 1_000_000
        vals, steps = m.simulate(n, seed=seed, return_steps=True, engine=engine)
        sums = vals * steps
        for exact, sample in ((m.expectation(1), vals), (m.expected_gain_and_steps()[0], sums),
                              (m.expected_gain_and_steps()[1], steps)):
            se = sample.std() / math.sqrt(n)
            assert abs(sample.mean() - exact) < 4 * se, (exact, sample.mean(), se)

    @pytest.mark.parametrize("engine", ENGINES)
    def test_same_seed_same_users(self, engine):
        m = _random_rwbm(7, 0.3)
        a, b, c = (m.simulate(50_000, seed=s, engine=engine) for s in (11, 11, 12))
        assert np.array_equal(a, b) and not np.array_equal(a, c)
        ra, rb = (m.simulate(3000, seed=np.random.default_rng(5), engine=engine) for _ in range(2))
        assert np.array_equal(ra, rb)

    def test_unknown_engine(self):
        with pytest.raises(ValueError, match="`engine` must be one of"):
            _random_rwbm(1, 0.0).simulate(10, engine="gpu")

    def test_forward_exact_distribution_against_simulation(self):
        m = browsing_model(R, user="AP")
        d = m.distribution()
        sim = np.sort(m.simulate(200_000, seed=1))
        F_emp = np.searchsorted(sim, d.support + 1e-12, side="right") / sim.size
        # DKW: P(sup|F_n - F| > eps) <= 2 exp(-2 n eps^2); eps = 0.006 gives < 1e-6
        assert np.max(np.abs(F_emp - d.cdf_values)) < 0.006
        assert d.mean() == pytest.approx(m.expectation(1), abs=1e-14)

    def test_monte_carlo_distribution_has_errors(self):
        m = _random_rwbm(3, 0.25)
        d = m.distribution(n_users=20_000, seed=2)
        assert not d.exact and d.n_users == 20_000 and d.stderr.shape == d.support.shape
        assert d.probabilities.sum() == pytest.approx(1.0)
        assert d.quantile(0.0) == d.support[0] and d.quantile(1.0) == d.support[-1]
        assert m.variance(n_users=20_000, seed=2) == pytest.approx(d.variance(), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# order 3: stochastic dominance
# ---------------------------------------------------------------------------------------------

class TestDominance:
    def test_rbp_like_r_dominates_s(self):
        res = browsing_model(R, user="RBP", p=0.5).dominance(browsing_model(S, user="RBP", p=0.5))
        assert res.exact and res.relation == "first" and res.crossings.size == 0

    def test_ap_like_incomparable_crossing_near_075(self):
        res = browsing_model(R, user="AP").dominance(browsing_model(S, user="AP"))
        assert res.relation == "incomparable"
        assert np.all((res.crossings > 0.5) & (res.crossings < 0.8))

    def test_equal_and_reversed(self):
        a = browsing_model(R, browse="DFBM")
        assert a.dominance(browsing_model(S, browse="DFBM")).relation == "equal"
        res = browsing_model(S, user="RBP", p=0.5).dominance(browsing_model(R, user="RBP", p=0.5))
        assert res.relation == "second"

    def test_quantile_and_cdf(self):
        m = browsing_model(R, user="RBP", p=0.5)
        d = m.distribution()
        assert d.cdf(d.support[-1]) == pytest.approx(1.0)
        assert d.cdf(-1.0) == 0.0
        assert d.quantile(0.5) in d.support
        assert compare_distributions(d, d).relation == "equal"
        # by hand: P(H = h) = 2^-h (h < 10), 2^-9 (h = 10); P@H = R_h / h with R_h the relevant in the
        # first h of 1001001001: h = 1 -> 1; 2, 4 -> 1/2; 3, 6, 9 -> 1/3; 5, 10 -> 2/5; 7 -> 3/7; 8 -> 3/8
        support = [1 / 3, 3 / 8, 2 / 5, 3 / 7, 1 / 2, 1.0]
        probs = np.array([64 + 8 + 1, 2, 16 + 1, 4, 128 + 32, 256]) / 512
        assert d.exact
        np.testing.assert_allclose(d.support, support, rtol=1e-15)
        np.testing.assert_allclose(d.probabilities, probs, rtol=1e-14)
        F = np.cumsum(probs)               # 73, 75, 92, 96, 256, 512 (/512)
        np.testing.assert_allclose(d.cdf([0.3, 1 / 3, 0.39, 0.45, 0.99, 1.0, 2.0]),
                                   [0, F[0], F[1], F[3], F[4], 1, 1], rtol=1e-14, atol=0)
        levels = {0.0: 1 / 3, 0.1: 1 / 3, F[0]: 1 / 3, F[0] + 1e-9: 3 / 8, F[1]: 3 / 8, 0.16: 2 / 5,
                  F[2]: 2 / 5, 0.184: 3 / 7, 0.3: 1 / 2, 0.5: 1 / 2, 0.5 + 1e-9: 1.0, 0.999: 1.0, 1.0: 1.0}
        got = d.quantile(list(levels))
        np.testing.assert_array_equal(got, np.array(list(levels.values())))
        assert m.quantile(0.5) == 1 / 2
        # against the sorted sample of 10^6 simulated users, at levels >= 9 standard errors from any jump of F
        sim = np.sort(m.simulate(1_000_000, seed=3))
        for u in (0.05, 0.16, 0.184, 0.3, 0.7, 0.999):
            assert sim[math.ceil(u * sim.size) - 1] == pytest.approx(d.quantile(u), abs=1e-12), u
        dfbm = browsing_model(R, browse="DFBM").distribution()
        np.testing.assert_array_equal(dfbm.quantile([0.0, 0.5, 1.0]), [0.4, 0.4, 0.4])


# ---------------------------------------------------------------------------------------------
# batch (plugin) path = functional API
# ---------------------------------------------------------------------------------------------

def _synthetic(rng, n_queries=7):
    qrels, run = {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        n = int(rng.integers(1, 30))
        docs = [f"d{j}" for j in range(n)]
        qrels[q] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.7}
        qrels[q]["extra"] = 1
        run[q] = {d: float(rng.integers(0, 5)) for d in docs}
    run["q0"] = {"a": 1.0}              # only an unjudged document
    return qrels, run


COMBOS = [
    dict(), dict(p=0.5), dict(browse="DFBM"), dict(browse="SFBM", p=0.7, p_rel=0.4, order=1),
    dict(browse="RWBM", p=0.5, q=0.3), dict(browse="RWBM", p=0.5, q=0.3, order=1),
    dict(browse="RWBM", p=0.4, q=0.4, loss=0.3), dict(browse="RWBM", p=0.4, q=0.4, loss=0.3, order=1, top="forward"),
    dict(browse="RWBM", p=0.5, q=0.2, q_rel=0.45, p_rel=0.3, f="1", loss=0.5),
    dict(browse="RWBM", p=0.5, q=0.3, tail="inf"), dict(browse="RWBM", p=0.5, q=0.3, tail="inf", loss=0.2),
    dict(user="P"), dict(user="AP"), dict(user="RBP", p=0.6), dict(user="RBP", p=0.6, tail="inf"),
    dict(user="DCG", gain="grade"), dict(user="DCG", b=3), dict(user="ERR"), dict(gain="exp2", browse="RWBM", q=0.1),
]


@pytest.mark.parametrize("params", COMBOS, ids=[repr(c) for c in COMBOS])
def test_batch_equals_functional(params, rng):
    qrels, run = _synthetic(rng)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    for cutoff in (None, 5):
        batch = prepared.batch(cutoff=cutoff)
        g_max = None
        if params.get("user") == "ERR":
            g_max = np.array([max(1, max(qrels[q].values())) for q in batch.qids], dtype=float)
        got = path_at_h_batch(batch, g_max=g_max, **params)
        for i, (q, _relevant, grades, rb) in enumerate(batch.segments()):
            grades = np.where(grades < -1, 0, grades)
            extra = {"g_max": int(g_max[i])} if g_max is not None else {}
            want = path_at_h(grades, **params, **extra) if rb > 0 else 0.0
            assert got[i] == pytest.approx(want, rel=1e-10, abs=1e-13), (q, params)


# ---------------------------------------------------------------------------------------------
# ir_measures plugin
# ---------------------------------------------------------------------------------------------

class TestPlugin:
    def test_parse_alias_and_printed_form(self):
        m = ir_measures.parse_measure("PH(user='AP',order=1)")
        assert m == ir_measures.parse_measure("PH(user='AP')")
        assert str(ir_measures.parse_measure("PatH(browse='RWBM',q=0.1)@10")) == "PH(browse='RWBM',q=0.1)@10"
        assert ir_measures.parse_measure("PH(p=0.8,order=2)") == ir_measures.parse_measure("PH")
        assert ir_measures.parse_measure("PH(p=1)") == ir_measures.parse_measure("PH(p=1)")

    @pytest.mark.parametrize("given,plain", [
        ("PH(user='AP',order=2)", "PH(user='AP')"), ("PH(user='ERR',order=2)", "PH(user='ERR')"),
        ("PH(user='DCG',f='h')", "PH(user='DCG')"), ("PH(user='P',browse='SFBM')", "PH(user='P')"),
        ("PH(user='AP',p=0.8,q=0.0,loss=0)", "PH(user='AP')"), ("PH(browse='DFBM',p=0.8)", "PH(browse='DFBM')"),
        ("PH(b=2,order=2)", "PH"),
    ])
    def test_default_valued_parameters_are_unspecified(self, given, plain, rng):
        # measures compare by their printed form, which omits defaults: equal measures behave identically
        a, b = ir_measures.parse_measure(given), ir_measures.parse_measure(plain)
        assert a == b and str(a) == str(b) and hash(a) == hash(b)
        a.validate_params()
        b.validate_params()
        assert a(cutoff=5) == b @ 5
        qrels, run = _synthetic(rng)
        assert irmeasures_markov.PROVIDER.calc_aggregate([a], qrels, run)[a] == \
            irmeasures_markov.PROVIDER.calc_aggregate([b], qrels, run)[b]

    def test_user_with_default_order_from_python(self):
        PH = irmeasures_markov.PH
        for m in (PH(user="AP", order=2), PH(order=2)(user="AP"), PH(user="AP")(order=2)):
            assert m == PH(user="AP") and m.params == {"user": "AP"}
            m.validate_params()
        # the functional API has no declared default order: order=2 there is a real request
        with pytest.raises(ValueError, match="conflicts with order=2"):
            browsing_model(R, user="AP", order=2)

    def test_validation_shared_with_functional_api(self):
        for text, kwargs in (("PH(browse='DFBM',p=0.5)", dict(browse="DFBM", p=0.5)),
                             ("PH(browse='DFBM',loss=0.2)", dict(browse="DFBM", loss=0.2)),
                             ("PH(browse='SFBM',loss=0.2)", dict(browse="SFBM", loss=0.2)),
                             ("PH(user='AP',q=0.1)", dict(user="AP", q=0.1))):
            with pytest.raises(ValueError) as plugin_error:
                ir_measures.parse_measure(text).validate_params()
            with pytest.raises(ValueError) as functional_error:
                browsing_model(R, **kwargs)
            assert str(plugin_error.value) == f"PH: {functional_error.value}"

    def test_identities_through_ir_measures(self, rng):
        qrels, run = _synthetic(rng)
        res = {}
        for metric in ir_measures.iter_calc([ir_measures.parse_measure("PH(user='P')"),
                                             ir_measures.parse_measure("PH(user='AP')"),
                                             ir_measures.parse_measure("AP")], qrels, run):
            res[(str(metric.measure), metric.query_id)] = metric.value
        for q in qrels:
            if ("AP", q) in res and res[("AP", q)] > 0:
                ranked = sorted(run[q].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
                rel = np.array([qrels[q].get(d, 0) >= 1 for d, _ in ranked])
                rb = sum(g >= 1 for g in qrels[q].values())
                assert res[("PH(user='AP')", q)] == pytest.approx(res[("AP", q)] * rb / rel.sum(), rel=1e-9)
                assert res[("PH(user='P')", q)] == pytest.approx(rel.mean(), rel=1e-12)

    @pytest.mark.parametrize("text,message", [
        ("PH(browse='RWBM',p=0.7,q=0.5)", "p \\+ q must be <= 1"),
        ("PH(user='RBP',order=1)", "conflicts with order=1"),
        ("PH(user='AP',browse='RWBM')", "conflicts with browse"),
        ("PH(user='P',browse='RWBM')", "conflicts with browse"),
        ("PH(user='AP',f='1')", "conflicts with f"),
        ("PH(user='AP',p=0.5)", "does not take \\['p'\\]"),
        ("PH(loss=0.3)", "needs revisits"),
        ("PH(browse='RWBM',loss=1.5)", "`loss` must be in \\[0, 1\\]"),
        ("PH(browse='RWBM',p=1.5)", "`p` must be in \\[0, 1\\]"),
        ("PH(browse='DFBM',q=0.3)", "does not take"),
        ("PH(user='P',p=0.5)", "does not take \\['p'\\]"),
        ("PH(q=0.2)", "SFBM has no backward moves"),
        ("PH(order=1,tail='inf')", "order 2 only"),
        ("PH(b=3)", "log base"),
        ("PH(user='DCG',b=1)", "> 1"),
        ("PH(browse='XX')", "not one of"),
        ("PH(order=3)", "not one of"),
        ("PH(nope=1)", "unknown parameter"),
    ])
    def test_invalid_parameters(self, text, message):
        with pytest.raises(ValueError, match=message):
            ir_measures.parse_measure(text).validate_params()


class TestInputValidation:
    def test_functional(self):
        with pytest.raises(ValueError, match="p \\+ q must be <= 1"):
            browsing_model(R, browse="RWBM", p=0.6, q=0.6)
        with pytest.raises(ValueError, match="`loss` must be in"):
            browsing_model(R, browse="RWBM", q=0.1, loss=-0.1)
        with pytest.raises(ValueError, match="`browse` must be one of"):
            browsing_model(R, browse="rw")
        with pytest.raises(ValueError, match="has 3 values"):
            browsing_model(R, p=[0.5, 0.5, 0.5])
        with pytest.raises(ValueError, match="integers"):
            browsing_model([0.5, 1])
        with pytest.raises(ValueError, match="1-D"):
            browsing_model([[1, 0]])
        with pytest.raises(ValueError, match="`n_users` must be a positive integer"):
            browsing_model(R).simulate(0)
        with pytest.raises(ValueError, match="`order` must be 1 or 2"):
            browsing_model(R).expectation(3)
        with pytest.raises(ValueError, match="must be 0"):
            BrowsingModel([0.5, 0.5], [0, 0], [1, 0])
        with pytest.raises(ValueError, match="exceeds 1"):
            BrowsingModel([0.5, 0.8, 0.0], [0, 0.5, 0.3], [1, 0, 1])
        with pytest.raises(ValueError, match="p \\+ q < 1"):
            k_infinite(0.5, 0.5)
        with pytest.raises(TypeError, match="BrowsingModel"):
            browsing_model(R).dominance([1, 0])
        with pytest.raises(ValueError, match="`u` must be in"):
            browsing_model(R).distribution().quantile(1.5)
        with pytest.raises(ValueError, match="does not take \\['p'\\]"):
            browsing_model(R, browse="DFBM", p=0.5)
        with pytest.raises(ValueError, match="does not take \\['loss', 'p'\\]"):
            browsing_model(R, browse="DFBM", p=lambda i, g: 0.5 + 0 * i, loss=0.3)
        for browse in ("SFBM", None):
            with pytest.raises(ValueError, match="`loss` needs revisits"):
                browsing_model(R, browse=browse, loss=0.3)
        with pytest.raises(ValueError, match="tail='inf' needs constant numbers `p` and `q`.*`p` vary"):
            browsing_model(R, browse="RWBM", p=lambda i, g: np.full(i.shape, 0.5), q=0.2, tail="inf")
        with pytest.raises(ValueError, match="`q` vary"):
            browsing_model(R, browse="RWBM", q=np.full(len(R), 0.1), tail="inf")
        with pytest.raises(ValueError, match="`method` must be one of"):
            browsing_model(R).expectation(1, method="quad")
        with pytest.raises(ValueError, match="order-1 method"):
            browsing_model(R, browse="RWBM", q=0.1).expectation(2, method="recursion")
        with pytest.raises(ValueError, match="order 1 is not available with tail"):
            browsing_model(R, browse="RWBM", q=0.1, tail="inf", f="1").expectation(1, method="recursion")

    def test_empty_ranking(self):
        m = browsing_model([], browse="RWBM", q=0.1)
        assert m.expectation(1) == 0.0 and m.expectation(2) == 0.0
        assert m.simulate(10).tolist() == [0.0] * 10
