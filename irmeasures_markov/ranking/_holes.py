"""Other judgments of a reading's unjudged documents: judged relevant, ranks filled past the ranking, every pattern.

The readings (`ScenarioRun`) these
functions make are what ``unjudged='rel'``, ``residual=True`` and
``unjudged='range'`` evaluate (`irmeasures_markov.plugin._variants`).
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov._util._segments import expand_ranges, offsets_of
from irmeasures_markov.ranking._qrels_index import QrelsIndex, judged
from irmeasures_markov.ranking._scenarios import FILLED, ScenarioRun

__all__ = ["fill_grades", "judge_unjudged", "fill_ranks", "judgment_patterns", "query_fill_grades"]


def fill_grades(reading: ScenarioRun) -> np.ndarray:
    """The grade an unjudged document takes when it counts as relevant: max(1, the highest judged grade).

    Parameters
    ----------
    reading : ScenarioRun
        The readings.

    Returns
    -------
    numpy.ndarray
        One grade per pseudo-query.
    """
    grades = reading.memo.get("fill_grades")
    if grades is None:
        # once per reading: judgment_patterns asks for one pseudo-query after another
        best = query_fill_grades(reading.base.qrels_index, reading.base_qids)
        grades = reading.memo["fill_grades"] = best[reading.query]
    return grades


def query_fill_grades(qrels_index: QrelsIndex, qids: list[str]) -> np.ndarray:
    """max(1, the highest judged grade) of each query: the grade its unjudged documents take when they count as
    relevant (the one rule for every measure, the standard ones of `irmeasures_markov.measures._standard` too).

    Parameters
    ----------
    qrels_index : QrelsIndex
        The judgments.
    qids : list of str
        The queries.

    Returns
    -------
    numpy.ndarray
        One grade per query (int64).
    """
    best = np.ones(len(qids), dtype=np.int64)
    for i, q in enumerate(qids):
        g = qrels_index.judged_grades(q)
        if g.size:
            best[i] = max(1, int(g[0]))
    return best


def judge_unjudged(reading: ScenarioRun, read: np.ndarray) -> ScenarioRun:
    """Every unjudged document at a rank marked in ``read`` judged relevant at `fill_grades`.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    read : numpy.ndarray of bool
        The ranks whose unjudged documents are judged.

    Returns
    -------
    ScenarioRun
    """
    target = read & ~judged(reading.grades) & (reading.source >= 0)
    fill = np.repeat(fill_grades(reading), reading.lengths)
    grades = np.where(target, fill, reading.grades)
    return ScenarioRun(reading.base, reading.query, reading.offsets, reading.source, grades,
                       reading.added | target, reading.scores)


def fill_ranks(reading: ScenarioRun, total: np.ndarray) -> ScenarioRun:
    """Ranks past the end of each ranking, up to ``total[i]`` ranks in all, holding relevant documents.

    The filled ranks are no document of the run and of no judgment (they do
    not join the recall base): they are what a user who reads past the end of
    a ranking finds when every unseen document is relevant, as rbp_eval's
    residual assumes.

    Parameters
    ----------
    reading : ScenarioRun
        The readings.
    total : numpy.ndarray
        Ranks of each pseudo-query after filling (at least its length).

    Returns
    -------
    ScenarioRun
    """
    lengths = reading.lengths
    total = np.maximum(np.asarray(total, dtype=np.int64), lengths)
    extra = total - lengths
    if not extra.any():
        return reading
    offsets = offsets_of(total)
    old = expand_ranges(offsets[:-1], lengths)            # where the old ranks go
    new = np.ones(int(offsets[-1]), dtype=bool)
    new[old] = False
    n = int(offsets[-1])
    source = np.full(n, FILLED, dtype=np.int64)
    source[old] = reading.source
    grades = np.repeat(fill_grades(reading), total)
    grades[old] = reading.grades
    added = None
    if reading.has_added:
        added = np.zeros(n, dtype=bool)
        added[old] = reading.added
    scores = np.full(n, np.nan)
    scores[old] = reading.scores
    return ScenarioRun(reading.base, reading.query, offsets, source, grades, added, scores)


def judgment_patterns(reading: ScenarioRun, p: int, targets: np.ndarray, fill_from: int | None,
                      max_exact: int, n_samples: int, rng: np.random.Generator) -> tuple[ScenarioRun, bool]:
    """Readings of pseudo-query ``p`` under judgments of its unjudged documents: every pattern, or a sample.

    Each target rank is judged non-relevant (grade 0) or relevant at
    `fill_grades`; the filled ranks past the ranking (from flat
    position ``fill_from`` on, if any) count as one more target: all absent
    (the ranking ends) or all present.

    Parameters
    ----------
    reading : ScenarioRun
        The readings (with filled ranks, if the measure reads past the ranking).
    p : int
        The pseudo-query.
    targets : numpy.ndarray
        Flat positions of its unjudged documents.
    fill_from : int or None
        Flat position of its first filled rank.
    max_exact : int
        Enumerate every pattern when there are at most this many targets.
    n_samples : int
        Otherwise, patterns drawn at random (each target relevant with
        probability 1/2), plus all-non-relevant and all-relevant.
    rng : numpy.random.Generator
        The draws.

    Returns
    -------
    readings : ScenarioRun
        One pseudo-query per pattern.
    exact : bool
        Whether every pattern was read.
    """
    a, b = int(reading.offsets[p]), int(reading.offsets[p + 1])
    u = targets.size + (fill_from is not None)
    exact = u <= max_exact
    if exact:
        bits = ((np.arange(1 << u, dtype=np.int64)[:, None] >> np.arange(u)) & 1).astype(bool)
    else:
        bits = rng.random((n_samples, u)) < 0.5
        bits = np.vstack([np.zeros((1, u), dtype=bool), np.ones((1, u), dtype=bool), bits])
    fill = int(fill_grades(reading)[p])
    n_pat = bits.shape[0]
    end = np.full(n_pat, b - a, dtype=np.int64)
    if fill_from is not None:
        end = np.where(bits[:, -1], b - a, fill_from - a)
    grades = np.broadcast_to(reading.grades[a:b], (n_pat, b - a)).copy()
    grades[:, targets - a] = np.where(bits[:, :targets.size], fill, 0)
    added = np.broadcast_to(reading.added[a:b], (n_pat, b - a)).copy()
    added[:, targets - a] = True
    keep = np.arange(b - a)[None, :] < end[:, None]
    offsets = offsets_of(end)
    src = np.broadcast_to(reading.source[a:b], (n_pat, b - a))[keep]
    scores = np.broadcast_to(reading.scores[a:b], (n_pat, b - a))[keep]
    chunk = ScenarioRun(reading.base, np.full(n_pat, reading.query[p]), offsets, src, grades[keep],
                        added[keep], scores)
    return chunk, exact
