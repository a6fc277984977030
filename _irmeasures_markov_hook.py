"""Start-up hook: ``ir_measures`` knows irmeasures_markov's measures without ``import irmeasures_markov``.

ir_measures has no plug-in entry points: a measure exists for it once some
module has put it in ``ir_measures.measures.registry`` and appended a provider
to ``ir_measures.DefaultPipeline``.  ``import irmeasures_markov`` does both.
This module makes that import happen by itself, right after ``ir_measures``
is imported, in every interpreter of the environment where the package is
installed (the ``ir_measures`` command, notebooks, PyTerrier).

How it is reached: the wheel installs ``irmeasures_markov.pth`` next to this
module in site-packages.  At start-up, :mod:`site` executes its one line,
which reads the opt-out variable and, unless it is set, calls
:func:`install`.  :func:`install` only puts a small finder at the front of
:data:`sys.meta_path`; nothing else is imported, so an interpreter that never
imports ``ir_measures`` pays well under a millisecond.  When ``ir_measures``
is imported, the finder lets the ordinary finders locate it and wraps its
loader; once ``ir_measures`` has executed, the wrapper removes the finder
and imports ``irmeasures_markov``, which registers its measures and provider
(once: that registration is idempotent).  If ``irmeasures_markov`` is itself being
imported (it imports ``ir_measures``), nothing is done: it registers itself
when it finishes.

Opt-out: set ``IRMEASURES_MARKOV_NO_HOOK=1`` (any value other than empty or
``0``); ``ir_measures`` then behaves exactly as without this package until
``import irmeasures_markov``.  A failure to import ``irmeasures_markov`` from
the hook (a broken or half-removed installation) never breaks
``import ir_measures``: it is silent, and reported as a warning when
``IRMEASURES_MARKOV_HOOK_DEBUG=1``.  ``python -S`` processes no .pth file,
hence no hook.
"""
import os
import sys

OPT_OUT = "IRMEASURES_MARKOV_NO_HOOK"
DEBUG = "IRMEASURES_MARKOV_HOOK_DEBUG"
TARGET = "ir_measures"
PACKAGE = "irmeasures_markov"

__all__ = ["install", "uninstall", "enabled", "OPT_OUT", "DEBUG"]


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def enabled() -> bool:
    """Whether the hook may run in this interpreter (the opt-out variable is not set)."""
    return not _flag(OPT_OUT)


def _register() -> None:
    if PACKAGE in sys.modules:
        # imported already (registered), or being imported: it registers itself when it finishes
        return
    try:
        __import__(PACKAGE)
    except Exception as exc:  # never break `import ir_measures` because of this package
        if _flag(DEBUG):
            import warnings
            warnings.warn(f"{__name__}: could not register irmeasures_markov's measures with ir_measures: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


class _Loader:
    """The loader of ``ir_measures``, with :func:`_register` after its execution."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        uninstall()
        # ir_measures sees its own loader, as without the hook
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _register()


class _Finder:
    """A meta-path finder that only acts on ``ir_measures``, until ir_measures is loaded.

    It stays in place after merely finding ir_measures: ``python -m ir_measures``
    finds the package (runpy) before importing it through ``ir_measures.__main__``.
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TARGET:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _Finder):
                continue
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Register irmeasures_markov with ir_measures as soon as ir_measures is imported (now, if it is already).

    The .pth line reads the opt-out variable before calling this; a direct call installs regardless.
    """
    if TARGET in sys.modules:
        _register()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def uninstall() -> None:
    """Remove the finder (done by itself once ``ir_measures`` is loaded)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
