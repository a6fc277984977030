"""Click perplexity and log-likelihood (calibration/_click_metrics.py) on cases worked by hand."""
import math

import numpy as np
import pytest

from irmeasures_markov.calibration._click_metrics import click_metrics, click_vector
from irmeasures_markov.calibration._logs import make_session


class Constant:
    """Every rank clicked with probability p, independently."""

    def __init__(self, p):
        self.p = p

    def click_probabilities(self, session):
        return np.full(session.n_shown, self.p)

    def session_loglik(self, session):
        c = click_vector(session)
        return float(np.sum(np.where(c == 1, math.log(self.p), math.log(1 - self.p))))


def _sessions():
    return [make_session("q", ["a", "b", "c"], [1]), make_session("q", ["a", "b", "c"], [2, 2]),
            make_session("q", ["a", "b"], [])]


def test_a_coin_has_perplexity_two():
    m = click_metrics(Constant(0.5), _sessions(), depth=3)
    assert m.perplexity == pytest.approx(2.0) and np.allclose(m.perplexity_per_rank, 2.0)
    assert m.loglik == pytest.approx(8 * math.log(0.5))           # 3 + 3 + 2 ranks shown
    assert m.loglik_per_session == pytest.approx(8 * math.log(0.5) / 3)


def test_per_rank_perplexity_and_ctr_by_hand():
    m = click_metrics(Constant(0.25), _sessions(), depth=4)
    # rank 1: clicked once in 3 sessions; rank 3: shown twice, never clicked; rank 4: never shown
    assert m.perplexity_per_rank[0] == pytest.approx(2 ** (-(math.log2(0.25) + 2 * math.log2(0.75)) / 3))
    assert m.perplexity_per_rank[2] == pytest.approx(2 ** (-math.log2(0.75)))
    assert math.isnan(m.perplexity_per_rank[3])
    assert m.perplexity == pytest.approx(np.nanmean(m.perplexity_per_rank))
    assert np.allclose(m.ctr_observed[:3], [1 / 3, 1 / 3, 0.0]) and np.allclose(m.ctr_predicted[:3], 0.25)
    assert m.as_dict()["depth"] == 4


def test_repeated_clicks_count_once():
    assert click_vector(make_session("q", ["a", "b", "c"], [2, 2, 3])).tolist() == [0, 1, 1]
