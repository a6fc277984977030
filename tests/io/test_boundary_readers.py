"""The file readers at the boundary (issue 13): the right value or an InputError naming the file and line.

One section per kind of input: byte-order marks, bytes that are not UTF-8, records wrapped over two
lines, grades outside int32, huge ranks in rate files, compressed and truncated files, standard input,
what error messages quote, and the length caches (concurrent writers, cache names, corrupt caches).
"""
import bz2
import gzip
import io
import lzma
import multiprocessing
import os
import sys
import time
import tracemalloc
import types

import ir_measures
import numpy as np
import pytest
from fake_ir_datasets import FakeDataset, FakeIrDatasets
from ir_datasets_home import seed_ir_datasets_home

# the line-by-line reference, to check the one run reader (read_run, io.read_trec_run) against it
from reference_readers import read_trec_run_lines as read_trec_run

import irmeasures_markov as imm
import irmeasures_markov.documents._lengths as lengths_module
from irmeasures_markov.documents import (
    DocumentLengths,
    LengthTable,
    UnknownLengthError,
    lengths_from_ir_datasets,
    read_duplicates,
    read_lengths,
)
from irmeasures_markov.io import InputError, load_run_dir, read_rates, read_run_columns, read_trec_qrels
from irmeasures_markov.io import _datasets as datasets
from irmeasures_markov.io import read_trec_run as read_run
from irmeasures_markov.io._datasets import load_qrels
from irmeasures_markov.io._run_columns import exact_dict
from irmeasures_markov.io._trec import qrels_of_file

BOM = b"\xef\xbb\xbf"
RUN = b"q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 1.0 t\nq2 Q0 a 1 1.0 t\n"
QRELS = b"q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 a 0\nq2 0 z 1\n"
#: MP(model='UNIFORM', recall=True) is AP: a measure computed by this package from the dicts
AP_LIKE = ir_measures.parse_measure("MP(model='UNIFORM',recall=True)")
COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def write(tmp_path, name, data: bytes, compression=None):
    p = tmp_path / name
    p.write_bytes(COMPRESS[compression](data) if compression else data)
    return p


def byte_exact_run(path):
    """The run as the package's evaluation reads it (ids that are not UTF-8 kept), as dicts."""
    return exact_dict(read_run_columns(path))


def both_readers(path, fast_reader=read_run):
    """The run as the line reader and the fast reader read it; they must agree, order included."""
    exact, fast = read_trec_run(path), fast_reader(path)
    assert exact == fast and list(exact) == list(fast)
    assert all(list(exact[q]) == list(fast[q]) for q in exact)
    return exact


def both_errors(path, match):
    with pytest.raises(InputError, match=match) as exact:
        read_trec_run(path)
    with pytest.raises(InputError) as fast:
        read_run(path)
    assert str(fast.value) == str(exact.value)
    return str(exact.value)


def value(qrels, run, measure=AP_LIKE):
    return imm.PROVIDER.calc_aggregate([measure], qrels, run)[measure]


# --------------------------------------------------------------------------- 1. byte-order mark

@pytest.mark.parametrize("compression", [None, "gz"])
def test_bom_is_stripped_from_runs_and_qrels(tmp_path, compression):
    run = both_readers(write(tmp_path, "run", BOM + RUN, compression))
    qrels = read_trec_qrels(write(tmp_path, "qrels", BOM + QRELS, compression))
    assert list(run) == ["q1", "q2"] and list(qrels) == ["q1", "q2"]
    clean = value(read_trec_qrels(write(tmp_path, "q0", QRELS)), read_trec_run(write(tmp_path, "r0", RUN)))
    assert value(qrels, run) == clean == pytest.approx((1 + 2 / 3) / 2 / 2)


def test_bom_is_stripped_from_rates_lengths_and_duplicates(tmp_path):
    np.testing.assert_array_equal(read_rates(write(tmp_path, "rates", BOM + b"1\t0.5\n2\t0.25\n")), [0.5, 0.25])
    assert read_lengths(write(tmp_path, "len", BOM + b"a\t10\nb\t3\n")) == {"a": 10.0, "b": 3.0}
    assert read_duplicates(write(tmp_path, "dup", BOM + b"a\tg\nb\tg\n")) == {"a": "g", "b": "g"}


