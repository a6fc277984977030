"""Issue 26, holes: ``unjudged=`` and ``residual=`` of every family against explicitly judged qrels.

The expectations never go through the variant engine (tests/ties_brute.py evaluates the plain measure
on explicitly built qrels and runs):

* ``unjudged='rel'``: every unjudged retrieved document judged at g_fill = max(1, highest judged grade of
  the query) in the qrels (so it joins the recall base). For the users who read past the ranking
  (M1-M4 with the RBP distribution, TBG, PH with tail='inf') the ranks after the ranking are relevant too,
  as in rbp_eval's residual: the brute force appends enough relevant documents that the rest of the tail
  weighs < 1e-13; with a cutoff k the user reads k ranks at most, so a ranking of N < k documents gets
  k - N of them (and one of N >= k none);
* ``residual=True`` is value('rel') - value('nonrel'); for M1 with dist='RBP' it is rbp_eval's
  (1-p) Σ_{unjudged k} p^(k-1) + p^N;
* ``unjudged='range'``: extras 'lo'/'hi' are the min and max over all 2^u judgments (0 or g_fill) of the
  u unjudged retrieved documents, and the value is hi - lo; for a user who reads past the ranking the
  filled ranks are one more unknown (all there or none), so 'rel' and 'nonrel' both lie in the range;
* ``unjudged='drop'`` equals judged_only=True.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_ties_and_holes import MEASURES, assert_per_query, engine, engine_with_extras
from ties_brute import (
    LENGTHS,
    all_judgments,
    appended,
    batched,
    brute_expected,
    brute_range,
    brute_sorted,
    explicit_run,
    filled_qrels,
    g_fill,
    plain,
    random_case,
    sorted_within_ties,
    trec_order,
    unjudged_docs,
    values,
    with_tail,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*no document with grade.*:RuntimeWarning")

SEEDS = [11, 22, 33]
#: the hole variants are about unjudged documents: the judged_only measures have none
HOLE_MEASURES = [m for m in MEASURES if "judged_only" not in m]
#: appended relevant documents standing for the endless tail (TBG's decay per document is the slowest)
TAIL = {"TBG": 1500}
DEFAULT_TAIL = 400
#: static stopping distributions: their user may stop at any rank, also past the ranking
STATIC = ("RBP", "DCG", "RR")


def is_carterette(m) -> bool:
    return m.NAME in ("M1", "M2", "M3", "M4") or hasattr(m, "dist")


def reads_past(measure) -> bool:
    """Whether the user of ``measure`` reads past the last retrieved document (then 'rel' fills those ranks,
    up to the cutoff when there is one): M1-M4 with a static distribution, TBG, PH with tail='inf' or
    pad_to_cutoff (docs/user-model-framework.md, docs/time-biased-gain.md, docs/stopping-time.md)."""
    m = plain(measure)
    if is_carterette(m):
        return m.dist in STATIC
    if m.NAME == "TBG":
        return True
    if m.NAME in ("PH", "PatH"):
        return m.params.get("tail") == "inf" or bool(m.params.get("pad_to_cutoff"))
    return False


def refused_past(measure) -> bool:
    """DCG and RR without a cutoff: too heavy a tail to fill (M2's sum diverges); the engine refuses them
    under unjudged='rel', residual=True and unjudged='range' with a ValueError asking for a cutoff."""
    m = plain(measure)
    return is_carterette(m) and m.dist in ("DCG", "RR") and m.params.get("cutoff") is None


def tail_count(measure):
    """The number of relevant documents appended after a ranking of ``n`` documents, as a function of n:
    up to the cutoff, else enough that the rest weighs < 1e-13."""
    m = plain(measure)
    cutoff = m.params.get("cutoff")
    if cutoff is not None:
        return lambda n: max(0, cutoff - n)
    return lambda n: TAIL.get(m.NAME, DEFAULT_TAIL)


def tail_length(measure):
    """The length of the appended documents for TBG, as a function of the query's run: default_length when
    given, else the mean length of the query's retrieved documents (docs/time-biased-gain.md)."""
    m = plain(measure)
    if m.NAME != "TBG" or m.params.get("default_length") is not None:
        return None
    return lambda run_q: float(np.mean([LENGTHS[d] for d in run_q]))


def normalised(m) -> bool:
    if is_carterette(m):
        return m.norm()
    return m.NAME == "TBG" and m.params.get("norm") == "ideal"


def brute_rel_data(measure, qrels, run):
    """(qrels, run) whose plain value is the value under unjudged='rel' (for a measure whose normaliser, if
    any, does not read the recall base: the appended documents join it, the filled ranks do not)."""
    if reads_past(measure):
        assert not normalised(plain(measure)), measure
        return appended(qrels, run, tail_count(measure), tail_length(measure))
    return filled_qrels(qrels, run), run


def ideal_values(measure, judged, run_lengths):
    """The normaliser of ``measure`` (M1-M4 with norm, TBG with norm='ideal') for the qrels ``judged``, by
    the plain unnormalised measure on an explicit ideal ranking: for M1-M4 the query's relevant documents,
    then unjudged ones up to max(the ranks read, RB); for TBG the relevant documents shortest first (binary
    gains)."""
    m = plain(measure)
    rel = m.params.get("rel", 1)
    qrels, run = {}, {}
    for q, docs in judged.items():
        relevant = [d for d, g in docs.items() if g >= rel]
        if m.NAME == "TBG":
            order = sorted(relevant, key=lambda d: (LENGTHS[d], d))
        else:
            order = relevant + [f"~pad{i:05d}" for i in range(max(run_lengths[q], len(relevant)) - len(relevant))]
        if relevant:  # without a relevant document the normaliser is 0
            qrels[q], run[q] = docs, explicit_run(order)
    base = m(norm="none") if m.NAME == "TBG" else m(norm=False)
    got = values(base, qrels, run) if run else {}
    return {q: got.get(q, 0.0) for q in judged}


def brute_rel(measure, qrels, run):
    """The value under unjudged='rel', without the engine. For a normalised measure that reads past the
    ranking: the unnormalised value with the filled ranks, over the normaliser of the filled qrels (the
    filled ranks are not in the recall base: no qrels judge them)."""
    m = plain(measure)
    if reads_past(measure) and normalised(m):
        q2, r2 = appended(qrels, run, tail_count(measure), tail_length(measure))
        base = m(norm="none") if m.NAME == "TBG" else m(norm=False)
        value = values(base, q2, r2)
        ideal = ideal_values(measure, filled_qrels(qrels, run), {q: len(r2[q]) for q in r2})
        return {q: value[q] / ideal[q] if ideal[q] > 0 else 0.0 for q in value}
    return values(measure, *brute_rel_data(measure, qrels, run))


def brute_range_of(measure, qrels, run):
    """``{qid: (lo, hi)}`` over every judgment of the unjudged retrieved documents and, for a user who reads
    past the ranking, with and without the filled ranks (normalised measures: over the normaliser of the
    judgment, as in :func:`brute_rel`)."""
    m = plain(measure)
    if not reads_past(measure):
        return brute_range(measure, qrels, run)
    if not normalised(m):
        return brute_range(measure, qrels, run, tail_count(measure), tail_length(measure))
    base = m(norm="none") if m.NAME == "TBG" else m(norm=False)
    out = {}
    for q, scores in run.items():
        judgments = list(all_judgments(qrels[q], unjudged_docs(qrels[q], scores)))
        vals = list(batched(measure, [(j, scores) for j in judgments]))
        count = tail_count(measure)(len(scores))
        if count:
            length = tail_length(measure)(scores) if tail_length(measure) is not None else None
            un = batched(base, [with_tail(j, scores, count, g_fill(qrels[q]), length) for j in judgments])
            ideal = ideal_values(measure, {f"j{i}": j for i, j in enumerate(judgments)},
                                 {f"j{i}": len(scores) + count for i in range(len(judgments))})
            vals += [u / ideal[f"j{i}"] if ideal[f"j{i}"] > 0 else 0.0 for i, u in enumerate(un)]
        out[q] = (float(min(vals)), float(max(vals)))
    return out


def tolerance(want):
    return 1e-12 * max(1.0, max(abs(v) for v in want.values()))


# --------------------------------------------------------------------------- the brute force itself

def test_filled_qrels_judge_every_unjudged_retrieved_document_at_g_fill():
    qrels = {"q": {"a": 0, "b": 2, "x": 1}, "r": {"a": 0}}
    run = {"q": {"a": 1.0, "u": 1.0, "b": 0.5}, "r": {"a": 1.0, "v": 2.0, "w": 0.0}}
    assert unjudged_docs(qrels["q"], run["q"]) == ["u"]
    assert filled_qrels(qrels, run) == {"q": {"a": 0, "b": 2, "x": 1, "u": 2}, "r": {"a": 0, "v": 1, "w": 1}}
    q2, r2 = appended(qrels, run, 3)
    assert trec_order(r2["r"])[3:] == ["~free00000", "~free00001", "~free00002"]
    assert q2["r"]["~free00002"] == 1 and q2["q"]["~free00000"] == 2 and len(q2["q"]) == 7


def test_reads_past():
    assert reads_past("M1") and reads_past("M2(norm=False,theta=0.6)") and reads_past("RBTR") and reads_past("M1@5")
    assert reads_past("M1(dist='DCG')") and refused_past("M1(dist='DCG')") and not refused_past("M1(dist='DCG')@5")
    assert not reads_past("M3(dist='ERR')") and not reads_past("ARR@5") and not refused_past("M1")
    assert reads_past("TBG(lengths='brute-all')") and reads_past("TBG(lengths='brute-all')@4")
    assert reads_past("PH(tail='inf')") and reads_past("PH(pad_to_cutoff=True)@5")
    assert not reads_past("PH") and not reads_past("MP") and not reads_past("MPcont(rates='brute')")
    assert tail_count("M1@5")(3) == 2 and tail_count("M1@5")(7) == 0 and tail_count("M1")(7) == DEFAULT_TAIL
    assert tail_length("M1") is None and tail_length("TBG(default_length=5,lengths='brute-part')") is None
    mean = (LENGTHS["D001"] + LENGTHS["D002"]) / 2
    assert tail_length("TBG(lengths='brute-all')")({"D001": 1.0, "D002": 2.0}) == mean


# --------------------------------------------------------------------------- unjudged='rel'

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", HOLE_MEASURES)
def test_rel_is_the_value_on_filled_qrels(measure, seed):
    qrels, run = random_case(seed)
    if refused_past(measure):
        with pytest.raises(ValueError, match="cutoff"):
            engine(measure, qrels, run, unjudged="rel")
        return
    want = brute_rel(measure, qrels, run)
    assert_per_query(engine(measure, qrels, run, unjudged="rel"), want, tolerance(want),
                     f"{measure}(unjudged='rel') seed {seed}")


@pytest.mark.parametrize("measure", ["MP(model='LO_OR_LID')", "PH(tail='inf')", "M1", "M4(dist='ERR')@5",
                                     "TBG(lengths='brute-all')@4"])
def test_rel_with_expected_ties(measure):
    qrels, run = random_case(44)
    # a tail has distinct scores below the ranking: the orders are those of the ranking's tie groups
    want = brute_expected(measure, *brute_rel_data(measure, qrels, run))
    assert_per_query(engine(measure, qrels, run, unjudged="rel", ties="expected"), want, tolerance(want),
                     f"{measure}(unjudged='rel',ties='expected')")


@pytest.mark.parametrize("how", ["optimistic", "pessimistic"])
@pytest.mark.parametrize("measure", ["MP", "MPcont(lengths='brute-all',time='tbg')", "PH(browse='RWBM',p=0.6,q=0.3)",
                                     "TBG(lengths='brute-all')@4", "M4(dist='ERR')", "M2(dist='RRR')", "PH(tail='inf')",
                                     "M1"])
def test_rel_with_sorted_ties_sorts_by_the_filled_grades(measure, how):
    """Under unjudged='rel' an unjudged document is a relevant one, for the tie order too."""
    qrels, run = random_case(45)
    q2, r2 = brute_rel_data(measure, qrels, run)
    want = brute_sorted(measure, q2, r2, how)
    assert_per_query(engine(measure, qrels, run, unjudged="rel", ties=how), want, tolerance(want),
                     f"{measure}(unjudged='rel',ties={how!r})")


@pytest.mark.parametrize("measure", ["MP(model='LO_OR_LID')", "PH", "TBG(lengths='brute-all')@4", "M4(dist='ERR')@5",
                                     "M1"])
def test_residual_with_expected_ties(measure):
    qrels, run = random_case(46)
    q2, r2 = brute_rel_data(measure, qrels, run)
    rel, nonrel = brute_expected(measure, q2, r2), brute_expected(measure, qrels, run)
    want = {q: rel[q] - nonrel[q] for q in nonrel}
    assert_per_query(engine(measure, qrels, run, residual=True, ties="expected"), want, tolerance(rel),
                     f"{measure}(residual=True,ties='expected')")


@pytest.mark.parametrize("ties,want", [("optimistic", 0.2), ("pessimistic", 0.0), ("expected", 0.1)])
def test_rel_judges_an_unjudged_document_that_ties_into_the_cutoff(ties, want):
    """The smallest case of a tie group crossing the cutoff: in trec order 'z' (judged 0) is at rank 1 and
    the unjudged 'u' at rank 2, below the cutoff; under unjudged='rel' 'u' is relevant, so the optimistic
    order puts it at rank 1 (M1@1 = 1 - 0.8), the pessimistic one at rank 2 (0), and the mean is 0.1."""
    qrels = {"q": {"z": 0}}
    run = {"q": {"z": 1.0, "u": 1.0}}
    judged = {"q": {"z": 0, "u": 1}}
    assert values("M1@1", judged, {"q": {"u": 2.0, "z": 1.0}})["q"] == pytest.approx(0.2, abs=1e-15)
    assert values("M1@1", judged, {"q": {"z": 2.0, "u": 1.0}})["q"] == 0.0
    assert engine("M1@1", qrels, run, unjudged="rel", ties=ties)["q"] == pytest.approx(want, abs=1e-15)


def test_an_unjudged_document_below_the_cutoff_joins_the_recall_base():
    """The smallest case: 'u' is retrieved (rank 2) but below the cutoff. unjudged='rel' judges every
    unjudged retrieved document, so 'u' is relevant and the recall base is 2: M1(dist='AP')@1 = 1/RB = 0.5;
    over the two judgments of 'u' the value is 1.0 (non-relevant) or 0.5 (relevant)."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 2.0, "u": 1.0}}
    measure = "M1(dist='AP')@1"
    assert values(measure, {"q": {"a": 1, "u": 1}}, run)["q"] == 0.5
    assert engine(measure, qrels, run, unjudged="rel")["q"] == 0.5
    assert engine(measure, qrels, run, residual=True)["q"] == -0.5
    got, extras = engine_with_extras(measure, qrels, run, unjudged="range")
    assert (extras["lo"]["q"], extras["hi"]["q"], got["q"]) == (0.5, 1.0, 0.5)


def test_rel_fills_with_at_least_grade_1():
    # the only judged document is non-relevant: the unjudged ones count at grade 1
    qrels = {"q": {"a": 0}}
    run = {"q": {"a": 3.0, "u": 2.0, "v": 1.0}}
    for measure in ["MP", "M1@3", "PH"]:
        want = values(measure, {"q": {"a": 0, "u": 1, "v": 1}}, run)
        assert_per_query(engine(measure, qrels, run, unjudged="rel"), want, 1e-12, measure)


# --------------------------------------------------------------------------- residual

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", HOLE_MEASURES)
def test_residual_is_rel_minus_nonrel(measure, seed):
    qrels, run = random_case(seed)
    if refused_past(measure):
        with pytest.raises(ValueError, match="cutoff"):
            engine(measure, qrels, run, residual=True)
        return
    rel, nonrel = brute_rel(measure, qrels, run), values(measure, qrels, run)
    want = {q: rel[q] - nonrel[q] for q in nonrel}
    assert_per_query(engine(measure, qrels, run, residual=True), want, tolerance(rel),
                     f"{measure}(residual=True) seed {seed}")


def rbp_eval_residual(qrels_q, run_q, p):
    """rbp_eval's residual: (1-p) Σ_{unjudged ranks k} p^(k-1) + p^N."""
    order = trec_order(run_q)
    return (1 - p) * sum(p ** k for k, d in enumerate(order) if d not in qrels_q) + p ** len(order)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("theta", [None, 0.5, 0.95])
def test_m1_rbp_residual_is_rbp_evals(seed, theta):
    qrels, run = random_case(seed)
    measure = "M1" if theta is None else f"M1(theta={theta})"
    p = 0.8 if theta is None else theta
    want = {q: rbp_eval_residual(qrels[q], run[q], p) for q in run}
    # the brute force appends 400 documents: enough for p <= 0.8 (0.8**400 < 1e-38), not for 0.95
    if p <= 0.8:  # the brute force of the reading past the ranking agrees with the formula
        rel, nonrel = brute_rel(measure, qrels, run), values(measure, qrels, run)
        assert_per_query({q: rel[q] - nonrel[q] for q in nonrel}, want, 1e-12, "brute " + measure)
    assert_per_query(engine(measure, qrels, run, residual=True), want, 1e-12, measure)


def cwl_rbp(qrels_q, run_q, p, rel=1):
    """cwl-eval's RBP (a test dependency) on one query, binary gains at ``rel``: (EU, residual of EU).
    cwl-eval's residual gives unjudged items the maximum gain and pads the ranking to 1000 items."""
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler
    handler = TrecQrelHandler()
    for d, g in qrels_q.items():
        handler.put_value("q", d, 1.0 if g >= rel else 0.0)
    maker = RankingMaker("q", handler, None, max_gain=1.0, max_n=1000)
    for d in trec_order(run_q):
        maker.add(d, "D")
    metric = RBPCWLMetric(p)
    metric.residuals = True
    metric.measure(maker.get_ranking())
    return metric.expected_utility, metric.residual_expected_utility


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("theta", [None, 0.5, 0.95])
def test_m1_rbp_value_and_residual_are_cwl_evals(seed, theta):
    """rel=1 only: cwl-eval's unjudged items always get the maximum gain, ours g_fill, relevant at rel=1."""
    qrels, run = random_case(seed)
    p = 0.8 if theta is None else theta
    measure = "M1" if theta is None else f"M1(theta={theta})"
    want = {q: cwl_rbp(qrels[q], run[q], p) for q in run}
    assert_per_query(values(measure, qrels, run), {q: w[0] for q, w in want.items()}, 1e-12, "cwl EU " + measure)
    assert_per_query(engine(measure, qrels, run, residual=True), {q: w[1] for q, w in want.items()}, 1e-12,
                     "cwl residual " + measure)


def test_residual_of_a_fully_judged_ranking_is_its_tail():
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.0}}
    assert engine("M1", qrels, run, residual=True)["q"] == pytest.approx(0.8 ** 3, abs=1e-15)
    assert engine("M1@3", qrels, run, residual=True)["q"] == 0.0
    assert engine("MP", qrels, run, residual=True)["q"] == 0.0


