"""Reading qrels, runs and parameter files, with errors that name the file and line.

Everything that parses text lives in :mod:`irmeasures_markov.readers`; this
module is its public face, plus the normalisation of in-memory inputs.
Measures only ever see arrays.

Files follow one grammar (see :mod:`irmeasures_markov.readers` and
docs/file-formats.md): plain, gzip, bzip2 or xz (by content), ``-`` for
standard input, a UTF-8 byte-order mark ignored, lines ending at LF (CRLF
too), fields separated by ASCII whitespace, ids compared byte for byte.
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, Mapping, Union

from .errors import InputError
from .readers.text import open_text
from .readers.trec import read_rates, read_trec_qrels, read_trec_run

__all__ = [
    "InputError",
    "open_text",
    "read_trec_run",
    "read_trec_qrels",
    "read_rates",
    "to_qrels_dict",
    "to_run_dict",
]

PathLike = Union[str, os.PathLike]


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


def to_qrels_dict(qrels) -> Dict[str, Dict[str, int]]:
    """Normalise qrels given as a dict-of-dict, a path, a DataFrame or ``Qrel`` namedtuples."""
    if isinstance(qrels, Mapping):
        return qrels  # type: ignore[return-value]
    if _is_path(qrels):
        return read_trec_qrels(qrels)
    from ir_measures.util import QrelsConverter
    conv = QrelsConverter(qrels)
    kind, err = conv.predict_type()
    if err:
        raise InputError(f"Unsupported qrels format: {err}")
    return conv.as_dict_of_dict()


def to_run_dict(run) -> Dict[str, Dict[str, float]]:
    """Normalise a run given as a dict-of-dict, a path, a DataFrame or ``ScoredDoc`` namedtuples.

    Unlike a plain dict conversion, a document listed twice for a query is an
    error rather than silently overwritten.
    """
    if isinstance(run, Mapping):
        return run  # type: ignore[return-value]
    if _is_path(run):
        return read_trec_run(run)
    if hasattr(run, "itertuples"):
        missing = [c for c in ("query_id", "doc_id", "score") if c not in run.columns]
        if missing:
            raise InputError(f"run DataFrame is missing columns {missing} (found {list(run.columns)}); "
                             "expected query_id, doc_id, score")
        dup = run.duplicated(subset=["query_id", "doc_id"])
        if dup.any():
            row = run[dup].iloc[0]
            raise InputError(f"run DataFrame: document {row['doc_id']!r} appears twice for query {row['query_id']!r}")
        out: Dict[str, Dict[str, float]] = {}
        for q, d, s in zip(run["query_id"].astype(str), run["doc_id"].astype(str), run["score"].astype(float)):
            out.setdefault(q, {})[d] = s
        return out
    if isinstance(run, Iterable):
        out = {}
        for n, item in enumerate(run, start=1):
            try:
                q, d, s = item.query_id, item.doc_id, item.score
            except AttributeError:
                raise InputError("Unsupported run format: expected a dict-of-dict {qid: {docid: score}}, a path "
                                 "to a TREC run file, a DataFrame with query_id/doc_id/score, or ScoredDoc "
                                 f"namedtuples; item {n} is {type(item).__name__}") from None
            docs = out.setdefault(q, {})
            if d in docs:
                raise InputError(f"run item {n}: document {d!r} appears twice for query {q!r}")
            docs[d] = s
        return out
    raise InputError("Unsupported run format: expected a dict-of-dict {qid: {docid: score}}, a path to a TREC "
                     "run file, a DataFrame with query_id/doc_id/score, or ScoredDoc namedtuples.")