def test_a_bom_elsewhere_than_the_start_is_part_of_the_id(tmp_path):
    run = both_readers(write(tmp_path, "run", RUN + b"q3 Q0 " + BOM + b"x 1 1 t\n"))
    assert list(run["q3"]) == ["\ufeffx"]


def test_utf16_files_are_refused_clearly(tmp_path):
    p = write(tmp_path, "run", "q1 Q0 a 1 1 t\n".encode("utf-16"))
    both_errors(p, r"run:1: .*UTF-16.*UTF-8")


# --------------------------------------------------------------------------- 2. bytes that are not UTF-8

def test_non_utf8_docids_match_byte_exactly(tmp_path):
    qrels = qrels_of_file(write(tmp_path, "qrels", b"q 0 d\xff 1\n"))
    for run_bytes in (b"q Q0 d\xfe 1 1.0 t\n", b"q Q0 d\xef\xbf\xbd 1 1.0 t\n"):  # another byte; U+FFFD itself
        run = both_readers(write(tmp_path, "run", run_bytes), byte_exact_run)
        assert value(qrels, run) == 0.0
    run = both_readers(write(tmp_path, "run", b"q Q0 d\xff 1 1.0 t\n"), byte_exact_run)
    assert value(qrels, run) == 1.0
    (docid,) = qrels["q"]
    assert docid.encode("utf-8", "surrogateescape") == b"d\xff"


def test_distinct_non_utf8_docids_are_no_duplicates(tmp_path):
    run = both_readers(write(tmp_path, "run", b"q Q0 d\xff 1 2.0 t\nq Q0 d\xfe 2 1.0 t\n"), byte_exact_run)
    assert [d.encode("utf-8", "surrogateescape") for d in run["q"]] == [b"d\xff", b"d\xfe"]
    both_errors(write(tmp_path, "dup", b"q Q0 d\xff 1 2.0 t\nq Q0 d\xff 2 1.0 t\n"), r"dup:2: .*twice")


def test_non_utf8_qids_and_lengths_match_byte_exactly(tmp_path):
    run = both_readers(write(tmp_path, "run", b"\xe9 Q0 a 1 1 t\n\xe8 Q0 a 1 1 t\n"), byte_exact_run)
    assert len(run) == 2
    lengths = read_lengths(write(tmp_path, "len", b"d\xff\t10\nd\xfe\t20\n"))
    assert len(lengths) == 2
    # 100 docids: a batch the vectorised docid table would answer, were the ids plain ASCII
    docids = list(run_docids := [f"x{i}" for i in range(98)]) + ["d\udcfe", "d\udcff"]
    table = LengthTable({**{d: float(i) for i, d in enumerate(run_docids)}, **lengths}, build_after=0)
    values, found = table.lookup(docids)
    assert found.all() and values[-2:].tolist() == [20.0, 10.0]
    got = DocumentLengths(table).lookup_segments([docids[:50], docids[50:]])
    assert got[-2:].tolist() == [20.0, 10.0]


def test_tbg_reads_non_utf8_lengths_files(tmp_path):
    long_first = write(tmp_path, "len1", b"d\xff\t100\nd\xfe\t1\n")
    short_first = write(tmp_path, "len2", b"d\xff\t1\nd\xfe\t100\n")
    run = byte_exact_run(write(tmp_path, "run", b"q Q0 d\xff 1 2.0 t\nq Q0 d\xfe 2 1.0 t\n"))
    qrels = qrels_of_file(write(tmp_path, "qrels", b"q 0 d\xfe 1\n"))
    slow, fast = (value(qrels, run, ir_measures.parse_measure(f"TBG(lengths='{p}')"))
                  for p in (long_first, short_first))
    assert 0 < slow < fast  # reading the long first document delays the relevant second one


# --------------------------------------------------------------------------- 4. one grammar for both run readers

