"""Documents: their lengths in words (for time-based measures) and the vectorised docid table that looks them up.

* `_lengths`: [`DocumentLengths`][irmeasures_markov.documents.DocumentLengths],
[`LengthTable`][irmeasures_markov.documents.LengthTable], length sources;
* `_length_files`: lengths and duplicate-group files, and ir_datasets counts;
* `_docid_table`: [`DocidTable`][irmeasures_markov.documents.DocidTable], exact lookups of many docids at once.
"""
from irmeasures_markov.documents._docid_table import DocidTable
from irmeasures_markov.documents._length_files import (
           lengths_from_ir_datasets,
           read_duplicates,
           read_lengths,
           write_lengths,
)
from irmeasures_markov.documents._lengths import DocumentLengths, LengthTable, UnknownLengthError

__all__ = ["DocumentLengths", "LengthTable", "UnknownLengthError", "read_lengths", "read_duplicates", "write_lengths",
           "lengths_from_ir_datasets", "DocidTable"]
