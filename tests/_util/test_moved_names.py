"""The lower packages import nothing from the layers above, and serve no names of theirs."""
import subprocess
import sys
import textwrap

import pytest


def _run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("package", ["irmeasures_markov.experiments", "irmeasures_markov.grid"])
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