WRAPPED = [
    b"q1 Q0 d1 1 3.0\r\nt\r\nq1 Q0 d2 2 2.0 t\r\n",          # CRLF
    b"q1 Q0 d1 1 3.0\nt\nq1 Q0 d2 2 2.0 t\n",                 # LF
    b"q1 Q0 d\xc3\xa9 1 3.0\r\nt\r\nq1 Q0 d2 2 2.0 t\r\n",    # non-ASCII: the split-based path
    b"q1 Q0 d\xff 1 3.0\r\nt\r\nq1 Q0 d2 2 2.0 t\r\n",        # not UTF-8
    b"q1 Q0 d\x00 1 3.0\nt\nq1 Q0 d2 2 2.0 t\n",              # NUL: the split-based path
    b"q" * 70 + b" Q0 d1 1 3.0\nt\n",                          # a long qid: the split-based path
    b"q1 Q0 d1 1\n3.0 t\nq1 Q0 d2\n2 2.0 t\n",
]


@pytest.mark.parametrize("data", WRAPPED)
def test_a_record_wrapped_over_two_lines_is_refused_by_every_reader(tmp_path, data):
    both_errors(write(tmp_path, "run", data), r"run:1: expected 6 fields")


def test_crlf_tabs_blank_lines_and_lone_cr_read_as_trec_eval_reads_them(tmp_path):
    clean = both_readers(write(tmp_path, "clean", RUN))
    messy = RUN.replace(b"\n", b"\r\n").replace(b" ", b" \t ") + b"\r\n \t\r\n"
    assert both_readers(write(tmp_path, "messy", b"\r\n" + messy)) == clean
    # a CR inside a line separates fields, as for trec_eval: it never ends a line
    assert both_readers(write(tmp_path, "cr", RUN.replace(b"Q0 ", b"Q0\r"))) == clean
    # other control bytes and non-ASCII spaces are part of the id, as in trec_eval
    odd = both_readers(write(tmp_path, "odd", b"q Q0 a\x1cb 1 1 t\nq Q0 a\xc2\xa0b 2 1 t\n"))
    assert list(odd["q"]) == ["a\x1cb", "a\xa0b"]


def test_a_file_with_only_cr_line_ends_is_refused_with_a_hint(tmp_path):
    msg = both_errors(write(tmp_path, "mac", RUN.replace(b"\n", b"\r")),
                      r"mac:1: expected 6 fields .*, found 24 fields")
    assert "CR" in msg


def test_scores_must_be_ascii_numbers_in_every_reader(tmp_path):
    both_errors(write(tmp_path, "run", "q Q0 a 1 \u0661 t\n".encode()), r"run:1: score '\u0661' is not a number")


# --------------------------------------------------------------------------- 5. grades outside int32

@pytest.mark.parametrize("grade", [b"4294967297", b"2147483648", b"-2147483649", b"9" * 30, b"-" + b"9" * 30])
def test_grades_outside_int32_are_refused_at_read_time(tmp_path, grade):
    p = write(tmp_path, "qrels", b"q 0 a 1\nq 0 b " + grade + b"\n")
    with pytest.raises(InputError, match=r"qrels:2: relevance grade .* 32-bit"):
        read_trec_qrels(p)


def test_grades_at_the_int32_limits_are_read(tmp_path):
    p = write(tmp_path, "qrels", b"q 0 a 2147483647\nq 0 b -2147483648\n")
    assert read_trec_qrels(p) == {"q": {"a": 2 ** 31 - 1, "b": -(2 ** 31)}}


@pytest.fixture
def fake_irds(monkeypatch, tmp_path):
    fake = FakeIrDatasets().install(monkeypatch)
    monkeypatch.setenv("IRMEASURES_MARKOV_CACHE", str(tmp_path / "cache"))
    lengths_module._irds_cached.cache_clear()
    yield fake
    lengths_module._irds_cached.cache_clear()


def test_ir_datasets_grades_outside_int32_are_refused(fake_irds):
    fake_irds.datasets["fake/q"] = FakeDataset(qrels=[("1", "a", 1), ("1", "b", 2 ** 32 + 1)])
    with pytest.raises(InputError, match=r"'fake/q'.*query '1', document 'b'.*4294967297.*32-bit"):
        load_qrels("fake/q")
    fake_irds.datasets["fake/big"] = FakeDataset(qrels=[("1", "a", 10 ** 30)])
    with pytest.raises(InputError, match="32-bit"):
        load_qrels("fake/big")
    fake_irds.datasets["fake/ok"] = FakeDataset(qrels=[("1", "a", 2 ** 31 - 1), ("1", "b", np.int64(-3))])
    assert load_qrels("fake/ok") == {"1": {"a": 2 ** 31 - 1, "b": -3}}


