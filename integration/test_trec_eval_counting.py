"""R@k, Success@k, the set measures, IPrec@r and the counts of ``experiments.evaluate`` against trec_eval's own
output (``reference/trec8/eval.RUN.gz``, ``trec_eval -q -m all_trec``, 4 decimals), every TREC-8 run and topic.

They are computed on the float64 ranking in trec_eval's order (issue 34): ``uwmt8a0``'s R@100 is trec_eval's
0.3402, where pytrec_eval's float32 scores gave 0.3396 (topics 415, 426, 434, 446).  IPrec@r counts the
relevant documents to reach as trec_eval 9 (and pytrec_eval) does, ``int(r R + 0.9)``; the reference is
trec_eval 10's output, which rounds ``r R`` to the nearest integer: IPrec@r is compared where both give the
same count.
"""
import gzip
import math

import numpy as np
import pytest

from irmeasures_markov.experiments import evaluate

HALF_ULP = 0.5e-4 + 1e-9  # trec_eval prints 4 decimals
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")
#: trec_eval's name -> ours
NAMES = {**{f"recall_{k}": f"R@{k}" for k in CUTOFFS}, **{f"success_{k}": f"Success@{k}" for k in (1, 5, 10)},
         **{f"iprec_at_recall_{r}": f"IPrec@{float(r)}" for r in LEVELS},
         "set_P": "SetP", "set_relative_P": "SetP(relative=True)", "set_recall": "SetR", "set_F": "SetF",
         "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRet(rel=1)"}


def read_reference(path):
    ref = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3 and parts[0] in NAMES and parts[1] != "all":
                ref.setdefault(parts[1], {})[NAMES[parts[0]]] = float(parts[2])
    return ref


def _same_count(level: float, num_rel: float) -> bool:
    """Whether trec_eval 9 and 10 count the same relevant documents to reach for recall ``level``."""
    return int(level * num_rel + 0.9) == math.floor(level * num_rel + 0.5)


@pytest.fixture(scope="module")
def evaluation(trec8):
    qrels, runs = trec8
    return evaluate(list(NAMES.values()), qrels, runs, n_jobs=2, progress=False)


def test_every_run_every_topic(data_dir, evaluation):
    assert len(evaluation.runs) == 129
    bad = []
    for i, name in enumerate(evaluation.runs):
        ref = read_reference(data_dir / "reference" / "trec8" / f"eval.{name}.gz")
        for j, label in enumerate(evaluation.labels):
            for k, q in enumerate(evaluation.topics):
                if label.startswith("IPrec") and not _same_count(float(label[6:]), ref[q]["NumRel"]):
                    continue
                if abs(evaluation.values[i, j, k] - ref[q][label]) > HALF_ULP:
                    bad.append((name, q, label, evaluation.values[i, j, k], ref[q][label]))
    assert not bad, f"{len(bad)} mismatches, e.g. {bad[:5]}"


def test_uwmt8a0_recall_at_100_is_trec_eval_s(evaluation):
    i, j = evaluation.runs.index("uwmt8a0"), evaluation.labels.index("R@100")
    assert round(float(np.mean(evaluation.values[i, j])), 4) == 0.3402


def test_main_command_prints_trec_eval_s_values(data_dir, capsys):
    from irmeasures_markov.cli import main
    assert main([str(data_dir / "qrels" / "trec8.qrels.gz"), str(data_dir / "runs" / "trec8" / "input.uwmt8a0.gz"),
                 "AP", "R@100", "P@10", "MP"]) == 0
    assert capsys.readouterr().out.split() == ["AP", "0.2142", "R@100", "0.3402", "P@10", "0.4040", "MP", "0.2897"]
