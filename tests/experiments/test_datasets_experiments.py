"""datasets.py and experiments.py on synthetic collections (the real-data versions live in integration/)."""
import gzip
import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

# the line-by-line reference, to check the one run reader (read_run, io.read_trec_run) against it
from reference_readers import read_trec_run_lines as read_trec_run
from synthetic_collection import synthetic, write_run  # shared with the grid, grid-command and progress tests

import irmeasures_markov  # noqa: F401
from irmeasures_markov.experiments import (
    evaluate,
    kendall_tau,
    mp_paper_measures,
    pool_reduction,
    system_ranking,
    tau_table,
)
from irmeasures_markov.io import InputError, read_run_columns
from irmeasures_markov.io._datasets import binarize, collection, downsample_qrels, load_qrels, load_topics, read_topics
from irmeasures_markov.io._run_columns import exact_dict
from irmeasures_markov.io._run_files import complete_runs, list_run_files, load_run_dir, run_name
from irmeasures_markov.io._tokens import _parse_scores


def read_run(path):
    """The run as the package's evaluation reads it, as dicts: byte-exact, ids that are not UTF-8 kept (the public
    dict reader refuses them; tests/io/test_non_utf8_ids.py)."""
    return exact_dict(read_run_columns(path))

# --------------------------------------------------------------------------- datasets

def test_collections_and_errors(tmp_path):
    assert collection("robust05") is collection("trec14")
    assert collection("TREC8").ir_datasets_id == "disks45/nocr/trec8"
    with pytest.raises(ValueError, match="Unknown collection 'trec99'"):
        collection("trec99")
    with pytest.raises(ValueError, match="Unknown collection"):
        load_qrels("trec99")
    with pytest.raises(FileNotFoundError, match=r"ir_datasets has no id.*path="):
        load_qrels("trec10", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_qrels("trec8", data_dir=tmp_path, source="local")
    with pytest.raises(ValueError, match="`source`"):
        load_qrels("trec8", source="web")


def test_load_qrels_from_path_and_binary(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 3\n")
    assert load_qrels("trec10", path=p) == {"1": {"a": 2, "b": 0, "c": 1}, "2": {"a": 3}}
    assert load_qrels("trec10", path=p, binary=True) == {"1": {"a": 1, "b": 0, "c": 1}, "2": {"a": 1}}
    assert binarize({"1": {"a": 2, "b": 1}}, rel=2) == {"1": {"a": 1, "b": 0}}


def test_topics(tmp_path):
    p = tmp_path / "topics"
    p.write_text("<top>\n<num> Number: 401\n<title> foreign minorities, Germany\n<desc> x\n</top>\n"
                 "<top>\n<num> Number: 999\n<title> outside\n</top>\n")
    assert read_topics(p) == {"401": "foreign minorities, Germany", "999": "outside"}
    assert load_topics("trec8", path=p) == {"401": "foreign minorities, Germany"}
    bad = tmp_path / "bad"
    bad.write_text("nothing here")
    with pytest.raises(InputError, match="no <top> blocks"):
        read_topics(bad)


class _Offline:
    """An ir_datasets dataset whose every download fails the way requests reports it (long, multi-line)."""
    error = ConnectionError("HTTPSConnectionPool(host='trec.nist.gov', port=443): Max retries exceeded\n"
                            + "Caused by NewConnectionError: " + "x" * 500)

    def has_qrels(self):
        return True

    def qrels_iter(self):
        raise self.error

    def queries_iter(self):
        raise self.error


def _offline(monkeypatch, fail_on_load=False):
    ir_datasets = pytest.importorskip("ir_datasets")

    def load(dataset_id):
        if fail_on_load:
            raise _Offline.error
        return _Offline()
    monkeypatch.setattr(ir_datasets, "load", load)


def _check_advice_first(exc, path_named):
    msg = str(exc)
    assert path_named in msg
    assert "$(" not in msg  # a shell command substitution is no path anyone can use
    assert "path='...'" in msg
    assert msg.index("path='...'") < msg.index(path_named) < msg.index("ConnectionError")
    assert "Caused by" not in msg and "x" * 300 not in msg  # the nested text is cut to its first line
    assert exc.__cause__ is _Offline.error


def _without_shared_data(monkeypatch):
    import irmeasures_markov.testing
    monkeypatch.setattr(irmeasures_markov.testing, "shared_data_dir", lambda: None)


@pytest.mark.parametrize("fail_on_load", [False, True])
def test_qrels_download_failure_names_the_file_to_supply(tmp_path, monkeypatch, fail_on_load):
    _offline(monkeypatch, fail_on_load)
    for source in ("ir_datasets", "auto"):  # auto: nothing in the data directory, so ir_datasets is asked
        with pytest.raises(FileNotFoundError, match=r"^cannot load the qrels of trec8") as e:
            load_qrels("trec8", data_dir=tmp_path, source=source)
        _check_advice_first(e.value, str(tmp_path / "qrels" / "trec8.qrels.gz"))
        assert "qrels.trec8.adhoc.parts1-5.tar.gz" in str(e.value)
    _without_shared_data(monkeypatch)
    with pytest.raises(FileNotFoundError) as e:
        load_qrels("trec8")
    _check_advice_first(e.value, "$IRMEASURES_MARKOV_DATA/qrels/trec8.qrels.gz")
    assert "data_dir=" in str(e.value)


@pytest.mark.parametrize("fail_on_load", [False, True])
def test_topics_download_failure_names_the_file_to_supply(tmp_path, monkeypatch, fail_on_load):
    _offline(monkeypatch, fail_on_load)
    with pytest.raises(FileNotFoundError, match=r"^cannot load the topics of trec14") as e:
        load_topics("trec14", data_dir=tmp_path, source="ir_datasets")
    _check_advice_first(e.value, str(tmp_path / "topics" / "robust05.topics"))
    assert "05.50.topics.txt" in str(e.value)
    _without_shared_data(monkeypatch)
    with pytest.raises(FileNotFoundError) as e:
        load_topics("trec8")
    _check_advice_first(e.value, "$IRMEASURES_MARKOV_DATA/topics/trec8.topics")
    with pytest.raises(FileNotFoundError, match=r"trec10.*no id.*path='\.\.\.'.*topics\.501-550"):
        load_topics("trec10", data_dir=tmp_path)
    with pytest.raises(ValueError, match="`source`"):
        load_topics("trec8", source="web")


def test_fast_reader_equals_exact_reader(tmp_path):
    _, runs = synthetic()
    rng = np.random.default_rng(1)
    for i, (name, run) in enumerate(runs.items()):
        p = write_run(tmp_path / (f"input.{name}" + (".gz" if i % 2 else "")), run, shuffle=rng if i % 3 == 0 else None,
                      gz=bool(i % 2))
        fast, exact = read_run(p), read_trec_run(p)
        assert fast == exact
        assert list(fast) == list(exact)
        for q in fast:
            assert list(fast[q]) == list(exact[q])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "2", "10", "3"]), st.integers(0, 30),
                          st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=80, unique_by=lambda t: t[:2]))
