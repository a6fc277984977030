"""``compare --test tukey|anova``, ``--matrix`` and ``--plot`` on the command line."""
import io
import json
from contextlib import redirect_stdout

import pandas as pd
import pytest
from comparison_inputs import collection, write_collection

from irmeasures_markov import comparison
from irmeasures_markov.cli import main


def cli(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    qrels, runs = collection(n_topics=12, n_runs=4)
    return qrels, runs, write_collection(tmp_path_factory.mktemp("tukey"), qrels, runs)


def test_cli_tukey_matches_python(files, tmp_path):
    qrels, runs, (qpath, rdir) = files
    matrix = tmp_path / "m.tsv"
    code, out = cli("compare", str(qpath), str(rdir), "-m", "AP", "P@5", "--test", "tukey", "--resamples", "400",
                    "-o", "jsonl", "--pairs", "--matrix", str(matrix))
    assert code == 0
    got = [json.loads(line) for line in out.splitlines()]
    cmp = comparison.compare(qrels, runs, ["AP", "P@5"], test="tukey", n_resamples=400)
    assert [g["pvalue"] for g in got] == cmp.tests.pvalue.tolist()
    assert all(g["test"] == "tukey" and g["correction"] == "none" for g in got)
    frame = pd.read_csv(matrix, sep="\t")
    assert list(frame.columns[:2]) == ["measure", "run"] and len(frame) == 2 * len(runs)
    code, out = cli("compare", str(qpath), str(rdir), "-m", "AP", "--test", "anova")
    assert code == 0 and "Tukey groups" in out


def test_cli_plot(files, tmp_path):
    pytest.importorskip("matplotlib")
    _, _, (qpath, rdir) = files
    code, _ = cli("compare", str(qpath), str(rdir), "-m", "AP", "P@5", "--test", "anova", "--plot",
                  str(tmp_path / "p.png"))
    assert code == 0 and (tmp_path / "p.png").stat().st_size > 0


def test_cli_tukey_errors(files, capsys):
    _, _, (qpath, rdir) = files
    assert cli("compare", str(qpath), str(rdir), "-m", "AP", "--test", "tukey", "--correction", "holm")[0] == 2
    assert "takes no correction" in capsys.readouterr().err
    assert cli("compare", str(qpath), str(rdir), "-m", "AP", "--test", "anova", "--alternative", "less")[0] == 2
    assert "two-sided" in capsys.readouterr().err
