"""``irmeasures-markov fit LOG [--format F] [--test LOG2 | --test-split X [--split query|sessions]] [--family F]
[-o fit.json]``.

Fits the user models of the chosen families (and the click models PBM, CM,
UBM, DBN, SDBN) to a click log by maximum likelihood
([`irmeasures_markov.calibration.fit`][irmeasures_markov.calibration.fit]), prints the comparison table of the
candidates (held-out log-likelihood, log-likelihood per session and click
perplexity when there is a test log, AIC/BIC, the fitted parameters with their
bootstrap intervals; click perplexity and CTR by rank) and,
with ``-o``, writes the fit file that measure strings read
(``MP(model='file:fit.json')``; docs/interaction-logs.md).
"""
from __future__ import annotations

import contextlib
import sys

from irmeasures_markov import calibration
from irmeasures_markov._util._progress import show_progress
from irmeasures_markov.calibration._logs import SPLITS, describe_split, split_log
from irmeasures_markov.calibration._registry import save_fit
from irmeasures_markov.calibration.readers import read_log, read_wscd
from irmeasures_markov.cli._errors import CliError, CliParser, reading
from irmeasures_markov.cli._inputs import load_qrels
from irmeasures_markov.io._text import display_name

__all__ = ["fit_main", "FAMILY_CHOICES", "guess_format"]

FAMILY_CHOICES = ("mp", "ph", "carterette", "tbg", "clickmodels")
_FORMATS = ("wscd", "jsonl", "tsv")

#: the measure string that reads each family's fit from a fit file
_MEASURE_OF = {"mp": "MP(model='{spec}')", "carterette": "M1(dist='{spec}')", "ph": "PH(browse='{spec}')",
               "tbg": "TBG(user='{spec}')"}

_EPILOG = """\
log formats (docs/interaction-logs.md): wscd (the Yandex WSCD 2012 sample:
one line per query, sessions 'QUERYID<TAB>DOC1,...,DOCn : CLICKED1 , ...'
separated by ';'), jsonl (one session per line) and tsv (one click per line,
with a header).  Without --format the name decides: .jsonl -> jsonl, .tsv ->
tsv, anything else -> wscd.  Files may be gzip/bzip2/xz compressed; - reads
standard input.

Without --test or --test-split, candidates are compared by AIC; with them, by
held-out log-likelihood.  --test-split holds out a share of the sessions, all
sessions of a query on the same side (--split query, the default: models that
learn per query and document are not scored on queries they were trained on),
or sessions drawn one by one (--split sessions); --seed seeds the draw.  Every
row shows the log-likelihood per session and the click perplexity (base 2,
averaged over ranks 1-10) of the same sessions, so the families, the click
models (--family clickmodels; all includes them) and the rank-CTR baseline
compare row by row.  The fit file written with -o is used as
MP(model='file:fit.json'), M1(dist='file:fit.json'), PH(browse='file:fit.json')
and TBG(user='file:fit.json'), for the families it holds (the command names
them); saved as NAME.json in the working directory (or in
$IRMEASURES_MARKOV_FITS) it is also 'fit:NAME'.

exit status: 0 success (something was fitted; the notes say what was not);
2 usage or input error, or nothing could be fitted; 1 internal error.
"""


def guess_format(path: str) -> str:
    """``jsonl`` or ``tsv`` by the file name's extension (a compression suffix aside), else ``wscd``."""
    name = path.lower()
    for ext in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(ext)
    if name.endswith((".jsonl", ".json")):
        return "jsonl"
    if name.endswith(".tsv"):
        return "tsv"
    return "wscd"


def _parser() -> CliParser:
    parser = CliParser("fit", epilog=_EPILOG,
                       description="Fit the user models of MP, P@H, M1-M4 and TBG to an interaction log and "
                                   "compare the candidates.")
    parser.add_argument("log", help="the training log (- reads standard input)")
    parser.add_argument("--format", choices=_FORMATS, help="format of the log files (default: from the name)")
    held = parser.add_mutually_exclusive_group()
    held.add_argument("--test", metavar="LOG2", help="held-out log (same format) for the comparison")
    held.add_argument("--test-split", "--test_split", dest="test_split", type=float, metavar="X",
                      help="hold out a random fraction X in (0, 1) of the sessions (seeded by --seed; see --split)")
    parser.add_argument("--split", choices=SPLITS, default=None,
                        help="how --test-split draws the held-out sessions: query (default: all sessions of a query "
                             "on one side) or sessions (one by one)")
    parser.add_argument("--family", default="all",
                        help="families to fit: mp, ph, carterette, tbg, clickmodels (PBM, CM, UBM, DBN, SDBN and "
                             "the rank-CTR baseline), a comma-separated list of them, or all (the default)")
    parser.add_argument("--qrels", help="qrels of the logged queries and documents (for relevance-dependent "
                                        "parameters: P@H's p_rel/q_rel, TBG's click probabilities)")
    parser.add_argument("--bootstrap", type=int, default=200,
                        help="bootstrap resamples of the sessions for the 95%% intervals (default 200; 0: none)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the split and the bootstrap (default 0)")
    parser.add_argument("-o", "--output", metavar="FIT.JSON", help="write the fit file here")
    parser.add_argument("--description",
                        help="what the log is, stored in the fit file (default: the log's own description: the "
                             "header of a JSONL log, else the format and file name)")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="show a progress bar on standard error (default: when it is a terminal)")
    progress.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return parser


