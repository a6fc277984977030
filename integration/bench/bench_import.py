"""Benchmark: start-up costs, each timed in fresh interpreters.

    python integration/bench/bench_import.py [--rounds 7] [--no-hook] [--no-cli] [--cli-run NAME]
                                             [--cli-baseline DIR]

1. Wall time of fresh ``python`` processes, interleaved round by round
   (integration/bench/benchkit.py), with ratios formed within each round:

   * ``import irmeasures_markov`` against ``import ir_measures`` (target <= 2);
   * ``irmeasures-markov --help`` against ``ir_measures --help`` (target <= 2),
     each run exactly as its console script does;
   * for information: ``python -c pass``, and ``import ir_measures`` with the
     start-up hook on (ir_measures plus irmeasures_markov's registration).

   The code measured is this checkout's (``PYTHONPATH`` = the repository).
   Its bytecode is cached in a temporary ``PYTHONPYCACHEPREFIX``, filled by a
   warm-up call, as ``pip install`` compiles it: otherwise every run would
   compile our sources and not ir_measures' (``PYTHONDONTWRITEBYTECODE``).
   The peers run with ``IRMEASURES_MARKOV_NO_HOOK=1``, so that they stay plain
   ir_measures when the hook is installed.

2. The cost of the start-up hook (``irmeasures_markov.pth``) in an interpreter
   that never imports ir_measures (target < 1 ms): the import time of
   ``_irmeasures_markov_hook`` reported by ``python -X importtime -c pass``
   (the .pth line itself only reads one environment variable), in a venv
   with the package installed from a freshly built wheel
   (tests/startup_venv.py), best and range over the rounds.  ``--no-hook``
   skips this part.

3. The command on one TREC-8 run, ``irmeasures-markov QRELS RUN MP AP`` (target
   <= 0.2 s), run as its console script does (``_irmeasures_markov_cli``,
   which gives numpy's BLAS one thread for this command), interleaved with its
   fixed part: ``python -c pass`` (the interpreter's own start) and
   ``python -c "import numpy"`` with ``OPENBLAS_NUM_THREADS=1`` (start plus
   numpy's import as the command pays it; every path of the package needs
   numpy); what remains is the command minus that, per round.  For
   information: ``import numpy`` with the default threads, and
   ``ir_measures QRELS RUN AP`` (the peer's command, plain ir_measures).
   Inputs: ``$IRMEASURES_MARKOV_DATA/qrels/trec8.qrels.gz`` and
   ``runs/trec8/input.NAME.gz`` (``--cli-run``).  ``--cli-baseline DIR``
   times the same command from another checkout (e.g. the code before a
   change) in the same rounds, after checking that it prints the same values.
   The children's CPU time (user + system) is reported too: on a shared
   machine it moves less with the load than wall time.  Then the phases inside
   the command, one child per round with the console script's settings:
   numpy's import, ir_measures', this package's, reading the qrels, the run,
   evaluating and printing.  The children run in an empty directory (``-c``
   puts the working directory first on ``sys.path``).  ``--no-cli`` skips
   this part.

Detailed import profile of one module:
``python -X importtime -c 'import irmeasures_markov' 2>&1 | sort -t'|' -k2 -n | tail``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile

from benchkit import format_report, interleaved

REPO = pathlib.Path(__file__).resolve().parents[2]

IR_MEASURES_HELP = ("import sys; sys.argv = ['ir_measures', '--help']; "
                    "from ir_measures.__main__ import main_cli; sys.exit(main_cli())")
IR_MEASURES_CLI = ("import sys; sys.argv = ['ir_measures'] + sys.argv[1:]; "
                   "from ir_measures.__main__ import main_cli; sys.exit(main_cli())")
#: what the console script runs (pyproject.toml: irmeasures-markov = "_irmeasures_markov_cli:main")
OURS_CLI = ("import sys; sys.argv = ['irmeasures-markov'] + sys.argv[1:]; "
            "from _irmeasures_markov_cli import main; sys.exit(main())")
OURS_HELP = ("import sys; sys.argv = ['irmeasures-markov', '--help']; "
             "from _irmeasures_markov_cli import main; sys.exit(main())")
#: the console script of a checkout from before the launcher (--cli-baseline)
OLD_CLI = OURS_CLI.replace("from _irmeasures_markov_cli import main", "from irmeasures_markov.cli import main")


def _cli_code(repo: pathlib.Path) -> str:
    return OURS_CLI if (repo / "_irmeasures_markov_cli.py").is_file() else OLD_CLI


def _env(pycache: str, hook: bool, repo: pathlib.Path = REPO) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "IRMEASURES_MARKOV_NO_HOOK")}
    env["PYTHONPATH"] = str(repo)
    env["PYTHONPYCACHEPREFIX"] = pycache
    if not hook:
        env["IRMEASURES_MARKOV_NO_HOOK"] = "1"
    return env


def _runner(code: str, env: dict, python: str = sys.executable, args=(), cwd: str | None = None):
    """A fresh ``python -c code``; ``cwd``: its working directory (``-c`` puts it first on ``sys.path``)."""
    def run():
        subprocess.run([python, "-c", code, *args], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, cwd=cwd)
    return run


def _cpu_runner(run, sink: list):
    """``run``, also appending the CPU time (user + system) of the child to ``sink``."""
    def timed():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        sink.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return timed


def _output(code: str, env: dict, args, cwd: str | None = None) -> str:
    return subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True,
                          text=True, cwd=cwd).stdout


#: the command's phases in one child, in the console script's order and with its settings (_irmeasures_markov_cli:
#: one BLAS thread, no garbage collection during the imports): numpy, ir_measures, this package, reading the qrels,
#: the run, evaluating and printing
PHASES = """
import time
t = [time.perf_counter()]
import gc, os
import _irmeasures_markov_cli as launcher
launcher.limit_threads()
gc.disable()
import numpy
t.append(time.perf_counter())
import ir_measures
t.append(time.perf_counter())
import argparse, contextlib, io, json, sys
import irmeasures_markov.cli as cli
from irmeasures_markov.cli._inputs import load_qrels, load_run
gc.enable()
gc.freeze()
t.append(time.perf_counter())
qrels = load_qrels(sys.argv[1])
t.append(time.perf_counter())
run = load_run(sys.argv[2])
t.append(time.perf_counter())
with contextlib.redirect_stdout(io.StringIO()):
    cli.report(cli.parse_measures(["MP", "AP"]), qrels, run,
               argparse.Namespace(by_query=False, no_summary=False, places=4, output_format="tsv"))
