"""topic_sample_stability and pool_depth_robustness against brute force on small synthetic data.

Topic samples: the exact mean τ over every topic subset of a tiny topic set, each τ from
``scipy.stats.kendalltau`` on means taken here from ``evaluate()``'s per-topic values, against the function with
``trials=None`` (equal) and with a seeded sample of trials (within a tolerance). Pool depths: pools cut by hand
on rankings written out explicitly (ties broken by docid descending, as trec_eval), each depth's qrels evaluated
with ``evaluate()`` and correlated with scipy.
"""
import itertools
import math

import numpy as np
import pytest
import scipy.stats

from irmeasures_markov.experiments import evaluate, pool_depth_robustness, topic_sample_stability
from irmeasures_markov.experiments._robustness import depth_pools, topic_samples

MEASURES = ["AP", "M2(dist='DCG')", "M1", "M4(dist='RR')", "M3(dist='ERR')"]


def _collection(seed=3, n_topics=6, n_runs=6, n_docs=24, depth=12):
    rng = np.random.default_rng(seed)
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels = {f"q{q}": {d: int(rng.random() < 0.35) for d in rng.choice(docs, 18, replace=False).tolist()}
             for q in range(n_topics)}
    runs = {f"r{r}": {q: {d: float(rng.integers(0, 9)) for d in rng.choice(docs, depth, replace=False).tolist()}
                      for q in qrels} for r in range(n_runs)}
    return qrels, runs


def _tau(x, y):
    t = scipy.stats.kendalltau(x, y).statistic
    return float(t)


@pytest.fixture(scope="module")
def data():
    return _collection()


@pytest.fixture(scope="module")
def per_topic(data):
    qrels, runs = data
    return evaluate(MEASURES, qrels, runs, progress=False)


def _exact_means(per_topic, size):
    """Mean over every topic subset of ``size`` of the τ (scipy) between the full ranking and the subset's."""
    v = per_topic.values
    full = v.mean(axis=2)
    taus = [[_tau(full[:, j], v[:, j, list(s)].mean(axis=1)) for j in range(v.shape[1])]
            for s in itertools.combinations(range(v.shape[2]), size)]
    return np.nanmean(np.array(taus), axis=0), len(taus)


def test_every_subset_gives_the_exact_mean(data, per_topic):
    qrels, runs = data
    got = topic_sample_stability(MEASURES, qrels, runs, sizes=[1, 2, 3, 5, 6], trials=None, progress=False)
    assert list(got.columns) == [str(m) for m in per_topic.measures] and got.columns.name == "measure"
    for size in (1, 2, 3, 5, 6):
        exact, count = _exact_means(per_topic, size)
        block = got.loc[size]
        assert len(block) == count == math.comb(6, size)
        np.testing.assert_allclose(np.nanmean(block.to_numpy(), axis=0), exact, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.loc[6].to_numpy(), 1.0)  # all topics: the full ranking itself


def test_a_seeded_sample_of_trials_approaches_the_exact_mean(data, per_topic):
    qrels, runs = data
    got = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=300, seed=11, progress=False)
    again = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=300, seed=11, progress=False)
    np.testing.assert_array_equal(got.to_numpy(), again.to_numpy())
    for size in (3,):
        exact, _ = _exact_means(per_topic, size)
        block = got.loc[size].to_numpy()
        sd = np.nanstd(block, axis=0)
        # 4 standard errors of the mean of 300 draws
        assert np.all(np.abs(np.nanmean(block, axis=0) - exact) <= 4 * sd / math.sqrt(300) + 1e-12), size


def test_the_same_sample_serves_every_measure(data, per_topic):
    """Each trial's τ's are those of one topic sample, drawn as ``topic_samples`` draws with the seed."""
    qrels, runs = data
    got = topic_sample_stability(MEASURES, qrels, runs, sizes=[3, 2], trials=20, seed=4, progress=False)
    rng = np.random.default_rng(4)
    v = per_topic.values
    full = v.mean(axis=2)
    for size in (3, 2):
        for t, sample in enumerate(topic_samples(6, size, 20, rng)):
            expected = [_tau(full[:, j], v[:, j, sample].mean(axis=1)) for j in range(len(MEASURES))]
            np.testing.assert_allclose(got.loc[(size, t)].to_numpy(), expected, atol=1e-12)


def test_depth_pools_by_hand():
    """Two runs, two topics; ties at the cut broken by docid descending (trec_eval)."""
    qrels = {"1": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}, "2": {"x": 1, "y": 1}}
    runs = {"r": {"1": {"a": 3.0, "b": 2.0, "c": 2.0, "z": 1.0}, "2": {"x": 1.0, "y": 0.5}},
            "s": {"1": {"d": 5.0, "a": 4.0, "e": 0.0}}}
    pools = depth_pools(qrels, runs, [1, 2, 3, 10])
    # r on 1: a, c (tie with b: c > b by docid), b, z;  s on 1: d, a, e;  r on 2: x, y;  s has no topic 2
    assert pools[1] == {"1": {"a": 1, "d": 1}, "2": {"x": 1}}
    assert pools[2] == {"1": {"a": 1, "c": 1, "d": 1}, "2": {"x": 1, "y": 1}}
    assert pools[3] == {"1": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}, "2": {"x": 1, "y": 1}}
    assert pools[10] == qrels


