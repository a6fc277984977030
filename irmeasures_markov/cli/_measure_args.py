"""Measure arguments: splitting, parsing, and every check that must happen before evaluation.

A command-line argument may hold several measures separated by whitespace
(``"AP P@10"``, as ir_measures' own command accepts); whitespace inside
parentheses or quotes belongs to the measure (``"MP(model='GL_AD_LID', recall=True)@100"``).
Names are ir_measures names (ours included) or trec_eval names (``map``, ``P_10``).

``--ties``, ``--unjudged`` and ``--residual`` (the main command and ``compare``) apply to every measure that
takes them: a measure that sets the parameter itself (``"MP(ties='expected')"``) keeps its own value; the standard
measures computed on the float64 ranking (AP, P@k, nDCG, ...) take them as ``experiments.evaluate`` applies them;
ir_measures' other measures take none of them and are named in one warning line.

``irmeasures-markov measures [NAME]`` lists this package's measures, their parameters, types and defaults.
"""
from __future__ import annotations

import argparse
import re

import ir_measures
from ir_measures import measures as irm_measures

from irmeasures_markov._util._cutoffs import check_measure_cutoffs
from irmeasures_markov.cli._errors import PROG, CliError, CliParser
from irmeasures_markov.plugin._base import FamilyMeasure
from irmeasures_markov.plugin._catalogue import MeasureInfo, list_measures
from irmeasures_markov.plugin._variants import TIES, UNJUDGED_CHOICES

__all__ = ["split_measure_args", "parse_measures", "suggest_names", "add_variant_args", "apply_variant_args",
           "VARIANT_HELP", "measures_main", "describe", "IR_MEASURES_DOCS"]

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


VARIANT_HELP = """\
ties and unjudged documents (this package's measures and the standard measures
computed on the float64 ranking: AP, P@k, Rprec, RR, nDCG, bpref, binary RBP,
R@k, Success@k, SetP/SetR/SetF, IPrec@r, NumRet/NumRel, Judged@k, except
--unjudged range; a measure that sets the parameter itself, e.g.
"MP(ties='expected')", keeps its own value, and one that sets unjudged or
residual keeps both, as experiments.evaluate does):
  --ties docid        trec_eval's order: score descending, docid descending (default)
  --ties optimistic   inside each group of equal scores, higher grades first
  --ties pessimistic  lower grades first
  --ties expected     the mean over every order of the tied documents
  --unjudged nonrel   unjudged documents are non-relevant (default); drop: removed
                      (judged_only); rel: relevant; range: the width of the range
                      over every judgment of them
  --residual          the value with unjudged documents relevant minus non-relevant
"""


def add_variant_args(parser: argparse.ArgumentParser):
    """Add ``--ties``, ``--unjudged`` and ``--residual`` in their own group, which is returned."""
    group = parser.add_argument_group("ties and unjudged documents")
    group.add_argument("--ties", choices=TIES, help="order of documents with equal scores (default docid: trec_eval's)")
    group.add_argument("--unjudged", choices=UNJUDGED_CHOICES, help="what unjudged documents count as (default nonrel)")
    group.add_argument("--residual", action="store_true",
                       help="each measure's residual: its value with unjudged documents relevant minus non-relevant")
    return group


def apply_variant_args(measures: list, args: argparse.Namespace) -> tuple[list, dict, list[str]]:
    """The measures with the options applied, the settings of the standard measures computed natively, and the
    warning lines: the measures computed with the options although their names do not show them, and those that
    ignore them.

    One rule with ``compare`` and ``experiments.evaluate``: this package's measures take the options as
    parameters (`apply_variant_options`), the standard measures computed on the float64 ranking (AP, P@k, nDCG,
    ...) get a `NativeSetting` (`native_setting`), any other measure ignores them.  Raises `CliError` for
    ``--residual`` with ``--unjudged`` other than nonrel, and for a measure that refuses the combination (e.g.
    ``unjudged='range'`` with ``ties='expected'``), naming the measure.
    """
    if args.residual and args.unjudged not in (None, "nonrel"):
        raise CliError(f"--residual is the value with unjudged documents relevant minus non-relevant: it cannot be "
                       f"combined with --unjudged {args.unjudged} (allowed with --residual: nonrel)")
    settings, notes = {}, []
    if args.ties is None and args.unjudged is None and not args.residual:
        # nothing to apply: the measures stay as they are, and the plain command does not import the
        # comparison package (experiments, grid, inference) only to learn that
        rewritten = list(measures)
    else:
        from irmeasures_markov.comparison._options import applied_note, apply_variant_options, unsupported_note
        from irmeasures_markov.experiments._settings import native_setting
        rewritten, unsupported = apply_variant_options(measures, ties=args.ties, unjudged=args.unjudged,
                                                       residual=args.residual)
        for m in unsupported:
            setting = native_setting(m, args.ties or "docid", args.unjudged or "nonrel", args.residual)
            if setting is not None:
                settings[m] = setting
        notes = [note for note in (
            applied_note([str(m) for m in settings], args.ties, args.unjudged, args.residual),
            unsupported_note([m for m in unsupported if m not in settings], args.ties, args.unjudged, args.residual))
            if note]
    errors = []
    for m in rewritten:
        try:
            m.validate_params()
        except (ValueError, AssertionError, TypeError) as exc:
            errors.append(f"{m}: {exc}")
    if errors:
        raise CliError("bad measure" + ("s" if len(errors) > 1 else "") + " with the options given: "
                       + "; ".join(errors))
    return rewritten, settings, notes


