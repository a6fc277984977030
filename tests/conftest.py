"""Fixtures shared by every test folder, and the rule that marks whole groups of tests ``slow``.

Besides the tests marked ``slow`` in their own files (wheel and venv builds, memory bounds, Bayesian
sampling, model fits on large simulated logs, exact and high-precision references, the documentation's
snippets), every property-based test (hypothesis) and every test on a Dask cluster (the ``client``
fixture) is ``slow``:
``python -m pytest -m "not slow" tests`` runs the fast core.
"""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def client():
    """A Dask client on a 2-worker LocalCluster whose workers import this checkout (one per test module)."""
    distributed = pytest.importorskip("distributed")
    from irmeasures_markov.grid.backends import local_cluster
    cluster = local_cluster(2)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        property_based = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
        if property_based or "client" in getattr(item, "fixturenames", ()):
            item.add_marker(slow)
