"""``irmeasures-markov ph-compare QRELS RUN_A RUN_B [model options]``: two runs, topic by topic, under P@H.

For every qrels topic it prints the order-1 and order-2 values of both runs
and the order-3 verdict (first-order stochastic dominance of the P@H
distributions): which run dominates, ``=`` for equal distributions, or ``x``
for incomparable, with the P@H values where the CDFs cross.  The model
options are the parameters of the ``PH`` measure and are validated as the
measure validates them (``--user AP`` refuses ``--p``, as ``PH(user='AP',p=0.5)`` does).
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._numbers import format_number
from irmeasures_markov.cli._errors import EXIT_HELP, CliError, CliParser, check_places, json_number, write_record
from irmeasures_markov.cli._inputs import check_overlap, load_qrels, load_run, natural_key
from irmeasures_markov.experiments._ph_compare import compare_runs
from irmeasures_markov.io._text import STDIN
from irmeasures_markov.measures.stopping_time import BROWSING_MODELS, GAINS, USERS
from irmeasures_markov.plugin._ph import PH

__all__ = ["ph_compare_main", "MAX_USERS", "tie_tolerance"]

#: simulated users per topic and run at most: the simulation holds them all at once (about 40 bytes each)
MAX_USERS = 10_000_000

_EPILOG = """\
Forward models (DFBM/SFBM, every --user) have exact distributions; random-walk
models (RWBM) are simulated (--users, --seed) and a CDF difference within --z
standard errors counts as a tie.  With --tail inf (the ranking continues with
endless non-relevant documents) only order 2 is defined (and order 1 when
--f 1, where it equals order 2); the other columns show '-' (null in jsonl).

One tie tolerance for every order: half a unit of the last printed decimal
(5e-05 with the default -p 4; 1e-12 with -p -1).  Two order-1 or order-2
values closer than it, and two CDFs (order 3) that differ by no more than it
at every point, count as tied, in each topic's column and in the summary
alike, so a winner is never named on a difference the printed numbers do not
show; simulated CDFs (RWBM) are tied within it plus --z standard errors.  The
tolerance is stated in the output ('tie_tolerance' in the jsonl summary).

Topics come in natural order (2 before 10).  -o jsonl writes one JSON object
per topic, then one with the means and the counts of wins.

