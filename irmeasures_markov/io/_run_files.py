"""TREC run directories: run names from file names, the files of a directory, and loading them all.

* `run_name` / `run_names` — a run's name from its file name
  (``input.NAME.gz`` -> ``NAME``), refusing two files that give one name;
* [`list_run_files`][irmeasures_markov.io.list_run_files] — the run files of a directory (TREC's ``input.*``);
* [`load_run_dir`][irmeasures_markov.io.load_run_dir] — every run of a directory as
  [`RunColumns`][irmeasures_markov.io.RunColumns] (the run reader's
  grammar and errors, no Python object per document), optionally tokenised in
  worker processes, with the papers' "retrieved something for every topic"
  filter ([`complete_runs`][irmeasures_markov.io.complete_runs]) and a progress bar.
"""
from __future__ import annotations

import contextlib
import glob
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._progress import progress_bar
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._run_columns import RunColumns, columns_of_file, read_run_columns

__all__ = ["COMPRESSION_SUFFIXES", "RUN_FILE_SUFFIXES", "run_name", "run_names", "list_run_files", "complete_runs",
           "load_run_dir"]

Run = dict[str, dict[str, float]]

#: Suffixes :func:`run_name` drops, compression first, then the usual run-file extensions (any letter case).
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
RUN_FILE_SUFFIXES = (".run", ".txt", ".trec", ".res")


def _without_suffix(name: str, suffixes: Sequence[str]) -> str:
    low = name.lower()
    for suffix in suffixes:
        if low.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return name


def run_name(path: PathLike) -> str:
    """Run name from a file name: the file name without a compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``), then without a run-file suffix (``.run``, ``.txt``, ``.trec``, ``.res``), then without TREC's
    ``input.`` prefix: ``input.NAME.gz`` -> ``NAME``, ``bm25.run`` -> ``bm25``, ``runs/dph.res.bz2`` -> ``dph``.

    Parameters
    ----------
    path : str or os.PathLike
        A run file's path (only its last component is used).

    Returns
    -------
    str
        The run's name.
    """
    base = os.path.basename(os.fspath(path))
    base = _without_suffix(_without_suffix(base, COMPRESSION_SUFFIXES), RUN_FILE_SUFFIXES)
    if base.startswith("input.") and len(base) > len("input."):
        base = base[len("input."):]
    return base


def run_names(paths: Sequence[PathLike]) -> list[str]:
    """`run_name` of every path, refusing two paths that give one name.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        Run files.

    Returns
    -------
    list of str
        The names, in the order of ``paths``.

    Raises
    ------
    InputError
        Two paths give one name (``input.X`` and ``input.X.gz``); the message
        names both files.
    """
    names = [run_name(p) for p in paths]
    seen: dict[str, PathLike] = {}
    for name, path in zip(names, paths):
        if name in seen:
            raise InputError(f"{os.fspath(path)}: gives the run name {name!r}, as {os.fspath(seen[name])} does; "
                             "give runs distinct file names")
        seen[name] = path
    return names


