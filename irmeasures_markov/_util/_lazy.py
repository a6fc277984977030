"""Modules bound to a name now and imported at their first use.

``import irmeasures_markov`` must stay cheap: it runs for every command-line
call (``--help`` included) and, once the start-up hook is installed, whenever
``ir_measures`` is imported.  ``scipy.fft``, ``scipy.linalg``,
``scipy.special`` and ``scipy.stats`` each take tens of milliseconds to
import, and none is needed until a measure is computed or a test is run.  So
a module that calls ``scipy.linalg.solve(...)`` writes::

    from .._util.lazy import lazy_module
    scipy = lazy_module("scipy")

and its calls stay as they were; ``lapack = lazy_module("scipy.linalg.lapack")``
does the same for ``lapack.dgtsv(...)``.  The first attribute access imports
the module (SciPy >= 1.9 then imports a subpackage such as ``scipy.linalg`` on
first access too).

The proxy never enters `sys.modules`; the real module does, at the first
access, exactly as an ordinary import puts it there.  An import error is
raised at that first access, naming the module.
"""
from __future__ import annotations

import importlib

__all__ = ["lazy_module"]


class _LazyModule:
    """Stands for the module ``name``; the first attribute access imports it."""

    __slots__ = ("_lazy_name", "_lazy_module")

    def __init__(self, name: str):
        object.__setattr__(self, "_lazy_name", name)
        object.__setattr__(self, "_lazy_module", None)

    def _load(self):
        module = self._lazy_module
        if module is None:
            module = importlib.import_module(self._lazy_name)
            object.__setattr__(self, "_lazy_module", module)
        return module

    def __getattr__(self, attr):
        # reached only for names that are not slots, i.e. the module's own attributes
        return getattr(self._load(), attr)

    def __setattr__(self, attr, value):
        # patching through the proxy (e.g. monkeypatch in a test) must reach the real module
        setattr(self._load(), attr, value)

    def __delattr__(self, attr):
        delattr(self._load(), attr)

    def __dir__(self):
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._lazy_module is not None else "not imported yet"
        return f"<lazy module {self._lazy_name!r} ({state})>"


def lazy_module(name: str) -> _LazyModule:
    """A stand-in for ``importlib.import_module(name)`` that imports at the first attribute access.

    Parameters
    ----------
    name : str
        The module's dotted name (``'scipy.linalg'``).

    Returns
    -------
    _LazyModule
        A proxy; its first attribute access imports the module (an
        ``ImportError`` is raised there, naming the module).
    """
    return _LazyModule(name)
