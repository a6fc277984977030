"""Carterette's M1–M4 under ties='expected', unjudged='rel' and residual=True (issue 26).

Static distributions: ties='expected' in closed form (the value at each tie group's mean relevance, exact
because the models are linear in the relevance), and unjudged='rel' fills ranks past the ranking with
relevant documents (to the cutoff, else until they add < 1e-17).  Checked against the rbp_eval residual
formula, explicit runs over every tie order, and explicit runs with relevant documents appended.
"""
import numpy as np
import pytest
from family_ties_brute import appended, brute_expected, evaluate, random_tied
from ties_brute import trec_order

from irmeasures_markov.measures._carterette_distributions import negligible_depth


def random_run(seed, n_queries=6):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        n = int(rng.integers(1, 30))
        docs = [f"q{q}d{i}" for i in range(n)]
        run[f"q{q}"] = {d: float(rng.integers(0, 8)) for d in docs}          # ties too
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.6}
        qrels[f"q{q}"]["missing"] = 1
    return qrels, run


@pytest.mark.parametrize("theta", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("cutoff", [None, 5, 40])
def test_m1_rbp_residual_is_rbp_evals(theta, cutoff):
    """(1-p) sum_{unjudged k <= min(N, c)} p^(k-1) + the filled ranks N < k <= c (p^N without a cutoff)."""
    qrels, run = random_run(int(theta * 100) + (cutoff or 0))
    measure = f"M1(dist='RBP',theta={theta},residual=True)" + (f"@{cutoff}" if cutoff else "")
    got, _ = evaluate(measure, qrels, run)
    for q, docs in run.items():
        order = trec_order(docs)
        n = len(order)
        depth = n if cutoff is None else min(n, cutoff)
        want = (1 - theta) * sum(theta ** k for k in range(depth) if order[k] not in qrels[q])
        want += theta ** n if cutoff is None else max(0.0, theta ** n - theta ** cutoff)
        assert got[q] == pytest.approx(want, abs=1e-12), q


@pytest.mark.parametrize("measure", ["M1(dist='RBP',theta=0.7)", "M2(dist='RBP',norm=False)",
                                     "M3(dist='RBP',f='k')", "M4(dist='RBP',theta=0.6)", "M3(dist='RBP')"])
def test_rel_fills_ranks_past_the_ranking(measure):
    """unjudged='rel' = the run with its unjudged documents relevant and endless relevant documents after it
    (600 appended: what lies deeper adds < 1e-40)."""
    qrels, run = random_run(3)
    got, _ = evaluate(measure[:-1] + ",unjudged='rel')", qrels, run)
    q2, r2 = appended(qrels, run, 600)
    want, _ = evaluate(measure, q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], rel=1e-12, abs=1e-12), q


