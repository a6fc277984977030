"""Order-1 P@H under RWBM: the truncated, a-priori-sized Gauss rule against the graded rule it replaced,
against exact reach probabilities and eigenvalues, and against a 30-digit reference."""
import math

import numpy as np
import pytest

import irmeasures_markov as imm
import irmeasures_markov.core._birth_death_order1 as order1
from irmeasures_markov._util._segments import expand_ranges
from irmeasures_markov.core._birth_death_order1 import (
    _birth_death_average_reward_graded,
    birth_death_average_reward,
    birth_death_average_reward_recursion,
    gauss_nodes_for_bound,
    identical_blocks,
    reach_truncation,
    spectral_radius_bound,
)
from irmeasures_markov.measures.stopping_time import browsing_model


def random_stack(rng, n_blocks, max_len, total=(0.3, 1.0)):
    lengths = rng.integers(1, max_len + 1, n_blocks)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    move = rng.uniform(*total, n)
    share = rng.random(n)
    fwd, bwd = move * share, move * (1 - share)
    fwd[offsets[1:] - 1] = 0.0
    bwd[offsets[:-1]] = 0.0
    return fwd, bwd, offsets


def dense_q(fwd, bwd):
    return np.diag(fwd[:-1], 1) + np.diag(bwd[1:], -1)


class TestAgainstGradedRule:
    """The rule before this change (kept as ``_birth_death_average_reward_graded``) on the same inputs."""

    @pytest.mark.parametrize("seed", range(6))
    def test_random_stacked_chains(self, seed):
        rng = np.random.default_rng(seed)
        for total in ((0.3, 1.0), (0.9, 0.999), (0.0, 0.6)):
            fwd, bwd, offsets = random_stack(rng, 6, 120, total)
            reward = rng.uniform(0, 3, fwd.size) * (rng.random(fwd.size) < 0.3)
            # starts at the first state, or inside the block
            starts = offsets[:-1] + (rng.random(offsets.size - 1) < 0.3) * (np.diff(offsets) // 2)
            for c in (1.0, 0.75, 0.3, 0.0):
                new = birth_death_average_reward(fwd, bwd, reward, starts, c)
                old = _birth_death_average_reward_graded(fwd, bwd, reward, starts, c)
                np.testing.assert_allclose(np.add.reduceat(new, offsets[:-1]), np.add.reduceat(old, offsets[:-1]),
                                           rtol=0, atol=1e-12 * max(1.0, reward.max()))

    def test_long_rankings_through_the_measure(self, monkeypatch):
        """20 queries x 600 documents, with and without relevance-dependent p, q, both `top` rules."""
        rng = np.random.default_rng(7)
        qrels = {f"q{k}": {f"d{i}": int(rng.random() < 0.08) * int(rng.integers(1, 3)) for i in range(600)}
                 for k in range(20)}
        run = {q: {f"d{i}": float(rng.random()) for i in range(int(rng.integers(1, 600)))} for q in qrels}
        measures = [imm.PH(browse="RWBM", p=0.5, q=0.25, loss=0.25, order=1),
                    imm.PH(browse="RWBM", p=0.6, q=0.3, p_rel=0.2, q_rel=0.5, loss=0.5, order=1, top="forward"),
                    imm.PH(browse="RWBM", p=0.7, q=0.29, order=1, gain="grade")]
        new = {m: {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)} for m in measures}
        monkeypatch.setattr(order1, "birth_death_average_reward", _birth_death_average_reward_graded)
        import irmeasures_markov.measures.stopping_time._batch as batch_mod
        monkeypatch.setattr(batch_mod, "birth_death_average_reward", _birth_death_average_reward_graded)
        for m in measures:
            old = {r.query_id: r.value for r in imm.PROVIDER.iter_calc([m], qrels, run)}
            assert old.keys() == new[m].keys()
            for q in old:
                assert new[m][q] == pytest.approx(old[q], abs=1e-12), (m, q)

    def test_chunks_of_blocks_and_nodes(self, monkeypatch):
        """Groups of blocks (and nodes of one long block) solved in several stacked calls: same values."""
        rng = np.random.default_rng(9)
        fwd, bwd, offsets = random_stack(rng, 9, 90, (0.5, 0.9))
        reward = rng.uniform(0, 1, fwd.size)
        whole = birth_death_average_reward(fwd, bwd, reward, offsets[:-1], 0.5)
        for cells in (40, 200, 1000):
            monkeypatch.setattr(order1, "ORDER1_CELLS", cells)
            np.testing.assert_allclose(birth_death_average_reward(fwd, bwd, reward, offsets[:-1], 0.5), whole,
                                       rtol=1e-13, atol=1e-16)

    def test_start_inside_a_block_against_the_step_recursion(self):
        rng = np.random.default_rng(3)
        fwd, bwd, _ = random_stack(rng, 1, 1, (0.5, 0.9))
        fwd, bwd = rng.uniform(0.2, 0.5, 40), rng.uniform(0.1, 0.4, 40)
        reward = rng.uniform(0, 1, 40)
        for start in (0, 7, 39):
            got = birth_death_average_reward(fwd, bwd, reward, [start], 0.6).sum()
            assert got == pytest.approx(birth_death_average_reward_recursion(fwd, bwd, reward, start, 0.6),
                                        abs=1e-12)


