"""``irmeasures-markov measures [NAME]``: this package's measures, their parameters, types and defaults."""
from __future__ import annotations

from typing import List

from ..plugin.catalogue import MeasureInfo, list_measures
from .errors import PROG, CliError, CliParser
from .measure_args import suggest_names

__all__ = ["measures_main", "describe"]


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


def _wrap(items: List[str], width: int = 100, indent: str = "    ") -> List[str]:
    """Items joined by commas into lines of at most ``width`` characters, never breaking an item."""
    lines, line = [], ""
    for item in items:
        if line and len(indent) + len(line) + 2 + len(item) > width:
            lines.append(indent + line + ",")
            line = item
        else:
            line = f"{line}, {item}" if line else item
    return lines + ([indent + line] if line else [])


def describe(info: MeasureInfo, verbose: bool) -> List[str]:
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


def measures_main(argv: List[str]) -> int:
    parser = CliParser(prog=f"{PROG} measures",
                       description="List the measures irmeasures_markov adds to ir_measures (name, aliases, "
                                   "one-line meaning, parameters with their types and defaults); with NAME, "
                                   "or -v, also each parameter's choices and meaning.  ir_measures' own measures (AP, P, nDCG, ...) "
                                   "are documented at https://ir-measur.es.")
    parser.add_argument("names", nargs="*", metavar="NAME", help="measures to describe in full (or aliases)")
    parser.add_argument("--verbose", "-v", action="store_true", help="describe every measure in full")
    args = parser.parse_args(argv)
    catalogue = list_measures()
    by_name = {n: info for info in catalogue for n in (info.name, *info.aliases)}
    if args.names:
        unknown = [n for n in args.names if n not in by_name]
        if unknown:
            parts = []
            for n in unknown:
                hint = [s for s in suggest_names(n) if s in by_name]
                parts.append(f"{n!r} is not a measure of irmeasures_markov" +
                             (f" (did you mean {' or '.join(hint)}?)" if hint else ""))
            raise CliError("; ".join(parts) + f"; '{PROG} measures' lists them")
        chosen, verbose = [by_name[n] for n in args.names], True
    else:
        chosen, verbose = list(catalogue), args.verbose
    for i, info in enumerate(chosen):
        if verbose and i:
            print()
        print("\n".join(describe(info, verbose)))
    return 0
