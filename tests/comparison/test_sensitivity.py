"""compare(..., ties=..., holes=True): judged shares, residuals, tie spreads and flagged pairs.

Independent checks: the tie spread equals the default-path values of explicitly reordered runs (optimistic:
higher grades first inside a tie group, pessimistic: lower grades first, each then trec_eval's docid order);
the residual of MP equals the default-path value with every unjudged retrieved document added to the qrels
as relevant minus the value without; judged shares are counted by hand.
"""
import json

import numpy as np
import pytest

from irmeasures_markov import comparison, experiments
from irmeasures_markov.comparison import _options as options
from irmeasures_markov.comparison import _render as comparison_render
from irmeasures_markov.comparison._options import apply_variant_options
from irmeasures_markov.comparison._sensitivity import judged_share

N_TOPICS = 8


def tie_collection():
    """A: three documents tied (the relevant one in the middle of trec_eval's order d3, d2, d1);
    B: the same order without ties; C: the relevant document first, no ties."""
    qrels, runs = {}, {"A": {}, "B": {}, "C": {}}
    for t in range(N_TOPICS):
        q = f"q{t + 1}"
        qrels[q] = {"d1": 0, "d2": 1, "d3": 0}
        runs["A"][q] = {"d1": 1.0, "d2": 1.0, "d3": 1.0}
        runs["B"][q] = {"d3": 3.0, "d2": 2.0, "d1": 1.0}
        runs["C"][q] = {"d2": 3.0, "d3": 2.0, "d1": 1.0}
    return qrels, runs


def holes_collection():
    """A: relevant at rank 2, all judged; B: an unjudged document first, relevant at 3; C: relevant at 3, judged."""
    qrels, runs = {}, {"A": {}, "B": {}, "C": {}}
    for t in range(N_TOPICS):
        q = f"q{t + 1}"
        qrels[q] = {"d1": 1, "d2": 0, "d3": 0}
        runs["A"][q] = {"d2": 3.0, "d1": 2.0, "d3": 1.0}
        runs["B"][q] = {f"u{t}": 3.0, "d3": 2.0, "d1": 1.0}
        runs["C"][q] = {"d2": 3.0, "d3": 2.0, "d1": 1.0}
    return qrels, runs


