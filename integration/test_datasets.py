"""Collections, the fast run loader and ir_datasets (offline) on the real TREC data."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

# the line-by-line reference: load_run_dir and io.read_trec_run share the whole-file tokeniser
from ir_datasets_home import seed_ir_datasets_home
from reference_readers import read_trec_run_lines as read_trec_run

from irmeasures_markov.io import _datasets as datasets
from irmeasures_markov.io import complete_runs, load_run_dir, read_trec_qrels


def test_fast_loader_equals_line_reader_on_all_trec8_runs(data_dir):
    """Same dicts, same query and document order, same float64 scores, for all 129 runs."""
    runs = load_run_dir(data_dir / "runs" / "trec8", progress=False, n_jobs=2)
    assert len(runs) == 129
    for name, run in runs.items():
        ref = read_trec_run(data_dir / "runs" / "trec8" / f"input.{name}.gz")
        assert run == ref, name
        assert list(run) == list(ref), name
        assert all(list(run[q]) == list(ref[q]) for q in ref), name
    assert runs["uwmt8a0"]["401"]["FT921-15860"] == 100000.15461  # float64, not float32


def test_loader_single_process_and_filter(data_dir):
    qrels = datasets.load_qrels("robust04", data_dir=data_dir)
    topics = [q for q, d in qrels.items() if any(g >= 1 for g in d.values())]
    assert len(topics) == 249 and "672" not in topics
    runs = load_run_dir(data_dir / "runs" / "robust04", progress=False, n_jobs=1, topics=topics)
    assert len(runs) == 10
    for name, run in runs.items():
        assert run == read_trec_run(data_dir / "runs" / "robust04" / f"input.{name}.gz")
    # drop one topic from one run: the paper's filter removes it, with a warning naming it
    runs = dict(runs)
    first = sorted(runs)[0]
    runs[first] = {q: d for q, d in runs[first].items() if q != topics[0]}
    kept, dropped = complete_runs(runs, topics)
    assert dropped == [first] and len(kept) == 9


def test_named_collections_local(data_dir):
    q8 = datasets.load_qrels("trec8", data_dir=data_dir)
    assert q8 == read_trec_qrels(data_dir / "qrels" / "trec8.qrels.gz")
    assert sum(len(d) for d in q8.values()) == 86830 and len(q8) == 50
    assert sum(len(d) for d in datasets.load_qrels("trec7", data_dir=data_dir).values()) == 80345
    web = datasets.load_qrels("trec10", data_dir=data_dir)
    assert {g for d in web.values() for g in d.values()} >= {0, 1, 2}
    binary = datasets.load_qrels("trec10", data_dir=data_dir, binary=True)
    assert {g for d in binary.values() for g in d.values()} == {0, 1}
    assert all(binary[q][d] == int(g >= 1) for q, docs in web.items() for d, g in docs.items())
    assert datasets.load_qrels("robust05", data_dir=data_dir) == datasets.load_qrels("trec14", data_dir=data_dir)
    t8 = datasets.load_topics("trec8", data_dir=data_dir)
    assert sorted(t8) == [str(i) for i in range(401, 451)] and t8["401"] == "foreign minorities, Germany"
    t10 = datasets.load_topics("trec10", data_dir=data_dir)
    assert sorted(t10) == [str(i) for i in range(501, 551)]


def test_trec10_without_local_file_names_the_file(tmp_path):
    (tmp_path / "qrels").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no id.*qrels/web2001\.qrels\.gz"):
        datasets.load_qrels("trec10", data_dir=tmp_path)


_CHILD = textwrap.dedent("""
    import json, os, sys
    from irmeasures_markov.io import _datasets as datasets
    from irmeasures_markov.io import read_trec_qrels
    ddir = sys.argv[1]
    out = {}
    for name in ("trec7", "trec8", "robust04", "robust05"):
        via = datasets.load_qrels(name, source="ir_datasets")
        local = read_trec_qrels(os.path.join(ddir, datasets.collection(name).qrels_file))
        topics = datasets.load_topics(name, source="ir_datasets")
        out[name] = {"equal": via == local, "n": sum(len(d) for d in via.values()), "topics": len(topics)}
    import ir_datasets.util
    out["home"] = str(ir_datasets.util.home_path())
    print(json.dumps(out))
""")


def test_ir_datasets_offline(data_dir, tmp_path):
    """Pre-seeded IR_DATASETS_HOME: trec7/trec8/robust04/robust05 qrels and topics through ir_datasets, offline.

    Runs in a subprocess (ir_datasets reads IR_DATASETS_HOME at import) with an
    unreachable proxy, so any download attempt would fail.
    """
    pytest.importorskip("ir_datasets")
    home = seed_ir_datasets_home(tmp_path / "ird", data_dir=data_dir)
    env = dict(os.environ, IR_DATASETS_HOME=str(home), IRMEASURES_MARKOV_DATA=str(tmp_path / "none"),
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", _CHILD, str(data_dir)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["home"] == str(home)
    for name, n, n_topics in (("trec7", 80345, 50), ("trec8", 86830, 50), ("robust04", None, 250),
                              ("robust05", None, 50)):
        assert out[name]["equal"], name
        assert out[name]["topics"] == n_topics, name
        if n is not None:
            assert out[name]["n"] == n
