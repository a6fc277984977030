"""The one cutoff rule, for every way a measure can be written.

A cutoff is the number of top-ranked documents a measure keeps: a positive
integer.  pytrec_eval (trec_eval compiled into the interpreter) does not raise
on a bad one, it aborts the whole process (an assertion, SIGABRT, exit status
134), so the rule must be applied before anything reaches it, whatever the
spelling:

* a cutoff given as a value (``MP@0``, ``P@0`` from ir_measures, a ``cutoff=``
  argument): `check_cutoff`;
* a pytrec_eval name, with either of pytrec_eval's separators and any list of
  cutoffs (``'P_0'``, ``'map_cut.0'``, ``'map_cut.5,0'``, ``'ndcg_cut_1,4'``):
  `trec_measure_parts` splits it into family and parameter;
* either kind of measure: `check_measure_cutoffs`, which every place
  that evaluates measures (RelevanceEvaluator, ``experiments.evaluate``, the
  command line, our measures' parameter check) calls;
* the pytrec_eval names given to one evaluator together, whose cutoffs
  pytrec_eval joins per family: `check_trec_measure_set`.

What pytrec_eval accepts stays accepted: it reads the cutoffs at the start of
the parameter (``[0-9]+(.[0-9]+)?`` items separated by commas: the rest is
ignored, ``'ndcg_cut.10,20,23.4'`` is ``ndcg_cut`` at 10, 20 and 23) and
trec_eval keeps each item's integer part; the process aborts on a cutoff whose
integer part is 0 and on two spellings of one cutoff (``'5'`` and ``'05'``,
``'5.2'`` and ``'5.7'``), also when they come from different names.

Kept free of the package's other modules (only pytrec_eval's name list is
read, when first needed), so that every layer can import it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from numbers import Integral

import numpy as np

__all__ = [
    "TREC_CUTOFF_FAMILIES",
    "TREC_NO_PARAMETER_FAMILIES",
    "check_cutoff",
    "check_measure_cutoffs",
    "check_trec_measure_set",
    "pytrec_eval_names",
    "trec_measure_parts",
]

#: pytrec_eval families whose parameter is a list of cutoffs ('P_5,10', 'map_cut.10'); a cutoff that is
#: not a positive integer ('P_0', 'P_0.5') makes pytrec_eval abort the whole process.
TREC_CUTOFF_FAMILIES = frozenset({"P", "recall", "map_cut", "ndcg_cut", "success", "relative_P"})
#: pytrec_eval families that abort the process on any parameter ('ndcg_5', 'ndcg.1').
TREC_NO_PARAMETER_FAMILIES = frozenset({"ndcg", "G", "Rndcg", "ndcg_rel"})
#: The separators pytrec_eval accepts between a family and its parameter ('P_5' and 'P.5').
TREC_SEPARATORS = "._"
#: The part of a parameter pytrec_eval reads (from its start; what follows is ignored): cutoffs with an optional
#: fraction, which trec_eval drops ('23.4' is 23).
TREC_CUTOFFS = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*")


@lru_cache(maxsize=1)
def pytrec_eval_names() -> frozenset[str]:
    """pytrec_eval's measure families (``pytrec_eval.supported_measures``), read once."""
    import pytrec_eval
    return frozenset(pytrec_eval.supported_measures)


