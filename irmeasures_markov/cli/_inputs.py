"""The command line's inputs: qrels (a file or an ir_datasets id) and runs (a file, or ``-`` for stdin).

Everything that can go wrong while reading becomes a
`CliError` or an
[`InputError`][irmeasures_markov.io.InputError] naming the file (or the
ir_datasets id), so the boundary prints one line instead of a traceback.
"""
from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov.cli._errors import CliError, reading, warn
from irmeasures_markov.io import RunColumns, read_run_columns
from irmeasures_markov.io._normalise import MEAN_OVER_QRELS, OverlapWarning, check_qrels, overlap_problem
from irmeasures_markov.io._pytrec import check_gdeval_ids, gdeval_measures
from irmeasures_markov.io._text import STDIN, display_name
from irmeasures_markov.io._trec import qrels_of_file

__all__ = ["sample_path", "load_qrels", "run_files", "load_run", "load_runs",
           "check_overlap", "hinting", "natural_key"]

def sample_path(name: str) -> str:
    """Path of a file bundled in ``irmeasures_markov/data`` (sample.qrels, sample.run, sample_rates.tsv)."""
    from importlib import resources  # here: the main command does not need it at start-up

    return str(resources.files("irmeasures_markov") / "data" / name)


#: (what a reader's message says, what it likely means) for each file kind: a header line, or the other kind
_HINTS = {
    "qrels": ((re.compile(r":1: relevance grade .* is not an integer$"),
               "a header line? qrels lines are 'qid iter docid grade', with no header"),
              (re.compile(r"expected 4 fields .*, found 6 fields"), "a run? give the qrels first, then the run")),
    "run": ((re.compile(r":1: score .* is not a number$"),
             "a header line? run lines are 'qid Q0 docid rank score tag', with no header"),
            (re.compile(r"expected 6 fields .*, found 4 fields"), "a qrels file? give the qrels first, then the run")),
}


@contextlib.contextmanager
def hinting(kind: str) -> Iterator[None]:
    """A reader's InputError with what it likely means added: a header line, or qrels and run swapped."""
    try:
        yield
    except InputError as exc:
        hint = next((h for pattern, h in _HINTS[kind] if pattern.search(str(exc))), None)
        if hint is None:
            raise
        raise InputError(f"{exc} ({hint})") from None


def load_qrels(spec: str) -> dict[str, dict[str, int]]:
    """Qrels from a file (plain or compressed; ``-``: stdin) or, when no such file exists, an ir_datasets id."""
    if spec == STDIN or os.path.exists(spec):
        with reading(display_name(spec)), hinting("qrels"):
            qrels = qrels_of_file(spec)   # byte-exact ids, printed back as read
    else:
        # the file reader checks grades as it reads; ir_datasets' grades get the same in-memory rule
        qrels = check_qrels(_qrels_from_ir_datasets(spec), spec)
    if not any(qrels.values()):
        raise CliError(f"{display_name(spec)}: the qrels hold no judgments: nothing can be evaluated")
    return qrels


def _qrels_from_ir_datasets(spec: str) -> dict[str, dict[str, int]]:
    try:
        import ir_datasets
    except ImportError:
        raise CliError(f"{spec}: no such file (and ir_datasets, which would read it as a dataset id, "
                       f"is not installed)") from None
    try:
        dataset = ir_datasets.load(spec)
    except KeyError:
        raise CliError(f"{spec}: no such file, and not an ir_datasets id") from None
    if not dataset.has_qrels():
        raise CliError(f"{spec}: the ir_datasets dataset has no qrels")
    out: dict[str, dict[str, int]] = {}
    try:
        for q in dataset.qrels_iter():
            out.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    except Exception as exc:  # downloads fail in many ways (offline, moved, checksum): name the dataset
        # imported here, on this error path only: the command line's start-up does not load the datasets module
        from irmeasures_markov.io._downloads import ir_datasets_unavailable
        raise CliError(ir_datasets_unavailable(spec, "qrels", exc, dataset)) from None
    return out


def run_files(specs: list[str]) -> dict[str, str]:
    """``{run name: file}`` of run files, directories (their input.* files, else every file) and quoted glob
    patterns; an error names a spec that matches nothing, or two files that give one run name."""
    from irmeasures_markov.comparison._runs import resolve_run_paths  # here: the main command does not need it

    try:
        return resolve_run_paths(specs)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None


def load_run(spec: str) -> RunColumns:
    """A run from a file (plain or compressed) or ``-`` (standard input), kept as arrays."""
    with reading(display_name(spec)), hinting("run"):
        return read_run_columns(spec)


def load_runs(qrels, qrels_spec: str, paths: dict[str, str], measures=(), progress: bool = False
              ) -> dict[str, RunColumns]:
    """``{name: run}`` of ``{name: path}``: each file read once and checked against the qrels (`check_overlap`)
    and the measures (gdeval's numeric query ids), so that every evaluation uses this copy."""
    gdeval, runs = gdeval_measures(measures), {}
    with progress_bar(None, progress, total=len(paths), desc="reading runs", unit="run") as bar:
        for name, path in paths.items():
            runs[name] = load_run(path)
            check_overlap(qrels, runs[name], qrels_spec, path)
            check_gdeval_ids(gdeval, qrels, runs[name])
            bar.update(1)
    return runs


def check_overlap(qrels, run, qrels_name: str, run_name: str, mean_over: str = MEAN_OVER_QRELS) -> None:
    """Warn once, naming the files, when the run cannot score anything or answers less than half of the qrels'
    queries (`overlap_problem`, the rule of every front end); the
    library's own warning of the same is then not repeated."""
    problem = overlap_problem(qrels, run, mean_over)
    if problem is not None:
        warn(f"{display_name(run_name)} and {display_name(qrels_name)}: {problem}")
        warnings.simplefilter("ignore", OverlapWarning)  # the command line restores the filters on exit


_NUMBER_RUNS = re.compile(r"(\d+)")


def natural_key(qid: str):
    """Sort key putting ids in natural order: numbers inside ids compare by value (``2`` before ``10``,
    ``q2`` before ``q10``), the rest by code point; equal-valued spellings (``01``, ``1``) by code point."""
    parts = _NUMBER_RUNS.split(qid)
    # every chunk becomes (kind, number, text) so that any two keys compare without type errors
    key = tuple((0, int(p), "") if i % 2 else (1, 0, p) for i, p in enumerate(parts) if p or i == 0)
    return key, qid
