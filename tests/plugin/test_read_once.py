"""Each input file is read once per evaluation: a file replaced during the call gives one content's value.

A measure with ``ties='expected'``, ``residual=True`` or ``unjudged='rel'|'range'`` evaluates its base many
times, and asks for the lengths, rates, duplicates or fit file each time.  Here the file is replaced (atomically,
as ``mv`` does) right after its first read, by a hook on the reader: the value must be exactly the value of the
content first read, never a mix of the two (before, every later evaluation of the base read the new file).
"""
import os

import ir_measures
import pytest

from irmeasures_markov import PROVIDER
from irmeasures_markov.calibration import FamilyFit, save_fit
from irmeasures_markov.experiments import evaluate
from irmeasures_markov.io import _content
from irmeasures_markov.io._content import ContentCache

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d5": 1}, "q2": {"d2": 1, "d4": 1, "d6": 0}}
# ties in the scores and unjudged documents (d4 for q1; d1, d3, d5 for q2)
RUN = {"q1": {"d1": 3.0, "d2": 3.0, "d3": 2.0, "d4": 2.0, "d5": 2.0, "d6": 1.0},
       "q2": {"d1": 4.0, "d2": 3.0, "d3": 3.0, "d4": 3.0, "d5": 1.0, "d6": 1.0}}
LENGTHS = ("d1\t100\nd2\t900\nd3\t250\nd4\t700\nd5\t120\nd6\t300\n",
           "d1\t900\nd2\t100\nd3\t750\nd4\t200\nd5\t620\nd6\t800\n")
RATES = ("1\t0.50\n2\t0.25\n3\t0.10\n4\t0.90\n5\t0.30\n6\t0.70\n",
         "1\t0.05\n2\t0.95\n3\t0.40\n4\t0.20\n5\t0.70\n6\t0.10\n")
DUPLICATES = ("d1\tg1\nd5\tg1\n", "d2\tg1\nd3\tg1\nd4\tg2\nd6\tg2\n")


def mp_fit_text(decay, tmp_path):
    save_fit(tmp_path / "scratch.json", FamilyFit("mp", "GL_AD_ID(decay)", {"connectivity": "GL", "states": "AD",
                                                                            "kernel": "ID", "decay": decay}))
    return (tmp_path / "scratch.json").read_text()


def swap_after_first_read(monkeypatch, path, new_text):
    """Replace ``path`` by a file holding ``new_text`` (os.replace, atomic) right after its first read."""
    real = _content.read_raw
    swapped = []

    def read_raw(name):
        data = real(name)
        if not swapped and os.path.abspath(name) == os.path.abspath(path):
            tmp = f"{path}.new"
            with open(tmp, "w") as fh:
                fh.write(new_text)
            os.replace(tmp, path)
            swapped.append(name)
        return data
    monkeypatch.setattr(_content, "read_raw", read_raw)
    return swapped


def parsed(measure: str):
    """The measure, validated (validation may read its fit file: before the hook, so that the swap falls in the
    evaluation)."""
    m = ir_measures.parse_measure(measure)
    m.validate_params()
    return m


def value(measure, run=RUN):
    m = parsed(measure) if isinstance(measure, str) else measure
    return PROVIDER.calc_aggregate([m], QRELS, run)[m]


CASES = [
    ("MPcont(time='tbg',lengths='{F}',ties='expected')", LENGTHS),
    ("TBG(lengths='{F}',residual=True)", LENGTHS),
    ("TBG(lengths='{F}',ties='expected')", LENGTHS),
    ("TBG(lengths='{F}',unjudged='range')@5", LENGTHS),
    ("TBG(default_length=300,duplicates='{F}',unjudged='range')@5", DUPLICATES),
    ("TBG(default_length=300,duplicates='{F}',residual=True)", DUPLICATES),
    ("MPcont(rates='{F}',ties='expected')", RATES),
    ("MPcont(rates='{F}',unjudged='rel')", RATES),
    ("MP(model='file:{F}',ties='expected')", "fit"),
    ("MP(model='file:{F}',residual=True)", "fit"),
]


@pytest.mark.parametrize("template,contents", CASES, ids=[c[0] for c in CASES])
def test_a_file_replaced_during_an_evaluation_gives_the_value_of_the_content_first_read(
        template, contents, tmp_path, monkeypatch):
    if contents == "fit":
        contents = (mp_fit_text(0.5, tmp_path), mp_fit_text(3.0, tmp_path))
    x, y = contents
    fresh = {}
    for name, text in (("x", x), ("y", y)):   # the reference values: files at paths never read before
        (tmp_path / f"fresh-{name}").write_text(text)
        fresh[name] = value(template.format(F=tmp_path / f"fresh-{name}"))
    assert fresh["x"] != fresh["y"]
    path = tmp_path / "input"
    path.write_text(x)
    measure = parsed(template.format(F=path))
    swapped = swap_after_first_read(monkeypatch, path, y)
    got = value(measure)
    assert swapped, "the hook did not run: the test would prove nothing"
    assert got == fresh["x"]                     # all of X, bit for bit
    assert value(template.format(F=path)) == fresh["y"]   # the next evaluation reads the new file


def test_one_evaluation_reads_a_file_once_for_all_its_measures(tmp_path, monkeypatch):
    """TBG and MPcont(time='tbg') of one call read one content of their shared lengths file, in every front end."""
    path = tmp_path / "lengths.tsv"
    (tmp_path / "x.tsv").write_text(LENGTHS[0])
    names = ["TBG(lengths='{F}',residual=True)", "MPcont(time='tbg',lengths='{F}',ties='expected')"]
    expected = [value(n.format(F=tmp_path / "x.tsv")) for n in names]
    path.write_text(LENGTHS[0])
    measures = [parsed(n.format(F=path)) for n in names]
    for front_end in ("provider", "evaluate"):
        path.write_text(LENGTHS[0])
        swap_after_first_read(monkeypatch, path, LENGTHS[1])
        if front_end == "provider":
            got = PROVIDER.calc_aggregate(measures, QRELS, RUN)
            got = [got[m] for m in measures]
        else:
            got = list(evaluate(measures, QRELS, {"r": RUN}).means().loc["r"])[:2]   # then the extra 'se'

        assert got == pytest.approx(expected, abs=0, rel=0), front_end
        monkeypatch.undo()


def test_read_once_pins_each_file_of_each_cache_and_nests(tmp_path):
    from irmeasures_markov.io._content import read_once
    parsed = []
    cache = ContentCache(lambda path, content: parsed.append(content) or content.decode(), maxsize=4)
    path = tmp_path / "f.txt"
    path.write_text("one")
    with read_once():
        assert cache.get(path)[1] == "one"
        path.write_text("two")
        with read_once():   # a nested scope is the outer one
            assert cache.get(path)[1] == "one"
        assert cache.get(path)[1] == "one"
        other = ContentCache(lambda path, content: content.decode())
        assert other.get(path)[1] == "two"   # pinned per cache: the other one had not read it yet
    assert cache.get(path)[1] == "two"
    assert parsed == [b"one", b"two"]
