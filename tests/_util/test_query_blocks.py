"""segments.query_blocks: blocks of whole queries, about ``size`` documents each (TBG, the whole-run join, P@H)."""
import numpy as np
import pytest

from irmeasures_markov._util._segments import query_blocks


@pytest.mark.parametrize("seed", range(200))
def test_blocks_against_their_definition(seed):
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 30))
    lengths = rng.integers(0, int(rng.integers(1, 12)), nq)
    lengths[rng.random(nq) < 0.3] = 0                              # empty queries anywhere
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    size = int(rng.integers(1, 20))
    blocks = query_blocks(offsets, size)
    # consecutive, covering every query once, none empty
    assert blocks[0][0] == 0 and blocks[-1][1] == nq
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(blocks[:-1], blocks[1:]))
    assert all(a < b for a, b in blocks)
    # a block starts exactly where a query starts in a new multiple of size documents
    starts = [a for a, _ in blocks]
    want = [0] + [i for i in range(1, nq) if offsets[i] // size != offsets[i - 1] // size]
    assert starts == want
    # so a block holds at most size documents plus its last ranking
    for a, b in blocks:
        assert offsets[b - 1] - offsets[a] < size


def test_no_queries_no_blocks():
    assert query_blocks(np.array([0]), 8) == []
    assert query_blocks(np.array([0, 0, 0]), 8) == [(0, 2)]
