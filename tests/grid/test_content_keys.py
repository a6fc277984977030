"""State follows content: whatever is cached, stored or resumed is keyed by the content it was computed from.

Every file a measure reads (fit files, MPcont rates, TBG lengths), every registered table, kernel and fit, and
the package version are part of a grid cell's key; the in-process caches of those files are keyed by the digest
of the bytes, so a rewrite that keeps the size and the modification time (``cp -p``, ``touch -r``) is seen.
Fit files are checked against their family's schema, and ``fit:NAME`` never reaches outside the fit
directories.  The reference for every value is a fresh evaluation of the new content (a file at a path never
read before, or the measure with the parameters written out).
"""
import json
import os

import ir_measures
import numpy as np
import pytest

import irmeasures_markov
from irmeasures_markov import PROVIDER, register_lengths
from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration import FamilyFit, load_fit, register_fitted, save_fit
from irmeasures_markov.calibration import _registry as registry
from irmeasures_markov.plugin._mp import register_rates
from irmeasures_markov.ranking import _cache as qrels_cache

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d5": 1}, "q2": {"d2": 1, "d4": 1, "d6": 0}}
RUNS = {"a": {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0},
              "q2": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d6": 1.0}},
        "b": {"q1": {"d5": 5.0, "d4": 4.0, "d3": 3.0, "d2": 2.0, "d1": 1.0},
              "q2": {"d6": 5.0, "d4": 4.0, "d3": 3.0, "d2": 2.0, "d1": 1.0}}}


@pytest.fixture(autouse=True)
def registries(monkeypatch):
    """Names registered by a test are forgotten after it."""
    from irmeasures_markov.measures.markov_precision import _models as markov_precision
    from irmeasures_markov.plugin import _mp as mp
    from irmeasures_markov.plugin import _tbg as tbg
    for module, name in ((mp, "REGISTERED_RATES"), (tbg, "REGISTERED_LENGTHS"), (tbg, "REGISTERED_DUPLICATES"),
                         (markov_precision, "CUSTOM_KERNELS"), (registry, "_REGISTERED")):
        monkeypatch.setattr(module, name, dict(getattr(module, name)))


def mp_fit(decay: float, kernel: str = "ID") -> FamilyFit:
    return FamilyFit("mp", f"GL_AD_{kernel}(decay)", {"connectivity": "GL", "states": "AD", "kernel": kernel,
                                                     "decay": decay})


def rewrite_keeping_size_and_mtime(path, text: str):
    """Write ``text`` over ``path`` (same size), then give the file back its old times, as ``cp -p`` does."""
    st = os.stat(path)
    with open(path, "rb") as fh:
        assert len(fh.read()) == len(text.encode()), "the rewrite must keep the size"
    with open(path, "w") as fh:
        fh.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def fit_text(fit: FamilyFit, tmp_path) -> str:
    save_fit(tmp_path / "scratch.json", fit)
    return (tmp_path / "scratch.json").read_text()


RATES_1 = "1\t0.50\n2\t0.25\n3\t0.10\n4\t0.90\n5\t0.30\n"
RATES_2 = "1\t0.05\n2\t0.95\n3\t0.40\n4\t0.20\n5\t0.70\n"
LENGTHS_1 = "d1\t100\nd2\t900\nd3\t250\nd4\t700\nd5\t120\nd6\t300\n"
LENGTHS_2 = "d1\t900\nd2\t100\nd3\t750\nd4\t200\nd5\t620\nd6\t800\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A fit, a rates and a lengths file, and the measures that read them (working directory: tmp_path)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fit.json").write_text(fit_text(mp_fit(1.0), tmp_path))
    (tmp_path / "rates.tsv").write_text(RATES_1)
    (tmp_path / "lengths.tsv").write_text(LENGTHS_1)
    return {"MPfit": "MP(model='file:fit.json')", "MPcont": "MPcont(rates='rates.tsv')",
            "TBG": "TBG(lengths='lengths.tsv')"}


def rewrite_all(tmp_path):
    rewrite_keeping_size_and_mtime(tmp_path / "fit.json", fit_text(mp_fit(3.0), tmp_path))
    rewrite_keeping_size_and_mtime(tmp_path / "rates.tsv", RATES_2)
    rewrite_keeping_size_and_mtime(tmp_path / "lengths.tsv", LENGTHS_2)


