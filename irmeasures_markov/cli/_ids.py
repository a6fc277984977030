"""Which inputs each measure gets: this package's measures the ids as read, ir_measures' own
measures (computed by pytrec_eval) the form of `irmeasures_markov.io._pytrec`."""
from __future__ import annotations

from collections.abc import Callable

from irmeasures_markov.io._pytrec import id_from_pytrec_eval, qrels_for_pytrec_eval, run_for_pytrec_eval
from irmeasures_markov.plugin._base import FamilyMeasure

__all__ = ["evaluation_groups"]


def evaluation_groups(measures, qrels, run) -> list[tuple[list, dict, dict, Callable[[str], str]]]:
    """``[(measures, qrels, run, original_qid), ...]``: what to hand to ir_measures, in groups.

    This package's measures get the inputs as they are (their length files,
    rate files and duplicate groups name the original ids); the other measures
    get what pytrec_eval can take, and ``original_qid`` maps their query ids back.
    """
    ours = [m for m in measures if isinstance(m, FamilyMeasure)]
    native = [m for m in measures if not isinstance(m, FamilyMeasure)]
    groups = [(ours, qrels, run, str)] if ours else []
    if native:
        groups.append((native, qrels_for_pytrec_eval(qrels), run_for_pytrec_eval(run), id_from_pytrec_eval))
    return groups
