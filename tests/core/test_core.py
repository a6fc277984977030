"""The solver core against brute force: matrix powers, direct sums, dense solves."""
import numpy as np
import pytest
import scipy.sparse
from numpy.testing import assert_allclose

from irmeasures_markov.core import (
    MarkovChain,
    absorption_probabilities,
    censored_transition_matrix,
    expected_reward,
    expected_visits,
    fundamental_matrix,
    hitting_probabilities,
    is_irreducible,
    return_probabilities,
    reversible_stationary_distribution,
    solve_tridiagonal,
    stationary_distribution,
    transition_matrix_from_weights,
    tridiagonal_expected_reward,
    tridiagonal_hitting_and_return,
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

    def test_reversible_closed_form(self, rng):
        W = rng.random((12, 12))
        W = W + W.T
        np.fill_diagonal(W, 0)
        assert_allclose(reversible_stationary_distribution(W),
                        stationary_distribution(transition_matrix_from_weights(W)), atol=1e-14)

    def test_input_validation(self):
        with pytest.raises(ValueError, match="square"):
            stationary_distribution(np.array([[0.4, 0.6]]))
        with pytest.raises(ValueError, match="sum to 1"):
            stationary_distribution(np.array([[0.5, 0.4], [0.5, 0.5]]))
        with pytest.raises(ValueError, match="nonnegative"):
            stationary_distribution(np.array([[1.5, -0.5], [0.5, 0.5]]))
        with pytest.raises(ValueError, match="not irreducible"):
            stationary_distribution(np.eye(2))
        with pytest.raises(ValueError, match="symmetric"):
            reversible_stationary_distribution(np.array([[0, 1.0], [2.0, 0]]))
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

    def test_markov_chain_class(self, rng):
        P = random_chain(rng, 6, 0.5)
        mc = MarkovChain(P)
        assert mc.is_irreducible
        pi = mc.stationary_distribution
        assert_allclose(mc.censored([1, 2]).stationary_distribution, pi[[1, 2]] / pi[[1, 2]].sum(), atol=1e-12)
        with pytest.raises(ValueError, match="repeated"):
            censored_transition_matrix(P, [1, 1])
        with pytest.raises(ValueError, match="at least one"):
            censored_transition_matrix(P, [])

    def test_simulation_reproducible_and_consistent(self):
        P = np.array([[0.1, 0.9], [0.6, 0.4]])
        mc = MarkovChain(P)
        a = mc.simulate(2000, num_reps=50, rng=7)
        assert np.array_equal(a, mc.simulate(2000, num_reps=50, rng=7))
        freq = np.bincount(a.ravel(), minlength=2) / a.size
        assert_allclose(freq, mc.stationary_distribution, atol=0.01)
        assert mc.simulate(5, rng=1).shape == (5,)


def substochastic(rng, n):
    Q = rng.random((n, n))
    return 0.9 * Q / Q.sum(axis=1, keepdims=True) * rng.random((n, 1))


def random_birth_death(rng, n):
    """Forward/backward probabilities of a random birth-death chain (absorbed off the ends) and its Q."""
    fwd = rng.random(n) * 0.7
    bwd = rng.random(n) * 0.29
    fwd[-1] = 0
    bwd[0] = 0
    return fwd, bwd, np.diag(fwd[:-1], 1) + np.diag(bwd[1:], -1)


def matrix_limit(P, squarings=64):
    """lim P^k of a chain whose transient mass dies out, by repeated squaring (k = 2^64)."""
    M = np.asarray(P, dtype=np.float64)
    for _ in range(squarings):
        M = M @ M
    return M


def first_passage_hits(Q):
    """H[s, j] = P_s(ever at j): j and a 'dead' state made absorbing, then lim P^k[s, j]."""
    n = Q.shape[0]
    H = np.empty((n, n))
    for j in range(n):
        P = np.zeros((n + 1, n + 1))
        P[:n, :n] = Q
        P[:n, n] = 1 - Q.sum(axis=1)
        P[n, n] = 1.0
        P[j] = 0.0
        P[j, j] = 1.0
        H[:, j] = matrix_limit(P)[:n, j]
    return H


def first_passage_returns(Q):
    """f_i = sum_k Q[i, k] P_k(ever at i), first-step analysis on the absorbing construction."""
    H = first_passage_hits(Q)
    return np.array([Q[i] @ H[:, i] for i in range(Q.shape[0])])


class TestAbsorbing:
    def test_fundamental_matrix_is_series(self, rng):
        Q = substochastic(rng, 6)
        S, M = np.eye(6), np.eye(6)
        for _ in range(2000):
            M = M @ Q
            S += M
        N = fundamental_matrix(Q)
        assert_allclose(N, S, atol=1e-10)
        assert_allclose(expected_visits(Q, 2), N[2], atol=1e-12)
        rho = rng.random(6)
        assert_allclose(expected_reward(Q, rho), N @ rho, atol=1e-12)
        R = np.column_stack([1 - Q.sum(axis=1)])
        assert_allclose(absorption_probabilities(Q, R).ravel(), 1.0, atol=1e-12)

    def test_hitting_and_return_by_simulation_free_identity(self, rng):
        Q = substochastic(rng, 5)
        N = fundamental_matrix(Q)
        h = hitting_probabilities(Q, 0)
        f = return_probabilities(Q)
        # visits to j from 0 = P(hit j) * expected visits once there = h_j / (1 - f_j)
        assert_allclose(N[0], h / (1 - f), atol=1e-12)
        assert h[0] == pytest.approx(1.0)

    @pytest.mark.parametrize("seed", range(4))
    def test_hitting_and_return_by_first_passage(self, seed):
        # independent of N: target made absorbing, limit of matrix powers (first-step analysis for f)
        rng = np.random.default_rng(seed)
        n = 6
        Q = substochastic(rng, n) * (rng.random((n, n)) < 0.7)
        for start in range(n):
            assert_allclose(hitting_probabilities(Q, start), first_passage_hits(Q)[start], atol=1e-12)
        assert_allclose(return_probabilities(Q), first_passage_returns(Q), atol=1e-12)

    @pytest.mark.parametrize("n", [1, 2, 3, 5, 40])
    def test_tridiagonal_hitting_and_return_by_first_passage(self, rng, n):
        fwd, bwd, Q = random_birth_death(rng, n)
        hits = first_passage_hits(Q)
        f_brute = first_passage_returns(Q)
        for start in {0, n // 2, n - 1}:
            h, f = tridiagonal_hitting_and_return(fwd, bwd, start=start)
            assert_allclose(h, hits[start], atol=1e-12)
            assert_allclose(f, f_brute, atol=1e-12)

    @pytest.mark.parametrize("fast", [False, True])
    def test_hitting_and_return_hand_computed(self, fast):
        # 0 <-> 1 <-> 2, forward p, backward q, the rest absorbed; first-step analysis by hand:
        # P_1(hit 0) = q / (1 - pq), P_1(hit 2) = p / (1 - pq)
        p, q = 0.5, 0.3
        fwd, bwd = np.array([p, p, 0.0]), np.array([0.0, q, q])
        if fast:
            h, f = tridiagonal_hitting_and_return(fwd, bwd, start=0)
        else:
            Q = np.diag(fwd[:-1], 1) + np.diag(bwd[1:], -1)
            h, f = hitting_probabilities(Q, 0), return_probabilities(Q)
        assert_allclose(h, [1.0, p, p * p / (1 - p * q)], rtol=1e-14)
        assert_allclose(f, [p * q / (1 - p * q), 2 * p * q, q * p / (1 - p * q)], rtol=1e-14)

    @pytest.mark.parametrize("seed", range(3))
    def test_absorption_by_matrix_powers(self, seed):
        # several absorbing states; the full chain's powers converge to B in the transient rows
        rng = np.random.default_rng(seed)
        n, m = 7, 3
        M = rng.random((n, n + m)) * (rng.random((n, n + m)) < 0.6)
        M[:, n + (np.arange(n) % m)] += 0.05  # every state leaks to some absorbing state
        M /= M.sum(axis=1, keepdims=True)
        Q, R = M[:, :n], M[:, n:]
        P = np.zeros((n + m, n + m))
        P[:n] = M
        P[n:, n:] = np.eye(m)
        B = absorption_probabilities(Q, R)
        assert_allclose(B, matrix_limit(P)[:n, n:], atol=1e-12)
        assert_allclose(B.sum(axis=1), 1.0, atol=1e-12)
        # with part of the mass leaking to an unlisted state, rows sum to less than 1
        assert_allclose(absorption_probabilities(Q, R[:, :2]), matrix_limit(P)[:n, n:n + 2], atol=1e-12)

    @pytest.mark.parametrize("n", [1, 2, 3, 50])
    def test_tridiagonal_matches_dense(self, rng, n):
        fwd, bwd, Q = random_birth_death(rng, n)
        rho = rng.random(n)
        assert_allclose(tridiagonal_expected_reward(fwd, bwd, rho), expected_reward(Q, rho), atol=1e-12)
        s = n // 2
        h, f = tridiagonal_hitting_and_return(fwd, bwd, start=s)
        assert_allclose(h, hitting_probabilities(Q, s), atol=1e-12)
        assert_allclose(f, return_probabilities(Q), atol=1e-12)

    def test_solve_tridiagonal(self, rng):
        n = 7
        lo, di, up = rng.random(n - 1), rng.random(n) + 2, rng.random(n - 1)
        M = np.diag(di) + np.diag(lo, -1) + np.diag(up, 1)
        b = rng.random(n)
        assert_allclose(solve_tridiagonal(lo, di, up, b), np.linalg.solve(M, b), atol=1e-13)

    def test_input_validation(self):
        with pytest.raises(ValueError, match="at most 1"):
            fundamental_matrix(np.array([[0.7, 0.6], [0, 0]]))
        with pytest.raises(ValueError, match="never absorbed"):
            fundamental_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
        with pytest.raises(ValueError, match="forward\\[-1\\]"):
            tridiagonal_expected_reward([0.5, 0.5], [0.0, 0.2], [1, 1])
