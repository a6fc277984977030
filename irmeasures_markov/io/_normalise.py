"""In-memory qrels and runs: one rule for ids and one for grades, on every entry point.

Qrels and runs reach the measures from files ([`irmeasures_markov.io`][irmeasures_markov.io]),
or in memory as a dict of dicts (``{qid: {docid: grade}}``,
``{qid: {docid: score}}``), a pandas DataFrame (columns ``query_id``,
``doc_id``, ``relevance`` / ``score``) or ``ir_measures`` namedtuples
(``Qrel``, ``ScoredDoc``).  In memory, every entry point applies the same
rules: ``ir_measures.calc_aggregate`` and ``PROVIDER`` for our measures,
[`RelevanceEvaluator`][irmeasures_markov.RelevanceEvaluator],
``experiments.evaluate``, [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex]
and [`PreparedRun`][irmeasures_markov.ranking.PreparedRun].

**Ids are ``str``.**  A query or document id of any other type (an ``int``
docid, an ``int64`` ``query_id`` column of a DataFrame) raises
[`InputTypeError`][irmeasures_markov.io.InputTypeError], a ``TypeError`` as in
pytrec_eval, naming the query (and document); convert the ids with ``str()``
(``df["query_id"] = df["query_id"].astype(str)`` for a DataFrame).  Ids are
never converted for you: pytrec_eval and the other ir_measures providers
refuse them, so converting in one place only would give a call that mixes
measures two answers, and ``str()`` of a float id (``'1.0'``) would not match
the ``'1'`` of a qrels file anyway.

**Grades are integers in the signed 32-bit range** [-2147483648, 2147483647]
that trec_eval and pytrec_eval read (pytrec_eval silently reads a larger
grade as 0).  ``int``, ``bool`` and numpy integers are accepted and stored as
``int``; a float (even ``1.0``) or str grade raises ``InputTypeError`` (a
``TypeError``, as in pytrec_eval), a grade out of range raises
[`InputError`][irmeasures_markov.io.InputError]; both name query and document.

**A document judged twice** for one query (rows of a DataFrame, ``Qrel``
namedtuples) follows the rule of the qrels file reader: with the same grade it
is one judgment, with different grades an
[`InputError`][irmeasures_markov.io.InputError] naming the row or item, the
query, the document and both grades.  (A dict cannot hold a repeat; a run
refuses any repeated document.)

Checking costs one C-level pass over each query's keys (``str.join`` fails on
the first id that is not a str), so the check adds no per-document Python
work to the ranking of a run.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Collection, Iterable, Mapping
from itertools import islice

import numpy as np

from irmeasures_markov._util._errors import InputError, InputTypeError
from irmeasures_markov.io._run_columns import RunColumns, exact_dict, read_run_columns, read_trec_run
from irmeasures_markov.io._tokens import GRADE_MAX, GRADE_MIN
from irmeasures_markov.io._trec import add_judgment, qrels_of_file, read_trec_qrels

__all__ = ["check_query_id", "check_document_ids", "check_qrels", "to_qrels_dict", "to_run_dict", "qrels_dict",
           "run_dict", "warn_if_nothing_to_evaluate", "overlap_problem", "OverlapWarning", "MEAN_OVER_QRELS"]

_ID_HINT = "query and document ids must be str (as in pytrec_eval): convert them with str()"
_NO_DOCUMENT = object()


def _id_type_error(what: str, qid, docid=_NO_DOCUMENT) -> InputTypeError:
    if docid is _NO_DOCUMENT:
        return InputTypeError(f"{what}: query id {qid!r} is {type(qid).__name__}, not str; {_ID_HINT}")
    return InputTypeError(f"{what}: query {qid!r}: document id {docid!r} is {type(docid).__name__}, not str; "
                          f"{_ID_HINT}")


def check_query_id(qid: object, what: str = "run") -> None:
    """Raise [`InputTypeError`][irmeasures_markov.io.InputTypeError] unless ``qid`` is a str (``what`` names the input:
    'run', 'qrels').

    Parameters
    ----------
    qid : object
    what : str

    Raises
    ------
    InputTypeError
    """
    if not isinstance(qid, str):
        raise _id_type_error(what, qid)


def check_document_ids(docids: Iterable, qid: object, what: str = "run") -> None:
    """Raise [`InputTypeError`][irmeasures_markov.io.InputTypeError] naming the first document id of ``qid`` that is not
    a str.

    ``docids`` is iterated twice at most (a dict, its keys or a list): once at
    C speed by ``str.join``, and again only to find the culprit.

    Parameters
    ----------
    docids : iterable
    qid : object
        The query, named in the message.
    what : str

    Raises
    ------
    InputTypeError
    """
    try:
        "".join(docids)
    except TypeError:
        bad = next(d for d in docids if not isinstance(d, str))
        raise _id_type_error(what, qid, bad) from None


def _checked_grades(docs: Mapping, qid, what: str) -> dict[str, int]:
    """The query's grades as int; the loop below runs only to name a bad one (the common dict is all int, in range)."""
    grades = list(docs.values())
    if set(map(type, grades)) <= {int} and (not grades or GRADE_MIN <= min(grades) <= max(grades) <= GRADE_MAX):
        return dict(docs)
    out = {}
    for docid, grade in docs.items():
        if not isinstance(grade, (int, np.integer)):  # bool is an int
            raise InputTypeError(f"{what}: query {qid!r}, document {docid!r}: grade {grade!r} is "
                                 f"{type(grade).__name__}, not an integer; grades must be integers (as in "
                                 "pytrec_eval): convert whole-number grades with int()")
        grade = int(grade)
        if not GRADE_MIN <= grade <= GRADE_MAX:
            raise InputError(f"{what}: query {qid!r}, document {docid!r}: grade {grade} is outside the signed "
                             f"32-bit range [{GRADE_MIN}, {GRADE_MAX}] of trec_eval and pytrec_eval grades")
        out[docid] = grade
    return out


