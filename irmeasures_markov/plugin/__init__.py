"""ir_measures integration: Measure classes of every family, one provider, registration.

Importing this package registers all measures with ``ir_measures`` and appends
[`PROVIDER`][irmeasures_markov.PROVIDER] to ``ir_measures.DefaultPipeline`` (once, even on re-import).

Each family is one module here (its ``Measure`` classes, registered with
[`register_measure`][irmeasures_markov.plugin.register_measure], calling the family's kernel in
`irmeasures_markov.measures`) and one entry of `FAMILIES`, which
imports the module (registering its measures) and puts its user page on the site.
"""
from importlib import import_module

from irmeasures_markov.plugin._base import Family, FamilyMeasure, family_params, measure_fingerprint, measure_inputs
from irmeasures_markov.plugin._provider import (
    PROVIDER,
    MarkovEvaluator,
    MarkovProvider,
    install_provider,
    register_measure,
)
from irmeasures_markov.plugin._variants import MetricWithExtras, VariantValues, base_measure, is_variant, variant_values

#: Every measure family of the package: its module here (None for a kernel-only family) and its kernel modules
#: under measures/.  pyproject.toml's independence contract, the structure tests and the brute-force tie and
#: unjudged tests (``EXAMPLES``) are checked against or made from it (tests/plugin/test_families.py).
FAMILIES = (
    Family("_mp", kernel=("markov_precision",), page="markov-precision.md"),
    Family("_carterette", kernel=("_carterette", "_carterette_distributions"), page="user-model-framework.md"),
    Family("_tbg", kernel=("_tbg", "_time_model"), page="time-biased-gain.md"),
    Family("_ph", kernel=("stopping_time", "_ph_walk_numba"), page="stopping-time.md"),
    Family(None, kernel=("_standard",)),  # trec_eval's measures in float64, for the package's own front ends
)

# importing a family's module registers its measures, in the order of FAMILIES (``irmeasures-markov measures``
# lists them so)
for _family in FAMILIES:
    if _family.plugin:
        import_module(f"{__name__}.{_family.plugin}")
del _family

install_provider()

# the measures themselves are exported by irmeasures_markov; this namespace is for writing a family
__all__ = ["FAMILIES", "Family", "FamilyMeasure", "family_params", "register_measure", "PROVIDER", "MarkovProvider",
           "MarkovEvaluator", "measure_fingerprint", "measure_inputs", "variant_values", "VariantValues",
           "MetricWithExtras", "base_measure", "is_variant"]
