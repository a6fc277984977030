"""The public API is fully annotated (the package ships py.typed): every function and public method reachable
from the documented namespaces has annotated parameters and return type."""
import importlib
import inspect

import pytest

#: the namespaces the API reference (docs/api/) renders, and the other public packages
NAMESPACES = ["irmeasures_markov", "irmeasures_markov.pytrec_eval", "irmeasures_markov.io",
              "irmeasures_markov.experiments", "irmeasures_markov.inference", "irmeasures_markov.comparison",
              "irmeasures_markov.calibration", "irmeasures_markov.core", "irmeasures_markov.measures.markov_precision",
              "irmeasures_markov.measures.carterette", "irmeasures_markov.measures.tbg",
              "irmeasures_markov.measures.stopping_time", "irmeasures_markov.measures.standard",
              "irmeasures_markov.testing", "irmeasures_markov.grid",
              "irmeasures_markov.ranking", "irmeasures_markov.documents", "irmeasures_markov.plugin",
              "irmeasures_markov.plugin.variants", "irmeasures_markov.plugin.provider",
              "irmeasures_markov.ranking.scenarios"]


def _callables(namespace):
    mod = importlib.import_module(namespace)
    for name in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
        obj = getattr(mod, name, None)
        if inspect.isfunction(obj) and obj.__module__.startswith("irmeasures_markov"):
            yield f"{obj.__module__}.{obj.__qualname__}", obj
        elif inspect.isclass(obj) and obj.__module__.startswith("irmeasures_markov"):
            for attr, value in vars(obj).items():
                if (not attr.startswith("_") or attr == "__init__") and inspect.isfunction(value):
                    yield f"{obj.__module__}.{obj.__qualname__}.{attr}", value


def _missing(qualname, fn):
    sig = inspect.signature(fn)
    missing = [p.name for p in sig.parameters.values()
               if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if sig.return_annotation is inspect.Signature.empty and not qualname.endswith(".__init__"):
        missing.append("return")
    return missing


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_public_callables_are_annotated(namespace):
    bad = {q: m for q, fn in _callables(namespace) if (m := _missing(q, fn))}
    assert bad == {}


def test_the_check_sees_the_api():
    assert len({q for ns in NAMESPACES for q, _ in _callables(ns)}) > 200


def _missing_sections(qualname, fn):
    """The numpydoc sections a public callable's docstring lacks (the class docstring documents ``__init__``)."""
    if qualname.endswith(".__init__") or not fn.__module__.startswith("irmeasures_markov"):
        return []
    doc = inspect.getdoc(fn) or ""
    if not doc:
        return ["docstring"]
    sig = inspect.signature(fn)
    missing = []
    if [p for p in sig.parameters if p not in ("self", "cls")] and "Parameters\n----------" not in doc:
        missing.append("Parameters")
    returns = sig.return_annotation
    if returns not in (None, "None", inspect.Signature.empty) and not any(
            s in doc for s in ("Returns\n-------", "Yields\n------")):
        missing.append("Returns")
    return missing


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_public_callables_have_numpydoc_sections(namespace):
    """Docstrings are contracts: every public callable says what it takes and what it gives (numpydoc)."""
    bad = {q: m for q, fn in _callables(namespace) if (m := _missing_sections(q, fn))}
    assert bad == {}
