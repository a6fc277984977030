"""ir_measures integration: Measure classes of every family, one provider, registration.

Importing this package registers all measures with ``ir_measures`` and appends
:data:`PROVIDER` to ``ir_measures.DefaultPipeline`` (once, even on re-import).

Each family is one module here (its ``Measure`` classes, decorated with
:func:`register_measure`, calling the family's kernel in
:mod:`irmeasures_markov.measures`); the import lines below are the registration
list: a new family adds one line (and its names to ``__all__``).
"""
from .base import FamilyMeasure, measure_fingerprint, measure_inputs
from .provider import PROVIDER, MarkovProvider, install_provider, register_measure

# the registration list: one import per measure family
from .mp import MP, MPcont
from .carterette import M1, M2, M3, M4, RBTR, RBAP, CDG, DAG, EPR, ARR, RRG, RAP, RRR, RRAP
from .tbg import TBG, register_lengths
from .ph import PH

install_provider()

__all__ = ["PROVIDER", "FamilyMeasure", "MarkovProvider", "register_measure", "measure_fingerprint",
           "measure_inputs", "MP", "MPcont",
           "M1", "M2", "M3", "M4", "RBTR", "RBAP", "CDG", "DAG", "EPR", "ARR", "RRG", "RAP", "RRR", "RRAP",
           "TBG", "register_lengths", "PH"]
