"""ir_measures integration: Measure classes of every family, one provider, registration.

Importing this package registers all measures with ``ir_measures`` and appends
:data:`PROVIDER` to ``ir_measures.DefaultPipeline`` (once, even on re-import).
Each family lives in its own module; add a family by importing it here.
"""
from .base import (PROVIDER, FamilyMeasure, MarkovProvider, install_provider, measure_fingerprint, measure_inputs,
                   register_measure)
from .mp import MP, MPcont
from .carterette import (M1, M2, M3, M4, RBTR, RBAP, CDG, DAG, EPR, ARR, RRG, RAP, RRR,  # noqa: E402
                         RRAP)
from .tbg import TBG, register_lengths
from .ph import PH

install_provider()

__all__ = ["PROVIDER", "FamilyMeasure", "MarkovProvider", "register_measure", "measure_fingerprint",
           "measure_inputs", "MP", "MPcont",
           "M1", "M2", "M3", "M4", "RBTR", "RBAP", "CDG", "DAG", "EPR", "ARR", "RRG", "RAP", "RRR", "RRAP",
           "TBG", "register_lengths", "PH"]
