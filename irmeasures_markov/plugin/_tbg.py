"""ir_measures Measure for Time-Biased Gain: ``TBG``, and the length sources MPcont(time='tbg') shares.

``TBG(lengths='doclen.tsv.gz')``, ``TBG(lengths='irds:disks45/nocr', norm='constant')@100``,
``TBG(default_length=500)`` (every document assumed 500 words: stated, not
guessed), ``TBG(lengths='mydocs')`` for a mapping registered with
[`register_lengths`][irmeasures_markov.register_lengths].  See docs/time-biased-gain.md.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._registry import Registry
from irmeasures_markov._util._segments import query_blocks, segment_sum
from irmeasures_markov.documents._lengths import DocumentLengths, LengthTable, length_source
from irmeasures_markov.io._content import digest_value
from irmeasures_markov.measures._tbg import NORMS, TBG_DEFAULTS, TBGParameters, ideal_normaliser, tbg_batch
from irmeasures_markov.plugin._base import FLOAT, FamilyMeasure, ParamInfo, family_params, plain_name_rule
from irmeasures_markov.plugin._fitted import FitChoices, fitted_kwargs
from irmeasures_markov.plugin._provider import register_measure

if TYPE_CHECKING:
    from collections.abc import Sequence

    from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch
    from irmeasures_markov.ranking._scenarios import ScenarioRun


__all__ = ["TBG", "register_lengths", "REGISTERED_LENGTHS", "LENGTHS_REGISTRY", "LENGTH_PARAMS", "TIME_MODEL_PARAMS",
           "document_lengths", "LengthTies", "length_fingerprints", "batch_lengths", "tbg_flat_rates",
           "time_parameters"]

#: Length mappings registered by name with :func:`register_lengths`.
REGISTERED_LENGTHS: dict[str, Mapping[str, float]] = {}
REGISTERED_DUPLICATES: dict[str, Mapping[str, str]] = {}


#: the rule of length-source names: a plain word, not a path or an ``irds:`` id
_LENGTHS_NAME = plain_name_rule("register_lengths", reserved_prefixes=("irds:",))
LENGTHS_REGISTRY = Registry("lengths", lambda: REGISTERED_LENGTHS, name_rule=_LENGTHS_NAME)
DUPLICATES_REGISTRY = Registry("duplicates", lambda: REGISTERED_DUPLICATES, name_rule=_LENGTHS_NAME)


def register_lengths(name: str, lengths: Mapping[str, float] | None = None,
                     duplicates: Mapping[str, str] | None = None) -> str:
    """Make a Python mapping usable in measure strings: ``TBG(lengths='name')``.

    The lengths are copied into a [`LengthTable`][irmeasures_markov.documents.LengthTable]
    (validated once, looked up a whole run at a time) and the groups into a
    dict: register again after changing either mapping.

    Parameters
    ----------
    name : str
        A plain word (not a path, not an ``irds:`` id).
    lengths : mapping of str to float, optional
        ``{docid: words}``.
    duplicates : mapping of str to str, optional
        ``{docid: group}``, registered under the same name for ``duplicates='name'``.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a plain word, neither mapping is given, or a length is invalid.
    TypeError
        If ``lengths`` or ``duplicates`` is not a mapping.
    """
    LENGTHS_REGISTRY.key(name)
    if lengths is None and duplicates is None:
        raise ValueError("register_lengths: give lengths and/or duplicates")
    if lengths is not None:
        if not isinstance(lengths, Mapping):
            raise TypeError("register_lengths: lengths must be a mapping {docid: words}, "
                            f"got {type(lengths).__name__}")
        try:
            # registered to be reused over many runs: the vectorised table pays from the first one
            LENGTHS_REGISTRY.register(name, lengths if isinstance(lengths, LengthTable) else LengthTable(lengths,
                                                                                                       build_after=0))
        except ValueError as e:
            raise ValueError(f"register_lengths: {e}") from None
    if duplicates is not None:
        if not isinstance(duplicates, Mapping):
            raise TypeError(f"register_lengths: duplicates must be a mapping {{docid: group}}, "
                            f"got {type(duplicates).__name__}")
        DUPLICATES_REGISTRY.register(name, dict(duplicates))  # a snapshot, like the lengths
    return name


LENGTH_PARAMS = {
    "lengths": ParamInfo(dtype=str, required=False,
                         desc="document lengths in words: a 'docid<TAB>length' file (.gz ok), 'irds:<dataset id>' "
                              "(counted once from ir_datasets and cached), or a name given to a mapping with "
                              "irmeasures_markov.register_lengths"),
    "duplicates": ParamInfo(dtype=str, required=False,
                            desc="duplicate groups: a 'docid<TAB>group' file or a registered name; a document "
                                 "whose group appeared at an earlier rank counts as length 0"),
    "default_length": ParamInfo(dtype=FLOAT, required=False,
                                desc="length (words) assumed for documents without one; without it an unknown "
                                     "length is an error naming the documents"),
}

TIME_MODEL_PARAMS = {
    "t_summary": ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["t_summary"], desc="T_S, seconds to read a summary"),
    "a": ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["a"], desc="seconds per word of a document, T_D(l) = a*l + b"),
    "b": ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["b"], desc="fixed seconds per document, T_D(l) = a*l + b"),
    "pc_rel": ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["pc_rel"],
                        desc="P(C=1|R=1), probability of clicking a relevant summary"),
    "pc_nonrel": ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["pc_nonrel"],
                           desc="P(C=1|R=0), probability of clicking a non-relevant summary"),
    "pc_by_grade": ParamInfo(dtype=str, required=False,
                             desc="graded click probabilities 'grade:p,...' overriding pc_rel/pc_nonrel"),
}


#: id -> (registered duplicates mapping, its digest): registered mappings are snapshots, hashed once
_REGISTERED_DIGESTS: dict[int, tuple] = {}


def _registered_digest(mapping) -> str:
    if isinstance(mapping, LengthTable):
        return mapping.content_digest()
    hit = _REGISTERED_DIGESTS.get(id(mapping))
    if hit is None or hit[0] is not mapping:
        if len(_REGISTERED_DIGESTS) > 64:
            _REGISTERED_DIGESTS.clear()
        hit = _REGISTERED_DIGESTS[id(mapping)] = (mapping, digest_value(mapping))
    return hit[1]


#: the registry of each kind of parameter value
_REGISTRIES = {"lengths": LENGTHS_REGISTRY, "duplicates": DUPLICATES_REGISTRY}


def _source(spec: str, kind: str):
    """``(fingerprint, mapping)`` of a lengths or duplicates value: a registered name, ``irds:ID`` or a file."""
    registry = _REGISTRIES[kind].entries
    if spec in registry:
        mapping = registry[spec]
        return _registered_digest(mapping), mapping
    if (kind == "lengths" and spec.startswith("irds:")) or os.path.exists(spec):
        return length_source(spec, kind)
    known = f"; registered names: {sorted(registry)}" if registry else ""
    raise FileNotFoundError(f"{kind}={spec!r} is neither a registered name nor an existing file{known}")


def _mapping(spec: str, kind: str):
    # a registered mapping is used as it is (its fingerprint is computed only for stored results)
    registry = _REGISTRIES[kind].entries
    return registry[spec] if spec in registry else _source(spec, kind)[1]


def length_fingerprints(measure: FamilyMeasure) -> dict[str, str]:
    """``{parameter: fingerprint}`` of the lengths and duplicates a measure reads (by content)."""
    return {kind: _source(measure.params[kind], kind)[0] for kind in ("lengths", "duplicates")
            if measure.params.get(kind)}


def document_lengths(measure: FamilyMeasure) -> DocumentLengths:
    """The [`DocumentLengths`][irmeasures_markov.documents.DocumentLengths] described by a measure's
    lengths/duplicates/default_length params."""
    p = measure.params
    lengths = _mapping(p["lengths"], "lengths") if p.get("lengths") else {}
    dups = _mapping(p["duplicates"], "duplicates") if p.get("duplicates") else None
    return DocumentLengths(lengths, dups, p.get("default_length"))


class LengthTies:
    """Tie keys of a measure reading document lengths (TBG, ``MPcont(time='tbg')``), as a base class."""

    def tie_values(self, reading: ScenarioRun) -> np.ndarray | None:
        """The document lengths at every rank: documents of equal grade and equal length are interchangeable
        under ties='expected' (NaN at filled ranks); None with duplicate groups, whose lengths depend on the order."""
        if self.params.get("duplicates"):
            return None
        return reading.document_values(document_lengths(self).lookup_segments)


def batch_lengths(prepared: PreparedRun, measure: FamilyMeasure, lengths: DocumentLengths,
                  exact_tie_order: bool = True) -> np.ndarray:
    """Lengths at every flat position of the measure's batch (duplicate groups applied).

    ``exact_tie_order=False``: see [`document_values`][irmeasures_markov.ranking.PreparedRun.document_values].
    """
    jo = bool(measure["judged_only"]) if "judged_only" in measure.SUPPORTED_PARAMS else False
    if lengths.duplicates:
        # duplicate groups are read along each ranking
        batch = measure.batch(prepared, with_docids=True)
        docids = list(chain.from_iterable(batch.docids))
        real = np.fromiter(map(bool, docids), dtype=bool, count=len(docids))
        if real.all():
            return lengths.for_flat_rankings(docids, batch.offsets)
        # filled ranks past a ranking (unjudged='rel', docid ''): NaN, as document_values gives them
        out = np.full(len(docids), np.nan)
        offsets = np.concatenate(([0], np.cumsum(segment_sum(real, batch.offsets))))
        out[real] = lengths.for_flat_rankings([d for d in docids if d], offsets)
        return out
    return prepared.document_values(lengths.lookup_segments, judged_only=jo, cutoff=measure.cutoff,
                                    exact_tie_order=exact_tie_order)


def time_parameters(measure: FamilyMeasure, extra: Sequence[str] = ()) -> TBGParameters:
    """The [`TBGParameters`][irmeasures_markov.measures.TBGParameters] of a measure's time-model parameters
    (validated)."""
    values = {n: measure[n] for n in (*TIME_MODEL_PARAMS, *extra) if n in measure.SUPPORTED_PARAMS}
    # ir_measures returns a sentinel object for optional parameters that were not given
    return TBGParameters(**{n: v for n, v in values.items() if isinstance(v, (int, float, str))})


def tbg_flat_rates(prepared: PreparedRun, batch: RelevanceBatch, measure: FamilyMeasure) -> np.ndarray:
    """MPcont holding rates from TBG's time model, mu_i = 1 / (T_S + T_D(l_i) P(C=1|r_i)), at every flat
    position of ``batch``, with no per-query step.

    Besides the lengths and the rates (8 bytes per document each), the
    arithmetic holds its temporaries for blocks of whole queries of about
    `RATE_BLOCK` documents only (elementwise, so the same values).
    """
    params = time_parameters(measure)
    flat = batch_lengths(prepared, measure, document_lengths(measure))
    rates = np.empty(flat.size)
    offsets = batch.offsets
    for qa, qb in query_blocks(offsets, RATE_BLOCK):
        a, b = int(offsets[qa]), int(offsets[qb])
        mean_time, _ = params.holding_and_gain(batch.grades[a:b], flat[a:b], batch.rel)
        relevant = batch.relevant[a:b]
        if np.any(mean_time[relevant] <= 0):
            raise ValueError("MPcont(time='tbg'): the holding time at a relevant rank is 0 (t_summary = 0 and "
                             "no click time); its rate would be infinite")
        # MP's chain never stays at a non-relevant rank, so its rate is inert; it only has to be a valid rate
        mean_time[~relevant & (mean_time <= 0)] = 1.0
        np.divide(1.0, mean_time, out=rates[a:b])
    return rates


#: documents (whole queries) per block of :func:`tbg_flat_rates`' arithmetic
RATE_BLOCK = 1 << 16


class _TBG(LengthTies, FamilyMeasure):
    """Time-Biased Gain (Smucker & Clarke, SIGIR 2012): sum_k g_k exp(-T(k) ln2 / h).

    T(k) is the expected time to reach rank k from document lengths; see
    docs/time-biased-gain.md for the calibration and length sources.
    """
    __name__ = NAME = "TBG"
    PRETTY_NAME = "Time-Biased Gain"
    SHORT_DESC = "Gain discounted by the expected time to reach each rank (document lengths, clicks, saves)."
    SUPPORTED_PARAMS = family_params(
        halflife=ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["halflife"], desc="h, users' half-life in seconds"),
        **TIME_MODEL_PARAMS,
        ps_rel=ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["ps_rel"],
                         desc="P(S=1|R=1), probability of saving a clicked relevant document"),
        ps_nonrel=ParamInfo(dtype=FLOAT, default=TBG_DEFAULTS["ps_nonrel"],
                            desc="P(S=1|R=0) (calibrated but unused: non-relevant gain is 0)"),
        ps_by_grade=ParamInfo(dtype=str, required=False,
                              desc="graded save probabilities 'grade:p,...' (gain = pc*ps per grade)"),
        norm=ParamInfo(dtype=str, default="none", choices=NORMS,
                       desc="normaliser: 'none' (the paper), 'constant' (unlimited zero-length relevant "
                            "documents, ~17.2) or 'ideal' (best order of the query's relevant documents)"),
        **LENGTH_PARAMS,
        user=ParamInfo(dtype=str, required=False, choices=FitChoices((), "tbg"),
                       desc="a user model fitted to a log, 'fit:NAME' or 'file:PATH': the click probabilities, "
                            "half-life and summary time the fit has replace the defaults"),
    )

    def reads_document_values(self) -> bool:
        return True

    def filled_length(self, lengths):
        """Under unjudged='rel' the user reads on past the ranking: up to the cutoff, else until the decay
        leaves less than 1e-17 of gain (docs/time-biased-gain.md, "Ties and unjudged documents")."""
        if self.cutoff is not None:
            return np.maximum(lengths, self.cutoff)
        params = self.params_object()
        pc, _ = params.click_and_gain(np.arange(0, 101), self["rel"])
        step = params.decay_rate * (params.t_summary + params.b * float(pc.min()))   # decay per filled rank, at least
        depth = int(np.ceil((np.log(1e-17) + np.log(-np.expm1(-step))) / -step)) if step > 0 else None
        if depth is None or depth > 1 << 20:
            raise ValueError(f"{self}: with unjudged='rel' (or 'range', residual=True) the user reads past the "
                             "ranking, and with these times a filled rank costs too little time for the decay to "
                             "end; give a cutoff (@k): ranks are then filled up to it.")
        return lengths + depth

    def input_fingerprints(self):
        return {**length_fingerprints(self), **super().input_fingerprints()}

    def params_object(self) -> TBGParameters:
        extra = ("halflife", "ps_rel", "ps_nonrel", "ps_by_grade")
        if self.params.get("user") is None:
            return time_parameters(self, extra=extra)
        fitted = fitted_kwargs(self["user"], "tbg", "TBG", "user", [*TIME_MODEL_PARAMS, *extra], self.params)
        return dataclasses.replace(time_parameters(self, extra=extra), **fitted)

    def check_params(self):
        self.params_object()
        dl = self.params.get("default_length")
        if dl is not None and dl < 0:
            raise ValueError(f"TBG: default_length must be >= 0 words, got {dl!r}")

    def compute(self, prepared):
        params = self.params_object()
        lengths = document_lengths(self)
        batch = self.batch(prepared)
        # T(k) reads the lengths at relevant ranks and sums the others: a tie group of scores with no
        # positive grade may be summed in file order when its members' holding times follow one formula (no
        # per-grade probabilities, and rel >= 1: none of them is relevant); T(k) then agrees with the docid
        # order up to rounding (a few units in the last place), for a fifth of the tie-break on TREC-8
        exact = self.needs_judgments() or self["rel"] < 1
        flat = filled_lengths(batch_lengths(prepared, self, lengths, exact_tie_order=exact), batch.offsets,
                              self.params.get("default_length"))
        ideal = None
        if self["norm"] == "ideal":
            rel = batch.rel
            judged = prepared.qrels_index.qrels
            ideal = np.zeros(batch.n_queries)
            for i, q in enumerate(batch.qids):
                # every judged document with a gain: pc_by_grade/ps_by_grade may give one to grades below rel
                docs = judged.get(q, {})
                grades = np.fromiter(docs.values(), dtype=np.int64, count=len(docs))
                _, gain = params.click_and_gain(grades, rel)
                useful = gain > 0
                if useful.any():
                    names = [d for d, u in zip(docs, useful.tolist()) if u]
                    ideal[i] = ideal_normaliser(grades[useful], lengths.lookup(names), params, rel, self.cutoff)
        return tbg_batch(batch, flat, params, self["norm"], ideal)


def filled_lengths(flat: np.ndarray, offsets: np.ndarray, default_length: float | None) -> np.ndarray:
    """Lengths with the filled ranks past a ranking (NaN) given ``default_length``, else the mean length of the
    query's documents.

    Parameters
    ----------
    flat : numpy.ndarray
        Lengths at every rank of a batch, NaN at filled ranks.
    offsets : numpy.ndarray
        The batch's query offsets.
    default_length : float, optional
        The length of a document without one.

    Returns
    -------
    numpy.ndarray
        ``flat`` itself when nothing is NaN.

    Raises
    ------
    ValueError
        A query with filled ranks and no document of known length, without ``default_length``.
    """
    missing = np.isnan(flat)
    if not missing.any():
        return flat
    if default_length is not None:
        return np.where(missing, float(default_length), flat)
    known = segment_sum(~missing, offsets)
    if np.any((known == 0) & (segment_sum(missing, offsets) > 0)):
        raise ValueError("TBG: unjudged='rel' fills ranks past a ranking that has no document: give "
                         "default_length, the length of a filled rank")
    mean = segment_sum(np.where(missing, 0.0, flat), offsets) / np.maximum(known, 1)
    return np.where(missing, np.repeat(mean, np.diff(offsets)), flat)


#: measure strings the brute-force tie and unjudged tests evaluate (see plugin/_base.py's Family)
EXAMPLES = (
    "TBG(lengths='brute-all')", "TBG(default_length=500,lengths='brute-part')@4",
    "TBG(lengths='brute-all',norm='ideal',rel=2)", "TBG(judged_only=True,lengths='brute-all')",
    "TBG(halflife=60,lengths='brute-part',default_length=100)",
)

TBG = register_measure(_TBG())
