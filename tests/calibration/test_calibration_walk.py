"""The walk likelihood (calibration._walk) against the dense implementation it replaced, and its memory.

``_reference_loglik`` / ``_reference_ctr`` are the former implementation kept verbatim in substance: one
(G, Tmax, Tmax) batch of every group padded to the longest ranking.  The current code computes short
groups batched by length and long groups (above ``DENSE_MAX`` ranks) by tridiagonal solves; both paths
must agree with the reference on random logs (the long path forced with ``DENSE_MAX = 0``).
"""
import tracemalloc
from itertools import product

import numpy as np
import pytest

from irmeasures_markov.calibration import ClickLog, Session, _walk, fit
from irmeasures_markov.calibration._likelihood import safe_log
from irmeasures_markov.calibration._walk import click_probability_by_rank, walk_data, walk_loglik


def _padded(data, x):
    out = np.zeros((data.group_len.size, data.T))
    out[data.gid, data.rank] = x
    return out


def _reference_matrices(p, q, gamma, lengths):
    G, T = p.shape
    ranks = np.arange(T)
    inside = ranks[None, :] < lengths[:, None]
    p = np.where(ranks[None, :] < lengths[:, None] - 1, p, 0.0)
    q = np.where(inside & (ranks[None, :] > 0), q, 0.0)
    gamma = np.where(inside, gamma, 0.0)
    P = np.zeros((G, T, T))
    if T > 1:
        P[:, ranks[:-1], ranks[1:]] = p[:, :-1]
        P[:, ranks[1:], ranks[:-1]] = q[:, 1:]
    Z = np.linalg.inv(np.eye(T)[None] - (1.0 - gamma)[:, :, None] * P)
    return P, Z[:, 0, :] * gamma, np.matmul(P, Z) * gamma[:, None, :], gamma


def _reference_loglik(data, p, q, gamma):
    _, a, A, _ = _reference_matrices(_padded(data, p), _padded(data, q), _padded(data, gamma), data.group_len)
    stay = np.einsum("gii->gi", A)
    leave = np.where(1.0 - stay > 0, 1.0 - stay, 1.0)
    end = (1.0 - A.sum(axis=2)) / leave
    g, i, j, k = data.g, data.i, data.j, data.kind
    prob = np.select([k == 0, k == 1, k == 2, k == 3],
                     [1.0 - a.sum(axis=1)[g], a[g, j], A[g, i, j] / leave[g, i], end[g, i]])
    logp = safe_log(np.clip(prob, 0.0, 1.0))
    return np.bincount(data.owner, weights=logp, minlength=len(data.patterns))


def _reference_ctr(data, p, q, gamma):
    P, _, _, gam = _reference_matrices(_padded(data, p), _padded(data, q), _padded(data, gamma), data.group_len)
    G, T, _ = P.shape
    out = np.zeros((G, T))
    for r in range(T):
        d = np.ones((G, T))
        d[:, r] = 1.0 - gam[:, r]
        out[:, r] = np.linalg.inv(np.eye(T)[None] - d[:, :, None] * P)[:, 0, r] * gam[:, r]
    w = np.bincount(np.array([g for g, _ in data.patterns]), weights=data.counts, minlength=G)
    return (w @ out) / w.sum()


def _random_log(rng, n=300, max_len=12):
    sessions = []
    for _k in range(n):
        T = int(rng.integers(1, max_len + 1))
        qid = f"q{rng.integers(4)}"
        clicks = rng.integers(1, T + 1, size=int(rng.integers(0, 6)))
        sessions.append(Session(qid, tuple(f"{qid}d{r}" for r in range(T)), clicks.astype(np.int64)))
    qrels = {f"q{x}": {f"q{x}d{r}": int(rng.integers(0, 2)) for r in range(max_len)} for x in range(4)}
    return ClickLog(sessions), qrels


def _random_params(rng, data):
    n = data.n_ranks
    p = rng.uniform(0.05, 0.9, n)
    q = rng.uniform(0.0, 1.0, n) * (1.0 - p)
    return p, q, rng.uniform(0.05, 0.95, n)