def fresh_means(tmp_path, fit: FamilyFit, rates: str, lengths: str):
    """The three measures on files at paths never read before: no cache can answer."""
    fresh = tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"
    fresh.mkdir()
    save_fit(fresh / "fit.json", fit)
    (fresh / "rates.tsv").write_text(rates)
    (fresh / "lengths.tsv").write_text(lengths)
    measures = [ir_measures.parse_measure(m) for m in (f"MP(model='file:{fresh / 'fit.json'}')",
                                                       f"MPcont(rates='{fresh / 'rates.tsv'}')",
                                                       f"TBG(lengths='{fresh / 'lengths.tsv'}')")]
    return [ir_measures.calc_aggregate([m], QRELS, run)[m] for run in RUNS.values() for m in measures]


# ---------------------------------------------------------------------------
# the resumable grid store
# ---------------------------------------------------------------------------

def test_grid_store_recomputes_cells_whose_fit_rates_or_lengths_file_changed(files, tmp_path):
    pytest.importorskip("pyarrow")
    from irmeasures_markov.experiments import evaluate_grid
    from irmeasures_markov.grid import ParquetStore
    store = ParquetStore(tmp_path / "store")

    def grid_means():
        evs, summary = evaluate_grid(files, QRELS, RUNS, store=store, progress=False)
        ev = evs[(100.0, 0)]
        assert list(ev.runs) == list(RUNS)
        return [float(v) for i in range(len(RUNS)) for v in ev.values[i].mean(axis=1)], summary

    first, s1 = grid_means()
    assert (s1.done, s1.cached) == (2, 0)
    expected_first = fresh_means(tmp_path, mp_fit(1.0), RATES_1, LENGTHS_1)
    assert first == pytest.approx(expected_first, abs=1e-12)
    again, s2 = grid_means()  # unchanged files: served from the store
    assert (s2.done, s2.cached) == (0, 2) and again == first

    rewrite_all(tmp_path)
    second, s3 = grid_means()
    assert (s3.done, s3.cached) == (2, 0)  # every cell computed again, none served stale
    expected_second = fresh_means(tmp_path, mp_fit(3.0), RATES_2, LENGTHS_2)
    assert second == pytest.approx(expected_second, abs=1e-12)
    assert all(abs(old - new) > 1e-6 for old, new in zip(first, second))  # each file's change shows


def test_a_file_changed_after_the_cells_were_keyed_is_an_input_error_and_nothing_is_stored(files, tmp_path,
                                                                                          monkeypatch):
    pytest.importorskip("pyarrow")
    from irmeasures_markov.experiments import _grid as evaluation
    from irmeasures_markov.experiments import evaluate_grid
    from irmeasures_markov.grid import GridError, GridInputError, ParquetStore
    store = ParquetStore(tmp_path / "store")
    measures = {"MPcont": files["MPcont"]}
    original = evaluation._EvalTask.compute

    def compute_after_a_rewrite(self, shared):  # the rates file changes after the cells were keyed
        if (tmp_path / "rates.tsv").read_text() == RATES_1:
            rewrite_keeping_size_and_mtime(tmp_path / "rates.tsv", RATES_2)
        return original(self, shared)
    monkeypatch.setattr(evaluation._EvalTask, "compute", compute_after_a_rewrite)
    with pytest.raises(GridInputError, match=r"rates='rates.tsv'.* changed while the grid ran") as caught:
        evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)
    # an input error (the command line: status 2, this message), and a GridError as before
    assert isinstance(caught.value, InputError) and isinstance(caught.value, GridError)
    assert store.keys() == set()  # nothing stored under the key of RATES_1
    monkeypatch.setattr(evaluation._EvalTask, "compute", original)
    evs, summary = evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)
    got = [float(v) for v in evs[(100.0, 0)].values[:, 0].mean(axis=1)]
    m = ir_measures.parse_measure(files["MPcont"])
    assert summary.done == 2 and got == pytest.approx([ir_measures.calc_aggregate([m], QRELS, r)[m]
                                                         for r in RUNS.values()], abs=1e-12)


