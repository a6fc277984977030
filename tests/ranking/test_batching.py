"""Batched preparation and kernels: many queries at once give the same numbers as one query at a time.

Three independent references:

* each query ranked alone (``run_references.ranked_alone``), with its
  batches rebuilt here the way they were built before, one query at a time
  and concatenated;
* every query evaluated alone, as a run of its own (a batch of one);
* ``np.cumsum`` / ``np.argsort`` of each segment alone for the segment kernels.

Equality is exact (bit for bit) throughout: batching changes no arithmetic.
"""
import numpy as np
import pytest
from measure_needs import Needs
from run_references import as_columns, ranked_alone

import irmeasures_markov as imm
from irmeasures_markov._util._segments import _unsorted_segments, segment_argsort_desc, segment_cumsum
from irmeasures_markov.documents import DocumentLengths
from irmeasures_markov.measures.markov_precision import PAPER_MODELS
from irmeasures_markov.ranking import PreparedRun, QrelsIndex
from irmeasures_markov.ranking import _prepared as prepared_module


def random_inputs(seed, n_queries=60, max_len=40, long=False):
    """Qrels and a run with varied lengths (1 included), heavy ties, -0.0, empty and unjudged queries.

    ``long``: every ranking has ``max_len`` documents.
    """
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q:03d}"
        n = max_len if long else int(rng.choice([0, 1, 2, max_len, int(rng.integers(1, max_len + 1))]))
        pool = [f"d{rng.integers(10 ** 6)}" for _ in range(2 * n + 3)]
        docs = list(dict.fromkeys(pool))[:n]
        scores = rng.integers(-3, 4, size=len(docs)).astype(float) * rng.choice([1.0, 0.5])
        scores[scores == 0] = rng.choice([0.0, -0.0], size=int((scores == 0).sum()))
        if q % 11 != 5:                      # some run queries have no judgments at all
            judged = rng.choice(len(pool), size=min(len(pool), int(rng.integers(0, 12))), replace=False)
            qrels[qid] = {pool[j]: int(rng.integers(-1, 4)) for j in judged.tolist()}
        if q % 13 != 7:                      # some qrels queries are not in the run
            run[qid] = dict(zip(docs, scores.tolist()))
    qrels["unretrieved"] = {"x": 1}
    return qrels, run


def old_batch(queries, qrels_index, rel, judged_only, cutoff, judgments):
    """The batch as it was built before: query by query from each query ranked alone, concatenated."""
    grades = []
    for q in queries:
        g = q.grades if judgments else q.positive_grades
        if judged_only:
            g = g[g >= 0]   # a negative grade is unjudged too (pooled, not judged)
        grades.append(g[:cutoff] if cutoff is not None else g)
    offsets = np.concatenate(([0], np.cumsum([g.size for g in grades]))).astype(np.int64)
    flat = np.concatenate(grades) if grades else np.zeros(0, dtype=np.int64)
    rb = [qrels_index.recall_base(q.qid, rel) for q in queries]
    return offsets, flat, np.array(rb, dtype=np.int64)


SETTINGS = [(rel, jo, cutoff, jm) for rel in (0, 1, 2) for jo in (False, True) for cutoff in (None, 1, 5)
            for jm in (False, True)]


@pytest.mark.parametrize("seed", range(6))
def test_flat_preparation_equals_per_query_preparation(seed):
    qrels, run = random_inputs(seed)
    qi = QrelsIndex(qrels)
    flat = PreparedRun(qi, run, [Needs(document_values=True)])
    ref = ranked_alone(qrels, run)
    assert flat.qids == [q.qid for q in ref] and len(flat.queries) == len(ref) > 20
    for a, b in zip(flat.queries, ref):
        assert a.qid == b.qid and a.docids == b.docids and a.joined_keys == b.joined_keys
        # bit for bit, the sign of a zero score included
        np.testing.assert_array_equal(a.scores.view(np.int64), b.scores.view(np.int64))
        np.testing.assert_array_equal(a.positive_grades, b.positive_grades)
        np.testing.assert_array_equal(a.grades, b.grades)
    for rel, jo, cutoff, jm in SETTINGS:
        b = flat.batch(rel=rel, judged_only=jo, cutoff=cutoff, judgments=jm, with_docids=True)
        offsets, grades, rb = old_batch(ref, qi, rel, jo, cutoff, bool(jm or jo or rel < 1))
        np.testing.assert_array_equal(b.offsets, offsets)
        np.testing.assert_array_equal(b.grades, grades)
        np.testing.assert_array_equal(b.relevant, grades >= rel)
        np.testing.assert_array_equal(b.recall_base, rb)
        expect = [d[g >= 0] if jo else d for d, g in
                  ((np.array(q.docids, dtype=object), q.grades) for q in ref)]
        assert [list(d[:cutoff]) for d in expect] == b.docids


