"""Property tests of the file readers: messy-but-valid files read as their clean version, malformed ones fail well.

Hypothesis draws runs and qrels (ids with non-ASCII and non-UTF-8 bytes, tied scores), writes them
clean (LF, single spaces) and messy (BOM, CRLF, tabs and runs of whitespace, blank lines, gzip, bzip2,
xz), and checks:

* every reader path agrees: ``io.read_trec_run`` and the line-by-line reference give the same dictionaries
  in the same order, and the clean and messy files give the same dictionaries and the same measure values;
* ids are byte-exact: each id encodes back (``surrogateescape``) to the bytes in the file;
* one defect put into a valid file (a wrong field count, a record wrapped over two lines, a bad
  score, a bad or out-of-range grade, a document twice, truncated compressed data) gives an
  ``InputError`` naming the file and the defect's line, the same from both run readers;
* the command line answers a malformed file with a non-zero code and no traceback.
"""
import bz2
import gzip
import lzma
import re

import ir_measures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# the line-by-line reference, to check the one run reader (read_run, io.read_trec_run) against it
from reference_readers import read_trec_run_lines as read_trec_run

import irmeasures_markov as imm
from irmeasures_markov import cli
from irmeasures_markov.io import InputError, read_run_columns, read_trec_qrels
from irmeasures_markov.io import read_trec_run as read_run
from irmeasures_markov.io._run_columns import exact_dict
from irmeasures_markov.io._trec import qrels_of_file

COMPRESS = {None: lambda b: b, "gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}
MEASURES = [ir_measures.parse_measure(m) for m in ("MP", "MP(model='UNIFORM',recall=True)", "MP@5")]
SETTINGS = dict(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])

#: ids as bytes: ASCII, UTF-8 and bytes that are not UTF-8 (all without ASCII whitespace)
QIDS = [b"1", b"2", b"10", b"q\xc3\xa9", b"q\xff"]
DOCIDS = [b"a", b"b", b"DOC-1", b"FT911-1", b"d\xc3\xa9", b"d\xfe", b"d\xff", b"d\xef\xbf\xbd", b"x" * 30]
SCORES = [b"1", b"2.5", b"2.5", b"-0", b"1e3", b"0.125", b"7"]   # repeats make ties likely


@st.composite
def collections(draw):
    """``(run_records, qrels_records)`` as byte tuples; unique (qid, docid) pairs in each."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(QIDS), st.sampled_from(DOCIDS)), min_size=1, max_size=25,
                          unique=True))
    run = [(q, d, draw(st.sampled_from(SCORES))) for q, d in pairs]
    judged = draw(st.lists(st.tuples(st.sampled_from(QIDS), st.sampled_from(DOCIDS)), min_size=1, max_size=25,
                           unique=True))
    qrels = [(q, d, str(draw(st.integers(-1, 3))).encode()) for q, d in judged]
    return run, qrels


@st.composite
def styles(draw):
    """How a file is written: separators, line ends, BOM, blank lines, compression."""
    return dict(
        sep=draw(st.lists(st.sampled_from([b" ", b"\t", b"  ", b" \t ", b"\t\t"]), min_size=1, max_size=3)),
        newline=draw(st.sampled_from([b"\n", b"\r\n"])),
        bom=draw(st.booleans()),
        blank=draw(st.sampled_from([0, 0, 1, 2])),
        trailing=draw(st.booleans()),
        compression=draw(st.sampled_from([None, None, "gz", "bz2", "xz"])),
    )


def run_lines(records):
    return [[q, b"Q0", d, str(i).encode(), s, b"tag"] for i, (q, d, s) in enumerate(records, 1)]


def qrels_lines(records):
    return [[q, b"0", d, g] for q, d, g in records]


def render(lines, style=None):
    """``(bytes, line numbers)``: the file and the line number of each record."""
    style = style or dict(sep=[b" "], newline=b"\n", bom=False, blank=0, trailing=False, compression=None)
    out, numbers, n = [], [], 0
    for i, fields in enumerate(lines):
        for _ in range(style["blank"] if i % 3 == 0 else 0):
            out.append(b" \t" if style["trailing"] else b"")
            n += 1
        sep = style["sep"][i % len(style["sep"])]
        out.append(sep.join(fields) + (sep if style["trailing"] else b""))
        n += 1
        numbers.append(n)
    data = style["newline"].join(out) + style["newline"]
    if style["bom"]:
        data = b"\xef\xbb\xbf" + data
    return COMPRESS[style["compression"]](data), numbers


def write(tmp_path_factory, data, name="file"):
    p = tmp_path_factory.mktemp("p") / name
    p.write_bytes(data)
    return p


def same_run(a, b):
    assert a == b and list(a) == list(b)
    assert all(list(a[q]) == list(b[q]) for q in a)


@pytest.mark.filterwarnings("ignore:.*no document with grade:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:the run and the qrels share no query:RuntimeWarning")  # random collections
@pytest.mark.filterwarnings("ignore::irmeasures_markov.io._normalise.OverlapWarning")  # random collections
@settings(**SETTINGS)
@given(collections(), styles(), styles())
def test_messy_valid_files_read_as_the_clean_version(tmp_path_factory, coll, run_style, qrels_style):
    run_records, qrels_records = coll
    clean_run = read_trec_run(write(tmp_path_factory, render(run_lines(run_records))[0]))
    clean_qrels = qrels_of_file(write(tmp_path_factory, render(qrels_lines(qrels_records))[0]))  # byte-exact
    messy_run_path = write(tmp_path_factory, render(run_lines(run_records), run_style)[0])
    messy_qrels_path = write(tmp_path_factory, render(qrels_lines(qrels_records), qrels_style)[0])
    messy_run = read_trec_run(messy_run_path)
    same_run(messy_run, clean_run)
    same_run(exact_dict(read_run_columns(messy_run_path)), clean_run)   # byte-exact
    messy_qrels = qrels_of_file(messy_qrels_path)
    same_run(messy_qrels, clean_qrels)
    # byte-exact ids
    assert {(q.encode("utf-8", "surrogateescape"), d.encode("utf-8", "surrogateescape"))
            for q, docs in messy_run.items() for d in docs} == {(q, d) for q, d, _ in run_records}
    assert sum(map(len, messy_qrels.values())) == len(qrels_records)
    # the same numbers
    assert imm.PROVIDER.calc_aggregate(MEASURES, messy_qrels, messy_run) == \
        imm.PROVIDER.calc_aggregate(MEASURES, clean_qrels, clean_run)


# --------------------------------------------------------------------------- malformed files

RUN_DEFECTS = ["few fields", "many fields", "wrapped", "bad score", "nan score", "non-ASCII score", "duplicate"]
QRELS_DEFECTS = ["few fields", "wrapped", "bad grade", "float grade", "grade over int32", "grade over int64",
                 "judged twice"]


def inject(lines, defect, at, qrels=False):
    """Put ``defect`` into record ``at``; returns the new lines and which record's line is at fault."""
    lines = [list(f) for f in lines]
    rec = lines[at]
    score = 3 if qrels else 4
    if defect == "few fields":
        del rec[-1]
    elif defect == "many fields":
        rec.append(b"extra")
    elif defect == "wrapped":   # the record goes on over the next line: the first half is at fault
        lines[at:at + 1] = [rec[:-1], rec[-1:]]
    elif defect == "bad score":
        rec[score] = b"x1"
    elif defect == "nan score":
        rec[score] = b"nan"
    elif defect == "non-ASCII score":
        rec[score] = "\u0661".encode()
    elif defect == "bad grade":
        rec[score] = b"high"
    elif defect == "float grade":
        rec[score] = b"1.0"
    elif defect == "grade over int32":
        rec[score] = b"4294967297"
    elif defect == "grade over int64":
        rec[score] = b"9" * 25
    elif defect in ("duplicate", "judged twice"):   # a copy of the record, after it: the copy is at fault
        copy = list(rec)
        if qrels:
            copy[3] = b"7"
        lines.insert(at + 1, copy)
        return lines, at + 1
    return lines, at


