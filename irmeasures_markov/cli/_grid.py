"""The τ grids: ``irmeasures-markov pool-reduction`` and ``irmeasures-markov robustness`` (``QRELS RUN... -m
MEASURE...``), resumable grids on local processes (``-j``) or a Dask cluster (``--scheduler``).

``pool-reduction``: for each pool size and seed the qrels are downsampled (Buckley & Voorhees
2004, as in the MP paper's Figures 3 and 4), every run is evaluated on the
full pool's topics, and one line per (pool, seed, measure) gives the mean
score over topics and runs and Kendall's τ-b between the run rankings on the
full and on the reduced pool.  Each (run, pool) is a cell of an
`irmeasures_markov.grid` grid, resumable with ``--store``.

``robustness``: ranking stability under smaller topic samples and shallower pools (Carterette 2011's Figures 3
and 4).  One row per (experiment, level, measure): for ``topics`` the mean and standard deviation over the trials
of Kendall's τ-b between the run ranking on every topic and on a random sample of ``level`` topics
(`topic_sample_stability`); for ``depth`` the τ-b between the ranking with the full qrels and with the qrels of
the depth-``level`` pool (`pool_depth_robustness`).
"""
from __future__ import annotations

import contextlib
import sys

from irmeasures_markov._util._numbers import format_number
from irmeasures_markov.cli._errors import EXIT_HELP, CliError, CliParser, check_places, json_number, write_record
from irmeasures_markov.cli._inputs import load_qrels, load_runs, run_files
from irmeasures_markov.cli._measure_args import parse_measures
from irmeasures_markov.experiments import evaluate_grid, pool_depth_robustness, topic_sample_stability
from irmeasures_markov.experiments._pools import reduction_of
from irmeasures_markov.experiments._robustness import DEPTHS, UNJUDGED_CUT

__all__ = ["pool_reduction_main", "robustness_main", "parse_list", "MAX_LIST_VALUES", "MAX_POOLS", "POOL_HEADER",
           "ROBUSTNESS_HEADER"]

#: the columns of the TSV output (the keys of the jsonl records)
POOL_HEADER = ("percent", "seed", "measure", "mean", "tau")
ROBUSTNESS_HEADER = ("experiment", "level", "measure", "tau", "sd")
#: the columns printed with --places decimals (the others as they are)
VALUE_COLUMNS = ("mean", "tau", "sd")

_POOL_EPILOG = """\
RUN may be a run file or a directory of run files (TREC's input.NAME[.gz]);
run names drop the input. prefix and the compression suffix.  Each run file
is read once, by this process: local workers share what it read, a Dask
cluster gets each run sent once (the files need not be on storage the
workers see).  --store keeps every finished (run, pool) cell in a Parquet
directory, keyed by the content of the runs and qrels: the same command
again computes only what is missing.

Output (tsv): a header row, then one row per pool and measure: percent, seed,
measure, mean (score over topics and runs), tau (τ-b with the full pool); the
full pool is percent 100, seed '-'.

"""

