"""The public API: what the package ``__init__``s export in ``__all__`` (modules and packages whose dotted path has
no part starting with ``_``).  Every public name has an entry on an API page of docs/api/, there are at most
250 of them, and every public function and method is fully annotated (the package ships py.typed)."""
import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "irmeasures_markov"


def _public_modules():
    """{dotted name: names in its __all__} for every module of the package with no private part in its path."""
    found = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if any(p.startswith("_") for p in parts):
            continue
        names = []
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    names += ast.literal_eval(node.value)
        found[".".join(parts)] = names
    return found


PUBLIC = _public_modules()
#: the namespaces the API reference renders: the public modules with an __all__
NAMESPACES = sorted(name for name, names in PUBLIC.items() if names)


def _api_directives():
    """The objects the API pages render (``::: dotted.path`` lines and the members they list)."""
    rendered = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        text = page.read_text("utf-8")
        for block in re.finditer(r"^::: (\S+)\n((?:[ ]{4}.*\n?)*)", text, re.M):
            current, options = block.group(1), block.group(2)
            rendered.add(current)
            if (members := re.search(r"members:\s*\[([^\]]*)\]", options)):
                rendered.add(current + ":members")
                rendered.update(f"{current}.{m.strip()}" for m in members.group(1).split(",") if m.strip())
    return rendered


def test_public_names_are_few():
    assert sum(len(names) for names in PUBLIC.values()) <= 250


def _rendered_whole(module, rendered):
    return module in rendered and f"{module}:members" not in rendered


def test_every_public_name_has_an_api_page_entry():
    """Rendered by its own module's page, or by a page of a package that exports it too."""
    rendered = _api_directives()
    missing = [f"{module}.{name}" for module, names in PUBLIC.items() for name in names
               if f"{module}.{name}" not in rendered and not _rendered_whole(module, rendered)
               and not any(_rendered_whole(other, rendered) and name in PUBLIC[other]
                           for other in PUBLIC if module.startswith(other + "."))]
    assert missing == []


def test_only_package_inits_and_the_drop_in_are_public():
    """Implementation lives in private modules (_name.py): a public plain module is a decision, listed here."""
    plain = sorted(name for name in PUBLIC if not (ROOT / Path(*name.split("."))).is_dir())
    assert plain == ["irmeasures_markov.testing"]


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
