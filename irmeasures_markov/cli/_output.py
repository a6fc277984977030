"""Writing results: TSV or JSON lines, ids byte-exact, warnings in the command line's own format.

Everything that changes the process's streams or warning display is undone
when the command returns (`cli_session`), so calling
[`irmeasures_markov.cli.main`][irmeasures_markov.cli.main] from Python leaves no trace.
"""
from __future__ import annotations

import contextlib
import math
import re
import sys
import warnings
from collections.abc import Iterator

from irmeasures_markov.cli._errors import PROG, CliError

__all__ = ["check_places", "cli_session", "json_number", "natural_key", "write_record", "warn"]


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


def warn(message: str) -> None:
    """A warning about the input (printed as ``irmeasures-markov: warning: ...``, never an error)."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


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
            warnings.showwarning = _show_warning
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


_NUMBER_RUNS = re.compile(r"(\d+)")


def natural_key(qid: str):
    """Sort key putting ids in natural order: numbers inside ids compare by value (``2`` before ``10``,
    ``q2`` before ``q10``), the rest by code point; equal-valued spellings (``01``, ``1``) by code point."""
    parts = _NUMBER_RUNS.split(qid)
    # every chunk becomes (kind, number, text) so that any two keys compare without type errors
    key = tuple((0, int(p), "") if i % 2 else (1, 0, p) for i, p in enumerate(parts) if p or i == 0)
    return key, qid


def write_record(record: dict) -> None:
    """One JSON line; ``allow_nan=False`` guarantees that no NaN reaches the output."""
    import json  # here: only -o jsonl needs it, and the command's start-up does not

    print(json.dumps(record, allow_nan=False, ensure_ascii=False))