def test_ir_datasets_qrels_offline_is_a_clear_error(fake_irds):
    fake_irds.datasets["fake/off"] = FakeDataset(error=RuntimeError("All download sources failed\n" + "x" * 500))
    with pytest.raises(FileNotFoundError, match=r"cannot load the qrels of 'fake/off'.*path='\.\.\.'.*"
                                                r"All download sources failed") as e:
        load_qrels("fake/off")
    assert "x" * 300 not in str(e.value)
    with pytest.raises(ValueError, match="not an ir_datasets id"):
        load_qrels("fake/unknown")


# --------------------------------------------------------------------------- 14. rates: memory follows the file

def test_a_huge_rank_in_a_rates_file_costs_nothing(tmp_path):
    # 10**7 keeps a regression affordable (a set of every rank: about 0.6 GB), the peak check still catches it
    for data, where in [(b"1\t0.5\n10000000\t0.5\n", "rank 2"), (b"q 1 0.5\nq 3 0.5\nq 10000000 0.5\n",
                                                                 "rank 2 of query 'q'")]:
        p = write(tmp_path, "rates", data)
        tracemalloc.start()
        t = time.perf_counter()
        with pytest.raises(InputError, match=f"rates: no rate for {where}"):
            read_rates(p)
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < 1.0 and peak < 5_000_000


def test_rates_gaps_and_the_first_missing_rank(tmp_path):
    with pytest.raises(InputError, match="no rate for rank 1 "):
        read_rates(write(tmp_path, "rates", b"2 0.5\n3 0.5\n"))
    with pytest.raises(InputError, match="no rate for rank 3 "):
        read_rates(write(tmp_path, "rates", b"4 0.5\n1 0.5\n2 0.5\n"))
    np.testing.assert_array_equal(read_rates(write(tmp_path, "rates", b"2 0.2\n1 0.1\n")), [0.1, 0.2])


# --------------------------------------------------------------------------- 18. bz2, xz and standard input

@pytest.mark.parametrize("compression", ["gz", "bz2", "xz"])
def test_compressed_runs_and_qrels_are_recognised_by_content(tmp_path, compression):
    run = both_readers(write(tmp_path, "run.txt", RUN, compression))
    assert run == read_trec_run(write(tmp_path, "plain", RUN))
    assert read_trec_qrels(write(tmp_path, "qrels", QRELS, compression)) == read_trec_qrels(
        write(tmp_path, "plain_q", QRELS))
    assert read_lengths(write(tmp_path, "len", b"a\t1\n", compression)) == {"a": 1.0}


def fake_stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))


@pytest.mark.parametrize("compression", [None, "gz", "xz"])
@pytest.mark.parametrize("reader", [read_trec_run, read_run])
def test_dash_reads_a_run_from_standard_input(tmp_path, monkeypatch, compression, reader):
    fake_stdin(monkeypatch, COMPRESS[compression](BOM + RUN) if compression else BOM + RUN)
    assert reader("-") == read_trec_run(write(tmp_path, "plain", RUN))
    fake_stdin(monkeypatch, RUN + b"q3 Q0 a 1 x t\n")
    with pytest.raises(InputError, match=r"^<stdin>:5: score 'x' is not a number"):
        reader("-")


def test_dash_reads_qrels_from_standard_input(monkeypatch):
    fake_stdin(monkeypatch, gzip.compress(QRELS))
    assert read_trec_qrels("-")["q2"] == {"a": 0, "z": 1}


# --------------------------------------------------------------------------- 11. truncated compressed files

