"""Readers and writers of interaction logs (irmeasures_markov.calibration.readers)."""
import bz2
import collections
import gzip
import io
import lzma
import math
import sys
from datetime import datetime, timedelta

import numpy as np
import pytest

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration import ClickLog
from irmeasures_markov.calibration.readers import (
    from_dataframe,
    from_ir_datasets,
    make_session,
    read_log,
    read_wscd,
    to_dataframe,
    write_log,
)
from irmeasures_markov.testing import shared_data_dir

# ---------------------------------------------------------------------------
# FIXTURES
# ---------------------------------------------------------------------------

WSCD = ("q1\td1,d2,d3 : d2 , d1; q1\td1,d2,d3 :; q1\td1,d2,d3 : d2 , d1;\n"
        "q2\t d4 ,d5,d6:d6;  \n")


def sample_log():
    return ClickLog([
        make_session("q1", ("a", "b", "c"), [2, 1, 2], times=[1.5, 4.0, 9.25], dwell=[2.0, math.nan, 30.0],
                     ended=True, session_id="s1"),
        make_session("q1", ("a", "b", "c"), [], session_id="s2"),
        make_session("q2", ("x", "y"), [2], ended=False, session_id="s3"),
        make_session("q2", ("x", "y"), [1, 2], times=[0.0, 0.1], session_id="s4"),
    ], description="a hand-made log", source="tests", meta={"note": "synthetic"})


def same_sessions(a: ClickLog, b: ClickLog):
    assert len(a) == len(b)
    for s, t in zip(a, b):
        assert (s.query_id, s.shown, s.session_id, s.ended) == (t.query_id, t.shown, t.session_id, t.ended)
        np.testing.assert_array_equal(s.clicks, t.clicks)
        for x, y in ((s.times, t.times), (s.dwell, t.dwell)):
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_array_equal(x, y)  # NaN == NaN for assert_array_equal


# ---------------------------------------------------------------------------
# WSCD
# ---------------------------------------------------------------------------

class TestReadWscd:
    def test_sessions(self, tmp_path):
        p = tmp_path / "log.txt"
        p.write_text(WSCD)
        log = read_wscd(p)
        assert len(log) == 4
        assert [s.query_id for s in log] == ["q1", "q1", "q1", "q2"]
        assert log[0].shown == ("d1", "d2", "d3") and log[3].shown == ("d4", "d5", "d6")
        assert [s.clicks.tolist() for s in log] == [[2, 1], [], [2, 1], [3]]
        assert [s.session_id for s in log] == ["1", "2", "3", "4"]
        assert log[0].times is None and log[0].ended is None
        assert log.meta["dropped_clicks"] == 0 and str(p) in log.description

    def test_clicks_on_unshown_documents(self, tmp_path):
        p = tmp_path / "log.txt"
        p.write_text("q1\td1,d2 : d9 , d2\nq2\td3 : d3\n")
        log = read_wscd(p)
        assert log[0].clicks.tolist() == [2] and log.meta["dropped_clicks"] == 1
        with pytest.raises(InputError, match=r"log.txt:1: session 1: click on document 'd9', which is not in"):
            read_wscd(p, unshown="error")

    @pytest.mark.parametrize("text, message", [
        ("q1\td1,d2 d2\n", "found no ':'"),
        ("q1 : d1\n", "a query id, then the comma-separated documents"),
        ("q1\td1,,d2 : d1\n", "comma-separated ids"),
        ("q1\td1,d2 : d1\nq1\td1,d2 : d1 d2\n", r":2: session 1: the clicked documents"),
    ])
    def test_malformed(self, tmp_path, text, message):
        p = tmp_path / "bad.txt"
        p.write_text(text)
        with pytest.raises(InputError, match=message):
            read_wscd(p)

    def test_input_validation(self, tmp_path):
        p = tmp_path / "log.txt"
        p.write_text(WSCD)
        with pytest.raises(ValueError, match="`unshown` must be one of"):
            read_wscd(p, unshown="skip")

    @pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"), (lzma.open, ".xz")])
    def test_compressed(self, tmp_path, opener, suffix):
        plain = tmp_path / "log.txt"
        plain.write_text(WSCD)
        packed = tmp_path / ("log.data" + suffix)
        with opener(packed, "wt") as fh:
            fh.write(WSCD)
        same_sessions(read_wscd(plain), read_wscd(packed))

    def test_stdin(self, tmp_path, monkeypatch):
        plain = tmp_path / "log.txt"
        plain.write_text(WSCD)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(WSCD.encode())))
        log = read_wscd("-")
        same_sessions(read_wscd(plain), log)
        assert "<stdin>" in log.description


