"""The ``irmeasures-markov`` console script: one BLAS thread for the evaluation command, then the command line.

numpy's import starts the thread pool of its BLAS (OpenBLAS, or MKL), which
the evaluation command (``irmeasures-markov QRELS RUN MEASURE...``) never
uses: on a machine with several cores, starting it costs tens of
milliseconds of a command that takes a few hundred.  The number of threads
can only be set before numpy is imported, and importing anything under
``irmeasures_markov`` imports numpy: hence this top-level module (like
``_irmeasures_markov_hook``), which imports nothing but :mod:`os` and
:mod:`sys` before handing over to :func:`irmeasures_markov.cli.main`.

For the evaluation command only, and only when the user has set none of
:data:`THREAD_VARIABLES`, :func:`main` sets ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS`` and ``OMP_NUM_THREADS`` to 1.  The other commands
(``fit``, ``compare``, ``pool-reduction``...) may do linear algebra on large
matrices and keep the library's defaults.  The command prints the same
values either way.  ``python -m irmeasures_markov.cli`` imports numpy before
any of this can run, so it keeps the defaults.

The garbage collector is paused while the package is imported, the modules'
objects are then frozen (:func:`gc.freeze`), and so are the command's
objects once it has run: collections never traverse objects that live to the
end of the process, the last one at exit included (about 25 ms of CPU for one
TREC-8 run).
"""
from __future__ import annotations

import gc
import os
import sys

__all__ = ["main", "COMMANDS", "THREAD_VARIABLES", "ONE_THREAD", "evaluation_command", "limit_threads"]

#: the commands other than evaluation: the keys of ``irmeasures_markov.cli.SUBCOMMANDS`` (a test checks that
#: they agree; that module cannot be imported here without importing numpy)
COMMANDS = frozenset({"demo", "measures", "ph-compare", "compare", "pool-reduction", "robustness", "fit"})
#: the variables that set the threads of numpy's BLAS (OpenBLAS reads the first three, MKL the last two):
#: when the user has set any of them, none is touched
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: what the evaluation command sets to 1 otherwise
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def evaluation_command(argv: list[str]) -> bool:
    """Whether ``argv`` (without the program name) runs the evaluation command, as ``cli.main`` decides it.

    Parameters
    ----------
    argv : list of str

    Returns
    -------
    bool
    """
    if argv[:1] == ["--debug"] and argv[1:2] and argv[1] in COMMANDS:   # `--debug COMMAND ...`
        argv = argv[1:]
    return not argv or argv[0] not in COMMANDS


def limit_threads(environ=os.environ) -> bool:
    """Set :data:`ONE_THREAD` to 1 in ``environ`` unless the user set one of :data:`THREAD_VARIABLES`.

    Parameters
    ----------
    environ : mapping
        ``os.environ``, or a dict in tests.

    Returns
    -------
    bool
        Whether anything was set.
    """
    if any(name in environ for name in THREAD_VARIABLES):
        return False
    for name in ONE_THREAD:
        environ[name] = "1"
    return True


def main() -> int:
    """The console script: :func:`limit_threads` for the evaluation command, then ``irmeasures_markov.cli.main``.

    Returns
    -------
    int
        The exit status.
    """
    if "numpy" not in sys.modules and evaluation_command(sys.argv[1:]):
        limit_threads()
    # the imports make tens of thousands of objects that live to the end and no garbage: collecting while
    # they run only traverses them (about 7 ms); once made, they are frozen, so later collections skip them
    collecting = gc.isenabled()
    gc.disable()
    try:
        from irmeasures_markov.cli import main as cli_main
    finally:
        if collecting:
            gc.enable()
    gc.freeze()
    status = cli_main()
    # the process ends here: without this, the collection at exit traverses every object of the run for nothing
    gc.freeze()
    return status


if __name__ == "__main__":  # pragma: no cover - `python _irmeasures_markov_cli.py QRELS RUN ...`
    sys.exit(main())
