"""R@k, Success@k, SetP/SetR/SetF, IPrec@r, NumRet/NumRel/NumRelRet and Judged@k in float64 (issue 34, item 1).

Each is checked against a plain-Python implementation of trec_eval's rule written here (one query at a time,
trec_eval's order: score descending, docid descending), on random runs whose scores differ beyond float32's
precision, and against pytrec_eval where its float32 scores cannot reorder anything (integer scores).
"""
from __future__ import annotations

import random
import warnings

import ir_measures
import numpy as np
import pytest

from irmeasures_markov.experiments import evaluate
from irmeasures_markov.measures import standard_measure, standard_values
from irmeasures_markov.ranking import PreparedRun, QrelsIndex

pytestmark = pytest.mark.filterwarnings("ignore:.*no relevant.*:RuntimeWarning")

MEASURES = ["R@5", "R@20", "R(rel=2)@10", "Success@1", "Success@3", "Success(rel=2)@5", "SetP", "SetP(rel=2)",
            "SetP(relative=True)", "SetR", "SetF", "SetF(beta=2.0)", "SetF(beta=0.5)", "IPrec@0.0", "IPrec@0.1",
            "IPrec@0.3", "IPrec@0.7", "IPrec@0.8", "IPrec@1.0", "IPrec(rel=2)@0.5", "NumRet", "NumRet(rel=1)",
            "NumRet(rel=2)", "NumRel", "NumRel(rel=2)", "Judged@5", "Judged@30", "Judged"]
#: what pytrec_eval computes (ir_measures sends Judged elsewhere, and NumRel, R and IPrec only at rel=1)
PYTREC = [m for m in MEASURES if not m.startswith("Judged") and m not in ("NumRel(rel=2)", "R(rel=2)@10",
                                                                         "IPrec(rel=2)@0.5")]


def _ratio(x: float, d: float) -> float:
    return x / d if d else 0.0


def _trec_rule(measure: str, judged: dict[str, int], docs: dict[str, float]) -> float:
    """The measure of one query by trec_eval's rule (Judged@k: ir_measures' definition on trec_eval's order)."""
    m = ir_measures.parse_measure(measure)
    params = m.params
    rel = params.get("rel") or 1
    k = params.get("cutoff")
    ranking = [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]
    grades = [judged.get(d) for d in ranking]
    R = sum(1 for g in judged.values() if g >= rel)
    top = grades[:k] if k else grades
    hits = sum(1 for g in top if g is not None and g >= rel)
    name = m.NAME
    if name == "Judged":
        return _ratio(sum(g is not None for g in top), len(top))
    if name == "Success":
        return float(hits > 0)
    if name in ("R", "SetR"):
        return _ratio(hits, R)
    if name == "NumRel":
        return float(R)
    if name == "NumRet":
        return float(len(ranking) if params.get("rel") is None else hits)
    if name == "SetP":
        return _ratio(hits, min(len(ranking), R) if params.get("relative") else len(ranking))
    if name == "SetF":
        x = params.get("beta") or 1.0
        p, r = _ratio(hits, len(ranking)), _ratio(hits, R)
        return _ratio((x + 1) * p * r, x * p + r)
    # IPrec: trec_eval 9's loop, from the last rank up, the interpolated precision at the c-th relevant document
    c = int(params["recall"] * R + 0.9)
    if c > hits:
        return 0.0
    best, so_far = 0.0, hits
    for i in range(len(ranking), 0, -1):
        best = max(best, so_far / i)
        g = grades[i - 1]
        if g is not None and g >= rel:
            if so_far == c:
                return best
            so_far -= 1
    return best


def _case(seed: int, integer_scores: bool = False):
    """Three queries with grades -1..2, unjudged documents, judged documents not retrieved and near-ties."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in ("q1", "q2", "q3"):
        docs = [f"d{i:02d}" for i in rng.sample(range(60), rng.randint(1, 30))]
        judged = {d: rng.choice([-1, 0, 0, 1, 2]) for d in docs if rng.random() < 0.7}
        judged.update({f"x{j}": rng.choice([0, 1, 2]) for j in range(rng.randint(0, 4))})
        qrels[q] = judged or {"x9": 1}
        base = [float(rng.randint(0, 6)) for _ in docs]
        # a few scores a float64 step apart (the same float32 value), so that float32 reorders them
        run[q] = {d: s if integer_scores else s + rng.choice([0.0, 1e-9, 2e-9]) for d, s in zip(docs, base)}
    return qrels, run


@pytest.mark.parametrize("seed", range(40))
def test_each_measure_is_trec_eval_rule_on_float64_scores(seed):
    qrels, run = _case(seed)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    for measure in MEASURES:
        got = standard_values(standard_measure(ir_measures.parse_measure(measure)), prepared)
        want = [_trec_rule(measure, qrels[q], run[q]) for q in prepared.qids]
        assert got.tolist() == pytest.approx(want, abs=1e-15, rel=0), measure


@pytest.mark.parametrize("seed", range(20))
def test_pytrec_eval_agrees_where_float32_cannot_reorder(seed):
    qrels, run = _case(1000 + seed, integer_scores=True)
    ev = evaluate(PYTREC, qrels, {"r": run}, native=True)
    ref = evaluate(PYTREC, qrels, {"r": run}, native=False)
    np.testing.assert_allclose(ev.values, ref.values, rtol=0, atol=1e-15)


def test_near_ties_follow_the_float64_ranking_in_evaluate():
    """Two scores a float64 step apart: pytrec_eval's float32 makes them a tie (docid order), not evaluate."""
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": -1}}
    run = {"q": {"a": 1.0 + 2e-9, "z": 1.0 + 1e-9, "b": 1.0, "c": 0.5, "d": 0.25}}
    ev = evaluate(["R@1", "Success@1", "IPrec@0.5", "Judged@2"], qrels, {"r": run})
    # float64 order: a z b c d (float32: z b a c d)
    assert ev.values[0, :, 0].tolist() == [0.5, 1.0, 1.0, 0.5]


def test_expected_ties_of_iprec_is_refused_naming_it():
    qrels, run = _case(3)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    with pytest.raises(ValueError, match="IPrec@0.5"):
        standard_values(standard_measure(ir_measures.IPrec @ 0.5), prepared, ties="expected")


def test_measures_left_to_ir_measures_are_named_once():
    from irmeasures_markov.measures._standard import float32_note
    qrels, run = _case(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(["AP", "R@10", "infAP", "SetAP", "NumRel"], qrels, {"r": run})
    notes = [str(w.message) for w in caught if "float32" in str(w.message)]
    assert notes == [float32_note([ir_measures.infAP, ir_measures.SetAP])]
    assert notes[0].startswith("infAP, SetAP: ")
    assert float32_note([ir_measures.AP, ir_measures.R @ 5, ir_measures.Judged]) == ""
