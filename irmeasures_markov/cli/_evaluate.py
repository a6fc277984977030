"""The main command, ``irmeasures-markov QRELS RUN MEASURE...``, and ``irmeasures-markov demo``, which evaluates the
synthetic sample qrels and run bundled with the package under one header line that says what the table shows.

Which inputs each measure gets: this package's measures the ids as read, ir_measures' own measures (computed by
pytrec_eval) the form of `irmeasures_markov.io._pytrec` (`evaluation_groups`).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import ir_measures

from irmeasures_markov._util._numbers import format_number
from irmeasures_markov._util._version import package_version
from irmeasures_markov.cli._errors import CliError, CliParser, check_places, json_number, warn, write_record
from irmeasures_markov.cli._inputs import load_qrels, load_run, load_runs, natural_key, sample_path
from irmeasures_markov.cli._measure_args import VARIANT_HELP, add_variant_args, apply_variant_args, parse_measures
from irmeasures_markov.io._pytrec import id_from_pytrec_eval, qrels_for_pytrec_eval, run_for_pytrec_eval
from irmeasures_markov.io._text import STDIN
from irmeasures_markov.measures._standard import float32_note, standard_measure, standard_values
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.ranking._cache import qrels_index
from irmeasures_markov.ranking._prepared import PreparedRun

__all__ = ["SUMMARY_QID", "add_output_args", "evaluate_main", "report", "OUTPUT_HELP", "evaluation_groups",
           "DEMO_MEASURES", "demo_header", "demo_main"]

#: the query id of aggregate rows in per-query output
SUMMARY_QID = "all"

OUTPUT_HELP = f"""\
output:
  Aggregates are printed in the order the measures were given.  With -q, queries
  come in natural order (numbers inside ids compare by value: 2 before 10), each
  query's measures in the order given, then the '{SUMMARY_QID}' rows unless -n.
  The order never depends on PYTHONHASHSEED or on which library computed a measure.
  -o csv writes a header row (query_id with -q, measure, value) and, unless -p,
  each value with 15 significant digits in its shortest form (0.702, not the
  arithmetic's 0.7019999999999998), as 'compare -o csv' does.
  -o jsonl writes one JSON object per value; a value that is not a number (NaN,
  e.g. a measure undefined for a query) is written as null, since JSON has no NaN.
  Ids are written back byte for byte, even when they are not valid UTF-8.

exit status:
  0 success; 2 usage or input error (one line 'irmeasures-markov: error: FILE:LINE: ...');
  1 internal error (a bug: please report it; --debug or IRMEASURES_MARKOV_DEBUG=1 shows the traceback).
"""


class VersionAction(argparse.Action):
    """``--version``: print ``irmeasures-markov VERSION`` and exit 0.

    The version is looked up only when the option is given: reading the installed metadata
    (`package_version`) costs more than the rest of building the parser.
    """

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"{parser.prog} {package_version()}\n")
        parser.exit()


def add_output_args(parser: argparse.ArgumentParser) -> None:
    """The output options, spelled as ir_measures' command spells them, kebab-case accepted too."""
    parser.add_argument("--places", "-p", type=int, metavar="N",
                        help="decimal places of values (-1: every digit; default 4, and for csv 15 significant "
                             "digits in their shortest form)")
    parser.add_argument("--by_query", "--by-query", "-q", dest="by_query", action="store_true",
                        help="print per-query values (then the aggregate rows, query id 'all')")
    parser.add_argument("--no_summary", "--no-summary", "-n", dest="no_summary", action="store_true",
                        help="with -q: omit the aggregate 'all' rows")
    parser.add_argument("--output_format", "--output-format", "-o", dest="output_format",
                        choices=("tsv", "csv", "jsonl"), default="tsv",
                        help="tsv (default), csv (with a header row, as compare's) or jsonl (JSON lines; NaN "
                             "written as null)")


def evaluate_main(argv: list[str], subcommands=()) -> int:
    parser = CliParser(
        epilog=VARIANT_HELP + "\n" + OUTPUT_HELP,
        description="Evaluate a TREC run with ir_measures measures plus MP, MPcont, P@H, TBG and Carterette's "
                    "M1-M4.  Other commands: " + ", ".join(f"'%(prog)s {c}'" for c in subcommands) +
                    " ('%(prog)s COMMAND --help' for each).")
    parser.add_argument("--version", action=VersionAction, nargs=0, default=argparse.SUPPRESS,
                        help="show program's version number and exit")
    parser.add_argument("qrels", help="TREC qrels file (plain, .gz, .bz2, .xz) or an ir_datasets id")
    parser.add_argument("run", help="TREC run file (plain, .gz, .bz2, .xz), or - to read the run from standard input")
    parser.add_argument("measures", nargs="+",
                        help="measures, e.g. AP P@10 \"MP(model='GL_AD_LID', recall=True)@100\" (quote measures "
                             "with parentheses; string values in single quotes); trec_eval names such as map and "
                             "P_10 work too; '%(prog)s measures' lists ours")
    add_variant_args(parser)
    add_output_args(parser)
    args = parser.parse_args(argv)
    check_output_args(args)
    if args.qrels == STDIN and args.run == STDIN:
        raise CliError("qrels and run cannot both be read from standard input (-)")
    measures = parse_measures(args.measures)  # before reading: a typo is reported at once
    measures, settings, notes = apply_variant_args(measures, args)
    for note in notes:
        warn(note)
    qrels = load_qrels(args.qrels)
    return report(measures, qrels, load_runs(qrels, args.qrels, {args.run: args.run}, measures)[args.run], args,
                  settings)


def check_output_args(args) -> None:
    if args.no_summary and not args.by_query:
        raise CliError("--no_summary (-n) only makes sense with --by_query (-q)")
    check_places(args.places)


def _float64_values(measures, qrels, run, settings) -> dict[object, dict[str, float]]:
    """``{measure: {qid: value}}`` of the standard measures among ``measures``, on the float64 ranking in
    trec_eval's order (`irmeasures_markov.measures._standard`) with their ``settings`` (tie order, unjudged
    documents), for every qrels query as ir_measures gives them: the run's queries in run order, then the others
    at the measure's DEFAULT."""
    standard = {m: s for m in measures if (s := standard_measure(m)) is not None}
    if not standard:
        return {}
    readers = list(standard)
    if settings:  # other tie orders and unjudged documents read the scores and every judgment
        from irmeasures_markov.experiments._settings import ReadsEverything
        readers.append(ReadsEverything())
    prepared = PreparedRun(qrels_index(qrels), run, readers)
    answered = set(prepared.qids)
    missing = [q for q in qrels if q not in answered]
    out, cache = {}, {}
    for m, s in standard.items():
        setting = settings.get(m)
        options = (setting.ties, setting.unjudged, setting.residual) if setting is not None else ()
        out[m] = dict(zip(prepared.qids, standard_values(s, prepared, *options, cache=cache).tolist()))
        out[m].update((q, m.DEFAULT) for q in missing)
    return out


def _per_query(measures, qrels, run, float64) -> tuple[list[str], dict[object, dict[str, float]]]:
    values: dict[object, dict[str, float]] = {m: {} for m in measures}
    values.update(float64)
    for group, q, r, original_qid in evaluation_groups([m for m in measures if m not in float64], qrels, run):
        for metric in ir_measures.iter_calc(group, q, r):
            values[metric.measure][original_qid(metric.query_id)] = metric.value
    qids = sorted({q for per_query in values.values() for q in per_query}, key=natural_key)
    return qids, values


def report(measures, qrels, run, args, settings=None) -> int:
    """Evaluate and print; ``args`` carries the output options of `add_output_args`.

    The standard measures are computed on the float64 ranking in trec_eval's order, as ``compare`` and
    ``experiments.evaluate`` compute them, with their ``settings`` (``{measure: NativeSetting}``, of
    `apply_variant_args`); the other measures of ``ir_measures`` by ir_measures, named in one warning line.
    """
    note = float32_note(measures)
    if note:
        warn(note)
    float64 = _float64_values(measures, qrels, run, settings or {})
    if args.by_query:
        qids, values = _per_query(measures, qrels, run, float64)
        emit = _emitter(args)
        for qid in qids:
            for m in measures:
                if qid in values[m]:
                    emit(qid, m, values[m][qid])
        if not args.no_summary:
            for m in measures:
                emit(SUMMARY_QID, m, _aggregate(m, (values[m][qid] for qid in qids if qid in values[m])))
    else:
        results = {m: _aggregate(m, per_query.values()) for m, per_query in float64.items()}
        for group, q, r, _ in evaluation_groups([m for m in measures if m not in float64], qrels, run):
            results.update(ir_measures.calc_aggregate(group, q, r))
        emit = _emitter(args)
        for m in measures:
            emit(SUMMARY_QID, m, results[m])
    return 0


def _aggregate(measure, values) -> float:
    """The measure's own aggregate (ir_measures' aggregator, a mean for most) of per-query values, in their order."""
    aggregator = measure.aggregator()
    for v in values:
        aggregator.add(v)
    return aggregator.result()


def _emitter(args) -> Callable[[str, object, float], None]:
    """The function printing one value in the format asked for; CSV starts with its header row (once the
    values are computed, so that an error prints no table at all)."""
    if args.output_format == "jsonl":
        def emit(qid, measure, value):
            record = {"query_id": qid} if args.by_query else {}
            write_record({**record, "measure": str(measure), "value": json_number(value)})
        return emit
    if args.output_format == "csv":
        import csv  # here: only -o csv needs it, and the command's start-up does not

        write = csv.writer(sys.stdout, lineterminator="\n").writerow
        write((["query_id"] if args.by_query else []) + ["measure", "value"])
        places = args.places  # None: the shortest form of 15 significant digits, as compare's CSV
    else:
        def write(cells):
            print("\t".join(cells))
        places = 4 if args.places is None else args.places

    def emit(qid, measure, value):
        write(([qid] if args.by_query else []) + [str(measure), format_number(value, places)])
    return emit


def evaluation_groups(measures, qrels, run) -> list[tuple[list, dict, dict, Callable[[str], str]]]:
    """``[(measures, qrels, run, original_qid), ...]``: what to hand to ir_measures, in groups.

    This package's measures get the inputs as they are (their length files,
    rate files and duplicate groups name the original ids); the other measures
    get what pytrec_eval can take, and ``original_qid`` maps their query ids back.
    """
    ours = [m for m in measures if isinstance(m, FamilyMeasure)]
    native = [m for m in measures if not isinstance(m, FamilyMeasure)]
    groups = [(ours, qrels, run, str)] if ours else []
    if native:
        groups.append((native, qrels_for_pytrec_eval(qrels), run_for_pytrec_eval(run), id_from_pytrec_eval))
    return groups


DEMO_MEASURES = [
    "AP", "P@10", "MP", "MP(recall=True)", "MP(model='GL_AD_LID',recall=True)@100",
    "MP(model='LO_OR_ID')", "MP(model='UNIFORM',recall=True)",
    "MPcont(rates='sample')@10",
]
#: what DEMO_MEASURES are, for the header line
DEMO_TOUR = "AP and P@10 beside five variants of MP (user models, recall) and MPcont with the sample's holding rates"


def demo_header(n_qrels_queries: int, n_run_queries: int, given: bool, by_query: bool, summary: bool) -> str:
    """The line above the demo's table (tab-separated output only): the data, the measures, the columns."""
    measures = "the measures given" if given else DEMO_TOUR
    mean = f"the mean over the {n_qrels_queries} qrels queries (a query the run misses scores 0)"
    columns = (f"query id, measure, value{f'; the rows of query all: {mean}' if summary else ''}" if by_query
               else f"measure, {mean}")
    return (f"# the bundled sample qrels ({n_qrels_queries} queries) and run ({n_run_queries} queries); "
            f"{measures}; columns: {columns}")


def demo_main(argv: list[str]) -> int:
    parser = CliParser("demo", epilog=OUTPUT_HELP,
                       description="Evaluate the synthetic sample qrels/run bundled with the package.\n"
                                   "rates='sample' names its holding rates (the MP paper's Table 4, run 1).\n"
                                   "The tab-separated table comes under one '#' line saying what it shows.")
    parser.add_argument("measures", nargs="*", help="measures (default: a tour of MP variants)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    check_output_args(args)
    measures = parse_measures(args.measures or DEMO_MEASURES)
    qrels, run = load_qrels(sample_path("sample.qrels")), load_run(sample_path("sample.run"))
    if args.output_format == "tsv":  # csv and jsonl stay machine-readable: their own header row, or none
        print(demo_header(len(qrels), len(run), bool(args.measures), args.by_query,
                          not args.no_summary), flush=True)
    return report(measures, qrels, run, args)