# --------------------------------------------------------------------------- unjudged='range'

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", HOLE_MEASURES)
def test_range_ends_are_min_and_max_over_every_judgment(measure, seed):
    qrels, run = random_case(seed, max_unjudged=8, unjudged_share=0.5)
    assert all(len(unjudged_docs(qrels[q], run[q])) <= 8 for q in run)
    if refused_past(measure):
        with pytest.raises(ValueError, match="cutoff"):
            engine(measure, qrels, run, unjudged="range")
        return
    want = brute_range_of(measure, qrels, run)
    got, extras = engine_with_extras(measure, qrels, run, unjudged="range")
    tol = 1e-12 * max(1.0, max(abs(hi) for _, hi in want.values()))
    what = f"{measure}(unjudged='range') seed {seed}"
    assert_per_query(extras["lo"], {q: lo for q, (lo, _) in want.items()}, tol, what + " lo")
    assert_per_query(extras["hi"], {q: hi for q, (_, hi) in want.items()}, tol, what + " hi")
    assert_per_query(got, {q: extras["hi"][q] - extras["lo"][q] for q in want}, 0, what + " width")


@pytest.mark.parametrize("how", ["optimistic", "pessimistic"])
@pytest.mark.parametrize("measure", ["MP", "PH(browse='RWBM',p=0.6,q=0.3)", "TBG(lengths='brute-all')",
                                     "M4(dist='ERR')", "M1(dist='RR')@6", "MPcont(rates='brute')"])
