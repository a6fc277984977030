"""The calibration package's public names where the docs show them, and one definition of each shared piece.

Cycles, private names across modules, module sizes and the layers are checked for the whole package by
tests/test_package_structure.py.
"""
from __future__ import annotations


def test_the_readers_public_names_stay_at_their_documented_path():
    from irmeasures_markov.calibration import _logs as logs
    from irmeasures_markov.calibration import readers
    for n in ("read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets",
              "make_session", "LOG_FORMATS", "TSV_COLUMNS"):
        assert n in readers.__all__ and hasattr(readers, n)
    assert readers.make_session is logs.make_session
    s = readers.make_session("q1", ["d1", "d2"], [2])
    assert s.clicks.tolist() == [2] and not s.clicks.flags.writeable
