"""The console script's launcher (``_irmeasures_markov_cli``): one BLAS thread for the evaluation command only.

It also freezes the objects the command made before exit (checked in each child).

The launcher must set the thread variables before numpy is imported, only for
the evaluation command, never over a variable the user set, and the command
must print the same values with and without it.  Each run is a fresh child
interpreter (numpy reads the variables once, at its import).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import _irmeasures_markov_cli as launcher
from irmeasures_markov.cli import SUBCOMMANDS

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "irmeasures_markov" / "data"
QRELS, RUN = str(DATA / "sample.qrels"), str(DATA / "sample.run")

#: the console script's code, then what the child reports: the thread variables, and whether numpy was imported
#: after the launcher had decided (it must not be imported before)
CHILD = f"""
import gc, json, os, sys
sys.argv = ['irmeasures-markov'] + sys.argv[1:]
import _irmeasures_markov_cli
assert 'numpy' not in sys.modules
status = _irmeasures_markov_cli.main()
assert gc.get_freeze_count() > 0 and gc.isenabled()   # frozen objects; collection paused during imports only
print(json.dumps([status, {{v: os.environ.get(v) for v in {launcher.THREAD_VARIABLES!r}}}]))
"""


def run_script(*args, **env):
    full = {k: v for k, v in os.environ.items() if k not in launcher.THREAD_VARIABLES}
    full.update(PYTHONPATH=str(ROOT), IRMEASURES_MARKOV_NO_HOOK="1", **env)
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=full,
                          cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
    *printed, last = proc.stdout.splitlines()
    status, variables = json.loads(last)
    return status, printed, variables


def test_the_launcher_knows_every_command():
    assert launcher.COMMANDS == set(SUBCOMMANDS)


@pytest.mark.parametrize("argv,evaluation", [
    ([], True),
    (["--help"], True),
    (["q.txt", "r.txt", "MP"], True),
    (["--debug", "q.txt", "r.txt", "MP"], True),
    (["fit", "--help"], False),
    (["--debug", "fit", "--help"], False),
    (["compare", "q", "r1", "r2"], False),
    (["pool-reduction"], False),
    (["measures"], False),
])
def test_evaluation_command_is_decided_as_cli_main_decides(argv, evaluation):
    assert launcher.evaluation_command(argv) is evaluation


def test_limit_threads_never_overrides_a_users_setting():
    env = {}
    assert launcher.limit_threads(env) and env == {v: "1" for v in launcher.ONE_THREAD}
    for name in launcher.THREAD_VARIABLES:
        for value in ("4", ""):
            env = {name: value, "PATH": "/bin"}
            assert not launcher.limit_threads(env) and env == {name: value, "PATH": "/bin"}


def test_the_evaluation_command_runs_numpy_with_one_thread_and_prints_the_same_values():
    status, printed, variables = run_script(QRELS, RUN, "MP", "MP(model='GL_AD_LID')", "AP", "-q", "-p", "-1")
    assert status == 0 and variables == {v: ("1" if v in launcher.ONE_THREAD else None)
                                         for v in launcher.THREAD_VARIABLES}
    plain = subprocess.run([sys.executable, "-m", "irmeasures_markov.cli", QRELS, RUN, "MP", "MP(model='GL_AD_LID')",
                            "AP", "-q", "-p", "-1"], capture_output=True, text=True, check=True, cwd=str(ROOT),
                           env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.splitlines()
    assert printed == plain and len(plain) > 3


def test_other_commands_and_user_settings_keep_the_defaults():
    assert run_script("measures", "MP")[2] == {v: None for v in launcher.THREAD_VARIABLES}
    status, printed, variables = run_script(QRELS, RUN, "AP", OMP_NUM_THREADS="2")
    assert status == 0 and variables == {v: ("2" if v == "OMP_NUM_THREADS" else None)
                                         for v in launcher.THREAD_VARIABLES}
