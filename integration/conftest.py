import functools
import pathlib
import sys

import pytest

from irmeasures_markov.io import read_trec_qrels
from irmeasures_markov.testing import DATA_ENV, shared_data_dir

DATA = shared_data_dir()

# the tests here import the reproduction scripts (reproduce_mp_tables, crosscheck_cwl_tbg, ...)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "reproduce"))


@pytest.fixture(scope="session")
def data_dir():
    if DATA is None:
        pytest.skip(f"shared TREC data not found: set {DATA_ENV} or place it at ../shared/data")
    return DATA


@functools.cache
def _trec8():
    # run_files.load_run_dir gives exactly io.read_trec_run's dicts (integration/test_datasets.py), ~3x faster
    from irmeasures_markov.io import load_run_dir
    qrels = read_trec_qrels(DATA / "qrels" / "trec8.qrels.gz")
    runs = load_run_dir(DATA / "runs" / "trec8", progress=False)
    return qrels, runs


@pytest.fixture(scope="session")
def trec8(data_dir):
    """(qrels, {run_name: run}) for all 129 TREC-8 runs, parsed as float64."""
    return _trec8()
