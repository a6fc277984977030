"""``--ties``, ``--unjudged`` and ``--residual``: tie order and unjudged documents for every measure that takes them.

Shared by the main command and ``compare``.  A measure that sets the
parameter itself (``"MP(ties='expected')"``) keeps its own value; the standard
measures computed on the float64 ranking (AP, P@k, nDCG, ...) take them as
``experiments.evaluate`` applies them; ir_measures' other measures take none of
them and are named in one warning line.
"""
from __future__ import annotations

import argparse

from irmeasures_markov.cli._errors import CliError
from irmeasures_markov.plugin._variants import TIES as TIES_CHOICES
from irmeasures_markov.plugin._variants import UNJUDGED_CHOICES

__all__ = ["add_variant_args", "apply_variant_args", "VARIANT_HELP"]

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
    group.add_argument("--ties", choices=TIES_CHOICES, metavar="{" + ",".join(TIES_CHOICES) + "}",
                       help="order of documents with equal scores (default docid: trec_eval's)")
    group.add_argument("--unjudged", choices=UNJUDGED_CHOICES, metavar="{" + ",".join(UNJUDGED_CHOICES) + "}",
                       help="what unjudged documents count as (default nonrel)")
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
