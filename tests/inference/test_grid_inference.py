"""Discriminative power and per-collection Bayesian fits through the grid: same bits as the direct calls."""
import warnings

import numpy as np
import pytest

from irmeasures_markov.inference import all_pairs, discriminative_power, score_matrix
from irmeasures_markov.inference._gibbs import gibbs_linear_model
from irmeasures_markov.inference._grid import discriminative_power_grid, fit_per_collection, matrix_hash

distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")


def _scores(seed, n_topics=25, n_systems=7):
    rng = np.random.default_rng(seed)
    return np.clip(0.3 + rng.normal(0, 0.1, (n_topics, 1)) + np.linspace(0, 0.15, n_systems)[None, :]
                   + rng.normal(0, 0.1, (n_topics, n_systems)), 0, 1)


def test_discriminative_power_grid_equals_all_pairs(client, tmp_path):
    mats = {"A": _scores(1), "B": _scores(2), "noise": np.random.default_rng(3).random((25, 7))}
    kw = dict(n_resamples=500, seed=4, progress=False)
    direct = {lab: {t: float(np.mean(all_pairs(score_matrix(m), t, correction=None, n_resamples=500,
                                                seed=4).adjusted_pvalue < 0.05))
                    for t in ("t", "randomization", "bootstrap")} for lab, m in mats.items()}
    local = discriminative_power(mats, **kw)
    for lab in mats:
        assert local.loc[lab].to_dict() == direct[lab]
    on_dask, summary = discriminative_power_grid(mats, client=client, store=tmp_path / "s", **kw)
    assert on_dask.equals(local) and summary.done == 9
    # another alpha reuses every stored p-value
    t10, again = discriminative_power_grid(mats, alpha=0.1, store=tmp_path / "s", **kw)
    assert again.cached == 9 and again.done == 0
    assert t10.loc["A", "t"] == float(np.mean(all_pairs(score_matrix(mats["A"]), "t", correction=None)
                                              .adjusted_pvalue < 0.1))
    # other resamples are other cells
    _, other = discriminative_power_grid(mats, store=tmp_path / "s", n_resamples=400, seed=4, progress=False)
    assert other.cached == 3  # only the t-test cells, which use no resamples


@pytest.mark.filterwarnings("ignore::irmeasures_markov.inference.SamplingWarning")  # short chains
def test_fit_per_collection_equals_direct_fit(client, tmp_path):
    data = {"trec7": _scores(5), "trec8": _scores(6, n_topics=30)}
    kw = dict(draws=150, tune=100, chains=2, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: mixing is not what this test is about
        direct = {c: gibbs_linear_model(score_matrix(v), progress=False, **kw) for c, v in data.items()}
    fits, summary = fit_per_collection(data, client=client, store=tmp_path / "s", progress=False, **kw)
    assert summary.done == 4
    for c in data:
        np.testing.assert_array_equal(fits[c].system_effects, direct[c].system_effects)
        assert fits[c].max_rhat == pytest.approx(direct[c].max_rhat, rel=0, abs=0)
        a, b = direct[c].systems[-1], direct[c].systems[0]
        assert fits[c].systems == direct[c].systems and fits[c].prob_better(a, b) == direct[c].prob_better(a, b)
    cached, s2 = fit_per_collection(data, store=tmp_path / "s", progress=False, **kw)
    assert s2.cached == 4 and s2.done == 0
    for c in data:
        np.testing.assert_array_equal(cached[c].system_effects, direct[c].system_effects)
    _, s3 = fit_per_collection(data, store=tmp_path / "s", progress=False, **dict(kw, seed=8))
    assert s3.cached == 0


def test_matrix_hash_sees_values_topics_and_systems():
    sm = score_matrix(_scores(1))
    v = sm.values.copy()
    v[0, 0] = np.nextafter(v[0, 0], 2)
    assert matrix_hash(score_matrix(v)) != matrix_hash(sm)
    assert matrix_hash(score_matrix(sm.values, systems=None, topics=[f"t{i}" for i in range(25)])) != \
        matrix_hash(sm)
    with pytest.raises(ValueError, match="alpha"):
        discriminative_power_grid({"A": _scores(1)}, alpha=1.5, progress=False)
    with pytest.raises(ValueError, match="sampler"):
        fit_per_collection({"A": _scores(1)}, sampler="hmc", progress=False)
