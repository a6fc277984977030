"""Markov Precision: paper values, closed form vs general solver, identities, edge cases."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from irmeasures_markov.core import stationary_distribution, transition_matrix_from_weights
from irmeasures_markov.measures.markov_precision import (
    MODELS,
    estimate_rates,
    markov_precision,
    markov_precision_batch,
    mp_degrees,
)
from irmeasures_markov.measures.markov_precision import _kernels as mpk
from irmeasures_markov.ranking import RelevanceBatch

# Ferrante, Ferro & Maistro (SIGIR 2014), Table 4: GL_AD_ID, runs of length 10.
TABLE4 = [
    ([1, 1, 1, 1, 0, 0, 0, 1, 0, 0], [0.2000, 0.0357, 0.2000, 0.0400, 0.0056, 0.0005, 0.0035, 0.0017, 0.0034, 0.0024],
     0.9205, 0.6603),
    ([1, 1, 1, 0, 1, 0, 0, 0, 1, 0], [0.0177, 0.0047, 0.0037, 0.0015, 0.0041, 0.0031, 0.0057, 0.0022, 0.0061, 0.0045],
     0.8668, 0.8710),
    ([1, 1, 0, 1, 1, 0, 0, 0, 0, 1], [0.0056, 0.0051, 0.0062, 0.0031, 0.0046, 0.0025, 0.005, 0.0022, 0.007, 0.005],
     0.8120, 0.8001),
]


@pytest.mark.parametrize("run,mu,disc,cont", TABLE4)
def test_paper_table4(run, mu, disc, cont):
    assert round(markov_precision(run, "GL_AD_ID"), 4) == disc
    # the published rates are rounded to 4 decimals, so MPcont reproduces to +-0.0005
    assert abs(markov_precision(run, "GL_AD_ID", rates=mu) - cont) < 5e-4


def brute_force_mp(rel, model):
    """Build the full chain, censor by explicit path sums (matrix powers), take its invariant vector."""
    rel = np.asarray(rel, bool)
    T = rel.size
    pos = np.flatnonzero(rel)
    if pos.size == 0:
        return 0.0
    prec = (np.cumsum(rel) / np.arange(1, T + 1))[rel]
    if pos.size == 1:
        return float(prec[0])
    conn, states, kernel = model.split("_") if model != "UNIFORM" else ("GL", "AD", "UNIFORM")
    states_pos = np.arange(T) if states == "AD" else pos
    d = np.abs(states_pos[:, None] - states_pos[None, :]).astype(float)
    W = {"ID": lambda x: 1 / (x + 1), "LID": lambda x: 1 / np.log10(x + 2),
         "UNIFORM": lambda x: np.ones_like(x)}[kernel](d)
    np.fill_diagonal(W, 0)
    if conn == "LO":
        k = np.arange(states_pos.size)
        W = W * (np.abs(k[:, None] - k[None, :]) == 1)
    P = W / W.sum(axis=1, keepdims=True)
    if states == "AD":
        A, B = pos, np.setdiff1d(np.arange(T), pos)
        Pt = P[np.ix_(A, A)].copy()
        M = P[np.ix_(A, B)]
        for _ in range(20000):
            if M.size == 0 or np.abs(M).max() < 1e-18:
                break
            Pt += M @ P[np.ix_(B, A)]
            M = M @ P[np.ix_(B, B)]
        P = Pt
    # the lazy chain (I + P)/2 has the same invariant vector and is aperiodic (LO chains are
    # periodic); its 2^40-th power by repeated squaring has identical rows
    M = (np.eye(P.shape[0]) + P) / 2
    for _ in range(40):
        M = M @ M
    pi = M[0] / M[0].sum()
    return float(pi @ prec)


@pytest.mark.parametrize("model", MODELS)
def test_against_brute_force_small(model):
    rng = np.random.default_rng(3)
    for _ in range(6):
        T = int(rng.integers(1, 12))
        rel = rng.random(T) < 0.4
        assert markov_precision(rel, model) == pytest.approx(brute_force_mp(rel, model), abs=1e-10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(T=st.integers(1, 2000), p=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1),
       model=st.sampled_from(MODELS))
def test_closed_form_equals_general_solver(T, p, seed, model):
    rel = np.random.default_rng(seed).random(T) < p
    if T > 400:  # keep dense solves fast: few relevant documents in long rankings
        rel &= np.random.default_rng(seed + 1).random(T) < 0.1
    closed = markov_precision(rel, model, method="closed")
    solved = markov_precision(rel, model, method="solve")
    assert abs(closed - solved) <= 1e-12


@pytest.mark.parametrize("T", [1, 2, 3, 17, pytest.param(2000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("model", MODELS)
def test_closed_form_equals_general_solver_fixed(T, model):
    rng = np.random.default_rng(T)
    rel = rng.random(T) < (0.5 if T < 100 else 0.05)
    rel[0] = True
    assert abs(markov_precision(rel, model, method="closed") - markov_precision(rel, model, method="solve")) <= 1e-12


def average_precision(rel, rb):
    rel = np.asarray(rel, bool)
    prec = np.cumsum(rel) / np.arange(1, rel.size + 1)
    return float(prec[rel].sum() / rb) if rb else 0.0


@given(rel=st.lists(st.booleans(), min_size=1, max_size=300), extra=st.integers(0, 20))
@settings(max_examples=200, deadline=None)
def test_uniform_with_recall_is_ap(rel, extra):
    rb = sum(rel) + extra
    assert markov_precision(rel, "UNIFORM", recall_base=rb) == pytest.approx(average_precision(rel, rb), abs=1e-15)


def test_lo_ad_id_equals_lo_ad_lid():
    # the paper's footnote 4: in the local AD model the two kernels differ by a constant
    rng = np.random.default_rng(0)
    for _ in range(20):
        rel = rng.random(50) < 0.3
        assert markov_precision(rel, "LO_AD_ID") == pytest.approx(markov_precision(rel, "LO_AD_LID"), abs=1e-15)


class TestEdgeCases:
    @pytest.mark.parametrize("model", MODELS)
    def test_no_relevant(self, model):
        assert markov_precision([0, 0, 0], model) == 0.0
        assert markov_precision([0, 0, 0], model, recall_base=4) == 0.0

    @pytest.mark.parametrize("model", MODELS)
    def test_one_relevant_is_its_precision(self, model):
        assert markov_precision([0, 0, 1, 0], model) == pytest.approx(1 / 3)
        assert markov_precision([1], model) == 1.0
        assert markov_precision([0, 1], model, recall_base=2) == pytest.approx(0.25)

    def test_recall_base_zero(self):
        assert markov_precision([1, 0], recall_base=0) == 0.0

    def test_lo_ad_end_states_half_degree(self):
        deg = mp_degrees([1, 1, 1, 1], "LO_AD_ID")
        assert_allclose(deg / deg.max(), [0.5, 1, 1, 0.5])

    def test_all_relevant_is_one(self):
        for model in MODELS:
            assert markov_precision(np.ones(25), model) == pytest.approx(1.0)

    def test_bool_and_int_inputs(self):
        assert markov_precision([True, False, True]) == markov_precision([1, 0, 1])


class TestCustomKernels:
    def test_symmetric_function_equals_named_model(self):
        rel = [1, 0, 1, 1, 0, 0, 1]
        f = lambda i, j: 1.0 / (np.abs(i - j) + 1)  # noqa: E731
        assert markov_precision(rel, f) == pytest.approx(markov_precision(rel, "GL_AD_ID"), abs=1e-14)
        assert markov_precision(rel, f, states="OR") == pytest.approx(markov_precision(rel, "GL_OR_ID"), abs=1e-14)

    def test_non_symmetric_matrix_against_dense_construction(self, rng):
        T = 9
        W = rng.random((T, T)) + np.triu(np.ones((T, T)))  # forward moves preferred
        rel = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0], bool)
        P = transition_matrix_from_weights(W - np.diag(np.diag(W)))
        # brute force: simulate the full chain's invariant vector, then restrict
        pi = stationary_distribution(P)[rel]
        pi /= pi.sum()
        prec = (np.cumsum(rel) / np.arange(1, T + 1))[rel]
        assert markov_precision(rel, W) == pytest.approx(float(pi @ prec), abs=1e-12)
        with pytest.raises(ValueError, match="symmetric"):
            markov_precision(rel, W, method="closed")

    def test_not_irreducible(self):
        W = np.zeros((4, 4))
        W[0, 1] = W[1, 0] = 1
        W[2, 3] = W[3, 2] = 1
        with pytest.raises(ValueError, match="not irreducible"):
            markov_precision([1, 0, 1, 0], W)
        W2 = np.triu(np.ones((4, 4)), 1)  # forward only: state 4 is a dead end
        with pytest.raises(ValueError, match="no outgoing weight|not irreducible"):
            markov_precision([1, 0, 1, 1], W2)

    def test_matrix_too_small(self):
        with pytest.raises(ValueError, match="covers ranks 1..2"):
            markov_precision([1, 0, 1], np.ones((2, 2)), method="solve")


class TestRates:
    def test_constant_rates_change_nothing(self):
        rel = [1, 0, 1, 1, 0]
        assert markov_precision(rel, rates=[3.0] * 5) == pytest.approx(markov_precision(rel))

    def test_rates_reweight(self):
        # OR chain on two relevant docs: pi = (1/2, 1/2); holding 1/mu reweights
        rel = [1, 0, 1]
        v = markov_precision(rel, "LO_OR_ID", rates=[1.0, 5.0, 0.5])
        assert v == pytest.approx((0.5 / 1.0 * 1 + 0.5 / 0.5 * (2 / 3)) / (0.5 / 1.0 + 0.5 / 0.5))

    @pytest.mark.parametrize("bad,msg", [([1, 0, 1], "positive"), ([1, -1, 1], "positive"),
                                         ([1, np.nan, 1], "positive"), ([1, 1], "every rank")])
    def test_bad_rates(self, bad, msg):
        with pytest.raises(ValueError, match=msg):
            markov_precision([1, 0, 1], rates=bad)

    def test_estimate_rates(self, rng):
        mu_true = np.array([0.2, 0.05, 0.01])
        samples = {k + 1: rng.exponential(1 / m, size=20000) for k, m in enumerate(mu_true)}
        assert_allclose(estimate_rates(samples), mu_true, rtol=0.03)
        # exact formula (n-1)/(n * mean)
        assert estimate_rates([[1.0, 3.0]])[0] == pytest.approx(1 / 4)
        with pytest.raises(ValueError, match="at least 2"):
            estimate_rates([[1.0]])
        with pytest.raises(ValueError, match="contiguously"):
            estimate_rates({1: [1, 2], 3: [1, 2]})
        with pytest.raises(ValueError, match="positive"):
            estimate_rates([[1.0, 0.0]])


class TestValidation:
    def test_unknown_model(self):
        with pytest.raises(ValueError, match="Unknown MP model 'GL_XX_ID'"):
            markov_precision([1, 0], "GL_XX_ID")

    def test_non_binary(self):
        with pytest.raises(ValueError, match="binary"):
            markov_precision([2, 0, 1])
        with pytest.raises(ValueError, match="finite"):
            markov_precision([np.nan, 1])
        with pytest.raises(ValueError, match="1-D"):
            markov_precision([[1, 0]])

    def test_bad_recall_base_and_method(self):
        with pytest.raises(ValueError, match="recall_base"):
            markov_precision([1], recall_base=-1)
        with pytest.raises(ValueError, match="method"):
            markov_precision([1], method="fast")


@pytest.mark.parametrize("model", MODELS)
def test_batch_equals_single(model):
    rng = np.random.default_rng(11)
    rels = [rng.random(int(rng.integers(0, 40))) < 0.3 for _ in range(30)] + [np.ones(1, bool), np.zeros(1, bool)]
    lengths = np.array([r.size for r in rels])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.concatenate(rels)
    rb = np.array([int(r.sum()) + 2 for r in rels])
    batch = RelevanceBatch([str(i) for i in range(len(rels))], offsets, flat.astype(np.int64), flat, rb, 1)
    for recall in (False, True):
        got = markov_precision_batch(batch, model, recall=recall)
        want = [markov_precision(r, model, recall_base=int(b) if recall else None) for r, b in zip(rels, rb)]
        assert_allclose(got, want, atol=1e-14)


class TestRegisteredKernelsFunctional:
    def test_registered_names_accepted(self, rng):
        from irmeasures_markov import register_kernel
        W = rng.random((12, 12)) + np.triu(np.ones((12, 12)))
        rel = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 1], bool)
        register_kernel("test_functional_mine", W)
        assert markov_precision(rel, "TEST_FUNCTIONAL_MINE") == markov_precision(rel, W)
        assert markov_precision(rel, "test_functional_mine", recall_base=7) == markov_precision(rel, W, recall_base=7)
        f = lambda i, j: 1.0 / np.log10(np.abs(i - j) + 2)  # noqa: E731
        register_kernel("test_functional_or", f, states="OR")
        # the registered state space is used, as for a paper model name
        assert markov_precision(rel, "test_functional_or") == pytest.approx(markov_precision(rel, "GL_OR_LID"),
                                                                            abs=1e-14)
        with pytest.raises(ValueError, match="Unknown MP model 'NOT_REGISTERED'.*TEST_FUNCTIONAL_MINE"):
            markov_precision(rel, "NOT_REGISTERED")


class TestRecallBase:
    def test_smaller_than_relevant_retrieved_is_an_error(self):
        with pytest.raises(ValueError, match=r"`recall_base` \(2\) is smaller than the 3 relevant documents"):
            markov_precision([1, 1, 0, 1], recall_base=2)
        with pytest.raises(ValueError, match="recall_base"):
            markov_precision([1, 1, 0, 1], "UNIFORM", recall_base=1)
        assert markov_precision([1, 1, 0, 1], "UNIFORM", recall_base=3) == pytest.approx(average_precision(
            [1, 1, 0, 1], 3))


class TestRatesMapping:
    def test_mapping_equals_sequence(self):
        rel = [1, 0, 1, 1, 0]
        mu = [0.2, 0.05, 0.01, 0.3, 0.7]
        by_rank = {k + 1: m for k, m in enumerate(mu)}
        for model in ("GL_AD_ID", "LO_OR_LID"):
            assert markov_precision(rel, model, rates=by_rank) == markov_precision(rel, model, rates=mu)
        # ranks beyond the ranking are not needed, order of keys does not matter
        assert markov_precision(rel, rates={**dict(reversed(list(by_rank.items()))), 6: 1.0}) == \
            markov_precision(rel, rates=mu)
        assert markov_precision(rel, rates={np.int64(k): np.float64(m) for k, m in by_rank.items()}) == \
            markov_precision(rel, rates=mu)

    @pytest.mark.parametrize("bad,msg", [
        ({1: 1.0, 3: 2.0}, r"no rate for rank 2\b.*every rank"),
        ({1: 1.0, 2: 1.0}, r"no rate for rank 3\b"),
        ({1: 1.0, 2: 0.0, 3: 1.0}, r"positive and finite; rank 2 has rate 0\.0"),
        ({1: 1.0, 2: -1.0, 3: 1.0}, "positive and finite; rank 2"),
        ({1: 1.0, 2: np.inf, 3: 1.0}, "positive and finite; rank 2"),
        ({1: 1.0, 2: np.nan, 3: 1.0}, "positive and finite; rank 2"),
        ({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, "1-based integer ranks, got 0"),
        ({"1": 1.0, 2: 1.0, 3: 1.0}, "1-based integer ranks, got '1'"),
        ({1: [1.0], 2: 1.0, 3: 1.0}, "maps rank 1 to"),
    ])
    def test_bad_mappings(self, bad, msg):
        with pytest.raises(ValueError, match=msg):
            markov_precision([1, 0, 1], rates=bad)

    def test_batch_mapping_forms(self):
        rels = [np.array([1, 0, 1], bool), np.array([0, 1, 1, 1, 0], bool)]
        offsets = np.array([0, 3, 8])
        flat = np.concatenate(rels)
        batch = RelevanceBatch(["a", "b"], offsets, flat.astype(np.int64), flat, np.array([2, 3]), 1)
        mu = [0.5, 0.25, 2.0, 1.0, 3.0]
        want = [markov_precision(r, rates=mu[:r.size]) for r in rels]
        assert_allclose(markov_precision_batch(batch, rates={k + 1: m for k, m in enumerate(mu)}), want, atol=1e-15)
        per_query = {"a": {1: 0.5, 2: 0.25, 3: 2.0}, "b": mu}
        assert_allclose(markov_precision_batch(batch, rates=per_query), want, atol=1e-15)
        with pytest.raises(ValueError, match=r"no rate for rank 4 of query 'b'"):
            markov_precision_batch(batch, rates={1: 1.0, 2: 1.0, 3: 1.0})
        with pytest.raises(ValueError, match="mixes numbers and sequences"):
            markov_precision_batch(batch, rates={"a": [1.0] * 3, 1: 1.0})


class TestGLORConvolution:
    """GL_OR degrees by FFT convolution (large r) against the dense r x r block and the general solver."""

    @staticmethod
    def degrees(monkeypatch, rel, model, fft):
        monkeypatch.setattr(mpk, "_FFT_RATIO", 0.0 if fft else np.inf)
        monkeypatch.setattr(mpk, "_FFT_MIN_R", 2)
        return mp_degrees(rel, model)

    @pytest.mark.parametrize("model", ["GL_OR_ID", "GL_OR_LID"])
    @pytest.mark.parametrize("T,p", [(2, 1.0), (3, 0.7), (50, 0.3), (1000, 0.2), (2000, 0.02), (20000, 0.07)])
    def test_fft_equals_dense(self, monkeypatch, model, T, p):
        rel = np.random.default_rng(T).random(T) < p
        rel[-1] = rel[0] = True
        dense = self.degrees(monkeypatch, rel, model, fft=False)
        fft = self.degrees(monkeypatch, rel, model, fft=True)
        assert_allclose(fft, dense, rtol=1e-12, atol=0)

    def test_default_threshold_uses_fft_for_many_relevant(self):
        mpk._kernel_spectrum.cache_clear()
        rel = np.zeros(1000, bool)
        rel[::4] = True  # r = 250: r^2 is far above 8 * 2000
        mp_degrees(rel, "GL_OR_ID")
        assert mpk._kernel_spectrum.cache_info().currsize > 0
        mpk._kernel_spectrum.cache_clear()
        mp_degrees(rel[:100], "GL_OR_ID")  # r = 25: dense block
        assert mpk._kernel_spectrum.cache_info().currsize == 0

    @pytest.mark.parametrize("model", ["GL_OR_ID", "GL_OR_LID"])
    @pytest.mark.parametrize("T,p", [(600, 0.5), (2000, 0.3), (2000, 0.9)])
    def test_closed_form_with_fft_equals_general_solver(self, model, T, p):
        rel = np.random.default_rng(T + int(10 * p)).random(T) < p
        assert abs(markov_precision(rel, model, method="closed") - markov_precision(rel, model, method="solve")) \
            <= 1e-12

    def test_batch_groups_of_mixed_lengths(self, monkeypatch):
        monkeypatch.setattr(mpk, "_FFT_CHUNK", 3000)  # several chunks per FFT length
        rng = np.random.default_rng(8)
        rels = [rng.random(int(rng.integers(1, 800))) < rng.random() for _ in range(25)]
        lengths = np.array([r.size for r in rels])
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        flat = np.concatenate(rels)
        batch = RelevanceBatch([str(i) for i in range(len(rels))], offsets, flat.astype(np.int64), flat,
                               np.array([int(r.sum()) for r in rels]), 1)
        monkeypatch.setattr(mpk, "_FFT_RATIO", 0.0)
        got = markov_precision_batch(batch, "GL_OR_ID")
        want = [markov_precision(r, "GL_OR_ID", method="solve") for r in rels]
        assert_allclose(got, want, rtol=0, atol=1e-12)
