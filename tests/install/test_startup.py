"""Start-up: what `import irmeasures_markov` loads, the lazy module proxy, and the start-up hook's logic.

Each check runs in a fresh interpreter (``sys.modules`` of this test process is
full of everything other tests imported).  No timing here: the times are in
integration/bench/bench_import.py.  The hook installed from a wheel is tested in
test_startup_hook.py.
"""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from irmeasures_markov._util._lazy import lazy_module

REPO = pathlib.Path(__file__).resolve().parents[2]

#: Modules that `import irmeasures_markov` must not load: each costs tens of milliseconds (or more) and is
#: needed only when a measure is computed, a test run, a dataset read or a figure drawn.
HEAVY = ("scipy.fft", "scipy.linalg", "scipy.special", "scipy.stats", "scipy.sparse", "scipy.optimize",
         "pandas", "ir_datasets", "tqdm", "matplotlib", "numba", "pymc", "arviz", "pyterrier")


pytestmark = pytest.mark.slow  # child interpreters timing and tracing the package's start-up


def run_python(*code, env_extra=None, pythonpath=(REPO,), check=True):
    """Run the pieces of ``code`` (each dedented) in a fresh interpreter importing this checkout."""
    env = {k: v for k, v in os.environ.items() if k != "IRMEASURES_MARKOV_HOOK_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(map(str, pythonpath))
    # an installed hook (irmeasures_markov.pth) stays out of the way; hook.install() below ignores the variable
    env["IRMEASURES_MARKOV_NO_HOOK"] = "1"
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", "\n".join(textwrap.dedent(c) for c in code)], env=env,
                          capture_output=True, text=True,
                          cwd=str(pythonpath[0]), timeout=120)  # `-c` puts the working directory first
    if check and proc.returncode != 0:
        raise AssertionError(f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def heavy_loaded_after(code):
    out = run_python(code, f"""
        import json, sys
        print(json.dumps(sorted(m for m in sys.modules if m in {HEAVY!r})))
        """).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_loads_no_heavy_module():
    assert heavy_loaded_after("import irmeasures_markov") == []


def test_lazily_bound_scipy_works_at_first_use():
    # closed form: the two-state chain [[1-a, a], [b, 1-b]] has pi = (b, a) / (a + b) (dense: scipy.linalg,
    # sparse: scipy.sparse.linalg)
    loaded = heavy_loaded_after("""
        import numpy as np
        import irmeasures_markov
        from irmeasures_markov.core import stationary_distribution
        a, b = 0.3, 0.1
        P = np.array([[1 - a, a], [b, 1 - b]])
        assert np.allclose(stationary_distribution(P), [b / (a + b), a / (a + b)], atol=1e-14)
        import scipy.sparse
        assert np.allclose(stationary_distribution(scipy.sparse.csr_matrix(P)), [0.25, 0.75], atol=1e-14)
        """)
    assert "scipy.linalg" in loaded


def test_command_line_help_loads_no_heavy_module():
    loaded = heavy_loaded_after("""
        import contextlib, io
        from irmeasures_markov.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["--help"]) == 0
        assert "QRELS" in out.getvalue().upper()
        """)
    assert loaded == []


#: What the main command on one run (``irmeasures-markov QRELS RUN MP AP``) must not load besides HEAVY: the
#: installed metadata (read for ``--version`` only), the packages behind ``--ties``/``--unjudged``/
#: ``--residual`` and the other commands (comparison, experiments, grid, inference, calibration), json (for
#: ``-o jsonl`` only) and difflib (for a misspelt measure only).
ONE_RUN_DEFERRED = HEAVY + ("importlib.metadata", "irmeasures_markov.comparison", "irmeasures_markov.experiments",
                            "irmeasures_markov.grid", "irmeasures_markov.inference", "irmeasures_markov.calibration",
                            "multiprocessing", "concurrent.futures", "json", "difflib")


def _one_run_files(tmp_path):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d4 0\n")
    run.write_text("".join(f"{q} Q0 d{d} {r} {10 - r} t\n" for q in (1, 2) for r, d in enumerate((3, 1, 4, 2), 1)))
    return qrels, run


def _one_run(tmp_path, *options):
    qrels, run = _one_run_files(tmp_path)
    out = run_python(f"""
        import contextlib, io, sys
        from irmeasures_markov.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            status = main([{str(qrels)!r}, {str(run)!r}, "MP", "AP", *{list(options)!r}])
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("json", "difflib")
                        or m.startswith({ONE_RUN_DEFERRED!r}))
        import json  # after the list
        print(json.dumps([status, out.getvalue(), loaded]))
        """).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_one_run_command_loads_no_deferred_module(tmp_path):
    status, out, loaded = _one_run(tmp_path)
    assert status == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["MP", "AP"]
    assert loaded == []


def test_one_run_command_with_ties_option_loads_comparison_options_and_same_values(tmp_path):
    # the control: an option that does need the comparison package still gets it, and the values of a
    # measure it leaves alone (AP) are those of the plain command
    plain = _one_run(tmp_path)[1].splitlines()
    status, out, loaded = _one_run(tmp_path, "--ties", "optimistic")
    assert status == 0 and "irmeasures_markov.comparison" in loaded
    lines = out.splitlines()
    assert lines[0].startswith("MP(ties='optimistic')\t") and lines[1] == plain[1]


def test_inference_import_loads_no_scipy_stats_until_a_test_runs():
    loaded = heavy_loaded_after("""
        import numpy as np
        import irmeasures_markov.inference as inf
        import sys
        assert "scipy.stats" not in sys.modules
        res = inf.paired_t_test(np.array([0.1, 0.4, 0.3, 0.8]), np.array([0.2, 0.1, 0.1, 0.5]))
        assert 0 < res.pvalue < 1
        """)
    assert "scipy.stats" in loaded


class TestLazyModule:
    def test_imports_at_first_attribute_access_only(self):
        out = run_python("""
            import sys
            from irmeasures_markov._util._lazy import lazy_module
            m = lazy_module("json.decoder")
            before = "json.decoder" in sys.modules
            r = repr(m)
            value = m.JSONDecoder
            print(before, r, "json.decoder" in sys.modules, value is sys.modules["json.decoder"].JSONDecoder, repr(m))
            """).stdout.split(" <")
        assert out[0] == "False"
        assert out[1].startswith("lazy module 'json.decoder' (not imported yet)> True True")
        assert "(imported)" in out[2]

    def test_missing_module_fails_at_first_use_naming_it(self):
        m = lazy_module("irmeasures_markov_no_such_module")
        with pytest.raises(ModuleNotFoundError, match="irmeasures_markov_no_such_module"):
            _ = m.anything

    def test_missing_attribute_is_an_attribute_error_of_the_module(self):
        with pytest.raises(AttributeError, match="no_such_attribute"):
            _ = lazy_module("json").no_such_attribute

    def test_setattr_and_delattr_reach_the_module(self):
        import json
        m = lazy_module("json")
        m._irmeasures_markov_probe = 1
        try:
            assert json._irmeasures_markov_probe == 1
            del m._irmeasures_markov_probe
            assert not hasattr(json, "_irmeasures_markov_probe")
        finally:
            json.__dict__.pop("_irmeasures_markov_probe", None)
        assert "dumps" in dir(m)


# --- the hook's logic, with the hook module imported from the checkout (no .pth involved) ------------------

REGISTERED = """
    import sys, ir_measures
    from ir_measures import measures
    names = [n for n in ("MP", "PH", "PatH", "TBG", "M1") if n in measures.registry]
    providers = [p for p in ir_measures.DefaultPipeline.providers if getattr(p, "NAME", "") == "irmeasures_markov"]
    finders = [f for f in sys.meta_path if type(f).__name__ == "_Finder"]
    print(names, len(providers), len(finders), type(ir_measures.__spec__.loader).__name__,
          type(ir_measures.__loader__).__name__)
    """


def test_hook_registers_when_ir_measures_is_imported():
    out = run_python("""
        import sys, _irmeasures_markov_hook as hook
        hook.install()
        assert "irmeasures_markov" not in sys.modules
        """, REGISTERED).stdout.split()
    assert out[:5] == ["['MP',", "'PH',", "'PatH',", "'TBG',", "'M1']"]
    # one provider, the finder gone, ir_measures left with its own loader
    assert out[5:] == ["1", "0", "SourceFileLoader", "SourceFileLoader"]


def test_hook_without_install_registers_nothing():
    # the control: plain ir_measures knows none of our measures
    out = run_python("import _irmeasures_markov_hook", REGISTERED).stdout.split()
    assert out[:1] == ["[]"]


def test_hook_survives_find_before_import_as_python_dash_m_does():
    # runpy finds the package (importlib.util.find_spec) before importing it through ir_measures.__main__
    out = run_python("""
        import importlib.util, _irmeasures_markov_hook as hook
        hook.install()
        assert importlib.util.find_spec("ir_measures") is not None
        import ir_measures.__main__
        """, REGISTERED).stdout.split()
    assert out[0] == "['MP',"


def test_hook_then_import_irmeasures_markov_first_registers_once():
    # irmeasures_markov imports ir_measures half-way through its own import: the hook must leave it alone
    out = run_python("""
        import _irmeasures_markov_hook as hook
        hook.install()
        import irmeasures_markov
        """, REGISTERED).stdout.split()
    assert out[0] == "['MP',"
    assert out[5:7] == ["1", "0"]


def test_hook_with_a_broken_package_leaves_ir_measures_working(tmp_path):
    broken = tmp_path / "irmeasures_markov"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('broken on purpose')\n")
    code = """
        import _irmeasures_markov_hook as hook
        hook.install()
        import ir_measures
        print(ir_measures.parse_measure("P@10"))
        """
    quiet = run_python(code, pythonpath=(tmp_path, REPO))
    assert quiet.stdout.strip() == "P@10" and quiet.stderr == ""
    loud = run_python(code, env_extra={"IRMEASURES_MARKOV_HOOK_DEBUG": "1"}, pythonpath=(tmp_path, REPO))
    assert loud.stdout.strip() == "P@10"
    assert "RuntimeWarning" in loud.stderr and "broken on purpose" in loud.stderr


@pytest.mark.parametrize("value, enabled", [("", True), ("0", True), ("1", False), ("yes", False)])
def test_opt_out_variable(value, enabled):
    out = run_python("import _irmeasures_markov_hook as h; print(h.enabled())",
                     env_extra={"IRMEASURES_MARKOV_NO_HOOK": value}).stdout.strip()
    assert out == str(enabled)


def test_pth_line_reads_the_opt_out_variable_and_calls_install():
    line = (REPO / "irmeasures_markov.pth").read_text()
    assert line.count("\n") == 1 and line.startswith("import ")  # site executes lines that start with `import`
    code = f"""
        import sys
        exec({line.strip()!r})
        print(any(type(f).__name__ == "_Finder" for f in sys.meta_path))
        """
    assert run_python(code, env_extra={"IRMEASURES_MARKOV_NO_HOOK": ""}).stdout.strip() == "True"
    assert run_python(code, env_extra={"IRMEASURES_MARKOV_NO_HOOK": "1"}).stdout.strip() == "False"
