"""P@H under unjudged='rel' / residual=True: a user who reads past the ranking (an endless tail, or padding to
the cutoff) finds relevant documents there (issue 26); checked against explicit runs with relevant documents
appended.  ties='expected' against brute force over every tie order."""
import numpy as np
import pytest
from family_ties_brute import appended, brute_expected, evaluate, random_tied
from ties_brute import trec_order

from irmeasures_markov.plugin._ph import relevant_tail_depth


def random_run(seed, n_queries=5):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        n = int(rng.integers(1, 25))
        docs = [f"q{q}d{i}" for i in range(n)]
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) for d in docs}
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.6}
        qrels[f"q{q}"]["missing"] = 1
    return qrels, run


@pytest.mark.parametrize("measure", ["PH(user='RBP',p=0.7,tail='inf')", "PH(p=0.6,tail='inf',gain='grade')",
                                     "PH(browse='RWBM',p=0.5,q=0.2,p_rel=0.6,q_rel=0.3,tail='inf')",
                                     "PH(browse='RWBM',p=0.5,q=0.3,loss=0.5,tail='inf',f='1')"])
def test_endless_tail_reads_relevant_documents(measure):
    qrels, run = random_run(1)
    got, _ = evaluate(measure[:-1] + ",unjudged='rel')", qrels, run)
    q2, r2 = appended(qrels, run, 500)            # deeper ranks add < 1e-40
    want, _ = evaluate(measure, q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], rel=1e-12, abs=1e-12), q


@pytest.mark.parametrize("measure", ["PH(pad_to_cutoff=True,unjudged='rel')@15",
                                     "PH(user='P',pad_to_cutoff=True,unjudged='rel')@12",
                                     "PH(p=0.6,tail='inf',unjudged='rel')@18"])
def test_padding_and_tail_with_cutoff_fill_up_to_it(measure):
    qrels, run = random_run(2)
    cutoff = int(measure.rsplit("@", 1)[1])
    got, _ = evaluate(measure, qrels, run)
    q2, r2 = appended(qrels, run, cutoff)
    want, _ = evaluate(measure.replace(",unjudged='rel'", ""), q2, r2)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q


def test_residual_of_rbp_inf_is_rbp_evals():
    """PH(user='RBP',tail='inf') is RBP(inf): its residual is rbp_eval's (1-p) sum_unjudged p^(k-1) + p^N."""
    qrels, run = random_run(3)
    p = 0.8
    got, _ = evaluate(f"PH(user='RBP',p={p},tail='inf',residual=True)", qrels, run)
    for q, docs in run.items():
        order = trec_order(docs)
        want = (1 - p) * sum(p ** k for k, d in enumerate(order) if d not in qrels[q]) + p ** len(order)
        assert got[q] == pytest.approx(want, abs=1e-12)


def test_without_tail_nothing_is_filled():
    qrels, run = random_run(4)
    got, _ = evaluate("PH(p=0.6,unjudged='rel')", qrels, run)
    q2, r2 = appended(qrels, run, 0)
    want, _ = evaluate("PH(p=0.6)", q2, r2)
    assert got == pytest.approx(want, abs=1e-15)


def test_never_stopping_tail_is_refused():
    assert relevant_tail_depth(0.7, 0.3) is None
    assert relevant_tail_depth(0.5, 0.0) == int(np.ceil((np.log(1e-17) + 3 * np.log(0.5)) / np.log(0.5)))
    qrels, run = random_run(5)
    with pytest.raises(ValueError, match="give a cutoff"):
        evaluate("PH(browse='RWBM',p=0.5,q=0.3,p_rel=0.7,q_rel=0.3,tail='inf',residual=True)", qrels, run)


@pytest.mark.parametrize("measure", ["PH", "PH(user='AP')", "PH(browse='RWBM',p=0.6,q=0.2)@5",
                                     "PH(user='ERR',gain='grade')", "PH(order=1,judged_only=True)"])
def test_expected_is_the_mean_over_every_tie_order(measure):
    qrels, run = random_tied(21)
    want = brute_expected(measure, qrels, run)
    with_ties = (measure[:-1] + ",ties='expected')" if "(" in measure else measure + "(ties='expected')")
    if "@" in measure:
        base, cut = measure.rsplit("@", 1)
        with_ties = base[:-1] + ",ties='expected')@" + cut
    got, _ = evaluate(with_ties, qrels, run)
    for q in run:
        assert got[q] == pytest.approx(want[q], abs=1e-12), q
