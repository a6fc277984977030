"""The preparation layers import only downwards: ranking/ never imports documents/ or anything above it,
and neither package has an import cycle (imports inside functions counted)."""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "irmeasures_markov"
#: what ranking/ and documents/ may import from the rest of the package: the layers below them
#: (old and new paths of the utilities and readers, until every import names the new one)
BELOW = ("_util", "io", "inputs", "segments", "errors", "progress", "readers", "cutoffs")


def imports_of(package):
    """``{module: set of imported irmeasures_markov modules}`` for the modules of ``package``, from their source."""
    out = {}
    for path in sorted((PACKAGE / package).glob("*.py")):
        name = f"{package}.{path.stem}" if path.stem != "__init__" else package
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = [package] if path.stem != "__init__" or node.level == 1 else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module:
                    found.add(target)
                else:
                    found.update(f"{target}.{a.name}" if target else a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("irmeasures_markov."):
                found.add(node.module[len("irmeasures_markov."):])
            elif isinstance(node, ast.Import):
                found.update(a.name[len("irmeasures_markov."):] for a in node.names
                             if a.name.startswith("irmeasures_markov."))
        out[name] = found
    return out


@pytest.mark.parametrize("package, allowed", [("ranking", BELOW + ("ranking",)),
                                              ("documents", BELOW + ("ranking", "documents"))])
def test_a_layer_imports_only_itself_and_the_layers_below(package, allowed):
    assert len(imports_of(package)) >= 4, f"irmeasures_markov/{package}/ holds the layer's modules"
    for module, targets in imports_of(package).items():
        upward = sorted(t for t in targets if t.split(".")[0] not in allowed)
        assert not upward, f"{module} imports {upward}"


@pytest.mark.parametrize("package", ["ranking", "documents"])
def test_no_import_cycle_inside_the_package(package):
    graph = imports_of(package)
    modules = set(graph)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for t in graph.get(todo.pop(), ()):
                t = t if t in modules else t.rpartition(".")[0] if t.rpartition(".")[0] in modules else None
                if t is not None and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    for module in modules - {package}:       # the package's __init__ imports its modules, none imports it back
        assert module not in reach(module), f"{module} is on an import cycle"