def test_a_file_swapped_and_back_during_a_task_stores_the_values_of_the_bytes_its_key_names(files, tmp_path,
                                                                                              monkeypatch):
    """X -> Y -> X while a task computes: its cells hold X's values (before: Y's, stored under X's key)."""
    pytest.importorskip("pyarrow")
    from irmeasures_markov.experiments import _grid as evaluation
    from irmeasures_markov.experiments import evaluate_grid
    from irmeasures_markov.grid import ParquetStore
    store = ParquetStore(tmp_path / "store")
    measures = {"TBG": "TBG(lengths='lengths.tsv',residual=True)",
                "MPcont": "MPcont(lengths='lengths.tsv',ties='expected',time='tbg')"}
    original = evaluation._scorer

    def scorer_during_a_swap(*args, **kwargs):
        scorer = original(*args, **kwargs)

        def score(run):
            rewrite_keeping_size_and_mtime(tmp_path / "lengths.tsv", LENGTHS_2)
            try:
                return scorer(run)
            finally:
                rewrite_keeping_size_and_mtime(tmp_path / "lengths.tsv", LENGTHS_1)
        return score
    monkeypatch.setattr(evaluation, "_scorer", scorer_during_a_swap)
    evs, summary = evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)
    monkeypatch.setattr(evaluation, "_scorer", original)
    assert summary.done == 2
    (tmp_path / "x.tsv").write_text(LENGTHS_1)
    fresh = [ir_measures.parse_measure(m.replace("lengths.tsv", str(tmp_path / "x.tsv"))) for m in measures.values()]
    expected = [ir_measures.calc_aggregate([m], QRELS, run)[m] for run in RUNS.values() for m in fresh]
    assert evs[(100.0, 0)].values[:, :2].mean(axis=2).ravel().tolist() == pytest.approx(expected, abs=1e-12)
    served, again = evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)  # from the store: X's values
    assert again.cached == 2 and served[(100.0, 0)].values.tolist() == evs[(100.0, 0)].values.tolist()


