"""Two runs compared topic by topic under P@H: `compare_runs` (``irmeasures-markov ph-compare`` prints it).

For every qrels topic it gives the order-1 and order-2 values of both runs
and the order-3 verdict (first-order stochastic dominance of the P@H
distributions): which run dominates, ``=`` for equal distributions, or ``x``
for incomparable, with the P@H values where the CDFs cross.  Forward models
(DFBM/SFBM, every ``user``) have exact distributions; random-walk
models are simulated (``n_users``, ``seed``) and a CDF difference within
``z`` standard errors counts as a tie.  With ``tail='inf'`` (the ranking
continues with endless non-relevant documents) only order 2 is defined
(and order 1 when f = 1, where it equals order 2); the other columns show ``-``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from irmeasures_markov.experiments._evaluation import QrelsLike, RunLike
from irmeasures_markov.io._normalise import qrels_dict
from irmeasures_markov.measures.stopping_time import DominanceResult, browsing_model, compare_distributions
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["compare_runs"]


def _grades(ranked, rel, judged_only, cutoff):
    g = ranked.grades
    if judged_only:
        g = g[g != UNJUDGED]
    g = np.where(g == UNJUDGED, min(0, rel - 1), g)
    return g[:cutoff] if cutoff is not None else g


def compare_runs(qrels: QrelsLike, run_a: RunLike, run_b: RunLike, *, rel: int = 1, judged_only: bool = False,
                 cutoff: int | None = None, n_users: int = 100_000, seed: int | None = 0, z: float = 4.0,
                 tol: float = 1e-12,
                 **model: Any) -> list[tuple[str, float, float, float, float, DominanceResult | None]]:
    """Per-topic comparison rows: ``(qid, e1_a, e1_b, e2_a, e2_b, DominanceResult)``.

    Parameters
    ----------
    qrels : dict or path
        ``{qid: {docid: grade}}``, a TREC qrels file or any form
        [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] takes.
    run_a : dict
        The two runs, ``{qid: {docid: score}}``.
    run_b : dict
        The two runs, ``{qid: {docid: score}}``.
    rel : int
        The lowest relevant grade.
    judged_only : bool
        Drop unjudged documents from the rankings.
    cutoff : int, optional
        Rank cutoff of both rankings.
    n_users, seed, z
        Simulated users (random-walk models), their seed, and the standard errors within which two
        simulated CDFs count as tied.
    tol : float
        Two CDF values within it count as equal in the order-3 verdict
        ([`compare_distributions`][irmeasures_markov.measures.stopping_time.compare_distributions]'s ``atol``;
        default 1e-12, float noise); ``ph-compare`` passes its one tie tolerance.
    **model
        The browsing model ([`browsing_model`][irmeasures_markov.browsing_model]:
        ``f``, ``user``, ``tail``, ``p``, ``q``, ...).

    Returns
    -------
    list of tuple
        One row per qrels topic with a relevant document.  With ``tail='inf'`` the order-1 values
        are NaN unless f = 1, and the dominance result is None (no distribution is defined for the
        endless tail).
    """
    index = QrelsIndex.from_checked(qrels_dict(qrels))
    prepared = [PreparedRun(index, run) for run in (run_a, run_b)]
    by_qid = [{q.qid: q for q in p.queries} for p in prepared]
    rows = []
    for qid in index.query_ids:
        models = []
        for lookup in by_qid:
            ranked = lookup.get(qid)
            grades = _grades(ranked, rel, judged_only, cutoff) if ranked is not None else np.zeros(0, np.int64)
            kw = dict(model)
            if kw.get("user") == "ERR":
                jg = index.judged_grades(qid)
                kw["g_max"] = max(1, int(jg[0])) if jg.size else 1
            models.append(browsing_model(grades, rel=rel, **kw))
        if index.recall_base(qid, rel) == 0:
            continue
        a, b = models
        finite = model.get("tail", "none") == "none"
        dom = (compare_distributions(a.distribution(n_users, seed), b.distribution(n_users, seed), z=z, atol=tol)
               if finite else None)
        e1 = [m.expectation(1) if finite or m.f == "1" else math.nan for m in models]
        rows.append((qid, e1[0], e1[1], a.expectation(2), b.expectation(2), dom))
    return rows