@settings(**SETTINGS)
@given(collections(), styles(), st.sampled_from(RUN_DEFECTS), st.data())
def test_a_malformed_run_names_the_file_and_line_in_every_reader(tmp_path_factory, coll, style, defect, data):
    records = run_lines(coll[0])
    at = data.draw(st.integers(0, len(records) - 1))
    lines, bad = inject(records, defect, at)
    content, numbers = render(lines, style)
    p = write(tmp_path_factory, content, "run.txt")
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:{numbers[bad]}: ") as exact:
        read_trec_run(p)
    with pytest.raises(InputError) as fast:
        read_run(p)
    assert str(fast.value) == str(exact.value)


@settings(**SETTINGS)
@given(collections(), styles(), st.sampled_from(QRELS_DEFECTS), st.data())
def test_a_malformed_qrels_file_names_the_file_and_line(tmp_path_factory, coll, style, defect, data):
    records = qrels_lines(coll[1])
    at = data.draw(st.integers(0, len(records) - 1))
    lines, bad = inject(records, defect, at, qrels=True)
    content, numbers = render(lines, style)
    p = write(tmp_path_factory, content, "qrels.txt")
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:{numbers[bad]}: "):
        read_trec_qrels(p)


BIG = [[b"q%d" % (i % 4), b"Q0", b"doc%05d" % i, b"%d" % i, b"%d.25" % (i % 50), b"tag"] for i in range(4000)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["gz", "bz2", "xz"]), st.floats(0.05, 0.95))
def test_truncated_compressed_runs_name_the_file(tmp_path_factory, compression, keep):
    content, _ = render(BIG, dict(sep=[b" "], newline=b"\n", bom=False, blank=0, trailing=False,
                                  compression=compression))
    p = write(tmp_path_factory, content[:max(10, int(len(content) * keep))], "input.cut")
    with pytest.raises(InputError, match=rf"^{re.escape(str(p))}:\d+: not a valid \w+ file") as exact:
        read_trec_run(p)
    with pytest.raises(InputError) as fast:
        read_run(p)
    assert str(fast.value) == str(exact.value)


# --------------------------------------------------------------------------- the command line

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from(RUN_DEFECTS + ["truncated"]), st.booleans(), st.data())
def test_the_cli_answers_malformed_files_without_a_traceback(tmp_path_factory, capsys, coll, defect, in_qrels, data):
    run_records, qrels_records = run_lines(coll[0]), qrels_lines(coll[1])
    in_qrels = in_qrels and defect != "truncated"
    if in_qrels:   # the run's defects make bad qrels too (the score column is the grade column there)
        qrels_records, _ = inject(qrels_records, defect, data.draw(st.integers(0, len(qrels_records) - 1)), True)
    elif defect != "truncated":
        run_records, _ = inject(run_records, defect, data.draw(st.integers(0, len(run_records) - 1)))
    run_bytes = render(run_records)[0]
    if defect == "truncated":
        run_bytes = gzip.compress(render(BIG)[0])[:2000]
    qrels_path = write(tmp_path_factory, render(qrels_records)[0], "qrels")
    run_path = write(tmp_path_factory, run_bytes, "run")
    capsys.readouterr()
    code = cli.main([str(qrels_path), str(run_path), "MP"])
    out, err = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out + err
    assert re.search(rf"{re.escape(str(qrels_path if in_qrels else run_path))}:\d+: ", err)
