"""Carterette's M1–M4: what one evaluation shares between its measures changes no value.

The measures of one evaluator read one relevant-positions view per batch, with
its stopping distributions, segment layout and ideal-ranking lengths made once
(measures/_carterette.py, ``_Relevant``).  Here every measure computed among
many, in any order, must equal the same measure computed alone, bit for bit,
and a straightforward reference within 1e-12.
"""
import math

import numpy as np
import pytest

import irmeasures_markov as imm
from irmeasures_markov._util._segments import segment_sum
from irmeasures_markov.measures import DEFAULT_THETA, DISTRIBUTIONS, MODELS, NAMED_MEASURES
from irmeasures_markov.measures._carterette import _Relevant, user_model_batch
from irmeasures_markov.ranking import PreparedRun, QrelsIndex


def reference(a, model, dist, theta, f, rb, norm, cutoff):
    """M1–M4 by their defining sums over every rank (static M2 completed with non-relevant documents),
    normalised by the same sums over the ideal ranking: RB relevant, then non-relevant up to max(N, RB)."""
    def value(a):
        if rb == 0:
            return 0.0
        n = len(a)
        R = np.cumsum(a) if n else np.zeros(0)
        k = np.arange(1, n + 1, dtype=float)
        if dist == "RBP":
            P = (1 - theta) * theta ** (k - 1)
        elif dist == "DCG":
            P = 1 / np.log2(k + 1) - 1 / np.log2(k + 2)
        elif dist == "RR":
            P = 1 / (k * (k + 1))
        elif dist == "ERR":
            P = np.array([a[i] * theta * (1 - theta) ** (R[i] - a[i]) for i in range(n)])
        elif dist == "AP":
            P = np.array(a, dtype=float) / rb
        else:
            P = np.array([a[i] / (R[i] * (R[i] + 1)) if a[i] else 0.0 for i in range(n)])
        if model == "M1":
            return math.fsum(P * a)
        if model == "M2":
            extra = (1 - P.sum()) * R[-1] if dist in ("RBP", "DCG", "RR") and n else 0.0
            return math.fsum(P * R) + extra
        if model == "M3":
            return math.fsum(P / k if f == "1/k" else P * k)
        return math.fsum(P * R / k)

    cut = a[:cutoff] if cutoff else a
    v = value(cut)
    if not norm:
        return v
    ideal = ([1] * rb + [0] * max(0, len(cut) - rb))[:cutoff] if cutoff else [1] * rb + [0] * max(0, len(cut) - rb)
    best = value(ideal)
    return v / best if best > 0 else 0.0


def random_case(rng):
    """qrels and run of up to 7 queries: empty rankings, rankings without relevant documents, RB = 0,
    relevant documents not retrieved, unjudged documents, tied scores."""
    qrels, run, truth = {}, {}, {}
    for i in range(int(rng.integers(1, 8))):
        q = f"q{i}"
        n = int(rng.integers(0, 40))
        grades = rng.integers(-1, 2, n) * (rng.random(n) < rng.random())  # -1: unjudged
        missing = int(rng.integers(0, 4)) * (rng.random() < 0.7)
        qrels[q] = {f"x{j}": 1 for j in range(missing)}
        qrels[q]["zz"] = 0
        scores = rng.integers(0, 5, n).astype(float) if rng.random() < 0.3 else rng.random(n)
        run[q] = {f"d{j:03d}": float(scores[j]) for j in range(n)}
        for j, g in enumerate(grades):
            if g >= 0:
                qrels[q][f"d{j:03d}"] = int(g)
        truth[q] = (run[q], qrels[q])
    return qrels, run, truth


def ranked_relevance(doc_scores, judged):
    """0/1 in trec_eval's order: score descending, docid descending within a tie."""
    docs = sorted(doc_scores, key=lambda d: (doc_scores[d], d), reverse=True)
    return [int(judged.get(d, 0) >= 1) for d in docs]


def all_measures():
    out = []
    for model in MODELS:
        for dist in DISTRIBUTIONS:
            for norm in (None, True, False):
                for cutoff in (None, 7):
                    kw = {"dist": dist, **({"norm": norm} if norm is not None else {}),
                          **({"cutoff": cutoff} if cutoff else {})}
                    out.append(getattr(imm, model)(**kw))
                    if dist in DEFAULT_THETA:
                        out.append(getattr(imm, model)(theta=0.3, **kw))
                    if model == "M3":
                        out.append(getattr(imm, model)(f="k", **kw))
    return out + [getattr(imm, name) for name in NAMED_MEASURES] + [imm.DAG(judged_only=True),
                                                                    imm.RBTR(judged_only=True, cutoff=5)]


MEASURES = all_measures()


@pytest.mark.filterwarnings("ignore:.*no document with grade")
@pytest.mark.parametrize("seed", range(6))
def test_measures_of_one_evaluation_equal_each_measure_alone(seed):
    rng = np.random.default_rng(seed)
    qrels, run, truth = random_case(rng)
    index = QrelsIndex(qrels)
    order = list(MEASURES)
    rng.shuffle(order)
    together = imm.PROVIDER.evaluator(order, index).values(run)
    for m in MEASURES[::3]:
        alone = imm.PROVIDER.evaluator([m], index).values(run)[m]
        assert list(alone) == list(together[m])
        for q, v in alone.items():
            assert np.float64(v).tobytes() == np.float64(together[m][q]).tobytes(), (str(m), q)


@pytest.mark.filterwarnings("ignore:.*no document with grade")
@pytest.mark.parametrize("seed", range(6))
def test_shared_batch_equals_reference(seed):
    rng = np.random.default_rng(100 + seed)
    qrels, run, truth = random_case(rng)
    prepared = PreparedRun(QrelsIndex(qrels), run)
    for cutoff in (None, 4):
        batch = prepared.batch(cutoff=cutoff)
        combos = [(m, d, f) for m in MODELS for d in DISTRIBUTIONS for f in (("1/k", "k") if m == "M3" else ("1/k",))]
        rng.shuffle(combos)
        for model, dist, f in combos:          # one batch, so one shared view for all of them
            for norm in (False, True):
                theta = DEFAULT_THETA.get(dist)
                got = user_model_batch(batch, model, dist, f=f, norm=norm, cutoff=cutoff)
                for qi, q in enumerate(prepared.qids):
                    doc_scores, judged = truth[q]
                    a = ranked_relevance(doc_scores, judged)
                    rb = sum(g >= 1 for g in judged.values())
                    want = reference(a, model, dist, theta, f, rb, norm, cutoff)
                    assert got[qi] == pytest.approx(want, rel=1e-12, abs=1e-12), (model, dist, f, norm, cutoff, q)


@pytest.mark.parametrize("seed", range(20))
def test_view_sum_is_segment_sum_bit_for_bit(seed):
    """The view's sum (segment layout made once) against segment_sum, with empty segments anywhere."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, int(rng.integers(0, 9)))
    relevant = rng.random(int(lengths.sum())) < rng.choice([0.0, 0.3, 1.0])
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    view = _Relevant(relevant, offsets, segment_sum(relevant, offsets))
    values = rng.random(view.idx.size) * 10.0 ** rng.integers(-5, 5, view.idx.size)
    want = segment_sum(values, view.offsets)
    got = view.sum(values)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    # segment_sum itself now runs on the same layout object: also against each segment reduced on its own
    bounds = view.offsets.tolist()
    alone = np.array([np.add.reduceat(values[a:b], [0])[0] if b > a else 0.0
                      for a, b in zip(bounds[:-1], bounds[1:])], dtype=np.float64)
    assert got.tobytes() == alone.tobytes()