def list_run_files(directory: PathLike, pattern: str | None = None) -> list[str]:
    """Run files in ``directory``: ``input.*`` (TREC's naming) if any exist, else every regular file.

    Hidden files are ignored; ``pattern`` (a glob) overrides the choice.

    Parameters
    ----------
    directory : str or os.PathLike
        The run directory.
    pattern : str, optional
        A glob, relative to ``directory``, selecting the files.

    Returns
    -------
    list of str
        The files' paths, sorted.

    Raises
    ------
    FileNotFoundError
        The directory does not exist or holds no run file (matching ``pattern``).
    InputError
        Two files give one run name (`run_names`).
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"run directory {directory!r} does not exist")
    if pattern is not None:
        files = glob.glob(os.path.join(directory, pattern))
    else:
        files = glob.glob(os.path.join(directory, "input.*"))
        if not files:
            files = [os.path.join(directory, f) for f in os.listdir(directory) if not f.startswith(".")]
    files = sorted(f for f in files if os.path.isfile(f))
    if not files:
        raise FileNotFoundError(f"no run files in {directory!r}" + (f" matching {pattern!r}" if pattern else ""))
    run_names(files)  # two files giving one name (input.X and input.X.gz, X.run and X.txt) are an error
    return files


def complete_runs(runs: Mapping[str, Mapping[str, Mapping[str, float]]],
                  topics: Iterable[str]) -> tuple[dict[str, Run], list[str]]:
    """Split runs into those that retrieved at least one document for every topic, and the others.

    This is the papers' run-selection rule (§5.1).

    Parameters
    ----------
    runs : mapping
        ``{name: {qid: {docid: score}}}``.
    topics : iterable of str
        The topics every kept run must answer (e.g. the qrels' topic ids).

    Returns
    -------
    tuple
        ``(kept, dropped_names)``: ``{name: run}`` of the complete runs, in the
        order of ``runs``, and the names of the others.
    """
    topics = [str(t) for t in topics]
    kept, dropped = {}, []
    for name, run in runs.items():
        # every query of a RunColumns holds a document: membership says it, without making the query's dict
        answered = run.__contains__ if isinstance(run, RunColumns) else (lambda t, run=run: len(run.get(t, ())) > 0)
        if all(map(answered, topics)):
            kept[name] = run
        else:
            dropped.append(name)
    return kept, dropped


#: measured (docs/benchmarks.md, bench_loading.py): on the 129 TREC-8 runs, 2 processes took 1.40-1.47x
#: the time of 1, since the whole-file reader became faster than shipping a file's columns from a worker
_DEFAULT_JOBS = 1


def load_run_dir(directory: PathLike, *, topics: Iterable[str] | None = None, pattern: str | None = None,
                 progress: bool | None = None, n_jobs: int | None = None) -> dict[str, RunColumns]:
    """Load every run of a TREC run directory: ``{run_name: run}``, each run a read-only ``{qid: {docid: score}}``.

    Parameters
    ----------
    directory : path
        A directory of run files (``input.NAME`` or ``input.NAME.gz``, TREC's
        naming; any file names otherwise).  Names come from `run_name`.
    topics : iterable of str, optional
        When given (e.g. the qrels' topic ids), keep only runs that retrieved at
        least one document for every topic (paper §5.1); dropped runs are named
        in a ``RuntimeWarning``.
    pattern : str, optional
        Glob selecting the files (default ``input.*``, else every file).
    progress : bool or None
        A progress bar on standard error: ``None`` (default) only when it is a
        terminal, ``True`` always, ``False`` never.
    n_jobs : int, optional
        Worker processes that read, decompress and tokenise files while this
        process checks their columns (default 1: everything in this
        process).  Measured on the 129 TREC-8 runs (2 CPUs), 2 processes took
        1.4-1.5x the time of 1: sending a file's columns back from a worker
        costs more than reading it here.

    Returns
    -------
    dict
        ``{run_name: run}`` in file-name order, each run a
        [`RunColumns`][irmeasures_markov.io.RunColumns]: a read-only
        mapping equal to what [`irmeasures_markov.io.read_trec_run`][irmeasures_markov.io.read_trec_run] gives
        for the file (same queries, documents and order; same errors), kept
        as arrays, which every measure of the package ranks and joins without
        a Python object per document.  ``run.to_dict()`` gives a dict.

    Raises
    ------
    FileNotFoundError
        No such directory, or no run file in it.
    InputError
        A malformed run file (naming file and line), or two files giving one
        run name.
    ValueError
        ``n_jobs`` is not a positive integer.
    """
    files = list_run_files(directory, pattern)
    n_jobs = _DEFAULT_JOBS if n_jobs is None else int(n_jobs)
    if n_jobs < 1:
        raise ValueError(f"`n_jobs` must be a positive integer, got {n_jobs!r}.")
    runs: dict[str, RunColumns] = {}
    with contextlib.ExitStack() as stack:
        bar = stack.enter_context(progress_bar(None, progress, total=len(files), unit="run",
                                               desc=f"runs {os.path.basename(os.fspath(directory).rstrip('/'))}"))
        read = map(read_run_columns, files)
        if n_jobs > 1 and len(files) >= 4:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx))
            # a worker answers None for a file the tokeniser refuses: read here, the error names its line
            read = (read_run_columns(f) if run is None else run
                    for f, run in zip(files, pool.map(columns_of_file, files, chunksize=1)))
        for f, run in zip(files, read):
            runs[run_name(f)] = run
            bar.update(1)
    if topics is not None:
        runs, dropped = complete_runs(runs, topics)
        if dropped:
            warnings.warn(f"{len(dropped)} run(s) did not retrieve a document for every topic and were "
                          f"dropped: {', '.join(dropped)}", RuntimeWarning, stacklevel=2)
    return runs