def test_long_rankings_give_the_same_result():
    qrels, run = random_inputs(7, n_queries=8, max_len=700, long=True)
    qi = QrelsIndex(qrels)
    flat = PreparedRun(qi, run)
    assert isinstance(flat.queries, prepared_module._LazyQueries) and flat._flat._ties is not None
    positive = flat._flat.positive_grades.copy()                    # made before the docid tie-break
    ref = ranked_alone(qrels, run)
    for prepared in (flat, PreparedRun(qi, run, [Needs(judgments=True)])):
        for a, b in zip(prepared.queries, ref, strict=True):
            assert a.docids == b.docids
            np.testing.assert_array_equal(a.positive_grades, b.positive_grades)
            np.testing.assert_array_equal(a.grades, b.grades)
    np.testing.assert_array_equal(positive, np.concatenate([q.positive_grades for q in ref]))


def _measures():
    imm.register_lengths("test-batching", {}, duplicates={})
    out = [imm.MP(model=m, recall=r) for m in PAPER_MODELS + ("UNIFORM",) for r in (False, True)]
    out += [imm.MP(judged_only=True, rel=2), imm.MP @ 5]
    out += [imm.MPcont(time="tbg", default_length=300), imm.MPcont(time="tbg", default_length=10, judged_only=True)]
    out += [imm.TBG(default_length=250), imm.TBG(default_length=250, norm="constant") @ 3,
            imm.TBG(default_length=100, judged_only=True, pc_by_grade="0:0.2"), imm.TBG(default_length=50) @ 20]
    out += [getattr(imm, f"M{k}")(dist=d) for k in (1, 2, 3, 4) for d in ("RBP", "AP", "ERR", "RR")]
    out += [imm.M1(dist="RBP") @ 4]
    out += [imm.PH(order=2), imm.PH(order=1) @ 10]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_every_family_batched_equals_one_query_at_a_time(seed):
    """A run evaluated whole equals each of its queries evaluated alone, exactly."""
    qrels, run = random_inputs(100 + seed)
    measures = _measures()
    ev = imm.PROVIDER.evaluator(measures, qrels)
    with pytest.warns(RuntimeWarning):  # some queries have nothing relevant
        whole = ev.values(run)
    assert len(next(iter(whole.values()))) > 20
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for qid, docs in run.items():
            alone = ev.values({qid: docs}, warn_empty=False)
            for m in measures:
                if qid in whole[m]:
                    assert alone[m][qid] == whole[m][qid], (str(m), qid)


@pytest.mark.parametrize("seed", range(4))
def test_every_family_on_dicts_equals_on_columns(seed):
    qrels, run = random_inputs(200 + seed)
    measures = _measures()
    ev = imm.PROVIDER.evaluator(measures, qrels)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        flat = ev.values(run)
        ref = ev.values(as_columns(run))
    for m in measures:
        assert flat[m] == ref[m], str(m)


def test_duplicate_groups_flat_equal_per_ranking():
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(30)]
    dl = DocumentLengths({d: float(i) for i, d in enumerate(docs)},
                         duplicates={d: f"g{i % 7}" for i, d in enumerate(docs) if i % 3})
    rankings_ = [list(rng.choice(docs, size=int(rng.integers(0, 15)), replace=False)) for _ in range(40)]
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in rankings_])))
    flat = dl.for_flat_rankings([d for r in rankings_ for d in r], offsets)
    np.testing.assert_array_equal(flat, np.concatenate([dl.for_ranking(r) for r in rankings_]))