t.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(t, t[1:])]))
"""
PHASE_NAMES = ("import numpy (one BLAS thread)", "import ir_measures", "import irmeasures_markov + cli",
               "read qrels", "read run", "evaluate + print")


def bench_phases(rounds: int, qrels: pathlib.Path, run: pathlib.Path) -> None:
    with tempfile.TemporaryDirectory(prefix="bench_import_pycache_") as pycache, \
            tempfile.TemporaryDirectory(prefix="bench_import_cwd_") as cwd:
        env = _env(pycache, hook=False)
        _output(PHASES, env, [str(qrels), str(run)], cwd)  # warm-up: bytecode cache
        phases = [json.loads(_output(PHASES, env, [str(qrels), str(run)], cwd)) for _ in range(rounds)]
    print(f"  phases inside the command (one child per round, {rounds} rounds; best and range):")
    for i, name in enumerate(PHASE_NAMES):
        ts = [p[i] for p in phases]
        print(f"    {name:<36} {min(ts):.3f} s  ({min(ts):.3f}-{max(ts):.3f})")


def bench_cli(rounds: int, run_name: str, baseline: pathlib.Path | None) -> None:
    """The main command on one TREC-8 run against its fixed part (interpreter start, numpy's import)."""
    data = pathlib.Path(os.environ.get("IRMEASURES_MARKOV_DATA", REPO / "data"))
    qrels, run = data / "qrels" / "trec8.qrels.gz", data / "runs" / "trec8" / f"input.{run_name}.gz"
    for path in (qrels, run):
        if not path.is_file():
            print(f"command on one run: not measured ({path} not found; set IRMEASURES_MARKOV_DATA)")
            return
    ours_args, peer_args = [str(qrels), str(run), "MP", "AP"], [str(qrels), str(run), "AP"]
    cli = "irmeasures-markov QRELS RUN MP AP"
    fixed = "import numpy (OPENBLAS_NUM_THREADS=1)"
    # the children run in an empty directory: from a checkout's root, `python -c` would import that checkout's
    # package whatever PYTHONPATH says (the baseline would be this checkout)
    with tempfile.TemporaryDirectory(prefix="bench_import_pycache_") as pycache, \
            tempfile.TemporaryDirectory(prefix="bench_import_cwd_") as cwd:
        plain = _env(pycache, hook=False)
        expected = _output(OURS_CLI, plain, ours_args, cwd)
        if _output(OLD_CLI, plain, ours_args, cwd) != expected:
            raise SystemExit(f"{cli} prints other values with numpy's default BLAS threads")
        contenders = {
            "python -c pass": _runner("pass", plain, cwd=cwd),
            # numpy's import starts OpenBLAS' thread pool, which the command never uses: the launcher sets one thread
            fixed: _runner("import numpy", dict(plain, OPENBLAS_NUM_THREADS="1"), cwd=cwd),
            cli: _runner(OURS_CLI, plain, args=ours_args, cwd=cwd),
            "import numpy (default threads)": _runner("import numpy", plain, cwd=cwd),
            "ir_measures QRELS RUN AP": _runner(IR_MEASURES_CLI, plain, args=peer_args, cwd=cwd),
        }
        if baseline is not None:
            old = _env(pycache, hook=False, repo=baseline.resolve())
            if _output(_cli_code(baseline), old, ours_args, cwd) != expected:
                raise SystemExit(f"{baseline} prints other values than this checkout for {cli}")
            contenders[f"{cli} ({baseline})"] = _runner(_cli_code(baseline), old, args=ours_args, cwd=cwd)
        cpu = {name: [] for name in contenders}
        contenders = {name: _cpu_runner(run, cpu[name]) for name, run in contenders.items()}
        times = interleaved(contenders, rounds=rounds)  # warm-up call first: fills the bytecode cache
        cpu = {name: ts[1:] for name, ts in cpu.items()}  # without the warm-up call
    print(f"command on one run: {run.name}, qrels {qrels.name}; output {' '.join(expected.split())}")
    print(format_report(times, peer=fixed, candidates=[n for n in times if n.startswith(cli)]))
    for name in [n for n in times if n.startswith(cli)]:
        rest = [c - f for c, f in zip(times[name], times[fixed])]
        print(f"  {name}: best {min(times[name]):.3f} s (target <= 0.2); fixed part: python start best "
              f"{min(times['python -c pass']):.3f} s, + {fixed} best {min(times[fixed]):.3f} s; "
              f"what remains (command - {fixed}, per round): best {min(rest):.3f} s, range "
              f"{min(rest):.3f}-{max(rest):.3f}")
    print("  CPU time of the child (user + system; less sensitive than wall time to a shared machine's load):")
    for name, ts in cpu.items():
        print(f"    {name:<{max(map(len, cpu))}}  best {min(ts):.3f} s  ({min(ts):.3f}-{max(ts):.3f})")
    if baseline is not None:
        r = [c / b for c, b in zip(times[cli], times[f"{cli} ({baseline})"])]
        print(f"  ratio this checkout / {baseline}: best {min(r):.3f}, per-round range {min(r):.3f}-{max(r):.3f}")
    bench_phases(rounds, qrels, run)


def bench_processes(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench_import_pycache_") as pycache:
        plain, hooked = _env(pycache, hook=False), _env(pycache, hook=True)
        contenders = {
            "python -c pass": _runner("pass", plain),
            "import ir_measures": _runner("import ir_measures", plain),
            "import irmeasures_markov": _runner("import irmeasures_markov", plain),
            "import ir_measures (hook on)": _runner(
                "import ir_measures, sys; assert 'irmeasures_markov' in sys.modules", hooked),
            "ir_measures --help": _runner(IR_MEASURES_HELP, plain),
            "irmeasures-markov --help": _runner(OURS_HELP, plain),
        }
        # the hook module is imported at start-up only by the installed irmeasures_markov.pth
        hook_installed = subprocess.run([sys.executable, "-c",
                                         "import sys; print('_irmeasures_markov_hook' in sys.modules)"],
                                        env=hooked, capture_output=True, text=True).stdout.strip() == "True"
        if not hook_installed:
            # without the installed hook, `import ir_measures` would not register anything
            contenders["import ir_measures (hook on)"] = _runner("import ir_measures, irmeasures_markov", plain)
        times = interleaved(contenders, rounds=rounds)  # warm-up call first: fills the bytecode cache
    print(format_report(times, peer="import ir_measures",
                        candidates=["import irmeasures_markov", "import ir_measures (hook on)"],
                        targets={"import irmeasures_markov": 2.0}))
    if not hook_installed:
        print("  (hook not installed in this interpreter: 'hook on' is `import ir_measures, irmeasures_markov`)")
    r = [c / p for c, p in zip(times["irmeasures-markov --help"], times["ir_measures --help"])]
    print(f"  ratio irmeasures-markov --help / ir_measures --help: best {min(r):.3f}, per-round range "
          f"{min(r):.3f}-{max(r):.3f}  (target <= 2.0)")


def _hook_import_us(python: str, env: dict) -> float:
    out = subprocess.run([python, "-X", "importtime", "-c", "pass"], env=env, capture_output=True, text=True,
                         check=True).stderr
    for line in out.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s*_irmeasures_markov_hook\s*$", line)
        if m:
            return float(m.group(1))
    raise RuntimeError("_irmeasures_markov_hook was not imported at start-up: is irmeasures_markov.pth installed?")


def bench_hook(rounds: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import startup_venv
    why = startup_venv.build_tools_missing()
    if why:
        print(f"start-up hook: not measured ({why})")
        return
    with tempfile.TemporaryDirectory(prefix="bench_import_venv_") as tmp:
        python = str(startup_venv.make_venv(pathlib.Path(tmp)))
        env = startup_venv.clean_env()
        _hook_import_us(python, env)  # warm-up: bytecode written by pip at install, page cache
        us = [_hook_import_us(python, env) for _ in range(rounds)]
        off = startup_venv.clean_env(IRMEASURES_MARKOV_NO_HOOK="1")
        times = interleaved({"python -c pass (hook opted out)": _runner("pass", off, python),
                             "python -c pass (hook on)": _runner("pass", env, python)}, rounds=rounds)
    print(f"{datetime.date.today().isoformat()}, start-up hook, {rounds} rounds: import of _irmeasures_markov_hook "
          f"at start-up (python -X importtime -c pass): best {min(us) / 1000:.3f} ms, range "
          f"{min(us) / 1000:.3f}-{max(us) / 1000:.3f} ms (target < 1 ms)")
    print(format_report(times, peer="python -c pass (hook opted out)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (>= 5)")
    ap.add_argument("--no-hook", action="store_true", help="skip the measurement of the installed start-up hook")
    ap.add_argument("--no-cli", action="store_true", help="skip the command on one TREC-8 run")
    ap.add_argument("--cli-run", default="AntHoc1", metavar="NAME",
                    help="the TREC-8 run of the command: runs/trec8/input.NAME.gz (default AntHoc1)")
    ap.add_argument("--cli-baseline", type=pathlib.Path, metavar="DIR",
                    help="another checkout whose command is timed in the same rounds (same values required)")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    print(f"{sys.executable} {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    bench_processes(args.rounds)
    if not args.no_cli:
        bench_cli(args.rounds, args.cli_run, args.cli_baseline)
    if not args.no_hook:
        bench_hook(args.rounds)


if __name__ == "__main__":
    main()
