"""The memory bound (docs/conventions.md) on the paths that held whole-run temporaries.

MPcont(time='tbg')'s holding rates and P@H order 1 with backward moves: tracemalloc's peak per document
on moderate synthetic runs (the block sizes made small, so fixed-size temporaries do not hide the ones
that grow with the run), and the values bit for bit those of one pass.
"""
import tracemalloc
import warnings

import numpy as np
import pytest

import irmeasures_markov as imm
import irmeasures_markov.core._birth_death_order1 as order1
import irmeasures_markov.measures.stopping_time._batch as batch_mod
import irmeasures_markov.plugin._tbg as tbg_plugin
import irmeasures_markov.ranking._join as join
from irmeasures_markov.measures import TBGParameters, holding_times
from irmeasures_markov.measures.stopping_time import path_at_h_batch
from irmeasures_markov.ranking import RelevanceBatch

pytestmark = pytest.mark.slow  # memory bounds (tracemalloc)


def _traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------------
# MPcont(time='tbg'): the TBG holding rates
# ---------------------------------------------------------------------------

def _run_with_lengths(n_queries, n_docs, seed):
    """Qrels, run (distinct scores) and a length for every retrieved document."""
    rng = np.random.default_rng(seed)
    qrels, run, lengths = {}, {}, {}
    for q in range(n_queries):
        docs = [f"d{q}-{k}" for k in range(n_docs)]
        run[f"q{q}"] = dict(zip(docs, rng.permutation(n_docs).astype(float).tolist()))
        picks = rng.choice(n_docs, size=10, replace=False).tolist()
        qrels[f"q{q}"] = {docs[k]: int(g) for k, g in zip(picks, rng.integers(0, 3, 10).tolist())}
        lengths.update(zip(docs, rng.integers(0, 2000, n_docs).tolist()))
    return qrels, run, lengths


@pytest.fixture(scope="module")
def mpcont_run():
    qrels, run, lengths = _run_with_lengths(1500, 100, seed=11)
    imm.register_lengths("memory-bound-test", lengths)
    return qrels, run