IR_MEASURES_DOCS = "https://ir-measur.es"


def _default_text(p) -> str:
    if p.required:
        return "required"
    if p.default is None:
        return "optional"
    return f"default {p.default!r}"


def _compact(p) -> str:
    name = "@k" if p.name == "cutoff" else p.name
    default = "" if p.default is None else f"={p.default!r}"
    return f"{name}: {p.type.replace(' or ', '|')}{default}"


def _wrap(items: list[str], width: int = 100, indent: str = "    ") -> list[str]:
    """Items joined by commas into lines of at most ``width`` characters, never breaking an item."""
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + 2 + len(item) > width:
            lines.append(indent + line + ",")
            line = item
        else:
            line = f"{line}, {item}" if line else item
    return lines + ([indent + line] if line else [])


def describe(info: MeasureInfo, verbose: bool) -> list[str]:
    """Text lines for one measure: a summary line and its parameters (type=default), or with ``verbose``
    two lines per parameter (type, default, choices; meaning)."""
    aliases = f" (alias {', '.join(info.aliases)})" if info.aliases else ""
    lines = [f"{info.name}{aliases}: {info.meaning}"]
    if not verbose:
        return lines + _wrap([_compact(p) for p in info.parameters])
    lines.append(f"  {info.title}")
    for p in info.parameters:
        name = "@k" if p.name == "cutoff" else p.name
        choices = f"; one of {', '.join(repr(c) for c in p.choices)}" if p.choices else ""
        lines.append(f"  {name}: {p.type}, {_default_text(p)}{choices}")
        lines.append(f"      {p.meaning}")
    return lines


def _ir_measures_name(name: str) -> str:
    """What ``name`` is when ir_measures knows it but this package does not define it ('' otherwise)."""
    usable = f"it works in measure strings as usual, evaluated by ir_measures (documented at {IR_MEASURES_DOCS})"
    if name in irm_measures.registry:
        return f"ir_measures' own measure, not one of this package's: {usable}"
    try:
        parsed = list(ir_measures.parse_trec_measure(name))
    except Exception:  # noqa: BLE001 - ir_measures refuses an unknown trec_eval name with a bare ValueError
        return ""
    return f"trec_eval's name for {', '.join(map(str, parsed))} (ir_measures' measures): {usable}"


def measures_main(argv: list[str]) -> int:
    parser = CliParser("measures", formatter_class=argparse.HelpFormatter,
                       description="List the measures irmeasures_markov adds to ir_measures (name, aliases, "
                                   "one-line meaning, parameters with their types and defaults); with NAME, "
                                   "or -v, also each parameter's choices and meaning.  "
                                   "ir_measures' own measures (AP, P, nDCG, ...) "
                                   f"are documented at {IR_MEASURES_DOCS}.")
    parser.add_argument("names", nargs="*", metavar="NAME", help="measures to describe in full (or aliases)")
    parser.add_argument("--verbose", "-v", action="store_true", help="describe every measure in full")
    args = parser.parse_args(argv)
    catalogue = list_measures()
    by_name = {n: info for info in catalogue for n in (info.name, *info.aliases)}
    if args.names:
        theirs = [n for n in args.names if n not in by_name and _ir_measures_name(n)]
        unknown = [n for n in args.names if n not in by_name and n not in theirs]
        if unknown:
            hints = [(n, suggest_names(n)) for n in unknown]
            raise CliError("; ".join(f"{n!r} is not a measure of irmeasures_markov or ir_measures"
                                     + (f" (did you mean {' or '.join(h)}?)" if h else "") for n, h in hints)
                           + f"; '{PROG} measures' lists this package's measures")
        chosen, verbose = [by_name.get(n, n) for n in args.names], True
    else:
        chosen, verbose = list(catalogue), args.verbose
    for i, info in enumerate(chosen):
        if verbose and i:
            print()
        if isinstance(info, str):  # a name of ir_measures' own
            print(f"{info}: {_ir_measures_name(info)}")
        else:
            print("\n".join(describe(info, verbose)))
    return 0
