"""Brute force for the families' tie and unjudged variants: explicit runs evaluated through the default path.

Imported by tests/plugin/test_family_ties_*.py (pytest puts this folder on ``sys.path``); the orders, explicit
runs and trec order are tests/ties_brute.py's, imported from there.
"""

import ir_measures
import numpy as np
from ties_brute import all_orders, explicit_run, trec_order

from irmeasures_markov import PROVIDER


def evaluate(measure, qrels, run):
    """``(values, extras)`` of one measure (a string or a Measure): ``{qid: value}``, ``{name: {qid: value}}``."""
    m = ir_measures.parse_measure(measure) if isinstance(measure, str) else measure
    values, extras = PROVIDER.evaluator([m], qrels).values_with_extras(run, warn_empty=False)
    return values[m], extras[m]


def brute_expected(measure, qrels, run):
    """The mean over every tie order of every query, each order evaluated as an explicit run."""
    pseudo_qrels, pseudo_run, owner = {}, {}, {}
    for q, docs in run.items():
        for i, order in enumerate(all_orders(docs)):
            pq = f"{q}#{i}"
            pseudo_qrels[pq] = dict(qrels.get(q, {}))
            pseudo_run[pq] = explicit_run(order)
            owner[pq] = q
    values, _ = evaluate(measure, pseudo_qrels, pseudo_run)
    sums, counts = {}, {}
    for pq, v in values.items():
        sums[owner[pq]] = sums.get(owner[pq], 0.0) + v
        counts[owner[pq]] = counts.get(owner[pq], 0) + 1
    return {q: sums[q] / counts[q] for q in sums}


def random_tied(seed, n_queries=4, length=7, n_scores=3, judged=0.7, grades=(0, 1, 2), max_orders=3000):
    """``(qrels, run)`` with heavy ties, unjudged documents and at most ``max_orders`` tie orders per query."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    q = 0
    while len(run) < n_queries:
        docs = [f"d{q}_{i}" for i in range(length)]
        scores = rng.integers(0, n_scores, size=length).astype(float)
        n_orders = 1
        for s in np.unique(scores):
            n_orders *= int(np.prod(np.arange(1, int((scores == s).sum()) + 1)))
        if n_orders > max_orders:
            continue
        qid = f"q{q}"
        q += 1
        run[qid] = dict(zip(docs, scores.tolist()))
        judged_docs = {d: int(rng.choice(grades)) for d in docs if rng.random() < judged}
        judged_docs[f"unretrieved{q}"] = int(max(grades))     # a relevant document the run misses
        qrels[qid] = judged_docs
    return qrels, run


def appended(qrels, run, extra):
    """Unjudged documents judged relevant at max(1, top grade), and ``extra`` relevant documents appended."""
    q2, r2 = {}, {}
    for q, docs in run.items():
        fill = max(1, max(qrels[q].values()))
        q2[q] = {**qrels[q], **{d: fill for d in docs if d not in qrels[q]}}
        order = trec_order(docs)
        r2[q] = {d: float(len(order) + extra - i) for i, d in enumerate(order)}
        for j in range(extra):
            r2[q][f"zz{j}"] = float(extra - j)
            q2[q][f"zz{j}"] = fill
    return q2, r2
