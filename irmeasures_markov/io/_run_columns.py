"""The run readers: [`read_run_columns`][irmeasures_markov.io.read_run_columns] reads a file into
[`RunColumns`][irmeasures_markov.io.RunColumns], [`read_trec_run`][irmeasures_markov.io.read_trec_run] into dicts.

A Python dict per query and a str and a float per document cost more than
reading the file: [`RunColumns`][irmeasures_markov.io.RunColumns] keeps the docids as one string and the
scores as one float64 array, which the rankings ([`irmeasures_markov.ranking`][irmeasures_markov.ranking])
join with the judgments as arrays; as a read-only mapping it gives every
measure the values of the dicts, bit for bit.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._segments import offsets_of
from irmeasures_markov._util._token_sets import first_repeat
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._text import decompress, display_name, lone_surrogate_id, read_raw, read_whole
from irmeasures_markov.io._tokens import Columns, run_columns
from irmeasures_markov.io._trec import run_from_lines

__all__ = ["RunColumns", "read_run_columns", "read_trec_run", "columns_of_run", "run_from_columns",
           "columns_of_file", "exact_dict"]


class RunColumns(Mapping):
    """A run as columns; also a read-only mapping ``{qid: {docid: score}}``.

    ``run[qid]`` is a read-only view of the query's ``{docid: score}``;
    [`to_dict`][irmeasures_markov.io.RunColumns.to_dict] gives ordinary dicts (what pytrec_eval's own evaluator
    needs).  Query ``qids[k]`` owns records ``bounds[k]:bounds[k+1]``: their
    docids (``docid_list()[bounds[k]:bounds[k+1]]``, in file order) and
    their ``scores``.  Every query holds at least one record; no query lists
    a document twice; every score is finite.

    Parameters
    ----------
    qids : list of str
        The queries, in order of first appearance in the file.
    bounds : numpy.ndarray
        ``len(qids) + 1`` record offsets (int64).
    docids : str or list of str
        Every record's docid, query after query: joined by newlines (as read
        from a file), or a list (as a dict run's mappings give them; a docid
        may then hold a newline).
    scores : numpy.ndarray
        Every record's score (float64).

    Notes
    -----
    Made by [`read_run_columns`][irmeasures_markov.io.read_run_columns] and
    [`load_run_dir`][irmeasures_markov.io.load_run_dir],
    and from a dict run by `columns_of_dict`, which
    check the rules above; the constructor trusts its caller.  The
    object does not change (``dict(run)`` keeps each query's read-only view).
    """
    __slots__ = ("qids", "bounds", "docids", "scores", "_keys", "_index")

    def __init__(self, qids: list[str], bounds: np.ndarray, docids: str | list[str], scores: np.ndarray) -> None:
        self.qids = qids
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.docids = docids
        self.scores = scores
        self._keys: list[str] | None = None
        self._index: dict[str, int] | None = None

    def __getstate__(self):
        return self.qids, self.bounds, self.docids, self.scores

    def __setstate__(self, state) -> None:
        self.__init__(*state)

    @property
    def n_documents(self) -> int:
        """Number of records (retrieved documents) of all queries together."""
        return int(self.bounds[-1]) if self.qids else 0

    def docid_list(self) -> list[str]:
        """Every record's docid, query after query (made on first use and kept).

        Returns
        -------
        list of str
        """
        if self._keys is None:
            docids = self.docids
            self._keys = docids if isinstance(docids, list) else docids.split("\n") if self.qids else []
        return self._keys

    def __len__(self) -> int:
        return len(self.qids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.qids)

    def __contains__(self, qid: object) -> bool:
        return qid in self._query_index()

    def _query_index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {q: k for k, q in enumerate(self.qids)}
        return self._index

    def __getitem__(self, qid: str) -> Mapping[str, float]:
        # read-only: an assignment to a query's documents would otherwise change a copy and be lost silently
        k = self._query_index()[qid]
        a, b = int(self.bounds[k]), int(self.bounds[k + 1])
        return MappingProxyType(dict(zip(self.docid_list()[a:b], self.scores[a:b].tolist(), strict=True)))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docid: score}}`` (what [`read_trec_run`][irmeasures_markov.io.read_trec_run] gives), a
        new dict.

        Returns
        -------
        dict

        Raises
        ------
        InputError
            An id that is not valid UTF-8 (read byte-exactly from a file): a dict holding it would kill the process
            in pytrec_eval, where ir_measures sends a dict; the package's functions take the ``RunColumns`` itself.
        """
        bad = lone_surrogate_id([*self.qids, *([self.docids] if isinstance(self.docids, str) else self.docids)])
        if bad is not None:
            bad = lone_surrogate_id([*self.qids, *self.docid_list()])   # the id itself, for the message
            raise InputError(f"id {bad.encode('utf-8', 'surrogateescape')!r} is not valid UTF-8: a dict holding it "
                             "would crash pytrec_eval (ir_measures' AP, nDCG, ...); give the RunColumns itself to the "
                             "package's functions, which read it byte-exactly")
        return exact_dict(self)

    def __repr__(self) -> str:
        return f"RunColumns({len(self.qids)} queries, {self.n_documents} documents)"


def exact_dict(run: RunColumns) -> dict[str, dict[str, float]]:
    """``run`` as dicts with its ids as read, lone surrogates kept: the package's own hand-offs (`pytrec` maps such
    ids to a form pytrec_eval takes), which `RunColumns.to_dict` refuses to give a user."""
    keys, scores, b = run.docid_list(), run.scores.tolist(), run.bounds.tolist()
    return {q: dict(zip(keys[b[k]:b[k + 1]], scores[b[k]:b[k + 1]])) for k, q in enumerate(run.qids)}


def run_from_columns(cols: Columns | None) -> RunColumns | None:
    """[`RunColumns`][irmeasures_markov.io.RunColumns] of `run_columns`' answer; None for None or when a
    query lists a document twice (the line reader then names the line)."""
    if cols is None:
        return None
    qids, bounds, docids, scores = cols
    run = RunColumns(qids, bounds, docids, scores)   # the constructor makes bounds int64
    return None if first_repeat(docids, run.bounds) >= 0 else run


def columns_of_run(data: bytes) -> RunColumns | None:
    """[`RunColumns`][irmeasures_markov.io.RunColumns] of a run file's content (decompressed, BOM removed), or None:
    read it line by line."""
    return run_from_columns(run_columns(data))


def read_run_columns(path: PathLike) -> RunColumns:
    """Read a TREC run file (``qid Q0 docid rank score tag``) into [`RunColumns`][irmeasures_markov.io.RunColumns].

    The package's one run reader: every path that reads a run file (the
    command line, comparisons, grids, run directories, [`read_trec_run`][irmeasures_markov.io.read_trec_run])
    calls it.  Plain, gzip, bzip2 or xz (by content); ``-`` reads standard
    input.  Scores are parsed as float64, exactly as ``float()`` reads them;
    the rank and tag fields are not used.  The whole file is tokenised at
    once (`tokens`), without a Python object per document; a file that
    breaks a rule of the grammar is read again line by line, so the run and
    the errors are those of `run_from_lines`.

    Parameters
    ----------
    path : str or os.PathLike
        The run file, or ``-`` for standard input.

    Returns
    -------
    RunColumns
        Queries in order of first appearance (a query's lines need not be
        consecutive), each query's documents in file order.

    Raises
    ------
    InputError
        Naming the file and line: a line without 6 fields, a non-numeric or
        non-finite score, a document listed twice for one query, or
        truncated compressed data.
    OSError
        The file cannot be read.
    """
    return read_whole(path, columns_of_run, _columns_of_lines)


def _columns_of_lines(lines, name: str) -> RunColumns:
    """The line reader's run as columns (a file the tokeniser refused; the reader checked ids, scores, repeats)."""
    run = run_from_lines(lines, name)
    qids = list(run)
    bounds = offsets_of([len(run[q]) for q in qids])
    docids = "\n".join(d for q in qids for d in run[q])
    scores = np.fromiter((s for q in qids for s in run[q].values()), dtype=np.float64, count=int(bounds[-1]))
    return RunColumns(qids, bounds, docids, scores)


def read_trec_run(path: PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {docid: score}}``: [`read_run_columns`][irmeasures_markov.io.read_run_columns]
    as ordinary dicts, refusing ids that are not valid UTF-8.

    pytrec_eval, which computes ir_measures' own measures, kills the process
    on the lone surrogates that would carry such an id in a dict;
    [`read_run_columns`][irmeasures_markov.io.read_run_columns] and the
    ``irmeasures-markov`` command read such files byte-exactly
    (docs/conventions.md).

    Parameters
    ----------
    path : str or os.PathLike
        The run file, or ``-`` for standard input.

    Returns
    -------
    dict
        ``{qid: {docid: score}}``, queries and documents in file order.

    Raises
    ------
    InputError
        As [`read_run_columns`][irmeasures_markov.io.read_run_columns], and a
        query or document id that is not valid UTF-8 (naming the file and line
        and quoting its bytes).
    OSError
        The file cannot be read.
    """
    return exact_dict(read_whole(path, columns_of_run, _columns_of_lines, lambda run: [*run.qids, run.docids]))


def columns_of_file(path: str) -> RunColumns | None:
    """Worker task of [`load_run_dir`][irmeasures_markov.io.load_run_dir] (one file read and tokenised in a
    process), or None: the line reader then reads it, naming any error."""
    try:
        return columns_of_run(decompress(read_raw(path), display_name(path)))
    except (InputError, OSError):
        return None
