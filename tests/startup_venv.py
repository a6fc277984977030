"""A throw-away virtual environment with this package installed from a freshly built wheel.

Used by tests/install/test_startup_hook.py and integration/bench/bench_import.py to run the
start-up hook as a user gets it: ``pip install`` puts ``irmeasures_markov.pth``
and ``_irmeasures_markov_hook`` into site-packages.  Offline and fast: the wheel
is built without build isolation and installed without dependencies.

The dependencies (numpy, scipy, ir_measures..., and setuptools/wheel for the
editable build) come from the *running* interpreter, whatever it is (a fresh
venv holding only ``.[test]``, or a developer's interpreter): the nested venv
is made without system site-packages, and a ``.pth`` file of its own, run
last, appends the running interpreter's site-packages directories to
``sys.path``, after the nested venv's own.  They are added as plain path
entries, their ``.pth`` files are not executed: a copy of this package
installed in the running interpreter (as CI installs it) neither runs its
start-up hook there nor shadows the copy under test, which the nested
site-packages (or, for an editable install, its source directory) provides
first.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import site
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
#: What a wheel is built from (a copy, so that the build never writes into the work tree).
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "_irmeasures_markov_hook.py",
           "_irmeasures_markov_cli.py", "irmeasures_markov.pth", "irmeasures_markov")


def build_tools_missing() -> str | None:
    """Why a wheel cannot be built offline here, or None."""
    from importlib.metadata import PackageNotFoundError, version

    def release(name):
        try:
            return tuple(int(x) for x in re.findall(r"\d+", version(name))[:2])
        except PackageNotFoundError:
            return None
    setuptools, wheel, pip = release("setuptools"), release("wheel"), release("pip")
    if setuptools is None or setuptools < (64, 0):
        return f"setuptools >= 64 is needed to build the wheel (found {setuptools})"
    if setuptools < (70, 1) and wheel is None:  # setuptools >= 70.1 builds wheels by itself
        return "setuptools < 70.1 needs the `wheel` package to build wheels"
    if pip is None or pip < (22, 3):
        return f"pip >= 22.3 is needed (--python option; found {pip})"
    return None


def running_site_dirs() -> list[str]:
    """The site-packages directories of the running interpreter (its venv's, and the user's when enabled)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    seen = []
    for d in dirs:
        if os.path.isdir(d) and d not in seen:
            seen.append(d)
    return seen


#: named to be processed after every other .pth file of the nested site-packages (they run in name order)
PARENT_PTH = "zzz_running_interpreter_site.pth"


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def clean_env(**extra) -> dict:
    """The environment for a child interpreter: no PYTHONPATH, so the venv's copy is imported."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "IRMEASURES_MARKOV_NO_HOOK", "IRMEASURES_MARKOV_HOOK_DEBUG")}
    env.update(extra)
    return env


def make_venv(root: pathlib.Path, editable: bool = False) -> pathlib.Path:
    """Create ``root/venv`` with the package installed; return the venv's python."""
    missing = build_tools_missing()
    if missing:
        raise RuntimeError(f"cannot build a wheel offline: {missing} (pip install \".[test]\" installs them)")
    src = root / "src"
    src.mkdir(parents=True)
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")
    # the running interpreter's packages, after the nested venv's own (a line naming a directory is appended to
    # sys.path as it is; an `import` line would run code, which this file does not need)
    (site_packages(python) / PARENT_PTH).write_text("".join(d + "\n" for d in running_site_dirs()))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "--no-input",
           "install", "--quiet", "--no-deps", "--no-build-isolation", "--ignore-installed"]
    env = clean_env()
    if editable:
        # compat mode puts the source directory on sys.path through a .pth of the venv, ahead of the running
        # interpreter's site-packages: a regular install there (as in CI) would otherwise shadow the editable
        # one, whose default finder is consulted only after the ordinary path search
        _run(pip + ["--config-settings", "editable_mode=compat", "--editable", str(src)], env=env, cwd=root)
    else:
        dist = root / "dist"
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
              "--disable-pip-version-check", "-w", str(dist), str(src)], env=env, cwd=root)
        wheels = sorted(dist.glob("irmeasures_markov-*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(f"expected one wheel in {dist}, found {wheels}")
        _run(pip + [str(wheels[0])], env=env, cwd=root)
    return python


def site_packages(python: pathlib.Path) -> pathlib.Path:
    out = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=clean_env())
    return pathlib.Path(out.stdout.strip())
