"""mkdocs hook: each measure family's user page, listed and completed from the package's own declarations.

- The "Measures" section of the site lists each family's page as ``FAMILIES`` declares it: a new family adds its
  page to the site by its ``Family(..., page=...)`` entry alone (CONTRIBUTING.md, "Adding a measure family").
- The API page of the top level lists every measure with a link to its family's reference (the measure objects
  are left out of its mkdocstrings block, which would show only ``MP = register_measure(_MP())``).
- Each family page ends with a reference of every measure and alias of the family, each parameter with its
  type, default, allowed values and meaning, and example measure strings for ir_measures, the command line and
  pytrec_eval, made from the measures registered with ir_measures (``irmeasures_markov.list_measures``, which
  ``irmeasures-markov measures NAME`` prints too), so that the page cannot drift from what the package accepts.

The checkout's own package is imported (its root goes first on ``sys.path``), not an installed copy.
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_INIT = ROOT / "irmeasures_markov" / "plugin" / "__init__.py"
#: the nav entry that stands for the family pages, in order
PLACEHOLDER = "FAMILIES"
REFERENCE_TITLE = "Reference: every measure and parameter"
REFERENCE_ANCHOR = "reference-every-measure-and-parameter"
#: where the top-level API page (api/index.md) gets its table of measures
MEASURES_MARK = "<!-- measures -->"


def family_pages(source: Path = PLUGIN_INIT) -> list[str]:
    """The ``page=`` of every ``Family(...)`` in the ``FAMILIES`` assignment, in order (read, not imported)."""
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


def _package():
    if str(ROOT) not in sys.path[:1]:
        sys.path.insert(0, str(ROOT))
    import ir_measures

    import irmeasures_markov
    from irmeasures_markov.plugin import FAMILIES
    return ir_measures, irmeasures_markov, FAMILIES


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _code(value) -> str:
    return f"`{value!r}`"


#: the inputs the brute-force tests register for EXAMPLES (plugin.Family), and files of the same kind a reader has
TEST_INPUTS = {"'brute'": "'rates.tsv'", "'brute-all'": "'doclen.tsv'", "'brute-part'": "'doclen.tsv'"}


def _example(info, own_parameters, ir_measures, examples) -> str:
    """A measure string for ``info``: the family's first ``EXAMPLES`` entry of that measure with a parameter (test
    inputs named as files), else one that sets its first own parameter with choices to another value, with a
    cutoff.
    ir_measures parses and validates it before it is printed, so it cannot be wrong."""
    candidates = []
    for example in examples:
        if example.startswith(f"{info.name}(") or example.startswith(f"{info.name}@"):
            for test_input, file in TEST_INPUTS.items():
                example = example.replace(test_input, file)
            candidates.append(example)
    own = [p for p in own_parameters if p.choices and p.default in p.choices and len(p.choices) > 1]
    if own:
        other = next(c for c in own[0].choices if c != own[0].default)
        candidates.append(f"{info.name}({own[0].name}={other!r})@10")
    candidates.append(f"{info.name}@10")
    for example in candidates:
        try:
            ir_measures.parse_measure(example).validate_params()
        except ValueError:
            continue
        return example
    raise ValueError(f"no valid example measure string for {info.name} among {candidates}: give one in EXAMPLES")


def _parameter_rows(parameters) -> list[str]:
    rows = ["| parameter | type | default | allowed values | meaning |", "|---|---|---|---|---|"]
    for p in parameters:
        name = "`@k` (cutoff)" if p.name == "cutoff" else f"`{p.name}`"
        default = "required" if p.required else ("—" if p.default is None else _code(p.default))
        choices = ", ".join(_code(c) for c in p.choices) if p.choices else "any " + p.type
        rows.append(f"| {name} | {p.type} | {default} | {_cell(choices)} | {_cell(p.meaning)} |")
    return rows


def family_reference(page: str) -> str:
    """The generated reference section of the family whose user page is ``page`` (Markdown)."""
    ir_measures, imm, families = _package()
    (family,) = [f for f in families if f.page == page]
    module = f"irmeasures_markov.plugin.{family.plugin}"
    examples = sys.modules[module].EXAMPLES
    measures = [m for m in imm.list_measures() if type(ir_measures.measures.registry[m.name]).__module__ == module]
    every = imm.list_measures()
    shared = [p for p in every[0].parameters if all(m.parameter(p.name) == p for m in every)]
    lines = [f"## {REFERENCE_TITLE}", "",
             "*Made from the measures this package registers with ir_measures (what `irmeasures-markov measures "
             "NAME` prints).* Each measure works under its name, and under each alias, in ir_measures' measure "
             "strings and Python objects, on the command line and in `irmeasures_markov.pytrec_eval`'s "
             "`RelevanceEvaluator`; string values are quoted.", "",
             "### Parameters every measure takes", "",
             "Ranking depth, relevance, and the tie and unjudged options ([ties and holes](ties-and-holes.md)):",
             "", *_parameter_rows(shared), ""]
    for info in measures:
        own = [p for p in info.parameters if p not in shared]
        example = _example(info, own, ir_measures, examples)
        aliases = f" (alias {', '.join(f'`{a}`' for a in info.aliases)})" if info.aliases else ""
        lines += [f"### {info.name}{aliases}", "", f"{info.title}: {info.meaning}", ""]
        lines += _parameter_rows(own) if own else ["No parameter of its own."]
        lines += ["", "For example:", "",
                  f'- ir_measures: `ir_measures.parse_measure("{example}")`',
                  f'- command line: `irmeasures-markov qrels.txt run.txt "{example}"`',
                  f'- pytrec_eval: `RelevanceEvaluator(qrels, {{"{example}"}})`', ""]
    return "\n".join(lines)


def measures_table() -> tuple[list[str], str]:
    """The names of every measure and alias, and a Markdown table of the measures with links to their family's
    reference."""
    ir_measures, imm, families = _package()
    page_of = {f"irmeasures_markov.plugin.{f.plugin}": f.page for f in families if f.plugin}
    names, rows = [], ["| measure | aliases | what it is | reference |", "|---|---|---|---|"]
    for info in imm.list_measures():
        page = page_of[type(ir_measures.measures.registry[info.name]).__module__]
        names += [info.name, *info.aliases]
        aliases = ", ".join(f"`{a}`" for a in info.aliases)
        rows.append(f"| `{info.name}` | {aliases} | {_cell(info.title)}: {_cell(info.meaning)} | "
                    f"[its parameters](../{page}#{REFERENCE_ANCHOR}) |")
    return names, "\n".join(rows)


def on_config(config):
    config["nav"] = _expand(config["nav"])
    return config


def on_page_markdown(markdown, page, config, files):
    if MEASURES_MARK in markdown:
        names, table = measures_table()
        skip = "|".join(names)
        markdown = markdown.replace("::: irmeasures_markov\n    options:\n",
                                    f"::: irmeasures_markov\n    options:\n      filters: [\"!^_\", \"!^({skip})$\"]\n")
        return markdown.replace(MEASURES_MARK, table)
    if page.file.src_uri in family_pages():
        return markdown.rstrip("\n") + "\n\n" + family_reference(page.file.src_uri) + "\n"
    return markdown
