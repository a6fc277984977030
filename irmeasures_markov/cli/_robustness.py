"""``irmeasures-markov robustness QRELS RUN... -m MEASURE...``: ranking stability under smaller topic samples
and shallower pools (Carterette 2011's Figures 3 and 4) as resumable grids.

One row per (experiment, level, measure): for ``topics`` the mean and standard deviation over the trials of
Kendall's τ-b between the run ranking on every topic and on a random sample of ``level`` topics
(`topic_sample_stability`); for ``depth`` the τ-b between the ranking with the full qrels and with the qrels of
the depth-``level`` pool (`pool_depth_robustness`).
"""
from __future__ import annotations

import argparse
import contextlib
import sys

from irmeasures_markov._util._numbers import format_number
from irmeasures_markov.cli._errors import EXIT_HELP, PROG, CliError, CliParser
from irmeasures_markov.cli._grid import add_grid_options, parse_list
from irmeasures_markov.cli._inputs import load_tau_inputs
from irmeasures_markov.cli._measure_args import parse_measures
from irmeasures_markov.cli._output import check_places, json_number, write_record
from irmeasures_markov.experiments import pool_depth_robustness, topic_sample_stability
from irmeasures_markov.experiments._robustness import DEPTHS, UNJUDGED_CUT

__all__ = ["robustness_main", "TSV_HEADER"]

#: the columns of the TSV output (the keys of the jsonl records)
TSV_HEADER = ("experiment", "level", "measure", "tau", "sd")

_EPILOG = """\
RUN may be a run file or a directory of run files (TREC's input.NAME[.gz]),
read once by this process, as for pool-reduction.  --store keeps every
finished (run, pool) cell in a Parquet directory keyed by content: the same
command again computes only what is missing (the topic samples need only the
full-qrels cells, which the depth experiment computes too).

Output (tsv): a header row, then one row per experiment, level and measure:
experiment (topics or depth), level (sample size or pool depth), measure,
tau (topics: the mean over the trials), sd (topics: the standard deviation
over the trials; depth: '-').

"""


def _parser() -> argparse.ArgumentParser:
    p = CliParser(prog=f"{PROG} robustness", formatter_class=argparse.RawDescriptionHelpFormatter,
                  epilog=_EPILOG + EXIT_HELP,
                  description="Kendall's τ-b of the run ranking on topic samples and on shallower pools "
                              "(Carterette 2011, Figures 3 and 4), on local processes or a Dask cluster.")
    p.add_argument("qrels", help="qrels file (plain or compressed) or an ir_datasets id")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files, directories of run files or quoted glob patterns")
    p.add_argument("-m", "--measures", nargs="+", action="extend", required=True, metavar="MEASURE",
                   help="measures, e.g. M1 \"M2(dist='DCG')\" \"M4(dist='AP')\"")
    p.add_argument("--sizes", default=None, help="topic sample sizes (default 5,10,... below the number of topics); "
                   "'none': no topic-sample experiment")
    p.add_argument("--trials", type=int, default=100, help="random topic samples per size (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the topic samples (default 0)")
    p.add_argument("--depths", default=",".join(map(str, DEPTHS)),
                   help="pool depths (default %(default)s); 'none': no pool-depth experiment")
    p.add_argument("--unjudged", choices=UNJUDGED_CUT, default="nonrel",
                   help="documents outside the cut pool: not relevant (default, as trec_eval) or dropped from the "
                        "rankings (condensed lists; this package's families only)")
    add_grid_options(p)
    return p


def _levels(text: str | None, what: str) -> list[int] | None:
    """A list option of positive integers; None for 'none' (the experiment is skipped) or when not given."""
    if text is None or text.strip().lower() == "none":
        return None
    values = parse_list(text, what, int)
    bad = [v for v in values if v < 1]
    if bad:
        raise CliError(f"{what}: every value must be a positive integer, got {bad}")
    return values


def robustness_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    sizes = _levels(args.sizes, "--sizes")
    depths = _levels(args.depths, "--depths")
    topics_wanted = not (args.sizes is not None and sizes is None)
    if not topics_wanted and depths is None:
        raise CliError("--sizes none and --depths none: nothing to compute")
    if args.trials < 1:
        raise CliError(f"--trials must be a positive integer, got {args.trials}")
    if args.n_jobs < 1:
        raise CliError(f"-j/--n-jobs must be a positive integer, got {args.n_jobs}")
    check_places(args.places)
    measures = parse_measures(args.measures)
    qrels, loaded = load_tau_inputs(args.qrels, args.runs, measures)
    grid = dict(scheduler=args.scheduler, n_jobs=args.n_jobs, store=args.store,
                progress=False if args.no_progress else None)
    rows = []
    with contextlib.redirect_stdout(sys.stderr):  # the grid's progress lines go with the bar, not into the table
        if depths is not None:
            depth = pool_depth_robustness(measures, qrels, loaded, depths=depths, unjudged=args.unjudged, **grid)
            rows += [("depth", d, lab, depth.loc[d, lab], None) for d in depth.index for lab in depth.columns]
        if topics_wanted:
            taus = topic_sample_stability(measures, qrels, loaded, sizes=sizes, trials=args.trials, seed=args.seed,
                                          **grid)
            by_size = taus.groupby(level="size", sort=False)
            mean, sd = by_size.mean(), by_size.std(ddof=0)
            rows = [("topics", s, lab, mean.loc[s, lab], sd.loc[s, lab]) for s in mean.index
                    for lab in mean.columns] + rows
    if args.output == "tsv":
        print("\t".join(TSV_HEADER))
    for experiment, level, lab, tau, sd in rows:
        if args.output == "jsonl":
            write_record({"experiment": experiment, "level": int(level), "measure": lab, "tau": json_number(tau),
                          "sd": None if sd is None else json_number(sd)})
        else:
            print(f"{experiment}\t{level}\t{lab}\t{format_number(tau, args.places)}\t"
                  f"{'-' if sd is None else format_number(sd, args.places)}")
    return 0
