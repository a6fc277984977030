"""``irmeasures-markov compare QRELS RUN... -m MEASURE...``: runs × measures with significance markers.

The command line face of [`irmeasures_markov.comparison.compare`][irmeasures_markov.comparison.compare]: the
same evaluation (trec_eval's float64 values for AP, P@k, nDCG, ...), the same
tests and corrections, the same renderings.
"""
from __future__ import annotations

import sys

from irmeasures_markov._util._plotting import PLOT_EXTRA
from irmeasures_markov.cli._errors import EXIT_HELP, CliError, CliParser, check_places, reading, warn, write_record
from irmeasures_markov.cli._inputs import load_qrels, load_runs, run_files
from irmeasures_markov.cli._measure_args import VARIANT_HELP, add_variant_args, apply_variant_args, parse_measures
from irmeasures_markov.comparison import COMPARE_TESTS, compare
from irmeasures_markov.comparison import _render as render
from irmeasures_markov.comparison._core import check_test_options
from irmeasures_markov.comparison._runs import resolve_baseline
from irmeasures_markov.inference._corrections import CORRECTIONS

__all__ = ["compare_main"]

_FORMATS = ("table", "md", "latex", "csv", "tsv", "jsonl")

_EPILOG = """\
runs:
  Each RUN is a run file, a directory (its input.* files, else every file) or a
  quoted glob pattern ('runs/input.*'). Run names come from the file names,
  without a compression suffix (.gz .bz2 .xz .zst), a run-file suffix (.run
  .txt .trec .res) and TREC's input. prefix (input.NAME.gz, NAME.run -> NAME);
  two files giving one name are an error. --baseline takes a run name or file;
  the baseline is the first row of the table.

markers (a pair is significant when its corrected p-value is below --alpha):
  with --baseline: ▲ significantly better than the baseline, ▼ worse
                   (LaTeX: $^{\\blacktriangle}$ / $^{\\blacktriangledown}$, package amssymb);
  all pairs:       each run gets a letter (a, b, ...); a mean carries the letters of
                   the runs it is significantly better than;
  tukey, anova:    Tukey groups instead: runs sharing a letter do not differ
                   significantly, a holds the best mean; beyond 12 runs three or more
                   consecutive letters are written as a range (a-d for abcd).
  The best mean of each measure is bold in md and latex.

tests (paired, per topic; A - B, A the run and B the baseline):
  t, wilcoxon, sign, randomization, bootstrap: classic tests (randomization and
  bootstrap seeded by --seed, with --resamples draws); bayes: Carterette's linear
  model fitted to all runs at once, reporting P(A > B) as the statistic and
  2 min(P(A>B), P(A<B)) as the p-value, uncorrected (--correction none);
  tukey: randomized Tukey HSD (each of --resamples draws permutes every topic's
  scores among the runs; p = share of draws whose range of means reaches the
  pair's difference, (count + 1) / (draws + 1)); anova: Tukey HSD over the
  two-way ANOVA's residual mean square (studentized range). Both test every
  pair at once, family-wise, so they take no --correction.
  none: no test, the means only.  With one topic no test is possible: the
  means are printed with a one-line warning saying so.
  Effect size: Cohen's d_z = mean(d) / sd(d) of the per-topic differences.
  --ci: t interval of each mean over the topics.

output:
  table (aligned text with a legend), md, latex (a tabular), csv, tsv, jsonl (one
  object per run and measure; with --baseline also each run's effect size and
  corrected p-value against it). --pairs prints the tests instead: one row per
  measure and pair with mean_difference, effect_size, statistic, pvalue,
  adjusted_pvalue, significant. Without -p, csv and tsv print 15 significant digits
  in their shortest form (0.702, not the arithmetic's 0.7019999999999998), and
  jsonl every digit. Markdown escapes only what it needs (| inside a cell).
  Topics: every qrels topic (a topic a run did not answer scores 0, as trec_eval -c).
  --matrix FILE writes the (corrected) p-values as a runs x runs matrix per measure
  (CSV; TSV when FILE ends in .tsv). --plot FILE draws the pairwise differences with
  Tukey's simultaneous intervals and the groups, one panel per measure (the
  comparison's own with tukey/anova, else Tukey HSD over the ANOVA; matplotlib).

sensitivity (--ties VALUE, any value, and --holes): a second table with, per run
and measure, judged@k (share of the top k documents that have a judgment; k the
measure's cutoff, else 10), the mean residual (value with unjudged documents
relevant minus non-relevant) and the tie spread (value with ties optimistic minus
pessimistic); then the pairs whose order or significance changes between the
optimistic and pessimistic tie orders (--ties) or within the residual (--holes:
the two runs' ranges [value, value + residual] overlap, or testing one run's
unjudged documents non-relevant against the other's relevant changes the result).
With -o csv/tsv/jsonl the same numbers are extra columns/keys; --pairs adds a
column per kind saying what changes.
"""

