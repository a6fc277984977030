"""Measure arguments: splitting, parsing, and every check that must happen before evaluation.

A command-line argument may hold several measures separated by whitespace
(``"AP P@10"``, as ir_measures' own command accepts); whitespace inside
parentheses or quotes belongs to the measure (``"MP(model='GL_AD_LID', recall=True)@100"``).
Names are ir_measures names (ours included) or trec_eval names (``map``, ``P_10``).
"""
from __future__ import annotations

import re

import ir_measures
from ir_measures import measures as irm_measures

from irmeasures_markov._util._cutoffs import check_measure_cutoffs
from irmeasures_markov.cli._errors import CliError
from irmeasures_markov.plugin._base import FamilyMeasure

__all__ = ["split_measure_args", "parse_measures", "suggest_names"]

_IRDS_PREFIX = "irds:"


def split_measure_args(args: list[str]) -> list[str]:
    """Measure strings of the arguments: each split at whitespace outside parentheses and quotes."""
    out: list[str] = []
    for text in args:
        depth, quote, start = 0, None, None
        for i, ch in enumerate(text):
            if quote is not None:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            elif ch.isspace() and depth == 0:
                if start is not None:
                    out.append(text[start:i])
                    start = None
                continue
            if start is None:
                start = i
        if start is not None:
            out.append(text[start:])
    return out


def suggest_names(name: str, limit: int = 3) -> list[str]:
    """Registered measure names close to ``name`` (case-insensitive: ``mp`` suggests ``MP``)."""
    import difflib  # here: only a misspelt measure needs it, and the command's start-up does not

    by_lower = {}
    for n in sorted(irm_measures.registry):
        by_lower.setdefault(n.lower(), []).append(n)
    # best first: an exact case-insensitive match has ratio 1 and comes first
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=limit, cutoff=0.6)
    return [n for lower in close for n in by_lower[lower]][:limit]


_NAME = re.compile(r"\s*([^\s(@]*)")
# a keyword argument whose value is a bare word: `model=GL_AD_LID` (True/False/None are Python constants)
_BARE_WORD_VALUE = re.compile(r"[(,]\s*(\w+)\s*=\s*([A-Za-z_]\w*)\s*(?=[,)])")


def _unknown_name_message(text: str) -> str:
    name = _NAME.match(text).group(1)
    hint = suggest_names(name)
    did_you_mean = f"; did you mean {' or '.join(hint)}?" if hint else ""
    return (f"unknown measure {name!r} in {text!r}{did_you_mean} "
            f"(`irmeasures-markov measures` lists this package's measures)")


def _syntax_message(text: str, exc: Exception) -> str:
    bare = [(k, v) for k, v in _BARE_WORD_VALUE.findall(text) if v not in ("True", "False", "None")]
    if bare:
        k, v = bare[0]
        quoted = re.sub(rf"\b{k}\s*=\s*{v}\b", f"{k}='{v}'", text, count=1)
        return (f"cannot parse measure {text!r}: string values must be quoted, e.g. {k}='{v}' "
                f"(in a shell, quote the whole measure: \"{quoted}\")")
    return f"cannot parse measure {text!r}: {exc}"


# a keyword argument whose value is a negative number, which ir_measures' parser does not read (`p=-0.1`)
_NEGATIVE_VALUE = re.compile(r"([(,]\s*(\w+)\s*=\s*)-\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)(?=\s*[,)])")


def _with_negative_values(text: str):
    """The measure of ``text`` whose negative numbers ir_measures' parser cannot read, or None if there are
    none: parsed with their absolute values, then given them, so that the measure's own check (`_check`)
    says which value is out of range instead of "problem parsing measure values"."""
    values = {name: -(float(number) if any(c in number for c in ".eE") else int(number))
              for _, name, number in _NEGATIVE_VALUE.findall(text)}
    if not values:
        return None
    measure = ir_measures.parse_measure(_NEGATIVE_VALUE.sub(r"\1\3", text))
    return measure(**values)


def _parse_one(text: str) -> list:
    try:
        return [ir_measures.parse_measure(text)]
    except NameError:
        try:
            return list(ir_measures.parse_trec_measure(text))
        except Exception:  # ir_measures signals an unknown trec_eval name with a bare ValueError
            raise CliError(_unknown_name_message(text)) from None
    except (ValueError, SyntaxError, TypeError) as exc:
        if str(exc).startswith("problem parsing measure"):
            try:
                negative = _with_negative_values(text)
            except (ValueError, SyntaxError, TypeError, NameError):
                negative = None
            if negative is not None:
                return [negative]
            raise CliError(_syntax_message(text, exc)) from None
        raise CliError(f"{text}: {exc}") from None  # refused by the measure itself (e.g. an unknown parameter)


def _check(measure, text: str) -> None:
    try:
        measure.validate_params()
    except (ValueError, AssertionError, TypeError) as exc:
        raise CliError(f"{text}: {exc}") from None
    params = getattr(measure, "params", {})
    if not isinstance(measure, FamilyMeasure):
        try:  # pytrec_eval aborts the whole process (no exception) on a cutoff below 1: refuse it first
            check_measure_cutoffs(measure)
        except ValueError as exc:
            # named as the user spelled it (P_0), not as ir_measures prints the measure it parsed (P@0)
            raise CliError(f"{text}: {str(exc).removeprefix(f'measure {measure}: ')}") from None
    lengths = params.get("lengths")  # the one parameter that may name an ir_datasets id
    if isinstance(lengths, str) and lengths.startswith(_IRDS_PREFIX):
        _check_irds_id(lengths[len(_IRDS_PREFIX):], f"{text}: lengths={lengths!r}")


def _check_irds_id(dataset_id: str, where: str) -> None:
    try:
        import ir_datasets
    except ImportError:
        raise CliError(f"{where}: ir_datasets is not installed") from None
    registry = getattr(ir_datasets, "registry", None)
    if registry is None:  # an ir_datasets without a registry to ask: loading will tell
        return
    try:
        known = dataset_id in registry
    except Exception:  # noqa: BLE001 - a registry that cannot answer is no reason to refuse the id
        return
    if not known:
        raise CliError(f"{where}: {dataset_id!r} is not an ir_datasets id")


def parse_measures(specs: list[str]) -> list:
    """Measures of the command-line arguments, deduplicated in the order given, every one validated.

    Raises `CliError` listing every bad measure at once.
    """
    measures, errors = [], []
    for text in split_measure_args(specs):
        try:
            found = _parse_one(text)
            for measure in found:
                _check(measure, text)
        except CliError as exc:
            errors.append(str(exc))
            continue
        measures += [m for m in found if m not in measures]
    if errors:
        raise CliError("bad measure" + ("s" if len(errors) > 1 else "") + ": " + "; ".join(errors))
    if not measures:
        raise CliError("no measure given")
    return measures
