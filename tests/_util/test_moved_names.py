"""Names a package exported before its code moved up a layer: each still resolves, warns naming the new path,
and is the very object at the new path; the packages themselves import nothing from the layer above."""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # a child interpreter per test
MOVED_NAMES = [
    ("irmeasures_markov.experiments", "compare", "irmeasures_markov.comparison"),
    ("irmeasures_markov.grid", "EvaluationGrid", "irmeasures_markov.experiments.grid"),
    ("irmeasures_markov.grid", "GridResult", "irmeasures_markov.experiments.grid"),
    ("irmeasures_markov.grid", "evaluate_grid", "irmeasures_markov.experiments.grid"),
]


def _run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("package, name, new", MOVED_NAMES)
def test_old_name_is_the_new_object_with_a_deprecation_warning(package, name, new):
    out = _run(f"""
        import importlib, warnings
        package = importlib.import_module({package!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = getattr(package, {name!r})
        assert old is getattr(importlib.import_module({new!r}), {name!r})
        messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        assert messages == [{package!r} + "." + {name!r} + " moved to " + {new!r} + "." + {name!r}
                            + "; import it from there (the old name will be removed in a future release)"], messages
        assert caught[0].filename == "<string>", caught[0].filename  # the warning points at the caller
        print("ok")
    """)
    assert out.strip() == "ok"


@pytest.mark.parametrize("package", sorted({p for p, _, _ in MOVED_NAMES}))
def test_importing_a_lower_package_loads_nothing_from_the_layers_above(package):
    out = _run(f"""
        import sys
        import {package}
        above = {{"irmeasures_markov.grid": ("irmeasures_markov.experiments", "irmeasures_markov.inference",
                                            "irmeasures_markov.comparison", "irmeasures_markov.cli"),
                 "irmeasures_markov.experiments": ("irmeasures_markov.inference", "irmeasures_markov.comparison",
                                                   "irmeasures_markov.cli")}}[{package!r}]
        print(sorted(m for m in sys.modules if m.startswith(above)))
    """)
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", ["irmeasures_markov.experiments", "irmeasures_markov.grid"])
def test_an_unknown_name_is_still_an_attribute_error(package):
    import importlib
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = importlib.import_module(package).no_such_name