def test_pool_reduction_exits_2_naming_a_file_that_changed_during_the_grid(files, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyarrow")
    from irmeasures_markov.cli import main
    from irmeasures_markov.experiments import _grid as evaluation
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    runs = []
    for name, run in RUNS.items():
        runs.append(str(tmp_path / f"{name}.run"))
        with open(runs[-1], "w") as fh:
            fh.writelines(f"{q} Q0 {d} 1 {s} {name}\n" for q, docs in run.items() for d, s in docs.items())
    original = evaluation._EvalTask.compute

    def compute_after_a_rewrite(self, shared):
        if (tmp_path / "lengths.tsv").read_text() == LENGTHS_1:
            rewrite_keeping_size_and_mtime(tmp_path / "lengths.tsv", LENGTHS_2)
        return original(self, shared)
    monkeypatch.setattr(evaluation._EvalTask, "compute", compute_after_a_rewrite)
    code = main(["pool-reduction", str(qrels), *runs, "-m", "TBG(lengths='lengths.tsv',residual=True)",
                 "--percents", "50", "--no-progress", "--store", str(tmp_path / "store")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "lengths='lengths.tsv'" in err and "changed while the grid ran" in err and "internal error" not in err


def test_a_truncated_or_corrupt_store_part_is_recomputed_with_a_warning_naming_it(files, tmp_path):
    pytest.importorskip("pyarrow")
    from irmeasures_markov.experiments import evaluate_grid
    from irmeasures_markov.grid import ParquetStore
    store = ParquetStore(tmp_path / "store")
    measures = {"TBG": files["TBG"]}
    first, _ = evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)
    for damage in ("truncate", "garbage"):
        [part] = store.parts()
        data = part.read_bytes()
        part.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"not parquet at all" * 10)
        with pytest.warns(RuntimeWarning, match=part.name + ".*cannot be read.*computed again"):
            again, summary = evaluate_grid(measures, QRELS, RUNS, store=store, progress=False)
        assert (summary.done, summary.cached) == (2, 0)
        assert again[(100.0, 0)].values.tolist() == first[(100.0, 0)].values.tolist()
        with pytest.warns(RuntimeWarning, match=part.name):
            assert store.compact() == (2, 2)   # the readable part is kept, the damaged one left as it is
        part.unlink()


def test_grid_store_keys_hold_one_file_each_and_the_package_version(files, tmp_path, monkeypatch):
    from irmeasures_markov.grid import _cells as cells
    measures = [ir_measures.parse_measure(m) for m in files.values()]
    before = [cells.measures_key([m], ["q1", "q2"]) for m in measures]
    rewrite_keeping_size_and_mtime(tmp_path / "rates.tsv", RATES_2)  # one file: only its measure's key changes
    after = [cells.measures_key([m], ["q1", "q2"]) for m in measures]
    assert [a != b for a, b in zip(before, after)] == [False, True, False]
    cell = cells.Cell("evaluate", "c", "a", after[0])
    monkeypatch.setattr(cells, "__version__", "0.0.0-other")
    assert cells.Cell("evaluate", "c", "a", after[0]).key != cell.key


def test_registered_rates_lengths_kernels_and_fits_are_keyed_by_content_not_name():
    from irmeasures_markov.plugin import measure_fingerprint

    def fp(text):
        return measure_fingerprint(ir_measures.parse_measure(text))
    assert fp("AP") == "" and fp("MP") == "" and fp("TBG(default_length=5)") == ""
    register_rates("store_rates", [0.5, 0.25])
    a = fp("MPcont(rates='store_rates')")
    register_rates("store_rates", [0.5, 0.75])
    b = fp("MPcont(rates='store_rates')")
    register_rates("store_rates", [0.5, 0.25])
    assert a != b and fp("MPcont(rates='store_rates')") == a  # the content, not the registration, counts
    register_lengths("store_lengths", {"d1": 10.0})
    a = fp("TBG(lengths='store_lengths')")
    register_lengths("store_lengths", {"d1": 11.0})
    assert fp("TBG(lengths='store_lengths')") != a
    irmeasures_markov.register_kernel("STORE_K", np.ones((3, 3)) - np.eye(3))
    a = fp("MP(model='STORE_K')")
    irmeasures_markov.register_kernel("STORE_K", 2 * (np.ones((3, 3)) - np.eye(3)))
    assert fp("MP(model='STORE_K')") != a
    # a function's content cannot be read: each registration has a key of its own
    irmeasures_markov.register_kernel("STORE_F", lambda i, j: 1.0 / (abs(i - j) + 1.0))
    a = fp("MP(model='STORE_F')")
    irmeasures_markov.register_kernel("STORE_F", lambda i, j: 1.0 / (abs(i - j) + 1.0))
    assert fp("MP(model='STORE_F')") != a
    register_fitted("store_fit", mp_fit(1.0))
    a = fp("MP(model='fit:store_fit')")
    register_fitted("store_fit", mp_fit(2.0))
    b = fp("MP(model='fit:store_fit')")
    register_fitted("store_fit", mp_fit(1.0))
    assert a != b and fp("MP(model='fit:store_fit')") == a


# ---------------------------------------------------------------------------
# in-process file caches
# ---------------------------------------------------------------------------

def test_a_rewrite_keeping_size_and_mtime_is_read_by_every_file_cache(files, tmp_path):
    measures = [ir_measures.parse_measure(m) for m in files.values()]

    def means():
        return [ir_measures.calc_aggregate([m], QRELS, run)[m] for run in RUNS.values() for m in measures]
    first = means()
    assert first == pytest.approx(fresh_means(tmp_path, mp_fit(1.0), RATES_1, LENGTHS_1), abs=1e-12)
    rewrite_all(tmp_path)
    second = means()
    assert second == pytest.approx(fresh_means(tmp_path, mp_fit(3.0), RATES_2, LENGTHS_2), abs=1e-12)
    assert all(abs(a - b) > 1e-6 for a, b in zip(first, second))


def test_a_duplicates_file_rewritten_keeping_size_and_mtime_is_read_again(files, tmp_path):
    (tmp_path / "dups.tsv").write_text("d1\tg1\nd5\tg1\n")
    m = ir_measures.parse_measure("TBG(lengths='lengths.tsv',duplicates='dups.tsv')")
    fresh_path = tmp_path / "fresh-dups.tsv"

    def pair():
        fresh = ir_measures.parse_measure(f"TBG(lengths='lengths.tsv',duplicates='{fresh_path}')")
        return (ir_measures.calc_aggregate([m], QRELS, RUNS["a"])[m],
                ir_measures.calc_aggregate([fresh], QRELS, RUNS["a"])[fresh])
    fresh_path.write_text("d1\tg1\nd5\tg1\n")
    first, expected = pair()
    assert first == expected
    rewrite_keeping_size_and_mtime(tmp_path / "dups.tsv", "d2\tg1\nd3\tg1\n")
    fresh_path.unlink()
    fresh_path.write_text("d2\tg1\nd3\tg1\n")
    second, expected = pair()
    assert second == expected and second != first


def test_a_qrels_file_rewritten_keeping_size_and_mtime_is_read_again(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    m = ir_measures.parse_measure("MP")
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    qrels_cache.clear()
    assert PROVIDER.calc_aggregate([m], str(path), run)[m] == 1.0
    rewrite_keeping_size_and_mtime(path, "q1 0 d1 0\nq1 0 d2 1\n")
    assert PROVIDER.calc_aggregate([m], str(path), run)[m] == 0.5
    assert qrels_cache.cache_info().size == 0  # a path is never cached: it is read on every call


def test_content_cache_parses_each_content_once_and_never_serves_other_bytes(tmp_path):
    from irmeasures_markov.io._content import ContentCache, digest_bytes
    parsed = []

    def parse(path, content):
        parsed.append(content)
        return content.decode()
    cache = ContentCache(parse, maxsize=4)
    path = tmp_path / "f.txt"
    path.write_text("aaaa")
    d1, v1 = cache.get(path)
    assert cache.get(path) == (d1, "aaaa") and parsed == [b"aaaa"]  # read and hashed again, parsed once
    rewrite_keeping_size_and_mtime(path, "bbbb")
    d2, v2 = cache.get(path)
    assert (v2, parsed) == ("bbbb", [b"aaaa", b"bbbb"]) and d2 != d1
    assert d1 == digest_bytes(b"aaaa") and d2 == digest_bytes(b"bbbb")


# ---------------------------------------------------------------------------
# fit files: every field checked against the family's schema
# ---------------------------------------------------------------------------

def write_fit_file(path, family, model, params):
    fit = {"family": family, "model": model, "params": params}
    path.write_text(json.dumps({"format": registry.FIT_FORMAT, "version": registry.FIT_VERSION, "log": {},
                                "fits": [fit], "best": {family: 0}}))
    return str(path)


@pytest.mark.parametrize("family, params, field, allowed", [
    ("mp", {"connectivity": "GL", "states": "AD", "kernel": "FOO", "decay": 1.0}, "kernel",
     "'ID', 'LID', 'nonparametric'"),
    ("mp", {"connectivity": "ZZ", "states": "AD", "kernel": "ID", "decay": 1.0}, "connectivity", "'GL', 'LO'"),
    ("mp", {"connectivity": "GL", "states": "XX", "kernel": "ID", "decay": 1.0}, "states", "'AD', 'OR'"),
    ("mp", {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": 1.0, "colour": 1}, "colour",
     "connectivity, states, kernel, decay"),
    ("mp", {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": "1"}, "decay", "a number"),
    ("ph", {"browse": "ZZBM", "p": 0.5}, "browse", "'DFBM', 'SFBM', 'RWBM'"),
    ("ph", {"browse": "SFBM", "p": 1.5}, "p", "a probability in [0, 1]"),
    ("ph", {"browse": "SFBM", "p": 0.5, "x": 1}, "x", "browse, p, q"),
    ("carterette", {"dist": "ZIPF", "theta": 0.5}, "dist", "'RBP', "),
    ("carterette", {"dist": "RBP", "theta": 0.5, "extra": []}, "extra", "dist, theta"),
    ("tbg", {"pc_rel": 0.5, "halflife": -3.0}, "halflife", "a number > 0"),
    ("tbg", {"pc_rel": 0.5, "kernel": "ID"}, "kernel", "pc_rel, pc_nonrel, halflife"),
])
def test_fit_files_are_checked_against_their_family_schema(tmp_path, family, params, field, allowed):
    path = write_fit_file(tmp_path / "bad.json", family, "m", params)
    with pytest.raises(InputError) as e:
        load_fit(path)
    msg = str(e.value)
    assert path in msg and repr(field) in msg and allowed in msg, msg
    measure = {"mp": "MP(model='file:{}')", "ph": "PH(browse='file:{}')", "carterette": "M1(dist='file:{}')",
               "tbg": "TBG(user='file:{}',default_length=100)"}[family].format(path)
    with pytest.raises(ValueError) as e:  # through a measure: the same error, never another model's values
        ir_measures.calc_aggregate([ir_measures.parse_measure(measure)], QRELS, RUNS["a"])
    assert path in str(e.value) and repr(field) in str(e.value)


@pytest.mark.parametrize("change, message", [
    ({"colour": "red"}, r"bad\.json: fit 0 .*unknown field 'colour'; the fields of a fit are family, model, params"),
    ({"n_sessions": "many"}, r"bad\.json: fit 0 .*field 'n_sessions' is 'many'; it must be an integer >= 0"),
    ({"intervals": {"p": [0.1]}}, r"bad\.json: fit 0 .*field 'intervals' .*\[low, high\] pairs"),
    ({"model": 3}, r"bad\.json: fit 0 .*field 'model' is 3; it must be a string"),
])
def test_every_field_of_a_fit_is_checked(tmp_path, change, message):
    path = tmp_path / "bad.json"
    fit = {"family": "tbg", "model": "m", "params": {"pc_rel": 0.5}, **change}
    path.write_text(json.dumps({"format": registry.FIT_FORMAT, "version": registry.FIT_VERSION, "fits": [fit],
                                "best": {"tbg": 0}}))
    with pytest.raises(InputError, match=message):
        load_fit(path)


def test_unknown_fields_of_a_fit_file_are_named_with_the_known_ones(tmp_path):
    path = tmp_path / "bad.json"
    fit = {"family": "tbg", "model": "m", "params": {"pc_rel": 0.5}}
    path.write_text(json.dumps({"format": registry.FIT_FORMAT, "version": registry.FIT_VERSION, "fits": [fit],
                                "best": {"tbg": 0}, "bset": {}}))
    with pytest.raises(InputError, match=r"bad\.json: unknown field 'bset'; the fields of a fit file are format, "
                                         r"version, log, fits, best, notes"):
        load_fit(path)


def test_a_registered_fit_with_a_bad_kernel_is_refused_when_used():
    register_fitted("store_bad", mp_fit(1.0, kernel="FOO"))
    with pytest.raises(ValueError, match=r"field 'kernel' is 'FOO'; it must be one of 'ID', 'LID'"):
        ir_measures.calc_aggregate([ir_measures.parse_measure("MP(model='fit:store_bad')")], QRELS, RUNS["a"])


@pytest.mark.slow  # fits every model to the sample logs
def test_real_fit_files_pass_the_schema(tmp_path):
    from user_model_sim import simulate_mp, simulate_times

    from irmeasures_markov.calibration import fit

    log = simulate_times(simulate_mp(30, rng=np.random.default_rng(0)), rng=np.random.default_rng(1))
    qrels = {s.query_id: {d: 1 for d in s.shown[::2]} for s in log}
    for q in (None, qrels):
        report = fit(log, bootstrap=0, qrels=q)
        save_fit(tmp_path / "real.json", report)
        ff = load_fit(tmp_path / "real.json")  # every fit of the file checked
        # without qrels TBG has no click model (and this log no times model): every other family is there;
        # models whose likelihood is -inf whatever their parameters are reported, not stored
        assert len(ff.fits) + len(report.unfitted) > 20 and {"mp", "ph", "carterette"} <= set(ff.families)
        assert len(ff.fits) >= 15


# ---------------------------------------------------------------------------
# fit:NAME stays inside the fit directories
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../elsewhere/x", "ABS", "sub/x", "..\\elsewhere\\x"])
def test_fit_names_that_are_paths_are_refused(tmp_path, monkeypatch, name):
    fits_dir, elsewhere = tmp_path / "fits", tmp_path / "elsewhere"
    fits_dir.mkdir()
    elsewhere.mkdir()
    (fits_dir / "sub").mkdir()
    for d in (elsewhere, fits_dir / "sub"):
        save_fit(d / "x.json", mp_fit(1.0))  # the file exists: only the rule can refuse it
    monkeypatch.setenv(registry.FITS_ENV, str(fits_dir))
    if name == "ABS":
        name = str(elsewhere / "x")
    with pytest.raises(ValueError, match=r"plain word .*'file:PATH'"):
        irmeasures_markov.MP(model=f"fit:{name}").validate_params()
    save_fit(fits_dir / "ok.json", mp_fit(1.0))
    ir_measures.parse_measure("MP(model='fit:ok')").validate_params()  # a plain name is found there
