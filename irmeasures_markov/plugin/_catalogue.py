"""What this package registers with ir_measures: every measure, its aliases and its parameters.

[`list_measures`][irmeasures_markov.list_measures] reads the registered Measure objects themselves
(``SUPPORTED_PARAMS`` and ``SHORT_DESC``), so the catalogue cannot drift from
what ``ir_measures.parse_measure`` accepts.  ``irmeasures-markov measures``
prints it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ir_measures import measures as irm_measures

from irmeasures_markov.plugin._base import NOT_PROVIDED, type_name
from irmeasures_markov.plugin._provider import MarkovProvider

__all__ = ["MeasureInfo", "ParameterInfo", "list_measures"]


@dataclass(frozen=True)
class ParameterInfo:
    """One parameter of a measure.

    ``type`` is the accepted Python type(s) as text (``'int or float'``);
    ``default`` is None when the parameter has no default (then ``required``
    says whether it must be given); ``choices`` is empty when any value of the
    type is accepted; ``meaning`` is the one-line description.  The parameter
    named ``cutoff`` is written ``@k`` after the measure.
    """
    name: str
    type: str
    default: object
    required: bool
    choices: tuple[object, ...]
    meaning: str


@dataclass(frozen=True)
class MeasureInfo:
    """A measure registered by this package: ``name``, other ``aliases`` it answers to, a one-line
    ``meaning``, its long ``title`` and its ``parameters`` in declaration order."""
    name: str
    aliases: tuple[str, ...]
    title: str
    meaning: str
    parameters: tuple[ParameterInfo, ...]

    def parameter(self, name: str) -> ParameterInfo | None:
        return next((p for p in self.parameters if p.name == name), None)


def _choices(info) -> tuple[object, ...]:
    choices = info.choices
    if choices is NOT_PROVIDED or choices is None:
        return ()
    try:
        return tuple(choices)
    except TypeError:  # an open set, e.g. MP's models (custom kernels may be registered)
        return ()


def _parameter(name: str, info) -> ParameterInfo:
    default = None if info.default is NOT_PROVIDED else info.default
    return ParameterInfo(name=name, type=type_name(info.dtype), default=default, required=bool(info.required),
                         choices=_choices(info), meaning=" ".join(str(info.desc or "").split()))


def list_measures() -> tuple[MeasureInfo, ...]:
    """Every measure this package registers with ir_measures, in registration order.

    Aliases are the other names under which ``ir_measures`` finds the same
    measure (``PatH`` for ``PH``).

    Returns
    -------
    tuple of MeasureInfo
        name, aliases, title, meaning and parameters of each measure.
    """
    registry = irm_measures.registry
    out = []
    for measure in MarkovProvider.SUPPORTED_MEASURES:
        aliases = tuple(sorted(n for n, m in registry.items() if m is measure and n != measure.NAME))
        doc = (type(measure).__doc__ or "").strip().splitlines()
        meaning = getattr(measure, "SHORT_DESC", None) or (doc[0] if doc else "")
        out.append(MeasureInfo(
            name=measure.NAME, aliases=aliases, title=getattr(measure, "PRETTY_NAME", measure.NAME),
            meaning=" ".join(meaning.split()),
            parameters=tuple(_parameter(n, i) for n, i in measure.SUPPORTED_PARAMS.items())))
    return tuple(out)
