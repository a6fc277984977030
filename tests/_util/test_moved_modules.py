"""Old import paths of moved modules: each still imports, warns once naming the new path, and is the same module."""
import subprocess
import sys
import textwrap

import pytest

from irmeasures_markov._util.moved import MOVED

pytestmark = pytest.mark.slow  # a child interpreter per test


def _run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_imports_the_moved_module_with_a_deprecation_warning(old):
    new = MOVED[old]
    out = _run(f"""
        import importlib, warnings
        import irmeasures_markov
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = importlib.import_module({old!r})
        new = importlib.import_module({new!r})
        assert old is new, (old, new)
        assert new.__spec__.name == {new!r}, new.__spec__
        messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        assert any({old!r} + " moved to " + {new!r} in m for m in messages), messages
        print("ok")
    """)
    assert out.strip() == "ok"


def test_the_finder_aliases_a_module_and_keeps_its_spec():
    out = _run("""
        import sys, warnings
        import irmeasures_markov
        from irmeasures_markov._util import moved
        moved.MOVED["irmeasures_markov.old_errors_path"] = "irmeasures_markov._util.errors"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from irmeasures_markov.old_errors_path import InputError
            import irmeasures_markov.old_errors_path as again
        import irmeasures_markov._util.errors as errors
        assert InputError is errors.InputError and again is errors
        assert errors.__spec__.name == "irmeasures_markov._util.errors"
        warned = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(warned) == 1, [str(w.message) for w in warned]   # once: the second import finds sys.modules
        assert "irmeasures_markov.old_errors_path moved to irmeasures_markov._util.errors" in str(warned[0].message)
        assert warned[0].filename == "<string>", warned[0].filename   # names the importing line
        print("ok")
    """)
    assert out.strip() == "ok"


def test_an_unknown_module_is_still_an_import_error():
    _run("""
        import irmeasures_markov
        try:
            import irmeasures_markov.no_such_module
        except ModuleNotFoundError:
            print("ok")
    """)
