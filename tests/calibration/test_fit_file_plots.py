"""A fit file keeps the curves of each family's best fit, so a report read back plots what the fitted report
plotted (issue 35, item 7: ``load_fit(...).to_report().plot("ph")`` used to say "nothing to plot")."""
import json

import pytest

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration import FamilyFit, FitReport, load_fit, save_fit


@pytest.fixture(scope="module")
def report():
    """Two P@H candidates as ``fit`` reports them (a fit of 150 simulated RWBM sessions), with their curves."""
    def candidate(model, params, n_params, loglik):
        return FamilyFit(family="ph", model=model, params={"browse": "RWBM", **params}, loglik=loglik,
                         n_params=n_params, n_sessions=150, n_events=379)
    observed = [0.427, 0.327, 0.207, 0.147, 0.093, 0.073, 0.06, 0.033, 0.02, 0.007]
    fits = [candidate("RWBM", {"p": 0.590, "q": 0.236, "gamma": 0.397}, 3, -527.6),
            candidate("RWBM(p=0.5,q=0.25)", {"p": 0.5, "q": 0.25, "gamma": 0.41}, 1, -540.2)]
    diagnostics = {"ph/RWBM": {"ctr_observed": observed,
                               "ctr_predicted": [0.441, 0.287, 0.2, 0.141, 0.1, 0.071, 0.05, 0.035, 0.025, 0.016]},
                   "ph/RWBM(p=0.5,q=0.25)": {
                       "ctr_observed": observed,
                       "ctr_predicted": [0.41, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01]}}
    return FitReport(fits, diagnostics, log={"description": "simulated P@H RWBM", "n_sessions": 150})


def test_a_report_read_from_a_file_plots_its_best_fits(report, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    save_fit(tmp_path / "r.json", report)
    best = f"ph/{report.best('ph').model}"
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["diagnostics"]
    assert best == "ph/RWBM" and list(written) == [best]  # the best fit's curves only
    back = load_fit(tmp_path / "r.json").to_report()
    assert back.diagnostics == {best: report.diagnostics[best]}
    drawn, fitted = back.plot("ph"), report.plot("ph")
    assert [[line.get_ydata().tolist() for line in ax.lines] for ax in drawn.axes] == \
           [[line.get_ydata().tolist() for line in ax.lines] for ax in fitted.axes]


def test_files_without_curves_still_read_and_say_why_nothing_is_drawn(report, tmp_path):
    save_fit(tmp_path / "r.json", report)
    content = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    del content["diagnostics"]  # a file written before fit files kept them
    (tmp_path / "old.json").write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(ValueError, match="nothing to plot"):
        load_fit(tmp_path / "old.json").to_report().plot("ph")
    content["diagnostics"] = []
    (tmp_path / "bad.json").write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: field 'diagnostics' must be an object"):
        load_fit(tmp_path / "bad.json")
    assert FitReport([]).diagnostics == {}
