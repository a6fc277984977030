"""The one name-registry helper (irmeasures_markov._util._registry) and the five registries built on it."""
import doctest

import pytest

import irmeasures_markov as imm
from irmeasures_markov._util import _registry as registry_module
from irmeasures_markov._util._registry import Registry


def test_doctest():
    result = doctest.testmod(registry_module)
    assert result.attempted > 0 and result.failed == 0


def test_register_get_names_unregister():
    entries = {}
    reg = Registry("thing", lambda: entries, builtin=("A",), upper=True)
    assert reg.register("b", 1) == "B" and entries == {"B": 1}
    assert "b" in reg and "B" in reg and "A" not in reg and 3 not in reg
    assert reg.get("b") == 1 and reg.names() == ("A", "B")
    with pytest.raises(ValueError, match=r"'a' is a built-in thing; choose another name"):
        reg.register("a", 2)
    reg.unregister("B")
    with pytest.raises(KeyError, match=r"unknown thing 'B'; registered: \[\]"):
        reg.unregister("B")


def test_name_rule_runs_before_the_value_check():
    checked = []

    def rule(name):
        if "/" in name:
            raise ValueError(f"bad name {name!r}")

    reg = Registry("thing", lambda: {}, name_rule=rule)
    with pytest.raises(ValueError, match="bad name"):
        reg.register("a/b", 1, check=checked.append)
    assert checked == []


def test_entries_are_read_on_every_use():
    holder = {"entries": {}}
    reg = Registry("thing", lambda: holder["entries"])
    reg.register("x", 1)
    holder["entries"] = {}
    assert "x" not in reg and reg.names() == ()


@pytest.mark.parametrize("module, attr", [
    ("irmeasures_markov.measures.markov_precision._models", "KERNEL_REGISTRY"),
    ("irmeasures_markov.measures._carterette_distributions", "DISTRIBUTION_REGISTRY"),
    ("irmeasures_markov.plugin._mp", "RATES_REGISTRY"),
    ("irmeasures_markov.plugin._tbg", "LENGTHS_REGISTRY"),
    ("irmeasures_markov.calibration._registry", "FIT_REGISTRY"),
])
def test_the_five_registries_use_the_helper(module, attr):
    import importlib
    assert isinstance(getattr(importlib.import_module(module), attr), Registry)


def test_registered_names_keep_their_messages():
    with pytest.raises(ValueError, match="is a paper model name; choose another name for a custom kernel"):
        imm.register_kernel("gl_ad_id", lambda i, j: 1.0 / (abs(i - j) + 1))
    with pytest.raises(ValueError, match="register_rates: name must be a plain word"):
        imm.register_rates("a/b", [1.0])
    with pytest.raises(ValueError, match="register_lengths: name must be a plain word"):
        imm.register_lengths("irds:x", {"d": 1})