def _parser() -> CliParser:
    parser = CliParser(
        "compare", epilog=_EPILOG + "\n" + VARIANT_HELP + "\n" + EXIT_HELP,
        description="Compare runs on several measures: one table of means with significance markers "
                    "against a baseline or between all pairs.")
    parser.add_argument("qrels", help="qrels file (plain, .gz, .bz2, .xz) or an ir_datasets id")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run files, directories or quoted glob patterns")
    parser.add_argument("-m", "--measures", nargs="+", action="extend", required=True, metavar="MEASURE",
                        help="measures, e.g. AP P@10 \"MP(model='GL_AD_LID')\" (as for the main command)")
    tests = parser.add_argument_group("tests")
    tests.add_argument("--baseline", "-b", metavar="RUN",
                       help="test every run against this one (a run name or one of the RUN paths); "
                            "default: every pair")
    tests.add_argument("--test", "-t", choices=COMPARE_TESTS, default="t",
                       help="significance test (default t; none: the means only)")
    tests.add_argument("--correction", "-c", choices=CORRECTIONS,
                       help="multiple-comparison correction over the pairs of a measure "
                            "(default holm; none for bayes and for --test none)")
    tests.add_argument("--alpha", type=float, default=0.05, help="significance level of the markers (default 0.05)")
    tests.add_argument("--alternative", choices=("two-sided", "greater", "less"), default="two-sided",
                       help="alternative hypothesis about A - B (default two-sided)")
    tests.add_argument("--ci", nargs="?", type=float, const=0.95, metavar="LEVEL",
                       help="show t confidence intervals of the means (level 0.95 unless given)")
    tests.add_argument("--resamples", type=int, default=10000,
                       help="randomization/bootstrap resamples (default 10000)")
    tests.add_argument("--seed", type=int, default=0, help="seed of the resampling tests and of bayes (default 0)")
    variants = add_variant_args(parser)
    variants.add_argument("--holes", action="store_true",
                          help="add judged shares, residuals and tie spreads, and flag the pairs whose order or "
                               "significance can change within the residual")
    out = parser.add_argument_group("output")
    out.add_argument("--output_format", "--output-format", "-o", dest="output_format", choices=_FORMATS,
                     default="table", help="table (default), md, latex, csv, tsv or jsonl")
    out.add_argument("--pairs", action="store_true", help="print the tests (one row per measure and pair)")
    out.add_argument("--effect-size", "--effect_size", dest="effect_size", action="store_true",
                     help="with --baseline, table/md/latex: add each run's Cohen's d_z against the baseline")
    out.add_argument("--places", "-p", type=int, metavar="N",
                     help="decimal places (-1: every digit; default 4 for table/md/latex, 15 significant digits "
                          "for csv/tsv)")
    out.add_argument("--matrix", metavar="FILE",
                     help="also write the pairwise p-values as a runs x runs matrix per measure (CSV, or TSV for "
                          ".tsv)")
    out.add_argument("--plot", metavar="FILE",
                     help="also draw the pairwise differences with Tukey intervals and groups (png, pdf, svg, ...; "
                          "needs matplotlib)")
    out.add_argument("--no-progress", "--no_progress", dest="no_progress", action="store_true",
                     help="no progress bar (there is none either when standard error is not a terminal)")
    return parser


def _option(name: str, value: object = None) -> str:
    """compare()'s parameter as its option is typed (``n_resamples`` is ``--resamples``), for its messages."""
    flag = "--resamples" if name == "n_resamples" else f"--{name}"
    return flag if value is None else f"{flag} {value}"


def compare_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    # compare()'s own checks, before any file is read (a ValueError is a usage error at the boundary)
    check_test_options(args.test, args.correction, args.alpha, args.alternative, args.ci, args.resamples, _option)
    check_places(args.places)
    if args.plot is not None:
        try:
            import matplotlib
        except ImportError:
            raise CliError(f"--plot needs matplotlib: {PLOT_EXTRA}") from None
        matplotlib.use("Agg")
    if args.effect_size and args.baseline is None:
        raise CliError("--effect-size needs --baseline (for all pairs, --pairs prints every effect size)")
    measures = parse_measures(args.measures)  # before reading: a typo is reported at once
    apply_variant_args(measures, args)  # the same checks, before reading; compare() applies the options
    paths = run_files(args.runs)
    if len(paths) < 2:
        raise CliError(f"compare needs at least 2 runs, got {len(paths)} ({', '.join(args.runs)})")
    names = list(paths)
    try:
        baseline = resolve_baseline(args.baseline, names, paths)
    except ValueError:
        raise CliError(f"--baseline {args.baseline}: not one of the runs ({', '.join(names[:10])}"
                       f"{', ...' if len(names) > 10 else ''}); give a run name or one of the RUN files") from None
    progress = not args.no_progress and sys.stderr.isatty()
    qrels = load_qrels(args.qrels)
    runs = load_runs(qrels, args.qrels, paths, measures, progress)
    cmp = compare(qrels, runs, measures, baseline=baseline, test=args.test, correction=args.correction,
                  alpha=args.alpha, alternative=args.alternative, ci=args.ci, n_resamples=args.resamples,
                  seed=args.seed, progress=progress, ties=args.ties, unjudged=args.unjudged,
                  residual=args.residual, holes=args.holes)
    if args.output_format in ("csv", "tsv", "jsonl"):  # the text formats say it in their legend
        for note in cmp.notes:
            warn(note)
    fmt = args.output_format
    if fmt == "jsonl":
        for record in render.records(cmp, pairs=args.pairs):
            write_record(record)
    elif fmt in ("csv", "tsv"):
        sys.stdout.write(render.to_delimited(cmp, "," if fmt == "csv" else "\t", args.places, pairs=args.pairs))
    else:
        print(render.table(cmp, "text" if fmt == "table" else fmt, 4 if args.places is None else args.places,
                           args.pairs, args.effect_size))
    if args.matrix is not None:
        with reading(args.matrix), open(args.matrix, "w", encoding="utf-8", newline="") as f:
            f.write(render.significance_matrix(cmp, "\t" if args.matrix.endswith(".tsv") else ","))
    if args.plot is not None:
        with reading(args.plot):
            cmp.plot_pairs(args.plot)
    return 0
