"""ir_measures integration: Measure classes of every family, one provider, registration.

Importing this package registers all measures with ``ir_measures`` and appends
:data:`PROVIDER` to ``ir_measures.DefaultPipeline`` (once, even on re-import).

Each family is one module here (its ``Measure`` classes, registered with
:func:`register_measure`, calling the family's kernel in
:mod:`irmeasures_markov.measures`) and one entry of :data:`FAMILIES`; the import
lines below register the measures.  A new family adds its import line and its entry.
"""
from .base import Family, FamilyMeasure, measure_fingerprint, measure_inputs
from .provider import PROVIDER, MarkovProvider, install_provider, register_measure

# the registration list: one import per measure family
from .mp import MP, MPcont
from .carterette import M1, M2, M3, M4, RBTR, RBAP, CDG, DAG, EPR, ARR, RRG, RAP, RRR, RRAP
from .tbg import TBG, register_lengths
from .ph import PH

#: Every measure family of the package: its module here (None for a kernel-only family) and its kernel modules
#: under measures/.  pyproject.toml's independence contract, the structure tests and the brute-force tie and
#: unjudged tests (``EXAMPLES``) are checked against or made from it (tests/plugin/test_families.py).
FAMILIES = (
    Family("mp", kernel=("markov_precision",)),
    Family("carterette", kernel=("carterette", "carterette_distributions", "carterette_graded", "carterette_ties")),
    Family("tbg", kernel=("tbg", "time_model")),
    Family("ph", kernel=("stopping_time", "_ph_walk_numba")),
    Family(None, kernel=("standard",)),  # trec_eval's measures in float64, for the package's own front ends
)

install_provider()

__all__ = ["FAMILIES", "PROVIDER", "FamilyMeasure", "MarkovProvider", "register_measure", "measure_fingerprint",
           "measure_inputs", "MP", "MPcont",
           "M1", "M2", "M3", "M4", "RBTR", "RBAP", "CDG", "DAG", "EPR", "ARR", "RRG", "RAP", "RRR", "RRAP",
           "TBG", "register_lengths", "PH"]
