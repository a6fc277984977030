"""integration/reproduce/compare_revisions.py: its verdict is bit for bit (no data needed)."""
import numpy as np
from compare_revisions import compare, measure_strings


def arrays(values):
    return {"MP": np.array(values, dtype=np.float64), "__runs__": np.array(["r1"]), "__qids__": np.array(["1", "2"]),
            "__extra__": np.array([], dtype=str)}


def test_identical_values_pass_and_nan_matches_nan(capsys):
    assert compare(arrays([[0.5, np.nan]]), arrays([[0.5, np.nan]])) == 0
    assert "IDENTICAL" in capsys.readouterr().out


def test_one_ulp_and_a_signed_zero_are_differences(capsys):
    assert compare(arrays([[0.5, 0.25]]), arrays([[np.nextafter(0.5, 1.0), 0.25]])) == 1
    assert "1 of 2 values differ" in capsys.readouterr().out
    assert compare(arrays([[0.0, 0.25]]), arrays([[-0.0, 0.25]])) == 1
    assert compare(arrays([[0.5, np.nan]]), arrays([[0.5, 0.0]])) == 1
    assert "present in one revision only" in capsys.readouterr().out


def test_every_family_is_compared(tmp_path):
    names = measure_strings(tmp_path)
    for family in ("MP(", "MPcont(", "PH(", "PatH(", "TBG(", "M1(", "M2(", "M3(", "M4(", "CDG", "RRG", "RBTR", "ARR",
                   "RRR", "RBAP", "DAG", "RAP", "EPR", "RRAP", "AP"):
        assert any(n.startswith(family) for n in names), family
    assert len(names) > 150