"""


def _parser() -> CliParser:
    parser = CliParser(
        "ph-compare", epilog=_EPILOG + EXIT_HELP,
        description="Compare two runs topic by topic under a P@H browsing model: orders 1 and 2 "
                    "(expectations) and order 3 (stochastic dominance).")
    parser.add_argument("qrels", help="qrels file (plain, .gz, .bz2, .xz) or an ir_datasets id")
    parser.add_argument("run_a", help="first run file (- reads it from standard input)")
    parser.add_argument("run_b", help="second run file")
    model = parser.add_argument_group("P@H model (the parameters of the PH measure)")
    model.add_argument("--browse", choices=BROWSING_MODELS, help="browsing model (default SFBM)")
    model.add_argument("--user", choices=USERS,
                       help="classical instantiation (fixes the browsing model; P, AP, DCG and ERR take no "
                            "--p/--q, RBP takes --p)")
    model.add_argument("--p", type=float, help="forward probability (default 0.8)")
    model.add_argument("--q", type=float, help="backward probability (RWBM; default 0)")
    model.add_argument("--p-rel", "--p_rel", dest="p_rel", type=float,
                       help="forward probability at relevant documents (default: --p)")
    model.add_argument("--q-rel", "--q_rel", dest="q_rel", type=float,
                       help="backward probability at relevant documents (RWBM; default: --q)")
    model.add_argument("--loss", type=float, help="utility loss per revisit, in [0, 1] (RWBM; default 0)")
    model.add_argument("--f", choices=("h", "1"), help="normaliser f(H): h (H, the default) or 1")
    model.add_argument("--top", choices=("stop", "forward"),
                       help="where backward moves at rank 1 go: stop (the default) or forward")
    model.add_argument("--tail", choices=("none", "inf"),
                       help="inf: the ranking continues with endless non-relevant documents browsed with "
                            "--p/--q (RBP(inf) with --user RBP); order 2 only.  Default none")
    model.add_argument("--gain", choices=GAINS, help="gain of a relevant document (default binary)")
    model.add_argument("--b", type=float, help="log base for --user DCG (default 2)")
    model.add_argument("--rel", type=int, default=1, help="minimum grade counted as relevant (default 1)")
    model.add_argument("--judged-only", "--judged_only", dest="judged_only", action="store_true",
                       help="drop unjudged documents before ranking (condensed lists)")
    model.add_argument("--cutoff", type=int, help="evaluate the first k documents of each ranking")
    sim = parser.add_argument_group("simulation (RWBM)")
    sim.add_argument("--users", type=int, default=100_000,
                     help="simulated users per topic and run when no exact distribution exists (default 100000; "
                          f"at most {MAX_USERS})")
    sim.add_argument("--seed", type=int, default=0, help="random seed of the simulation (default 0)")
    sim.add_argument("--z", type=float, default=4.0,
                     help="simulated CDF differences within z standard errors count as ties (default 4)")
    out = parser.add_argument_group("output")
    out.add_argument("--names", nargs=2, metavar=("A", "B"), help="labels of the runs (default: A B)")
    out.add_argument("--places", "-p", type=int, default=4, metavar="N",
                     help="decimal places (-1: every digit; default 4); order 1 and 2 values within half a unit "
                          "of the last decimal count as tied")
    out.add_argument("--output_format", "--output-format", "-o", dest="output_format", choices=("tsv", "jsonl"),
                     default="tsv", help="tsv (default, with '#' comment lines) or jsonl (NaN written as null)")
    return parser


_MODEL_OPTIONS = ("browse", "user", "p", "q", "p_rel", "q_rel", "loss", "f", "top", "tail", "gain", "b")


def _model(args) -> dict:
    """The options given, as PH parameters, validated by the PH measure itself."""
    given = {k: getattr(args, k) for k in _MODEL_OPTIONS if getattr(args, k) is not None}
    try:
        PH(**given).validate_params()
    except (ValueError, TypeError) as exc:
        raise CliError(f"{exc}".replace("PH: ", "ph-compare: ", 1)) from None
    model = dict(browse=args.browse, user=args.user, loss=args.loss or 0.0, f=args.f, top=args.top or "stop",
                 gain=args.gain or "binary")
    if args.user in (None, "RBP") or args.p is not None:
        model["p"] = 0.8 if args.p is None else args.p
    if args.user is None:
        model.update(q=args.q or 0.0, p_rel=args.p_rel, q_rel=args.q_rel)
    if args.b is not None or args.user == "DCG":
        model["b"] = 2.0 if args.b is None else args.b
    if args.tail not in (None, "none"):
        model["tail"] = args.tail
    return model


def _verdict(dom, names):
    if dom.relation in ("first", "second"):
        return f"{names[0 if dom.relation == 'first' else 1]} dominates"
    if dom.relation == "equal":
        return "="
    xs = ", ".join(f"{x:.3g}" for x in dom.crossings[:6]) + (" ..." if dom.crossings.size > 6 else "")
    return f"x (CDFs cross at {xs})"


def tie_tolerance(places: int) -> float:
    """Within it two order-1 or order-2 values, and two CDFs (order 3), count as tied: half a unit of the last
    printed decimal, so that the winner agrees with the numbers printed; every digit (-1): only float noise."""
    return 1e-12 if places < 0 else 0.5 * 10.0 ** -places


def _winner(a, b, names, tol):
    if math.isnan(a) or math.isnan(b):
        return "-"
    return names[0] if a > b + tol else names[1] if b > a + tol else "="


def ph_compare_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    check_cutoff(args.cutoff, "--cutoff")  # a ValueError is a usage error at the boundary
    check_places(args.places)
    if args.users > MAX_USERS:
        raise CliError(f"--users: at most {MAX_USERS} simulated users, got {args.users} (the simulation holds "
                       f"every user of a topic in memory at once, about 40 bytes each)")
    if args.run_a == STDIN and args.run_b == STDIN:
        raise CliError("only one of the runs can be read from standard input (-)")
    names = args.names or ["A", "B"]
    model = _model(args)
    qrels = load_qrels(args.qrels)
    runs = [load_run(args.run_a), load_run(args.run_b)]
    for path, run in zip((args.run_a, args.run_b), runs):
        check_overlap(qrels, run, args.qrels, path, mean_over="means are over the qrels queries with a relevant "
                      "document, a query the run does not answer scoring 0")
    rows = compare_runs(qrels, *runs, rel=args.rel, judged_only=args.judged_only, cutoff=args.cutoff,
                        n_users=args.users, seed=args.seed, z=args.z, tol=tie_tolerance(args.places), **model)
    rows.sort(key=lambda r: natural_key(r[0]))
    _print(rows, names, model, args)
    return 0


def _print(rows, names, model, args) -> None:
    a, b = names
    columns = (f"E1[{a}]", f"E1[{b}]", f"E2[{a}]", f"E2[{b}]")
    given = {k: v for k, v in model.items() if v is not None}

    def fmt(x):
        return "-" if math.isnan(x) else format_number(x, args.places)

    tol = tie_tolerance(args.places)
    tsv = args.output_format == "tsv"
    if tsv:
        print(f"# P@H model: {', '.join(f'{k}={v}' for k, v in given.items())}")
        print(f"# {a} = {args.run_a}\n# {b} = {args.run_b}")
        print(f"# ties: within {tol:g} (half the last printed decimal) for every order: values (orders 1 and 2) "
              f"and CDFs (order 3; simulated ones within it plus --z standard errors)")
        print("\t".join(("topic", *columns, "order1", "order2", "order3")))
    counts = {1: Counter(), 2: Counter(), 3: Counter()}
    for qid, *values, dom in rows:
        verdicts = (_winner(values[0], values[1], names, tol), _winner(values[2], values[3], names, tol),
                    "-" if dom is None else _verdict(dom, names))
        key3 = "-" if dom is None else {"first": a, "second": b, "equal": "=", "incomparable": "x"}[dom.relation]
        for k, w in zip((1, 2, 3), (*verdicts[:2], key3)):
            counts[k][w] += 1
        if tsv:
            print("\t".join((qid, *map(fmt, values), *verdicts)))
        else:  # '-' (not defined) is null
            write_record({"topic": qid, **dict(zip(columns, map(json_number, values))),
                          **{f"order{k}": None if v == "-" else v for k, v in zip((1, 2, 3), verdicts)},
                          "crossings": [] if dom is None else [float(x) for x in dom.crossings]})
    n = len(rows)
    means = np.array([r[1:5] for r in rows], dtype=np.float64).mean(axis=0) if n else None
    # None: the order is not defined (tail='inf'); 'x' (incomparable) only for order 3
    wins = {k: None if n and c["-"] == n else {a: c[a], b: c[b], "=": c["="], **({"x": c["x"]} if k == 3 else {})}
            for k, c in counts.items()}
    if not tsv:
        summary = {"topics": n, "model": given, "runs": {a: args.run_a, b: args.run_b}, "tie_tolerance": tol}
        if means is not None:
            summary["mean"] = dict(zip(columns, map(json_number, means)))
        summary["wins"] = {f"order{k}": w for k, w in wins.items()}
        write_record({"summary": summary})
        return
    if n:
        print("mean\t" + "\t".join(fmt(x) for x in means))
    print(f"# {n} topics")
    labels = {1: "order 1 (E[P@H])", 2: "order 2 (E[sum g]/E[f(H)])", 3: "order 3 (dominance)"}
    for k, w in wins.items():
        if w is None:
            print(f"# {labels[k]}: not defined with tail='inf'")
            continue
        parts = [f"{a} better {w[a]}", f"{b} better {w[b]}", f"tied {w['=']}"]
        print(f"# {labels[k]}: " + ", ".join(parts + ([f"incomparable {w['x']}"] if k == 3 else [])))