@pytest.mark.parametrize("seed", range(5))
def test_segment_kernels_equal_each_segment_alone(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 1, 2, 3, 7, 64, 100, 129, 1000], size=300)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = rng.lognormal(0, 3, size=int(offsets[-1]))
    got = segment_cumsum(values, offsets)
    scores = np.round(rng.normal(size=values.size), 1)       # many ties
    order = segment_argsort_desc(scores, offsets)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        np.testing.assert_array_equal(got[a:b], np.cumsum(values[a:b]))
        np.testing.assert_array_equal(order[a:b] - a, np.argsort(-scores[a:b], kind="stable"))


@pytest.mark.parametrize("lengths", [[1000] * 9, [100] * 4 + [0, 0] + [100] * 3, [64] * 5 + [100] + [64] * 5,
                                     [0, 3, 3, 3, 2, 3, 3], [7]])
@pytest.mark.parametrize("strided", [False, True])
def test_segment_cumsum_of_consecutive_equal_segments(lengths, strided):
    """Blocks of one length, consecutive (summed as a 2-D view of the flat array) or not, on a strided input."""
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    values = np.random.default_rng(len(lengths)).lognormal(0, 3, size=2 * int(offsets[-1]))
    values = values[::2] if strided else values[:int(offsets[-1])]
    got = segment_cumsum(values, offsets)
    assert got.shape == values.shape
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        np.testing.assert_array_equal(got[a:b], np.cumsum(values[a:b]))


@pytest.mark.parametrize("seed", range(5))
def test_segment_argsort_of_runs_partly_in_rank_order(seed):
    """Segments already in rank order keep their file order; the others are sorted, each as alone."""
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 1, 2, 3, 7, 64, 100, 129, 1000], size=300)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    scores = np.round(rng.normal(size=int(offsets[-1])), 1)
    for k, (a, b) in enumerate(zip(offsets[:-1].tolist(), offsets[1:].tolist())):
        if k % 3:   # two thirds in rank order, ties and signed zeros included
            scores[a:b] = -np.sort(-scores[a:b], kind="stable")
            if b - a > 2:
                scores[a:a + 2] = [0.0, -0.0]
                scores[a + 2:b] = np.minimum(scores[a + 2:b], 0.0)
                scores[a + 2:b] = -np.sort(-scores[a + 2:b])
    order = segment_argsort_desc(scores, offsets)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        np.testing.assert_array_equal(order[a:b] - a, np.argsort(-scores[a:b], kind="stable"))
    # every segment in rank order but a rise across each boundary: the identity
    rising = np.repeat(np.arange(lengths.size, dtype=np.float64), lengths) - np.arange(offsets[-1]) * 1e-9
    np.testing.assert_array_equal(segment_argsort_desc(rising, offsets), np.arange(offsets[-1]))


def _partly_ranked_scores(seed):
    """Segment offsets and scores full of ties and signed zeros, a third of the segments out of rank order."""
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 1, 2, 3, 7, 64, 100, 129, 1000], size=300)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    scores = np.round(rng.normal(size=int(offsets[-1])), 1)
    scores[rng.random(scores.size) < 0.1] = -0.0
    for k, (a, b) in enumerate(zip(offsets[:-1].tolist(), offsets[1:].tolist())):
        if k % 3:
            scores[a:b] = -np.sort(-scores[a:b], kind="stable")
    return offsets, scores


