"""Ids that are not UTF-8 (issue 34, item 7): the public dict readers refuse them, naming file, line and bytes.

A dict holding such an id (its bytes as lone surrogates, from ``surrogateescape``) kills the process inside
pytrec_eval when given to ``ir_measures.calc_aggregate([AP], ...)``: the crash path runs in a child process,
which must now end with a clean ValueError (exit 1), never a signal.  The package's own paths stay byte-exact
(tests/cli/test_boundary_cli.py; the hand-off to pytrec_eval is tests/io/test_pytrec_inputs.py).
"""
import gzip
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from irmeasures_markov.io import (
    InputError,
    load_qrels,
    read_run_columns,
    read_trec_qrels,
    read_trec_run,
    to_qrels_dict,
    to_run_dict,
)
from irmeasures_markov.io._normalise import qrels_dict, run_dict
from irmeasures_markov.io._pytrec import id_for_pytrec_eval, qrels_for_pytrec_eval, run_for_pytrec_eval
from irmeasures_markov.io._run_columns import exact_dict

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = b"q1 Q0 d\xff 1 1.0 t\nq1 Q0 e 2 0.5 t\n"
QRELS = b"q1 0 d\xff 0\nq1 0 e 1\n"
GOOD_RUN = b"q1 Q0 d 1 1.0 t\nq1 Q0 e 2 0.5 t\n"
GOOD_QRELS = b"q1 0 e 1\n"


def write(tmp_path, name, data, gz):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def child(code):
    """Run ``code`` in a fresh interpreter: (exit status, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=120)
    return p.returncode, p.stderr


#: in memory, through our own hand-offs to pytrec_eval: a surrogate that stands for no byte is refused, one that
#: stands for a byte is handed over as that byte
IN_MEMORY = """
import warnings
import irmeasures_markov as pytrec_eval
from irmeasures_markov.io import InputError
warnings.simplefilter("ignore")
for lone in ("\\ud800", "x\\udfff"):
    for qrels, run in (({"1": {lone: 1, "x": 0}}, {"1": {"x": 0.5}}), ({"1": {"x": 0}}, {lone: {"x": 0.5}})):
        try:
            pytrec_eval.RelevanceEvaluator(qrels, {"map", "MP"}).evaluate(run)
        except InputError as e:
            assert "lone surrogate" in str(e), e
        else:
            raise SystemExit("no error")