def check_qrels(qrels: Mapping, what: str = "qrels") -> dict[str, dict[str, int]]:
    """A checked copy of ``{qid: {docid: grade}}``: str ids and int grades (see the module docstring).

    Raises [`InputTypeError`][irmeasures_markov.io.InputTypeError] for an id that is not a str or a grade
    that is not an integer, [`InputError`][irmeasures_markov.io.InputError] for a grade outside int32.

    Parameters
    ----------
    qrels : mapping
        ``{qid: {docid: grade}}``.
    what : str
        Names the input in messages.

    Returns
    -------
    dict
        ``{qid: {docid: int}}``.

    Raises
    ------
    InputTypeError, InputError
    """
    return {qid: _checked_grades(docs, qid, what) for qid, docs in _checked_queries(qrels, what, "grade")}


def _checked_queries(data: Mapping, what: str, value: str):
    """``(qid, docs)`` of ``{qid: {docid: value}}`` once the query's ids are checked."""
    for qid, docs in data.items():
        check_query_id(qid, what)
        if not isinstance(docs, Mapping):
            raise InputTypeError(f"{what}: query {qid!r} maps to a {type(docs).__name__}, not a dict "
                                 f"{{docid: {value}}}")
        check_document_ids(docs, qid, what)
        yield qid, docs


def _check_frame_ids(frame, what: str) -> None:
    """Refuse DataFrame id columns that hold anything but str, naming the row's query (and document)."""
    for column in ("query_id", "doc_id"):
        values = frame[column].tolist()  # a list iterates at C speed, a Series (pandas' str dtype) does not
        if set(map(type, values)) <= {str}:
            continue
        for row, value in enumerate(values):
            if not isinstance(value, str):
                query = f"query {frame['query_id'].iloc[row]!r}, " if column == "doc_id" else ""
                raise InputTypeError(
                    f"{what} DataFrame, row {row}: {query}{column} {value!r} is {type(value).__name__} (column "
                    f"dtype {frame[column].dtype}), not str; {_ID_HINT} "
                    f"(df[{column!r}] = df[{column!r}].astype(str))")


def to_qrels_dict(qrels: object) -> dict[str, dict[str, int]]:
    """``{qid: {docid: grade}}`` from a dict-of-dict, a path, a DataFrame or ``Qrel`` namedtuples.

    The one conversion of qrels for every entry point.  A path (``str`` or
    ``os.PathLike``; plain or compressed) is read with
    [`read_trec_qrels`][irmeasures_markov.io.read_trec_qrels], which refuses an
    id that is not valid UTF-8 (a dict holding it would kill the process in
    pytrec_eval, where ir_measures sends it); the package's functions and the
    command line take the path itself and read such ids byte-exactly.  In-memory qrels are
    checked and copied: ids must be str and grades integers in int32 (see
    the module docstring for the rule and its errors).  A document judged
    twice for one query (rows of a DataFrame, namedtuples) follows the file
    reader's rule (`add_judgment`): the
    same grade again is one judgment, a different grade an
    [`InputError`][irmeasures_markov.io.InputError] naming the row or item, the
    query, the document and both grades.

    Parameters
    ----------
    qrels : mapping, path, pandas.DataFrame or iterable of Qrel
        ``{qid: {docid: grade}}``; a TREC qrels file; a DataFrame with columns
        ``query_id``, ``doc_id``, ``relevance``; or ``ir_measures`` ``Qrel``
        namedtuples.

    Returns
    -------
    dict
        A checked copy ``{qid: {docid: grade}}`` (a file: as read).

    Raises
    ------
    InputTypeError
        An id that is not a str, or a grade that is not an integer.
    InputError
        A grade outside int32, a document judged twice with different grades,
        an unsupported form, a malformed file or an id in it that is not
        valid UTF-8 (naming file and line).
    """
    if isinstance(qrels, (str, os.PathLike)):
        return read_trec_qrels(qrels)
    return qrels_dict(qrels)


