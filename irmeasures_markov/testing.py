"""Helpers for tests and integration scripts: where the shared TREC data lives."""
from __future__ import annotations

import os
import pathlib

#: Environment variable naming the shared data directory (qrels/, runs/, reference/).
DATA_ENV = "IRMEASURES_MARKOV_DATA"


def shared_data_dir() -> pathlib.Path | None:
    """``$IRMEASURES_MARKOV_DATA`` or ``../shared/data`` beside the repository; None when absent.

    A candidate counts only when it holds a ``qrels`` directory.

    Returns
    -------
    pathlib.Path or None
        The first candidate directory found, or None.
    """
    env = os.environ.get(DATA_ENV)
    candidates = [pathlib.Path(env)] if env else []
    repo = pathlib.Path(__file__).resolve().parents[1]
    candidates += [repo.parent / "shared" / "data", pathlib.Path.cwd().parent / "shared" / "data"]
    for c in candidates:
        if (c / "qrels").is_dir():
            return c
    return None
