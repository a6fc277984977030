"""References for tests of prepared runs: each query ranked alone, and a dict run as columns.

``ranked_alone(qrels, run)`` ranks every judged, non-empty query of a dict run on its own
(``rank_documents``: score descending, docid descending) and joins it by dict probes: what a
prepared run's ``queries`` must hold.  ``as_columns(run)`` is the run as ``RunColumns``.
"""
from types import SimpleNamespace

import numpy as np

from irmeasures_markov.io import RunColumns
from irmeasures_markov.ranking import UNJUDGED
from irmeasures_markov.ranking._order import rank_documents


def ranked_alone(qrels, run, depth=None):
    """Per query: ``qid, docids, scores, grades, positive_grades, joined_keys`` (the first ``depth`` ranks)."""
    out = []
    for qid, docs in run.items():
        if qid not in qrels or not docs:
            continue
        docids, scores = rank_documents(docs, qid)
        docids, scores = docids[:depth], scores[:depth]
        grades = np.array([qrels[qid].get(d, UNJUDGED) for d in docids], dtype=np.int64)
        out.append(SimpleNamespace(qid=qid, docids=docids, scores=scores, grades=grades,
                                   positive_grades=np.maximum(grades, 0), joined_keys="\n".join(docs)))
    return out


def as_columns(run):
    """``RunColumns`` of a dict run with str ids and no newline in a docid (empty queries left out)."""
    qids = [q for q, docs in run.items() if docs]
    bounds = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum([len(run[q]) for q in qids], out=bounds[1:])
    scores = np.array([s for q in qids for s in run[q].values()], dtype=np.float64)
    return RunColumns(qids, bounds, "\n".join(d for q in qids for d in run[q]), scores)
