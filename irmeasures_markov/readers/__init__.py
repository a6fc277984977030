"""File readers: one grammar for every text file the package reads.

* :mod:`.text` opens files (compression by magic number, ``-`` for standard
  input, the UTF-8 byte-order mark) and splits lines into fields;
* :mod:`.trec` reads runs, qrels and MPcont rate files line by line;
* :mod:`.fast_run` reads whole run files at once with numpy, giving exactly
  what the line reader gives.

The grammar (the one trec_eval applies to runs and qrels):

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
  distinct ids;
* numbers (scores, grades, ranks, lengths) are ASCII, read as Python's
  ``float()`` / ``int()`` read them; grades must fit in a signed 32-bit integer.

Malformed input raises :class:`~irmeasures_markov.errors.InputError` naming
the file and line, quoting at most a short prefix of the offending text.
:mod:`irmeasures_markov.io` is the public face of these modules.
"""
