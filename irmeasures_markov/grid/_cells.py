"""Cells of an experiment grid, their keys, and content hashes of qrels and runs.

A *cell* is the smallest result a grid stores: one array computed for one
(collection, run, measure set, pool sample, resample) combination, e.g. the
per-topic values ``[measure, topic]`` of one run on one reduced pool.  Its
`Cell.key` hashes every field, including content hashes of the qrels
and of the run, the content fingerprint of every file, table, kernel or fit a
measure reads, and the package version, so a result read back from a store
is reused only when the inputs that produced it are byte-for-byte the same
data.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from irmeasures_markov._util._version import package_version
from irmeasures_markov.io._content import digest_value, file_digest
from irmeasures_markov.plugin import measure_inputs

__all__ = ["Cell", "qrels_hash", "run_hash", "measures_key", "fresh_token"]

#: the package version, part of every cell key (a new release never serves cells of an old one)
__version__ = package_version()

#: Bumped when a change of the cell key changes, or when a code path of a released version starts giving other
#: values under the same key (the version stays the same between releases): a store written before is then
#: recomputed, never served.  The package version is part of every key as well, so a store written by another
#: version of the package is never reused.  "3": the standard measures (R@k, SetP, Success@k, ...) moved from
#: pytrec_eval's float32 scores to the float64 ranking.
CELL_FORMAT = "3"


@dataclass(frozen=True)
class Cell:
    """One result of a grid.

    ``kind`` names the computation (``"evaluate"``, ``"allpairs"``, ...);
    ``collection`` and ``run`` name the data; ``measures`` is the canonical
    measure-set key (`measures_key`); ``pool`` the percent of the pool
    kept (100 = the full qrels) and ``seed`` the pool sample; ``resample``
    describes a resampling (test, number of resamples, seed), empty when none.
    ``qrels_hash`` and ``run_hash`` are content hashes (`qrels_hash`,
    `run_hash`).
    """
    kind: str
    collection: str
    run: str
    measures: str
    pool: float = 100.0
    seed: int = 0
    resample: str = ""
    qrels_hash: str = ""
    run_hash: str = ""
    key: str = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        parts = (CELL_FORMAT, __version__, self.kind, self.collection, self.run, self.measures,
                 repr(float(self.pool)), str(int(self.seed)), self.resample, self.qrels_hash, self.run_hash)
        h = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        object.__setattr__(self, "key", h)


def _update_str(h, s: str):
    b = s.encode("utf-8", "surrogateescape")
    h.update(len(b).to_bytes(8, "little"))
    h.update(b)


def _nested_hash(tag: bytes, nested, update_value) -> str:
    """sha256 of ``{qid: {docid: value}}`` in sorted order, each string length-prefixed."""
    h = hashlib.sha256(tag)
    for q in sorted(nested):
        _update_str(h, q)
        docs = nested[q]
        h.update(len(docs).to_bytes(8, "little"))
        for d in sorted(docs):
            _update_str(h, d)
            update_value(h, docs[d])
    return h.hexdigest()[:32]


def qrels_hash(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """SHA-256 of the qrels' content, independent of dict order.

    Parameters
    ----------
    qrels : mapping of str to mapping of str to int
        ``{qid: {docid: grade}}``.

    Returns
    -------
    str
        The first 32 hex digits of the hash.
    """
    return _nested_hash(b"qrels\0", qrels, lambda h, grade: h.update(int(grade).to_bytes(8, "little", signed=True)))


def run_hash(run: Mapping[str, Mapping[str, float]] | str | os.PathLike[str]) -> str:
    """SHA-256 of a run: of the file's bytes for a path, of the content (order-free) for a dict.

    Scores are hashed as their float64 ``repr``, which round-trips exactly.

    Parameters
    ----------
    run : mapping of str to mapping of str to float, or str or os.PathLike
        ``{qid: {docid: score}}``, or the path of a run file.

    Returns
    -------
    str
        32 hex digits: the first 32 of the SHA-256 for a dict, the digest of the file's bytes as stored (a
        ``.gz`` run is hashed compressed) for a path.

    Raises
    ------
    OSError
        A run file that cannot be read.
    """
    if isinstance(run, (str, os.PathLike)):
        return file_digest(run)
    return _nested_hash(b"run\0", run, lambda h, score: _update_str(h, repr(float(score))))


def measures_key(measures: Sequence, topics: Iterable[str], native: bool = True,
                 inputs: Sequence[Mapping[str, str]] | None = None) -> str:
    """Canonical key of a measure set evaluated over ``topics``: measure reprs with the content fingerprint of
    what each reads besides the run and qrels ([`measure_fingerprint`][irmeasures_markov.plugin.measure_fingerprint]:
    files by
    their bytes, registered tables, kernels and fits by content), a hash of the topics, ``native``.

    ``inputs``: each measure's [`measure_inputs`][irmeasures_markov.plugin.measure_inputs],
    when already read.  Labels are left out: they name columns and do not
    change numbers.

    Parameters
    ----------
    measures : sequence
        The ir_measures measures of the set, in order.
    topics : iterable of str
        The topics they are evaluated over, in order.
    native : bool
        Whether the standard measures are computed natively (see
        [`evaluate_grid`][irmeasures_markov.experiments.evaluate_grid]).
    inputs : sequence of mapping of str to str, optional
        Each measure's ``{parameter: fingerprint}``; read from the measures when None.

    Returns
    -------
    str
        The key.
    """
    th = hashlib.sha256("\x1f".join(topics).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    parts = []
    for m, read in zip(measures, inputs if inputs is not None else map(measure_inputs, measures)):
        fp = digest_value(dict(read)) if read else ""   # measure_fingerprint's digest
        parts.append(f"{m!r}#{fp}" if fp else repr(m))
    return ";".join(parts) + f"|topics={th}|native={int(bool(native))}"


def fresh_token() -> str:
    """A token unique to this grid, standing in for a content hash when no store is used."""
    return "mem-" + uuid.uuid4().hex
