"""Fixtures shared by every test folder, and the two tiers of the suite.

``python -m pytest tests`` runs the fast tier; ``python -m pytest --runslow tests`` runs everything.  The slow
tier is what takes seconds a test: the tests marked ``slow`` in their own files (wheel and venv builds, child
interpreters, memory bounds, samplers, model fits on large logs, exhaustive and high-precision references, the
documentation's snippets), every property-based test (hypothesis), every test on a Dask cluster (the ``client``
fixture), and every seed but the first of a test parametrized over ``seed`` alone (the same path on other random
data)."""
import os

import numpy as np
import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the slow tier (tests marked slow); without it they are skipped")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A directory run of the fast tier (``python -m pytest tests``) goes to two xdist workers, one per core.

    The slow tier stays serial (its timings and memory bounds want a quiet process), so do runs of single files or
    tests (no workers to start), ``--pdb`` and ``-n`` given by hand; without pytest-xdist every run is serial."""
    opt = config.option
    if (getattr(opt, "numprocesses", 0) is None and not opt.runslow and not opt.usepdb and not opt.collectonly
            and not hasattr(config, "workerinput") and all(os.path.isdir(arg) for arg in config.args)):
        opt.numprocesses = 2


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def client():
    """A Dask client on a 2-worker LocalCluster whose workers import this checkout (one per test module).

    Closed when the module's tests are done, not at the end of the run: the client's IO loop thread keeps
    talking to the cluster, and its messages are unpacked by msgpack, which switches the cyclic garbage collector
    off and on again process-wide; alive during later tests it switched the collector on under
    tests/plugin/test_evaluator_gc.py.
    """
    distributed = pytest.importorskip("distributed")
    from irmeasures_markov.grid._backends import local_cluster
    cluster = local_cluster(2)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _another_seed(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return (callspec is not None and callspec.indices.get("seed", 0) > 0
            and any(m.args and m.args[0] in ("seed", ("seed",)) for m in item.iter_markers("parametrize")))


def pytest_collection_modifyitems(config, items):
    skip = None if config.getoption("--runslow") else pytest.mark.skip(reason="slow tier: run with --runslow")
    for item in items:
        property_based = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
        if property_based or "client" in getattr(item, "fixturenames", ()) or _another_seed(item):
            item.add_marker(pytest.mark.slow)
        if skip and item.get_closest_marker("slow"):
            item.add_marker(skip)
