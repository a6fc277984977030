"""TBG's time model on runs (irmeasures_markov.measures._time_model): T(k), G(t), the plot, against plain loops."""
import math

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmeasures_markov as imm
from irmeasures_markov.documents import DocumentLengths, UnknownLengthError
from irmeasures_markov.measures import TBGParameters, gain_curves, mean_gain_curve, plot_gain_curves, time_models

matplotlib.use("Agg")

LN2 = math.log(2)


def loop_model(grades, lengths, rel=1, ts=4.4, a=0.018, b=7.8, pcr=0.64, pcn=0.39, psr=0.77):
    """(T(k) list, finish-time list, gain list) by a plain loop over the ranking."""
    reach, done, gains, t = [], [], [], 0.0
    for g, length in zip(grades, lengths):
        relevant = g >= rel
        reach.append(t)
        t += ts + (a * length + b) * (pcr if relevant else pcn)
        done.append(t)
        gains.append(pcr * psr if relevant else 0.0)
    return reach, done, gains


def loop_gain_at(done, gains, t):
    return sum(g for d, g in zip(done, gains) if d <= t)


def ranked(docs):
    """trec_eval order of {docid: score}: score descending, docid descending."""
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 2), st.integers(0, 4000), st.integers(0, 5)), min_size=1, max_size=40),
       st.booleans(), st.one_of(st.none(), st.integers(1, 15)))
def test_time_models_equal_plain_loop(docs, judged_only, cutoff):
    # grade -1 means "not in the qrels" (unjudged); score ties are broken by docid like trec_eval
    docids = [f"d{i:02d}" for i in range(len(docs))]
    qrels = {"q": {d: g for d, (g, _, _) in zip(docids, docs) if g >= 0}}
    qrels["q"]["judged-but-not-retrieved"] = 1
    run = {"q": {d: float(s) for d, (_, _, s) in zip(docids, docs)}}
    lengths = {d: float(length) for d, (_, length, _) in zip(docids, docs)}
    tm = time_models(qrels, run, lengths, judged_only=judged_only, cutoff=cutoff)["q"]
    assert tm.qid == "q"
    order = [d for d in ranked(run["q"]) if not judged_only or d in qrels["q"]][:cutoff]
    assert tm.docids == order
    grades = [qrels["q"].get(d, -1) for d in order]
    reach, done, gains = loop_model(grades, [lengths[d] for d in order])
    np.testing.assert_allclose(tm.reach, reach, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tm.done, done, rtol=1e-12)
    np.testing.assert_allclose(tm.gain, gains, rtol=1e-12)
    if not order:  # judged_only removed every document
        assert tm.reach.size == 0 and tm.gain_at([0.0, 10.0]).tolist() == [0.0, 0.0]
        return
    times = [0.0, *done, done[-1] + 1, 0.5 * done[0]]
    np.testing.assert_allclose(tm.gain_at(times), [loop_gain_at(done, gains, t) for t in times], rtol=1e-12)
    # TBG is the decayed sum over the same T(k)
    m = imm.TBG(lengths=imm.register_lengths("tm-hyp", lengths), judged_only=judged_only)
    m = m @ cutoff if cutoff else m
    want = sum(g * math.exp(-t * LN2 / 224) for g, t in zip(gains, reach))
    assert imm.PROVIDER.calc_aggregate([m], qrels, run)[m] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_parameters_duplicates_and_defaults():
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}}
    dl = DocumentLengths({"a": 100, "b": 200, "c": 300}, duplicates={"a": "g", "c": "g"}, default_length=50)
    p = TBGParameters(t_summary=2.0, pc_by_grade="2:0.9", ps_by_grade="2:0.5")
    tm = time_models(qrels, run, dl, params=p)["q"]
    np.testing.assert_allclose(tm.lengths, [100, 200, 0, 50])
    np.testing.assert_allclose(tm.holding, [2 + 9.6 * 0.9, 2 + 11.4 * 0.39, 2 + 7.8 * 0.64, 2 + 8.7 * 0.39])
    np.testing.assert_allclose(tm.gain, [0.45, 0, 0.64 * 0.77, 0])
    with pytest.raises(UnknownLengthError, match=r"\['x'\]"):
        time_models(qrels, run, {"a": 1, "b": 1, "c": 1})
    with pytest.raises(ValueError, match="default_length"):
        time_models(qrels, run, dl, default_length=3)
    with pytest.raises(ValueError, match="cutoff"):
        time_models(qrels, run, dl, cutoff=0)


def test_mean_gain_curve_averages_over_qrels_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}, "q3": {"z": 1}}   # q3 has no results: contributes 0
    run = {"q1": {"a": 1.0}, "q2": {"b": 2.0, "c": 1.0}, "q9": {"a": 1.0}}
    lengths = {"a": 0, "b": 1000, "c": 0}
    g = 0.64 * 0.77
    t_a = 4.4 + 7.8 * 0.64
    t_b = 4.4 + (18 + 7.8) * 0.64
    times = [0, t_a, t_b, t_b + t_a, 1e9]
    per_query = gain_curves(qrels, run, lengths, times)
    assert sorted(per_query) == ["q1", "q2"]
    np.testing.assert_allclose(per_query["q1"], [0, g, g, g, g])
    np.testing.assert_allclose(per_query["q2"], [0, 0, g, 2 * g, 2 * g])
    np.testing.assert_allclose(mean_gain_curve(qrels, run, lengths, times), [0, g / 3, 2 * g / 3, g, g])
    with pytest.raises(ValueError, match="no query"):
        mean_gain_curve({}, run, lengths, times)


def test_plot_gain_curves(tmp_path):
    t = np.linspace(0, 600, 7)
    ax = plot_gain_curves({"run A": (t, np.arange(7.0)), "run B": (t, np.zeros(7))}, title="G(t)")
    assert [line.get_label() for line in ax.get_lines()] == ["run A", "run B"]
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), t / 60)
    assert "minutes" in ax.get_xlabel()
    ax.figure.savefig(tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 0
