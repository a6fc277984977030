"""``irmeasures-markov measures [NAME]``: this package's measures, their parameters, types and defaults."""
from __future__ import annotations

import ir_measures
from ir_measures import measures as irm_measures

from irmeasures_markov.cli._errors import PROG, CliError, CliParser
from irmeasures_markov.cli._measure_args import suggest_names
from irmeasures_markov.plugin._catalogue import MeasureInfo, list_measures

__all__ = ["measures_main", "describe", "IR_MEASURES_DOCS"]

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
    if name in irm_measures.registry:
        return (f"ir_measures' own measure, not one of this package's: it works in measure strings as usual, "
                f"evaluated by ir_measures (documented at {IR_MEASURES_DOCS})")
    try:
        parsed = list(ir_measures.parse_trec_measure(name))
    except Exception:  # noqa: BLE001 - ir_measures refuses an unknown trec_eval name with a bare ValueError
        return ""
    return (f"trec_eval's name for {', '.join(map(str, parsed))} (ir_measures' measures): it works in measure "
            f"strings as usual, evaluated by ir_measures (documented at {IR_MEASURES_DOCS})")


def measures_main(argv: list[str]) -> int:
    parser = CliParser(prog=f"{PROG} measures",
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
