"""Small array helpers shared by several layers."""
from __future__ import annotations

import numpy as np

__all__ = ["frozen"]


def frozen(a: np.ndarray) -> np.ndarray:
    """Mark ``a`` read-only (in place) and return it.

    For arrays that are shared once built (between queries of a prepared run,
    between sessions of a click log): a later write through any reference
    raises ``ValueError`` instead of changing every holder's data.

    Parameters
    ----------
    a : numpy.ndarray
        The array to freeze; its ``writeable`` flag is cleared.

    Returns
    -------
    numpy.ndarray
        ``a`` itself.
    """
    a.flags.writeable = False
    return a
