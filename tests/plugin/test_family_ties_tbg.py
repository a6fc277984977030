"""TBG under ties='expected' and unjudged='rel' (issue 26).

Documents of equal grade and equal length are interchangeable (TBG.tie_values); filled ranks past the ranking
take default_length, else the mean length of the query's documents, and are read until the decay leaves
< 1e-17 of gain (or up to the cutoff).  Checked against brute force over every tie order and against explicit
runs with relevant documents of that length appended.
"""
import itertools

import numpy as np
import pytest
from family_ties_brute import brute_expected, evaluate, random_tied
from ties_brute import trec_order

from irmeasures_markov import register_lengths
from irmeasures_markov.measures import time_biased_gain


def lengths_for(run, seed, choices=(50, 120, 400)):
    rng = np.random.default_rng(seed)
    return {d: float(rng.choice(choices)) for docs in run.values() for d in docs}


@pytest.mark.parametrize("params", ["", "halflife=60,", "norm='ideal',", "pc_by_grade='2:0.9',ps_by_grade='2:1',",
                                    "judged_only=True,"])
def test_expected_is_the_mean_over_every_tie_order(params):
    qrels, run = random_tied(31)
    lengths = lengths_for(run, 1)
    for q in qrels:                       # norm='ideal' reads the lengths of every judged document
        lengths.update({d: 100.0 for d in qrels[q] if d not in lengths})
    register_lengths("famties_tbg", lengths)
    measure = f"TBG({params}lengths='famties_tbg')"
    want = brute_expected(measure, qrels, run)
    got, extras = evaluate(measure[:-1] + ",ties='expected')", qrels, run)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q
        assert extras["se"][q] == 0.0


def test_expected_with_duplicates_and_cutoff():
    qrels, run = random_tied(32)
    lengths = lengths_for(run, 2)
    dups = {d: f"g{i % 3}" for i, d in enumerate(sorted(lengths)) if i % 2}
    register_lengths("famties_dup", lengths, duplicates=dups)
    measure = "TBG(lengths='famties_dup',duplicates='famties_dup')@5"
    want = brute_expected(measure, qrels, run)
    got, _ = evaluate("TBG(lengths='famties_dup',duplicates='famties_dup',ties='expected')@5", qrels, run)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q


def test_equal_lengths_are_interchangeable():
    """12 tied documents of one length, 6 relevant: 924 grade arrangements (exact), not 12! orders (sampled)."""
    docs = [f"d{i}" for i in range(12)]
    qrels = {"q": {d: int(i % 2) for i, d in enumerate(docs)}}
    run = {"q": {d: 1.0 for d in docs}}
    register_lengths("famties_flat", {d: 300.0 for d in docs})
    got, extras = evaluate("TBG(lengths='famties_flat',ties='expected')", qrels, run)
    assert extras["se"]["q"] == 0.0
    values = []
    for relevant in itertools.combinations(range(12), 6):
        grades = np.zeros(12, dtype=int)
        grades[list(relevant)] = 1
        values.append(time_biased_gain(grades, np.full(12, 300.0)))
    assert got["q"] == pytest.approx(np.mean(values), abs=1e-12)


def appended(qrels, run, extra, lengths, fill_length):
    q2, r2, l2 = {}, {}, dict(lengths)
    for q, docs in run.items():
        fill = max(1, max(qrels[q].values()))
        q2[q] = {**qrels[q], **{d: fill for d in docs if d not in qrels[q]}}
        order = trec_order(docs)
        r2[q] = {d: float(len(order) + extra - i) for i, d in enumerate(order)}
        size = fill_length if fill_length is not None else float(np.mean([lengths[d] for d in docs]))
        for j in range(extra):
            r2[q][f"{q}zz{j}"] = float(extra - j)
            q2[q][f"{q}zz{j}"] = fill
            l2[f"{q}zz{j}"] = size
    return q2, r2, l2


def random_run(seed, n_queries=5):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        n = int(rng.integers(1, 20))
        docs = [f"q{q}d{i}" for i in range(n)]
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) for d in docs}
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.6}
        qrels[f"q{q}"]["missing"] = 1
    return qrels, run


@pytest.mark.parametrize("default", [None, 250.0])
@pytest.mark.parametrize("cutoff", [None, 25])
def test_rel_reads_past_the_ranking(default, cutoff):
    qrels, run = random_run(7)
    lengths = lengths_for(run, 3)
    lengths["missing"] = 80.0
    register_lengths("famties_rel", lengths)
    extra = 400 if cutoff is None else cutoff       # halflife 30 s: 400 more ranks add < 1e-40
    q2, r2, l2 = appended(qrels, run, extra, lengths, default)
    register_lengths("famties_rel2", l2)
    dl = "" if default is None else f"default_length={default},"
    at = "" if cutoff is None else f"@{cutoff}"
    got, _ = evaluate(f"TBG({dl}halflife=30,lengths='famties_rel',unjudged='rel'){at}", qrels, run)
    want, _ = evaluate(f"TBG({dl}halflife=30,lengths='famties_rel2'){at}", q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], rel=1e-12, abs=1e-12), q
    res, _ = evaluate(f"TBG({dl}halflife=30,lengths='famties_rel',residual=True){at}", qrels, run)
    base, _ = evaluate(f"TBG({dl}halflife=30,lengths='famties_rel'){at}", qrels, run)
    for q in run:
        assert res[q] == pytest.approx(want[q] - base[q], abs=1e-12)


def test_rel_with_duplicates_fills_too():
    qrels, run = random_run(8)
    lengths = lengths_for(run, 4)
    register_lengths("famties_reld", lengths, duplicates={d: "g" for d in list(lengths)[:6]})
    got, _ = evaluate("TBG(halflife=30,lengths='famties_reld',duplicates='famties_reld',default_length=99,"
                      "unjudged='rel')", qrels, run)
    plain, _ = evaluate("TBG(halflife=30,lengths='famties_reld',duplicates='famties_reld',default_length=99)",
                        qrels, run)
    assert all(got[q] >= plain[q] for q in run) and any(got[q] > plain[q] + 1e-3 for q in run)


def test_no_time_per_rank_needs_a_cutoff():
    qrels, run = random_run(9)
    register_lengths("famties_zero", lengths_for(run, 5))
    with pytest.raises(ValueError, match="give a cutoff"):
        evaluate("TBG(t_summary=0,b=0,a=0,lengths='famties_zero',residual=True)", qrels, run)
