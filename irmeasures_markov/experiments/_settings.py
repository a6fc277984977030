"""``ties=``, ``unjudged=`` and ``residual=`` of [`evaluate`][irmeasures_markov.experiments.evaluate]: one setting for
every measure of a call.

This package's families take them as parameters (each measure is rewritten
with them, unless it carries its own); the standard measures computed
natively (`irmeasures_markov.measures._standard`) take them too; any other
measure is refused when a setting is not the default.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ir_measures import Measure

from irmeasures_markov.measures._standard import STANDARD_UNJUDGED, StandardMeasure, standard_measure, standard_values
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.plugin._variants import (
    TIES,
    UNJUDGED_CHOICES,
    VARIANT_DEFAULTS,
    VariantValues,
    family_values,
    reported_extras,
)
from irmeasures_markov.ranking._prepared import PreparedRun

__all__ = ["NativeSetting", "ReadsEverything", "extra_names", "apply_settings", "measure_values", "native_setting",
           "with_settings"]

_FAMILIES = "this package's families (MP, MPcont, PH, TBG, M1-M4 and their aliases)"
_NATIVE = ("the standard measures computed natively (AP, P@k, Rprec, RR, nDCG, bpref, binary RBP, R@k, Success@k, "
           "SetP, SetR, SetF, IPrec@r, NumRet, NumRel, Judged@k; native=True)")


@dataclass(frozen=True)
class NativeSetting:
    """The tie order and treatment of unjudged documents of one natively computed measure.

    Parameters
    ----------
    ties : str
        ``'docid'``, ``'optimistic'``, ``'pessimistic'`` or ``'expected'``.
    unjudged : str
        ``'nonrel'``, ``'drop'`` or ``'rel'``.
    residual : bool
        The value with ``unjudged='rel'`` minus the value with ``'nonrel'``.
    """
    ties: str = "docid"
    unjudged: str = "nonrel"
    residual: bool = False


class ReadsEverything:
    """A reader of a prepared run that reads every rank, every judgment and the ranked scores (settings make
    other tie orders; bpref counts judged non-relevant documents, Judged@k judged documents)."""

    def needs_judgments(self) -> bool:
        return True

    def reads_scores(self) -> bool:
        return True


def native_setting(m: Measure, ties: str = "docid", unjudged: str = "nonrel", residual: bool = False,
                   native: bool = True) -> NativeSetting | None:
    """The setting a measure computed natively gets from a call's ``ties``/``unjudged``/``residual``, or None when
    it takes none: the one rule of every front end ([`evaluate`][irmeasures_markov.experiments.evaluate],
    ``compare``, the command line).

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.
    ties, unjudged, residual
        The call's settings (checked by the caller).
    native : bool
        Whether the standard measures are computed natively.

    Returns
    -------
    NativeSetting or None
        None for a family measure (it takes the settings as parameters, `with_settings`), a measure not
        computed natively, and ``unjudged='range'``, which the standard measures do not have.
    """
    if isinstance(m, FamilyMeasure) or not native or standard_measure(m) is None or unjudged not in STANDARD_UNJUDGED:
        return None
    return NativeSetting(ties, unjudged, residual)


def _check(ties: str, unjudged: str, residual: bool) -> None:
    if ties not in TIES:
        raise ValueError(f"`ties`={ties!r} is not one of {list(TIES)}.")
    if unjudged not in UNJUDGED_CHOICES:
        raise ValueError(f"`unjudged`={unjudged!r} is not one of {list(UNJUDGED_CHOICES)}.")
    if not isinstance(residual, bool):
        raise ValueError(f"`residual` must be True or False, got {residual!r}.")
    if residual and unjudged != "nonrel":
        raise ValueError("`residual=True` is the value with unjudged='rel' minus the value with 'nonrel'; it "
                         f"cannot be combined with unjudged={unjudged!r}.")
    if unjudged == "range" and ties == "expected":
        raise ValueError("`unjudged='range'` takes ties='docid', 'optimistic' or 'pessimistic', not 'expected'.")


def with_settings(m: Measure, settings: Mapping[str, object]) -> Measure:
    """``m`` with the ``settings`` (``ties``, ``unjudged``, ``residual``) it does not carry itself: the rule of
    every front end ([`evaluate`][irmeasures_markov.experiments.evaluate], ``compare``, the command line).

    A family measure's own ``ties`` wins over the call's; its own ``unjudged`` or ``residual`` (one choice:
    what its unjudged documents count as) wins over both of the call's.  Any other measure is returned as it is.

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.
    settings : mapping
        The call's settings, by name.

    Returns
    -------
    ir_measures.Measure
    """
    if not isinstance(m, FamilyMeasure):
        return m
    own = set(m.params)
    new = {k: v for k, v in settings.items()
           if not (k == "ties" and "ties" in own) and not (k != "ties" and own & {"unjudged", "residual"})}
    return type(m)(**{**m.params, **new}) if new else m


def _label(m: Measure, changed: dict[str, object]) -> str:
    """``str(m)`` with the settings written in its parameters, as a family measure prints them."""
    head, at, tail = str(m).partition("@")
    extra = ",".join(f"{k}={v!r}" for k, v in sorted(changed.items()))
    head = f"{head[:-1]},{extra})" if head.endswith(")") else f"{head}({extra})"
    return head + at + tail


def extra_names(m: Measure) -> list[str]:
    """The per-query extras a measure reports, columns ``<label>_<name>`` of an Evaluation (``'se'`` for
    ``ties='expected'``, ``'lo'``/``'hi'`` for ``unjudged='range'``), in that order; none for a measure of another
    package.

    Parameters
    ----------
    m : ir_measures.Measure
        A parsed measure.

    Returns
    -------
    list of str
    """
    return reported_extras(m) if isinstance(m, FamilyMeasure) else []


def apply_settings(measures: list[Measure], ties: str = "docid", unjudged: str = "nonrel", residual: bool = False,
                   native: bool = True) -> tuple[list[Measure], dict[int, NativeSetting], list[str]]:
    """Every measure with the call's settings: the measures to evaluate, the native settings and default labels.

    A family measure is rewritten with the settings that are not the
    default (``MP`` with ``ties='expected'`` is ``MP(ties='expected')``);
    one that carries its own ``ties`` keeps it, and one that carries its own
    ``unjudged`` or ``residual`` keeps both (`with_settings`).  A natively computed measure
    keeps its object and gets a `NativeSetting`; its label shows the
    settings as a family measure prints them (``AP(ties='expected')``).

    Parameters
    ----------
    measures : list of ir_measures.Measure
        Parsed measures.
    ties, unjudged, residual
        The settings ([`evaluate`][irmeasures_markov.experiments.evaluate]).
    native : bool
        Whether the standard measures ([`standard_measure`][irmeasures_markov.measures.standard_measure]) are
        computed natively.

    Returns
    -------
    measures : list of ir_measures.Measure
        The measures to evaluate, in order.
    native_settings : dict of int to NativeSetting
        For each natively computed measure with a setting that is not the default, by position.
    labels : list of str
        The default label of each measure.

    Raises
    ------
    ValueError
        An unknown setting, ``residual=True`` with ``unjudged`` set, ``unjudged='range'`` with
        ``ties='expected'``, or a measure that does not have a setting asked for (naming it, and
        the measures that do).
    """
    _check(ties, unjudged, residual)
    changed = {k: v for k, v in (("ties", ties), ("unjudged", unjudged), ("residual", residual))
               if v != VARIANT_DEFAULTS[k]}
    if not changed:
        return list(measures), {}, [str(m) for m in measures]
    out, settings, labels = [], {}, []
    for j, m in enumerate(measures):
        if isinstance(m, FamilyMeasure):
            rewritten = with_settings(m, changed)
            if rewritten is not m:
                rewritten.validate_params()
            out.append(rewritten)
            labels.append(str(rewritten))
            continue
        setting = native_setting(m, ties, unjudged, residual, native)
        if setting is None:
            asked = ", ".join(f"{k}={v!r}" for k, v in changed.items())
            whom = _FAMILIES if unjudged not in STANDARD_UNJUDGED else f"{_FAMILIES} and {_NATIVE}"
            hint = " with native=False" if not native and standard_measure(m) else ""
            raise ValueError(f"{m} does not support {asked}{hint}: only {whom} do.")
        out.append(m)
        settings[j] = setting
        labels.append(_label(m, changed))
    return out, settings, labels


def measure_values(m: Measure, standard: StandardMeasure | None, setting: NativeSetting | None,
                   prepared: PreparedRun, cache: dict | None = None) -> VariantValues:
    """Per-query values (and extras) of one of our measures or of a natively computed one.

    Parameters
    ----------
    m : ir_measures.Measure
        A family measure (any parameters) or a standard measure computed natively.
    standard : StandardMeasure or None
        ``standard_measure(m)`` for a natively computed measure.
    setting : NativeSetting or None
        Its tie order and unjudged documents; None for the defaults.
    prepared : PreparedRun
        The run joined with the qrels, without a ``depth``.
    cache : dict, optional
        Shared by the calls on one prepared run ([`standard_values`][irmeasures_markov.measures.standard_values]).

    Returns
    -------
    VariantValues
        float64 values in ``prepared.qids`` order, and float64 extras by name.
    """
    if isinstance(m, FamilyMeasure):
        return family_values(m, prepared)
    setting = setting or NativeSetting()
    return VariantValues(standard_values(standard, prepared, setting.ties, setting.unjudged, setting.residual, cache))
