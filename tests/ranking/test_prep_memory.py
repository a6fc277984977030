"""The memory of preparing a dict run of long rankings: tracemalloc's peak per document.

200 queries of 5,000 documents (random order, scores with three decimals, so half the documents tie),
made columns at PreparedRun's boundary (a docid list and a score array, 16 bytes per document, both kept)
and joined: the rank order, the scores in rank order while the positive judgments' hits are placed, the tie
groups (5 bytes per tied document), the positive grade at every rank.  (The dict join this replaced read
the scores again from the dicts instead of keeping them: ~8 bytes per document less.)  The sort's block is
made small, so its fixed-size temporaries do not hide the ones that grow with the run.
"""
import tracemalloc

import numpy as np
import pytest

import irmeasures_markov._util._segments as segments
from irmeasures_markov.ranking import QrelsIndex
from irmeasures_markov.ranking import _join as join
from irmeasures_markov.ranking._prepared import PreparedRun

pytestmark = pytest.mark.slow  # memory bounds (tracemalloc)


def _long_run(n_queries, n_docs, seed=0):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    scores = np.round(rng.normal(10.0, 2.0, size=(n_queries, n_docs)), 3)
    for q in range(n_queries):
        docs = [str(d) for d in rng.choice(10 * n_docs, size=n_docs, replace=False).tolist()]
        run[f"q{q}"] = dict(zip(docs, scores[q].tolist()))
        picks = rng.choice(n_docs, size=10, replace=False).tolist()
        qrels[f"q{q}"] = {docs[k]: int(g) for k, g in zip(picks, rng.integers(0, 3, 10).tolist())}
    return QrelsIndex(qrels), run


def test_ranking_long_rankings_holds_no_second_copy_of_the_scores(monkeypatch):
    monkeypatch.setattr(segments, "_SORT_BLOCK", 1 << 12)
    qi, run = _long_run(200, 5000)
    n = 200 * 5000
    tracemalloc.start()
    try:
        flat = PreparedRun(qi, run)._flat
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert int(flat.key_starts[-1]) == n
    assert flat._ties is not None and int(np.count_nonzero(flat.positive_grades)) > 0
    # held: docids 8, scores 8, order 8, tie groups ~3 (int32 slots and a first-slot mark), positive grades 8;
    # the ranked scores (8) besides while the hits are placed
    assert peak / n < 48, f"{peak / n:.1f} bytes per document"
    assert held / n < 40, f"{held / n:.1f} bytes per document held"


def test_values_in_rank_order_holds_one_array_of_the_run(monkeypatch):
    """The values at each rank, looked up block by block: no whole-run array in file order beside them."""
    monkeypatch.setattr(join, "LOOKUP_BLOCK", 1 << 12)
    qi, run = _long_run(40, 5000, seed=1)
    flat = PreparedRun(qi, run)._flat
    n = int(flat.key_starts[-1])
    order = flat.positive_tie_order
    lookup = lambda segments, joined: np.full(len(segments[0]), 3.0)  # noqa: E731
    tracemalloc.start()
    try:
        flat.values_in_rank_order(lookup, order)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 10, f"{peak / n:.1f} bytes per document"   # ``lookup(keys)[order]``: 16
