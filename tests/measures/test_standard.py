"""AP and bpref of measures.standard against a per-query reference written from
trec_eval's definitions.

The reference ranks each query alone with ``sorted`` (score desc, docid
desc), probes every document in the judgments and counts R and N from the
judgments directly: nothing shared with the batch kernels, the recall-base
tables or the judgments join made while ranking.
"""
import ir_measures
import numpy as np
import pytest
from measure_needs import Needs
from random_runs import tied_run

from irmeasures_markov.measures import standard_measure, standard_values
from irmeasures_markov.ranking import UNJUDGED, PreparedRun, QrelsIndex


def random_inputs(seed, n_queries=6, length=700):
    qrels, run, _ = tied_run(seed, n_queries, length, universe=2, scores=(0, 39), grades=(-1, 2),
                             signed_zeros=False)                        # many ties
    qrels["q0"] = {d: g for d, g in qrels["q0"].items() if g <= 0}     # a query with nothing relevant
    return qrels, run


def reference(qrels, run, rel):
    ap, bpref = [], []
    for qid, doc_scores in run.items():
        docs = sorted(sorted(doc_scores, reverse=True), key=lambda d: -doc_scores[d])
        grades = [qrels[qid].get(d, UNJUDGED) for d in docs]
        judged = list(qrels[qid].values())
        R = sum(g >= rel for g in judged)
        hits, total = 0, 0.0
        for k, g in enumerate(grades, start=1):
            if g >= rel:
                hits += 1
                total += hits / k
        ap.append(total / R if R else 0.0)
        Rb = sum(g >= max(rel, 0) for g in judged)
        N = sum(0 <= g < rel for g in judged)
        nonrel, total = 0, 0.0
        for g in grades:
            if g == UNJUDGED or g < 0:
                continue
            if g >= rel:
                total += 1.0 if nonrel == 0 else 1.0 - min(nonrel, Rb) / max(min(Rb, N), 1)
            else:
                nonrel += 1
        bpref.append(total / Rb if Rb else 0.0)
    return np.array(ap), np.array(bpref)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("rel", [1, 2, 0])
@pytest.mark.parametrize("judgments", [False, True])
def test_ap_and_bpref_match_reference(seed, rel, judgments):
    qrels, run = random_inputs(seed)
    prepared = PreparedRun(QrelsIndex(qrels), run, [Needs(judgments=judgments)])
    ap = standard_values(standard_measure(ir_measures.parse_measure(f"AP(rel={rel})")), prepared)
    bpref = standard_values(standard_measure(ir_measures.parse_measure(f"Bpref(rel={rel})")), prepared)
    want_ap, want_bpref = reference(qrels, run, rel)
    assert prepared.qids == list(run)
    np.testing.assert_allclose(ap, want_ap, rtol=0, atol=1e-12)
    np.testing.assert_allclose(bpref, want_bpref, rtol=0, atol=1e-12)
    if rel >= 1:   # q0 holds nothing relevant
        assert ap[0] == 0.0 and bpref[0] == 0.0
