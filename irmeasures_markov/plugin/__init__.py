"""ir_measures integration: Measure classes of every family, one provider, registration.

Importing this package registers all measures with ``ir_measures`` and appends
:data:`PROVIDER` to ``ir_measures.DefaultPipeline`` (once, even on re-import).

Each family is one module here (its ``Measure`` classes, registered with
:func:`register_measure`, calling the family's kernel in
:mod:`irmeasures_markov.measures`) and one entry of :data:`FAMILIES`; the import
lines below register the measures.  A new family adds its import line and its entry.
"""
from irmeasures_markov.plugin._base import Family, FamilyMeasure, family_params, measure_fingerprint, measure_inputs
from irmeasures_markov.plugin._provider import (
    PROVIDER,
    MarkovEvaluator,
    MarkovProvider,
    install_provider,
    register_measure,
)
from irmeasures_markov.plugin._variants import MetricWithExtras, VariantValues, base_measure, is_variant, variant_values

# the registration list: one import per measure family
import irmeasures_markov.plugin._mp  # noqa: F401
import irmeasures_markov.plugin._carterette  # noqa: F401
import irmeasures_markov.plugin._tbg  # noqa: F401
import irmeasures_markov.plugin._ph  # noqa: F401

#: Every measure family of the package: its module here (None for a kernel-only family) and its kernel modules
#: under measures/.  pyproject.toml's independence contract, the structure tests and the brute-force tie and
#: unjudged tests (``EXAMPLES``) are checked against or made from it (tests/plugin/test_families.py).
FAMILIES = (
    Family("_mp", kernel=("markov_precision",)),
    Family("_carterette", kernel=("_carterette", "_carterette_distributions")),
    Family("_tbg", kernel=("_tbg", "_time_model")),
    Family("_ph", kernel=("stopping_time", "_ph_walk_numba")),
    Family(None, kernel=("_standard",)),  # trec_eval's measures in float64, for the package's own front ends
)

install_provider()

# the measures themselves are exported by irmeasures_markov; this namespace is for writing a family
__all__ = ["FAMILIES", "Family", "FamilyMeasure", "family_params", "register_measure", "PROVIDER", "MarkovProvider",
           "MarkovEvaluator", "measure_fingerprint", "measure_inputs", "variant_values", "VariantValues",
           "MetricWithExtras", "base_measure", "is_variant"]
