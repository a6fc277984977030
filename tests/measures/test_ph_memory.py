"""P@H's batch path in blocks of queries: bounded temporaries, values bit for bit those of one pass."""
import tracemalloc

import numpy as np
import pytest

import irmeasures_markov.measures.stopping_time._batch as batch_mod
from irmeasures_markov.measures.stopping_time import path_at_h_batch
from irmeasures_markov.ranking import RelevanceBatch

FORWARD_MODELS = [
    dict(), dict(order=1), dict(p=0.55, order=1, gain="grade"), dict(p=0.9, p_rel=0.3, gain="exp2"),
    dict(p=0.9, p_rel=0.3, order=1, f="1"), dict(browse="DFBM"), dict(browse="DFBM", order=1),
    dict(browse="RWBM", p=0.6, q=0.0, top="forward", order=1), dict(user="AP"), dict(user="P"),
    dict(user="RBP", p=0.6), dict(user="DCG", b=3), dict(user="DCG", gain="exp2"), dict(user="ERR"),
]


pytestmark = pytest.mark.slow  # memory bounds (tracemalloc)


def _batch(n_queries, mean_len, seed, rel=1):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 2 * mean_len, n_queries)
    lengths[::17] = 0                                  # empty rankings
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    grades = rng.integers(-1, 4, offsets[-1]).astype(np.int32)
    recall_base = rng.integers(0, 6, n_queries)        # some queries without relevant documents
    return RelevanceBatch([str(i) for i in range(n_queries)], offsets, grades, grades >= rel, recall_base, rel)


@pytest.mark.parametrize("params", FORWARD_MODELS)
@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_blocks_give_the_values_of_one_pass_bit_for_bit(params, block, monkeypatch):
    batch = _batch(400, 9, seed=block)
    g_max = np.random.default_rng(1).integers(1, 4, 400).astype(np.float64) if params.get("user") == "ERR" else None
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 62, raising=False)   # one pass over every query
    whole = path_at_h_batch(batch, g_max=g_max, **params)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", block, raising=False)
    got = path_at_h_batch(batch, g_max=g_max, **params)
    assert got.dtype == np.float64 and got.shape == (400,)
    assert got.tobytes() == whole.tobytes()
    assert np.count_nonzero(whole) > 100                 # the comparison is not between zeros


@pytest.mark.parametrize("params", [dict(), dict(order=1), dict(user="RBP", p=0.5)])
def test_padding_per_block_matches_one_pass(params, monkeypatch):
    batch = _batch(300, 6, seed=3, rel=2)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 62, raising=False)
    whole = path_at_h_batch(batch, pad_to=10, **params)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 50, raising=False)
    assert path_at_h_batch(batch, pad_to=10, **params).tobytes() == whole.tobytes()
    with pytest.raises(ValueError, match="positive integer"):
        path_at_h_batch(batch, pad_to=0, **params)


def test_blocks_agree_with_each_query_alone(monkeypatch):
    # independent of the flat kernels: the single-ranking model, query by query
    from irmeasures_markov.measures.stopping_time import browsing_model
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 40, raising=False)
    batch = _batch(120, 8, seed=5)
    got = path_at_h_batch(batch, p=0.7, order=1)
    for k, (a, b) in enumerate(zip(batch.offsets[:-1], batch.offsets[1:])):
        alone = browsing_model(batch.grades[a:b], p=0.7, order=1).value() if b > a else 0.0
        assert got[k] == pytest.approx(alone if batch.recall_base[k] else 0.0, rel=1e-12, abs=1e-14)


def _kernel_peak(batch, **params):
    tracemalloc.start()
    try:
        path_at_h_batch(batch, **params)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("params", [dict(), dict(order=1), dict(user="AP"), dict(user="DCG")])
