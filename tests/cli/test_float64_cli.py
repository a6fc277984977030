"""The main command's standard measures on the float64 ranking in trec_eval's order (issue 34, item 1)."""
from __future__ import annotations

import pytest

from irmeasures_markov.cli import main
from irmeasures_markov.experiments import evaluate
from irmeasures_markov.io import read_trec_qrels, read_trec_run

# q1: a and z a float64 step apart (one float32 value): float64 ranks a first, float32 a tie that docid order
# (descending) gives to z; q2 unanswered (0 for every measure)
QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq1 0 d -1\nq2 0 a 1\n"
RUN = "q1 Q0 a 1 1.000000002 t\nq1 Q0 z 2 1.000000001 t\nq1 Q0 b 3 1.0 t\nq1 Q0 c 4 0.5 t\nq1 Q0 d 5 0.25 t\n"
MEASURES = ["AP", "P@1", "RR", "nDCG@2", "R@1", "Success@1", "IPrec@0.5", "SetP", "NumRet", "Judged@2", "MP"]


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def _table(out: str, by_query: bool = False) -> dict:
    rows = [line.split("\t") for line in out.splitlines()]
    return {tuple(row[:-1]): float(row[-1]) for row in rows} if by_query else {row[0]: float(row[1]) for row in rows}


def test_main_command_prints_what_evaluate_prints(files, capsys):
    assert main([*files, *MEASURES, "-p", "-1"]) == 0
    printed = _table(capsys.readouterr().out)
    ev = evaluate(MEASURES, read_trec_qrels(files[0]), {"r": read_trec_run(files[1])})
    want = {}
    for j, m in enumerate(ev.measures):
        aggregator = m.aggregator()  # the mean, the sum for NumRet
        for v in ev.values[0, j].tolist():
            aggregator.add(v)
        want[ev.labels[j]] = aggregator.result()
    assert printed == want
    # float64: a (relevant) first, so AP = (1/1 + 2/4) / 2 over q1, 0 for q2
    assert printed["AP"] == 0.375 and printed["P@1"] == 0.5 and printed["R@1"] == 0.25


def test_by_query_rows_are_the_float64_values(files, capsys):
    assert main([*files, "AP", "RR", "Success@1", "-q", "-p", "-1"]) == 0
    rows = _table(capsys.readouterr().out, by_query=True)
    assert rows[("q1", "AP")] == 0.75 and rows[("q1", "RR")] == 1.0 and rows[("q1", "Success@1")] == 1.0
    assert rows[("q2", "AP")] == 0.0 and rows[("all", "AP")] == 0.375


def test_measures_left_to_ir_measures_are_named_in_one_warning(files, capsys):
    assert main([*files, "AP", "infAP", "SetAP"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "infAP, SetAP: computed by ir_measures" in err and "float32" in err


def test_compare_and_pool_reduction_print_the_same_values(files, tmp_path, capsys):
    other = tmp_path / "B.run"
    other.write_text("q1 Q0 c 1 2 t\nq2 Q0 a 1 1 t\n")
    assert main([*files, "AP", "R@1", "-p", "-1"]) == 0
    single = _table(capsys.readouterr().out)
    assert main(["compare", files[0], files[1], str(other), "-m", "AP", "R@1", "-o", "csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()]
    assert (float(rows[1][2]), float(rows[1][4])) == (single["AP"], single["R@1"]) == (0.375, 0.25)
    assert main(["pool-reduction", files[0], files[1], str(other), "-m", "AP", "R@1", "--percents", "50",
                 "--no-progress", "-p", "-1"]) == 0
    full = [line.split("\t") for line in capsys.readouterr().out.splitlines()[1:3]]
    assert [float(row[3]) for row in full] == [(0.375 + 0.75) / 2, (0.25 + 0.75) / 2]
