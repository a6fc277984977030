"""--ties, --unjudged, --residual (main command and compare) and compare --ties/--holes reports.

Values are checked against the default path on runs reordered by hand (ties) and on the measure string that
sets the parameter itself; judged shares are counted by hand.
"""
import csv
import io
import json

import pytest

from irmeasures_markov.cli import main

N_TOPICS = 8


def write_run(path, run):
    path.write_text("".join(f"{q} Q0 {d} {i} {s!r} x\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))))
    return str(path)


@pytest.fixture
def files(tmp_path):
    """A: the relevant d2 tied with d1, d3 (trec_eval order d3, d2, d1); B: d3, d2, d1 without ties; C: d2 first;
    D: an unjudged document first, then d3, d2; every topic alike."""
    qrels, runs = [], {"A": {}, "B": {}, "C": {}, "D": {}}
    for t in range(N_TOPICS):
        q = f"q{t + 1}"
        qrels += [f"{q} 0 d1 0\n", f"{q} 0 d2 1\n", f"{q} 0 d3 0\n"]
        runs["A"][q] = {"d1": 1.0, "d2": 1.0, "d3": 1.0}
        runs["B"][q] = {"d3": 3.0, "d2": 2.0, "d1": 1.0}
        runs["C"][q] = {"d2": 3.0, "d3": 2.0, "d1": 1.0}
        runs["D"][q] = {f"u{t}": 3.0, "d3": 2.0, "d2": 1.0}
    (tmp_path / "qrels").write_text("".join(qrels))
    out = {"qrels": str(tmp_path / "qrels")}
    out.update({name: write_run(tmp_path / f"{name}.run", run) for name, run in runs.items()})
    # A's tie groups in the optimistic and pessimistic orders, written as distinct scores
    out["A_opt"] = write_run(tmp_path / "A_opt.run", {q: {"d2": 3.0, "d3": 2.0, "d1": 1.0} for q in runs["A"]})
    out["A_pess"] = write_run(tmp_path / "A_pess.run", {q: {"d3": 3.0, "d1": 2.0, "d2": 1.0} for q in runs["A"]})
    return out


def values(out: str) -> dict[str, float]:
    return {line.split("\t")[0]: float(line.split("\t")[1]) for line in out.strip().splitlines()}


def test_ties_option_applies_to_our_measures_unless_they_set_it(files, capsys):
    assert main([files["qrels"], files["A"], "MP", "MP(ties='expected')@2", "AP", "SetAP", "--ties", "optimistic",
                 "-p", "-1"]) == 0
    got = capsys.readouterr()
    v = values(got.out)
    assert list(v) == ["MP(ties='optimistic')", "MP(ties='expected')@2", "AP", "SetAP"]
    assert main([files["qrels"], files["A_opt"], "MP", "AP", "-p", "-1"]) == 0
    reordered = values(capsys.readouterr().out)
    assert v["MP(ties='optimistic')"] == reordered["MP"]
    # the standard measures on the float64 ranking take the option too (issue 34 item 6: as compare applies it)
    assert v["AP"] == reordered["AP"] == 1.0
    # one warning line names the standard measures computed with it, one the measure the option does not reach
    assert got.err.splitlines()[:2] == ["irmeasures-markov: warning: AP: computed with ties='optimistic'",
                                        "irmeasures-markov: warning: SetAP: ties='optimistic' not applied (no ties, "
                                        "unjudged or residual parameter)"]
    assert main([files["qrels"], files["A"], "MP", "--ties", "pessimistic", "-p", "-1"]) == 0
    pess = values(capsys.readouterr().out)["MP(ties='pessimistic')"]
    assert main([files["qrels"], files["A_pess"], "MP", "-p", "-1"]) == 0
    assert pess == values(capsys.readouterr().out)["MP"] < v["MP(ties='optimistic')"]


def test_measure_strings_with_the_new_parameters(files, capsys):
    assert main([files["qrels"], files["D"], "M1(residual=True)", "MP(ties='expected', unjudged='rel')",
                 "-p", "-1"]) == 0
    v = values(capsys.readouterr().out)
    assert list(v) == ["M1(residual=True)", "MP(ties='expected',unjudged='rel')"]
    assert main([files["qrels"], files["D"], "M1", "MP", "--residual", "-p", "-1"]) == 0
    w = values(capsys.readouterr().out)
    assert w["M1(residual=True)"] == v["M1(residual=True)"] > 0
    assert main([files["qrels"], files["D"], "MP", "MP(unjudged='rel')", "-p", "-1"]) == 0
    base = values(capsys.readouterr().out)
    assert w["MP(residual=True)"] == pytest.approx(base["MP(unjudged='rel')"] - base["MP"], abs=1e-15)


@pytest.mark.parametrize("command", [[], ["compare"]])
@pytest.mark.parametrize("option, allowed", [
    ("--ties", "'docid', 'optimistic', 'pessimistic', 'expected'"),
    ("--unjudged", "'nonrel', 'drop', 'rel', 'range'")])
def test_bad_choices_name_the_option_and_the_allowed_values(files, capsys, command, option, allowed):
    runs = [files["A"], files["B"]] if command else [files["A"]]
    measures = ["-m", "MP"] if command else ["MP"]
    assert main(command + [files["qrels"], *runs, *measures, option, "best"]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: invalid choice: 'best'" in err and allowed in err


@pytest.mark.parametrize("command", [[], ["compare"]])
def test_residual_with_unjudged_is_refused(files, capsys, command):
    runs = [files["A"], files["B"]] if command else [files["A"]]
    measures = ["-m", "MP"] if command else ["MP"]
    assert main(command + [files["qrels"], *runs, *measures, "--residual", "--unjudged", "rel"]) == 2
    err = capsys.readouterr().err
    assert "error: --residual" in err and "--unjudged rel" in err and err.count("\n") == 1


def test_a_combination_the_measure_refuses_names_the_measure(files, capsys):
    assert main([files["qrels"], files["A"], "MP(unjudged='range')", "--ties", "expected"]) == 2
    err = capsys.readouterr().err
    assert "MP(" in err and "range" in err and "expected" in err and err.count("\n") == 1


def test_measures_lists_the_new_parameters(capsys):
    assert main(["measures", "MP"]) == 0
    out = capsys.readouterr().out
    assert "ties: str, default 'docid'; one of 'docid', 'optimistic', 'pessimistic', 'expected'" in out
    assert "unjudged: str, default 'nonrel'; one of 'nonrel', 'drop', 'rel', 'range'" in out
    assert "residual: bool, default False" in out and "seed: int, default 0" in out


def compare(files, capsys, *extra):
    assert main(["compare", files["qrels"], files["A"], files["B"], files["C"], files["D"], "-m", "MP",
                 "--baseline", "B", "--test", "sign", *extra]) == 0
    return capsys.readouterr().out


def test_compare_ties_expected_adds_the_report_and_flags_the_pair_that_flips(files, capsys):
    out = compare(files, capsys, "--ties", "expected")
    assert "MP(ties='expected') judged@10" in out and "MP(ties='expected') spread" in out
    flagged = [line for line in out.splitlines() if " vs " in line]
    assert len(flagged) == 1 and flagged[0].startswith("MP(ties='expected'): A vs B: order and significance")
    rows = list(csv.DictReader(io.StringIO(compare(files, capsys, "--ties", "expected", "-o", "csv"))))
    by_run = {r["run"]: r for r in rows}
    # A's spread: the optimistic minus the pessimistic order, through the default path on the reordered runs
    assert main([files["qrels"], files["A_opt"], "MP", "-p", "-1"]) == 0
    opt = values(capsys.readouterr().out)["MP"]
    assert main([files["qrels"], files["A_pess"], "MP", "-p", "-1"]) == 0
    pess = values(capsys.readouterr().out)["MP"]
    assert float(by_run["A"]["MP(ties='expected') tie_spread"]) == pytest.approx(opt - pess, abs=1e-15)
    assert float(by_run["B"]["MP(ties='expected') tie_spread"]) == 0.0
    assert float(by_run["D"]["MP(ties='expected') judged@10"]) == pytest.approx(2 / 3)  # u, d3, d2: 2 judged
    pairs = list(csv.DictReader(io.StringIO(compare(files, capsys, "--ties", "expected", "-o", "csv", "--pairs"))))
    assert {(p["run_a"], p["ties"]) for p in pairs} == {("A", "order+significance"), ("C", "-"), ("D", "-")}


def test_compare_holes_flags_the_pair_within_the_residual(files, capsys):
    out = compare(files, capsys, "--holes")
    assert "MP residual" in out and "spread" in out
    flagged = [line for line in out.splitlines() if " vs " in line]
    assert [line.split(":")[1].strip() for line in flagged] == ["D vs B"]
    assert "within the residual" in flagged[0]
    recs = [json.loads(line) for line in compare(files, capsys, "--holes", "-o", "jsonl").splitlines()]
    d = next(r for r in recs if r["run"] == "D")
    assert d["residual"] > 0 and d["judged"] == pytest.approx(2 / 3) and d["judged_depth"] == 10
    pairs = [json.loads(line) for line in compare(files, capsys, "--holes", "-o", "jsonl", "--pairs").splitlines()]
    assert {p["run_a"]: p["holes_order_changes"] for p in pairs} == {"A": False, "C": False, "D": True}


def test_compare_note_for_measures_the_options_do_not_reach(files, capsys):
    assert main(["compare", files["qrels"], files["A"], files["B"], "-m", "MP", "SetAP", "--ties", "expected",
                 "-o", "csv"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("irmeasures-markov: warning: SetAP: ties='expected' not applied; no residual, tie spread or "
                       "flags (no ties, unjudged or residual parameter)")
    assert err[:-1] == ["irmeasures-markov: warning: SetAP: computed by ir_measures (pytrec_eval holds scores as "
                        "float32, which can reorder near-tied documents), not on the float64 ranking in trec_eval's "
                        "order of the other measures"]


def test_measure_string_quoting(files, capsys):
    assert main([files["qrels"], files["A"], "MP(ties='expected', seed=3)@2 M1(residual=True)"]) == 0
    assert list(values(capsys.readouterr().out)) == ["MP(seed=3,ties='expected')@2", "M1(residual=True)"]
    assert main([files["qrels"], files["A"], "MP(ties=expected)"]) == 2
    assert "string values must be quoted, e.g. ties='expected'" in capsys.readouterr().err


def test_front_ends_agree_a_measure_keeps_its_own_unjudged_and_residual(files, capsys):
    """The measure's own residual keeps --unjudged off it in the main command, compare and evaluate alike (the
    command line refused what evaluate computed)."""
    from irmeasures_markov import experiments
    m = "M1(residual=True)@5"
    ev = experiments.evaluate([m], files["qrels"], {"D": files["D"], "A": files["A"]}, ties="optimistic",
                              unjudged="rel")
    assert ev.labels == ["M1(residual=True,ties='optimistic')@5"]
    assert main([files["qrels"], files["D"], m, "--ties", "optimistic", "--unjudged", "rel", "-p", "-1"]) == 0
    assert values(capsys.readouterr().out) == {ev.labels[0]: pytest.approx(ev.values[0, 0].mean(), abs=1e-12)}
    assert main(["compare", files["qrels"], files["D"], files["A"], "-m", m, "--ties", "optimistic",
                 "--unjudged", "rel", "-o", "csv", "-p", "-1"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out.split("\n\n")[0])))
    assert [float(r[ev.labels[0]]) for r in rows] == pytest.approx(list(ev.values[:, 0].mean(axis=1)), abs=1e-12)


def test_sensitivity_report_says_what_it_needs(files, capsys):
    """M1(dist='RR') has no residual without a cutoff: --ties (which adds the report) names what the report
    needs and how to get it, and the comparison goes on (it exited 2 on residuals never asked for)."""
    assert main(["compare", files["qrels"], files["A"], files["B"], "-m", "M1(dist='RR')", "--ties", "docid"]) == 0
    out = capsys.readouterr().out
    assert ("M1(dist='RR'): no residual in the sensitivity report, which needs M1(dist='RR',residual=True)"
            in out)
    assert "give a cutoff (e.g. @1000)" in out


@pytest.mark.parametrize("measure", ["TBG(a=0.0,b=0.0,default_length=10.0,t_summary=0.0)",
                                     "PH(browse='RWBM',p=0.5,p_rel=0.7,q=0.3,q_rel=0.3,tail='inf')"])
def test_sensitivity_report_notes_a_residual_refused_on_reading(files, capsys, measure):
    """A residual a family refuses only once it reads the runs is a note too, and the other measures keep theirs."""
    assert main(["compare", files["qrels"], files["A"], files["D"], "-m", measure, "AP", "--holes"]) == 0
    out = capsys.readouterr().out
    assert f"{measure}: no residual in the sensitivity report, which needs" in out
    assert "give a cutoff" in out


def test_main_command_compare_and_evaluate_agree_with_ties_and_unjudged(files, capsys):
    """AP, P@10 and MP with --ties optimistic --unjudged rel: one value in the main command, compare and
    experiments.evaluate (the main command left AP and P@10 at ties='docid', unjudged='nonrel')."""
    from irmeasures_markov.experiments import evaluate
    from irmeasures_markov.io import read_run_columns

    options = ["--ties", "optimistic", "--unjudged", "rel"]
    assert main([files["qrels"], files["D"], "AP", "P@10", "MP", *options, "-p", "-1"]) == 0
    cli = values(capsys.readouterr().out)
    assert main(["compare", files["qrels"], files["D"], files["A"], "-m", "AP", "P@10", "MP", *options,
                 "-o", "jsonl", "--test", "none"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cmp = {r["measure"]: r["mean"] for r in records if r["run"] == "D"}
    ev = evaluate(["AP", "P@10", "MP"], files["qrels"], {"D": read_run_columns(files["D"])}, ties="optimistic",
                  unjudged="rel", progress=False)
    means = dict(zip(["AP", "P@10", "MP"], ev.means_array()[0][:3]))
    mp = "MP(ties='optimistic',unjudged='rel')"
    # the main command averages as ir_measures does (a running sum), compare and evaluate by numpy: the same
    # values to the last bits of the mean
    same = {"AP": "AP", "P@10": "P@10", mp: "MP"}
    for label, name in same.items():
        assert cli[label] == pytest.approx(cmp[label], abs=1e-15) and cmp[label] == pytest.approx(means[name],
                                                                                                abs=1e-15)
    # by hand: u (unjudged, relevant with --unjudged rel), d3, d2: AP (1 + 2/3) / 2, P@10 2/10
    assert cli["AP"] == pytest.approx(5 / 6, abs=1e-15) and cli["P@10"] == pytest.approx(0.2, abs=1e-15)
