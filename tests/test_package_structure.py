"""The whole package, read with ast (imports inside functions count): the layers of pyproject.toml's import
contract, no import cycle, no private name taken from another module, at most 4 loose top-level modules, no
module over 700 lines, no re-export outside a package __init__, package __init__s export public names only."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "irmeasures_markov"


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        yield ".".join(parts), path, is_pkg


def _imports(name, path, is_pkg):
    """(module imported, names taken) for every import statement, resolved to absolute dotted paths."""
    package = name if is_pkg else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


MODULES = {name: (path, is_pkg) for name, path, is_pkg in _modules()}


def _resolve(target, names):
    """The modules of ours an import statement loads (a submodule imported by name counts)."""
    subs = {f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES}
    # `from package import submodule` loads the submodule (its parent is loaded for any import anyway)
    if target in MODULES and (not names or len(subs) < len(names)):
        subs.add(target)
    return subs


def test_no_private_name_from_another_module():
    bad = []
    for name, (path, is_pkg) in MODULES.items():
        for target, names in _imports(name, path, is_pkg):
            if not target.startswith("irmeasures_markov") or target == name:
                continue
            bad += [f"{name} <- {target}.{n}" for n in names
                    if n.startswith("_") and f"{target}.{n}" not in MODULES and n != "__version__"]
    assert bad == []


def test_no_import_cycle():
    graph = {name: set() for name in MODULES}
    for name, (path, is_pkg) in MODULES.items():
        for target, names in _imports(name, path, is_pkg):
            # a package's __init__ re-exporting its submodules is not a dependency of theirs on it
            graph[name] |= {t for t in _resolve(target, names) if t != name}
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    for v in graph:
        if v not in index:
            visit(v)
    assert sccs == []


def test_no_module_over_700_lines():
    """A hard stop only; past ~600 lines a reviewer looks for a seam (CONTRIBUTING.md)."""
    sizes = {name: len(path.read_text("utf-8").splitlines()) for name, (path, _) in MODULES.items()}
    assert {name: n for name, n in sizes.items() if n > 700} == {}


def _all_names(tree):
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            names.update(c.value for c in ast.walk(node.value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return names


def test_no_reexport_outside_a_package_init():
    """A name in a plain module's ``__all__`` is defined there, not imported from elsewhere in the package:
    one import path per name (only a package's ``__init__.py`` gathers names from its modules)."""
    bad = []
    for name, (path, is_pkg) in MODULES.items():
        if is_pkg:
            continue
        tree = ast.parse(path.read_text("utf-8"))
        imported = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and (node.level or (node.module or "").startswith("irmeasures_markov")) for a in node.names}
        bad += [f"{name}.{n}" for n in sorted(_all_names(tree) & imported)]
    assert bad == []


def test_package_inits_export_public_names_only():
    for name, (path, is_pkg) in MODULES.items():
        if not is_pkg:
            continue
        for target, names in _imports(name, path, is_pkg):
            assert not [n for n in names if n.startswith("_") and f"{target}.{n}" not in MODULES], name


def test_at_most_four_loose_top_level_modules():
    loose = sorted(p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= 4, loose


def _layers():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    config = tomllib.loads((PKG.parent / "pyproject.toml").read_text("utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def _top(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_import_goes_to_the_same_layer_or_below():
    """The layers contract of pyproject.toml (lint-imports checks it in CI too), highest layer first."""
    layers = _layers()
    rank = {top: i for i, layer in enumerate(layers) for top in layer}
    tops = {_top(name) for name in MODULES} - {None}
    assert tops <= set(rank), f"top-level modules without a layer: {sorted(tops - set(rank))}"
    bad = []
    for name, (path, is_pkg) in MODULES.items():
        here = _top(name)
        if here is None:
            continue
        for target, names in _imports(name, path, is_pkg):
            for dep in _resolve(target, names) if target.startswith("irmeasures_markov") else ():
                there = _top(dep)
                if there is None:  # the root package imports every layer
                    bad.append(f"{name} -> {dep} (the root package)")
                    continue
                if there == here:
                    continue
                if rank[there] <= rank[here]:  # same layer (siblings) or a higher one
                    bad.append(f"{name} -> {dep}")
    assert bad == []
