"""The ir_measures provider of this package: the evaluator, the provider, registration.

[`MarkovProvider`][irmeasures_markov.plugin.MarkovProvider] ranks and joins each run once and hands the prepared
rankings to every requested measure ([`FamilyMeasure`][irmeasures_markov.plugin.FamilyMeasure]);
[`register_measure`][irmeasures_markov.plugin.register_measure] adds a family's measures to ``ir_measures``'
registry and to the provider.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ir_measures import measures as irm_measures
from ir_measures import providers as irm_providers
from ir_measures.util import Metric

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.io._content import read_once
from irmeasures_markov.io._normalise import run_dict, warn_if_nothing_to_evaluate
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.plugin._variants import MetricWithExtras, family_values
from irmeasures_markov.ranking._cache import qrels_index
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import QrelsIndex

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MarkovEvaluator", "MarkovProvider", "PROVIDER", "register_measure", "install_provider"]


def _check_ours(measures) -> None:
    """Refuse what [`MarkovProvider`][irmeasures_markov.plugin.MarkovProvider] does not compute, saying where to go
    instead."""
    for m in measures:
        if not isinstance(m, irm_measures.Measure):
            raise TypeError(f"measures must be ir_measures Measure objects, got {m!r}"
                            + (" (parse strings with ir_measures.parse_measure)" if isinstance(m, str) else ""))
        if not PROVIDER.supports(m):   # which validates the parameters of ours
            ours = sorted(o.NAME for o in MarkovProvider.SUPPORTED_MEASURES)
            raise ValueError(f"{m} is not an irmeasures_markov measure: irmeasures_markov.PROVIDER computes only "
                             f"this package's measures ({', '.join(ours)}). Evaluate other measures, or a "
                             "mixture, with ir_measures.calc_aggregate / ir_measures.iter_calc / "
                             "ir_measures.evaluator, which hand each measure to its provider.")


class MarkovEvaluator(irm_providers.Evaluator):
    """Evaluates runs for fixed qrels and measures of this package.

    In-memory qrels and runs follow `irmeasures_markov.io._normalise`: str ids,
    int32 grades.  When the run and the qrels share no query, or either is
    empty, [`values`][irmeasures_markov.plugin.MarkovEvaluator.values] warns once (``RuntimeWarning``) naming the
    situation; every qrels query then scores the measure's DEFAULT (0), and
    aggregates are never NaN.

    ``qrels`` may also be a [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex].
    Otherwise the index comes from `irmeasures_markov.ranking._cache.qrels_index`:
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
        super().__init__(measures, self.qrels_index.query_ids)

    def prepare(self, run: object) -> PreparedRun:
        """The run ranked and joined with the qrels for this evaluator's measures (ids and scores checked).

        Parameters
        ----------
        run : mapping or iterable
            ``{qid: {docid: score}}`` or any run form of [`to_run_dict`][irmeasures_markov.io.to_run_dict].

        Returns
        -------
        PreparedRun
        """
        # PreparedRun checks the ids of a dict run itself, while ranking it
        if not isinstance(run, Mapping):
            run = run_dict(run)
        return PreparedRun(self.qrels_index, run, self.measures)

    def values(self, run: object, warn_empty: bool = True) -> dict[irm_measures.Measure, dict[str, float]]:
        """``{measure: {qid: value}}`` for the queries present in both qrels and run.

        Parameters
        ----------
        run : mapping or iterable
            The run, in any form of [`to_run_dict`][irmeasures_markov.io.to_run_dict].
        warn_empty : bool
            False leaves the warning about an empty, disjoint or barely overlapping run/qrels pair to the caller.

        Returns
        -------
        dict
            ``{measure: {qid: value}}``.
        """
        return self.values_with_extras(run, warn_empty)[0]

    def prepared_values(self, prepared: PreparedRun, run: Mapping, warn_empty: bool = True
                        ) -> dict[irm_measures.Measure, dict[str, float]]:
        """[`values`][irmeasures_markov.plugin.MarkovEvaluator.values] of a run already ranked by
        [`prepare`][irmeasures_markov.plugin.MarkovEvaluator.prepare].

        Parameters
        ----------
        prepared : PreparedRun
            From [`prepare`][irmeasures_markov.plugin.MarkovEvaluator.prepare].
        run : mapping
            The dict it was made from (named in warnings).
        warn_empty : bool
            As for [`values`][irmeasures_markov.plugin.MarkovEvaluator.values].

        Returns
        -------
        dict
            ``{measure: {qid: value}}``.
        """
        return self._values(prepared, run, warn_empty)[0]

    def _values(self, prepared: PreparedRun, run: Mapping, warn_empty: bool):
        """``(values, extras)`` by measure and query, after the warnings of an evaluation: nothing to evaluate
        or a run answering less than half of the qrels' queries (unless ``warn_empty`` is False), queries
        without a relevant document at each measure's ``rel``."""
        if warn_empty:
            # the warning names the caller of values()
            warn_if_nothing_to_evaluate(self.qrels_index.qrels, run, stacklevel=4)
        rels = {m["rel"] for m in self.measures if "rel" in m.SUPPORTED_PARAMS}
        for rel in sorted(rels) or [1]:
            self.qrels_index.warn_if_no_relevant(rel=rel, warned=self._warned_empty)
        out, extras = {}, {}
        qids = prepared.qids
        with read_once():  # one content of each file for every measure of the call (e.g. TBG and MPcont)
            for m in self.measures:
                computed = family_values(m, prepared)
                out[m] = dict(zip(qids, computed.values.tolist()))
                extras[m] = {name: dict(zip(qids, v.tolist())) for name, v in computed.extras.items()}
        return out, extras

    def values_with_extras(self, run: object, warn_empty: bool = True
                           ) -> tuple[dict[irm_measures.Measure, dict[str, float]],
                                      dict[irm_measures.Measure, dict[str, dict[str, float]]]]:
        """[`values`][irmeasures_markov.plugin.MarkovEvaluator.values], and each measure's per-query extras: ``{measure:
        {name: {qid: value}}}``.

        Extras are ``'se'`` (the Monte Carlo standard error of ``ties='expected'``,
        0.0 where exact) and ``'lo'``/``'hi'``/``'exact'`` (``unjudged='range'``);
        ``{}`` for a measure without them.

        Parameters
        ----------
        run : mapping or iterable
            The run, in any form [`values`][irmeasures_markov.plugin.MarkovEvaluator.values] takes.
        warn_empty : bool
            As for [`values`][irmeasures_markov.plugin.MarkovEvaluator.values].

        Returns
        -------
        tuple of dict
            ``(values, extras)``.
        """
        if not isinstance(run, Mapping):
            run = run_dict(run)
        try:
            return self._values(self.prepare(run), run, warn_empty)
        except InputError as exc:
            # an input error's message names the file, field or parameter: the frames inside the evaluation
            # (a dozen, e.g. down to the length lookup of a TBG without lengths) only bury it (its cause is kept)
            raise exc.with_traceback(None)  # noqa: B904  re-raises the caught error itself: `from` would replace its cause

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
        """Per-query metrics: the run's queries in run order, then qrels queries it did not answer at DEFAULT.

        A measure with per-query extras (``ties='expected'``, ``unjudged='range'``) yields
        [`MetricWithExtras`][irmeasures_markov.plugin.MetricWithExtras], equal to the plain Metric.

        Parameters
        ----------
        run : mapping or iterable
            The run, in any form of [`to_run_dict`][irmeasures_markov.io.to_run_dict].

        Yields
        ------
        ir_measures.Metric
        """
        values, extras = self.values_with_extras(run)
        for m, per_query in values.items():
            extra = extras[m]
            for qid, v in per_query.items():
                yield (MetricWithExtras(qid, m, v, {name: e[qid] for name, e in extra.items()}) if extra
                       else Metric(query_id=qid, measure=m, value=v))
        missing = []
        for m, per_query in values.items():
            name = str(m)
            missing.extend((name, qid, m) for qid in self.qrel_qids if qid not in per_query)
        missing.sort(key=lambda item: item[:2])  # as ir_measures orders them: by (str(measure), query id)
        for _, qid, m in missing:
            yield Metric(query_id=qid, measure=m, value=m.DEFAULT)

    def calc_aggregate(self, run: object) -> dict[irm_measures.Measure, float]:
        """Each measure's aggregate (the mean) over every qrels query, one unanswered scoring DEFAULT.

        Parameters
        ----------
        run : mapping or iterable
            The run, in any form of [`to_run_dict`][irmeasures_markov.io.to_run_dict].

        Returns
        -------
        dict
            ``{measure: mean}``.
        """
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
        if not isinstance(measure, FamilyMeasure) or measure.NAME not in {m.NAME for m in self.SUPPORTED_MEASURES}:
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


