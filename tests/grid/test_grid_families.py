"""Every measure family through every way a grid runs: one process, local processes (n_jobs=2) and Dask, the
same values bit for bit; every registered measure, with each allowed value of its parameters, survives a pickle
round trip (what both parallel paths need)."""
import pickle

import ir_measures
import numpy as np
import pytest
from synthetic_collection import synthetic

import irmeasures_markov  # noqa: F401  (registers the measures)
from irmeasures_markov.experiments import evaluate_grid
from irmeasures_markov.plugin import FamilyMeasure

#: one measure string per family (and the Carterette aliases), with parameters
FAMILY_EXAMPLES = {
    "MP": "MP(model='LO_OR_LID')@10", "MPcont": "MPcont(time='tbg',default_length=300)",
    "M1": "M1(dist='DCG')", "M4": "M4(dist='AP')@20", "RBTR": "RBTR(theta=0.7)@5", "ARR": "ARR",
    "PH": "PH(browse='RWBM',p=0.5,q=0.25)", "TBG": "TBG(default_length=300)",
    "AP": "AP", "MP ties": "MP(ties='expected')", "M2 residual": "M2(residual=True)",
}
POOLS = [100, (50, 1), (20, 3)]


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=5, n_runs=4, n_docs=60)


def _values(evs):
    return {pool: ev.values for pool, ev in evs.items()}


@pytest.mark.slow  # starts worker processes
def test_every_family_gives_the_same_bits_in_one_process_and_on_local_processes(data):
    qrels, runs = data
    serial, _ = evaluate_grid(FAMILY_EXAMPLES, qrels, runs, pools=POOLS, progress=False)
    parallel, summary = evaluate_grid(FAMILY_EXAMPLES, qrels, runs, pools=POOLS, n_jobs=2, progress=False)
    assert summary.workers == 2
    for pool, values in _values(serial).items():
        assert np.isfinite(values).all()
        np.testing.assert_array_equal(parallel[pool].values, values, err_msg=str(pool))


def test_every_family_gives_the_same_bits_on_dask(data, client):
    pytest.importorskip("pyarrow")
    qrels, runs = data
    serial, _ = evaluate_grid(FAMILY_EXAMPLES, qrels, runs, pools=POOLS, progress=False)
    on_dask, summary = evaluate_grid(FAMILY_EXAMPLES, qrels, runs, pools=POOLS, client=client, progress=False)
    assert summary.backend == "dask"
    for pool, values in _values(serial).items():
        np.testing.assert_array_equal(on_dask[pool].values, values, err_msg=str(pool))


def _variants(measure):
    """The measure with each allowed value of each parameter that has a list of them, and each bool flipped."""
    for name, info in measure.SUPPORTED_PARAMS.items():
        if info.dtype is bool:
            yield measure(**{name: not info.default})
        choices = info.choices if isinstance(info.choices, (list, tuple, frozenset, set)) else ()
        for choice in choices:
            yield measure(**{name: choice})


@pytest.mark.parametrize("name", sorted(n for n, m in ir_measures.measures.registry.items()
                                        if isinstance(m, FamilyMeasure)))
def test_every_measure_with_each_allowed_parameter_value_pickles(name):
    measure = ir_measures.measures.registry[name]
    for variant in [measure, *_variants(measure)]:
        for m in (variant, variant @ 7):
            assert pickle.loads(pickle.dumps(m)) == m