@pytest.mark.skipif(shared_data_dir() is None or not (shared_data_dir() / "logs").is_dir(),
                    reason="shared data (../shared/data/logs) not available")
class TestYandexSample:
    """The README of the sample gives its counts: 35,064 / 21,413 sessions, 50,321 / 35,853 clicks."""

    @pytest.mark.parametrize("name, n_sessions, n_clicks, dropped", [
        ("train.txt", 35064, 50321, 417), ("test.txt", 21413, 35853, 276)])
    def test_counts(self, name, n_sessions, n_clicks, dropped):
        log = read_wscd(shared_data_dir() / "logs" / "yandex-wscd2012-sample" / name)
        assert len(log) == n_sessions
        assert sum(s.n_clicks for s in log) + log.meta["dropped_clicks"] == n_clicks
        assert log.meta["dropped_clicks"] == dropped
        assert len(log.query_ids()) == 20
        assert {s.n_shown for s in log} == {10}
        # the first session of the file, read by eye
        s = log[0]
        assert s.query_id == "98435_1" and s.shown[:2] == ("232429", "688835")
        if name == "train.txt":
            assert s.clicked_documents == ["688835", "232429", "16704940"]


# ---------------------------------------------------------------------------
# Our formats
# ---------------------------------------------------------------------------

class TestRoundTrip:
    @pytest.mark.parametrize("fmt", ["jsonl", "tsv"])
    @pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
    def test_write_read(self, tmp_path, fmt, suffix):
        log = sample_log()
        p = tmp_path / f"log.{fmt}{suffix}"
        write_log(log, p)
        back = read_log(p, format=fmt)
        same_sessions(log, back)
        if fmt == "jsonl":
            assert back.description == log.description and back.source == "tests"
            assert back.meta["note"] == "synthetic"

    def test_stdout(self, tmp_path, capsys):
        write_log(sample_log(), "-", format="jsonl")
        write_log(sample_log(), "-", format="jsonl")  # standard output is still open
        text = capsys.readouterr().out
        p = tmp_path / "out.jsonl"
        p.write_text(text.split("\n", 5)[-1])  # the second copy: header and four sessions per copy
        same_sessions(sample_log(), read_log(p))

    def test_dataframe(self):
        pytest.importorskip("pandas")
        log = sample_log()
        frame = to_dataframe(log)
        assert len(frame) == 3 + 1 + 1 + 2  # one row per click, one for the session without clicks
        same_sessions(log, from_dataframe(frame))

    def test_format_from_name(self, tmp_path):
        with pytest.raises(ValueError, match="cannot tell the format"):
            write_log(sample_log(), tmp_path / "log.txt")
        with pytest.raises(ValueError, match="`format` must be one of"):
            write_log(sample_log(), tmp_path / "log.txt", format="csv")


