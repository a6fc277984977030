"""MP and MPcont under ties= and unjudged= (issue 26): brute force over every tie order, explicit reordered and
re-judged runs.  MP's user never reads past the ranking: unjudged='rel' fills nothing."""
import itertools

import numpy as np
import pytest
from family_ties_brute import brute_expected, evaluate, random_tied
from ties_brute import explicit_run, trec_order

from irmeasures_markov import register_lengths, register_rates

register_rates("famties_rates", [1.0, 0.5, 2.0, 0.8, 1.5, 0.3, 1.1, 0.9, 2.5, 0.7])


def with_ties(measure, ties):
    base, at, cut = measure.partition("@")
    base = base[:-1] + f",ties='{ties}')" if "(" in base else base + f"(ties='{ties}')"
    return base + at + cut


@pytest.fixture(scope="module")
def tied():
    qrels, run = random_tied(41)
    register_lengths("famties_mp", {d: float(50 + 37 * (i % 4)) for i, d in
                                    enumerate(sorted({d for docs in run.values() for d in docs}))})
    return qrels, run


MEASURES = ["MP", "MP(recall=True)", "MP(model='GL_AD_LID')@5", "MP(judged_only=True)",
            "MPcont(rates='famties_rates')", "MPcont(rates='famties_rates',recall=True)@6",
            "MPcont(time='tbg',lengths='famties_mp')", "MPcont(time='tbg',lengths='famties_mp',pc_by_grade='2:0.9')"]


@pytest.mark.parametrize("measure", MEASURES)
def test_expected_is_the_mean_over_every_tie_order(measure, tied):
    qrels, run = tied
    want = brute_expected(measure, qrels, run)
    got, extras = evaluate(with_ties(measure, "expected"), qrels, run)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q
        assert extras["se"][q] == 0.0


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("ties", ["optimistic", "pessimistic"])
def test_optimistic_and_pessimistic_are_the_reordered_runs(measure, ties, tied):
    qrels, run = tied
    reordered = {}
    for q, docs in run.items():
        grade = {d: max(0, qrels[q].get(d, 0)) for d in docs}
        sign = -1 if ties == "optimistic" else 1
        order = sorted(trec_order(docs), key=lambda d: (-docs[d], sign * grade[d]))   # stable: docid order kept
        reordered[q] = explicit_run(order)
    want, _ = evaluate(measure, qrels, reordered)
    got, _ = evaluate(with_ties(measure, ties), qrels, run)
    assert got == want


@pytest.mark.parametrize("measure", ["MP", "MPcont(rates='famties_rates')", "MPcont(time='tbg',lengths='famties_mp')"])
def test_rel_judges_the_ranking_only(measure, tied):
    qrels, run = tied
    judged = {q: {**qrels[q], **{d: max(1, max(qrels[q].values())) for d in run[q] if d not in qrels[q]}}
              for q in run}
    want, _ = evaluate(measure, judged, run)
    rel = measure[:-1] + ",unjudged='rel')" if "(" in measure else measure + "(unjudged='rel')"
    got, _ = evaluate(rel, qrels, run)
    assert got == pytest.approx(want, abs=1e-12)


def test_mpcont_tbg_equal_lengths_are_interchangeable():
    """10 tied documents of one length, 5 relevant: 252 grade arrangements (exact), not 10! orders (sampled)."""
    docs = [f"d{i}" for i in range(10)]
    qrels = {"q": {d: int(i % 2) for i, d in enumerate(docs)}}
    register_lengths("famties_mp_flat", {d: 200.0 for d in docs})
    got, extras = evaluate("MPcont(time='tbg',lengths='famties_mp_flat',ties='expected')", qrels,
                           {"q": {d: 1.0 for d in docs}})
    assert extras["se"]["q"] == 0.0
    runs = {}
    for i, rel in enumerate(itertools.combinations(range(10), 5)):
        order = [docs[2 * j + 1] for j in range(5)]
        non = [docs[2 * j] for j in range(5)]
        ranking, r, n = [], iter(order), iter(non)
        for k in range(10):
            ranking.append(next(r) if k in rel else next(n))
        runs[f"q#{i}"] = explicit_run(ranking)
    values, _ = evaluate("MPcont(time='tbg',lengths='famties_mp_flat')", {q: qrels["q"] for q in runs}, runs)
    assert got["q"] == pytest.approx(np.mean(list(values.values())), abs=1e-12)
