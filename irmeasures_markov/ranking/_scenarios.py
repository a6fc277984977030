"""Other readings of a prepared run: other orders inside tie groups, other judgments of unjudged documents.

A `ScenarioRun` holds *pseudo-queries*, each one reading of one query
of a [`PreparedRun`][irmeasures_markov.ranking.PreparedRun]: its documents
in some order (a permutation inside the query's groups of equal scores), with
some grades (e.g. its unjudged documents judged relevant), possibly followed
by filled ranks past the end of the ranking.  It offers what a measure's
``compute`` reads of a prepared run (``qids``, ``batch``, ``recall_bases``,
``document_values``, ``qrels_index``), so every family evaluates a reading
exactly as it evaluates a run: the value of a reading is the value of the run
that ranks its documents in that order, with those judgments.

The functions here make readings; what they are used for (the mean over all
tie orders, the residual, the range over judgments) lives with the measures
(`irmeasures_markov.plugin._variants`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov._util._segments import expand_ranges, offsets_of, segment_sum
from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch, select_positions
from irmeasures_markov.ranking._qrels_index import QrelsIndex

hashlib = lazy_module("hashlib")  # for the seeds of sampled orders only: not at start-up

__all__ = ["ScenarioRun", "tie_groups_flat", "identity_reading", "query_rng",
           "FILLED", "Gathered"]

#: ``source`` of a filled rank past the end of a ranking (no document of the run)
FILLED = -1


def _group_ids(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    n = scores.size
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = scores[1:] != scores[:-1]   # -0.0 == 0.0: one group, as in the sort
        first = starts[:-1]
        new[first[first < n]] = True
        # a filled rank (NaN score) is a group of its own
        new[np.isnan(scores)] = True
    return np.cumsum(new) - 1


def tie_groups_flat(prepared: PreparedRun) -> tuple[np.ndarray, np.ndarray]:
    """The tie groups of a prepared run: maximal runs of equal scores inside one query's ranking.

    Parameters
    ----------
    prepared : PreparedRun
        Prepared without a ``depth``.

    Returns
    -------
    group_id : numpy.ndarray
        Per ranked position (trec order), its group (0, 1, ...; groups never span queries).
    group_start : numpy.ndarray
        The first position of each group.
    """
    gid = _group_ids(prepared.ranked_scores(), np.asarray(prepared.offsets))
    return gid, np.flatnonzero(np.diff(gid, prepend=-1))


def query_rng(seed: int, qid: str, salt: str = "") -> np.random.Generator:
    """A random generator for one query, from ``seed`` and the query id (values do not depend on query order).

    Parameters
    ----------
    seed : int
        The user's seed.
    qid : str
        The query id.
    salt : str
        Tells apart the draws of different purposes for one query.

    Returns
    -------
    numpy.random.Generator
    """
    digest = hashlib.blake2b(f"{salt}\x00{qid}".encode(), digest_size=8).digest()
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int.from_bytes(digest, "little")])


class Gathered:
    """``getattr(reading, name)[positions]``, taken when first asked for."""

    __slots__ = ("reading", "name", "positions")

    def __init__(self, reading: ScenarioRun, name: str, positions: np.ndarray) -> None:
        self.reading, self.name, self.positions = reading, name, positions

    def get(self) -> np.ndarray:
        """The gathered array.

        Returns
        -------
        numpy.ndarray
        """
        return getattr(self.reading, self.name)[self.positions]


class _PseudoQrels(Mapping):
    """``{pseudo qid: {docid: grade}}``: the base query's judgments plus the documents a reading judges."""

    def __init__(self, scenario: ScenarioRun) -> None:
        self._scenario = scenario
        self._index = {q: i for i, q in enumerate(scenario.qids)}
        self._made: dict[int, Mapping[str, int]] = {}

    def __getitem__(self, qid: str) -> Mapping[str, int]:
        i = self._index[qid]
        docs = self._made.get(i)
        if docs is None:
            docs = self._made[i] = self._scenario.judgments(i)
        return docs

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