def test_fast_reader_any_order(tmp_path_factory, records):
    p = tmp_path_factory.mktemp("r") / "run"
    p.write_text("".join(f"{q} Q0 d{d} 0 {s!r} t\n" for q, d, s in records))
    fast, exact = read_run(p), read_trec_run(p)
    assert fast == exact and list(fast) == list(exact)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False),
                          st.sampled_from(["{!r}", "{:.17g}", "{:.6f}", "{:e}", "{:+.3E}", "{:.0f}", "{:g}"])),
                min_size=1, max_size=50),
       st.sampled_from(["", "5.", ".5", "1_000.5", "0x1p3", "1e400", "-0"]))
def test_score_parser_reads_exactly_what_float_reads(numbers, odd):
    tokens = [fmt.format(x) for x, fmt in numbers] + ([odd] if odd else [])
    try:
        expected = np.array([float(t) for t in tokens])
    except ValueError:
        assert _parse_scores("\n".join(tokens), len(tokens)) is None
        return
    got = _parse_scores("\n".join(tokens), len(tokens))
    assert got.tobytes() == expected.tobytes()   # bit for bit, signed zeros and infinities included


@st.composite
def messy_run_text(draw):
    """Run files with irregular whitespace, blank lines, split queries and some malformed lines.

    Not "plain": CR, CRLF, a BOM, non-ASCII and non-UTF-8 (surrogate-escaped) ids, NUL bytes.
    """
    plain = draw(st.sampled_from([True, True, True, False]))   # most files take the vectorised path
    sep = st.sampled_from([" ", "  ", "\t", " \t "] + ([] if plain else ["\r", " \x0b", "\x0c"]))
    qid = st.sampled_from(["1", "2", "10"] + ([] if plain else ["q" * 70, "é3", "\udcff", "q\x00"]))
    docid = st.sampled_from(["a", "b", "DOC-1", "x" * 20, "FT911-1"]
                            + ([] if plain else ["dé", "d\udcfe", "d\udcff", "d\xa0e", "d\x1c", "\ufeffa"]))
    score = st.one_of(st.floats(-1e6, 1e6, allow_nan=False).map(repr), st.sampled_from(["1e3", "-0", "1_0", "7"]))
    # one tag for the whole file (as in real runs) or mixed tags
    tag = st.sampled_from(["tag", "0"]) if draw(st.booleans()) else st.just(draw(st.sampled_from(["tag", "0"])))
    lines = []
    for _ in range(draw(st.integers(0, 25))):
        # numeric tags and extra fields let a shifted record still parse: only the line check catches it
        fields = [draw(qid), "Q0", draw(docid), str(draw(st.integers(0, 9))), draw(score),
                  draw(tag)]
        n_fields = draw(st.sampled_from([6, 6, 6, 6, 6, 6, 6, 6, 5, 7, 0, "wrapped"]))
        if n_fields == "wrapped":  # one record over two lines: both readers must refuse it
            cut = draw(st.integers(1, 5))
            lines.append(draw(sep).join(fields[:cut]))
            fields = fields[cut:]
        else:
            fields = (fields + [draw(st.sampled_from(["extra", "3"]))])[:n_fields]
        lines.append(draw(sep).join(fields) + draw(sep) * draw(st.integers(0, 1)))
    newline = "\n" if plain else draw(st.sampled_from(["\n", "\r\n", "\r\n", "\r"]))
    bom = "" if plain else draw(st.sampled_from(["", "\ufeff"]))
    return bom + newline.join(lines) + draw(st.sampled_from([newline, ""]))


