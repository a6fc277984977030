"""irmeasures_markov: user-model evaluation measures as an ir_measures plug-in.

``import irmeasures_markov`` registers MP, MPcont (and the other families) with
``ir_measures`` so that ``ir_measures.calc_aggregate([MP@100], qrels, run)``,
``ir_measures.parse_measure("MP(model='LO_OR_ID')")``, PyTerrier and the
command line all understand them.  Once the package is installed, importing
``ir_measures`` does that import by itself (the start-up hook of
``_irmeasures_markov_hook``; opt-out ``IRMEASURES_MARKOV_NO_HOOK=1``).

The import is kept cheap: scipy's submodules (linalg, sparse, fft, stats),
pandas, ir_datasets, tqdm, matplotlib and numba load only when first used
(``irmeasures_markov._util._lazy``; tests/install/test_startup.py checks it).
"""
from irmeasures_markov import pytrec_eval  # noqa: F401  (the drop-in module irmeasures_markov.pytrec_eval; not in __all__)
from irmeasures_markov._util._version import package_version as _package_version
from irmeasures_markov.measures._carterette import user_model_measure
from irmeasures_markov.measures._tbg import time_biased_gain
from irmeasures_markov.measures.markov_precision import estimate_rates, markov_precision, register_kernel
from irmeasures_markov.measures.stopping_time import BrowsingModel, browsing_model, path_at_h
from irmeasures_markov.plugin import PROVIDER
from irmeasures_markov.plugin._carterette import ARR, CDG, DAG, EPR, M1, M2, M3, M4, RAP, RBAP, RBTR, RRAP, RRG, RRR
from irmeasures_markov.plugin._catalogue import list_measures
from irmeasures_markov.plugin._mp import MP, MPcont, register_rates
from irmeasures_markov.plugin._ph import PH
from irmeasures_markov.plugin._pytrec import RelevanceEvaluator, supported_measures
from irmeasures_markov.plugin._tbg import TBG, register_lengths

__all__ = ["MP", "MPcont", "PROVIDER", "RelevanceEvaluator", "markov_precision", "estimate_rates", "register_kernel",
           "__version__",
           "register_rates", "supported_measures",
           "M1", "M2", "M3", "M4", "RBTR", "RBAP", "CDG", "DAG", "EPR", "ARR", "RRG", "RAP", "RRR", "RRAP",
           "user_model_measure", "TBG", "register_lengths", "time_biased_gain",
           "PH", "browsing_model", "path_at_h", "BrowsingModel", "list_measures"]


def __getattr__(name: str) -> str:
    # __version__ (in __all__) comes from the installed metadata on first use, so that `import irmeasures_markov`
    # does not pay for importlib.metadata; the number itself lives in pyproject.toml only
    if name == "__version__":
        return _package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
