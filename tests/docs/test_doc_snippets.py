"""Every code block of README.md and docs/*.md runs as printed.

Each page runs in its own process (tests/doc_snippets.py states the rules:
python blocks in page order in one namespace, bash blocks that call
``irmeasures-markov``, ``<!-- not-run: REASON -->`` for excerpts,
``<!-- needs-data -->`` for blocks that need the TREC data), in a temporary
working directory holding the files the snippets name: the package's bundled
sample qrels and run as ``qrels.txt`` and ``run.txt`` (and compressed, and as
a directory of runs), its sample rates as ``rates.tsv``, document lengths for
every sample document, a small click log. A failure names the page and the
line of the block.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "tests" / "doc_snippets.py"
SAMPLE = REPO / "irmeasures_markov" / "data"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

sys.path.insert(0, str(RUNNER.parent))
from doc_snippets import MARK, blocks, runs_in_shell  # noqa: E402


def _runnable(page: Path) -> bool:
    return any(b.lang == "python" or (b.lang in ("bash", "sh", "shell") and runs_in_shell(b.code))
               for b in blocks(page.read_text(encoding="utf-8")))


def _run_lines(text: str, tag: str, score) -> str:
    """The sample run with new scores, ``score(score, rank)``, and tag: another run of the same documents."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) == 6:
            out.append(" ".join(f[:4] + [repr(score(float(f[4]), int(f[3]))), tag]))
    return "\n".join(out) + "\n"