def gather(fwd, bwd):
    """The chains as :func:`reach_truncation` reads them."""
    return lambda idx: (fwd[idx], bwd[idx])


class TestTruncation:
    def test_dropped_states_are_reached_with_probability_below_tol(self):
        """Exact reach probabilities h_j = N_sj / N_jj (dense inverse) of every dropped state."""
        rng = np.random.default_rng(11)
        for _ in range(12):
            fwd, bwd, offsets = random_stack(rng, 3, 150, (0.2, 0.95))
            local = np.where(rng.random(offsets.size - 1) < 0.2, -1, 0)
            tol = 10.0 ** -rng.integers(3, 15)
            keep = reach_truncation(gather(fwd, bwd), offsets, local, tol, window=int(rng.integers(1, 64)))
            for b, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:])):
                if local[b] < 0:
                    assert keep[b] == 0
                    continue
                N = np.linalg.inv(np.eye(hi - lo) - dense_q(fwd[lo:hi], bwd[lo:hi]))
                reach = N[0] / np.diag(N)
                assert 1 <= keep[b] <= hi - lo
                assert np.all(reach[keep[b]:] < tol)
                # and the cut is not wasteful: the last kept state is reached with probability
                # above tol times the bound's slack (here p/(1-q) against the exact a_k)
                assert keep[b] == hi - lo or reach[keep[b] - 1] > tol * 1e-6 ** (keep[b] / 10 + 1)

    def test_cut_depth_for_the_paper_walk(self):
        """RWBM p = 0.5, q = 0.25: P(reach i) = 0.586^(i-1), so about 70 ranks of 1000 carry 1e-16."""
        n = 1000
        fwd, bwd = np.full(n, 0.5), np.full(n, 0.25)
        fwd[-1], bwd[0] = 0.0, 0.0
        keep = reach_truncation(gather(fwd, bwd), np.array([0, n]), np.array([0]), 1e-16)
        exact = 1 + math.ceil(math.log(1e-16) / math.log((1 - math.sqrt(1 - 4 * 0.5 * 0.25)) / (2 * 0.25)))
        assert exact <= keep[0] <= exact + 5

    def test_ranges(self):
        assert expand_ranges(np.array([5, 0, 10]), np.array([2, 0, 3])).tolist() == [5, 6, 10, 11, 12]
        assert expand_ranges(np.array([], dtype=np.intp), np.array([], dtype=np.intp)).tolist() == []


