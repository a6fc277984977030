"""Shared ir_measures machinery: a validating Measure base and one Provider for all families.

Each measure family (MP, M1–M4, P@H, TBG) defines subclasses of
:class:`FamilyMeasure` with ``SUPPORTED_PARAMS`` and a ``compute`` method that
turns a :class:`~irmeasures_markov.ranking.prepared.PreparedRun` into per-query values.
The single :class:`MarkovProvider` ranks and joins each run once and hands the
prepared rankings to every requested measure.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from ir_measures import measures as irm_measures
from ir_measures import providers as irm_providers
from ir_measures.util import Metric

from .._util.cutoffs import check_cutoff
from .._util.errors import InputError
from ..io.content import digest_value
from ..io.normalise import to_run_dict, warn_if_nothing_to_evaluate
from ..ranking.cache import qrels_index
from ..ranking.prepared import PreparedRun, QrelsIndex

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..ranking.prepared import RelevanceBatch


__all__ = ["FamilyMeasure", "MarkovProvider", "PROVIDER", "register_measure", "measure_fingerprint",
           "measure_inputs", "FLOAT", "ParamInfo"]

ParamInfo = irm_measures.ParamInfo
#: Float parameters accept ints too (``p=1`` parses as an int).
FLOAT = (int, float)
_NOT_PROVIDED = irm_measures.base._NOT_PROVIDED


def _type_name(dtype) -> str:
    if isinstance(dtype, tuple):
        return " or ".join(t.__name__ for t in dtype)
    return dtype.__name__


def _canonical_value(info: ParamInfo, value):
    """The one stored form of a parameter value, so that equal values make equal measures.

    A float parameter given as an int or a numpy number is stored as a Python
    float (``p=1`` and ``p=1.0`` both print ``p=1.0``; ``-0.0`` becomes
    ``0.0``), an int parameter given as a numpy integer as an int.  Values of
    the wrong type are left for :meth:`FamilyMeasure.validate_params` to
    report as given.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value) if info.dtype is bool else value
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
    :meth:`compute`; :meth:`check_params` adds cross-parameter rules.

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
        # unknown names are rejected here: ir_measures' repr (used for hashing) cannot print them
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f"{self.NAME}: unknown parameter(s) {unknown}; supported: "
                             f"{sorted(self.SUPPORTED_PARAMS)}")
        # ir_measures prints parameters in dict order: sorted, so the order they were written in is not part
        # of the measure
        params = {name: _canonical_value(self.SUPPORTED_PARAMS[name], params[name]) for name in sorted(params)}
        super().__init__(**params)

    def validate_params(self) -> None:
        """Check the parameters once: names, required ones, types, choices, the cutoff, then :meth:`check_params`.

        Raises
        ------
        ValueError
            If a parameter is unknown, missing though required, of the wrong type or not one of its choices,
            the cutoff is invalid, or :meth:`check_params` rejects a combination.
        """
        if self.validated:
            return
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f"{self.NAME}: unknown parameter(s) {unknown}; supported: "
                             f"{sorted(self.SUPPORTED_PARAMS)}")
        for name, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(name, _NOT_PROVIDED)
            if value is _NOT_PROVIDED:
                if info.required:
                    raise ValueError(f"{self.NAME}: parameter `{name}` is required ({info.desc}).")
                continue
            if info.dtype is not None and not isinstance(value, info.dtype):
                raise ValueError(f"{self.NAME}: parameter `{name}` must be {_type_name(info.dtype)}, "
                                 f"got {value!r} ({info.desc}).")
            if info.dtype is int and isinstance(value, bool):
                raise ValueError(f"{self.NAME}: parameter `{name}` must be an integer, got {value!r}.")
            if info.dtype == FLOAT and isinstance(value, bool):
                raise ValueError(f"{self.NAME}: parameter `{name}` must be a number, got {value!r}.")
            if info.choices is not _NOT_PROVIDED and value not in info.choices:
                raise ValueError(f"{self.NAME}: parameter `{name}`={value!r} is not one of "
                                 f"{list(info.choices)} ({info.desc}).")
        check_cutoff(self.params.get("cutoff"), self.NAME)
        self.check_params()
        self.validated = True

    def check_params(self) -> None:
        """Cross-parameter validation; raise ValueError with a clear message."""

    def input_fingerprints(self) -> dict[str, str]:
        """``{parameter: fingerprint}`` of what compute() reads besides the run and the qrels.

        Files are named by the digest of their bytes, registered tables,
        kernels and fits by their content (never by a path, a name or a
        modification time).  Families whose parameters name such inputs
        override this; the default reads nothing else.

        Returns
        -------
        dict of str to str
        """
        return {}

    def content_fingerprint(self) -> str:
        """One digest of :meth:`input_fingerprints`, or ``''`` when the measure reads nothing else.

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
        :meth:`PreparedRun.batch`); per-grade parameters may name grades <= 0.

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
        :class:`~irmeasures_markov.ranking.prepared.PreparedRun`).

        Returns
        -------
        bool
        """
        return False

    def ranks_read(self) -> int | None:
        """How many top-ranked documents of each query compute() reads, or None for all of them.

        compute() reads a prepared run through :meth:`batch`, so a cutoff
        bounds what it reads, unless ``judged_only`` removes unjudged
        documents first.  When every measure of an evaluator is bounded, the
        evaluator ranks only that deep (``PreparedRun(depth=...)``).  A
        family that reads anything else of the prepared run beyond its
        cutoff overrides this to return None.

        Returns
        -------
        int or None
            The cutoff, or None when there is none or ``judged_only`` is set.
        """
        jo = self["judged_only"] if "judged_only" in self.SUPPORTED_PARAMS else False
        return None if jo else self.cutoff

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
            The batch made by :meth:`PreparedRun.batch`.
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
    other providers), else one digest of :func:`measure_inputs`.

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


