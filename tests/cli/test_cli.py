"""The console script."""
import json
import os
import pathlib
import subprocess
import sys

from irmeasures_markov.cli import main
from irmeasures_markov.cli._inputs import sample_path

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_demo_runs(capsys):
    assert main(["demo"]) == 0
    header, *table = capsys.readouterr().out.strip().splitlines()
    assert "MP\t" in "\n".join(table) and "AP\t" in "\n".join(table)
    lines = dict(ln.split("\t") for ln in table)
    assert lines["MP(model='UNIFORM',recall=True)"] == lines["AP"]  # the paper's identity
    # one header line: the bundled data, the measures, what each column is
    assert header == ("# the bundled sample qrels (10 queries) and run (9 queries); AP and P@10 beside five variants "
                      "of MP (user models, recall) and MPcont with the sample's holding rates; columns: measure, the "
                      "mean over the 10 qrels queries (a query the run misses scores 0)")


def test_demo_header_follows_the_options(capsys):
    assert main(["demo", "AP", "-q"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.endswith("; the measures given; columns: query id, measure, value; the rows of query all: the mean "
                           "over the 10 qrels queries (a query the run misses scores 0)")
    assert main(["demo", "AP", "-q", "-n"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("columns: query id, measure, value")
    for fmt, first in (("csv", "measure,value"), ("jsonl", '{"measure": "AP"')):  # machine-readable: no header
        assert main(["demo", "AP", "-o", fmt]) == 0
        assert capsys.readouterr().out.startswith(first)


def test_demo_prints_no_warning_and_no_path(tmp_path):
    """A newcomer's first command: the table alone, no warning (every sample query has a relevant document)
    and no install path (the sample's holding rates are the registered name 'sample')."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRMEASURES_MARKOV")}
    env.update(PYTHONPATH=str(ROOT), PYTHONWARNINGS="error")
    proc = subprocess.run([sys.executable, "-m", "irmeasures_markov.cli", "demo"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stderr == ""
    header, *rows = proc.stdout.splitlines()
    measures = [line.split("\t")[0] for line in rows]
    assert header.startswith("# the bundled sample") and "MPcont(rates='sample')@10" in measures and len(measures) == 8
    assert not any(sep in proc.stdout for sep in ("/", "\\", "site-packages", "sample_rates"))


def test_sample_rates_name_is_the_bundled_file(capsys):
    """rates='sample' evaluates as the bundled rates file read by path."""
    q, r = sample_path("sample.qrels"), sample_path("sample.run")
    assert main([q, r, "MPcont(rates='sample')@10", f"MPcont(rates='{sample_path('sample_rates.tsv')}')@10",
                 "-p", "-1"]) == 0
    by_name, by_file = (float(line.split("\t")[1]) for line in capsys.readouterr().out.splitlines())
    assert by_name == by_file > 0


def test_same_arguments_as_ir_measures(capsys):
    q, r = sample_path("sample.qrels"), sample_path("sample.run")
    assert main([q, r, "MP(model='GL_AD_LID')@100", "map", "-q", "-n", "-p", "6", "-o", "jsonl"]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert {r["measure"] for r in rows} == {"MP(model='GL_AD_LID')@100", "AP"}
    assert all("query_id" in r for r in rows) and not any(r["query_id"] == "all" for r in rows)


def test_malformed_run_reports_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 oops t\n")
    assert main([sample_path("sample.qrels"), str(bad), "MP"]) == 2
    assert "bad.run:2: score 'oops' is not a number" in capsys.readouterr().err


def test_unknown_measure(capsys):
    assert main([sample_path("sample.qrels"), sample_path("sample.run"), "Nope"]) == 2
    assert "irmeasures-markov: error: " in capsys.readouterr().err


def test_bad_model_parameter(capsys):
    assert main([sample_path("sample.qrels"), sample_path("sample.run"), "MP(model='XX')"]) == 2
    assert "not one of" in capsys.readouterr().err


def test_main_command_writes_csv_as_compare_does(tmp_path, capsys):
    # two topics with P@10 = 0.1 and 0.2: the mean is 0.15000000000000002 in float64
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("".join(f"{t} 0 {t}r{i} 1\n" for t in (1, 2) for i in range(10)))
    r.write_text("".join(f"{t} Q0 {t}{'r' if i < t else 'n'}{i} {i + 1} {10 - i} x\n" for t in (1, 2)
                         for i in range(10)))
    assert main([str(q), str(r), "P@10", "MP(model='GL_AD_LID',recall=True)", "-o", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["measure,value", "P@10,0.15"]  # a header, and no float noise
    assert lines[2].startswith('"MP(model=\'GL_AD_LID\',recall=True)",')  # quoted: a measure name may hold a comma
    assert main([str(q), str(r), "P@10", "-o", "csv", "-q", "-p", "-1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["query_id,measure,value", "1,P@10,0.1", "2,P@10,0.2",
                                                     "all,P@10,0.15000000000000002"]
    assert main([str(q), str(r), "P@10"]) == 0
    assert capsys.readouterr().out == "P@10\t0.1500\n"  # tsv unchanged: no header, 4 places
