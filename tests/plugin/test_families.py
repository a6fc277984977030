"""FAMILIES (irmeasures_markov/plugin/__init__.py) is the one declaration of the measure families: the
import-linter contract, the registration list and the brute-force test lists agree with it; every registered
measure is a class statement of its own; register_measure keeps other modules' names."""
import inspect
import pickle
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import ir_measures
import pytest

import irmeasures_markov as imm
from irmeasures_markov.plugin import FAMILIES, register_measure
from irmeasures_markov.plugin._base import COMMON_PARAMS, VARIANT_PARAMS, FamilyMeasure

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "irmeasures_markov" / "plugin"
MEASURES = ROOT / "irmeasures_markov" / "measures"


def plugin_module(family):
    return import_module(f"irmeasures_markov.plugin.{family.plugin}")


def top_module(dotted):
    """The module or package directly under measures/ that a dotted path lies in."""
    return dotted.split(".")[2]


def test_every_kernel_module_belongs_to_one_family():
    tops = {p.stem for p in MEASURES.glob("*.py") if p.stem != "__init__"}
    tops |= {p.parent.name for p in MEASURES.glob("*/__init__.py")}
    declared = [m for f in FAMILIES for m in f.kernel]
    assert sorted(declared) == sorted(tops)


def test_the_independence_contract_is_every_family_with_its_own_imports_only():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "independence"]
    assert contract["modules"] == ["irmeasures_markov.measures.*"]
    family_of = {m: i for i, f in enumerate(FAMILIES) for m in f.kernel}
    for line in contract.get("ignore_imports", []):
        source, target = (side.strip() for side in line.split("->"))
        assert family_of[top_module(source)] == family_of[top_module(target)], line


def test_every_registering_plugin_module_is_a_family_imported_by_the_registration_list():
    registering = {p.stem for p in PLUGIN.glob("*.py") if "= register_measure(" in p.read_text("utf-8")}
    families = {f.plugin for f in FAMILIES if f.plugin}
    assert registering == families


def test_every_family_has_a_user_page_that_the_site_lists():
    sys.path.insert(0, str(ROOT / "tools"))
    from mkdocs_families import family_pages
    pages = [f.page for f in FAMILIES if f.plugin]
    assert all(pages) and family_pages() == [f.page for f in FAMILIES if f.page]
    assert all((ROOT / "docs" / page).is_file() for page in pages)
    assert "  - FAMILIES  #" in (ROOT / "mkdocs.yml").read_text("utf-8")


def test_every_family_gives_examples_of_its_own_measures():
    for family in (f for f in FAMILIES if f.plugin):
        module = plugin_module(family)
        names = {m.NAME for m in vars(module).values() if isinstance(m, FamilyMeasure)}
        examples = [ir_measures.parse_measure(e) for e in module.EXAMPLES]
        assert examples and {m.NAME for m in examples} <= names, family


REGISTERED = sorted({name for name, m in ir_measures.measures.registry.items() if isinstance(m, FamilyMeasure)})


@pytest.mark.parametrize("name", REGISTERED)
def test_every_registered_measure_is_a_class_statement_that_pickles(name):
    measure = ir_measures.measures.registry[name]
    assert f"class {type(measure).__qualname__}(" in inspect.getsource(type(measure))
    with_cutoff = measure @ 5
    assert pickle.loads(pickle.dumps(with_cutoff)) == with_cutoff
    assert set(COMMON_PARAMS) | set(VARIANT_PARAMS) <= set(measure.SUPPORTED_PARAMS)


class _INST(FamilyMeasure):
    """A measure named like ir_measures' own INST."""
    __name__ = NAME = "INST"
    SUPPORTED_PARAMS = {"cutoff": COMMON_PARAMS["cutoff"]}


class _Toy(FamilyMeasure):
    __name__ = NAME = "TOY"
    SUPPORTED_PARAMS = {}


def test_register_measure_refuses_a_name_ir_measures_owns():
    theirs = ir_measures.measures.registry["INST"]
    params = _INST.SUPPORTED_PARAMS
    with pytest.raises(ValueError, match=r"'INST', from ir_measures\.measures"):
        register_measure(_INST())
    assert ir_measures.measures.registry["INST"] is theirs
    assert "INST" not in {m.NAME for m in imm.PROVIDER.SUPPORTED_MEASURES}
    with pytest.raises(ValueError, match="'MP', from irmeasures_markov.plugin._mp"):
        register_measure(_Toy(), aliases=["MP"])      # another package's name, here this package's own
    assert "TOY" not in ir_measures.measures.registry
    ours = _INST()
    try:
        assert register_measure(ours, replace=True) is ours
        assert ir_measures.measures.registry["INST"] is ours
    finally:
        ir_measures.measures.registry["INST"] = theirs
        imm.PROVIDER.SUPPORTED_MEASURES.remove(ours)
    assert _INST.SUPPORTED_PARAMS is params and list(params) == ["cutoff"]   # the class is left as declared


def test_the_hook_page_lists_every_name_another_module_holds():
    page = (ROOT / "docs" / "integration-hook.md").read_text("utf-8")
    listed = page[page.index(f"ir_measures {ir_measures.__version__} holds"):page.index("; the snippet below")]
    ours = {n for m in imm.list_measures() for n in (m.name, *m.aliases)}
    assert set(re.findall(r"`([^`]+)`", listed)) == set(ir_measures.measures.registry) - ours


def test_register_measure_again_from_the_same_module_keeps_the_first():
    first = ir_measures.measures.registry["MP"]
    register_measure(type(first)())
    assert ir_measures.measures.registry["MP"] is first


def test_hook_import_orders_and_reimport_register_without_a_warning():
    code = """
import sys, warnings
warnings.simplefilter("error")
import _irmeasures_markov_hook as hook
hook.install()
if sys.argv[1] == "hook first":
    import ir_measures, irmeasures_markov
else:
    import irmeasures_markov, ir_measures
for name in [m for m in sys.modules if m.split(".")[0] == "irmeasures_markov"]:
    del sys.modules[name]
import irmeasures_markov
print(ir_measures.parse_measure("RBTR(theta=0.7)@5"))
"""
    for order in ("hook first", "package first"):
        proc = subprocess.run([sys.executable, "-c", code, order], capture_output=True, text=True, cwd=str(ROOT),
                              timeout=120)
        assert proc.returncode == 0 and proc.stdout == "RBTR(theta=0.7)@5\n", (order, proc.stderr)


def test_ir_measures_is_not_patched_and_takes_a_run_kept_as_columns_through_to_dict(tmp_path):
    assert ir_measures.util.RunConverter.__init__.__module__ == "ir_measures.util"
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 1.0 t\n")
    qrels = {"q1": {"a": 0, "b": 1, "c": 1}}
    run = imm.io.read_run_columns(path)
    mp = ir_measures.parse_measure("MP")
    both = ir_measures.calc_aggregate([ir_measures.AP, mp], qrels, run.to_dict())
    assert ir_measures.calc_aggregate([mp], qrels, run) == {mp: both[mp]}   # ours alone read the columns
    assert both[ir_measures.AP] == pytest.approx((1 / 2 + 2 / 3) / 2)