def test_range_with_sorted_ties(measure, how):
    """Each judgment of the unjudged documents with its own optimistic/pessimistic order (and, for a user
    who reads past the ranking, with and without the filled ranks after it)."""
    qrels, run = random_case(47, max_unjudged=6, unjudged_share=0.5)
    assert not normalised(plain(measure))
    want = {}
    for q, scores in run.items():
        judgments = list(all_judgments(qrels[q], unjudged_docs(qrels[q], scores)))
        scenarios = [(j, explicit_run(sorted_within_ties(scores, j, how))) for j in judgments]
        count = tail_count(measure)(len(scores)) if reads_past(measure) else 0
        if count:
            length = tail_length(measure)(scores) if tail_length(measure) is not None else None
            scenarios += [with_tail(j, r, count, g_fill(qrels[q]), length) for j, r in scenarios]
        v = batched(measure, scenarios)
        want[q] = (float(v.min()), float(v.max()))
    _, extras = engine_with_extras(measure, qrels, run, unjudged="range", ties=how)
    tol = 1e-12 * max(1.0, max(abs(hi) for _, hi in want.values()))
    what = f"{measure}(unjudged='range',ties={how!r})"
    assert_per_query(extras["lo"], {q: lo for q, (lo, _) in want.items()}, tol, what + " lo")
    assert_per_query(extras["hi"], {q: hi for q, (_, hi) in want.items()}, tol, what + " hi")