class TestQuadratureRule:
    def test_spectral_radius_bound_holds(self):
        rng = np.random.default_rng(5)
        for _ in range(30):
            fwd, bwd, offsets = random_stack(rng, 3, 30, (0.0, 1.0))
            steps = np.linalg.solve(np.eye(fwd.size) - dense_q(fwd, bwd), np.ones(fwd.size))
            bound = spectral_radius_bound(fwd, bwd, offsets, np.maximum.reduceat(steps, offsets[:-1]))
            for b, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:])):
                rho = max(abs(np.linalg.eigvals(dense_q(fwd[lo:hi], bwd[lo:hi])))) if hi - lo > 1 else 0.0
                assert rho <= bound[b] + 1e-12

    @pytest.mark.parametrize("pole", [1.02, 1.2, 1.5, 3.0])
    @pytest.mark.parametrize("tol", [1e-6, 1e-10, 1e-14])
    def test_node_count_meets_the_tolerance(self, pole, tol):
        """G(z) = 1/(R - z), a power series with positive coefficients: integral log(R / (R - 1))."""
        exact = math.log(pole / (pole - 1.0))

        def error(n):
            x, w = np.polynomial.legendre.leggauss(n)
            return abs((w / 2) @ (1.0 / (pole - (x + 1) / 2)) - exact)

        r = 1.0 + 0.75 * (pole - 1.0)
        n = int(gauss_nodes_for_bound(np.array([r]), np.array([1.0 / (pole - r)]), tol)[0])
        rounding = 1e-15 * n / (pole - 1.0)         # a sum of n terms up to 1/(R - 1)
        assert error(n) <= tol + rounding
        # and not wasteful: within a factor 2 of the fewest nodes that reach tol
        fewest = next(k for k in range(1, 400) if error(k) <= tol + rounding)
        assert n <= 2 * fewest + 2

    def test_node_count_without_a_finite_rule(self):
        """A radius at 1 or a bound that is not finite asks for 'too many' nodes (the caller then falls back),
        never for a negative or zero count."""
        need = gauss_nodes_for_bound(np.array([1.0, 1.0 + 1e-17, 1.2, 1.2]), np.array([1.0, 1.0, np.inf, np.nan]),
                                     1e-15)
        assert np.all(need > 64)
        assert gauss_nodes_for_bound(np.array([5.0]), np.array([0.0]), 1e-15).tolist() == [1]

    def test_identical_blocks(self):
        a, b = np.array([0.5, 0.4, 0.0]), np.array([0.0, 0.2, 0.3])
        fwd = np.concatenate([a, a, a, [0.5, 0.0]])
        bwd = np.concatenate([b, b, b, [0.0, 0.2]])
        bwd[7] = 0.25                      # third copy differs in one state
        offsets = np.array([0, 3, 6, 9, 11])
        assert identical_blocks(fwd, bwd, offsets, np.array([0, 0, 0, 0])).tolist() == [0, 0, 2, 3]
        assert identical_blocks(fwd, bwd, offsets, np.array([0, 1, 0, 0])).tolist() == [0, 1, 2, 3]


def test_work_per_run(monkeypatch):
    """The paper's RWBM walk on 20 rankings of 1000 documents: one chain of ~70 states integrated with
    at most 24 nodes (the graded rule solved 20 x 1000 states at 60 nodes); relevance-dependent p, q
    keep one chain per query, still cut to ~100 states each."""
    calls = []
    real = order1._gauss_integral

    def spy(fwd, bwd, stop, e_start, offsets, n_nodes, c):
        calls.append((fwd.size, n_nodes))
        return real(fwd, bwd, stop, e_start, offsets, n_nodes, c)

    monkeypatch.setattr(order1, "_gauss_integral", spy)
    rng = np.random.default_rng(0)
    qrels = {f"q{k}": {f"d{i}": int(rng.random() < 0.05) for i in range(1000)} for k in range(20)}
    run = {q: {f"d{i}": float(-i) for i in range(1000)} for q in qrels}
    imm.PROVIDER.calc_aggregate([imm.PH(browse="RWBM", p=0.5, q=0.25, loss=0.25, order=1)], qrels, run)
    assert len(calls) == 1 and calls[0][0] <= 80 and calls[0][1] <= 24
    calls.clear()
    imm.PROVIDER.calc_aggregate([imm.PH(browse="RWBM", p=0.5, q=0.25, p_rel=0.3, q_rel=0.4, loss=0.25, order=1)],
                                qrels, run)
    assert len(calls) == 1 and calls[0][0] <= 20 * 100 and calls[0][1] <= 30