@settings(max_examples=300, deadline=None)
@given(messy_run_text())
def test_fast_reader_equals_exact_reader_on_messy_files(tmp_path_factory, text):
    """The vectorised tokeniser gives the line reader's dictionaries, or its exact error."""
    p = tmp_path_factory.mktemp("r") / "run"
    p.write_bytes(text.encode("utf-8", "surrogateescape"))
    try:
        exact = read_trec_run(p)
    except InputError as e:
        with pytest.raises(InputError) as got:
            read_run(p)
        assert str(got.value) == str(e)
        return
    fast = read_run(p)
    assert fast == exact and list(fast) == list(exact)
    assert all(list(fast[q]) == list(exact[q]) for q in fast)


@pytest.mark.parametrize("text, message", [
    ("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4\n", r"run:2"),
    ("1 Q0 a 1 0.5 t\n1 Q0 b 2 zero t\n", r"run:2"),
    ("1 Q0 a 1 0.5 t\n1 Q0 b 2 nan t\n", r"run:2"),
    ("1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n", r"run:2.*(duplicate|twice)"),
])
def test_fast_reader_reports_exact_errors(tmp_path, text, message):
    p = tmp_path / "run"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        read_run(p)


def test_load_run_dir(tmp_path):
    qrels, runs = synthetic(n_runs=6)
    incomplete = {q: d for q, d in runs["run5"].items() if q != "402"}
    for name, run in runs.items():
        write_run(tmp_path / f"input.{name}.gz", incomplete if name == "run5" else run, gz=True)
    (tmp_path / "README").write_text("not a run")
    assert [run_name(f) for f in list_run_files(tmp_path)] == [f"run{i}" for i in range(6)]
    for n_jobs in (1, 2):
        loaded = load_run_dir(tmp_path, progress=False, n_jobs=n_jobs)
        assert list(loaded) == [f"run{i}" for i in range(6)]
        assert loaded["run0"] == runs["run0"] and loaded["run5"] == incomplete
    with pytest.warns(RuntimeWarning, match="dropped: run5"):
        kept = load_run_dir(tmp_path, topics=list(qrels), progress=False, n_jobs=1)
    assert list(kept) == [f"run{i}" for i in range(5)]
    assert complete_runs(runs, list(qrels))[1] == []
    with pytest.raises(ValueError, match="n_jobs"):
        load_run_dir(tmp_path, n_jobs=0)


def test_downsample_protocol():
    qrels = {str(q): {f"d{i}": int(i < 5 + q) for i in range(40 + 7 * q)} for q in range(6)}
    pools = {p: downsample_qrels(qrels, p, seed=4) for p in (100, 90, 50, 10)}
    assert pools[100] == {q: dict(sorted(d.items())) for q, d in qrels.items()}
    assert downsample_qrels(dict(reversed(list(qrels.items()))), 50, seed=4) == pools[50]
    assert downsample_qrels(qrels, 50, seed=5) != pools[50]
    for q, docs in qrels.items():
        n_rel = sum(docs.values())
        n_non = len(docs) - n_rel
        for p in (90, 50, 10):
            kept = pools[p][q]
            r = sum(kept.values())
            assert r == min(n_rel, max(1, math.floor(n_rel * p / 100 + 0.5)))
            assert len(kept) - r == min(n_non, max(10, math.floor(n_non * p / 100 + 0.5)))
            assert all(kept[d] == docs[d] for d in kept)
        assert set(pools[10][q]) <= set(pools[50][q]) <= set(pools[90][q])
    for bad in (0, 101, -5, True, "50"):
        with pytest.raises(ValueError, match="percent"):
            downsample_qrels(qrels, bad)