_ROBUSTNESS_EPILOG = """\
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

#: each command's own options, declared between the inputs and the grid's options
POOL_OPTIONS = [
    (("--percents",), dict(default="90,70,50,30,10", help="pool sizes kept, in %% (default 90,70,50,30,10)")),
    (("--seeds",), dict(default="0", help="pool samples: a list (0,3,7) or a range (0-19); default 0")),
]
ROBUSTNESS_OPTIONS = [
    (("--sizes",), dict(default=None, help="topic sample sizes (default 5,10,... below the number of topics); "
                        "'none': no topic-sample experiment")),
    (("--trials",), dict(type=int, default=100, help="random topic samples per size (default 100)")),
    (("--seed",), dict(type=int, default=0, help="seed of the topic samples (default 0)")),
    (("--depths",), dict(default=",".join(map(str, DEPTHS)),
                         help="pool depths (default %(default)s); 'none': no pool-depth experiment")),
    (("--unjudged",), dict(choices=UNJUDGED_CUT, default="nonrel",
                           help="documents outside the cut pool: not relevant (default, as trec_eval) or dropped "
                                "from the rankings (condensed lists; this package's families only)")),
]


def _parser(command: str, description: str, epilog: str, example: str, options: list) -> CliParser:
    """A grid command's parser: the inputs, the command's own ``options``, then where the grid runs, its store and
    its output."""
    p = CliParser(command, epilog=epilog + EXIT_HELP, description=description)
    p.add_argument("qrels", help="qrels file (plain or compressed) or an ir_datasets id")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files, directories of run files or quoted glob patterns")
    p.add_argument("-m", "--measures", nargs="+", action="extend", required=True, metavar="MEASURE",
                   help=f"measures, e.g. {example}")
    for names, kwargs in options:
        p.add_argument(*names, **kwargs)
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (tcp://host:8786), or 'local' for a LocalCluster of -j workers")
    p.add_argument("-j", "--n-jobs", type=int, default=1, help="local processes, or LocalCluster workers")
    p.add_argument("--store", default=None, help="Parquet directory of finished cells (resumable)")
    p.add_argument("-p", "--places", type=int, default=4, help="decimals (-1: all digits); default 4")
    p.add_argument("-o", "--output", choices=("tsv", "jsonl"), default="tsv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or summary on standard error "
                   "(there is none either when it is not a terminal)")
    return p


def _inputs(args) -> tuple[list, dict, dict, dict]:
    """The measures, qrels and runs (at least two, each file read once, by this process) and the grid's keyword
    arguments: what both commands check and read once their own options are checked."""
    if args.n_jobs < 1:
        raise CliError(f"-j/--n-jobs must be a positive integer, got {args.n_jobs}")
    check_places(args.places)
    measures = parse_measures(args.measures)
    files = run_files(args.runs)
    if len(files) < 2:
        raise CliError("Kendall's τ needs at least 2 runs")
    qrels = load_qrels(args.qrels)
    runs = load_runs(qrels, args.qrels, files, measures)
    grid = dict(scheduler=args.scheduler, n_jobs=args.n_jobs, store=args.store,
                progress=False if args.no_progress else None)  # None: only when standard error is a terminal
    return measures, qrels, runs, grid


def _write(header: tuple, rows: list[tuple], args) -> None:
    """The rows under a header row (tsv), or one JSON object per row keyed by the header (jsonl); None is '-'
    (null), the `VALUE_COLUMNS` have --places decimals, other floats print in their shortest form."""
    if args.output == "tsv":
        print("\t".join(header))
    for row in rows:
        cells = dict(zip(header, row))
        if args.output == "jsonl":
            write_record({k: json_number(v) if k in VALUE_COLUMNS and v is not None else v for k, v in cells.items()})
        else:
            print("\t".join("-" if v is None else format_number(v, args.places) if k in VALUE_COLUMNS
                            else f"{v:g}" if isinstance(v, float) else str(v) for k, v in cells.items()))


#: values one list or range argument may hold (--seeds, --percents): every value is a pool sample that
#: evaluates every run again, and the grid holds every (run, pool) result in memory
MAX_LIST_VALUES = 10_000
#: pool samples in all (--percents x --seeds), for the same reason
MAX_POOLS = 10_000
_WHY = "every value is a pool sample on which every run is evaluated again, and every result is held in memory"


def parse_list(text: str, what: str, kind=float, limit: int = MAX_LIST_VALUES) -> list:
    """The values of a comma-separated list argument; with ``kind=int`` an item may be a range ``A-B``.

    The size of a range is checked from its ends before it is expanded: an
    argument holding more than ``limit`` values is a `CliError`
    naming the limit (``--seeds 0-100000000000`` is refused at once instead
    of filling the memory).
    """
    items = []
    try:
        for part in text.split(","):
            part = part.strip()
            if kind is int and "-" in part[1:]:
                a, b = part.split("-", 1) if not part.startswith("-") else part[1:].split("-", 1)
                a, b = int(a), int(b)
                if b < a:
                    raise ValueError
                items.append((a, b))
            else:
                items.append(kind(part))
    except ValueError:
        expected = "integers or ranges A-B" if kind is int else "numbers"
        raise CliError(f"{what}: expected a comma-separated list of {expected}, got {text!r}") from None
    count = sum(item[1] - item[0] + 1 if isinstance(item, tuple) else 1 for item in items)
    if count > limit:
        raise CliError(f"{what}: {text!r} holds {count} values; at most {limit} are allowed ({_WHY})")
    out = []
    for item in items:
        out += list(range(item[0], item[1] + 1)) if isinstance(item, tuple) else [item]
    if len(set(out)) != len(out):
        raise CliError(f"{what}: {text!r} lists a value twice")
    return out


def pool_reduction_main(argv: list[str]) -> int:
    args = _parser("pool-reduction", "Mean scores and Kendall's τ-b as the pool shrinks, on local processes or a "
                   "Dask cluster.", _POOL_EPILOG, "AP P@10 Bpref \"MP(recall=True)\"", POOL_OPTIONS).parse_args(argv)
    percents = parse_list(args.percents, "--percents")
    bad = [p for p in percents if not 0 < p < 100]
    if bad:
        raise CliError(f"--percents: every pool size must be in (0, 100), got {bad}")
    seeds = parse_list(args.seeds, "--seeds", int)
    if len(seeds) * len(percents) > MAX_POOLS:
        raise CliError(f"--percents x --seeds: {len(percents)} x {len(seeds)} = {len(percents) * len(seeds)} pool "
                       f"samples; at most {MAX_POOLS} are allowed ({_WHY})")
    measures, qrels, runs, grid = _inputs(args)
    pools = [100] + [(pc, s) for s in seeds for pc in percents]
    with contextlib.redirect_stdout(sys.stderr):  # the grid's progress lines go with the bar, not into the table
        evs, _ = evaluate_grid(measures, qrels, runs, pools=pools, desc="pool reduction", **grid)
    full = evs[(100.0, 0)]
    reds = {s: reduction_of(full, [evs[(float(pc), s)] for pc in percents], percents) for s in seeds}
    # (percent as printed, seed, reduction, its row); the full pool's row is the same for every seed
    rows = [(100.0, None, reds[seeds[0]], 0)]
    rows += [(float(f"{pc:g}"), s, reds[s], k + 1) for s in seeds for k, pc in enumerate(percents)]
    _write(POOL_HEADER, [(pc, s, str(m), red.mean_scores[r, j], red.tau[r, j]) for pc, s, red, r in rows
                         for j, m in enumerate(measures)], args)
    return 0


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
    args = _parser("robustness", "Kendall's τ-b of the run ranking on topic samples and on shallower pools "
                   "(Carterette 2011, Figures 3 and 4), on local processes or a Dask cluster.", _ROBUSTNESS_EPILOG,
                   "M1 \"M2(dist='DCG')\" \"M4(dist='AP')\"", ROBUSTNESS_OPTIONS).parse_args(argv)
    sizes = _levels(args.sizes, "--sizes")
    depths = _levels(args.depths, "--depths")
    topics_wanted = not (args.sizes is not None and sizes is None)
    if not topics_wanted and depths is None:
        raise CliError("--sizes none and --depths none: nothing to compute")
    if args.trials < 1:
        raise CliError(f"--trials must be a positive integer, got {args.trials}")
    measures, qrels, runs, grid = _inputs(args)
    rows = []
    with contextlib.redirect_stdout(sys.stderr):  # the grid's progress lines go with the bar, not into the table
        if depths is not None:
            depth = pool_depth_robustness(measures, qrels, runs, depths=depths, unjudged=args.unjudged, **grid)
            rows += [("depth", int(d), lab, depth.loc[d, lab], None) for d in depth.index for lab in depth.columns]
        if topics_wanted:
            taus = topic_sample_stability(measures, qrels, runs, sizes=sizes, trials=args.trials, seed=args.seed,
                                          **grid)
            by_size = taus.groupby(level="size", sort=False)
            mean, sd = by_size.mean(), by_size.std(ddof=0)
            rows = [("topics", int(s), lab, mean.loc[s, lab], sd.loc[s, lab]) for s in mean.index
                    for lab in mean.columns] + rows
    _write(ROBUSTNESS_HEADER, rows, args)
    return 0
