"""docs/reliability.md names a test for every input class: each one must exist."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"


def _abbreviations(text):
    # "TBR = `test_boundary_readers.py`"
    return dict(re.findall(r"\b([A-Z]{3}) =\s+`(test_[a-z0-9_]+\.py)`", text))


def _references(text):
    abbrev = _abbreviations(text)
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or "::" not in cells[2]:
            continue
        for ref in cells[2].split(","):
            where, name = ref.strip().split("::")
            yield abbrev.get(where, where), name


def test_every_test_named_in_the_reliability_page_exists():
    text = DOC.read_text(encoding="utf-8")
    refs = list(_references(text))
    assert len(refs) > 80
    missing = []
    for filename, name in refs:
        found = sorted((ROOT / "tests").rglob(filename))  # tests/<layer>/test_x.py
        path = found[0] if found else ROOT / "tests" / filename
        if not path.exists() or not re.search(rf"^\s*def {re.escape(name)}\(", path.read_text(encoding="utf-8"),
                                              re.MULTILINE):
            missing.append(f"{filename}::{name}")
    assert not missing, f"docs/reliability.md names tests that do not exist: {missing}"
