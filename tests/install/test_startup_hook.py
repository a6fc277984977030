"""The start-up hook as users get it: a wheel built from this checkout, installed into a fresh venv.

After ``pip install``, ``ir_measures`` (its Python API and its command) knows
every measure of this package without ``import irmeasures_markov``; with
``IRMEASURES_MARKOV_NO_HOOK=1`` it fails on them exactly as plain ir_measures
does.  The venv sees the running interpreter's site-packages after its own
(offline, no dependency installed; tests/startup_venv.py); the child
interpreters get no PYTHONPATH, so they import the venv's copy of the package.
``pip install ".[test]"`` brings the build tools; without them these tests fail
and say what is missing.
"""
import pathlib
import subprocess
import zipfile

import pytest
import startup_venv

DATA = pathlib.Path(__file__).resolve().parents[2] / "irmeasures_markov" / "data"
QRELS, RUN = str(DATA / "sample.qrels"), str(DATA / "sample.run")
PARSE = "import ir_measures; print(ir_measures.parse_measure(\"MP(model='GL_AD_LID')@10\"))"
#: exactly what the `ir_measures` console script runs
IR_MEASURES_SCRIPT = ("import sys; from ir_measures.__main__ import main_cli; sys.argv[0] = 'ir_measures'; "
                      "sys.exit(main_cli())")

pytestmark = pytest.mark.slow  # builds a wheel and virtual environments


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("startup_hook")
    return startup_venv.make_venv(root), root


def run(python, *args, opt_out=False, **env):
    extra = {"IRMEASURES_MARKOV_NO_HOOK": "1"} if opt_out else {}
    extra.update(env)
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=120,
                          env=startup_venv.clean_env(**extra), cwd=str(DATA))


def test_wheel_ships_the_pth_and_the_hook_at_the_top_and_records_them(venv):
    _, root = venv
    (wheel,) = (root / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "irmeasures_markov.pth" in names and "_irmeasures_markov_hook.py" in names
    record = next(n for n in names if n.endswith(".dist-info/RECORD"))
    recorded = zipfile.ZipFile(wheel).read(record).decode()
    assert "irmeasures_markov.pth," in recorded  # so that `pip uninstall` removes it


def test_parse_measure_without_import(venv):
    python, root = venv
    proc = run(python, "-c", PARSE + "; import sys; print(sys.modules['irmeasures_markov'].__file__)")
    assert proc.returncode == 0, proc.stderr
    parsed, origin = proc.stdout.split()
    assert parsed == "MP(model='GL_AD_LID')@10"
    assert pathlib.Path(origin).is_relative_to(startup_venv.site_packages(python))  # the installed copy


def test_parse_measure_with_opt_out_fails_as_plain_ir_measures(venv):
    python, _ = venv
    proc = run(python, "-c", PARSE, opt_out=True)
    assert proc.returncode == 1
    assert "NameError: measure not found: MP" in proc.stderr


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_ir_measures_command_evaluates_our_measures(venv, how):
    python, _ = venv
    cmd = ["-c", IR_MEASURES_SCRIPT] if how == "console script" else ["-m", "ir_measures"]
    proc = run(python, *cmd, QRELS, RUN, "MP@10", "P@10")
    assert proc.returncode == 0, proc.stderr
    values = dict(line.split("\t") for line in proc.stdout.splitlines())
    # the same numbers as with an explicit import (this process imported irmeasures_markov)
    import ir_measures

    import irmeasures_markov  # noqa: F401
    expected = ir_measures.calc_aggregate([ir_measures.parse_measure("MP@10"), ir_measures.P @ 10],
                                          ir_measures.read_trec_qrels(QRELS), ir_measures.read_trec_run(RUN))
    assert values == {str(m): f"{v:.4f}" for m, v in expected.items()}

    off = run(python, *cmd, QRELS, RUN, "MP@10", "P@10", opt_out=True)
    assert off.returncode == 255 and off.stdout == ""
    assert off.stderr == "error parsing measures\nunknown measure: MP@10\n"


def test_interpreter_that_never_imports_ir_measures_loads_only_the_hook(venv):
    python, _ = venv
    proc = run(python, "-c", "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                             "('ir_measures', 'irmeasures_markov', '_irmeasures_markov_hook')))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['_irmeasures_markov_hook']"
    off = run(python, "-c", "import sys; print('_irmeasures_markov_hook' in sys.modules)", opt_out=True)
    assert off.stdout.strip() == "False"


def test_editable_install_gets_the_hook_too(tmp_path):
    python = startup_venv.make_venv(tmp_path, editable=True)
    proc = run(python, "-c", PARSE + "; import sys; print(sys.modules['irmeasures_markov'].__file__)")
    assert proc.returncode == 0, proc.stderr
    parsed, origin = proc.stdout.split()
    assert parsed == "MP(model='GL_AD_LID')@10"
    assert pathlib.Path(origin).is_relative_to(tmp_path / "src")  # the editable source, not a copy
    assert run(python, "-c", PARSE, opt_out=True).returncode == 1


def test_wheel_ships_py_typed_and_the_installed_copy_reports_the_pyproject_version(venv):
    """PEP 561's marker is in the wheel; ``__version__`` of the installed copy is pyproject.toml's number."""
    python, root = venv
    (wheel,) = (root / "dist").glob("*.whl")
    assert "irmeasures_markov/py.typed" in zipfile.ZipFile(wheel).namelist()
    proc = run(python, "-c", "import irmeasures_markov; print(irmeasures_markov.__version__)")
    assert proc.returncode == 0, proc.stderr
    pyproject = (pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert f'\nversion = "{proc.stdout.strip()}"\n' in pyproject


def test_the_installed_irmeasures_markov_command_evaluates(venv):
    """The console script (through ``_irmeasures_markov_cli``, shipped at the top) prints what ``-m`` prints."""
    python, root = venv
    (wheel,) = (root / "dist").glob("*.whl")
    assert "_irmeasures_markov_cli.py" in zipfile.ZipFile(wheel).namelist()
    script = python.parent / ("irmeasures-markov.exe" if python.suffix == ".exe" else "irmeasures-markov")
    args = [QRELS, RUN, "MP", "AP", "-q", "-p", "-1"]
    proc = subprocess.run([str(script), *args], capture_output=True, text=True, timeout=120,
                          env=startup_venv.clean_env(), cwd=str(DATA))
    assert proc.returncode == 0, proc.stderr
    plain = run(python, "-m", "irmeasures_markov.cli", *args)
    assert proc.stdout == plain.stdout and len(proc.stdout.splitlines()) > 3
