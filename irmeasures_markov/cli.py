"""Command line: ``irmeasures-markov QRELS RUN MEASURE... [-q] [-n] [-p N] [-o tsv|jsonl]``.

The same arguments as the ``ir_measures`` command, with our measures
registered.  Subcommands:

* ``irmeasures-markov demo`` — evaluate the sample qrels/run bundled in the package.

Other modules add subcommands by registering in :data:`SUBCOMMANDS`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from importlib import resources
from typing import Callable, Dict, List

import ir_measures
from ir_measures.util import Metric

import irmeasures_markov  # noqa: F401  (registers our measures)

from .io import InputError, read_trec_qrels, read_trec_run

SUMMARY_QID = "all"

#: name -> function(argv) for subcommands; modules of other families add theirs.
SUBCOMMANDS: Dict[str, Callable[[List[str]], int]] = {}

DEMO_MEASURES = [
    "AP", "P@10", "MP", "MP(recall=True)", "MP(model='GL_AD_LID',recall=True)@100",
    "MP(model='LO_OR_ID')", "MP(model='UNIFORM',recall=True)",
    "MPcont(rates='{rates}')@10",
]


def sample_path(name: str) -> str:
    """Path of a file bundled in ``irmeasures_markov/data`` (sample.qrels, sample.run, sample_rates.tsv)."""
    return str(resources.files("irmeasures_markov") / "data" / name)


def _load_qrels(spec: str):
    if os.path.exists(spec):
        return read_trec_qrels(spec)
    try:
        import ir_datasets
    except ImportError:
        raise SystemExit(f"{spec}: no such file (and ir_datasets is not installed)")
    try:
        ds = ir_datasets.load(spec)
    except KeyError:
        raise SystemExit(f"{spec}: not a file and not an ir_datasets id")
    if not ds.has_qrels():
        raise SystemExit(f"ir_datasets id {spec} has no qrels")
    return {q: docs for q, docs in _qrels_iter_to_dict(ds.qrels_iter()).items()}


def _qrels_iter_to_dict(it):
    out = {}
    for q in it:
        out.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    return out


def parse_measures(specs: List[str]) -> List["ir_measures.Measure"]:
    """Parse measure strings (ir_measures syntax, or trec_eval names such as ``map`` / ``P_10``)."""
    measures, errors = [], []
    for text in specs:
        for m in text.split():
            try:
                found = [ir_measures.parse_measure(m)]
            except NameError:
                try:
                    found = ir_measures.parse_trec_measure(m)
                except Exception:
                    errors.append(f"unknown measure: {m}")
                    continue
            except (ValueError, SyntaxError) as exc:
                errors.append(f"syntax error in {m}: {exc}")
                continue
            for measure in found:
                try:
                    measure.validate_params()
                except (ValueError, AssertionError) as exc:
                    errors.append(f"{m}: {exc}")
                    continue
                if measure not in measures:
                    measures.append(measure)
    if errors:
        raise SystemExit("error parsing measures:\n  " + "\n  ".join(errors))
    return measures


def _output(args):
    fmt = "" if args.places == -1 else f".{args.places}f"

    def emit(metric: Metric):
        if args.output_format == "jsonl":
            rec = {"query_id": metric.query_id, "measure": str(metric.measure), "value": metric.value}
            if not args.by_query:
                del rec["query_id"]
            print(json.dumps(rec))
        elif args.by_query:
            print(f"{metric.query_id}\t{metric.measure}\t{metric.value:{fmt}}")
        else:
            print(f"{metric.measure}\t{metric.value:{fmt}}")
    return emit


def evaluate_main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="irmeasures-markov",
        description="Evaluate a TREC run with ir_measures measures plus MP, MPcont and the other "
                    "irmeasures_markov families. Subcommands: " + ", ".join(sorted(SUBCOMMANDS)) + ".")
    parser.add_argument("qrels", help="TREC qrels file (.gz ok) or an ir_datasets id")
    parser.add_argument("run", help="TREC run file (.gz ok)")
    parser.add_argument("measures", nargs="+", help="measures, e.g. AP \"MP(model='GL_AD_LID')@100\"")
    add_output_args(parser)
    args = parser.parse_args(argv)
    try:
        qrels = _load_qrels(args.qrels)
        run = read_trec_run(args.run)
    except (InputError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    measures = parse_measures(args.measures)
    return report(measures, qrels, run, args)


def add_output_args(parser):
    parser.add_argument("--places", "-p", type=int, default=4, help="decimal places (-1: all)")
    parser.add_argument("--by_query", "-q", action="store_true", help="per-query values")
    parser.add_argument("--no_summary", "-n", action="store_true", help="with -q: omit the 'all' rows")
    parser.add_argument("--output_format", "-o", choices=("tsv", "jsonl"), default="tsv")


def report(measures, qrels, run, args) -> int:
    emit = _output(args)
    if args.no_summary and not args.by_query:
        print("error: --no_summary (-n) only makes sense with --by_query (-q)", file=sys.stderr)
        return 2
    try:
        if args.by_query:
            aggs = {m: m.aggregator() for m in measures}
            for metric in ir_measures.iter_calc(measures, qrels, run):
                emit(metric)
                aggs[metric.measure].add(metric.value)
            if not args.no_summary:
                for m in measures:
                    emit(Metric(SUMMARY_QID, m, aggs[m].result()))
        else:
            results = ir_measures.calc_aggregate(measures, qrels, run)
            for m in measures:
                emit(Metric(SUMMARY_QID, m, results[m]))
    except (InputError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def demo_main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="irmeasures-markov demo",
                                     description="Evaluate the synthetic sample qrels/run bundled with the package.")
    parser.add_argument("measures", nargs="*", help="measures (default: a tour of MP variants)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    qrels_path, run_path = sample_path("sample.qrels"), sample_path("sample.run")
    print(f"# qrels: {qrels_path}\n# run:   {run_path}", file=sys.stderr)
    specs = args.measures or [m.format(rates=sample_path("sample_rates.tsv")) for m in DEMO_MEASURES]
    measures = parse_measures(specs)
    return report(measures, read_trec_qrels(qrels_path), read_trec_run(run_path), args)


SUBCOMMANDS["demo"] = demo_main
from .ph_compare import ph_compare_main  # noqa: E402
SUBCOMMANDS["ph-compare"] = ph_compare_main


def _short_warning(message, category, filename, lineno, file=None, line=None):
    return f"warning: {message}\n"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    warnings.formatwarning = _short_warning
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return SUBCOMMANDS[argv[0]](argv[1:])
        return evaluate_main(argv)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