def check_cutoff(value: object, what: str) -> int | None:
    """``value`` as an ``int`` if it is a positive integer, ``None`` for ``None``; else ``ValueError``.

    ``True`` is not a cutoff; integral numpy integers are.

    Parameters
    ----------
    value : object
        The cutoff given.
    what : str
        Names the measure or parameter in the message (``'measure P@0'``,
        ``'MP'``, ``'`cutoff`'``).

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        ``value`` is not a positive integer.
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{what}: the cutoff must be a positive integer (the number of top-ranked "
                         f"documents kept), got {value!r}.")
    return int(value)


def trec_measure_parts(name: str) -> tuple[str | None, str | None]:
    """``(family, parameter)`` of a pytrec_eval measure name, in either of pytrec_eval's spellings.

    ``'P_5,10'`` and ``'P.5,10'`` give ``('P', '5,10')``, ``'map'`` gives
    ``('map', None)``; ``(None, None)`` if ``name`` is no pytrec_eval name.
    The family is the longest pytrec_eval name that ``name`` starts with,
    followed by ``'_'`` or ``'.'`` (``'ndcg_cut_10'`` is ndcg_cut's, not
    ndcg's), so the answer never depends on the order of a set.

    Parameters
    ----------
    name : str
        A measure name.

    Returns
    -------
    tuple
        ``(family, parameter)``, either ``None`` when absent.
    """
    names = pytrec_eval_names()
    if name in names:
        return name, None
    family = max((f for f in names if name.startswith(f) and name[len(f):len(f) + 1] in tuple(TREC_SEPARATORS)),
                 key=len, default=None)
    return (family, name[len(family) + 1:]) if family else (None, None)


def check_measure_cutoffs(measure: object) -> None:
    """Raise ``ValueError`` naming a measure whose cutoff is not a positive integer.

    ``measure`` is a pytrec_eval name (``'P_0'``, ``'map_cut.5,0'``,
    ``'ndcg_5'``) or an ir_measures measure (``P@0``, ``MP@0``).  A pytrec_eval
    name is checked as `check_trec_measure_set` checks a set of one.
    Other strings are left to whoever parses them.

    Parameters
    ----------
    measure : str or ir_measures.Measure
        The measure to check.

    Raises
    ------
    ValueError
        A cutoff that is not a positive integer, or a parameter given to a
        family that takes none; the message names the measure.
    """
    if isinstance(measure, str):
        check_trec_measure_set([measure])
        return
    params = getattr(measure, "params", None) or {}
    check_cutoff(params.get("cutoff"), f"measure {measure}")


def check_trec_measure_set(names: Iterable[str]) -> None:
    """Raise ``ValueError`` for pytrec_eval names that would make pytrec_eval abort the process, given together.

    pytrec_eval joins the cutoffs that several names give one family
    (``{'P_5', 'P.10'}`` is P at 5 and 10) and reads, of each parameter, the
    cutoffs at its start (items ``[0-9]+(.[0-9]+)?`` separated by commas;
    trec_eval keeps their integer part).  The process aborts on a cutoff whose
    integer part is 0 (``'P_0'``, ``'P_0.5'``, ``'map_cut.5,0'``), on two
    spellings of one cutoff (``'P_5,05'``, or ``'P_5'`` with ``'P_5.0'``), and
    on any parameter of ``ndcg``, ``G``, ``Rndcg`` and ``ndcg_rel``.  A
    parameter that does not start with a cutoff (``'P_abc'``, ``'P_,5'``) is
    refused too, as pytrec_eval refuses it.  Names that are not pytrec_eval's
    are left to whoever parses them.

    Parameters
    ----------
    names : iterable of str
        The measure names given to one evaluator.

    Raises
    ------
    ValueError
        Naming the measure(s) and what pytrec_eval would do with them.
    """
    spellings: dict[str, dict[int, tuple[str, str]]] = {}
    for name in names:
        family, param = trec_measure_parts(name) if isinstance(name, str) else (None, None)
        if param is None:
            continue
        read = TREC_CUTOFFS.match(param)
        if family in TREC_NO_PARAMETER_FAMILIES:
            alt = " ('ndcg_cut_10' for a cutoff)" if family == "ndcg" else ""
            raise ValueError(f"measure {name!r}: pytrec_eval evaluates {family} without a parameter only: "
                             f"use '{family}'{alt} (pytrec_eval would abort the process on {param!r}).")
        if family not in TREC_CUTOFF_FAMILIES:
            continue
        rule = (f"measure {name!r}: the cutoffs of {family} must be positive integers, as in '{family}_10', "
                f"'{family}.10' or '{family}_5,10'")
        if read is None:
            raise ValueError(f"{rule} (pytrec_eval reads none in {param!r}).")
        seen = spellings.setdefault(family, {})
        for item in read.group(0).split(","):
            cutoff = int(item.split(".")[0])
            if cutoff < 1:
                raise ValueError(f"{rule} (pytrec_eval would abort the process on {item!r}, read as {cutoff}).")
            other = seen.setdefault(cutoff, (item, name))
            if other[0] != item:
                given = f"{name!r}" if other[1] == name else f"{other[1]!r} and {name!r}"
                raise ValueError(f"measure {given}: {other[0]!r} and {item!r} are both {family} at cutoff {cutoff}, "
                                 f"which pytrec_eval would abort the process on (trec_eval's 'duplicate cutoffs'): "
                                 f"write each cutoff once, in one spelling.")