def test_peak_memory_does_not_grow_with_the_run(params):
    # 10,000 queries x ~100 documents: one pass held 40-64 bytes per document (fwd, bwd, gains,
    # survival, products, ranks); in blocks of BLOCK_DOCS documents the temporaries are ~7 MB
    batch = _batch(10_000, 100, seed=7)
    n = int(batch.offsets[-1])
    assert n > 900_000 and batch_mod.BLOCK_DOCS <= 1 << 18
    peak = _kernel_peak(batch, **params)
    assert peak / n < 12, f"{peak / n:.1f} bytes per document"


def test_peak_memory_follows_the_block_size(monkeypatch):
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 12, raising=False)
    batch = _batch(3_000, 100, seed=8)
    n = int(batch.offsets[-1])
    peak = _kernel_peak(batch, order=1)
    assert peak / n < 3, f"{peak / n:.1f} bytes per document"


BACKWARD_ORDER2 = [
    dict(browse="RWBM", p=0.5, q=0.3), dict(browse="RWBM", p=0.5, q=0.3, loss=0.4, gain="grade"),
    dict(browse="RWBM", p=0.6, q=0.0, p_rel=0.3, q_rel=0.5, top="forward"),
    dict(browse="RWBM", p=0.4, q=0.35, p_rel=0.7, q_rel=0.0, loss=0.2),
    dict(browse="RWBM", p=0.5, q=0.3, order=1, f="1"), dict(browse="RWBM", p=0.5, q=0.2, tail="inf"),
    dict(p=0.7, tail="inf"), dict(user="RBP", p=0.6, tail="inf"),
]


def _batch_with_short_head(seed):
    # the first queries have a single document: a block of them has no backward move, while the
    # run has; the method must still be the run's
    b = _batch(300, 8, seed=seed)
    lengths = np.diff(b.offsets)
    lengths[:60] = 1
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    grades = np.random.default_rng(seed).integers(-1, 4, offsets[-1]).astype(np.int32)
    return RelevanceBatch(b.qids, offsets, grades, grades >= 1, b.recall_base, 1)


@pytest.mark.parametrize("params", BACKWARD_ORDER2)
@pytest.mark.parametrize("group", [4, 33, 500])
def test_backward_order2_blocks_give_the_values_of_one_pass_bit_for_bit(params, group, monkeypatch):
    monkeypatch.setattr(batch_mod, "GROUP_RANKS", group)
    batch = _batch_with_short_head(group)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 62, raising=False)
    whole = path_at_h_batch(batch, **params)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 10, raising=False)
    assert path_at_h_batch(batch, **params).tobytes() == whole.tobytes()
    assert np.count_nonzero(whole) > 100


@pytest.mark.parametrize("q,q_rel", [(0.3, None), (0.0, 0.4), (0.2, 0.0), (0.0, 0.0), (0.3, 0.1)])
def test_has_backward_agrees_with_the_transitions(q, q_rel):
    from irmeasures_markov.measures.stopping_time import batch_transitions
    for seed in range(30):
        rng = np.random.default_rng(seed)
        lengths = rng.integers(0, 3, rng.integers(1, 6))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        grades = rng.integers(0, 2, offsets[-1]).astype(np.int32)
        batch = RelevanceBatch([str(i) for i in range(lengths.size)], offsets, grades, grades >= 1,
                               np.ones(lengths.size, dtype=np.int64), 1)
        bwd = batch_transitions(batch, browse="RWBM", p=0.5, q=q, q_rel=q_rel)[1]
        assert batch_mod._has_backward(batch, q, q_rel) == bool(np.any(bwd > 0))


def test_backward_order2_peak_memory_does_not_grow_with_the_run(monkeypatch):
    # its solves hold ~140 bytes per rank of a group: with groups of 2^12 ranks, ~0.6 MB
    monkeypatch.setattr(batch_mod, "GROUP_RANKS", 1 << 12)
    params = dict(browse="RWBM", p=0.5, q=0.25, loss=0.25)
    path_at_h_batch(_batch(20, 10, seed=1), **params)         # imports LAPACK outside the measurement
    batch = _batch(3_000, 100, seed=9)
    peak = _kernel_peak(batch, **params)
    assert peak / int(batch.offsets[-1]) < 4, f"{peak / int(batch.offsets[-1]):.1f} bytes per document"
