"""Old import paths of modules that moved, kept working with a ``DeprecationWarning``.

A moved public module leaves an entry in :data:`MOVED` (old dotted path -> new
dotted path) instead of a file at its old place.  :func:`install` puts a finder
on :data:`sys.meta_path` that answers an import of an old path with the module
at its new path, after warning once per old path::

    >>> import irmeasures_markov.rankings      # doctest: +SKIP
    DeprecationWarning: irmeasures_markov.rankings moved to irmeasures_markov.ranking.prepared; ...

Both names then refer to one module object, so classes, registries and caches
are shared, and ``from irmeasures_markov.old import name`` keeps working.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

__all__ = ["MOVED", "install"]

#: old module path -> new module path.  Keep one line per moved module, sorted.
MOVED: dict[str, str] = {
    "irmeasures_markov._docid_probe_numba": "irmeasures_markov.documents._docid_probe_numba",
    "irmeasures_markov.docid_table": "irmeasures_markov.documents.docid_table",
    "irmeasures_markov.flat_run": "irmeasures_markov.ranking.join",
    "irmeasures_markov.lengths": "irmeasures_markov.documents.lengths",
    "irmeasures_markov.qrels_cache": "irmeasures_markov.ranking.cache",
    "irmeasures_markov.rankings": "irmeasures_markov.ranking.prepared",
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        warnings.warn(f"{self.old} moved to {self.new}; import it from there (the old path will be removed "
                      "in a future release)", DeprecationWarning, stacklevel=2)  # importlib's own frames are skipped
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import machinery gave the module the alias's spec; it keeps its own
        module.__spec__ = self._spec
        module.__loader__ = self._spec.loader


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(fullname, new))


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder of old module paths on :data:`sys.meta_path` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
