"""The documentation site (mkdocs.yml): every user page is in the navigation, every API page documents a module
that imports, and CI builds the site with --strict before the tests.  (The build itself needs the `docs` extra and
runs in .ci/run; these checks need nothing beyond the package.)  And the docs' own rules: measured figures only on
docs/benchmarks.md, no path of one machine in the pages or the docstrings."""
import ast
import importlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tools"))
from mkdocs_families import family_pages  # noqa: E402


def nav_pages() -> list[str]:
    """The nav's pages, the family pages its hook puts in place of the ``FAMILIES`` entry included."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:\n"):]
    assert len(re.findall(r"^\s+- FAMILIES\b", nav, flags=re.M)) == 1
    return re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.M) + family_pages()


def test_every_page_is_in_the_navigation_once():
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav_pages()) == pages


def test_api_pages_document_modules_that_import():
    targets = {p.name: re.findall(r"^::: (\S+)\s*$", p.read_text(encoding="utf-8"), flags=re.M)
               for p in sorted((DOCS / "api").glob("*.md"))}
    assert all(targets.values()), targets
    for names in targets.values():
        for name in names:
            importlib.import_module(name)
    documented = {name for names in targets.values() for name in names}
    assert {"irmeasures_markov", "irmeasures_markov.pytrec_eval", "irmeasures_markov.io",
            "irmeasures_markov.experiments", "irmeasures_markov.inference", "irmeasures_markov.comparison",
            "irmeasures_markov.calibration", "irmeasures_markov.core"} <= documented


def test_ci_builds_the_site_strictly_before_the_tests():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    build = lines.index('mkdocs build --strict --site-dir "$tmp/site"')
    tests = next(i for i, line in enumerate(lines) if "python -m pytest" in line and "tests" in line)
    assert build < tests


#: a measured figure as the docs would quote one: a number with a unit of time or memory ("3.3 s", "1-2 s",
#: "50–75 MB"), a speed ratio ("2.12×", "3x faster", "ratio 0.46") or a rate ("166 runs/s"), or the history of
#: a benchmark (a time of day, per-round ranges, earlier runs); docs/benchmarks.md keeps them all
TIMING = re.compile(r"""
    (?<![\w.:])\d(?:[\d.,]*\d)?\s?(?:[-–]\s?\d(?:[\d.,]*\d)?\s?)?
        (?:ns|µs|μs|us|ms|s|secs?|seconds?|mins?|minutes?|hours?)\b(?!\()
  | (?<![\w.:])\d[\d.,]*\s?[KMGT]i?B\b
  | \d×(?!\s*\d)
  | \d\s?(?:times|x)\s+(?:faster|slower|as\s+fast)\b
  | \d\s+of\s+the\s+time\b | \bratio\s+\**\d
  | \bper\s+second\b | \d[\d.,]*\s?[\w-]*/s\b
  | \d\d:\d\d\s+UTC | per-round\s+range | earlier\s+version\s+of\s+this\s+page | other\s+runs\s+that\s+night
""", re.X)
#: figures in those forms that are not measurements: constants of the code or of glibc, the TBG paper's
#: reading times and the time axis of its model
NOT_MEASURED = {
    # the README states the fast tier's time, as the test tiers' issue asks (the slow tier's is on benchmarks.md)
    "README.md": ["in about 1.5 min", "(88 s wall on 2026-11-28)"],
    "file-formats.md": ["the first 64 MB read"],  # io.tokens.COMPILED_AFTER
    "reproducing-the-papers.md": ["once 64 MB have been read"],
    "scaling.md": ["over 128 KiB", "every 2 s"],  # glibc's mmap threshold; grid.runner's flush_seconds
    "reproduction-checks.md": ["(4.4 s)", "0.018 s per word + 7.8 s", "half-life 224 s"],  # the TBG paper's user
    "time-biased-gain.md": ["(6.8 ± 0.5 s)", "b = 7.8 ± 0.7 s", "about 55 minutes", "exceed 2 GiB"],
    "irmeasures_markov/_util/_segments.py": ["to about 8 MB"],  # rows x width x 8 bytes
    "irmeasures_markov/documents/_docid_table.py": ["need 5.4 GB"],  # 50M docids x the table's bytes each
    "irmeasures_markov/grid/_backends.py": ["above 128 KiB"],
}
#: a path of one machine: a home directory or a scratch or work directory
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|root|home|Users|mnt|var/folders)/|[A-Z]:\\Users\\")


def documentation() -> dict[str, str]:
    """The user pages, the README, and the package's docstrings and ``#:`` comments (the API pages)."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}
    texts["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "irmeasures_markov").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        nodes = [node for node in ast.walk(ast.parse(source))
                 if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        texts[str(path.relative_to(ROOT))] = "\n".join(
            [ast.get_docstring(node, clean=False) or "" for node in nodes]
            + [line for line in source.splitlines() if line.lstrip().startswith("#:")])
    return texts


def test_measured_figures_are_only_on_the_benchmarks_page():
    quoted = []
    for name, text in documentation().items():
        if name == "benchmarks.md":
            continue
        for allowed in NOT_MEASURED.get(name, []):
            assert allowed in text, f"{name}: the allow-list entry {allowed!r} is gone; remove it"
            text = text.replace(allowed, "")
        quoted += [f"{name}: ...{text[max(m.start() - 40, 0):m.end() + 10]}..." for m in TIMING.finditer(text)]
    assert not quoted, "move these figures to docs/benchmarks.md and link to it:\n" + "\n".join(quoted)


def test_every_bench_script_has_its_table():
    bench = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (ROOT / "integration" / "bench").glob("bench_*.py"))
    assert scripts and all(f"`{s}`" in bench for s in scripts), "a bench script without its table"


def test_no_machine_paths_in_the_documentation():
    texts = documentation()
    texts.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                  for p in sorted((ROOT / "irmeasures_markov").rglob("*.py"))})
    found = [f"{name}: {m.group()}" for name, text in texts.items() for m in MACHINE_PATH.finditer(text)]
    assert not found, found