def test_against_30_digit_reference():
    """A well-conditioned walk (the fast path): the integral with 30-digit dense solves and mpmath's
    Gauss-Legendre, with relevance-dependent p, q and utility loss."""
    mp = pytest.importorskip("mpmath")
    grades = [1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0]
    n, loss = len(grades), 0.4
    model = browsing_model(grades, browse="RWBM", p=0.55, q=0.3, p_rel=0.35, q_rel=0.45, loss=loss, order=1)
    with mp.workdps(30):
        P = [mp.mpf(0.35) if g else mp.mpf(0.55) for g in grades]
        Qb = [mp.mpf(0.45) if g else mp.mpf(0.3) for g in grades]
        Qb[0], P[-1] = mp.mpf(0), mp.mpf(0)
        S = [1 - a - b for a, b in zip(P, Qb)]
        c = 1 - mp.mpf(loss)

        def integrand(z):
            M = mp.eye(n)
            for i in range(n):
                if i + 1 < n:
                    M[i, i + 1] = -z * P[i]
                if i:
                    M[i, i - 1] = -z * Qb[i]
            N = M ** -1
            return sum(N[0, j] * sum(N[j, k] * S[k] for k in range(n)) / ((1 - c) * N[j, j] + c)
                       for j in range(n) if grades[j])

        reference = float(mp.quad(integrand, [0, mp.mpf(1) / 2, 1], method="gauss-legendre", maxdegree=3))
    assert model.expectation(1) == pytest.approx(reference, rel=1e-13)


class TestManySmallQueries:
    """The batch path with many short rankings: running products across segments, and the
    visit-count formula in groups of queries, against each query on its own."""

    def test_segment_products_are_the_per_segment_ones(self):
        from irmeasures_markov.measures.stopping_time._batch import _segment_cumprod_shift
        rng = np.random.default_rng(2)
        for n_segments in (3, 60):           # fewer and more segments than the longest one
            lengths = rng.integers(0, 25, n_segments)
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            v = rng.random(offsets[-1])
            for a, b in zip(offsets[:-1], offsets[1:]):
                if b > a:
                    assert _segment_cumprod_shift(v, offsets)[a:b].tolist() == \
                        [1.0] + np.cumprod(v[a:b - 1]).tolist()

    @pytest.mark.parametrize("params", [dict(user="AP"), dict(p=0.7, order=1), dict(user="RBP", p=0.6),
                                        dict(browse="RWBM", p=0.5, q=0.3, loss=0.4),
                                        dict(browse="RWBM", p=0.5, q=0.3, p_rel=0.2, q_rel=0.6, loss=0.4, order=1)])
    def test_batch_equals_each_query_alone(self, params, monkeypatch):
        import irmeasures_markov.measures.stopping_time._batch as batch_mod
        from irmeasures_markov.measures.stopping_time import path_at_h_batch
        from irmeasures_markov.ranking import RelevanceBatch
        monkeypatch.setattr(batch_mod, "GROUP_RANKS", 16)
        rng = np.random.default_rng(4)
        lengths = rng.integers(0, 9, 300)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        grades = rng.integers(0, 3, offsets[-1]).astype(np.int32)
        batch = RelevanceBatch([str(i) for i in range(lengths.size)], offsets, grades, grades >= 1,
                               np.full(lengths.size, 5), 1)
        got = path_at_h_batch(batch, **params)
        for k, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
            alone = browsing_model(grades[a:b], **params).value() if b > a else 0.0
            assert got[k] == pytest.approx(alone, rel=1e-12, abs=1e-14)