@pytest.mark.filterwarnings("ignore:1 topic with judgments but no relevant:RuntimeWarning")
def test_pool_depth_tau_equals_scipy_on_hand_cut_qrels(data):
    qrels, runs = data
    depths = [1, 2, 4]
    got = pool_depth_robustness(MEASURES, qrels, runs, depths=[4, 2, 1, 2], progress=False)
    assert list(got.index) == depths and got.index.name == "depth"
    full = evaluate(MEASURES, qrels, runs, progress=False).means_array()
    topics = sorted(qrels, key=lambda q: (len(q), q))
    for d in depths:
        # the pool written out here: each run's top d by (score desc, docid desc)
        pool = {q: set() for q in qrels}
        for run in runs.values():
            for q, docs in run.items():
                pool[q].update(sorted(docs, key=lambda doc: (docs[doc], doc), reverse=True)[:d])
        cut = {q: {doc: g for doc, g in j.items() if doc in pool[q]} for q, j in qrels.items()}
        assert got.attrs["judgments"][d] == sum(map(len, cut.values()))
        means = evaluate(MEASURES, cut, runs, topics=topics, progress=False).means_array()
        expected = [_tau(full[:, j], means[:, j]) for j in range(len(MEASURES))]
        np.testing.assert_allclose(got.loc[d].to_numpy(), expected, rtol=0, atol=1e-12, err_msg=str(d))
    assert got.attrs["full_judgments"] == sum(map(len, qrels.values()))


def test_drop_condenses_the_rankings_on_both_sides(data):
    qrels, runs = data
    got = pool_depth_robustness(["M4(dist='AP')", "M1"], qrels, runs, depths=[2], unjudged="drop", progress=False)
    assert list(got.columns) == ["M4(dist='AP',unjudged='drop')", "M1(unjudged='drop')"]
    m = ["M4(dist='AP',judged_only=True)", "M1(judged_only=True)"]
    full = evaluate(m, qrels, runs, progress=False).means_array()
    cut = depth_pools(qrels, runs, [2])[2]
    means = evaluate(m, cut, runs, topics=sorted(qrels, key=lambda q: (len(q), q)), progress=False).means_array()
    np.testing.assert_allclose(got.loc[2].to_numpy(), [_tau(full[:, j], means[:, j]) for j in range(2)], atol=1e-12)
    with pytest.raises(ValueError, match="families only"):
        pool_depth_robustness(["AP"], qrels, runs, depths=[2], unjudged="drop", progress=False)


def test_local_processes_and_a_store_give_the_same_numbers(data, tmp_path):
    qrels, runs = data
    one = pool_depth_robustness(MEASURES, qrels, runs, depths=[1, 3], progress=False)
    two = pool_depth_robustness(MEASURES, qrels, runs, depths=[1, 3], n_jobs=2, store=tmp_path / "s",
                                progress=False)
    again = pool_depth_robustness(MEASURES, qrels, runs, depths=[1, 3], store=tmp_path / "s", progress=False)
    for other in (two, again):
        np.testing.assert_array_equal(one.to_numpy(), other.to_numpy())
    t1 = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=5, store=tmp_path / "s", progress=False)
    t2 = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=5, progress=False)
    np.testing.assert_array_equal(t1.to_numpy(), t2.to_numpy())


@pytest.mark.parametrize("kwargs, match", [
    ({"sizes": [0]}, "sizes"), ({"sizes": [7]}, "sizes"), ({"sizes": []}, "sizes"), ({"sizes": [2.5]}, "sizes"),
    ({"trials": 0}, "trials"), ({"trials": True}, "trials"), ({"trials": 1.5}, "trials"),
])
def test_topic_sample_arguments_are_checked(data, kwargs, match):
    qrels, runs = data
    with pytest.raises(ValueError, match=match):
        topic_sample_stability(["AP"], qrels, runs, progress=False, **kwargs)


def test_too_many_subsets_and_too_few_runs_are_refused(data, monkeypatch):
    qrels, runs = data
    monkeypatch.setattr("irmeasures_markov.experiments._robustness.MAX_SUBSETS", 10)
    with pytest.raises(ValueError, match="20 topic subsets"):
        topic_sample_stability(["AP"], qrels, runs, sizes=[3], trials=None, progress=False)
    one = {"r0": runs["r0"]}
    with pytest.raises(ValueError, match="at least 2 runs"):
        topic_sample_stability(["AP"], qrels, one, sizes=[3], progress=False)
    with pytest.raises(ValueError, match="at least 2 runs"):
        pool_depth_robustness(["AP"], qrels, one, progress=False)


@pytest.mark.parametrize("kwargs, match", [
    ({"depths": []}, "depths"), ({"depths": [0]}, "depths"), ({"depths": [1.5]}, "depths"),
    ({"depths": [True]}, "depths"), ({"unjudged": "rel"}, "unjudged"),
])
def test_pool_depth_arguments_are_checked(data, kwargs, match):
    qrels, runs = data
    with pytest.raises(ValueError, match=match):
        pool_depth_robustness(["AP"], qrels, runs, progress=False, **kwargs)


@pytest.mark.slow
def test_a_dask_client_gives_the_same_numbers(data, client):
    qrels, runs = data
    local = pool_depth_robustness(MEASURES, qrels, runs, depths=[1, 3], progress=False)
    dask = pool_depth_robustness(MEASURES, qrels, runs, depths=[1, 3], client=client, progress=False)
    np.testing.assert_array_equal(local.to_numpy(), dask.to_numpy())
    local = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=5, progress=False)
    dask = topic_sample_stability(MEASURES, qrels, runs, sizes=[3], trials=5, client=client, progress=False)
    np.testing.assert_array_equal(local.to_numpy(), dask.to_numpy())
