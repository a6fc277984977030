"""The chain solvers of the core against brute force: matrix powers and sums over paths."""
import numpy as np
import pytest
import scipy.sparse
from numpy.testing import assert_allclose

from irmeasures_markov.core._chains import (
    censored_transition_matrix,
    is_irreducible,
    stationary_distribution,
    transition_matrix_from_weights,
)


def random_chain(rng, n, density=1.0):
    W = rng.random((n, n)) * (rng.random((n, n)) < density)
    W += np.diag(np.ones(n - 1), 1) + np.diag([1.0], -(n - 1)) if n > 1 else 0  # a cycle keeps it irreducible
    return W / W.sum(axis=1, keepdims=True)


class TestStationary:
    @pytest.mark.parametrize("n", [1, 2, 5, 30])
    def test_left_eigenvector_and_matrix_power(self, rng, n):
        P = random_chain(rng, n, 0.4)
        pi = stationary_distribution(P)
        assert_allclose(pi.sum(), 1.0, atol=1e-14)
        assert np.all(pi >= 0)
        assert_allclose(pi @ P, pi, atol=1e-13)
        # Cesaro average of matrix powers (aperiodicity not needed)
        acc, M = np.zeros((n, n)), np.eye(n)
        for _ in range(4000):
            M = M @ P
            acc += M
        assert_allclose(acc[0] / 4000, pi, atol=2e-3)

    def test_sparse_equals_dense(self, rng):
        P = random_chain(rng, 40, 0.1)
        assert_allclose(stationary_distribution(scipy.sparse.csr_matrix(P)), stationary_distribution(P), atol=1e-13)

    def test_input_validation(self):
        with pytest.raises(ValueError, match="square"):
            stationary_distribution(np.array([[0.4, 0.6]]))
        with pytest.raises(ValueError, match="sum to 1"):
            stationary_distribution(np.array([[0.5, 0.4], [0.5, 0.5]]))
        with pytest.raises(ValueError, match="nonnegative"):
            stationary_distribution(np.array([[1.5, -0.5], [0.5, 0.5]]))
        with pytest.raises(ValueError, match="not irreducible"):
            stationary_distribution(np.eye(2))
        with pytest.raises(ValueError, match="no outgoing weight"):
            transition_matrix_from_weights(np.array([[0, 1.0], [0.0, 0]]))
        assert not is_irreducible(np.array([[1.0, 0], [0.5, 0.5]]))


class TestCensored:
    @pytest.mark.parametrize("seed", range(5))
    def test_invariant_is_restriction(self, seed):
        rng = np.random.default_rng(seed)
        n = 15
        P = random_chain(rng, n, 0.3)
        A = np.sort(rng.choice(n, size=5, replace=False))
        Pt = censored_transition_matrix(P, A)
        assert_allclose(Pt.sum(axis=1), 1.0, atol=1e-13)
        pi = stationary_distribution(P)
        assert_allclose(stationary_distribution(Pt), pi[A] / pi[A].sum(), atol=1e-12)
        assert_allclose(censored_transition_matrix(scipy.sparse.csr_matrix(P), A), Pt, atol=1e-13)

    def test_first_return_by_paths(self, rng):
        # brute force: sum over paths that stay outside A, via matrix powers
        n = 8
        P = random_chain(rng, n, 0.6)
        A = np.array([0, 3, 6])
        B = np.setdiff1d(np.arange(n), A)
        brute = P[np.ix_(A, A)].copy()
        M = P[np.ix_(A, B)]
        for _ in range(3000):
            brute += M @ P[np.ix_(B, A)]
            M = M @ P[np.ix_(B, B)]
        assert_allclose(censored_transition_matrix(P, A), brute, atol=1e-10)

    def test_watched_states_validation(self, rng):
        P = random_chain(rng, 6, 0.5)
        with pytest.raises(ValueError, match="repeated"):
            censored_transition_matrix(P, [1, 1])
        with pytest.raises(ValueError, match="at least one"):
            censored_transition_matrix(P, [])