@pytest.mark.parametrize("measure", ["M1(dist='DCG',unjudged='rel')@12", "M4(dist='RR',unjudged='rel',norm=False)@9"])
def test_rel_with_cutoff_fills_up_to_it(measure):
    qrels, run = random_run(4)
    got, _ = evaluate(measure, qrels, run)
    cutoff = int(measure.rsplit("@", 1)[1])
    q2, r2 = appended(qrels, run, cutoff)
    want, _ = evaluate(measure.replace(",unjudged='rel'", ""), q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q


def test_dynamic_distributions_are_not_filled():
    qrels, run = random_run(5)
    got, _ = evaluate("M3(dist='ERR',unjudged='rel')", qrels, run)
    q2, r2 = appended(qrels, run, 0)
    want, _ = evaluate("M3(dist='ERR')", q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12)


def test_heavy_tail_without_cutoff_is_refused():
    qrels, run = random_run(6)
    with pytest.raises(ValueError, match="give a cutoff"):
        evaluate("M1(dist='DCG',residual=True)", qrels, run)


def test_negligible_depth():
    assert negligible_depth("M1", "RBP", 0.5) == 57          # 0.5**57 < 1e-17 <= 0.5**56
    assert 0.5 ** 56 >= 1e-17 > 0.5 ** 57
    assert negligible_depth("M2", "RBP", 0.5) == 58          # sum_{k>L} 0.5**(k-1) = 2 * 0.5**L
    assert negligible_depth("M1", "DCG") is None


EXPECTED = ["M1(dist='RBP',theta=0.6)", "M1(dist='DCG',norm=True)", "M2(dist='RBP')", "M2(dist='RR',norm=False)@4",
            "M3(dist='RBP',f='k')", "M3(dist='DCG',norm=True)@5", "M4(dist='RBP')", "M4(dist='DCG',norm=True)",
            "M4(dist='RR',judged_only=True)", "M2(dist='DCG',rel=2)", "RBAP@3",
            # dynamic: the engine's enumeration
            "M1(dist='ERR')", "M3(dist='AP')", "M4(dist='AP')", "M4(dist='RRR',rel=2)", "M2(dist='ERR',theta=0.3)"]


@pytest.mark.parametrize("measure", EXPECTED)
def test_expected_is_the_mean_over_every_tie_order(measure):
    qrels, run = random_tied(11)
    want = brute_expected(measure, qrels, run)
    with_ties = measure.replace(")", ",ties='expected')", 1) if "(" in measure else \
        measure.replace("@", "(ties='expected')@", 1)
    got, extras = evaluate(with_ties, qrels, run)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q
        assert extras["se"][q] == 0.0


@pytest.mark.parametrize("measure", ["M1(dist='RBP',theta=0.9,ties='expected')", "M4(dist='RBP',ties='expected')",
                                     "M4(dist='DCG',ties='expected',norm=True)@50"])
def test_static_expected_is_exact_on_huge_tie_groups(measure):
    """One tie group of 80 documents, 30 relevant (~1e22 arrangements): the closed form is exact (se 0).

    Each rank holds a relevant document with probability m/n, so E[M1] = (m/n) sum_k P(k) and
    E[M4] = sum_k P(k) E[R_k]/k = (m/n) sum_k P(k), normalised by the ideal's value."""
    n, m = 80, 30
    docs = [f"d{i}" for i in range(n)]
    qrels = {"q": {d: int(i < m) for i, d in enumerate(docs)}}
    run = {"q": {d: 1.0 for d in docs}}
    got, extras = evaluate(measure, qrels, run)
    depth = n if "@" not in measure else 50
    if "DCG" in measure:
        k = np.arange(1, depth + 1)
        p = 1 / np.log2(k + 1) - 1 / np.log2(k + 2)
        ideal = p[:m].sum() + m * (p[m:] / k[m:]).sum()        # M4 of the ideal: R_k = min(k, m)
        want = m / n * p.sum() / ideal
    else:
        theta = 0.9 if "0.9" in measure else 0.8
        want = m / n * (1 - theta ** depth)
    assert got["q"] == pytest.approx(want, abs=1e-12)
    assert extras["se"]["q"] == 0.0


@pytest.mark.slow  # exhaustive reference: 6 measures x 2 cutoffs x 3432 arrangements
def test_dynamic_expected_is_exact_against_every_arrangement():
    """A 14-document tie group (7 relevant, 3432 grade arrangements) below two fixed ranks, cut at 10: every
    arrangement through the functional API, against the closed form (se 0)."""
    import itertools

    from irmeasures_markov.measures import user_model_measure
    docs = [f"d{i:02d}" for i in range(16)]
    grades = [1, 0] + [int(i % 2 == 0) for i in range(14)]
    qrels = {"q": {d: g for d, g in zip(docs, grades)}}
    qrels["q"]["unretrieved"] = 1
    run = {"q": {d: (3.0 if i == 0 else 2.0 if i == 1 else 1.0) for i, d in enumerate(docs)}}
    for model, dist, f in [("M3", "ERR", "1/k"), ("M4", "AP", "1/k"), ("M2", "RRR", "1/k"), ("M3", "RRR", "k"),
                           ("M4", "ERR", "1/k"), ("M1", "ERR", "1/k")]:
        for cutoff in (None, 10):
            values = []
            for chosen in itertools.combinations(range(14), 7):
                a = [1, 0] + [int(i in chosen) for i in range(14)]
                values.append(user_model_measure(a, model, dist, f=f, recall_base=9, cutoff=cutoff))
            f_param = ",f='k'" if f == "k" else ""
            measure = f"{model}(dist='{dist}'{f_param},ties='expected')" + (f"@{cutoff}" if cutoff else "")
            got, extras = evaluate(measure, qrels, run)
            assert got["q"] == pytest.approx(np.mean(values), abs=1e-12), measure
            assert extras["se"]["q"] == 0.0


def test_dynamic_expected_on_a_huge_group():
    """80 tied documents, 30 relevant, cut at 50: E[M1(ERR)] = E[1 - (1-θ)^X] with X hypergeometric."""
    from scipy.stats import hypergeom
    docs = [f"d{i}" for i in range(80)]
    qrels = {"q": {d: int(i < 30) for i, d in enumerate(docs)}}
    run = {"q": {d: 1.0 for d in docs}}
    got, extras = evaluate("M1(dist='ERR',ties='expected')@50", qrels, run)
    x = np.arange(31)
    want = float(np.sum(hypergeom(80, 30, 50).pmf(x) * (1 - 0.5 ** x)))
    assert got["q"] == pytest.approx(want, abs=1e-12)
    assert extras["se"]["q"] == 0.0


@pytest.mark.parametrize("measure", ["M1(dist='RBP',theta=0.7", "M2(dist='RBP',norm=False", "M1(dist='DCG'"])
def test_range_of_a_monotone_measure_is_its_residual(measure):
    """M1 and unnormalised M2 of a static distribution only grow with relevance: the range over every judgment
    of the unjudged documents (and of the filled ranks) runs from 'nonrel' to 'rel'."""
    qrels, run = random_run(8, n_queries=4)
    run = {q: dict(list(docs.items())[:12]) for q, docs in run.items()}     # at most 2**13 judgments
    cut = "@15" if "DCG" in measure else ""
    rng_values, extras = evaluate(measure + ",unjudged='range')" + cut, qrels, run)
    residual, _ = evaluate(measure + ",residual=True)" + cut, qrels, run)
    nonrel, _ = evaluate(measure + ")" + cut, qrels, run)
    for q in run:
        assert rng_values[q] == pytest.approx(residual[q], abs=1e-12)
        assert extras["lo"][q] == pytest.approx(nonrel[q], abs=1e-12)


def test_registered_distributions_fill_like_the_built_in_ones():
    """A registered geometric distribution fills as RBP does; a finite table needs no filling past its end."""
    from irmeasures_markov.measures import register_distribution
    register_distribution("FAMTIESGEO", lambda n: 0.3 * 0.7 ** np.arange(n))
    register_distribution("FAMTIESFIN", [0.5, 0.3, 0.2])
    qrels, run = random_run(9)
    for model in ("M1", "M2", "M4"):
        geo, _ = evaluate(f"{model}(dist='FAMTIESGEO',norm=False,residual=True)", qrels, run)
        rbp, _ = evaluate(f"{model}(dist='RBP',theta=0.7,norm=False,residual=True)", qrels, run)
        assert geo == pytest.approx(rbp, abs=1e-12)
    assert negligible_depth("M2", "FAMTIESFIN") == 3
    got, _ = evaluate("M2(dist='FAMTIESFIN',norm=False,unjudged='rel')", qrels, run)
    q2, r2 = appended(qrels, run, 3)
    want, _ = evaluate("M2(dist='FAMTIESFIN',norm=False)", q2, r2)
    assert got == pytest.approx(want, abs=1e-12)