def _prepared(measure, qrels, run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = imm.PROVIDER.evaluator([measure], qrels)
        prepared = ev.prepare(run)
        measure.compute(prepared)          # the length table, the batch and recall bases: made once
    return prepared


def test_mpcont_tbg_rates_peak_does_not_grow_with_the_run(mpcont_run, monkeypatch):
    # whole-run arithmetic held the lengths, the click probabilities and gains, two temporaries and
    # the rates: ~48 bytes per document; in blocks, the lengths and the rates (16) and the lookup's
    # rank-order copy
    monkeypatch.setattr(join, "LOOKUP_BLOCK", 1 << 12)
    monkeypatch.setattr(tbg_plugin, "RATE_BLOCK", 1 << 10, raising=False)
    qrels, run = mpcont_run
    m = imm.MPcont(time="tbg", lengths="memory-bound-test")
    prepared = _prepared(m, qrels, run)
    batch = m.batch(prepared)
    n = int(batch.offsets[-1])
    assert n == 150_000
    peak = _traced_peak(lambda: tbg_plugin.tbg_flat_rates(prepared, batch, m))
    assert peak / n < 26, f"{peak / n:.1f} bytes per document"
    peak = _traced_peak(lambda: m.compute(prepared))
    assert peak / n < 26, f"{peak / n:.1f} bytes per document"


@pytest.mark.parametrize("kw", [dict(), dict(pc_by_grade="1:0.4,2:0.9", t_summary=0.0), dict(rel=2)])
def test_mpcont_tbg_rates_in_blocks_equal_each_query_alone(mpcont_run, kw, monkeypatch):
    # independent of the blocks: TBG's holding times of each ranking alone
    monkeypatch.setattr(tbg_plugin, "RATE_BLOCK", 777, raising=False)
    qrels, run = mpcont_run
    m = imm.MPcont(time="tbg", lengths="memory-bound-test", **kw)
    prepared = _prepared(m, qrels, run)
    batch = m.batch(prepared, with_docids=True)
    rates = tbg_plugin.tbg_flat_rates(prepared, batch, m)
    lengths = imm.plugin._tbg.document_lengths(m)
    params = TBGParameters(**{k: v for k, v in kw.items() if k != "rel"})
    for i in range(0, batch.n_queries, 37):
        a, b = batch.offsets[i], batch.offsets[i + 1]
        mean = holding_times(batch.grades[a:b], lengths.lookup(batch.docids[i]), params, batch.rel)
        relevant = batch.relevant[a:b]
        mean[~relevant & (mean <= 0)] = 1.0
        assert np.array_equal(rates[a:b], 1.0 / mean)


def test_mpcont_tbg_zero_holding_time_still_an_error(mpcont_run, monkeypatch):
    monkeypatch.setattr(tbg_plugin, "RATE_BLOCK", 500, raising=False)
    qrels, run = mpcont_run
    m = imm.MPcont(time="tbg", lengths="memory-bound-test", t_summary=0.0, a=0.0, b=0.0)
    with pytest.raises(ValueError, match="holding time at a relevant rank is 0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imm.PROVIDER.evaluator([m], qrels).values(run)


# ---------------------------------------------------------------------------
# P@H order 1 with backward moves
# ---------------------------------------------------------------------------

ORDER1_BACKWARD = [
    dict(browse="RWBM", p=0.5, q=0.25, loss=0.25, order=1),
    dict(browse="RWBM", p=0.5, q=0.3, order=1, gain="grade"),
    dict(browse="RWBM", p=0.6, q=0.3, p_rel=0.3, q_rel=0.1, loss=0.1, order=1, gain="exp2"),
    dict(browse="RWBM", p=0.9, q=0.1, order=1, top="forward"),
    dict(browse="RWBM", p=0.0, q=0.3, p_rel=0.7, q_rel=0.0, order=1, loss=0.5),   # chains cut inside rankings
]


def _batch(n_queries, mean_len, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 2 * mean_len, n_queries)
    lengths[::17] = 0                                  # empty rankings
    lengths[1::19] = 1                                 # rankings without a backward move
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    grades = rng.integers(-1, 4, offsets[-1]).astype(np.int32)
    recall_base = rng.integers(0, 6, n_queries)        # some queries without relevant documents
    return RelevanceBatch([str(i) for i in range(n_queries)], offsets, grades, grades >= 1, recall_base, 1)


@pytest.mark.parametrize("params", ORDER1_BACKWARD)
@pytest.mark.parametrize("block,group,pad_to", [(40, 1 << 17, None), (7, 60, None), (300, 5, None),
                                                (50, 200, 30), (1000, 33, 3)])
def test_order1_backward_blocks_give_the_values_of_one_pass_bit_for_bit(params, block, group, pad_to,
                                                                         monkeypatch):
    # groups of few kept states: many quadrature rules, each fixed by its group as in one pass
    monkeypatch.setattr(order1, "ORDER1_GROUP_STATES", group)
    batch = _batch(300, 20, seed=block + group)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 62)         # one pass over every query
    whole = path_at_h_batch(batch, pad_to=pad_to, **params)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", block)
    got = path_at_h_batch(batch, pad_to=pad_to, **params)
    assert got.dtype == np.float64 and got.shape == (300,)
    assert got.tobytes() == whole.tobytes()
    assert np.count_nonzero(whole) > 100                          # the comparison is not between zeros


def test_order1_without_backward_moves_takes_the_closed_form(monkeypatch):
    # rankings of one document: RWBM has no backward move anywhere, as one pass finds
    lengths = np.ones(200, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    grades = np.random.default_rng(2).integers(0, 3, 200)
    batch = RelevanceBatch([str(i) for i in range(200)], offsets, grades, grades >= 1, np.ones(200, np.int64), 1)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 62)
    whole = path_at_h_batch(batch, browse="RWBM", p=0.5, q=0.25, order=1)
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 16)
    assert path_at_h_batch(batch, browse="RWBM", p=0.5, q=0.25, order=1).tobytes() == whole.tobytes()
    assert np.array_equal(whole, (grades >= 1).astype(float))


def test_order1_backward_peak_memory_does_not_grow_with_the_run(monkeypatch):
    # one pass held the run's forward, backward, gain and per-rank terms (32 bytes per document and
    # more); in blocks, two integers per chain (one per ranking here) and temporaries of the block and
    # group sizes, which do not grow with the run: a run four times longer peaks at nearly the same
    monkeypatch.setattr(batch_mod, "BLOCK_DOCS", 1 << 12)
    monkeypatch.setattr(order1, "ORDER1_GROUP_STATES", 1 << 12)
    monkeypatch.setattr(order1, "ORDER1_CELLS", 1 << 13)
    monkeypatch.setattr(order1, "ORDER1_REACH_CHUNK", 1 << 12, raising=False)
    params = ORDER1_BACKWARD[0]
    path_at_h_batch(_batch(20, 10, seed=1), **params)                 # imports LAPACK outside the measurement
    small, large = _batch(1_000, 100, seed=9), _batch(4_000, 100, seed=10)
    peaks = [_traced_peak(lambda b=b: path_at_h_batch(b, **params)) for b in (small, large)]
    added = int(large.offsets[-1]) - int(small.offsets[-1])
    assert added > 250_000
    assert (peaks[1] - peaks[0]) / added < 4, f"{(peaks[1] - peaks[0]) / added:.1f} bytes per added document"
    assert peaks[1] / int(large.offsets[-1]) < 12
