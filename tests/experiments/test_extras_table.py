"""The families' extras (``_se`` of ``ties='expected'``, ``_lo``/``_hi`` of ``unjudged='range'``) are columns after
the measures'; the table pattern docs/ties-and-holes.md shows for them (``labels=``, rows lined up by label) keeps
them (issue 35, item 7)."""
import pandas as pd
import pytest

from irmeasures_markov import experiments

QRELS = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 0, "b": 1}}
RUNS = {"run": {"q1": {"a": 2.0, "b": 2.0, "c": 1.0, "x": 0.5}, "q2": {"a": 1.0, "b": 1.0, "y": 3.0}}}


def test_extras_are_columns_after_the_measures_and_line_up_by_label():
    measures = ["AP", "MP"]
    expected = experiments.evaluate(measures, QRELS, RUNS, ties="expected", labels=measures)
    ranged = experiments.evaluate(["MP"], QRELS, RUNS, unjudged="range", labels=["MP"])
    assert expected.labels == ["AP", "MP", "MP_se"] and ranged.labels == ["MP", "MP_lo", "MP_hi"]
    assert expected.means_array().shape == (1, 3)  # longer than `measures`: index=measures cannot take it
    table = pd.concat({"expected": expected.means().loc["run"], "range": ranged.means().loc["run"]}, axis=1)
    assert list(table.index) == ["AP", "MP", "MP_se", "MP_lo", "MP_hi"]
    assert table.loc["MP_se", "expected"] >= 0 and table.loc["MP_lo", "range"] <= table.loc["MP_hi", "range"]
    assert table.loc["MP", "range"] == pytest.approx(table.loc["MP_hi", "range"] - table.loc["MP_lo", "range"])
    assert table.loc["MP_se", "range"] != table.loc["MP_se", "range"]  # NaN: that setting has no such extra
