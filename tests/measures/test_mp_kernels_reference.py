"""MP's batch kernels against a straightforward reference written from the definitions.

The reference builds, per ranking, the weight matrix of the model among its
states (all ranks for AD, the relevant ranks for OR; every pair for GL,
neighbours in the state list for LO), takes the degrees of the relevant ranks
(a reversible chain watched on the relevant ranks has pi proportional to
them) and forms MP = sum deg * Prec / sum deg, times r / RB with recall.
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from irmeasures_markov.measures.markov_precision import MODELS, markov_precision_batch
from irmeasures_markov.measures.markov_precision import _kernels as mpk
from irmeasures_markov.ranking import RelevanceBatch

ALPHA = {"ID": lambda d: 1.0 / (d + 1.0), "LID": lambda d: 1.0 / np.log10(d + 2.0),
         "UNIFORM": lambda d: np.ones_like(d, dtype=np.float64)}


def reference_mp(rel: np.ndarray, model: str, recall_base=None) -> float:
    rel = np.asarray(rel, dtype=bool)
    r = int(rel.sum())
    if r == 0 or recall_base == 0:
        return 0.0
    conn, states, kernel = ("GL", "AD", "UNIFORM") if model == "UNIFORM" else model.split("_")
    relevant_ranks = np.flatnonzero(rel) + 1
    states_ranks = np.arange(1, rel.size + 1) if states == "AD" else relevant_ranks
    n = states_ranks.size
    W = ALPHA[kernel](np.abs(states_ranks[:, None] - states_ranks[None, :]).astype(np.float64))
    if conn == "LO":
        k = np.arange(n)
        W = np.where(np.abs(k[:, None] - k[None, :]) == 1, W, 0.0)
    np.fill_diagonal(W, 0.0)
    deg = W.sum(axis=1)
    if states == "AD":
        deg = deg[rel]
    if n == 1:
        deg = np.ones(1)  # one state: no transitions, pi = 1
    prec = np.array([rel[:i].sum() / i for i in relevant_ranks])
    value = float(np.sum(deg * prec) / np.sum(deg))
    return value * r / recall_base if recall_base is not None else value


def make_batch(rels, extra_relevant=None):
    offsets = np.concatenate(([0], np.cumsum([x.size for x in rels]))).astype(np.int64)
    flat = np.concatenate(rels) if rels else np.zeros(0, bool)
    r = np.array([int(x.sum()) for x in rels], dtype=np.int64)
    rb = r + (0 if extra_relevant is None else extra_relevant)
    return RelevanceBatch([f"q{i}" for i in range(len(rels))], offsets, flat.astype(np.int64), flat, rb, 1)


def random_rankings(seed):
    rng = np.random.default_rng(seed)
    rels = []
    for T in rng.integers(1, 120, size=60).tolist():  # small r: dense pairs
        rels.append(rng.random(T) < rng.uniform(0.0, 1.0))
    rels += [np.zeros(7, bool), np.zeros(1, bool), np.ones(1, bool), np.array([0, 1, 0, 1], bool),
             np.array([1, 1], bool), np.array([0, 0, 1], bool)]   # r = 0, 1, 2
    for T, p in ((1500, 0.3), (900, 0.6), (1500, 0.05)):  # large r: the FFT path by default
        rels.append(rng.random(T) < p)
    order = rng.permutation(len(rels))
    return [rels[i] for i in order]


@pytest.mark.parametrize("model", MODELS)
def test_batch_equals_reference_all_models_recall_on_off(model):
    rels = random_rankings(5)
    extra = np.random.default_rng(6).integers(0, 4, size=len(rels))
    extra[0] = 0
    batch = make_batch(rels, extra)
    rb = batch.recall_base
    want = [reference_mp(x, model) for x in rels]
    want_recall = [reference_mp(x, model, int(b)) for x, b in zip(rels, rb)]
    # recall after no recall, and again, from the batch's memo: same numbers
    assert_allclose(markov_precision_batch(batch, model), want, rtol=1e-12, atol=1e-15)
    assert_allclose(markov_precision_batch(batch, model, recall=True), want_recall, rtol=1e-12, atol=1e-15)
    assert_allclose(markov_precision_batch(batch, model), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel", ["ID", "LID"])
def test_gl_or_chunked_and_uncached_equal_reference(kernel, monkeypatch):
    """Pairs split over many chunks, FFT for every large query, no memo: the same degrees."""
    rels = random_rankings(9)
    want = [reference_mp(x, f"GL_OR_{kernel}") for x in rels]
    monkeypatch.setattr(mpk, "_FFT_CHUNK", 500)
    monkeypatch.setattr(mpk, "_PAIR_CACHE_MAX", 0)
    batch = make_batch(rels)
    assert_allclose(markov_precision_batch(batch, f"GL_OR_{kernel}"), want, rtol=1e-12, atol=1e-15)
    assert "mp:gl_or" not in batch.cache
    monkeypatch.setattr(mpk, "_FFT_RATIO", np.inf)  # every query dense, however large
    batch = make_batch(rels)
    assert_allclose(markov_precision_batch(batch, f"GL_OR_{kernel}"), want, rtol=1e-12, atol=1e-15)


def test_gl_or_pair_distances_shared_by_kernels():
    """The ID and LID kernels reuse one set of pair distances (and FFT spectra) of the batch."""
    batch = make_batch(random_rankings(3))
    markov_precision_batch(batch, "GL_OR_ID")
    plan = batch.cache["mp:gl_or"]
    assert sum(d.size for d, _, _ in plan.chunks) > 0 and plan.spectra
    markov_precision_batch(batch, "GL_OR_LID")
    assert batch.cache["mp:gl_or"] is plan


def test_empty_batch_and_no_relevant():
    assert markov_precision_batch(make_batch([]), "GL_OR_ID").size == 0
    batch = make_batch([np.zeros(5, bool), np.zeros(3, bool)])
    for model in MODELS:
        assert_allclose(markov_precision_batch(batch, model, recall=True), [0.0, 0.0])