def truncated(data: bytes, compression: str) -> bytes:
    packed = COMPRESS[compression](data)
    return packed[: len(packed) * 2 // 3]


BIG_RUN = b"".join(b"q%d Q0 doc%05d %d %d.5 tag\n" % (i % 3, i, i, i) for i in range(3000))


@pytest.mark.parametrize("compression", ["gz", "bz2", "xz"])
def test_truncated_compressed_files_name_the_file_and_line(tmp_path, compression):
    p = write(tmp_path, f"input.cut.{compression}", truncated(BIG_RUN, compression))
    msg = both_errors(p, rf"input\.cut\.{compression}:\d+: not a valid \w+ file: the compressed data is truncated")
    assert len(msg) < 300
    q = write(tmp_path, "qrels.cut", truncated(b"".join(b"1 0 d%05d 1\n" % i for i in range(5000)), compression))
    with pytest.raises(InputError, match=r"qrels\.cut:\d+: not a valid"):
        read_trec_qrels(q)
    with pytest.raises(InputError, match=r"len\.cut:\d+: not a valid"):
        read_lengths(write(tmp_path, "len.cut", truncated(b"".join(b"d%05d\t3\n" % i for i in range(5000)),
                                                          compression)))


def test_truncated_files_in_a_run_directory_are_named_with_two_processes(tmp_path):
    for i in range(4):
        write(tmp_path, f"input.ok{i}.gz", RUN, "gz")
    write(tmp_path, "input.cut.gz", truncated(BIG_RUN, "gz"))
    for n_jobs in (1, 2):
        with pytest.raises(InputError, match=r"input\.cut\.gz:\d+: not a valid gzip file"):
            load_run_dir(tmp_path, progress=False, n_jobs=n_jobs)


# --------------------------------------------------------------------------- 17. short quotes in messages

LONG = b"root:x:0:0:root:/root:/bin/bash" + b"SECRET" * 40


QUOTE_CASES = [
    (read_trec_run, LONG + b"\n"),
    (read_run, LONG + b"\n"),
    (read_trec_run, b"q Q0 a 1 " + LONG + b" t\n"),
    (read_run, b"q Q0 " + LONG + b" 1 1 t\nq Q0 " + LONG + b" 1 1 t\n"),
    (read_trec_qrels, LONG + b"\n"),
    (read_trec_qrels, b"q 0 a " + LONG + b"\n"),
    (read_trec_qrels, b"q 0 " + LONG + b" 1\nq 0 " + LONG + b" 2\n"),
    (read_rates, LONG + b"\n"),
    (read_rates, b"1 " + LONG + b"\n"),
    (read_lengths, LONG + b"\n"),
    (read_lengths, b"a " + LONG + b"\n"),
    (read_duplicates, LONG + b"\n"),
    (read_duplicates, b"a x\n" + b"a " + LONG + b"\n"),
]


@pytest.mark.parametrize("reader, data", QUOTE_CASES, ids=[f"{r.__name__}-{i}" for i, (r, _) in enumerate(QUOTE_CASES)])
def test_error_messages_quote_a_short_prefix(tmp_path, reader, data):
    with pytest.raises(InputError) as e:
        reader(write(tmp_path, "bad", data))
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'bad'}:")
    assert "SECRET" * 3 not in msg and len(msg) < 250 + len(str(tmp_path))


def test_tbg_with_a_file_that_is_not_a_lengths_file(tmp_path):
    p = write(tmp_path, "passwd", LONG + b"\n")
    m = ir_measures.parse_measure(f"TBG(lengths='{p}')")
    with pytest.raises(InputError, match=r"passwd:1: expected 'docid<TAB>length'") as e:
        value({"q": {"a": 1}}, {"q": {"a": 1.0}}, m)
    assert "SECRET" * 3 not in str(e.value)


# --------------------------------------------------------------------------- 11. lengths: clear errors

def test_tbg_without_lengths_names_each_document_once_and_says_how(tmp_path):
    run = {f"q{i}": {"doc-a": 2.0, "doc-b": 1.0} for i in range(5)}
    with pytest.raises(UnknownLengthError) as e:
        value({"q0": {"doc-a": 1}}, run, imm.TBG)
    msg = str(e.value)
    assert msg.count("doc-a") == 1 and msg.count("doc-b") == 1
    assert "2 document(s)" in msg and "lengths=" in msg and "default_length" in msg
    assert isinstance(e.value, InputError) and isinstance(e.value, KeyError)


def test_tbg_with_an_unknown_irds_id_is_a_clear_error(fake_irds):
    m = ir_measures.parse_measure("TBG(lengths='irds:unknown/x')")
    with pytest.raises(InputError, match=r"'unknown/x' is not an ir_datasets id"):
        value({"q": {"a": 1}}, {"q": {"a": 1.0}}, m)


