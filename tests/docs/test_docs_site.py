"""The documentation site (mkdocs.yml): every user page is in the navigation, every API page documents a module
that imports, and CI builds the site with --strict before the tests.  (The build itself needs the `docs` extra and
runs in .ci/run; these checks need nothing beyond the package.)"""
import importlib
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def nav_pages() -> list[str]:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:\n"):]
    return re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.M)


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
