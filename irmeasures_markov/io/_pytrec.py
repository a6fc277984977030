"""Qrels and runs in the form pytrec_eval can take without crashing the process.

pytrec_eval (trec_eval compiled into the interpreter, which computes
ir_measures' own AP, P@k, nDCG, ...) has two inputs that kill the whole
process instead of raising an exception:

* an id holding a lone surrogate: the readers decode bytes that are not valid
  UTF-8 with ``surrogateescape``, so that distinct byte strings stay distinct
  ids, and pytrec_eval segfaults on them;
* a qrels topic whose grades are all negative: trec_eval sizes its per-grade
  counts by the largest grade and writes out of bounds.

Every place where this package hands inputs to pytrec_eval (the command line,
[`RelevanceEvaluator`][irmeasures_markov.RelevanceEvaluator],
[`evaluate`][irmeasures_markov.experiments.evaluate]) goes through
`qrels_for_pytrec_eval` and `run_for_pytrec_eval`:

* an id that is not ASCII is handed over as its bytes read as Latin-1, one
  character per byte.  ASCII ids are unchanged, so the mapping needs no
  decision per input and qrels and runs converted apart still match; it is a
  bijection (`id_from_pytrec_eval` inverts it), and pytrec_eval's
  UTF-8 of those characters orders like the original bytes, so trec_eval's
  docid tie-break is unchanged;
* a topic whose grades are all negative gets one more judgment, of grade 0,
  for `ABSENT_DOCID`, a docid no TREC file can hold (it contains a
  tab): nothing is relevant there either way, and the topic keeps its place
  in the average with the values trec_eval gives a topic without relevant
  documents (0).

ir_measures hands ERR@k and ``nDCG(dcg='exp-log2')@k`` to gdeval.pl, which reads
numeric query ids only and dies on any other ("format error on line N", a
``CalledProcessError`` that looks like a bug of the caller): `check_gdeval_ids`
refuses such ids first, with gdeval's restriction, on every front end.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io._run_columns import RunColumns, exact_dict

__all__ = [
    "ABSENT_DOCID",
    "check_gdeval_ids",
    "gdeval_measures",
    "id_for_pytrec_eval",
    "id_from_pytrec_eval",
    "qrels_for_pytrec_eval",
    "run_for_pytrec_eval",
]

#: Judged (grade 0) in topics whose grades are all negative; fields of TREC files never hold a tab.
ABSENT_DOCID = "\t(judgment added so that no topic has only negative grades)"


def id_for_pytrec_eval(text: str) -> str:
    """``text`` as pytrec_eval can take it: unchanged if ASCII, else its bytes read as Latin-1.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Raises
    ------
    InputError
        ``text`` holds a lone surrogate that stands for no byte (outside
        U+DC80..U+DCFF, what ``surrogateescape`` makes of bytes that are not
        UTF-8): it has no bytes to hand over, and pytrec_eval would kill the
        process on it.
    """
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("latin-1")
    except UnicodeEncodeError:
        raise InputError(f"id {text!r} holds a lone surrogate that stands for no byte, which pytrec_eval cannot "
                         "take (an id read from a file carries each byte that is not UTF-8 as one of "
                         "U+DC80..U+DCFF)") from None


def id_from_pytrec_eval(text: str) -> str:
    """The original id of `id_for_pytrec_eval`'s result.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    if text.isascii():
        return text
    return text.encode("latin-1").decode("utf-8", "surrogateescape")


def _ascii(keys) -> bool:
    return "".join(keys).isascii()


def _docs(docs: Mapping[str, object]) -> Mapping[str, object]:
    if _ascii(docs):
        return docs
    return {id_for_pytrec_eval(d): v for d, v in docs.items()}


def qrels_for_pytrec_eval(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, Mapping[str, int]]:
    """The qrels with ids pytrec_eval takes and no topic whose grades are all negative.

    Topics that need no change are the caller's own dicts (not copied).

    Parameters
    ----------
    qrels : mapping
        ``{qid: {docid: grade}}``, checked (str ids, int grades).

    Returns
    -------
    dict
        ``{qid: {docid: grade}}`` with ids as `id_for_pytrec_eval` gives
        them, and `ABSENT_DOCID` judged 0 in topics whose grades are all
        negative.
    """
    out: dict[str, Mapping[str, int]] = {}
    for q, docs in qrels.items():
        converted = _docs(docs)
        if docs and max(docs.values()) < 0:
            converted = dict(converted)
            converted[ABSENT_DOCID] = 0
        out[id_for_pytrec_eval(q)] = converted
    return out


def run_for_pytrec_eval(run: Mapping[str, Mapping[str, float]]) -> Mapping[str, Mapping[str, float]]:
    """The run with ids pytrec_eval takes; the run itself when every id is ASCII.

    Parameters
    ----------
    run : mapping
        ``{qid: {docid: score}}`` with str ids.

    Returns
    -------
    mapping
        ``run`` itself, or a copy with ids as `id_for_pytrec_eval` gives them;
        a [`RunColumns`][irmeasures_markov.io.RunColumns] as a dict
        (pytrec_eval and ``ir_measures`` take only dicts).
    """
    if isinstance(run, RunColumns):
        run = exact_dict(run)
    if all(q.isascii() and _ascii(docs) for q, docs in run.items()):
        return run
    return {id_for_pytrec_eval(q): _docs(docs) for q, docs in run.items()}


#: a query id gdeval.pl reads: digits after the last '-' (it dies on any other, "format error on line N")
_GDEVAL_TOPIC = re.compile(r"[0-9]+")


def gdeval_measures(measures: Iterable) -> list:
    """The measures among ``measures`` that ir_measures computes with gdeval.pl (ERR@k, ``nDCG(dcg='exp-log2')@k``):
    those `check_gdeval_ids` is about."""
    import ir_measures  # here: most callers have no such measure, and io's import stays light

    providers = ir_measures.DefaultPipeline.providers
    return [m for m in measures if next((p.NAME for p in providers if p.supports(m)), None) == "gdeval"]


def check_gdeval_ids(gdeval: Sequence, qrels: Iterable[str] = (), run: Mapping | None = None) -> None:
    """Refuse query ids gdeval.pl cannot read, for the measures ``gdeval`` (`gdeval_measures`): the one rule of
    every front end (the command line, ``compare``, ``experiments.evaluate``, grids, ``RelevanceEvaluator``).

    Parameters
    ----------
    gdeval : sequence of ir_measures.Measure
        The measures ir_measures computes with gdeval (nothing is checked when empty).
    qrels : iterable of str
        The qrels' query ids (a qrels mapping will do).
    run : mapping, optional
        ``{qid: {docid: score}}``: the ids of its queries with a document (gdeval is given no other).

    Raises
    ------
    InputError
        An id that is not digits after its last ``-``, naming the measures and the id.
    """
    if not gdeval:
        return
    ids = list(qrels) + ([q for q, docs in run.items() if len(docs)] if run is not None else [])
    bad = next((q for q in ids if not _GDEVAL_TOPIC.fullmatch(q.rsplit("-", 1)[-1])), None)
    if bad is not None:
        raise InputError(f"{', '.join(map(str, gdeval))}: ir_measures computes {'it' if len(gdeval) == 1 else 'them'} "
                         f"with gdeval, which reads numeric query ids only (digits after the last '-'), and query "
                         f"{bad!r} is not one; number the queries, in qrels and run alike")
