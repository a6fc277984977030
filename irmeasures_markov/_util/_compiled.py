"""Optional numba kernels: imported on first use, and used by 'auto' engines only once numba is loaded.

numba is an optional dependency (the ``fast`` extra).  Modules of compiled
kernels import it at their top, so importing one fails without it; and
importing numba costs more than one small input's work, so an ``'auto'``
engine waits until numba is in the process already (or until it has seen
enough work to repay the import).
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

__all__ = ["numba_loaded", "optional_kernels"]


def numba_loaded() -> bool:
    """Whether numba has been imported in this process (by any module).

    Returns
    -------
    bool
    """
    return "numba" in sys.modules


def optional_kernels(cache: list, module: str) -> ModuleType | None:
    """The module of compiled kernels ``module`` (absolute name), or None without numba; imported once.

    Parameters
    ----------
    cache : list
        The caller's one-item memo (empty until the first call; a test may
        fill it to force an engine).
    module : str
        The kernels' module, e.g. ``"irmeasures_markov.io._run_scan_numba"``.

    Returns
    -------
    module or None
    """
    if not cache:
        try:
            kernels = importlib.import_module(module)
        except ImportError:
            kernels = None
        cache.append(kernels)
    return cache[0]