def explicit_order(run, qrels, pessimistic):
    """The run with tie groups reordered by grade (unjudged as 0), then docid descending, as distinct scores."""
    out = {}
    for q, docs in run.items():
        judged = qrels.get(q, {})
        sign = 1 if pessimistic else -1
        by_docid = sorted(docs, reverse=True)  # trec_eval's tie-break, kept by the stable sort below
        ranked = sorted(by_docid, key=lambda d: (-docs[d], sign * max(0, judged.get(d, 0))))
        out[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return out


def test_judged_share_counted_by_hand():
    qrels = {"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"x": 1}, "q3": {"z": 1}}
    run = {"q1": {"a": 5.0, "u": 4.0, "b": 3.0, "v": 2.0, "c": 1.0},  # top 3: a u b -> 2/3
           "q2": {"y": 1.0, "x": 1.0},  # tie: docid descending y, x -> top 1: y -> 0
           "q3": {}}
    got = judged_share(qrels, run, ["q1", "q2", "q3", "q4"], 3)
    assert got[0] == pytest.approx(2 / 3)
    assert got[1] == 0.5  # both retrieved documents are within the top 3, one judged
    assert np.isnan(got[2]) and np.isnan(got[3])  # nothing retrieved: no share
    assert judged_share(qrels, run, ["q2"], 1)[0] == 0.0  # the top 1 in trec_eval's order is y


@pytest.mark.parametrize("measure", ["MP", "M4", "MP@2"])
def test_tie_spread_equals_explicitly_reordered_runs(measure):
    qrels, runs = tie_collection()
    cmp = comparison.compare(qrels, runs, [measure], baseline="B", test="sign", ties="expected", progress=False)
    sens = cmp.sensitivity
    label = cmp.labels[0]
    for name, run in runs.items():
        opt = experiments.evaluate([measure], qrels, {"x": explicit_order(run, qrels, False)}, progress=False)
        pess = experiments.evaluate([measure], qrels, {"x": explicit_order(run, qrels, True)}, progress=False)
        spread = float(opt.values[0, 0].mean() - pess.values[0, 0].mean())
        assert sens.per_run.loc[name, (label, "tie_spread")] == pytest.approx(spread, abs=1e-12)
    assert sens.per_run.loc["A", (label, "tie_spread")] > 0
    assert sens.per_run.loc["B", (label, "tie_spread")] == 0.0
    depth = 2 if "@2" in measure else 10
    assert sens.depths[label] == depth
    assert (sens.per_run[(label, "judged")] == 1.0).all()  # every retrieved document is judged


def test_pair_whose_order_flips_between_tie_orders_is_flagged():
    qrels, runs = tie_collection()
    cmp = comparison.compare(qrels, runs, ["MP"], baseline="B", test="sign", ties="expected", progress=False)
    flags = cmp.sensitivity.flags.set_index(["run_a", "run_b"])
    assert list(cmp.sensitivity.kinds) == ["ties"]
    a = flags.loc[("A", "B")]
    assert a["order_changes"] and a["significance_changes"] and a["flagged"]  # 8/8 topics each way: sign test
    assert a["low"] < 0 < a["high"]
    c = flags.loc[("C", "B")]
    assert not c["order_changes"] and not c["significance_changes"] and not c["flagged"]
    assert set(cmp.sensitivity.flagged["run_a"]) == {"A"}
    text = cmp.to_text()
    assert (f"{cmp.labels[0]}: A vs B: order and significance can change between the optimistic and pessimistic"
            in text)
    assert "C vs B" not in text.split("spread", 1)[1]


def test_pair_whose_order_can_flip_within_the_residual_is_flagged():
    qrels, runs = holes_collection()
    cmp = comparison.compare(qrels, runs, ["MP"], baseline="A", test="sign", holes=True, progress=False)
    sens = cmp.sensitivity
    assert list(sens.kinds) == ["holes"]
    # the residual, independently: every unjudged retrieved document relevant (grade 1, the highest judged)
    for name, run in runs.items():
        filled = {q: {**qrels[q], **{d: 1 for d in docs if d not in qrels[q]}} for q, docs in run.items()}
        rel = experiments.evaluate(["MP"], filled, {"x": run}, progress=False).values[0, 0]
        nonrel = experiments.evaluate(["MP"], qrels, {"x": run}, progress=False).values[0, 0]
        assert sens.per_run.loc[name, ("MP", "residual")] == pytest.approx(float((rel - nonrel).mean()), abs=1e-12)
    assert sens.per_run.loc["B", ("MP", "judged")] == pytest.approx(2 / 3)
    assert sens.per_run.loc["A", ("MP", "residual")] == 0.0
    flags = sens.flags.set_index(["run_a", "run_b"])
    b = flags.loc[("B", "A")]
    assert b["order_changes"] and b["significance_changes"] and b["flagged"]
    assert b["low"] < 0 < b["high"]
    c = flags.loc[("C", "A")]
    assert not c["flagged"]
    assert c["low"] == c["high"] == c["difference"] < 0


def test_both_reports_and_every_format():
    qrels, runs = tie_collection()
    cmp = comparison.compare(qrels, runs, ["MP"], test="sign", ties="optimistic", holes=True, progress=False)
    assert cmp.labels == ["MP(ties='optimistic')"]
    assert set(cmp.sensitivity.flags["kind"]) == {"ties", "holes"}
    label = cmp.labels[0]
    csv_text = cmp.to_csv()
    header = csv_text.splitlines()[0].split(",")
    assert f"{label} judged@10" in header and f"{label} residual" in header and f"{label} tie_spread" in header
    assert "spread" in cmp.to_markdown() and "% judged@k" in cmp.to_latex()
    pairs = cmp.to_csv(pairs=True).splitlines()
    assert pairs[0].split(",")[-2:] == ["ties", "holes"]
    row = next(line for line in pairs[1:] if ",A,B," in line)
    assert row.split(",")[-2] == "order+significance"
    recs = list(comparison_render.records(cmp))
    assert {"judged", "residual", "tie_spread", "judged_depth"} <= set(recs[0])
    json.dumps(recs)
    prs = list(comparison_render.records(cmp, pairs=True))
    ab = next(r for r in prs if r["run_a"] == "A" and r["run_b"] == "B")
    assert ab["ties_order_changes"] is True and "holes_low" in ab


def test_measures_without_the_parameters_are_named_in_one_line():
    qrels, runs = tie_collection()
    with pytest.warns(RuntimeWarning, match="SetAP: computed by ir_measures"):  # not on the float64 ranking
        cmp = comparison.compare(qrels, runs, ["MP", "SetAP"], test="sign", ties="expected", progress=False)
    assert cmp.notes == ["SetAP: ties='expected' not applied; no residual, tie spread or flags (no ties, "
                         "unjudged or residual parameter)"]
    assert cmp.sensitivity.unsupported == ["SetAP"]
    assert np.isnan(cmp.sensitivity.per_run[("SetAP", "tie_spread")]).all()
    assert not cmp.sensitivity.flags["measure"].eq("SetAP").any()
    assert "Note: SetAP" in cmp.to_text()


def test_options_are_checked_by_name():
    qrels, runs = tie_collection()
    with pytest.raises(ValueError, match=r"`ties` must be one of \['docid', 'optimistic', 'pessimistic', "
                                         r"'expected'\], got 'best'"):
        comparison.compare(qrels, runs, ["MP"], ties="best", progress=False)
    with pytest.raises(ValueError, match=r"`unjudged` must be one of \['nonrel', 'drop', 'rel', 'range'\]"):
        comparison.compare(qrels, runs, ["MP"], unjudged="yes", progress=False)


def test_a_parameter_the_measure_sets_itself_is_kept():
    from ir_measures import parse_measure
    measures, unsupported = apply_variant_options(
        [parse_measure("MP(ties='expected')"), parse_measure("MP@5"), parse_measure("AP")], ties="pessimistic",
        unjudged="rel")
    assert [str(m) for m in measures] == ["MP(ties='expected',unjudged='rel')",
                                          "MP(ties='pessimistic',unjudged='rel')@5", "AP"]
    assert [str(m) for m in unsupported] == ["AP"]


def test_measures_evaluate_computes_get_the_options_where_it_takes_them(monkeypatch):
    """When experiments.evaluate takes ties/unjudged/residual, the measures it computes itself get them."""
    calls = []
    real = options.evaluate

    def evaluate(measures, qrels, runs, *, ties="docid", unjudged="nonrel", residual=False, **kw):
        calls.append((tuple(map(str, measures)), ties, unjudged, residual))
        ev = real(measures, qrels, runs, **kw)
        if any(str(m) == "AP" for m in measures):
            ev.values[:] = {"optimistic": 0.75, "pessimistic": 0.25}.get(ties, 0.5) + (0.125 if residual else 0.0)
        return ev

    monkeypatch.setattr(options, "evaluate", evaluate)
    qrels, runs = tie_collection()
    cmp = comparison.compare(qrels, runs, ["AP", "MP"], test="sign", ties="optimistic", holes=True, progress=False)
    assert cmp.notes == ["AP: computed with ties='optimistic'"]  # its label does not show it
    assert (("AP",), "optimistic", "nonrel", False) in calls  # the table's AP
    assert (cmp.table["AP"] == 0.75).all()
    assert (cmp.sensitivity.per_run[("AP", "tie_spread")] == 0.5).all()
    # the fake's residual=True value, with the comparison's tie order
    assert (cmp.sensitivity.per_run[("AP", "residual")] == 0.875).all()
    assert (("AP",), "optimistic", "nonrel", True) in calls


def test_extra_columns_of_an_evaluation_are_not_compared():
    """An evaluation may carry per-query extras as columns (the standard error of ties='expected')."""
    qrels, runs = tie_collection()
    ev = experiments.evaluate(["MP", "P@2"], qrels, runs, progress=False)
    ev.extras = {1: (0, "se")}  # column 1 read as an extra of column 0
    kept = options.without_extras(ev)
    assert kept.labels == ["MP"] and kept.values.shape == (3, 1, N_TOPICS)
    assert (kept.values[:, 0] == ev.values[:, 0]).all()
