"""Click perplexity of the package's user models on the Yandex WSCD 2012 sample (skips without the data).

The issue's figures (ranks 1-10, held-out test.txt, models fitted on train.txt): Carterette RBP theta=0.8
1.4853, empirical 1.4860, P@H RWBM 1.5061."""
import numpy as np
import pytest

from irmeasures_markov.testing import shared_data_dir

DATA = shared_data_dir()
LOGS = DATA / "logs" / "yandex-wscd2012-sample" if DATA is not None else None
pytestmark = pytest.mark.skipif(LOGS is None or not LOGS.is_dir(),
                                reason="Yandex WSCD sample not found under the shared data directory")


@pytest.fixture(scope="module")
def fitted():
    from irmeasures_markov.calibration import fit
    from irmeasures_markov.calibration.readers import read_wscd
    train, test = read_wscd(LOGS / "train.txt"), read_wscd(LOGS / "test.txt")
    report = fit(train, test=test, families=("ph", "carterette"), bootstrap=0, progress=False)
    return {(f.family, f.model): f for f in report.fits}, test


@pytest.mark.parametrize("family,model,expected", [("carterette", "RBP(theta=0.8)", 1.4853),
                                                   ("carterette", "empirical", 1.4860), ("ph", "RWBM", 1.5061)])
def test_heldout_click_perplexity_matches_the_issues_figures(fitted, family, model, expected):
    from irmeasures_markov.calibration import click_metrics
    fits, test = fitted
    m = click_metrics(fits[family, model], test)
    assert m.n_sessions == 21413
    assert m.perplexity == pytest.approx(expected, abs=6e-4)


def test_click_vector_likelihood_against_the_fits_own(fitted):
    """Carterette's own likelihood is of the clicked set: the same number; P@H's is of the ordered click
    sequence, a finer event, so the click vector's likelihood is at least as high."""
    from irmeasures_markov.calibration import click_metrics
    fits, test = fitted
    for (family, model), f in fits.items():
        ll = click_metrics(f, test).loglik
        if family == "carterette":
            assert ll == pytest.approx(f.heldout_loglik, rel=1e-9), model
        else:
            assert ll >= f.heldout_loglik - 1e-6 and np.isfinite(ll), model
