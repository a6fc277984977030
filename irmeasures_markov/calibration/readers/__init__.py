"""Readers and writers of interaction logs: every one builds a [`ClickLog`][irmeasures_markov.calibration.ClickLog].

* [`read_wscd`][irmeasures_markov.calibration.read_wscd] — the Yandex Relevance Prediction Challenge (WSCD 2012)
  format of the Yandex sample (PyClick's ``trainSample``);
* [`read_log`][irmeasures_markov.calibration.read_log] / [`write_log`][irmeasures_markov.calibration.write_log] — this
package's own JSONL and TSV
  formats (docs/interaction-logs.md);
* [`from_dataframe`][irmeasures_markov.calibration.from_dataframe] /
[`to_dataframe`][irmeasures_markov.calibration.to_dataframe] — pandas, one row per click,
  the TSV format's columns;
* [`from_ir_datasets`][irmeasures_markov.calibration.from_ir_datasets] — ``qlogs_iter()`` records of ir_datasets
  (TripClick, AOL).

Every reader checks each session the same way ([`make_session`][irmeasures_markov.calibration.readers.make_session]): a
non-empty ranking, clicks on ranks 1..n of it (or on documents in it), one
timestamp and at most one dwell time per click, timestamps non-decreasing.
A malformed session is an [`InputError`][irmeasures_markov.io.InputError] naming
the file and line (the DataFrame row, the ir_datasets record).  Files may be
gzip, bzip2 or xz compressed (recognised by their first bytes) and ``-`` is
standard input, as for every reader of the package.
"""
from irmeasures_markov.calibration._logs import make_session
from irmeasures_markov.calibration.readers._formats import (
    LOG_FORMATS,
    TSV_COLUMNS,
    from_dataframe,
    read_log,
    to_dataframe,
    write_log,
)
from irmeasures_markov.calibration.readers._qlogs import from_ir_datasets
from irmeasures_markov.calibration.readers._wscd import read_wscd

__all__ = ["read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets",
           "make_session", "LOG_FORMATS", "TSV_COLUMNS"]
