"""Command line: ``irmeasures-markov QRELS RUN MEASURE... [-q] [-n] [-p N] [-o tsv|jsonl]``.

The same arguments as the ``ir_measures`` command, with our measures
registered.  Other commands (``irmeasures-markov COMMAND --help`` for each):

* ``demo`` — evaluate the sample qrels/run bundled in the package;
* ``measures [NAME]`` — list this package's measures, their parameters and defaults;
* ``ph-compare`` — compare two runs topic by topic under a P@H browsing model;
* ``compare`` — runs × measures with significance markers (baseline or all pairs);
* ``pool-reduction`` — mean scores and Kendall's τ as the pool shrinks, on local processes or Dask;
* ``robustness`` — Kendall's τ on topic samples and on shallower pools (Carterette 2011), on the same grids.

Exit status: 0 success, 2 usage or input error, 1 internal error (see
`irmeasures_markov.cli._errors`).  Library modules never import this package.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import partial

from irmeasures_markov import plugin  # noqa: F401  (importing the plug-in registers our measures with ir_measures)
from irmeasures_markov.cli._errors import cli_session, debugging, run_guarded
from irmeasures_markov.cli._evaluate import demo_main, evaluate_main
from irmeasures_markov.cli._measure_args import measures_main

__all__ = ["main"]


def _lazy(module: str, name: str) -> Callable[[list[str]], int]:
    """A command imported when it runs: the main command's start-up does not load compare, fit or the grids."""
    return lambda argv: getattr(importlib.import_module(f"irmeasures_markov.cli.{module}"), name)(argv)


#: name -> function(argv) -> exit status, for the commands other than evaluation
SUBCOMMANDS: dict[str, Callable[[list[str]], int]] = {
    "demo": demo_main, "measures": measures_main, "ph-compare": _lazy("_ph_compare", "ph_compare_main"),
    "compare": _lazy("_compare", "compare_main"), "pool-reduction": _lazy("_grid", "pool_reduction_main"),
    "robustness": _lazy("_grid", "robustness_main"), "fit": _lazy("_fit", "fit_main"),
}


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Never raises (``--help`` and usage errors included: their status is
    returned) and leaves warnings and standard output as it found them.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name, as a shell would split them.

    Returns
    -------
    int
        The exit status: 0 success, 2 usage or input error, 1 internal error.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = debugging(argv)
    if argv[:1] == ["--debug"] and argv[1:2] and argv[1] in SUBCOMMANDS:  # `--debug COMMAND ...`
        argv = argv[1:]
    command = SUBCOMMANDS.get(argv[0]) if argv else None
    args = argv[1:] if command is not None else argv
    with cli_session():
        return run_guarded(command or partial(evaluate_main, subcommands=sorted(SUBCOMMANDS)), args, debug=debug)

