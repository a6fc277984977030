"""Calibration on the real Yandex WSCD 2012 sample (skips without ../shared/data/logs)."""
import numpy as np
import pytest

from irmeasures_markov.testing import shared_data_dir

DATA = shared_data_dir()
LOGS = DATA / "logs" / "yandex-wscd2012-sample" if DATA is not None else None
pytestmark = pytest.mark.skipif(LOGS is None or not LOGS.is_dir(),
                                reason="Yandex WSCD sample not found under the shared data directory")


@pytest.fixture(scope="module")
def report():
    from irmeasures_markov.calibration import fit
    from irmeasures_markov.calibration.readers import read_wscd
    train, test = read_wscd(LOGS / "train.txt"), read_wscd(LOGS / "test.txt")
    assert (len(train), len(test)) == (35064, 21413)
    return fit(train, test=test, bootstrap=0)


def test_every_family_has_a_finite_best(report):
    for fam in ("mp", "ph", "carterette"):
        b = report.best(fam)
        assert np.isfinite(b.heldout_loglik), fam


def test_backward_clicks_rule_out_forward_browsers(report):
    """Users click above an earlier click (the MP paper reports 21% backward moves on Yandex): P@H's
    forward browsers give such sessions probability 0, the random walk does not."""
    d = report.diagnostics["mp/GL_AD_ID"]["jumps_observed"]
    T = (len(d) + 1) // 2
    backward = sum(d[:T - 1]) / sum(d)
    assert 0.1 < backward < 0.5
    zero = {f.model: f for f in report.unfitted if f.family == "ph"}
    assert zero["SFBM"].loglik == -np.inf and zero["DFBM"].loglik == -np.inf
    assert not {"SFBM", "DFBM"} & {f.model for f in report.family("ph")}      # no estimate: not among the fits
    assert report.best("ph").model == "RWBM"


def test_fitted_models_beat_paper_defaults_held_out(report):
    mp = {f.model: f for f in report.family("mp")}
    assert mp["GL_AD_ID(decay)"].heldout_loglik > mp["GL_AD_ID"].heldout_loglik
    c = {f.model: f for f in report.family("carterette")}
    assert c["RBP"].heldout_loglik >= c["RBP(theta=0.8)"].heldout_loglik
    lo, hi = c["RBP"].intervals["theta"]
    assert 0 < lo < c["RBP"].params["theta"] < hi < 1
