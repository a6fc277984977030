"""Random runs and qrels full of ties, shared by the preparation tests.

The test modules import it as ``from random_runs import tied_run``: pytest's
default import mode puts this directory on ``sys.path``.
"""
import numpy as np


def tied_run(seed, n_queries, length, *, universe=3, scores=(-3, 3), step=0.5, grades=(-1, 3),
             signed_zeros=True):
    """``(qrels, run, docids)``: ``n_queries`` rankings of ``length`` documents drawn from one pool of
    ``universe * length`` docids (so docids recur across queries), scores ``step`` times an integer in
    ``scores`` (inclusive; few distinct values, so big tie groups), ``-0.0`` beside ``0.0`` when
    ``signed_zeros``, and half the pool judged per query with grades in ``grades`` (inclusive; negative
    and zero grades included)."""
    rng = np.random.default_rng(seed)
    docids = [f"D{k:05d}" for k in range(universe * length)]
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [docids[i] for i in rng.choice(len(docids), size=length, replace=False).tolist()]
        values = (rng.integers(scores[0], scores[1] + 1, size=length) * step).astype(float)
        if signed_zeros:
            zero = values == 0
            values[zero] = rng.choice([0.0, -0.0], size=int(zero.sum()))
        run[qid] = dict(zip(docs, values.tolist()))
        judged = rng.choice(len(docids), size=length // 2, replace=False).tolist()
        qrels[qid] = {docids[j]: int(rng.integers(grades[0], grades[1] + 1)) for j in judged}
    return qrels, run, docids
