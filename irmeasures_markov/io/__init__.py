"""Reading qrels, runs and parameter files, with errors that name the file and line.

The public face of the input layer: everything that parses text, normalises
in-memory qrels and runs, converts them for pytrec_eval or loads test
collections lives in this package.  Measures only ever see arrays.

* `text` opens files (compression by magic number, ``-`` for standard
  input, the UTF-8 byte-order mark) and splits lines into fields;
* `tokens` tokenises a whole run or qrels file at once, `trec`
  reads them line by line (the grammar, whenever a file breaks a rule: same
  result either way) and reads qrels and MPcont rate files;
  `run_columns` reads runs into [`RunColumns`][irmeasures_markov.io.RunColumns] (no Python object per
  document, the form every path of the package that reads run files uses) or,
  with [`read_trec_run`][irmeasures_markov.io.read_trec_run], into dicts;
* `normalise` turns in-memory qrels and runs (dicts, DataFrames,
  ``ir_measures`` namedtuples) into checked dicts; `pytrec` hands them
  to pytrec_eval safely;
* `datasets` (with `downloads`) and
  `run_files` load the papers' test collections
  and TREC run directories; `content` and `atomic` identify files
  by their bytes and write cache files atomically.

The grammar (the one trec_eval applies to runs and qrels; docs/file-formats.md):

* a file is UTF-8 text, plain or compressed with gzip, bzip2 or xz (recognised
  by their first bytes, whatever the file is called); ``-`` is standard input;
* a UTF-8 byte-order mark at the very start is ignored;
* lines end at LF; a line's fields are separated by runs of ASCII whitespace
  (space, tab, CR, VT, FF), so CRLF files read like LF files, and a CR inside
  a line separates fields as it does for trec_eval: it never ends a line, so
  a record wrapped over two lines is an error, never a record;
* lines holding only whitespace are skipped;
* ids are compared byte for byte: bytes that are not valid UTF-8 are decoded
  with ``surrogateescape`` (they come back unchanged with
  ``.encode('utf-8', 'surrogateescape')``), so distinct byte strings stay
  distinct ids; the readers that return plain dicts for other tools
  ([`read_trec_run`][irmeasures_markov.io.read_trec_run],
  [`read_trec_qrels`][irmeasures_markov.io.read_trec_qrels], `load_qrels`)
  refuse such ids instead, since pytrec_eval kills the process on them;
* numbers (scores, grades, ranks, lengths) are ASCII, read as Python's
  ``float()`` / ``int()`` read them; grades must fit in a signed 32-bit integer.

Malformed input raises [`InputError`][irmeasures_markov.io.InputError] naming the file and line, quoting
at most a short prefix of the offending text; an in-memory id or grade of the
wrong type raises [`InputTypeError`][irmeasures_markov.io.InputTypeError] (an ``InputError`` and a ``TypeError``).
"""
from __future__ import annotations

from irmeasures_markov._util._errors import InputError, InputTypeError
from irmeasures_markov.io._datasets import COLLECTIONS, collection, downsample_qrels, load_qrels, load_topics
from irmeasures_markov.io._normalise import to_qrels_dict, to_run_dict
from irmeasures_markov.io._run_columns import RunColumns, read_run_columns, read_trec_run
from irmeasures_markov.io._run_files import complete_runs, list_run_files, load_run_dir
from irmeasures_markov.io._text import open_text
from irmeasures_markov.io._trec import read_rates, read_trec_qrels

__all__ = [
    "InputError",
    "InputTypeError",
    "open_text",
    "read_trec_run",
    "read_run_columns",
    "RunColumns",
    "read_trec_qrels",
    "read_rates",
    "to_qrels_dict",
    "to_run_dict",
]


__all__ += ["load_run_dir", "list_run_files", "complete_runs", "collection", "COLLECTIONS", "downsample_qrels",
            "load_qrels", "load_topics"]