def qrels_dict(qrels: object) -> dict[str, dict[str, int]]:
    """`to_qrels_dict` with a path read byte-exactly: the package's own entry points, which read files as the
    command line does and hand ids to pytrec_eval in a form it takes (`pytrec`)."""
    if isinstance(qrels, Mapping):
        return check_qrels(qrels)
    if isinstance(qrels, (str, os.PathLike)):
        return qrels_of_file(qrels)
    from ir_measures.util import QrelsConverter
    conv = QrelsConverter(qrels)
    kind, err = conv.predict_type()
    if err:
        raise InputError(f"Unsupported qrels format: {err}")
    if kind == "pd_dataframe":
        _check_frame_ids(qrels, "qrels")
        rows = zip(qrels["query_id"].tolist(), qrels["doc_id"].tolist(), qrels["relevance"].tolist())
        return check_qrels(_judgments(rows, "qrels DataFrame, row {}", 0), "qrels DataFrame")
    # namedtuples: predict_type read the first one through a copy of the iterator, kept as conv.qrels
    rows = ((q.query_id, q.doc_id, q.relevance) for q in conv.qrels)
    return check_qrels(_judgments(rows, "qrels item {}", 1))


def _judgments(rows: Iterable, where: str, start: int) -> dict[str, dict[object, object]]:
    """``{qid: {docid: grade}}`` from ``(qid, docid, grade)`` rows, a repeated judgment as the file reader has it."""
    out: dict[str, dict[object, object]] = {}
    for n, (qid, docid, grade) in enumerate(rows, start=start):
        docs = out.setdefault(qid, {})
        if docid in docs:
            add_judgment(docs, qid, docid, grade, where.format(n))
        else:
            docs[docid] = grade
    return out


def to_run_dict(run: object) -> dict[str, dict[str, float]]:
    """``{qid: {docid: score}}`` from a dict-of-dict, a path, a DataFrame or ``ScoredDoc`` namedtuples.

    Ids must be str (see the module docstring); a dict is checked and returned
    as it is.  Unlike a plain dict conversion, a document listed twice for a
    query is an error rather than silently overwritten.  A path is read with
    [`read_trec_run`][irmeasures_markov.io.read_trec_run], which refuses an id
    that is not valid UTF-8 (a dict holding it would kill the process in
    pytrec_eval, where ir_measures sends it); the package's functions and the
    command line take the path itself and read such ids byte-exactly.

    Parameters
    ----------
    run : mapping, path, pandas.DataFrame or iterable of ScoredDoc
        ``{qid: {docid: score}}``; a TREC run file; a DataFrame with columns
        ``query_id``, ``doc_id``, ``score``; or ``ir_measures`` ``ScoredDoc``
        namedtuples.

    Returns
    -------
    dict
        ``{qid: {docid: score}}`` (a dict given: that dict itself; a
        [`RunColumns`][irmeasures_markov.io.RunColumns] given, read from
        a file and so checked already: that object itself).

    Raises
    ------
    InputTypeError
        A query or document id that is not a str.
    InputError
        A document listed twice for a query, a DataFrame without the needed
        columns, an unsupported form, a malformed file or an id in it that is
        not valid UTF-8 (naming file and line).
    """
    if isinstance(run, (str, os.PathLike)):
        return read_trec_run(run)
    return run_dict(run)