def _check_ours(measures) -> None:
    """Refuse what :class:`MarkovProvider` does not compute, saying where to go instead."""
    ours = {m.NAME for m in MarkovProvider.SUPPORTED_MEASURES}
    for m in measures:
        if not isinstance(m, irm_measures.Measure):
            raise TypeError(f"measures must be ir_measures Measure objects, got {m!r}"
                            + (" (parse strings with ir_measures.parse_measure)" if isinstance(m, str) else ""))
        if not isinstance(m, FamilyMeasure) or m.NAME not in ours:
            raise ValueError(f"{m} is not an irmeasures_markov measure: irmeasures_markov.PROVIDER computes only "
                             f"this package's measures ({', '.join(sorted(ours))}). Evaluate other measures, or a "
                             "mixture, with ir_measures.calc_aggregate / ir_measures.iter_calc / "
                             "ir_measures.evaluator, which hand each measure to its provider.")
        m.validate_params()


class MarkovEvaluator(irm_providers.Evaluator):
    """Evaluates runs for fixed qrels and measures of this package.

    In-memory qrels and runs follow :mod:`irmeasures_markov.io.normalise`: str ids,
    int32 grades.  When the run and the qrels share no query, or either is
    empty, :meth:`values` warns once (``RuntimeWarning``) naming the
    situation; every qrels query then scores the measure's DEFAULT (0), and
    aggregates are never NaN.

    ``qrels`` may also be a :class:`~irmeasures_markov.ranking.prepared.QrelsIndex`.
    Otherwise the index comes from :func:`irmeasures_markov.ranking.cache.qrels_index`:
    ``ir_measures.calc_aggregate`` makes an evaluator per call, and the
    judgments of an unchanged qrels dict or DataFrame are indexed once, not
    once per call.
    """

    def __init__(self, measures: Iterable[irm_measures.Measure], qrels: object) -> None:
        measures = list(measures)
        _check_ours(measures)
        self.qrels_index = qrels if isinstance(qrels, QrelsIndex) else qrels_index(qrels)
        # per evaluator, as when every evaluator had its own index: each warns once about queries without
        # relevant documents, even when the index is shared
        self._warned_empty = set()
        depths = [m.ranks_read() for m in measures]
        self._depth = None if not depths or None in depths else max(depths)
        super().__init__(measures, self.qrels_index.query_ids)

    def prepare(self, run: object, ids_checked: bool = False) -> PreparedRun:
        """The run ranked and joined with the qrels (ids checked unless ``ids_checked``; scores always)."""
        # PreparedRun checks the ids of a dict run itself, while ranking it
        if not isinstance(run, Mapping):
            run, ids_checked = to_run_dict(run), True
        return PreparedRun(self.qrels_index, run, ids_checked=ids_checked, depth=self._depth,
                           join_docids=any(m.reads_document_values() for m in self.measures))

    def values(self, run: object, warn_empty: bool = True) -> dict[irm_measures.Measure, dict[str, float]]:
        """``{measure: {qid: value}}`` for the queries present in both qrels and run.

        ``warn_empty=False`` leaves the warning about an empty or disjoint
        run/qrels pair to the caller.
        """
        if not isinstance(run, Mapping):
            run = to_run_dict(run)  # once: an iterator of ScoredDoc cannot be read twice
        try:
            return self.prepared_values(self.prepare(run), run, warn_empty=warn_empty)
        except InputError as exc:
            # an input error's message names the file, field or parameter: the frames inside the evaluation
            # (a dozen, e.g. down to the length lookup of a TBG without lengths) only bury it (its cause is kept)
            raise exc.with_traceback(None)  # noqa: B904  re-raises the caught error itself: `from` would replace its cause

    def prepared_values(self, prepared: PreparedRun, run: Mapping, warn_empty: bool = True
                        ) -> dict[irm_measures.Measure, dict[str, float]]:
        """:meth:`values` of a run already ranked by :meth:`prepare` (``run``: the dict it was made from)."""
        if warn_empty and not prepared.queries:
            warn_if_nothing_to_evaluate(self.qrels_index.qrels, run, stacklevel=3)
        rels = {m["rel"] for m in self.measures if "rel" in m.SUPPORTED_PARAMS}
        for rel in sorted(rels) or [1]:
            self.qrels_index.warn_if_no_relevant(rel=rel, warned=self._warned_empty)
        out = {}
        qids = prepared.qids
        for m in self.measures:
            vals = np.asarray(m.compute(prepared), dtype=np.float64)
            if vals.shape != (len(qids),):
                raise RuntimeError(f"{m}: compute returned shape {vals.shape} for {len(qids)} queries")
            out[m] = dict(zip(qids, vals.tolist()))
        return out

    def _iter_calc(self, run: object) -> Iterator[Metric]:
        # ir_measures' Evaluator hook: its own iter_calc/calc_aggregate call it (tests/plugin/test_one_pass.py
        # checks ours against them), so it is not dead although ours override both
        for m, per_query in self.values(run).items():
            for qid, v in per_query.items():
                yield Metric(query_id=qid, measure=m, value=v)

    # iter_calc and calc_aggregate give exactly what ir_measures' Evaluator gives (same metrics, same order, same
    # sums), without hashing every (measure, query) pair: a Measure hashes by its repr, rebuilt on every call,
    # which costs more than computing the measure when there are many queries.

    def iter_calc(self, run: object) -> Iterator[Metric]:
        """Per-query metrics: the run's queries in run order, then qrels queries it did not answer at DEFAULT."""
        values = self.values(run)
        for m, per_query in values.items():
            for qid, v in per_query.items():
                yield Metric(query_id=qid, measure=m, value=v)
        missing = []
        for m, per_query in values.items():
            name = str(m)
            missing.extend((name, qid, m) for qid in self.qrel_qids if qid not in per_query)
        missing.sort(key=lambda item: item[:2])  # as ir_measures orders them: by (str(measure), query id)
        for _, qid, m in missing:
            yield Metric(query_id=qid, measure=m, value=m.DEFAULT)

    def calc_aggregate(self, run: object) -> dict[irm_measures.Measure, float]:
        """Each measure's aggregate (the mean) over every qrels query, one unanswered scoring DEFAULT."""
        values = self.values(run)
        aggregators = {m: m.aggregator() for m in self.measures}
        n_qrels = len(self.qrel_qids)
        for m, per_query in values.items():
            agg = aggregators[m]
            # the order of ir_measures' Evaluator: the computed values, then the unanswered queries' defaults
            for v in per_query.values():
                agg.add(v)
            for _ in range(n_qrels - len(per_query)):
                agg.add(m.DEFAULT)
        return {m: agg.result() for m, agg in aggregators.items()}