@pytest.mark.parametrize("measure", [m for m in HOLE_MEASURES[::3] if not refused_past(m)])
def test_range_holds_nonrel_and_rel(measure):
    """'nonrel' and 'rel' are two of the judgments the range runs over."""
    qrels, run = random_case(9, max_unjudged=8, unjudged_share=0.5)
    _, extras = engine_with_extras(measure, qrels, run, unjudged="range")
    for variant in ("nonrel", "rel"):
        v = engine(measure, qrels, run, unjudged=variant)
        for q in v:
            assert extras["lo"][q] - 1e-12 <= v[q] <= extras["hi"][q] + 1e-12, (measure, variant, q)


def test_range_of_a_non_monotone_measure_can_put_nonrel_inside():
    """MP is not monotone in relevance: an unjudged document made relevant low in the ranking can lower it,
    so the residual can be negative while the range still holds both judgments."""
    qrels = {"q": {"a": 1, "b": 0, "c": 0, "d": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "u": 1.0}}
    rel = values("MP", {"q": {**qrels["q"], "u": 1}}, run)["q"]
    nonrel = values("MP", qrels, run)["q"]
    assert rel < nonrel  # the brute force shows it
    assert engine("MP", qrels, run, residual=True)["q"] == pytest.approx(rel - nonrel, abs=1e-12)
    _, extras = engine_with_extras("MP", qrels, run, unjudged="range")
    assert extras["lo"]["q"] == pytest.approx(rel, abs=1e-12)
    assert extras["hi"]["q"] == pytest.approx(nonrel, abs=1e-12)


# --------------------------------------------------------------------------- unjudged='drop'

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("measure", HOLE_MEASURES)
def test_drop_is_judged_only(measure, seed):
    qrels, run = random_case(seed)
    want = values(plain(measure)(judged_only=True), qrels, run)
    assert_per_query(engine(measure, qrels, run, unjudged="drop"), want, 0, f"{measure}(unjudged='drop')")


def test_unjudged_and_ties_defaults_leave_values_bit_for_bit():
    qrels, run = random_case(12)
    for measure in HOLE_MEASURES:
        m = plain(measure)
        got = values(m(ties="docid", unjudged="nonrel", residual=False, seed=0), qrels, run)
        assert got == values(m, qrels, run), measure
    assert np.isfinite(list(values("MP", qrels, run).values())).all()
