"""Which runs to compare: run files from paths, directories and patterns, and the baseline among them."""
from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from typing import Any

from irmeasures_markov.io._run_columns import read_run_columns
from irmeasures_markov.io._run_files import list_run_files, run_name, run_names

__all__ = ["RunsSpec", "load_runs", "resolve_baseline", "resolve_run_paths"]

#: The runs to compare: ``{name: run dict or run file path}``, or run files, directories and glob patterns.
RunsSpec = Mapping[str, Any] | str | os.PathLike | Sequence[str | os.PathLike]

_GLOB_CHARS = set("*?[")


def resolve_run_paths(specs: str | os.PathLike | Sequence[str | os.PathLike]) -> dict[str, str]:
    """Run files from files, directories (their ``input.*`` files, else every file) and glob patterns, by run name.

    Parameters
    ----------
    specs : path or sequence of paths
        Files, directories and glob patterns.

    Returns
    -------
    dict of str to str
        ``{run name: file}`` (`run_names`), in the order of the specs given, the files of one directory or
        pattern sorted, each file once.

    Raises
    ------
    FileNotFoundError
        A spec that matches nothing (named in the message).
    InputError
        Two files that give one run name.
    """
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
    for spec in specs:
        spec = os.fspath(spec)
        if os.path.isdir(spec):
            found = list_run_files(spec)
        elif os.path.exists(spec):
            found = [spec]
        elif _GLOB_CHARS & set(spec):
            found = sorted(f for f in glob.glob(spec) if os.path.isfile(f))
            if not found:
                raise FileNotFoundError(f"{spec}: no run file matches this pattern")
        else:
            raise FileNotFoundError(f"{spec}: no such file or directory")
        out += [f for f in found if f not in out]
    return dict(zip(run_names(out), out))


def load_runs(runs: RunsSpec) -> tuple[dict[str, dict], dict[str, str]]:
    """``({name: run}, {name: path})`` from a mapping (values: run dicts or paths) or paths/directories/globs.

    Parameters
    ----------
    runs : RunsSpec
        ``{name: run dict or path}``, or run files, directories and glob patterns (names from the file
        names by `run_names`).

    Returns
    -------
    (dict of str to dict, dict of str to str)
        Every run read, and the file of each run read from one.
    """
    if isinstance(runs, Mapping):
        paths = {str(k): os.fspath(v) for k, v in runs.items() if isinstance(v, (str, os.PathLike))}
        return {str(k): (read_run_columns(paths[str(k)]) if str(k) in paths else v) for k, v in runs.items()}, paths
    paths = resolve_run_paths(runs)
    return {name: read_run_columns(p) for name, p in paths.items()}, paths


def resolve_baseline(baseline: str | os.PathLike[str] | None, runs: Sequence[str],
                     paths: Mapping[str, str] | None = None) -> str | None:
    """The name of the run ``baseline`` designates: a run name, a run's file path, or a file name.

    ``runs`` are the run names, ``paths`` the file of each run read from one
    (``{name: path}``).  ``baseline`` is, in this order: a run name; the path
    of one of the runs' files (compared as absolute paths); a file name
    without a directory whose `run_name` is
    a run name (``bm25.run`` for the run ``bm25``).  None gives None;
    anything else is a ``ValueError`` listing the runs.

    Parameters
    ----------
    baseline : str or os.PathLike or None
        the baseline as given by the user.
    runs : sequence of str
        the run names.
    paths : mapping of str to str, optional
        the file of each run read from one.

    Returns
    -------
    str or None
        the baseline's run name, or None when ``baseline`` is None.

    Raises
    ------
    ValueError
        If ``baseline`` designates none of the runs.
    """
    if baseline is None:
        return None
    names = [str(n) for n in runs]
    spec = os.fspath(baseline) if isinstance(baseline, os.PathLike) else str(baseline)
    if spec in names:
        return spec
    for name, path in (paths or {}).items():
        if os.path.abspath(spec) == os.path.abspath(path):
            return name
    if os.path.basename(spec) == spec and run_name(spec) in names:
        return run_name(spec)
    raise ValueError(f"`baseline` {spec!r} is not one of the runs ({', '.join(names[:10])}"
                     f"{', ...' if len(names) > 10 else ''}): give a run name or one of the run files")
