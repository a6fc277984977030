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
