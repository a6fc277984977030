"""Runs read as columns (``load_run_dir``) give every family the values of the same runs read as dicts.

Five TREC-8 runs (two with the most tied scores, two without, one of short
rankings): ``experiments.evaluate`` with measures of every family, under the
default settings and under other tie and unjudged settings, gives the same
float64 arrays, bit for bit, from ``load_run_dir(...)`` (RunColumns) and from
``{name: read_trec_run(file)}``, under both engines of the docid lookup.
"""
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest

from irmeasures_markov.experiments import evaluate
from irmeasures_markov.io import RunColumns, load_run_dir, read_trec_qrels, read_trec_run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from token_engines import TOKEN_ENGINES, force_token_engine  # noqa: E402

RUNS = ("UB99SW", "uwmt8a0", "CL99XT", "Flab8as", "READWARE")
#: the package's families (MPcont with a rates file and with TBG's time), then trec_eval's standard measures
FAMILIES = ["MP", "MP(model='LO_OR_LID',recall=True)@100", "MP(judged_only=True)@20", "MP(ties='expected')",
            "MPcont(rates='{rates}')@100", "MPcont(time='tbg',default_length=500)", "PH",
            "PH(browse='RWBM',p=0.5,q=0.25)@100", "TBG(default_length=500)", "TBG(default_length=500)@10",
            "M1(dist='RBP')", "M2(dist='DCG')@20", "M3(dist='ERR')", "M4(dist='AP')"]
STANDARD = ["AP", "nDCG@10", "Bpref", "P@10", "RR"]
#: measures that need only the positive grades (the join with every judgment is then never made)
POSITIVE_ONLY = ["MP", "MP@10", "PH", "TBG(default_length=500)", "M1(dist='RBP')", "AP", "nDCG@10", "P@10"]


@pytest.fixture(scope="module")
def inputs(data_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("columnar_trec8")
    rates = tmp / "rates.tsv"
    mu = np.random.default_rng(20261125).uniform(0.05, 1.5, size=1000)
    rates.write_text("".join(f"{r}\t{float(m)!r}\n" for r, m in enumerate(mu, start=1)), encoding="utf-8")
    run_dir = tmp / "runs"
    run_dir.mkdir()
    for name in RUNS:
        os.symlink(data_dir / "runs" / "trec8" / f"input.{name}.gz", run_dir / f"input.{name}.gz")
    qrels = read_trec_qrels(data_dir / "qrels" / "trec8.qrels.gz")
    dicts = {name: read_trec_run(run_dir / f"input.{name}.gz") for name in RUNS}
    return qrels, run_dir, dicts, [m.format(rates=rates) for m in FAMILIES]


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
def test_every_family_is_bit_identical_from_columns(inputs, token_engine, monkeypatch):
    qrels, run_dir, dicts, families = inputs
    asked = force_token_engine(monkeypatch, token_engine)
    columns = load_run_dir(run_dir, progress=False, n_jobs=1)
    assert list(columns) == sorted(RUNS) and all(isinstance(r, RunColumns) for r in columns.values())
    dicts = {name: dicts[name] for name in columns}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # READWARE's short rankings, named per topic
        for measures, settings in ((families + STANDARD, {}),
                                   (POSITIVE_ONLY, {}),       # no measure reads the judged non-relevant
                                   (families + STANDARD[:3], {"ties": "pessimistic"}),
                                   (families + STANDARD[:3], {"unjudged": "drop"})):
            got = evaluate(measures, qrels, columns, progress=False, **settings)
            want = evaluate(measures, qrels, dicts, progress=False, **settings)
            assert got.values.shape == want.values.shape and got.values.size > 0
            same = got.values.view(np.uint64) == want.values.view(np.uint64)
            assert same.all(), (settings, [want.labels[j] for j in np.flatnonzero(~same.all(axis=(0, 2)))])
    assert "auto" in asked
