"""irmeasures_markov: user-model evaluation measures as an ir_measures plug-in.

``import irmeasures_markov`` registers MP, MPcont (and the other families) with
``ir_measures`` so that ``ir_measures.calc_aggregate([MP@100], qrels, run)``,
``ir_measures.parse_measure("MP(model='LO_OR_ID')")``, PyTerrier and the
command line all understand them.  Once the package is installed, importing
``ir_measures`` does that import by itself (the start-up hook of
``_irmeasures_markov_hook``; opt-out ``IRMEASURES_MARKOV_NO_HOOK=1``).

The import is kept cheap: scipy's submodules (linalg, sparse, fft, stats),
pandas, ir_datasets, tqdm, matplotlib and numba load only when first used
(``irmeasures_markov._util.lazy``; tests/install/test_startup.py checks it).
"""
from . import pytrec_eval  # noqa: F401  (the drop-in module irmeasures_markov.pytrec_eval; not in __all__)
from ._util.version import package_version as _package_version
from .measures.carterette import user_model_measure
from .measures.markov_precision import estimate_rates, markov_precision, register_kernel
from .measures.stopping_time import BrowsingModel, browsing_model, path_at_h
from .measures.tbg import time_biased_gain
from .measures.time_model import gain_curves, mean_gain_curve, plot_gain_curves, time_models
from .plugin import (
    ARR,
    CDG,
    DAG,
    EPR,
    M1,
    M2,
    M3,
    M4,
    MP,
    PH,
    PROVIDER,
    RAP,
    RBAP,
    RBTR,
    RRAP,
    RRG,
    RRR,
    TBG,
    MPcont,
    register_lengths,
)
from .plugin.catalogue import list_measures
from .plugin.mp import register_rates
from .plugin.pytrec import (
    RelevanceEvaluator,
    compute_aggregated_measure,
    parse_qrel,
    parse_run,
    supported_measures,
    supported_nicknames,
)

__all__ = ["MP", "MPcont", "PROVIDER", "RelevanceEvaluator", "markov_precision", "estimate_rates", "register_kernel",
           "__version__",
           "register_rates", "supported_measures", "supported_nicknames", "compute_aggregated_measure", "parse_run",
           "parse_qrel",
           "M1", "M2", "M3", "M4", "RBTR", "RBAP", "CDG", "DAG", "EPR", "ARR", "RRG", "RAP", "RRR", "RRAP",
           "user_model_measure", "TBG", "register_lengths", "time_biased_gain",
           "time_models", "gain_curves", "mean_gain_curve", "plot_gain_curves",
           "PH", "browsing_model", "path_at_h", "BrowsingModel", "list_measures"]


def __getattr__(name: str) -> str:
    # __version__ (in __all__) comes from the installed metadata on first use, so that `import irmeasures_markov`
    # does not pay for importlib.metadata; the number itself lives in pyproject.toml only
    if name == "__version__":
        return _package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