class TestReadJsonl:
    def read(self, tmp_path, lines, **kw):
        p = tmp_path / "log.jsonl"
        p.write_text("\n".join(lines) + "\n")
        return read_log(p, **kw)

    def test_doc_and_rank(self, tmp_path):
        log = self.read(tmp_path, [
            '{"query_id": "q", "shown": ["a", "b", "a"], '
            '"clicks": [{"doc": "a"}, {"rank": 3}, {"doc": "b", "rank": 2}]}',
            '{"query_id": "q", "shown": ["a"]}'])
        assert log[0].clicks.tolist() == [1, 3, 2]  # a document shown twice: its first rank
        assert [s.session_id for s in log] == ["1", "2"] and log[1].n_clicks == 0
        assert log[0].times is None and log[0].dwell is None

    @pytest.mark.parametrize("line, message", [
        ('{"query_id": "q", "shown": ["a", "b"], "clicks": [{"doc": "z"}]}', r"log.jsonl:2: click on document 'z'"),
        ('{"query_id": "q", "shown": ["a", "b"], "clicks": [{"rank": 3}]}', r":2: click on rank 3, outside .*1..2"),
        ('{"query_id": "q", "shown": ["a", "b"], "clicks": [{"rank": 0}]}', "outside the ranking"),
        ('{"query_id": "q", "shown": ["a"], "clicks": [{"rank": 1, "doc": "b"}]}', "rank 1 shows 'a'"),
        ('{"query_id": "q", "shown": [], "clicks": []}', r":2: session 2 of query 'q': the ranking shown is empty"),
        ('{"query_id": "q", "shown": ["a", "b"], "clicks": [{"rank": 1, "time": 5}, {"rank": 2, "time": 3}]}',
         r":2: session 2: click times are not in order: click 2 at 3.0 s comes before click 1 at 5.0 s"),
        ('{"query_id": "q", "shown": ["a", "b"], "clicks": [{"rank": 1, "time": 5}, {"rank": 2}]}',
         "some clicks have a time"),
        ('{"query_id": "q", "shown": ["a"], "clicks": [{"rank": 1, "dwell": -1}]}', "dwell times must be >= 0"),
        ('{"query_id": "q", "shown": ["a"], "clicks": [{"rank": 1, "time": "soon"}]}', "finite number of seconds"),
        ('{"query_id": "q", "shown": ["a"], "clicks": [{"pos": 1}]}', r"unknown click field\(s\) \['pos'\]"),
        ('{"query_id": "q", "shown": ["a"], "clicks": [1]}', "'clicks' must be a list of objects"),
        ('{"query_id": "q", "shown": ["a"], "ended": "yes"}', "`ended` must be true, false or absent"),
        ('{"query_id": "q", "shown": ["a"], "session_id": "1"}', r":2: session_id '1' was already used on line 1"),
        ('{"shown": ["a"]}', "has no 'query_id'"),
        ('{"query_id": "q", "shown": [1]}', "must be strings"),
        ('{"query_id": "q", "shown": ["a"], "click": []}', r"unknown field\(s\) \['click'\]"),
        ('{"query_id": "q", "shown": ["a"]', r"log.jsonl:2: not valid JSON \(Expecting ',' delimiter"),
        ('["q", ["a"]]', "expected a JSON object"),
    ])
    def test_malformed(self, tmp_path, line, message):
        with pytest.raises(InputError, match=message):
            self.read(tmp_path, ['{"query_id": "q0", "shown": ["a"], "session_id": "1"}', line])

    def test_unshown_drop(self, tmp_path):
        log = self.read(tmp_path, ['{"query_id": "q", "shown": ["a"], "clicks": [{"doc": "z", "time": 1}, '
                                   '{"doc": "a", "time": 2}]}'], unshown="drop")
        assert log[0].clicks.tolist() == [1] and log[0].times.tolist() == [2.0]

    def test_session_arrays_are_read_only(self, tmp_path):
        log = self.read(tmp_path, ['{"query_id": "q", "shown": ["a"], "clicks": [{"rank": 1, "time": 1}]}'])
        with pytest.raises(ValueError):
            log[0].clicks[0] = 2

    def test_input_validation(self, tmp_path):
        p = tmp_path / "log.jsonl"
        p.write_text("")
        with pytest.raises(ValueError, match="`format` must be one of"):
            read_log(p, format="wscd")
        assert len(read_log(p)) == 0