class MarkovProvider(irm_providers.Provider):
    """ir_measures provider for every irmeasures_markov measure.

    Usable directly, e.g. ``PROVIDER.calc_aggregate([MP], qrels, run)``, or
    through ``ir_measures.calc_aggregate`` once registered in the DefaultPipeline.
    Directly it computes only this package's measures: any other measure
    (``ir_measures.AP``) raises ``ValueError``; ``ir_measures.calc_aggregate``
    evaluates mixtures.
    """
    NAME = "irmeasures_markov"
    SUPPORTED_MEASURES: list[irm_measures.Measure] = []

    def supports(self, measure: irm_measures.Measure) -> bool:
        """Whether ``measure`` is one of this package's (its parameters are validated: ValueError if bad).

        Parameters
        ----------
        measure : ir_measures.measures.Measure
            Any ir_measures measure.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            If the measure is one of this package's but its parameters are invalid.
        """
        if not isinstance(measure, FamilyMeasure):
            return False
        if measure.NAME not in {m.NAME for m in self.SUPPORTED_MEASURES}:
            return False
        measure.validate_params()
        return True

    def _evaluator(self, measures, qrels):
        # a measure of another provider raises a ValueError saying to use ir_measures' own functions
        return MarkovEvaluator(measures, qrels)

    def install_instructions(self) -> str:
        """How to install this provider (ir_measures shows it when a provider is missing).

        Returns
        -------
        str
        """
        return "pip install irmeasures-markov"


