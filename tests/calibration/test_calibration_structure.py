"""The calibration package's modules form a DAG, share only public names, and stay readable (< 500 lines).

Read from the source with ``ast`` (every import counts, those inside functions too).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import irmeasures_markov.calibration as calibration

ROOT = Path(calibration.__file__).parent
PKG = "irmeasures_markov.calibration"


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        out[".".join([PKG, *parts])] = path
    return out


MODULES = _modules()


def _source_module(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path):
    """(imported module, imported name or None) for every import of the module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None
        elif isinstance(node, ast.ImportFrom):
            src = _source_module(name, path, node)
            for a in node.names:
                if f"{src}.{a.name}" in MODULES:
                    yield f"{src}.{a.name}", None
                else:
                    yield src, a.name


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for m, path in MODULES.items():
        for target, _ in _imports(m, path):
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != m:
                edges[m].add(target)
    return edges


def test_the_calibration_modules_form_a_dag():
    edges = _edges()
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_private_name_is_imported_from_another_module():
    private = [f"{m} <- {src}.{n}" for m, path in MODULES.items() for src, n in _imports(m, path)
               if src.startswith("irmeasures_markov") and n and n.startswith("_") and not n.startswith("__")]
    assert not private


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_is_under_500_lines(name):
    assert len(MODULES[name].read_text(encoding="utf-8").splitlines()) <= 500


def test_package_inits_export_public_names_only():
    import importlib
    for m, path in MODULES.items():
        if path.name == "__init__.py":
            exported = importlib.import_module(m).__all__
            assert not [n for n in exported if n.startswith("_")], m


def test_the_readers_public_names_stay_at_their_documented_path():
    from irmeasures_markov.calibration import logs, readers
    for n in ("read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets",
              "make_session", "LOG_FORMATS", "TSV_COLUMNS"):
        assert n in readers.__all__ and hasattr(readers, n)
    assert readers.make_session is logs.make_session
    s = readers.make_session("q1", ["d1", "d2"], [2])
    assert s.clicks.tolist() == [2] and not s.clicks.flags.writeable


def test_stop_probabilities_has_one_definition():
    from irmeasures_markov.calibration import carterette, parameters
    assert carterette.stop_probabilities is parameters.stop_probabilities