escaped = b"d\\xff".decode("utf-8", "surrogateescape")
ev = pytrec_eval.RelevanceEvaluator({"1": {escaped: 1, "x": 0}}, {"map"})
assert ev.evaluate({"1": {escaped: 1.0, "x": 0.5}}) == {"1": {"map": 1.0}}
"""


def test_the_old_crash_path_is_a_clean_error(tmp_path):
    """Run and qrels, plain and gzip: each read ends in a ValueError, and the child process lives on; so do
    in-memory ids with lone surrogates given to our own evaluator."""
    cases = []
    for bad in ("run", "qrels"):
        for gz in (False, True):
            run = write(tmp_path, f"{bad}{gz:d}.run", RUN if bad == "run" else GOOD_RUN, gz and bad == "run")
            qrels = write(tmp_path, f"{bad}{gz:d}.qrels", QRELS if bad == "qrels" else GOOD_QRELS,
                          gz and bad == "qrels")
            cases.append((str(run), str(qrels), (run if bad == "run" else qrels).name))
    status, err = child(textwrap.dedent(f"""
        import sys
        import ir_measures
        from irmeasures_markov.io import read_run_columns, read_trec_qrels, read_trec_run, to_qrels_dict, to_run_dict
        readers = [(read_trec_qrels, read_trec_run), (to_qrels_dict, to_run_dict),
                   (read_trec_qrels, lambda path: read_run_columns(path).to_dict())]
        for read_qrels, read_run in readers:
            for run, qrels, _ in {cases!r}:
                try:
                    print(ir_measures.calc_aggregate([ir_measures.AP], read_qrels(qrels), read_run(run)))
                except ValueError as e:
                    print(type(e).__name__, e, file=sys.stderr)
    """) + IN_MEMORY)
    assert status == 0, (status, err)     # -11 (SIGSEGV) before
    lines = [line for line in err.splitlines() if line.startswith("InputError")]
    assert len(lines) == 3 * len(cases), err
    for k, line in enumerate(lines):
        run, qrels, name = cases[k % len(cases)]
        if k >= 2 * len(cases) and ".run" in name:   # RunColumns.to_dict: no file to name
            assert line.startswith("InputError id b'd\\xff' is not valid UTF-8"), line
        else:
            assert line.startswith("InputError ") and f"{name}:1: id b'd\\xff' is not valid UTF-8" in line, line
        assert "byte-exactly" in line


@pytest.mark.parametrize("gz", [False, True])
def test_every_public_dict_reader_refuses_and_names_the_line(tmp_path, gz):
    run = write(tmp_path, "run", b"q1 Q0 a 1 2 t\n" + RUN, gz)
    qrels = write(tmp_path, "qrels", b"q1 0 a 1\n" + QRELS, gz)
    for read, path, line in ((read_trec_run, run, 2), (read_trec_qrels, qrels, 2),
                             (lambda p: load_qrels("x", path=p), qrels, 2)):
        with pytest.raises(InputError, match=rf"^{re.escape(str(path))}:{line}: id b'd\\xff' is not valid UTF-8") \
                as info:
            read(path)
        assert isinstance(info.value, ValueError)
    qid = write(tmp_path, "qid", b"q\xfe1 Q0 a 1 1 t\n", gz)
    with pytest.raises(InputError, match=r":1: id b'q\\xfe1' is not valid UTF-8"):
        read_trec_run(qid)


def test_grammar_errors_come_first_and_other_fields_do_not_count(tmp_path):
    with pytest.raises(InputError, match=r":2: .*twice"):
        read_trec_run(write(tmp_path, "dup", b"q Q0 d\xff 1 2.0 t\nq Q0 d\xff 2 1.0 t\n", False))
    # the tag and the qrels' iteration field are not ids: bytes that are not UTF-8 there are read as before
    assert read_trec_run(write(tmp_path, "tag", b"q Q0 d 1 1.0 t\xff\n", False)) == {"q": {"d": 1.0}}
    assert read_trec_qrels(write(tmp_path, "iter", b"q \xff d 1\n", False)) == {"q": {"d": 1}}
    long_id = b"d" * 60 + b"\xff"
    with pytest.raises(InputError, match=r"id b'd{40}'… is not valid UTF-8"):
        read_trec_run(write(tmp_path, "long", b"q Q0 " + long_id + b" 1 1.0 t\n", False))


def test_the_evaluation_paths_stay_byte_exact_and_dicts_for_users_refuse(tmp_path):
    run, qrels = write(tmp_path, "run", RUN, True), write(tmp_path, "qrels", QRELS, False)
    docids = [d.encode("utf-8", "surrogateescape") for d in read_run_columns(run)["q1"]]
    assert docids == [b"d\xff", b"e"]
    assert run_dict(run) == exact_dict(read_run_columns(run))
    assert [d.encode("utf-8", "surrogateescape") for d in qrels_dict(qrels)["q1"]] == [b"d\xff", b"e"]
    # what a user gets as dicts refuses, as the dict readers do
    for make in (lambda: to_run_dict(run), lambda: to_qrels_dict(qrels)):
        with pytest.raises(InputError, match=r":1: id b'd\\xff' is not valid UTF-8"):
            make()
    with pytest.raises(InputError, match=r"^id b'd\\xff' is not valid UTF-8"):
        read_run_columns(run).to_dict()
    good = write(tmp_path, "good", GOOD_RUN, False)
    assert to_run_dict(good) == read_run_columns(good).to_dict() == exact_dict(read_run_columns(good))


def test_ids_for_pytrec_eval_never_hold_a_lone_surrogate():
    escaped = b"d\xff".decode("utf-8", "surrogateescape")
    assert id_for_pytrec_eval(escaped).encode("utf-8") == b"d\xc3\xbf"
    for lone in ("\ud800", "x\udfff", "\udc00"):   # surrogates that stand for no byte: no bytes to hand over
        with pytest.raises(InputError, match="lone surrogate"):
            id_for_pytrec_eval(lone)
        with pytest.raises(InputError, match="lone surrogate"):
            run_for_pytrec_eval({"q": {lone: 1.0}})
        with pytest.raises(InputError, match="lone surrogate"):
            qrels_for_pytrec_eval({lone: {"d": 1}})
