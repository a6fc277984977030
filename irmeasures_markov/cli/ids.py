"""Ids that pytrec_eval cannot take: ids holding bytes that are not valid UTF-8.

The readers decode such bytes with ``surrogateescape`` (byte-exact, distinct
byte strings stay distinct ids), but pytrec_eval, which computes ir_measures'
own measures (AP, P@k, nDCG...), crashes the process on a lone surrogate.  When
an input has such an id, every id is handed to the measures of ir_measures in a
form pytrec_eval takes: its bytes read as Latin-1, one character per byte.  That is a bijection, and
it keeps the order of ids (ties are broken by docid) the byte order trec_eval
uses; printed query ids are mapped back to the original bytes.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

from ..plugin.base import FamilyMeasure

__all__ = ["has_undecodable_ids", "evaluation_groups"]


def _latin1(s: str) -> str:
    return s.encode("utf-8", "surrogateescape").decode("latin-1")


def _original(s: str) -> str:
    return s.encode("latin-1").decode("utf-8", "surrogateescape")


def _valid(ids) -> bool:
    try:
        "".join(ids).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def has_undecodable_ids(*inputs: Dict[str, Dict[str, object]]) -> bool:
    """Whether some qid or docid of the ``{qid: {docid: value}}`` inputs holds a byte that is not UTF-8."""
    return not all(_valid(d) and all(_valid(docs) for docs in d.values()) for d in inputs)


def evaluation_groups(measures, qrels, run) -> List[Tuple[list, dict, dict, Callable[[str], str]]]:
    """``[(measures, qrels, run, original_qid), ...]``: what to hand to ir_measures, in groups.

    Normally one group, the inputs as they are.  With an undecodable id, this
    package's measures still get the inputs as they are (their length files,
    rate files and duplicate groups name the original ids); the other measures
    get the Latin-1 form, and ``original_qid`` maps their query ids back.
    """
    if not has_undecodable_ids(qrels, run):
        return [(list(measures), qrels, run, str)]
    ours = [m for m in measures if isinstance(m, FamilyMeasure)]
    native = [m for m in measures if not isinstance(m, FamilyMeasure)]

    def convert(d):
        return {_latin1(q): {_latin1(doc): v for doc, v in docs.items()} for q, docs in d.items()}
    groups = [(ours, qrels, run, str)] if ours else []
    if native:
        groups.append((native, convert(qrels), convert(run), _original))
    return groups