class TestReadTsv:
    HEADER = "session_id\tquery_id\tshown\trank\ttime\tended"

    def read(self, tmp_path, lines, header=HEADER):
        p = tmp_path / "log.tsv"
        p.write_text("\n".join([header] + lines) + "\n")
        return read_log(p, format="tsv")

    def test_sessions(self, tmp_path):
        log = self.read(tmp_path, ["s1\tq\ta b c\t2\t1.0\t1", "s1\tq\ta b c\t3\t2.5\t1", "s2\tq\ta b\t\t\t"],)
        assert [s.clicks.tolist() for s in log] == [[2, 3], []]
        assert log[0].times.tolist() == [1.0, 2.5] and log[0].ended is True and log[1].ended is None

    def test_doc_column(self, tmp_path):
        log = self.read(tmp_path, ["s1\tq\ta b\tb", "s1\tq\ta b\ta"], header="session_id\tquery_id\tshown\tdoc")
        assert log[0].clicks.tolist() == [2, 1]

    @pytest.mark.parametrize("lines, message", [
        (["s1\tq\ta b\t3\t1\t"], r"log.tsv:2: click on rank 3, outside the ranking shown \(ranks 1..2\)"),
        (["s1\tq\ta b\t1\t5\t", "s1\tq\ta b\t2\t4\t"], r"log.tsv:3: session 's1': click times are not in order"),
        (["s1\tq\ta b\t1\t\t", "s2\tq\ta\t1\t\t", "s1\tq\ta b\t1\t\t"], r":4: session 's1' continues here"),
        (["s1\tq\ta b\t1\t\t", "s1\tq\ta c\t1\t\t"], r":3: session 's1' has shown 'a c' here"),
        (["s1\tq\ta b\t1\t\t"] * 1 + ["s1\tq\ta b\t\t\t"], "must be its session's only line"),
        (["s1\tq\ta b\tx\t\t"], "rank 'x' is not an integer"),
        (["s1\tq\ta b\t1\t1\t", "s1\tq\ta b\t2\tnan\t"], "some clicks have a time"),
        (["s1\tq\ta b\t1\tinf\t"], "time 'inf' is not finite"),
        (["s1\tq\ta b\t1\t\tmaybe"], "'ended' must be 1, 0 or empty"),
        (["s1\tq\t\t\t\t"], "the ranking shown is empty"),
        (["s1\tq\ta b\t1"], r"log.tsv:2: expected 6 tab-separated fields \(the header's\), found 4"),
    ])
    def test_malformed(self, tmp_path, lines, message):
        with pytest.raises(InputError, match=message):
            self.read(tmp_path, lines)

    def test_header(self, tmp_path):
        with pytest.raises(InputError, match=r"log.tsv:1: the header must name .* \(unknown: \['click'\]\)"):
            self.read(tmp_path, [], header="session_id\tquery_id\tshown\tclick")
        with pytest.raises(InputError, match="log.tsv:1: the header must name"):
            self.read(tmp_path, [], header="query_id\tshown\trank")


class TestFromDataframe:
    def test_rows(self):
        pd = pytest.importorskip("pandas")
        df = pd.DataFrame({"session_id": ["s1", "s1", "s2"], "query_id": ["q", "q", "q"],
                           "shown": [["a", "b"], ["a", "b"], "a b"], "rank": [2, 1, None],
                           "time": [0.5, 1.0, None], "ended": [True, True, None]})
        log = from_dataframe(df)
        assert [s.clicks.tolist() for s in log] == [[2, 1], []]
        assert log[0].times.tolist() == [0.5, 1.0] and log[0].ended is True and log[1].ended is None

    def test_errors_name_the_row(self):
        pd = pytest.importorskip("pandas")
        df = pd.DataFrame({"session_id": ["s1", "s1"], "query_id": ["q", "q"], "shown": [["a"], ["a"]],
                           "rank": [1, 2]}, index=[10, 11])
        with pytest.raises(InputError, match=r"DataFrame row 1 \(index 11\): click on rank 2, outside"):
            from_dataframe(df)
        with pytest.raises(InputError, match="missing \\['shown'\\]"):
            from_dataframe(df.drop(columns="shown"))
        with pytest.raises(InputError, match="query_id must be a string"):
            from_dataframe(df.assign(query_id=[1, 1]))


# ---------------------------------------------------------------------------
# ir_datasets query logs (fakes shaped like ir_datasets' TripClick and AOL records)
# ---------------------------------------------------------------------------

