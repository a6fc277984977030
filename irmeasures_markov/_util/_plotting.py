"""matplotlib, imported when a plot is asked for, or an error that says which extra brings it.

matplotlib is an optional dependency (the ``plot`` extra): every plotting function imports it through `pyplot`,
so that a user without it learns what to install, not only that a module is missing.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PLOT_EXTRA", "pyplot"]

#: what installs matplotlib for this package
PLOT_EXTRA = "pip install 'irmeasures-markov[plot]'"


def pyplot(what: str = "plotting") -> Any:
    """``matplotlib.pyplot``, imported now.

    Parameters
    ----------
    what : str, default 'plotting'
        What needs it, for the error message (``'FitReport.plot'``).

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        Without matplotlib: ``"<what> needs matplotlib: pip install 'irmeasures-markov[plot]'"``.
    """
    try:
        return importlib.import_module("matplotlib.pyplot")
    except ImportError as e:
        raise ImportError(f"{what} needs matplotlib: {PLOT_EXTRA}", name="matplotlib") from e
