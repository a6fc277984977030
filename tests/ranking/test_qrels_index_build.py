"""The qrels index: what it computes lazily and from its vectorised tables equals the per-query answer."""
import warnings

import numpy as np
import pytest

from irmeasures_markov.ranking._qrels_index import QrelsIndex, recall_base_table


def _random_qrels(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    qrels = {}
    for q in range(60):
        n = int(rng.integers(0, 6))  # some queries with no judgment at all
        grades = rng.integers(-2, 4, size=n).tolist()
        qrels[f"q{q}"] = {f"d{int(d)}": g for d, g in zip(rng.integers(0, 40, size=n).tolist(), grades)}
    return qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rel", [-1, 0, 1, 2, 3, 5])
def test_queries_without_relevant_equals_brute_force(seed, rel):
    qrels = _random_qrels(seed)
    index = QrelsIndex(qrels)
    expected = [q for q, docs in qrels.items() if not any(g >= rel for g in docs.values())]
    assert index.queries_without_relevant(rel) == expected
    index_bases, bases = recall_base_table(index, rel)
    assert {q: int(bases[i]) for q, i in index_bases.items()} == \
        {q: sum(g >= rel for g in docs.values()) for q, docs in qrels.items()}
    assert [index.recall_base(q, rel) for q in qrels] == [int(bases[index_bases[q]]) for q in qrels]


def test_warnings_name_the_queries_without_relevant_ones_including_unknown_queries():
    qrels = {"a": {"x": 1}, "b": {"x": 0}, "c": {}, "d": {"y": 2, "z": 0}}
    index = QrelsIndex(qrels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index.warn_if_no_relevant(["a", "b", "zz", "d", "c"], rel=1, warned=set())
    assert len(caught) == 1
    assert str(caught[0].message).endswith(": b, zz, c")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index.warn_if_no_relevant(rel=2, warned=set())
    assert str(caught[0].message).endswith(": a, b, c")


def test_the_queries_without_relevant_ones_are_found_without_sorting_each_query():
    # the evaluator asks for them on every run: one vectorised count over every judgment, not a sort per query
    index = QrelsIndex(_random_qrels(3))
    index.queries_without_relevant(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index.warn_if_no_relevant(["q1", "q2", "q3"], rel=2, warned=set())
    assert index._grades_desc == {}
