"""MP(ties='expected') from the relevant ranks alone (measures/markov_precision/_ties.py) against two other
algorithms: the general engine (every arrangement evaluated as a run) and brute force over every order."""
import itertools

import numpy as np
import pytest
from random_runs import tied_run

import irmeasures_markov
from irmeasures_markov import MP
from irmeasures_markov.plugin import _mp as mp_plugin


def _values(measure, qrels, run, general=False):
    evaluator = irmeasures_markov.PROVIDER.evaluator([measure], qrels)
    if not general:
        return evaluator.values_with_extras(run)
    original = mp_plugin._MP.expected_over_ties
    mp_plugin._MP.expected_over_ties = lambda self, *args, **kwargs: None
    try:
        return evaluator.values_with_extras(run)
    finally:
        mp_plugin._MP.expected_over_ties = original


MODELS = [dict(), dict(model="GL_AD_LID"), dict(model="LO_AD_ID"), dict(model="GL_OR_ID"), dict(model="LO_OR_LID"),
          dict(model="UNIFORM"), dict(recall=True), dict(model="GL_OR_ID", recall=True)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("params", MODELS, ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_sparse_path_equals_the_general_engine(params, seed):
    qrels, run, _ = tied_run(seed, 4, 30, scores=(-2, 2), step=1.0, grades=(0, 2))
    m = MP(**params, ties="expected")
    (fast, fast_x), (slow, slow_x) = _values(m, qrels, run), _values(m, qrels, run, general=True)
    for q in fast[m]:
        s1, s2 = fast_x[m]["se"][q], slow_x[m]["se"][q]
        if s1 == 0 and s2 == 0:
            assert fast[m][q] == pytest.approx(slow[m][q], abs=1e-12)
        else:
            # Monte Carlo on one side at least (the general engine arranges grades, MP's own path relevant
            # documents only, so it is exact more often): within 4 standard errors
            assert s1 < 1e-3 and s2 < 1e-3 and s1 <= s2
            assert abs(fast[m][q] - slow[m][q]) <= 4 * np.hypot(s1, s2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("params", MODELS[:5], ids=str)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow  # exhaustive reference over every order
def test_sparse_path_equals_brute_force_over_every_order(params, seed):
    qrels, run, _ = tied_run(seed, 2, 7, scores=(0, 1), step=1.0, grades=(0, 1), signed_zeros=False)
    m = MP(**params, ties="expected")
    got, extras = _values(m, qrels, run)
    plain = MP(**params)
    for qid, docs in run.items():
        order = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        groups = [list(g) for _, g in itertools.groupby(order, key=lambda d: docs[d])]
        vals = []
        for combo in itertools.product(*[itertools.permutations(g) for g in groups]):
            ranking = [d for g in combo for d in g]
            explicit = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
            vals.append(irmeasures_markov.PROVIDER.evaluator([plain], {qid: qrels[qid]}).values(
                {qid: explicit})[plain][qid])
        assert extras[m]["se"][qid] == 0.0
        assert got[m][qid] == pytest.approx(float(np.mean(vals)), abs=1e-12)
