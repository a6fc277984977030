"""Reading qrels, runs and parameter files, with errors that name the file and line.

Everything that parses text lives in :mod:`irmeasures_markov.readers`; this
module is its public face, plus the normalisation of in-memory inputs.
Measures only ever see arrays.

Files follow one grammar (see :mod:`irmeasures_markov.readers` and
docs/file-formats.md): plain, gzip, bzip2 or xz (by content), ``-`` for
standard input, a UTF-8 byte-order mark ignored, lines ending at LF (CRLF
too), fields separated by ASCII whitespace, ids compared byte for byte.
"""
from __future__ import annotations

from .errors import InputError
from .inputs import to_qrels_dict, to_run_dict
from .readers.text import open_text
from .readers.trec import read_rates, read_trec_qrels, read_trec_run

__all__ = [
    "InputError",
    "open_text",
    "read_trec_run",
    "read_trec_qrels",
    "read_rates",
    "to_qrels_dict",
    "to_run_dict",
]
