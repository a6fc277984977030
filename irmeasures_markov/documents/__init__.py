"""Documents: their lengths in words (for time-based measures) and the vectorised docid table that looks them up.

* :mod:`~irmeasures_markov.documents.lengths`: :class:`DocumentLengths`, :class:`LengthTable`, length sources;
* :mod:`~irmeasures_markov.documents.length_files`: lengths and duplicate-group files, and ir_datasets counts;
* :mod:`~irmeasures_markov.documents.docid_table`: :class:`DocidTable`, exact lookups of many docids at once.
"""
from .docid_table import DocidTable
from .length_files import lengths_from_ir_datasets, read_duplicates, read_lengths, write_lengths
from .lengths import (
    HOW_TO_GIVE_LENGTHS,
    DocumentLengths,
    LengthTable,
    UnknownLengthError,
    length_source,
    load_length_source,
)

__all__ = ["DocumentLengths", "LengthTable", "UnknownLengthError", "HOW_TO_GIVE_LENGTHS", "length_source",
           "load_length_source", "read_lengths", "read_duplicates", "write_lengths", "lengths_from_ir_datasets",
           "DocidTable"]