def test_irds_lengths_offline_is_a_clear_error(fake_irds):
    fake_irds.datasets["fake/off"] = FakeDataset(error=RuntimeError("All download sources failed"))
    with pytest.raises(FileNotFoundError, match=r"'fake/off'.*All download sources failed.*lengths="):
        lengths_from_ir_datasets("fake/off", progress=False)


# --------------------------------------------------------------------------- 16. length caches

DOCS = [(f"d{i}", " ".join(["w"] * i)) for i in range(30)]
WORDS = {d: float(i) for i, (d, _) in enumerate(DOCS)}


def test_cache_names_stay_inside_the_cache_directory(fake_irds, tmp_path):
    fake_irds.datasets["fake/x"] = FakeDataset(docs=DOCS)
    cache = tmp_path / "deep" / "cache"
    got = lengths_from_ir_datasets("fake/x", progress=False, text_fields=["title/../../../x"], cache_dir=cache)
    assert got == {d: 0.0 for d in WORDS}  # no such field: empty texts
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 1 and written[0].parent == cache
    assert "/" not in written[0].name[len("fake__x"):]
    # distinct fields, distinct files
    lengths_from_ir_datasets("fake/x", progress=False, text_fields=["title_..__x"], cache_dir=cache)
    assert len([p for p in cache.iterdir()]) == 2


@pytest.mark.parametrize("corrupt", [b"", b"garbage\x00\x01\x02 more garbage\n", b"\x1f\x8b\x08\x00garbage",
                                     "truncated"])
def test_a_corrupt_cache_is_rebuilt_with_a_warning(fake_irds, tmp_path, corrupt):
    fake_irds.datasets["fake/x"] = FakeDataset(docs=DOCS)
    cache = tmp_path / "c"
    path = cache / "fake__x.tsv.gz"
    lengths_from_ir_datasets("fake/x", progress=False, cache_dir=cache)
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2] if corrupt == "truncated" else corrupt)
    with pytest.warns(RuntimeWarning, match=r"length cache .*fake__x\.tsv\.gz cannot be read"):
        assert lengths_from_ir_datasets("fake/x", progress=False, cache_dir=cache) == WORDS
    assert read_lengths(path) == WORDS


def _build_cache(cache_dir, barrier, results):
    """Child process: count the fake collection's lengths, both children writing their cache at once."""
    real_replace = os.replace

    def replace_together(src, dst):
        barrier.wait(timeout=30)  # both children have written their temporary file: now rename
        return real_replace(src, dst)
    os.replace = replace_together
    try:
        got = lengths_from_ir_datasets("fake/x", progress=False, cache_dir=cache_dir)
        results.put(("ok", got == WORDS))
    except BaseException as e:  # reported to the parent, which fails the test
        results.put(("error", f"{type(e).__name__}: {e}"))


def test_two_processes_build_the_same_cache_at_once(fake_irds, tmp_path):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the fake ir_datasets reaches the children by fork")
    fake_irds.datasets["fake/x"] = FakeDataset(docs=DOCS)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_build_cache, args=(tmp_path / "c", barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert outcomes == [("ok", True), ("ok", True)]
    assert read_lengths(tmp_path / "c" / "fake__x.tsv.gz") == WORDS
    assert [p.name for p in (tmp_path / "c").iterdir()] == ["fake__x.tsv.gz"]  # no temporary file left


def test_seeding_ir_datasets_writes_atomically(tmp_path):
    data = tmp_path / "data"
    write(data / "qrels", "robust04.qrels.gz", QRELS, "gz") if (data / "qrels").mkdir(parents=True) is None else None
    home = seed_ir_datasets_home(tmp_path / "home", data, names=["robust04"])
    assert (home / "disks45" / "qrels.robust2004.txt").read_bytes() == QRELS
    assert not list(home.rglob("*.tmp"))


def test_a_truncated_topics_file_is_named(tmp_path):
    topics = b"".join(b"<top>\n<num> Number: %d\n<title> topic %d\n</top>\n" % (i, i) for i in range(2000))
    assert len(datasets.read_topics(write(tmp_path, "topics.bz2", topics, "bz2"))) == 2000
    with pytest.raises(InputError, match=r"topics\.cut: not a valid gzip file"):
        datasets.read_topics(write(tmp_path, "topics.cut", truncated(topics, "gz")))
