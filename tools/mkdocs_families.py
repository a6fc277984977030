"""mkdocs hook: the "Measures" section of the site lists each family's user page as ``FAMILIES`` declares it.

A new family then adds its page to the site by its ``Family(..., page=...)`` entry alone (CONTRIBUTING.md,
"Adding a measure family").  ``FAMILIES`` is read from the source without importing the package, so the site
builds with the ``docs`` extra only.
"""
import ast
from pathlib import Path

PLUGIN_INIT = Path(__file__).resolve().parents[1] / "irmeasures_markov" / "plugin" / "__init__.py"
#: the nav entry that stands for the family pages, in order
PLACEHOLDER = "FAMILIES"


def family_pages(source: Path = PLUGIN_INIT) -> list[str]:
    """The ``page=`` of every ``Family(...)`` in the ``FAMILIES`` assignment, in order."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    (families,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                   and [getattr(t, "id", None) for t in node.targets] == ["FAMILIES"]]
    return [keyword.value.value for call in families.elts for keyword in call.keywords
            if keyword.arg == "page" and keyword.value.value is not None]


def _expand(nav: list) -> list:
    expanded = []
    for item in nav:
        if item == PLACEHOLDER:
            expanded.extend(family_pages())
        elif isinstance(item, dict):
            expanded.append({title: _expand(sub) if isinstance(sub, list) else sub for title, sub in item.items()})
        else:
            expanded.append(item)
    return expanded


def on_config(config):
    config["nav"] = _expand(config["nav"])
    return config
