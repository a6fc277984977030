"""The validating Measure base class of every family.

Each measure family (MP, M1–M4, P@H, TBG) defines subclasses of
[`FamilyMeasure`][irmeasures_markov.plugin.FamilyMeasure] with ``SUPPORTED_PARAMS`` and a ``compute`` method that
turns a [`PreparedRun`][irmeasures_markov.ranking.PreparedRun] into per-query values.
The provider that hands prepared runs to the measures is in
`irmeasures_markov.plugin._provider`.
"""
from __future__ import annotations

import os
from numbers import Real
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from ir_measures import measures as irm_measures

from irmeasures_markov._util._cutoffs import check_cutoff
from irmeasures_markov._util._registry import RegisteredNames
from irmeasures_markov.io._content import digest_value
from irmeasures_markov.plugin._fitted import FitChoices, canonical_spec, is_fit_spec
from irmeasures_markov.plugin._variants import TIES, UNJUDGED_CHOICES, check_variant_params, is_variant

if TYPE_CHECKING:
    from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch
    from irmeasures_markov.ranking._scenarios import ScenarioRun


__all__ = ["Family", "FamilyMeasure", "measure_fingerprint", "measure_inputs", "FLOAT", "NOT_PROVIDED", "ParamInfo",
           "COMMON_PARAMS",
           "VARIANT_PARAMS", "family_params", "plain_name_rule", "type_name"]

ParamInfo = irm_measures.ParamInfo
#: Float parameters accept ints too (``p=1`` parses as an int).
FLOAT = (int, float)
#: ir_measures' marker of a parameter without a value (its ParamInfo default and choices use it too)
NOT_PROVIDED = irm_measures.base._NOT_PROVIDED

#: the parameters :meth:`FamilyMeasure.batch` reads the ranking with, the same in every family
COMMON_PARAMS = {
    "cutoff": ParamInfo(dtype=int, required=False, desc="evaluate the first k documents only"),
    "rel": ParamInfo(dtype=int, default=1, desc="minimum grade counted as relevant (inclusive)"),
    "judged_only": ParamInfo(dtype=bool, default=False, desc="drop unjudged documents before ranking (condensed list)"),
}

#: the parameters every family takes (tie order, unjudged documents; plugin/_variants.py, docs/ties-and-holes.md)
VARIANT_PARAMS = {
    "ties": ParamInfo(dtype=str, default="docid", choices=TIES,
                      desc="order inside groups of equal scores: 'docid' (trec_eval), 'optimistic' (higher grades "
                           "first), 'pessimistic' (lower grades first), 'expected' (mean over all orders)"),
    "unjudged": ParamInfo(dtype=str, default="nonrel", choices=UNJUDGED_CHOICES,
                          desc="unjudged documents: 'nonrel', 'drop' (condensed list), 'rel' (relevant at the "
                               "query's highest grade), 'range' (value = hi - lo over all their judgments)"),
    "residual": ParamInfo(dtype=bool, default=False,
                          desc="the value with unjudged='rel' minus the value with unjudged='nonrel'"),
    "seed": ParamInfo(dtype=int, default=0, desc="seed of Monte Carlo tie orders and sampled judgments"),
}


class Family(NamedTuple):
    """One measure family, as ``FAMILIES`` (`irmeasures_markov.plugin`) declares it.

    ``plugin`` names its module in `irmeasures_markov.plugin` (its Measure classes, registered when
    imported, and ``EXAMPLES``: measure strings the brute-force tie and unjudged tests evaluate, which may read
    the inputs those tests register, rates ``'brute'``, lengths ``'brute-all'`` and ``'brute-part'``), or is
    None for a kernel-only family, whose measures other providers name.  ``kernel`` names its modules or
    packages under `irmeasures_markov.measures`, the main one first: the import-linter contract keeps
    families independent of each other and lets the modules of one family import each other.  ``page`` is its
    user page under docs/, which the site lists under "Measures" in this order (tools/mkdocs_families.py).
    """
    plugin: str | None
    kernel: tuple[str, ...]
    page: str | None = None


def family_params(**params: ParamInfo) -> dict[str, ParamInfo]:
    """A family's ``SUPPORTED_PARAMS``: its own ``params``, then `COMMON_PARAMS` and `VARIANT_PARAMS`.

    Parameters
    ----------
    **params : ParamInfo
        The family's own parameters, in the order ``irmeasures-markov measures`` lists them.

    Returns
    -------
    dict of str to ParamInfo
        A new dict.
    """
    return {**params, **COMMON_PARAMS, **VARIANT_PARAMS}