class ScenarioRun:
    """Readings of the queries of a prepared run, evaluated by a measure as if they were a run.

    Pseudo-query ``i`` reads query ``query[i]`` of ``base``; its ranks are
    ``slice(offsets[i], offsets[i+1])`` of the flat arrays.

    Parameters
    ----------
    base : PreparedRun
        The prepared run (without a ``depth``).
    query : numpy.ndarray
        The base query (index into ``base.qids``) of each pseudo-query.
    offsets : numpy.ndarray
        Offsets of the pseudo-queries in the flat arrays.
    source : numpy.ndarray
        The base flat position of the document at each rank, `FILLED` for a rank past the ranking.
    grades : numpy.ndarray
        The grade at each rank (`UNJUDGED` where there is none).
    added : numpy.ndarray of bool
        Ranks whose document the reading judges although the qrels do not: it joins the pseudo-query's
        judgments (and its recall base, when its grade reaches ``rel``).
    scores : numpy.ndarray
        The run's score at each rank (NaN at filled ranks): what tie groups are made of.
    """

    def __init__(self, base: PreparedRun, query: np.ndarray, offsets: np.ndarray, source: np.ndarray | Gathered,
                 grades: np.ndarray, added: np.ndarray | Gathered | None, scores: np.ndarray | Gathered | None
                 ) -> None:
        self.base = base
        self.query = np.asarray(query, dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.grades = np.asarray(grades, dtype=np.int64)
        # source, added and scores are gathered on first use: most readings are evaluated without them
        self._source = source
        self._added = added
        self._scores = scores
        base_qids = base.qids
        self.base_qids = base_qids
        # distinct ids: a measure may key per-query memos by id
        self.qids = [f"{base_qids[q]}\x1f{i}" for i, q in enumerate(self.query.tolist())]
        # what a measure reads of the judgments: the pseudo-queries' own, indexed as the qrels of a run are
        self.qrels_index = QrelsIndex.from_checked(_PseudoQrels(self))
        self._batches: dict[tuple, RelevanceBatch] = {}
        self._values: dict[object, np.ndarray] = {}
        #: values derived from this reading alone, made once (e.g. :func:`~.holes.fill_grades`)
        self.memo: dict[str, object] = {}
        self._groups: np.ndarray | None = None

    @property
    def source_qids(self) -> list[str]:
        """The base query id of each pseudo-query."""
        return [self.base_qids[q] for q in self.query.tolist()]

    @property
    def source(self) -> np.ndarray:
        """The base flat position of the document at each rank, `FILLED` past the ranking."""
        if isinstance(self._source, Gathered):
            self._source = self._source.get()
        return self._source

    @property
    def has_added(self) -> bool:
        """Whether the reading judges any document the qrels do not."""
        return self._added is not None

    @property
    def added(self) -> np.ndarray:
        """Ranks whose document the reading judges although the qrels do not."""
        if self._added is None:
            return np.zeros(self.grades.size, dtype=bool)
        if isinstance(self._added, Gathered):
            self._added = self._added.get()
        return self._added

    @property
    def scores(self) -> np.ndarray:
        """The run's score at each rank (NaN at filled ranks)."""
        if self._scores is None:
            raise ValueError("this reading keeps no scores (its tie groups are arranged already)")
        if isinstance(self._scores, Gathered):
            self._scores = self._scores.get()
        return self._scores

    def gathered(self, positions: np.ndarray, scores: bool = True
                 ) -> tuple[Gathered, np.ndarray, Gathered | None, Gathered | None]:
        """``(source, grades, added, scores)`` at flat ``positions``: grades now, the others on first use.

        Parameters
        ----------
        positions : numpy.ndarray
            Flat positions of this reading.
        scores : bool
            Keep the scores (for readings whose tie groups are still to be arranged).

        Returns
        -------
        tuple
        """
        return (Gathered(self, "source", positions), self.grades[positions],
                Gathered(self, "added", positions) if self.has_added else None,
                Gathered(self, "scores", positions) if scores and self._scores is not None else None)

    # what a measure reads ------------------------------------------------------------------------------
    @property
    def queries(self) -> list[str]:
        """The pseudo-queries (only their number is read)."""
        return self.qids

    @property
    def lengths(self) -> np.ndarray:
        """Number of ranks of each pseudo-query."""
        return np.diff(self.offsets)

    def recall_bases(self, rel: int) -> np.ndarray:
        """Judgments with grade >= ``rel`` of each pseudo-query: the base query's, plus the documents it judges.

        Where that is 0, the relevant filled ranks past the ranking, if any.

        Parameters
        ----------
        rel : int
            Relevance level.

        Returns
        -------
        numpy.ndarray
        """
        base = self.base.recall_bases(rel)[self.query]
        if self.has_added:
            base = base + segment_sum((self.added & (self.grades >= rel)).astype(np.int64), self.offsets)
        if base.all():
            return base
        # a reading that finds relevant documents only past its ranking is no query without relevant
        # documents (those score 0): its recall base is what it finds there
        past = segment_sum(((self.source == FILLED) & (self.grades >= rel)).astype(np.int64), self.offsets)
        return np.where(base == 0, past, base)

    def batch(self, rel: int = 1, judged_only: bool = False, cutoff: int | None = None,
              with_docids: bool = False, judgments: bool = True) -> RelevanceBatch:
        """The readings as a [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch] (as ``PreparedRun.batch``).

        Parameters
        ----------
        rel, judged_only, cutoff, with_docids, judgments
            As for [`PreparedRun.batch`][irmeasures_markov.ranking.PreparedRun.batch].

        Returns
        -------
        RelevanceBatch
        """
        judgments = bool(judgments or judged_only or rel < 1)
        key = (rel, bool(judged_only), cutoff, with_docids, judgments)
        b = self._batches.get(key)
        if b is not None:
            return b
        grades = self.grades if judgments else np.where(self.grades > 0, self.grades, 0)
        keep, offsets = select_positions(self.grades, self.offsets, judged_only, cutoff)
        if keep is not None:
            grades = grades[keep]
        docids = None
        if with_docids:
            source = self.source if keep is None else self.source[keep]
            ranked = self.base.ranked_docids
            names = [ranked[s] if s >= 0 else "" for s in source.tolist()]
            bounds = offsets.tolist()
            docids = [names[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        b = RelevanceBatch(list(self.qids), offsets, grades, grades >= rel, self.recall_bases(rel), rel, docids,
                           judgments)
        self._batches[key] = b
        return b

    def document_values(self, lookup_segments: Callable[[list[list[str]], list[str] | None], np.ndarray],
                        judged_only: bool = False, cutoff: int | None = None,
                        exact_tie_order: bool = True) -> np.ndarray:
        """A per-document value at every rank of ``batch(judged_only=..., cutoff=...)``; NaN at filled ranks.

        Parameters
        ----------
        lookup_segments : callable
            As for [`PreparedRun.document_values`][irmeasures_markov.ranking.PreparedRun.document_values].
        judged_only, cutoff
            As for `batch`.
        exact_tie_order : bool
            Ignored: readings are always in their exact order.

        Returns
        -------
        numpy.ndarray
        """
        values = self._values.get(lookup_segments)
        if values is None:
            values = self._values[lookup_segments] = np.asarray(
                self.base.document_values(lookup_segments), dtype=np.float64)
        out = np.full(self.source.size, np.nan)
        real = self.source >= 0
        out[real] = values[self.source[real]]
        keep, _ = select_positions(self.grades, self.offsets, judged_only, cutoff)
        return out if keep is None else out[keep]

    def judgments(self, i: int) -> Mapping[str, int]:
        """The judgments of pseudo-query ``i``: its base query's, plus the documents the reading judges.

        Parameters
        ----------
        i : int
            A pseudo-query.

        Returns
        -------
        mapping
        """
        base_docs = self.base.qrels_index.qrels.get(self.base_qids[self.query[i]], {})
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if not self.has_added:
            return base_docs
        added = np.flatnonzero(self.added[a:b])
        if not added.size:
            return base_docs
        docs = dict(base_docs)
        ranked = self.base.ranked_docids
        for k in added.tolist():
            docs[ranked[int(self.source[a + k])]] = int(self.grades[a + k])
        return docs

    # tie groups -----------------------------------------------------------------------------------------
    @property
    def group_ids(self) -> np.ndarray:
        """The tie group of every rank (maximal runs of equal scores inside one pseudo-query)."""
        if self._groups is None:
            self._groups = _group_ids(self.scores, self.offsets)
        return self._groups

    def take(self, pseudo: np.ndarray) -> ScenarioRun:
        """The pseudo-queries ``pseudo`` (indices, repeats allowed) as a new reading.

        Parameters
        ----------
        pseudo : numpy.ndarray
            Pseudo-query indices.

        Returns
        -------
        ScenarioRun
        """
        pseudo = np.asarray(pseudo, dtype=np.int64)
        lengths = self.lengths[pseudo]
        offsets = offsets_of(lengths)
        idx = expand_ranges(self.offsets[:-1][pseudo], lengths)
        return ScenarioRun(self.base, self.query[pseudo], offsets, *self.gathered(idx))

    def permuted(self, positions: np.ndarray) -> ScenarioRun:
        """The same pseudo-queries with their ranks taken in the order ``positions`` (a flat permutation
        that keeps every rank inside its pseudo-query).

        Parameters
        ----------
        positions : numpy.ndarray
            For each new rank, the old flat position.

        Returns
        -------
        ScenarioRun
        """
        return ScenarioRun(self.base, self.query, self.offsets, *self.gathered(positions))


def identity_reading(prepared: PreparedRun, judgments: bool = True) -> ScenarioRun:
    """Every query of a prepared run read as it is (trec order, the qrels' judgments).

    Parameters
    ----------
    prepared : PreparedRun
        Prepared without a ``depth``.
    judgments : bool
        Keep every grade; False keeps the positive grades only (0 for judged
        non-relevant and unjudged alike), which is all a measure reading
        ``grade >= rel`` with ``rel >= 1`` needs and saves the join with every judgment.

    Returns
    -------
    ScenarioRun
    """
    grades = prepared.full_grades if judgments else prepared.positive_grades
    n = grades.size
    return ScenarioRun(prepared, np.arange(len(prepared.qids)), np.asarray(prepared.offsets), np.arange(n),
                       grades, None, prepared.ranked_scores())
