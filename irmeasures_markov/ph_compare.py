"""``irmeasures-markov ph-compare QRELS RUN_A RUN_B [model options]``: two runs, topic by topic, under P@H.

For every qrels topic it prints the order-1 and order-2 values of both runs
and the order-3 verdict (first-order stochastic dominance of the P@H
distributions): which run dominates, ``=`` for equal distributions, or ``x``
for incomparable, with the P@H values where the CDFs cross.  Forward models
(DFBM/SFBM, all ``--user`` choices) have exact distributions; random-walk
models are simulated (``--users``, ``--seed``) and a CDF difference within
``--z`` standard errors counts as a tie.  With ``--tail inf`` (the ranking
continues with endless non-relevant documents) only order 2 is defined
(and order 1 when f = 1, where it equals order 2); the other columns show ``-``.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import List

import numpy as np

from .measures.stopping_time import BROWSING_MODELS, GAINS, USERS, browsing_model
from .rankings import UNJUDGED, PreparedRun, QrelsIndex

__all__ = ["ph_compare_main", "compare_runs"]


def _grades(ranked, rel, judged_only, cutoff):
    g = ranked.grades
    if judged_only:
        g = g[g != UNJUDGED]
    g = np.where(g == UNJUDGED, min(0, rel - 1), g)
    return g[:cutoff] if cutoff is not None else g


def compare_runs(qrels, run_a, run_b, *, rel=1, judged_only=False, cutoff=None, n_users=100_000, seed=0,
                 z=4.0, **model):
    """Per-topic comparison rows: ``(qid, e1_a, e1_b, e2_a, e2_b, DominanceResult)``.

    With ``tail='inf'`` the order-1 values are NaN unless f = 1, and the
    dominance result is None (no distribution is defined for the endless tail).
    """
    index = QrelsIndex(qrels)
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
        dom = a.dominance(b, n_users=n_users, seed=seed, z=z) if finite else None
        e1 = [m.expectation(1) if finite or m.f == "1" else math.nan for m in models]
        rows.append((qid, e1[0], e1[1], a.expectation(2), b.expectation(2), dom))
    return rows


def _verdict(dom, names):
    if dom.relation == "first":
        return f"{names[0]} dominates"
    if dom.relation == "second":
        return f"{names[1]} dominates"
    if dom.relation == "equal":
        return "="
    xs = ", ".join(f"{x:.3g}" for x in dom.crossings[:6]) + (" ..." if dom.crossings.size > 6 else "")
    return f"x (CDFs cross at {xs})"


def _winner(a, b, names, tol=1e-12):
    if math.isnan(a) or math.isnan(b):
        return "-"
    return names[0] if a > b + tol else names[1] if b > a + tol else "="


def _fmt(x):
    return "-" if math.isnan(x) else f"{x:.4f}"


def ph_compare_main(argv: List[str]) -> int:
    from .cli import _load_qrels
    from .io import InputError, read_trec_run

    parser = argparse.ArgumentParser(
        prog="irmeasures-markov ph-compare",
        description="Compare two runs topic by topic under a P@H browsing model: orders 1 and 2 "
                    "(expectations) and order 3 (stochastic dominance).")
    parser.add_argument("qrels", help="qrels file (or ir_datasets id)")
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--browse", choices=BROWSING_MODELS, help="browsing model (default SFBM)")
    parser.add_argument("--user", choices=USERS, help="classical instantiation (fixes the browsing model)")
    parser.add_argument("--p", type=float, default=0.8, help="forward probability (default 0.8)")
    parser.add_argument("--q", type=float, default=0.0, help="backward probability (RWBM)")
    parser.add_argument("--p-rel", type=float, help="forward probability at relevant documents")
    parser.add_argument("--q-rel", type=float, help="backward probability at relevant documents")
    parser.add_argument("--loss", type=float, default=0.0, help="utility loss per revisit (RWBM)")
    parser.add_argument("--f", choices=("h", "1"), help="normaliser f(H) (default h)")
    parser.add_argument("--top", choices=("stop", "forward"), default="stop")
    parser.add_argument("--tail", choices=("none", "inf"), default="none",
                        help="'inf': the ranking continues with endless non-relevant documents browsed with "
                             "--p/--q (RBP(inf) with --user RBP); order 2 only")
    parser.add_argument("--gain", choices=GAINS, default="binary")
    parser.add_argument("--b", type=float, default=2.0, help="log base for --user DCG")
    parser.add_argument("--rel", type=int, default=1)
    parser.add_argument("--judged-only", action="store_true")
    parser.add_argument("--cutoff", type=int)
    parser.add_argument("--users", type=int, default=100_000,
                        help="simulated users per topic and run when no exact distribution exists")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--z", type=float, default=4.0,
                        help="simulated CDF differences within z standard errors count as ties")
    parser.add_argument("--names", nargs=2, metavar=("A", "B"), help="labels of the runs (default: A B)")
    args = parser.parse_args(argv)
    if args.cutoff is not None and args.cutoff < 1:
        parser.error("--cutoff must be a positive integer")
    names = args.names or ["A", "B"]
    model = dict(browse=args.browse, user=args.user, loss=args.loss, f=args.f, top=args.top, gain=args.gain)
    if args.user in (None, "RBP"):
        model["p"] = args.p
    if args.user is None:
        model.update(q=args.q, p_rel=args.p_rel, q_rel=args.q_rel)
    if args.user == "DCG":
        model["b"] = args.b
    if args.tail != "none":
        model["tail"] = args.tail
    try:
        qrels = _load_qrels(args.qrels)
        runs = [read_trec_run(args.run_a), read_trec_run(args.run_b)]
        rows = compare_runs(qrels, *runs, rel=args.rel, judged_only=args.judged_only, cutoff=args.cutoff,
                            n_users=args.users, seed=args.seed, z=args.z, **model)
    except (InputError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    a, b = names
    print(f"# P@H model: {', '.join(f'{k}={v}' for k, v in model.items() if v is not None)}")
    print(f"# {a} = {args.run_a}\n# {b} = {args.run_b}")
    print(f"topic\tE1[{a}]\tE1[{b}]\tE2[{a}]\tE2[{b}]\torder1\torder2\torder3")
    counts = {1: {}, 2: {}, 3: {}}
    for qid, e1a, e1b, e2a, e2b, dom in rows:
        w1, w2 = _winner(e1a, e1b, names), _winner(e2a, e2b, names)
        if dom is None:
            v3 = key3 = "-"
        else:
            v3 = _verdict(dom, names)
            key3 = {"first": a, "second": b, "equal": "=", "incomparable": "x"}[dom.relation]
        for k, w in ((1, w1), (2, w2), (3, key3)):
            counts[k][w] = counts[k].get(w, 0) + 1
        print(f"{qid}\t{_fmt(e1a)}\t{_fmt(e1b)}\t{_fmt(e2a)}\t{_fmt(e2b)}\t{w1}\t{w2}\t{v3}")
    n = len(rows)
    if n:
        m = np.array([r[1:5] for r in rows], dtype=np.float64).mean(axis=0)
        print("mean\t" + "\t".join(_fmt(x) for x in m))
    print(f"# {n} topics")
    labels = {1: "order 1 (E[P@H])", 2: "order 2 (E[sum g]/E[f(H)])", 3: "order 3 (dominance)"}
    for k in (1, 2, 3):
        c = counts[k]
        if n and c.get("-", 0) == n:
            print(f"# {labels[k]}: not defined with tail='inf'")
            continue
        parts = [f"{a} better {c.get(a, 0)}", f"{b} better {c.get(b, 0)}", f"tied {c.get('=', 0)}"]
        if k == 3:
            parts.append(f"incomparable {c.get('x', 0)}")
        print(f"# {labels[k]}: " + ", ".join(parts))
    return 0