def plain_name_rule(function: str, reserved_prefixes: tuple[str, ...] = ()):
    """The name rule of a registry whose names a measure string quotes: a plain word, not a path."""
    def rule(name: object) -> None:
        if not isinstance(name, str) or not name or os.sep in name or name.startswith(reserved_prefixes) \
                or "'" in name or '"' in name:
            raise ValueError(f"{function}: name must be a plain word (not a path), got {name!r}")
    return rule


def type_name(dtype) -> str:
    """A parameter's accepted Python type(s) as text (``'int or float'``, ``'any'`` for None)."""
    if dtype is None:
        return "any"
    if isinstance(dtype, tuple):
        return " or ".join(t.__name__ for t in dtype)
    return dtype.__name__


def _canonical_value(info: ParamInfo, value):
    """The one stored form of a parameter value, so that equal values make equal measures.

    A float parameter given as an int or a numpy number is stored as a Python
    float (``p=1`` and ``p=1.0`` both print ``p=1.0``; ``-0.0`` becomes
    ``0.0``), an int parameter given as a numpy integer as an int, a fitted model
    (``'FIT:name'``, ``'File:path'``) with its prefix in lower case, any other value of a
    parameter whose names may be registered (MP's ``model``, M1-M4's ``dist``) in upper case.  Values of
    the wrong type are left for
    [`FamilyMeasure.validate_params`][irmeasures_markov.plugin.FamilyMeasure.validate_params] to
    report as given.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value) if info.dtype is bool else value
    if isinstance(info.choices, FitChoices) and is_fit_spec(value):
        return canonical_spec(value)
    if isinstance(info.choices, FitChoices) and isinstance(info.choices.base, RegisteredNames) \
            and isinstance(value, str):
        return value.upper()
    if info.dtype == FLOAT and isinstance(value, Real):
        try:
            return float(value) + 0.0
        except (OverflowError, ValueError):
            return value
    if info.dtype is int and isinstance(value, np.integer):
        return int(value)
    return value


class FamilyMeasure(irm_measures.Measure):
    """A Measure whose parameters are validated with clear ``ValueError`` messages.

    Subclasses set ``__name__``/``NAME``, ``SUPPORTED_PARAMS`` and implement
    [`compute`][irmeasures_markov.plugin.FamilyMeasure.compute];
    [`check_params`][irmeasures_markov.plugin.FamilyMeasure.check_params] adds cross-parameter rules.

    Measures compare, hash and print by their ``str()`` (ir_measures), so the
    constructor stores parameters in one canonical form: float parameters as
    Python floats (``PH(p=1)`` is ``PH(p=1.0)``: equal, one hash, one result
    key), and parameters in alphabetical order, whatever order they were
    written in (``PH(q=0.1,p=0.5)`` is ``PH(p=0.5,q=0.1)``).
    Parameters equal to their default are omitted from ``str()``, so
    ``MP(model='GL_AD_ID')`` is ``MP``.
    """
    AT_PARAM = "cutoff"
    DEFAULT = 0.0

    def __init__(self, **params: object) -> None:
        # refused here, where every measure is made (ir_measures' __call__ and @ too): its repr, used for
        # hashing, cannot print an unknown parameter
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f"{self.NAME}: unknown parameter(s) {unknown}; supported: "
                             f"{sorted(self.SUPPORTED_PARAMS)}")
        # ir_measures prints parameters in dict order: sorted, so the order they were written in is not part
        # of the measure
        params = {name: _canonical_value(self.SUPPORTED_PARAMS[name], params[name]) for name in sorted(params)}
        super().__init__(**params)

    def validate_params(self) -> None:
        """Check the parameters once: required ones, types, choices, the cutoff, then
        [`check_params`][irmeasures_markov.plugin.FamilyMeasure.check_params] (an unknown name is refused when the
        measure is made).

        Raises
        ------
        ValueError
            If a parameter is missing though required, of the wrong type or not one of its choices,
            the cutoff is invalid, or [`check_params`][irmeasures_markov.plugin.FamilyMeasure.check_params] rejects a
            combination.
        """
        if self.validated:
            return
        for name, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(name, NOT_PROVIDED)
            if value is NOT_PROVIDED:
                if info.required:
                    raise ValueError(f"{self.NAME}: parameter `{name}` is required ({info.desc}).")
                continue
            if info.dtype is not None and not isinstance(value, info.dtype):
                raise ValueError(f"{self.NAME}: parameter `{name}` must be {type_name(info.dtype)}, "
                                 f"got {value!r} ({info.desc}).")
            if isinstance(value, bool) and (info.dtype is int or info.dtype == FLOAT):
                raise ValueError(f"{self.NAME}: parameter `{name}` must be "
                                 f"{'an integer' if info.dtype is int else 'a number'}, got {value!r}.")
            if info.choices is not NOT_PROVIDED and value not in info.choices:
                raise ValueError(f"{self.NAME}: parameter `{name}`={value!r} is not one of "
                                 f"{list(info.choices)} ({info.desc}).")
        check_cutoff(self.params.get("cutoff"), self.NAME)
        check_variant_params(self)
        self.check_params()
        self.validated = True

    def check_params(self) -> None:
        """Cross-parameter validation; raise ValueError with a clear message."""

    def input_fingerprints(self) -> dict[str, str]:
        """``{parameter: fingerprint}`` of what compute() reads besides the run and the qrels.

        Files are named by the digest of their bytes, registered tables,
        kernels and fits by their content (never by a path, a name or a
        modification time).  The default reads the parameters whose choices are a
        `FitChoices` (a fit or a registered name); families whose parameters name
        other inputs add them.

        Returns
        -------
        dict of str to str
        """
        out = {}
        for name, info in self.SUPPORTED_PARAMS.items():
            if isinstance(info.choices, FitChoices):
                digest = info.choices.fingerprint(self.params.get(name), self.NAME, name)
                if digest is not None:
                    out[name] = digest
        return out

    def content_fingerprint(self) -> str:
        """One digest of [`input_fingerprints`][irmeasures_markov.plugin.FamilyMeasure.input_fingerprints], or ``''``
        when the measure reads nothing else.

        Returns
        -------
        str
        """
        parts = self.input_fingerprints()
        return digest_value(parts) if parts else ""

    def aggregator(self) -> irm_measures.base.MeanAgg:
        """The aggregator of per-query values: their mean, ``DEFAULT`` over no query (never NaN).

        Returns
        -------
        ir_measures.measures.base.MeanAgg
        """
        # the mean over no query (empty qrels, which MarkovEvaluator warns about) is DEFAULT, never NaN
        return irm_measures.base.MeanAgg(default=self.DEFAULT)

    def compute(self, prepared: PreparedRun) -> np.ndarray:
        """Values for ``prepared.qids``, in that order.

        Parameters
        ----------
        prepared : PreparedRun
            The run ranked and joined with the qrels.

        Returns
        -------
        numpy.ndarray
        """
        raise NotImplementedError

    # shortcuts used by compute() implementations
    @property
    def cutoff(self) -> int | None:
        return self.params.get("cutoff")

    def needs_judgments(self) -> bool:
        """Whether compute() tells judged non-relevant from unjudged documents by grade.

        Measures that read only ``grade >= rel`` keep the default False, so
        their batches skip the join with every judgment (see
        `PreparedRun.batch`); per-grade parameters may name grades <= 0.

        Returns
        -------
        bool
            True when a per-grade parameter (``pc_by_grade``, ``ps_by_grade``) is set.
        """
        return any(self.params.get(name) for name in ("pc_by_grade", "ps_by_grade"))

    def reads_document_values(self) -> bool:
        """Whether compute() looks a value up for every retrieved document (e.g. its length).

        If any measure does, the evaluator has each query's docids joined
        into one string while they are still in cache (see
        [`PreparedRun`][irmeasures_markov.ranking.PreparedRun]).

        Returns
        -------
        bool
        """
        return False

    def ranks_read(self) -> int | None:
        """How many top-ranked documents of each query compute() reads, or None for all of them.

        compute() reads a prepared run through [`batch`][irmeasures_markov.plugin.FamilyMeasure.batch], so a cutoff
        bounds what it reads, unless ``judged_only`` removes unjudged
        documents first.  When every measure of an evaluator is bounded, the
        evaluator ranks only that deep (`PreparedRun` asks its measures).  A
        family that reads anything else of the prepared run beyond its
        cutoff overrides this to return None.

        Returns
        -------
        int or None
            The cutoff, or None when there is none or ``judged_only`` is set.
        """
        if is_variant(self):
            return None   # other tie orders and judgments are made from the whole ranking
        jo = self["judged_only"] if "judged_only" in self.SUPPORTED_PARAMS else False
        return None if jo else self.cutoff

    def reads_scores(self) -> bool:
        """Whether compute() makes other tie orders from the score at every rank (the prepared run then keeps them).

        Returns
        -------
        bool
            True for a ``ties``, ``unjudged`` or ``residual`` variant.
        """
        return is_variant(self)

    def filled_length(self, lengths: np.ndarray) -> np.ndarray:
        """How many ranks ``unjudged='rel'`` reads for rankings of ``lengths`` documents: ranks past the end
        hold relevant documents.

        A family whose user can read past the last retrieved document (e.g.
        an RBP-type stopping distribution without a cutoff) overrides this to
        give the ranks up to which the remaining weight is negligible (or up to
        the cutoff); the default reads the ranking only.

        Parameters
        ----------
        lengths : numpy.ndarray
            Ranked documents of each query.

        Returns
        -------
        numpy.ndarray
            Ranks to read, at least ``lengths``.
        """
        return lengths

    def tie_values(self, reading: ScenarioRun) -> np.ndarray | None:
        """For a measure that reads a value per document: that value at every rank of ``reading``, or None.

        ``ties='expected'`` treats documents of one tie group with equal grades
        and equal values as interchangeable; None makes every document distinct.

        Parameters
        ----------
        reading : ScenarioRun
            The readings of the run.

        Returns
        -------
        numpy.ndarray or None
        """
        return None

    def expected_over_ties(self, reading: ScenarioRun, keys: np.ndarray, seed: int = 0
                           ) -> np.ndarray | tuple[np.ndarray, np.ndarray] | None:
        """The mean over every order of every tie group by a method of the family's own, or None.

        A closed form, or an enumeration cheaper than evaluating every
        arrangement as a run (MP's, from the relevant ranks alone).  It keeps
        the contract of ``ties='expected'``: exact up to
        `EXACT_LIMIT` arrangements
        per query, seeded Monte Carlo (from ``seed`` and the query id) beyond.

        Parameters
        ----------
        reading : ScenarioRun
            The readings of the run (one per query).
        keys : numpy.ndarray
            The tie key of every rank (ranks with equal keys are interchangeable).
        seed : int
            The measure's ``seed``.

        Returns
        -------
        numpy.ndarray, tuple of numpy.ndarray, or None
            One value per reading, or ``(values, standard errors)``; None to leave it to the general method.
        """
        return None

    def batch(self, prepared: PreparedRun, with_docids: bool = False) -> RelevanceBatch:
        """The prepared run's relevance arrays as this measure reads them (its ``rel``, ``judged_only``, cutoff).

        Parameters
        ----------
        prepared : PreparedRun
            The run ranked and joined with the qrels.
        with_docids : bool
            Also give each query's docids in rank order.

        Returns
        -------
        RelevanceBatch
            The batch made by `PreparedRun.batch`.
        """
        rel = self["rel"] if "rel" in self.SUPPORTED_PARAMS else 1
        jo = self["judged_only"] if "judged_only" in self.SUPPORTED_PARAMS else False
        return prepared.batch(rel=rel, judged_only=jo, cutoff=self.cutoff, with_docids=with_docids,
                              judgments=self.needs_judgments())


def measure_inputs(measure: irm_measures.Measure) -> dict[str, str]:
    """``{parameter: fingerprint}`` of what a measure reads besides the run and the qrels (files by their
    bytes, registered tables, kernels and fits by content); ``{}`` for every measure of other providers.

    Parameters
    ----------
    measure : ir_measures.measures.Measure
        Any ir_measures measure.

    Returns
    -------
    dict of str to str
        ``{parameter: fingerprint}``, empty when the measure reads nothing else.
    """
    return measure.input_fingerprints() if isinstance(measure, FamilyMeasure) else {}


def measure_fingerprint(measure: irm_measures.Measure) -> str:
    """What a measure reads besides the run and the qrels, by content: ``''`` when nothing (every measure of
    other providers), else one digest of [`measure_inputs`][irmeasures_markov.plugin.measure_inputs].

    A stored result is the same for the same measure string, qrels, run and
    fingerprint; the grid's cell keys hold it (see docs/reliability.md).

    Parameters
    ----------
    measure : ir_measures.measures.Measure
        Any ir_measures measure.

    Returns
    -------
    str
    """
    return measure.content_fingerprint() if isinstance(measure, FamilyMeasure) else ""

