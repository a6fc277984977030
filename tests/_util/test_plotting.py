"""Plots a user asks for, without matplotlib: every public plotting entry point says which extra to install
(issue 35, item 7).  matplotlib is hidden by ``sys.modules`` entries set to None, which make its import fail as
it fails where it is not installed."""
import sys

import numpy as np
import pytest
from comparison_inputs import collection

from irmeasures_markov import comparison
from irmeasures_markov._util._plotting import PLOT_EXTRA, pyplot
from irmeasures_markov.calibration import FamilyFit, FitReport
from irmeasures_markov.calibration._fit_report import plot_click_metrics  # what FitReport.plot_clicks draws with
from irmeasures_markov.inference import tukey_hsd
from irmeasures_markov.measures import plot_gain_curves


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)


def test_the_helper_names_the_extra(no_matplotlib):
    message = r"^FitReport.plot needs matplotlib: pip install 'irmeasures-markov\[plot\]'$"
    with pytest.raises(ImportError, match=message):
        pyplot("FitReport.plot")
    assert PLOT_EXTRA == "pip install 'irmeasures-markov[plot]'"


def _report() -> FitReport:
    fit = FamilyFit(family="ph", model="RWBM", params={"p": 0.6, "q": 0.2}, loglik=-10.0, n_params=2, n_events=5)
    return FitReport([fit], {"ph/RWBM": {"ctr_observed": [0.5, 0.2], "ctr_predicted": [0.45, 0.25]}})


def _comparison():
    qrels, runs = collection(n_topics=6, n_runs=3)
    return comparison.compare(qrels, runs, ["AP"], baseline="r0", progress=False)


PLOTS = {
    "FitReport.plot": lambda: _report().plot(),
    "plot_click_metrics": lambda: plot_click_metrics([("m", {"ctr_observed": [0.5], "ctr_predicted": [0.4]})]),
    "Comparison.plot": lambda: _comparison().plot(),
    "Comparison.plot_pairs": lambda: _comparison().plot_pairs(),
    "the Tukey plot": lambda: tukey_hsd(np.random.default_rng(0).random((8, 3)), "parametric").plot(),
    "plot_gain_curves": lambda: plot_gain_curves({"run A": ([0.0, 1.0], [0.0, 1.0])}),
}


@pytest.mark.parametrize("what", PLOTS)
def test_every_plot_says_which_extra_to_install(what, no_matplotlib):
    with pytest.raises(ImportError, match=rf"^{what} needs matplotlib: pip install 'irmeasures-markov\[plot\]'$"):
        PLOTS[what]()
