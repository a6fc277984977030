"""The package's version, single-sourced: ``version`` in pyproject.toml, read back from the installed metadata.

``irmeasures_markov.__version__`` and ``irmeasures-markov --version`` both answer
`package_version`.  CITATION.cff repeats the number for citation tools;
tests/install/test_version.py checks that it agrees with pyproject.toml.
"""
from __future__ import annotations

import functools

__all__ = ["DISTRIBUTION", "UNKNOWN_VERSION", "package_version"]

#: The distribution name of pyproject.toml's ``[project] name``.
DISTRIBUTION = "irmeasures-markov"
#: The version reported by a source checkout that is imported without being installed (no metadata to read).
UNKNOWN_VERSION = "0+unknown"


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """The installed distribution's version.

    Returns
    -------
    str
        ``importlib.metadata.version("irmeasures-markov")``, or ``"0+unknown"``
        when the distribution is not installed (a source checkout on
        ``sys.path``).
    """
    # importlib.metadata is imported on first use: it costs more than `import irmeasures_markov` may spend
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN_VERSION
