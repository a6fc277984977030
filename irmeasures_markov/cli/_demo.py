"""``irmeasures-markov demo``: evaluate the synthetic sample qrels and run bundled with the package, under one header
line that says what the table shows."""
from __future__ import annotations

import argparse

from irmeasures_markov.cli._errors import PROG, CliParser
from irmeasures_markov.cli._evaluate import OUTPUT_HELP, add_output_args, check_output_args, report
from irmeasures_markov.cli._inputs import load_qrels, load_run, sample_path
from irmeasures_markov.cli._measure_args import parse_measures

__all__ = ["DEMO_MEASURES", "demo_header", "demo_main"]

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
    parser = CliParser(prog=f"{PROG} demo", formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=OUTPUT_HELP,
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
