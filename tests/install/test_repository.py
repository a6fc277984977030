"""The repository tracks sources only: build outputs and wheels are neither tracked nor picked up by `git add`."""
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: what `pip install .`, `pip wheel .` and `python -m build` leave in a checkout
BUILD_OUTPUTS = ["build/lib/irmeasures_markov/__init__.py", "dist/irmeasures_markov-0.1.0.tar.gz",
                 "irmeasures_markov-0.1.0-py3-none-any.whl", "pyflakes-4.1.0-py2.py3-none-any.whl",
                 "irmeasures_markov.egg-info/PKG-INFO"]


def git(*args):
    proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.splitlines()


def test_no_build_output_or_wheel_is_tracked():
    tracked = git("ls-files")
    assert tracked, "not a git checkout"
    assert [f for f in tracked if f.endswith(".whl") or f.split("/")[0] in ("build", "dist")
            or ".egg-info/" in f] == []


def test_build_outputs_are_ignored():
    assert git("check-ignore", "--no-index", *BUILD_OUTPUTS) == BUILD_OUTPUTS


def test_ci_runs_the_readme_set_up_in_a_fresh_venv():
    """.ci/run is the newcomer: a venv without system site-packages, then the README's set-up commands in it."""
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    set_up = readme[readme.index("## Set-up"):]
    set_up = set_up[:set_up.index("\n## ", 1)]
    commands = [line.strip() for block in set_up.split("```bash")[1:] for line in block.split("```")[0].splitlines()
                if line.strip()]
    assert {'pip install . && irmeasures-markov demo',
            'pip install ".[test]" && python -m pytest tests'} <= set(commands)
    # CI runs the README's test command with the slow tier on top (--runslow)
    lines = [line.strip().replace(" -q", "").replace(" --runslow", "") for line in ci.splitlines()]
    venv = lines.index('python3 -m venv "$tmp/venv"')
    activate = lines.index('. "$tmp/venv/bin/activate"')
    first_install = min(i for i, line in enumerate(lines) if "pip install" in line)
    assert venv < activate < first_install
    assert all(command in lines[activate:] for command in commands)
    assert "--system-site-packages" not in ci
    assert "trap 'status=$?; rm -rf \"$tmp\"" in ci  # the temporary venv goes away, whatever happens
