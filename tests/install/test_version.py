"""The version is written once, in pyproject.toml: the package reads it from the installed metadata, and
CITATION.cff (which citation tools read as it is) must agree with it.

The installed copy's ``__version__`` is checked against pyproject.toml in test_startup_hook.py (a wheel built
from this checkout); here, what the package does with the metadata it finds, or does not find.
"""
import importlib.metadata
import pathlib
import re

import pytest

import irmeasures_markov
from irmeasures_markov._util._version import UNKNOWN_VERSION, package_version
from irmeasures_markov.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    project = text[text.index("\n[project]\n"):]
    project = project[:project.index("\n[", 1)]
    (version,) = re.findall(r'^version = "([^"]+)"$', project, flags=re.M)
    return version


def test_citation_cff_names_the_pyproject_version():
    (cited,) = re.findall(r"^version: *[\"']?([^\"'\s]+)[\"']?\s*$", (ROOT / "CITATION.cff").read_text(), flags=re.M)
    assert cited == pyproject_version()


def test_no_version_number_is_written_in_the_package():
    version = pyproject_version()
    written = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "irmeasures_markov").rglob("*.py"))
               if re.search(r"__version__\s*=\s*['\"]|['\"]" + re.escape(version) + "['\"]", path.read_text())]
    assert written == []


@pytest.fixture
def metadata_version(monkeypatch):
    """Replace importlib.metadata.version by the function given; package_version() reads it afresh."""
    def use(fake):
        monkeypatch.setattr(importlib.metadata, "version", fake)
        package_version.cache_clear()
    yield use
    package_version.cache_clear()


def test_version_is_the_installed_distributions(metadata_version, capsys):
    asked = []
    metadata_version(lambda name: asked.append(name) or "7.8.9")
    assert irmeasures_markov.__version__ == "7.8.9"
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "irmeasures-markov 7.8.9"
    assert set(asked) == {"irmeasures-markov"}


def test_version_of_a_checkout_that_is_not_installed(metadata_version):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)
    metadata_version(not_installed)
    assert irmeasures_markov.__version__ == UNKNOWN_VERSION == "0+unknown"


def test_version_is_public_and_other_names_still_raise():
    namespace = {}
    exec("from irmeasures_markov import __version__", namespace)
    assert namespace["__version__"] == package_version()
    assert "__version__" in irmeasures_markov.__all__
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = irmeasures_markov.no_such_name
