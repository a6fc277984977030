"""One exit-code scheme, one message format and one output convention for the command line and every subcommand.

* exit 0: success;
* exit 2: a usage or input error (bad option, unreadable or malformed file,
  unknown measure, nothing to evaluate).  One line on stderr:
  ``irmeasures-markov: error: FILE:LINE: what is wrong`` (the file and line
  when there are any: [`InputError`][irmeasures_markov.io.InputError] messages
  start with them);
* exit 1: an internal error, i.e. a bug: ``irmeasures-markov: internal error: ...``
  and a request to report it.  The traceback is printed with ``--debug`` or
  when the environment variable ``IRMEASURES_MARKOV_DEBUG`` is set to a non-empty value.

Results are written as TSV or JSON lines, ids byte-exact, warnings in the command line's own format.
Everything that changes the process's streams or warning display is undone
when the command returns (`cli_session`), so calling
[`irmeasures_markov.cli.main`][irmeasures_markov.cli.main] from Python leaves no trace.
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import lzma
import math
import os
import sys
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterator
from typing import NoReturn

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.documents._lengths import UnknownLengthError

__all__ = ["PROG", "EXIT_OK", "EXIT_INTERNAL", "EXIT_USAGE", "DEBUG_ENV", "DEBUG_HELP", "EXIT_HELP", "CliError",
           "CliParser", "print_error", "reading", "run_guarded", "check_places", "cli_session", "json_number",
           "write_record", "warn"]

PROG = "irmeasures-markov"
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE = 0, 1, 2
DEBUG_ENV = "IRMEASURES_MARKOV_DEBUG"
#: the last paragraph of a subcommand's help
EXIT_HELP = "exit status: 0 success; 2 usage or input error; 1 internal error.\n"
ISSUES_HINT = ("this is a bug in irmeasures_markov; please report it with the command line that caused it "
               f"(run again with --debug or {DEBUG_ENV}=1 for the traceback)")

#: what the decompressors raise on truncated or corrupt data (gzip.BadGzipFile is an OSError)
DECOMPRESSION_ERRORS = (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile)


class CliError(Exception):
    """A usage or input error found by the command line itself: its message is printed, exit 2."""


DEBUG_HELP = f"print the traceback of an internal error (also: {DEBUG_ENV}=1)"


class CliParser(argparse.ArgumentParser):
    """The ArgumentParser of ``irmeasures-markov COMMAND`` (``command`` '' for the main command): its errors use
    the command line's one prefix (and exit 2, as argparse does), its description and epilog keep their line
    breaks unless another ``formatter_class`` is given.

    Every parser of the command line is one, so every command accepts ``--debug`` (the error text of an
    internal error recommends it): `run_guarded` reads it from the arguments, the parser only has to
    accept it.
    """

    def __init__(self, command: str = "", **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(prog=f"{PROG} {command}".rstrip(), **kwargs)
        self.add_argument("--debug", action="store_true", help=DEBUG_HELP)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print_error(message)
        raise SystemExit(EXIT_USAGE)


def print_error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


@contextlib.contextmanager
def reading(name: str) -> Iterator[None]:
    """Turn what opening or decompressing ``name`` may raise into a `CliError` naming it.

    Input errors (which name their file already) pass through unchanged.
    """
    try:
        yield
    except InputError:
        raise
    except DECOMPRESSION_ERRORS as exc:
        raise CliError(f"{name}: not a valid compressed file: the data is truncated or corrupt "
                       f"({type(exc).__name__}: {str(exc)[:80]})") from None
    except IsADirectoryError:
        raise CliError(f"{name}: is a directory, not a file") from None
    except FileNotFoundError:
        raise CliError(f"{name}: no such file") from None
    except OSError as exc:
        raise CliError(f"{name}: {exc.strerror or exc}") from None


def _user_error_message(exc: BaseException) -> str:
    """The one-line message of an exception that means bad usage or input, or '' for any other."""
    if isinstance(exc, (CliError, InputError, UnknownLengthError, ValueError)):  # ValueError: parameter validation
        return str(exc)
    if isinstance(exc, MemoryError):  # not a bug: the inputs or options ask for more than the machine has
        detail = f" ({exc})" if str(exc) else ""
        return (f"out of memory{detail}: the inputs or the options that set sizes (numbers of seeds, samples, "
                "users, resamples) ask for more memory than this machine has")
    if isinstance(exc, DECOMPRESSION_ERRORS):
        return f"compressed input is truncated or corrupt ({type(exc).__name__}: {str(exc)[:80]})"
    if isinstance(exc, OSError):
        if exc.filename is not None:
            return f"{exc.filename}: {exc.strerror or exc}"
        return str(exc)
    return ""


def debugging(argv: list[str]) -> bool:
    return "--debug" in argv or bool(os.environ.get(DEBUG_ENV))


def run_guarded(command: Callable[[list[str]], int], argv: list[str], debug: bool = False) -> int:
    """Run a subcommand, mapping every outcome onto the exit-code scheme; never lets a traceback out
    unless ``debug``."""
    try:
        return command(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2), already reported
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
    except BrokenPipeError:  # e.g. piped into `head`: the reader has what it wanted
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the boundary: every exception becomes a message and an exit code
        message = _user_error_message(exc)
        if debug:
            traceback.print_exc()
        if message:
            print_error(message)
            return EXIT_USAGE
        print(f"{PROG}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(f"{PROG}: {ISSUES_HINT}", file=sys.stderr)
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    # Python flushes stdout at exit; with the pipe closed that would print another BrokenPipeError
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a descriptor
        pass


def warn(message, category=None, filename=None, lineno=None, file=None, line=None) -> None:
    """A warning about the input (printed as ``irmeasures-markov: warning: ...``, never an error); during a command
    also the display of every Python warning (`cli_session`), hence the signature of ``warnings.showwarning``."""
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


@contextlib.contextmanager
def cli_session() -> Iterator[None]:
    """The command line's output conventions, for the duration of one command.

    * standard output writes ids decoded with ``surrogateescape`` back as the
      bytes they came from (a docid or qid that was not valid UTF-8 prints
      byte-exactly instead of raising UnicodeEncodeError);
    * warnings print as ``irmeasures-markov: warning: MESSAGE`` (no source
      line); ``warnings.catch_warnings`` restores the display function and the
      filters on exit, and ``warnings.formatwarning`` is never touched.
    """
    stdout = sys.stdout
    old_errors = getattr(stdout, "errors", None)
    changed = hasattr(stdout, "reconfigure") and old_errors not in (None, "surrogateescape")
    if changed:
        try:
            stdout.reconfigure(errors="surrogateescape")
        except (ValueError, OSError):  # a stream that cannot change its error handler
            changed = False
    try:
        with warnings.catch_warnings():
            warnings.showwarning = warn
            yield
    finally:
        if changed:
            try:
                stdout.flush()
                stdout.reconfigure(errors=old_errors)
            except (ValueError, OSError):  # closed (e.g. by a broken pipe)
                pass


def json_number(x) -> float | None:
    """``x`` as a JSON number; NaN and infinities (which JSON cannot hold) become ``null``."""
    x = float(x)
    return x if math.isfinite(x) else None


def check_places(places: int | None) -> None:
    """Refuse ``--places`` below -1 (None: not given)."""
    if places is not None and places < -1:
        raise CliError(f"--places (-p) must be -1 (every digit) or a number of decimals >= 0, got {places}")


def write_record(record: dict) -> None:
    """One JSON line; ``allow_nan=False`` guarantees that no NaN reaches the output."""
    import json  # here: only -o jsonl needs it, and the command's start-up does not

    print(json.dumps(record, allow_nan=False, ensure_ascii=False))