def make_workdir(d: Path) -> None:
    qrels = (SAMPLE / "sample.qrels").read_text()
    run = (SAMPLE / "sample.run").read_text()
    (d / "qrels.txt").write_text(qrels)
    (d / "run.txt").write_text(run)
    (d / "run.txt.gz").write_bytes(gzip.compress(run.encode()))
    (d / "run.gz").write_bytes(gzip.compress(run.encode()))
    other = _run_lines(run, "other", lambda s, r: -s)  # reversed: a worse run
    (d / "runA").write_text(run)
    (d / "runB").write_text(other)
    (d / "runs").mkdir()
    (d / "runs" / "input.bm25").write_text(run)
    (d / "runs" / "input.dph").write_text(other)
    (d / "runs" / "input.mix.gz").write_bytes(
        gzip.compress(_run_lines(run, "mix", lambda s, r: s / 2 + (r % 3) / 10).encode()))
    (d / "rates.tsv").write_text((SAMPLE / "sample_rates.tsv").read_text())
    (d / "r.tsv").write_text((SAMPLE / "sample_rates.tsv").read_text())
    docids = sorted({line.split()[2] for line in (qrels + run).splitlines() if len(line.split()) >= 3})
    lengths = "".join(f"{doc}\t{100 + (i * 37) % 900}\n" for i, doc in enumerate(docids))
    (d / "doclen.tsv").write_text(lengths)
    (d / "doclen.tsv.gz").write_bytes(gzip.compress(lengths.encode()))
    # a small click log in the package's JSONL and TSV formats and in WSCD's
    sessions = []
    for i in range(40):
        shown = [f"d{(i + k) % 12}" for k in range(5)]
        ranks = [1 + (i * 7) % 5, 1 + i % 3, 1 + (i * 3) % 4][: i % 4]  # 0 to 3 clicks, back and forth
        ranks = [r for k, r in enumerate(ranks) if k == 0 or r != ranks[k - 1]]
        clicks = [{"rank": r, "time": 2.0 + 9 * k + i % 5, "dwell": 5.0 + i % 7} for k, r in enumerate(ranks)]
        sessions.append({"session_id": f"s{i}", "query_id": f"q{i % 3}", "shown": shown,
                         "clicks": clicks, "ended": True})
    (d / "clicks.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sessions))
    (d / "train.txt").write_text("".join(
        f"{s['query_id']}\t{','.join(s['shown'])} : {','.join(s['shown'][c['rank'] - 1] for c in s['clicks'])}\n"
        for s in sessions[:30]))
    (d / "test.txt").write_text("".join(
        f"{s['query_id']}\t{','.join(s['shown'])} : {','.join(s['shown'][c['rank'] - 1] for c in s['clicks'])}\n"
        for s in sessions[30:]))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("doc-snippets")
    make_workdir(d)
    return d


def _data_dir() -> str:
    from irmeasures_markov.testing import shared_data_dir
    found = shared_data_dir()
    return str(found) if found else ""


@pytest.mark.slow  # runs every page's snippets in a child process
@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=lambda p: p.name)
def test_page_snippets_run_as_printed(page, workdir, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for f in workdir.iterdir():  # a fresh copy per page: a snippet may write files
        target = cwd / f.name
        if f.is_dir():
            target.mkdir()
            for g in f.iterdir():
                (target / g.name).write_bytes(g.read_bytes())
        else:
            target.write_bytes(f.read_bytes())
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["IRMEASURES_MARKOV_CACHE"] = str(tmp_path / "cache")
    env.pop("IRMEASURES_MARKOV_FITS", None)
    proc = subprocess.run([sys.executable, str(RUNNER), str(page), _data_dir()], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    report = proc.stdout + proc.stderr
    fails = [chunk for chunk in re.split(r"(?m)^(?=RAN  |SKIP |FAIL )", report) if chunk.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, (
        f"{page.relative_to(REPO)}: {len(fails)} block(s) failed as printed:\n" + "\n".join(fails)
        + ("" if fails else report[-3000:]))
    skipped = [line for line in report.splitlines() if line.startswith("SKIP")]
    for line in skipped:  # every excerpt marker gives its reason
        assert "not-run: " not in line or line.split("not-run: ", 1)[1].strip(), line


def test_markers_are_rare_and_explained():
    """Excerpt markers are the exception: each gives a reason."""
    n = 0
    for page in PAGES:
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            m = MARK.match(line)
            if m and m.group(1) == "not-run":
                n += 1
                assert m.group(2), f"{page.name}:{i}: not-run marker without a reason"
    assert n <= 12, f"{n} not-run markers: make the blocks runnable instead"


def test_runner_finds_blocks_and_their_lines():
    text = ("x\n```python\na = 1\n```\n<!-- not-run: needs a cluster -->\n```python\nb\n```\n"
            "  ```bash\n  irmeasures-markov demo\n  ```\n")
    bs = blocks(text)
    assert [(b.lang, b.line, b.mark) for b in bs] == [("python", 3, None), ("python", 7, "not-run"), ("bash", 10, None)]
    assert bs[1].reason == "needs a cluster" and bs[2].code == "irmeasures-markov demo\n"


def test_console_excerpts_mark_dropped_rows():
    """The ph-compare excerpt lists consecutive topics, or says with '…' that rows were left out."""
    text = (REPO / "docs" / "stopping-time.md").read_text(encoding="utf-8")
    rows = text.split("topic\tE1[", 1)[1].split("\nmean\t", 1)[0].splitlines()[1:]
    previous = None
    for row in rows:
        if row.startswith("…"):
            previous = None
            continue
        topic = int(row.split("\t")[0])
        assert previous is None or topic == previous + 1, f"row {topic} follows {previous} without '…'"
        previous = topic


def test_pool_reduction_is_documented():
    cli = (REPO / "docs" / "command-line.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "| `irmeasures-markov pool-reduction" in cli and "## pool-reduction" in cli
    assert "irmeasures-markov pool-reduction qrels.txt" in readme


def test_cwl_cross_check_figure_is_the_printed_one():
    """integration/reproduce/crosscheck_cwl_tbg.py prints 4.06e-14 for the time-model check (TREC-8, seeded lengths)."""
    tbg = (REPO / "docs" / "time-biased-gain.md").read_text(encoding="utf-8")
    assert "largest relative difference is 4·10⁻¹⁴" in tbg and "~1·10⁻¹⁴" not in tbg


def test_jsonl_example_is_a_jsonl_file(tmp_path):
    """The JSONL example of interaction-logs.md is one session per line: read_log reads it as printed."""
    from irmeasures_markov.calibration import read_log
    text = (REPO / "docs" / "interaction-logs.md").read_text(encoding="utf-8")
    block = text.split("**JSONL**", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    for line in block.splitlines():
        json.loads(line)
    (tmp_path / "example.jsonl").write_text(block, encoding="utf-8")
    assert len(read_log(tmp_path / "example.jsonl").sessions) == len(block.splitlines()) == 2
