"""``irmeasures-markov pool-reduction QRELS RUN... -m MEASURE...``: pool downsampling as a resumable grid.

For each pool size and seed the qrels are downsampled (Buckley & Voorhees
2004, as in the MP paper's Figures 3 and 4), every run is evaluated on the
full pool's topics, and one line per (pool, seed, measure) gives the mean
score over topics and runs and Kendall's τ-b between the run rankings on the
full and on the reduced pool.  Each (run, pool) is a cell of an
`irmeasures_markov.grid` grid: local processes (``-j``), or a Dask
cluster (``--scheduler``), resumable with ``--store``.
"""
from __future__ import annotations

import argparse
import contextlib
import sys

from irmeasures_markov._util._numbers import format_number
from irmeasures_markov.cli._errors import EXIT_HELP, PROG, CliError, CliParser
from irmeasures_markov.cli._inputs import load_tau_inputs
from irmeasures_markov.cli._measure_args import parse_measures
from irmeasures_markov.cli._output import check_places, json_number, write_record
from irmeasures_markov.experiments import evaluate_grid
from irmeasures_markov.experiments._pools import reduction_of

__all__ = ["pool_reduction_main", "add_grid_options", "parse_list", "MAX_LIST_VALUES", "MAX_POOLS", "TSV_HEADER"]

#: the columns of the TSV output (the keys of the jsonl records)
TSV_HEADER = ("percent", "seed", "measure", "mean", "tau")

_EPILOG = """\
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


def _parser() -> argparse.ArgumentParser:
    p = CliParser(prog=f"{PROG} pool-reduction", formatter_class=argparse.RawDescriptionHelpFormatter,
                  epilog=_EPILOG + EXIT_HELP, description="Mean scores and Kendall's τ-b as the pool shrinks, on "
                                                          "local processes or a Dask cluster.")
    p.add_argument("qrels", help="qrels file (plain or compressed) or an ir_datasets id")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files, directories of run files or quoted glob patterns")
    p.add_argument("-m", "--measures", nargs="+", action="extend", required=True, metavar="MEASURE",
                   help="measures, e.g. AP P@10 Bpref \"MP(recall=True)\"")
    p.add_argument("--percents", default="90,70,50,30,10", help="pool sizes kept, in %% (default 90,70,50,30,10)")
    p.add_argument("--seeds", default="0", help="pool samples: a list (0,3,7) or a range (0-19); default 0")
    add_grid_options(p)
    return p


def add_grid_options(p: argparse.ArgumentParser) -> None:
    """The options of every command that runs an evaluation grid (where it runs, its store, its output)."""
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (tcp://host:8786), or 'local' for a LocalCluster of -j workers")
    p.add_argument("-j", "--n-jobs", type=int, default=1, help="local processes, or LocalCluster workers")
    p.add_argument("--store", default=None, help="Parquet directory of finished cells (resumable)")
    p.add_argument("-p", "--places", type=int, default=4, help="decimals (-1: all digits); default 4")
    p.add_argument("-o", "--output", choices=("tsv", "jsonl"), default="tsv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or summary on standard error "
                   "(there is none either when it is not a terminal)")


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
    args = _parser().parse_args(argv)
    percents = parse_list(args.percents, "--percents")
    bad = [p for p in percents if not 0 < p < 100]
    if bad:
        raise CliError(f"--percents: every pool size must be in (0, 100), got {bad}")
    seeds = parse_list(args.seeds, "--seeds", int)
    if len(seeds) * len(percents) > MAX_POOLS:
        raise CliError(f"--percents x --seeds: {len(percents)} x {len(seeds)} = {len(percents) * len(seeds)} pool "
                       f"samples; at most {MAX_POOLS} are allowed ({_WHY})")
    if args.n_jobs < 1:
        raise CliError(f"-j/--n-jobs must be a positive integer, got {args.n_jobs}")
    check_places(args.places)
    measures = parse_measures(args.measures)
    qrels, loaded = load_tau_inputs(args.qrels, args.runs, measures)
    pools = [100] + [(pc, s) for s in seeds for pc in percents]
    progress = False if args.no_progress else None  # None: only when standard error is a terminal
    with contextlib.redirect_stdout(sys.stderr):  # the grid's progress lines go with the bar, not into the table
        evs, _ = evaluate_grid(measures, qrels, loaded, pools=pools, scheduler=args.scheduler, n_jobs=args.n_jobs,
                               store=args.store, progress=progress, desc="pool reduction")
    full = evs[(100.0, 0)]
    reds = {s: reduction_of(full, [evs[(float(pc), s)] for pc in percents], percents) for s in seeds}
    rows = [("100", None, reds[seeds[0]], 0)]  # the full pool's row is the same for every seed
    rows += [(f"{pc:g}", s, reds[s], k + 1) for s in seeds for k, pc in enumerate(percents)]
    if args.output == "tsv":
        print("\t".join(TSV_HEADER))
    for percent, seed, red, r in rows:
        for j, lab in enumerate(str(m) for m in measures):
            mean, tau = red.mean_scores[r, j], red.tau[r, j]
            if args.output == "jsonl":
                write_record({"percent": float(percent), "seed": seed, "measure": lab, "mean": json_number(mean),
                              "tau": json_number(tau)})
            else:
                print(f"{percent}\t{'-' if seed is None else seed}\t{lab}\t{format_number(mean, args.places)}\t"
                      f"{format_number(tau, args.places)}")
    return 0
