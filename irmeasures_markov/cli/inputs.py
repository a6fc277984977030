"""The command line's inputs: qrels (a file or an ir_datasets id) and runs (a file, or ``-`` for stdin).

Everything that can go wrong while reading becomes a
:class:`~irmeasures_markov.cli.errors.CliError` or an
:class:`~irmeasures_markov.errors.InputError` naming the file (or the
ir_datasets id), so the boundary prints one line instead of a traceback.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from importlib import resources
from typing import Dict

from ..errors import InputError
from ..io import read_trec_qrels, read_trec_run
from .errors import CliError, reading
from .output import warn

__all__ = ["STDIN", "sample_path", "load_qrels", "load_run", "check_overlap"]

#: the run (or qrels) argument that means standard input
STDIN = "-"
#: relevance grades are signed 32-bit integers, as for trec_eval and pytrec_eval
GRADE_MIN, GRADE_MAX = -2 ** 31, 2 ** 31 - 1


def sample_path(name: str) -> str:
    """Path of a file bundled in ``irmeasures_markov/data`` (sample.qrels, sample.run, sample_rates.tsv)."""
    return str(resources.files("irmeasures_markov") / "data" / name)


def _display(spec: str) -> str:
    return "<stdin>" if spec == STDIN else spec


def load_qrels(spec: str) -> Dict[str, Dict[str, int]]:
    """Qrels from a file (plain or compressed; ``-``: stdin) or, when no such file exists, an ir_datasets id."""
    if spec == STDIN or os.path.exists(spec):
        with reading(_display(spec)):
            qrels = read_trec_qrels(spec)
    else:
        qrels = _qrels_from_ir_datasets(spec)
    _check_grades(qrels, _display(spec))
    if not any(qrels.values()):
        raise CliError(f"{_display(spec)}: the qrels hold no judgments: nothing can be evaluated")
    return qrels


def _qrels_from_ir_datasets(spec: str) -> Dict[str, Dict[str, int]]:
    try:
        import ir_datasets
    except ImportError:
        raise CliError(f"{spec}: no such file (and ir_datasets, which would read it as a dataset id, "
                       f"is not installed)") from None
    try:
        dataset = ir_datasets.load(spec)
    except KeyError:
        raise CliError(f"{spec}: no such file, and not an ir_datasets id") from None
    if not dataset.has_qrels():
        raise CliError(f"{spec}: the ir_datasets dataset has no qrels")
    out: Dict[str, Dict[str, int]] = {}
    try:
        for q in dataset.qrels_iter():
            out.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    except Exception as exc:  # downloads fail in many ways (offline, moved, checksum): name the dataset
        raise CliError(f"{spec}: ir_datasets could not provide the qrels ({type(exc).__name__}: "
                       f"{str(exc)[:200]}); download them once while online, or give a qrels file") from None
    return out


def _check_grades(qrels, name: str) -> None:
    """Grades of qrels that did not come through the file reader (ir_datasets) must fit in int32 too."""
    for qid, docs in qrels.items():
        for docid, grade in docs.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or not GRADE_MIN <= grade <= GRADE_MAX:
                raise InputError(f"{name}: relevance grade {str(grade)[:24]!r} of document {docid[:40]!r} for "
                                 f"query {qid[:40]!r} is not an integer in the signed 32-bit range "
                                 f"{GRADE_MIN}..{GRADE_MAX}")


def load_run(spec: str) -> Dict[str, Dict[str, float]]:
    """A run from a file (plain or compressed) or ``-`` (standard input)."""
    with reading(_display(spec)):
        if spec == STDIN and not _READERS_TAKE_STDIN:
            return _run_from_stdin()
        return read_trec_run(spec)


# The file readers of irmeasures_markov.readers read '-' as standard input themselves.
_READERS_TAKE_STDIN = importlib.util.find_spec(f"{__package__.rsplit('.', 1)[0]}.readers") is not None


def _run_from_stdin() -> Dict[str, Dict[str, float]]:
    """Standard input through the path-based reader (for readers that cannot read stdin themselves)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stdin.run")
        with open(path, "wb") as fh:
            shutil.copyfileobj(sys.stdin.buffer, fh)
        try:
            return read_trec_run(path)
        except InputError as exc:
            raise InputError(str(exc).replace(path, "<stdin>")) from None


def check_overlap(qrels, run, qrels_name: str, run_name: str) -> None:
    """Warn when the run cannot score anything: every qrels query would silently score 0."""
    if not any(run.values()):
        warn(f"{_display(run_name)}: the run is empty: every query of the qrels scores 0")
    elif not any(docs for q, docs in run.items() if q in qrels):
        warn(f"{_display(run_name)} and {_display(qrels_name)} share no query: every query of the qrels "
             f"scores 0 (is it the right qrels for this run?)")