def test_the_rules_catch_what_they_are_for():
    assert all(TIMING.search(s) for s in [
        "took 3.3 s.", "1-2 s", "1.5–2.5 s", "about 450 ns", "50–75 MB", "2.12× as fast", "3 times faster",
        "3x slower", "166 runs/s", "0.39 to 0.95 of the time", "ratio **0.46**", "41 minutes",
        "2026-11-24 01:48 UTC", "per-round range"])
    assert not any(TIMING.search(s) for s in [
        "runs × measures", "2 min(P(A>B), P(A<B))", "{ties:12s}", "7 × 5 grid", "100 runs",
        "several times slower", "M1 × RBP", "h ∈ {10, 50}"])
    assert all(MACHINE_PATH.search(s) for s in ["/work/main/docs", "/tmp/x", "/home/me/data", "/root/.cache"])
    assert not any(MACHINE_PATH.search(s) for s in ["../shared/data", "~/.cache/irmeasures_markov",
                                                    "integration/reproduce/x.py", "/path/to/data"])


def test_each_family_page_ends_with_a_reference_of_every_measure_and_parameter():
    """The hook appends, to each family's page, a section made from the registered measures (list_measures):
    every measure once, on its family's page, with its aliases and every parameter."""
    from mkdocs_families import family_reference

    import irmeasures_markov as imm
    references = {page: family_reference(page) for page in family_pages()}
    for info in imm.list_measures():
        pages = [page for page, text in references.items() if f"\n### {info.name}" in text]
        assert len(pages) == 1, (info.name, pages)
        text = references[pages[0]]
        section = text[text.index(f"\n### {info.name}"):]
        assert all(f"`{alias}`" in section.split("\n### ")[1] for alias in info.aliases)
        for p in info.parameters:
            assert ("`@k` (cutoff)" if p.name == "cutoff" else f"| `{p.name}` |") in text, (info.name, p.name)


def test_the_top_level_api_page_lists_every_measure_and_alias():
    from mkdocs_families import MEASURES_MARK, measures_table

    import irmeasures_markov as imm
    names, table = measures_table()
    assert MEASURES_MARK in (DOCS / "api" / "index.md").read_text("utf-8")
    assert sorted(names) == sorted(n for m in imm.list_measures() for n in (m.name, *m.aliases))
    assert all(f"| `{m.name}` |" in table for m in imm.list_measures())


SPHINX_MARKUP = re.compile(r":(func|class|meth|attr|data|mod|exc|obj|math):`|^\s*\.\. [a-z]+::|^\s*\.\. \[\d+\]", re.M)
COMBINED_ENTRY = re.compile(r"^\s+\*{0,2}\w+(, \*{0,2}\w+)+ : ", re.M)


def _docstrings():
    for path in sorted((ROOT / "irmeasures_markov").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc


def test_docstrings_are_markdown_with_one_entry_per_parameter():
    """What the site renders: no Sphinx role or directive (it would show as raw text), and no entry naming
    several parameters (the page would show one type and one default for all of them)."""
    raw = [where for where, doc in _docstrings() if SPHINX_MARKUP.search(doc)]
    combined = [where for where, doc in _docstrings() if COMBINED_ENTRY.search(doc)]
    assert raw == [] and combined == []
