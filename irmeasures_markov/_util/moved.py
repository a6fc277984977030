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
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["MOVED", "install", "moved_names"]

#: old module path -> new module path.  Keep one line per moved module, sorted.
MOVED: dict[str, str] = {
    "irmeasures_markov._docid_probe_numba": "irmeasures_markov.documents._docid_probe_numba",
    "irmeasures_markov._lazy": "irmeasures_markov._util.lazy",
    "irmeasures_markov.cutoffs": "irmeasures_markov._util.cutoffs",
    "irmeasures_markov.datasets": "irmeasures_markov.io.datasets",
    "irmeasures_markov.docid_table": "irmeasures_markov.documents.docid_table",
    "irmeasures_markov.errors": "irmeasures_markov._util.errors",
    "irmeasures_markov.evaluator": "irmeasures_markov.plugin.pytrec",
    "irmeasures_markov.flat_run": "irmeasures_markov.ranking.join",
    "irmeasures_markov.grid.evaluation": "irmeasures_markov.experiments.grid",
    "irmeasures_markov.grid.inference": "irmeasures_markov.inference.grid",
    "irmeasures_markov.inputs": "irmeasures_markov.io.normalise",
    "irmeasures_markov.lengths": "irmeasures_markov.documents.lengths",
    "irmeasures_markov.measures.markov_precision_kernels": "irmeasures_markov.measures.markov_precision.kernels",
    "irmeasures_markov.ph_compare": "irmeasures_markov.experiments.ph_compare",
    "irmeasures_markov.progress": "irmeasures_markov._util.progress",
    "irmeasures_markov.pytrec_inputs": "irmeasures_markov.io.pytrec",
    "irmeasures_markov.qrels_cache": "irmeasures_markov.ranking.cache",
    "irmeasures_markov.rankings": "irmeasures_markov.ranking.prepared",
    "irmeasures_markov.readers": "irmeasures_markov.io",
    "irmeasures_markov.readers.atomic": "irmeasures_markov.io.atomic",
    "irmeasures_markov.readers.content": "irmeasures_markov.io.content",
    "irmeasures_markov.readers.fast_run": "irmeasures_markov.io.fast_run",
    "irmeasures_markov.readers.text": "irmeasures_markov.io.text",
    "irmeasures_markov.readers.trec": "irmeasures_markov.io.trec",
    "irmeasures_markov.segments": "irmeasures_markov._util.segments",
    "irmeasures_markov.time_model": "irmeasures_markov.measures.time_model",
}


class _MovedModuleLoader:  # the protocol of importlib.abc.Loader (whose import costs pathlib and more)
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(f"{self.old} moved to {self.new}; import it from there (the old path will be removed "
                      "in a future release)", DeprecationWarning, stacklevel=2)  # importlib's own frames are skipped
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import machinery gave the module the alias's spec; it keeps its own
        module.__spec__ = self._spec
        module.__loader__ = self._spec.loader


class _MovedModuleFinder:  # the protocol of importlib.abc.MetaPathFinder
    def find_spec(self, fullname: str, path: object = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(fullname, new))


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder of old module paths first on :data:`sys.meta_path` (once).

    First, so that a submodule of a moved package (``irmeasures_markov.readers.trec``
    once ``readers`` is ``io``) is answered by :data:`MOVED` rather than found again
    by the path finder under the new package's directory, as a second module object.
    The finder answers only the names in :data:`MOVED`.
    """
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def moved_names(module: str, moved: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` answering names that moved to another module, with a ``DeprecationWarning``.

    ``moved`` maps each old name of ``module`` to the module now holding it.  The
    target is imported at first use only, by name: it may sit in a higher layer.
    """
    def __getattr__(name: str) -> Any:
        target = moved.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} moved to {target}.{name}; import it from there (the old name will be "
                      "removed in a future release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(target), name)
    return __getattr__