TripItem = collections.namedtuple("LogItem", ["doc_id", "clicked"])
TripQlog = collections.namedtuple("TripClickQlog", ["session_id", "query_id", "query", "query_orig", "time", "items"])
AolItem = collections.namedtuple("LogItem", ["doc_id", "rank", "clicked"])
AolQlog = collections.namedtuple("AolQlog", ["user_id", "query_id", "query", "query_orig", "time", "items"])
T0 = datetime(2020, 1, 1, 12, 0, 0)


class FakeQlogs:
    dataset_id = "fake/qlogs"

    def __init__(self, records):
        self.records = records

    def qlogs_iter(self):
        return iter(self.records)


class TestFromIrDatasets:
    def test_tripclick(self):
        shown = ("d1", "d2", "d3")

        def items(c):
            return tuple(TripItem(d, d == c) for d in shown)

        recs = [TripQlog("S1", "q1", "x", "x", T0, items("d2")),
                TripQlog("S1", "q1", "x", "x", T0 + timedelta(seconds=30), items("d1")),
                TripQlog("S1", "q2", "y", "y", T0 + timedelta(seconds=60), items("d3")),
                TripQlog("S1", "q1", "x", "x", T0 + timedelta(seconds=90), items("d3"))]
        log = from_ir_datasets(FakeQlogs(recs))
        assert [s.clicks.tolist() for s in log] == [[2, 1], [3], [3]]
        assert log[0].times.tolist() == [0.0, 30.0] and log[0].shown == shown
        assert [s.session_id for s in log] == ["S1", "S1#2", "S1#3"]
        assert log.source == "fake/qlogs"
        assert len(from_ir_datasets(iter(recs))) == 3  # a plain iterable of records

    def test_aol(self):
        recs = [AolQlog("U1", "q1", "x", "x", T0, (AolItem("u3", "3", True),)),
                AolQlog("U1", "q1", "x", "x", T0, (AolItem("u1", "1", True),)),
                AolQlog("U1", "q2", "y", "y", T0, ()),
                AolQlog("U2", "q1", "x", "x", T0, (AolItem("u9", "12", True),))]
        log = from_ir_datasets(FakeQlogs(recs))
        assert [s.clicks.tolist() for s in log] == [[3, 1], [], [12]]
        assert log[0].shown == ("u1", "", "u3") + ("",) * 7
        assert log[1].n_shown == 10 and log[2].n_shown == 12
        assert from_ir_datasets(recs, depth=3)[0].n_shown == 3

    def test_ir_datasets_record_classes(self):
        """The records ir_datasets itself defines (the fakes above copy their fields)."""
        tc = pytest.importorskip("ir_datasets.datasets.tripclick")
        aol = pytest.importorskip("ir_datasets.datasets.aol_ia")
        assert tc.TripClickQlog._fields == TripQlog._fields and tc.LogItem._fields == TripItem._fields
        assert aol.AolQlog._fields == AolQlog._fields and aol.LogItem._fields == AolItem._fields
        trip = [tc.TripClickQlog("S", "q", "x", "x", T0, (tc.LogItem("a", False), tc.LogItem("b", True)))]
        aols = [aol.AolQlog("U", "q", "x", "x", T0, (aol.LogItem("u", "2", True),))]
        assert from_ir_datasets(trip)[0].clicks.tolist() == [2]
        assert from_ir_datasets(aols)[0].shown[:2] == ("", "u")

    def test_errors(self):
        recs = [AolQlog("U1", "q1", "x", "x", T0, (AolItem("u3", "3", True),)),
                AolQlog("U1", "q1", "x", "x", T0, (AolItem("u4", "3", True),))]
        with pytest.raises(InputError, match="qlogs record 2: rank 3 was clicked as document 'u3'"):
            from_ir_datasets(FakeQlogs(recs))
        with pytest.raises(InputError, match="qlogs record 1: item rank 'top' is not an integer"):
            from_ir_datasets([AolQlog("U", "q", "x", "x", T0, (AolItem("u", "top", True),))])
        with pytest.raises(InputError, match="qlogs record 1: not an ir_datasets qlog record"):
            from_ir_datasets([("q", "x")])
        with pytest.raises(ValueError, match="`depth` must be a positive integer"):
            from_ir_datasets([], depth=0)