@pytest.mark.parametrize("dense_max", [_walk.DENSE_MAX, 0])
@pytest.mark.parametrize("seed", range(6))
def test_walk_loglik_equals_the_dense_reference(monkeypatch, dense_max, seed):
    monkeypatch.setattr(_walk, "DENSE_MAX", dense_max)
    rng = np.random.default_rng(seed)
    log, qrels = _random_log(rng)
    for data in (walk_data(log), walk_data(log, qrels), walk_data(log, qrels, order="set")):
        for _ in range(3):
            p, q, g = _random_params(rng, data)
            if rng.random() < 0.3:
                q = np.zeros_like(q)            # forward-only users: backward clicks have probability 0
            new, ref = walk_loglik(data, p, q, g), _reference_loglik(data, p, q, g)
            assert np.array_equal(np.isneginf(new), np.isneginf(ref))
            ok = np.isfinite(ref)
            np.testing.assert_allclose(new[ok], ref[ok], rtol=1e-12, atol=1e-12)
            if dense_max:
                # the dense path is the former computation: identical values
                assert np.array_equal(new[ok], ref[ok]) or np.allclose(new[ok], ref[ok], rtol=1e-14, atol=0)
            np.testing.assert_allclose(click_probability_by_rank(data, p, q, g), _reference_ctr(data, p, q, g),
                                       rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dense_max", [_walk.DENSE_MAX, 0])
def test_probabilities_of_all_click_sequences_sum_to_one(monkeypatch, dense_max):
    """Brute force: every click sequence on 4 ranks (repeats merged); both paths."""
    monkeypatch.setattr(_walk, "DENSE_MAX", dense_max)
    seqs = [()]
    for m in range(1, 9):
        seqs += [s for s in product((1, 2, 3, 4), repeat=m) if all(a != b for a, b in zip(s[:-1], s[1:]))]
    log = ClickLog([Session("q", tuple("abcd"), np.array(s, dtype=np.int64)) for s in seqs])
    d = walk_data(log)
    n = d.n_ranks
    total = np.exp(walk_loglik(d, np.full(n, 0.6), np.zeros(n), np.full(n, 0.4))).sum()
    assert total == pytest.approx(1.0, abs=1e-12)
    rest = np.exp(walk_loglik(d, np.full(n, 0.5), np.full(n, 0.2), np.full(n, 0.7))).sum()
    assert 0.99 < rest <= 1.0 + 1e-12     # sequences longer than 8 clicks carry the rest


@pytest.mark.slow  # dense reference on 100 ranks
def test_long_ranking_matches_dense_on_a_100_rank_group():
    """A group above DENSE_MAX (tridiagonal path) against the dense reference, clicks far apart."""
    rng = np.random.default_rng(7)
    T = 100
    shown = tuple(f"d{r}" for r in range(T))
    log = ClickLog([Session("q", shown, np.array(c, dtype=np.int64)) for c in
                    ([1, 5, 3, 40], [], [2], [99, 100, 98], [7, 7, 60, 2])])
    d = walk_data(log)
    assert d.units()[0][0] == "long"
    p, q, g = _random_params(rng, d)
    np.testing.assert_allclose(walk_loglik(d, p, q, g), _reference_loglik(d, p, q, g), rtol=1e-12)
    np.testing.assert_allclose(click_probability_by_rank(d, p, q, g), _reference_ctr(d, p, q, g),
                               rtol=1e-10, atol=1e-14)


@pytest.mark.slow  # memory bound
def test_one_session_of_100000_documents_fits_in_bounded_memory():
    """The former dense (G, T, T) arrays asked for about 149 GiB here; the fit must stay near O(T)."""
    T = 100_000
    shown = tuple(f"d{r}" for r in range(T))
    sessions = [Session("q", shown, np.array([1, 3, 2, 50, 900], dtype=np.int64))]
    sessions += [Session("q2", ("a", "b", "c"), np.array(c, dtype=np.int64)) for c in ([1], [2, 1], [], [3])]
    log = ClickLog(sessions)
    tracemalloc.start()
    try:
        report = fit(log, families=("ph", "mp"), bootstrap=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
    best = report.best("ph")
    assert best.model == "RWBM" and np.isfinite(best.loglik)     # the only fitted user that moves backwards
    assert best.n_sessions == 5 and report.best("mp").n_sessions == 1
    assert any("1 session on rankings longer than 100 documents left out" in n for n in report.notes)
