"""``irmeasures-markov demo``: evaluate the synthetic sample qrels and run bundled with the package."""
from __future__ import annotations

import argparse

from irmeasures_markov.cli._errors import PROG, CliParser
from irmeasures_markov.cli._evaluate import OUTPUT_HELP, add_output_args, check_output_args, report
from irmeasures_markov.cli._inputs import load_qrels, load_run, sample_path
from irmeasures_markov.cli._measure_args import parse_measures

__all__ = ["DEMO_MEASURES", "demo_main"]

DEMO_MEASURES = [
    "AP", "P@10", "MP", "MP(recall=True)", "MP(model='GL_AD_LID',recall=True)@100",
    "MP(model='LO_OR_ID')", "MP(model='UNIFORM',recall=True)",
    "MPcont(rates='sample')@10",
]


def demo_main(argv: list[str]) -> int:
    parser = CliParser(prog=f"{PROG} demo", formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=OUTPUT_HELP,
                       description="Evaluate the synthetic sample qrels/run bundled with the package.\n"
                                   "rates='sample' names its holding rates (the MP paper's Table 4, run 1).")
    parser.add_argument("measures", nargs="*", help="measures (default: a tour of MP variants)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    check_output_args(args)
    measures = parse_measures(args.measures or DEMO_MEASURES)
    return report(measures, load_qrels(sample_path("sample.qrels")), load_run(sample_path("sample.run")), args)