# --------------------------------------------------------------------------- experiments

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=30))
def test_kendall_tau_b_equals_scipy(pairs):
    x, y = np.array(pairs, float).T
    expected = scipy.stats.kendalltau(x, y).statistic
    got = kendall_tau(x, y)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_evaluate_matches_ir_measures():
    """Our float64 AP/P@k/Rprec/bpref/RBP and the plug-in measures equal ir_measures on float64-safe scores."""
    qrels, runs = synthetic(seed=3)
    measures = ["AP", "P@10", "Rprec", "Bpref", "nDCG@10", "MP", "MP(model='LO_OR_LID',recall=True)"]
    for n_jobs in (1, 2):
        ev = evaluate(measures, qrels, runs, progress=False, n_jobs=n_jobs)
        assert ev.values.shape == (len(runs), len(measures), len(qrels))
        for i, (name, run) in enumerate(runs.items()):
            for j, m in enumerate(ev.measures):
                per_q = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels, run)}
                np.testing.assert_allclose(ev.values[i, j], [per_q.get(q, 0.0) for q in ev.topics], atol=1e-12,
                                           err_msg=f"{name} {m}")
    direct = evaluate(measures, qrels, runs, progress=False, native=False)
    np.testing.assert_allclose(direct.values, ev.values, atol=1e-6)  # pytrec_eval holds scores as float32


def test_evaluate_rbp_matches_cwl_eval_without_ties():
    """ir_measures computes RBP with cwl-eval, which breaks score ties in its own order, so compare untied runs."""
    qrels, runs = synthetic(seed=4, ties=False)
    ev = evaluate(["RBP(p=0.8,rel=1)", "RBP(p=0.5,rel=2)"], qrels, runs, progress=False)
    for i, run in enumerate(runs.values()):
        for j, m in enumerate(ev.measures):
            per_q = {r.query_id: r.value for r in ir_measures.iter_calc([m], qrels, run)}
            np.testing.assert_allclose(ev.values[i, j], [per_q.get(q, 0.0) for q in ev.topics], atol=1e-12)


def test_evaluate_missing_topic_scores_zero_and_validation():
    qrels, runs = synthetic(seed=5, n_runs=3)
    runs["run1"] = {q: d for q, d in runs["run1"].items() if q != "401"}
    ev = evaluate({"ap": "AP", "mp": "MP"}, qrels, runs, progress=False)
    assert ev.labels == ["ap", "mp"]
    k = ev.topics.index("401")
    assert ev.values[1, :, k].tolist() == [0.0, 0.0]
    assert ev.to_frame().shape[0] == len(runs)
    with pytest.raises(ValueError, match="twice"):
        evaluate(["AP", "AP"], qrels, runs, progress=False)
    with pytest.raises(ValueError, match="empty"):
        evaluate(["AP"], qrels, {}, progress=False)
    with pytest.raises(ValueError, match="labels"):
        evaluate(["AP"], qrels, runs, labels=["a", "b"], progress=False)


def test_tau_table_and_ranking():
    qrels, runs = synthetic(seed=7, n_runs=10)
    ev = evaluate(mp_paper_measures(), qrels, runs, progress=False)
    assert len(ev.measures) == 21
    table, rows, cols = tau_table(ev, rows=["AP", "MP GL_AD_ID"], cols=["AP", "P@10"])
    assert rows == ["AP", "MP GL_AD_ID"] and cols == ["AP", "P@10"]
    assert table[0, 0] == pytest.approx(1.0)
    means = ev.means_array()
    j_ap, j_p10 = ev.labels.index("AP"), ev.labels.index("P@10")
    assert table[0, 1] == pytest.approx(scipy.stats.kendalltau(means[:, j_ap], means[:, j_p10]).statistic)
    ranking = system_ranking(ev, "AP")
    assert sorted(ranking) == sorted(runs)
    order = [ev.runs.index(r) for r in ranking]
    assert np.all(np.diff(means[order, j_ap]) <= 0)