def _families(spec: str) -> tuple:
    parts = [p.strip().lower() for p in spec.split(",") if p.strip()]
    if parts == ["all"]:
        return FAMILY_CHOICES
    bad = [p for p in parts if p not in FAMILY_CHOICES]
    if bad or not parts:
        raise CliError(f"--family: {', '.join(bad) or repr(spec)} is not a family; choose from "
                       f"{', '.join(FAMILY_CHOICES)}, a comma-separated list of them, or all")
    return tuple(dict.fromkeys(parts))


def _read(path: str, fmt: str | None):
    fmt = fmt or guess_format(path)
    name = display_name(path)
    with reading(name):
        log = read_wscd(path) if fmt == "wscd" else read_log(path, format=fmt)
    if not len(log):
        raise CliError(f"{name}: the log holds no session")
    dropped = int(log.meta.get("dropped_clicks", 0) or 0)
    if dropped:
        print(f"# {name}: {dropped} click{'s' if dropped != 1 else ''} on documents not in the ranking shown "
              "dropped", file=sys.stderr)
    return log


class _ProgressStream:
    """Standard error while fitting: each ``fitted FAMILY/MODEL ...`` line of ``fit(progress=True)`` advances a
    tqdm bar (showing the candidate); every other line is printed above the bar."""

    def __init__(self, bar, stream):
        self.bar, self.stream, self.pending = bar, stream, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.startswith("fitted "):
                self.bar.set_postfix_str(line[len("fitted "):].split(":")[0], refresh=False)
                self.bar.update(1)
            else:
                self.bar.write(line, file=self.stream)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def _progress_bar(enabled: bool):
    if not enabled:
        yield False
        return
    from tqdm import tqdm
    real = sys.stderr
    with tqdm(desc="fitting", unit=" candidates", file=real, dynamic_ncols=True) as bar, \
            contextlib.redirect_stderr(_ProgressStream(bar, real)) as stream:
        try:
            yield True
        finally:
            if stream.pending:  # a last line without its newline
                bar.write(stream.pending, file=real)


def fit_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    families = _families(args.family)
    if args.test_split is not None and not 0 < args.test_split < 1:
        raise CliError(f"--test-split must be in (0, 1), got {args.test_split}")
    if args.split is not None and args.test_split is None:
        raise CliError("--split chooses how --test-split draws the held-out sessions; give --test-split too")
    if args.bootstrap < 0:
        raise CliError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    if args.test == "-" and args.log == "-":
        raise CliError("standard input can be read once: give LOG or --test as a file")
    train = _read(args.log, args.format)
    if args.description:
        train.description = args.description
    test = _read(args.test, args.format) if args.test else None
    if args.test_split is not None:
        kind = args.split or "query"
        try:
            train, test = split_log(train, args.test_split, by=kind, seed=args.seed)
        except ValueError as e:
            raise CliError(f"--test-split: {args.log}: {e}") from None
        split = describe_split(kind, fraction=args.test_split, seed=args.seed)
    else:
        split = describe_split("file" if test is not None else "none", source=args.test)
    qrels = load_qrels(args.qrels) if args.qrels else None
    progress = show_progress(args.progress)
    print(f"# {len(train)} training sessions" + (f", {len(test)} held out" if test is not None else "")
          + f"; families: {', '.join(families)}", file=sys.stderr)
    with _progress_bar(progress) as shown:
        report = calibration.fit(train, test=test, families=families, qrels=qrels, bootstrap=args.bootstrap,
                                 seed=args.seed, progress=shown)
    if isinstance(getattr(report, "log", None), dict):
        report.log["split"] = split  # what the report prints and the fit file keeps
    fitted = [f for f in FAMILY_CHOICES if any(x.family == f for x in report.fits)]
    if not report.fits:
        why = "; ".join(map(str, getattr(report, "notes", []))) or "no candidate has a finite likelihood"
        raise CliError(f"{args.log}: nothing could be fitted ({', '.join(families)}): {why}")
    sys.stdout.write(str(report).rstrip("\n") + "\n")
    if args.output:
        with reading(args.output):
            save_fit(args.output, report, description=train.description, source=train.source)
        spec = f"file:{args.output}"
        uses = ", ".join(_MEASURE_OF[f].format(spec=spec) for f in fitted if f in _MEASURE_OF) or "a fit file"
        missing = [f for f in families if f not in fitted and f in _MEASURE_OF]
        print(f"# wrote {args.output}: use it as {uses}"
              + (f" (no {', '.join(missing)} fit in it)" if missing else ""), file=sys.stderr)
    return 0