def run_dict(run: object) -> dict[str, dict[str, float]]:
    """`to_run_dict` with a path read byte-exactly: the package's own entry points (see `qrels_dict`)."""
    if isinstance(run, RunColumns):
        return run  # type: ignore[return-value]
    if isinstance(run, Mapping):
        for _ in _checked_queries(run, "run", "score"):  # ids only: a score may be any number
            pass
        return run  # type: ignore[return-value]
    if isinstance(run, (str, os.PathLike)):
        return exact_dict(read_run_columns(run))
    if hasattr(run, "itertuples"):
        missing = [c for c in ("query_id", "doc_id", "score") if c not in run.columns]
        if missing:
            raise InputError(f"run DataFrame is missing columns {missing} (found {list(run.columns)}); "
                             "expected query_id, doc_id, score")
        _check_frame_ids(run, "run")
        dup = run.duplicated(subset=["query_id", "doc_id"])
        if dup.any():
            row = run[dup].iloc[0]
            raise InputError(f"run DataFrame: document {row['doc_id']!r} appears twice for query {row['query_id']!r}")
        out: dict[str, dict[str, float]] = {}
        # lists: iterating a Series makes a Python object per value slowly (3x the time on 10 TREC-8 runs)
        for q, d, s in zip(run["query_id"].tolist(), run["doc_id"].tolist(), run["score"].astype(float).tolist()):
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
            check_query_id(q, f"run item {n}")
            check_document_ids((d,), q, f"run item {n}")
            docs = out.setdefault(q, {})
            if d in docs:
                raise InputError(f"run item {n}: document {d!r} appears twice for query {q!r}")
            docs[d] = s
        return out
    raise InputError("Unsupported run format: expected a dict-of-dict {qid: {docid: score}}, a path to a TREC "
                     "run file, a DataFrame with query_id/doc_id/score, or ScoredDoc namedtuples.")


def _examples(ids: Iterable[str], k: int = 3) -> str:
    """The first ``k`` ids, and "..." when there are more: a message names a few, never thousands."""
    shown = [repr(q) for q in islice(ids, k + 1)]
    return ", ".join(shown[:k]) + (", ..." if len(shown) > k else "")


class OverlapWarning(RuntimeWarning):
    """What `warn_if_nothing_to_evaluate` warns: a front end that has said it already (the command line,
    naming the files) ignores the repeats."""


#: what a mean is over, for the front ends that average over every qrels query (``{n}``: the qrels' queries,
#: ``{shared}``: those the run answers, ``{others}``: the rest)
MEAN_OVER_QRELS = "means are over all {n} (trec_eval -c), the other {others} scoring 0"


def overlap_problem(qrels_qids: Collection[str], run: Mapping, mean_over: str = MEAN_OVER_QRELS) -> str | None:
    """What is wrong with the queries ``run`` answers, or None: the one rule of every front end.

    Four situations are told apart: the qrels hold no query (an aggregate
    over no query is the measure's default, 0), the run holds no document,
    run and qrels share no query (every qrels query scores 0; the message
    shows a few ids of each side, which is how '401' vs 'q401' shows up), or
    the run answers less than half of the qrels' queries (with the counts
    and ``mean_over``, what a mean is over).

    Parameters
    ----------
    qrels_qids : collection of str
        The queries evaluated (the qrels', or the topics asked for); must support ``in``.
    run : mapping
        ``{qid: {docid: score}}``.
    mean_over : str
        What a mean over the queries is, for the last situation: a format string (`MEAN_OVER_QRELS`).

    Returns
    -------
    str or None
    """
    unanswered = "a qrels query the run does not answer scores 0"
    if not len(qrels_qids):
        return "the qrels hold no query: nothing can be evaluated (an aggregate over no query is the measure's " \
               "default, 0)"
    if isinstance(run, RunColumns):   # sizes from its bounds: read as a mapping it would make a dict per query
        answered = [q for q, n in zip(run.qids, np.diff(run.bounds).tolist()) if n]
    else:
        answered = [q for q, docs in run.items() if len(docs)]
    if not answered:
        return f"the run holds no document: no query can be evaluated ({unanswered})"
    shared = sum(q in qrels_qids for q in answered)
    if not shared:
        return (f"the run and the qrels share no query: no query can be evaluated ({unanswered}); run queries: "
                f"{_examples(answered)}; qrels queries: {_examples(qrels_qids)}")
    if 2 * shared < len(qrels_qids):
        n = len(qrels_qids)
        return (f"the run answers {shared} of the {n} qrels queries (less than half: is it the right qrels for "
                f"this run?); {mean_over.format(n=n, shared=shared, others=n - shared)}")
    return None


def warn_if_nothing_to_evaluate(qrels_qids: Collection[str], run: Mapping, stacklevel: int = 2,
                                mean_over: str = MEAN_OVER_QRELS) -> bool:
    """Warn (once per call, `OverlapWarning`, a ``RuntimeWarning``) when no query of the run can be
    evaluated or the run answers less than half of the qrels' queries (`overlap_problem`).

    Returns whether it warned.  ``qrels_qids`` must support ``in``.

    Parameters
    ----------
    qrels_qids : collection of str
    run : mapping
        ``{qid: {docid: score}}``.
    stacklevel : int
        Of the warning, counted from the caller.
    mean_over : str
        What a mean over the queries is (`overlap_problem`).

    Returns
    -------
    bool
    """
    msg = overlap_problem(qrels_qids, run, mean_over)
    if msg is None:
        return False
    warnings.warn(msg, OverlapWarning, stacklevel=stacklevel + 1)
    return True