def test_pool_reduction_synthetic():
    qrels, runs = synthetic(seed=11, n_runs=6, n_docs=80)
    res = pool_reduction({"AP": "AP", "bpref": "Bpref", "MP": "MP"}, qrels, runs, percents=(50, 10), seed=2,
                         progress=False)
    assert res.percents == [100.0, 50.0, 10.0]
    np.testing.assert_allclose(res.tau[0], 1.0)
    full = evaluate(["AP"], qrels, runs, progress=False)
    assert res.mean_scores[0, 0] == pytest.approx(full.means_array().mean())
    reduced = evaluate(["AP"], downsample_qrels(qrels, 10, seed=2), runs, topics=full.topics, progress=False)
    assert res.mean_scores[2, 0] == pytest.approx(reduced.means_array().mean())
    assert kendall_tau(full.means_array()[:, 0], reduced.means_array()[:, 0]) == pytest.approx(res.tau[2, 0])
    mean, tau = res.to_frames()
    assert list(mean.columns) == ["AP", "bpref", "MP"]


def test_pool_reduction_labels_its_numbers():
    qrels, runs = synthetic(seed=11, n_runs=3, n_docs=80)
    res = pool_reduction(["AP", "P@5"], qrels, runs, percents=(50,), progress=False)
    means, taus = res.means(), res.taus()
    assert (means.index.name, means.columns.name) == ("percent", "measure") == (taus.index.name, taus.columns.name)
    assert list(means.index) == [100.0, 50.0] and list(means.columns) == ["AP", "P@5"]
    np.testing.assert_array_equal(means.to_numpy(), res.mean_scores)  # the arrays stay, with the same numbers
    np.testing.assert_array_equal(taus.to_numpy(), res.tau)
    assert taus.loc[100.0, "AP"] == 1.0
    per_run = res.run_means()
    assert per_run.index.names == ["percent", "run"] and list(per_run.loc[50.0].index) == list(runs)
    assert per_run.loc[(50.0, "run1"), "P@5"] == res.evaluations[1].means().loc["run1", "P@5"]
    np.testing.assert_allclose(per_run.groupby(level="percent", sort=False).mean().to_numpy(), res.mean_scores,
                               rtol=1e-15)
    for frame, labelled in zip(res.to_frames(), (means, taus)):
        pd.testing.assert_frame_equal(frame, labelled)


def test_pool_reduction_reuses_full_only_when_it_matches():
    qrels, runs = synthetic(seed=5, n_runs=6, n_docs=80)
    measures = {"AP": "AP", "MP": "MP"}
    full = evaluate(measures, qrels, runs, progress=False)
    res = pool_reduction(measures, qrels, runs, percents=(30,), seed=4, full=full, progress=False)
    fresh = pool_reduction(measures, qrels, runs, percents=(30,), seed=4, progress=False)
    assert res.evaluations[0] is full
    np.testing.assert_array_equal(res.tau, fresh.tau)
    np.testing.assert_array_equal(res.mean_scores, fresh.mean_scores)
    with pytest.raises(ValueError, match="other measures"):
        pool_reduction({"AP": "AP", "bpref": "Bpref"}, qrels, runs, percents=(30,), full=full, progress=False)
    with pytest.raises(ValueError, match="other measures"):
        pool_reduction({"MP": "MP", "AP": "AP"}, qrels, runs, percents=(30,), full=full, progress=False)
    with pytest.raises(ValueError, match="labels"):
        pool_reduction({"map": "AP", "MP": "MP"}, qrels, runs, percents=(30,), full=full, progress=False)
    subset = {n: runs[n] for n in list(runs)[:4]}
    with pytest.raises(ValueError, match=r"other runs \(not in `runs`"):
        pool_reduction(measures, qrels, subset, percents=(30,), full=full, progress=False)
    reordered = dict(reversed(list(runs.items())))
    with pytest.raises(ValueError, match="other order"):
        pool_reduction(measures, qrels, reordered, percents=(30,), full=full, progress=False)
    other_qrels = {str(int(q) + 100): docs for q, docs in qrels.items()}
    with pytest.raises(ValueError, match="other qrels"):
        pool_reduction(measures, other_qrels, runs, percents=(30,), full=full, progress=False)
    with pytest.raises(TypeError, match="Evaluation"):
        pool_reduction(measures, qrels, runs, percents=(30,), full=full.means(), progress=False)


def test_fast_reader_corrupt_gzip(tmp_path):
    p = tmp_path / "input.bad.gz"
    p.write_bytes(gzip.compress(b"1 Q0 a 1 0.5 t\n")[:-6])
    with pytest.raises(InputError, match="not a valid gzip file"):
        read_run(p)