@pytest.mark.parametrize("seed", range(5))
def test_unsorted_segments_are_those_with_a_rise(seed):
    """One flag per segment from the pair flags (no index per rising pair): the segments with a rise."""
    offsets, scores = _partly_ranked_scores(seed)
    expected = [k for k, (a, b) in enumerate(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
                if any(scores[i] < scores[i + 1] for i in range(a, b - 1))]
    assert _unsorted_segments(scores, offsets).tolist() == expected
    assert _unsorted_segments(np.zeros(0), np.zeros(1, dtype=np.int64)).size == 0
    assert _unsorted_segments(np.array([1.0, 2.0]), np.array([0, 1, 2])).size == 0   # segments of one


@pytest.mark.parametrize("seed", range(5))
def test_segment_argsort_sorting_the_scores_in_place_is_the_gather(seed):
    """``sort_scores=True``: the same order, and the scores become ``scores[order]`` bit for bit (-0.0 kept)."""
    offsets, scores = _partly_ranked_scores(seed)
    order = segment_argsort_desc(scores, offsets)
    sorted_in_place = scores.copy()
    np.testing.assert_array_equal(segment_argsort_desc(sorted_in_place, offsets, sort_scores=True), order)
    np.testing.assert_array_equal(sorted_in_place.view(np.int64), scores[order].view(np.int64))


def test_errors_still_name_the_query_and_document():
    qi = QrelsIndex({"q1": {"a": 1}, "q2": {"b": 1}})
    with pytest.raises(ValueError, match=r"query 'q2': document 'bad' has a non-finite score"):
        PreparedRun(qi, {"q1": {"a": 1.0}, "q2": {"b": 2.0, "bad": float("nan")}})
    with pytest.raises(TypeError, match="7"):
        PreparedRun(qi, {"q1": {"a": 1.0}, "q9": {7: 1.0}})   # a query without judgments is checked too


def test_prepared_arrays_are_shared_read_only():
    qrels, run = random_inputs(1)
    b = PreparedRun(QrelsIndex(qrels), run).batch(judgments=False)
    with pytest.raises(ValueError):
        b.grades[0] = 5


@pytest.mark.parametrize("kernel", ["ID", "LID"])
def test_gl_or_degrees_grouped_by_r_equal_each_query_block(kernel):
    """GL_OR's dense degrees, all queries' pairs at once, equal each query's own r x r block sum (to rounding)."""
    from irmeasures_markov.measures.markov_precision import _kernels as mp
    rng = np.random.default_rng(11)
    rel = [rng.random(int(n)) < rng.uniform(0.05, 0.9) for n in rng.integers(1, 64, size=80)]  # r < 64: dense
    offsets = np.concatenate(([0], np.cumsum([r.size for r in rel]))).astype(np.int64)
    flat = np.concatenate(rel)
    batch = prepared_module.RelevanceBatch([str(i) for i in range(len(rel))], offsets, flat.astype(np.int64), flat,
                                    np.zeros(len(rel), dtype=np.int64), 1)
    alpha = mp.kernel_table(kernel, int(batch.lengths.max()))
    got = mp._gl_or_degrees(batch, kernel, alpha)
    at = 0
    for r in rel:
        s = np.flatnonzero(r) + 1
        if s.size > 1:
            np.testing.assert_allclose(got[at:at + s.size], alpha[np.abs(s[:, None] - s[None, :])].sum(axis=1),
                                       rtol=1e-14, atol=0)
        at += s.size


@pytest.mark.parametrize("depth", [1, 3, 17])
def test_depth_flat_equals_per_query(depth):
    """Ranked to a depth: the flat path (a full sort, cut) equals each query ranked alone and cut."""
    qrels, run = random_inputs(300 + depth)
    qi = QrelsIndex(qrels)
    flat = PreparedRun(qi, run, [Needs(depth=depth)])
    for a, b in zip(flat.queries, ranked_alone(qrels, run, depth), strict=True):
        assert a.docids == b.docids and len(a.docids) <= depth
        np.testing.assert_array_equal(a.positive_grades, b.positive_grades)
        np.testing.assert_array_equal(a.grades, b.grades)
    whole = PreparedRun(qi, run)
    for cutoff in (1, depth):
        for jm in (False, True):
            fb, rb = flat.batch(cutoff=cutoff, judgments=jm), whole.batch(cutoff=cutoff, judgments=jm)
            np.testing.assert_array_equal(fb.offsets, rb.offsets)
            np.testing.assert_array_equal(fb.grades, rb.grades)