def register_measure(measure: FamilyMeasure, aliases: Sequence[str] = (), replace: bool = False) -> FamilyMeasure:
    """Register ``measure`` (and aliases) with ir_measures and our provider, once.

    A name that another module's measure holds in ir_measures' registry (ir_measures' own ``INST``, ``RBP``,
    ``ERR``, ..., or another package's) is refused: two measures with one name would be told apart by neither
    ``parse_measure`` nor the providers.  The same module registering again (a re-import) keeps the first
    registration.

    Parameters
    ----------
    measure : FamilyMeasure
        The measure (usually its unparameterised instance).
    aliases : sequence of str
        Further names in the ir_measures registry.
    replace : bool
        Take over a name another module's measure holds.

    Returns
    -------
    FamilyMeasure
        ``measure`` itself.

    Raises
    ------
    ValueError
        If a name is another module's measure and ``replace`` is False.
    """
    registry = irm_measures.registry
    owner = type(measure).__module__
    for name in (measure.NAME, *aliases):
        existing = registry.get(name)
        if existing is not None and type(existing).__module__ != owner and not replace:
            raise ValueError(f"ir_measures already has a measure named {name!r}, from {type(existing).__module__}; "
                             f"choose another name, or pass replace=True to take it over")
    for name in (measure.NAME, *aliases):
        existing = registry.get(name)
        if existing is None or type(existing).__module__ != owner:
            registry[name] = measure
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