PROVIDER = MarkovProvider()


def register_measure(measure: FamilyMeasure, aliases: Sequence[str] = ()) -> FamilyMeasure:
    """Register ``measure`` (and aliases) with ir_measures and our provider, once.

    Parameters
    ----------
    measure : FamilyMeasure
        The measure (usually its unparameterised instance).
    aliases : sequence of str
        Further names in the ir_measures registry (one another package's measure holds is kept: a warning).

    Returns
    -------
    FamilyMeasure
        ``measure`` itself.
    """
    registry = irm_measures.registry
    for name in (measure.NAME, *aliases):
        existing = registry.get(name)
        if existing is None:
            registry[name] = measure
        elif type(existing).__module__.split(".")[0] != "irmeasures_markov" and \
                type(existing).__qualname__ != type(measure).__qualname__:
            warnings.warn(f"ir_measures already has a measure named {name!r}; not overriding it.", stacklevel=2)
    if all(m.NAME != measure.NAME for m in MarkovProvider.SUPPORTED_MEASURES):
        MarkovProvider.SUPPORTED_MEASURES.append(measure)
    return measure


def install_provider() -> None:
    """Append our provider to ``ir_measures.DefaultPipeline`` once (idempotent)."""
    import ir_measures
    irm_providers.registry.setdefault(PROVIDER.NAME, PROVIDER)
    pipeline = ir_measures.DefaultPipeline.providers
    if not any(getattr(p, "NAME", None) == PROVIDER.NAME for p in pipeline):
        pipeline.append(PROVIDER)
