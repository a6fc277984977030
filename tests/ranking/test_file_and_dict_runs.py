"""ranking's one join: a run read into columns prepares exactly as the same run given as dicts.

``PreparedRun(QrelsIndex(qrels), run)`` with ``run`` a
:class:`~irmeasures_markov.io._run_columns.RunColumns` (read from a file by
``read_run_columns``, or made by ``run_from_columns`` of the tokeniser's
columns) against the same file read by the line reader: every ranked array,
batch, recall base, per-document lookup and per-query ranking is equal, bit
for bit.  Runs full of ties (across judged, unjudged and relevant documents,
-0.0 beside 0.0), graded judgments with zero and negative grades, run queries
without judgments, judged queries the run lacks, one-query runs, queries in
several pieces of the file, non-ASCII and invalid UTF-8 docids; short and long
rankings, every preparation option, both engines of the docid lookup (a dict
run, made columns with its docids as a list, is always probed in dicts), and
three orders of first use of the lazy arrays.
"""
import numpy as np
import pytest
from measure_needs import Needs
from random_runs import tied_run
from reference_readers import read_trec_run_lines  # byte-exact dicts, as the package evaluates them
from token_engines import TOKEN_ENGINES, force_token_engine

from irmeasures_markov.io._run_columns import RunColumns, read_run_columns, run_from_columns
from irmeasures_markov.io._tokens import run_columns
from irmeasures_markov.ranking._prepared import PreparedRun
from irmeasures_markov.ranking._qrels_index import QrelsIndex

#: (n_queries, length): short rankings, one query, long rankings
SHAPES = {"short": (6, 14), "one": (1, 30), "long": (3, 800)}


def make_file(seed, shape):
    """``(qrels, data)``: a tied run written as a run file, queries in pieces, some docids not ASCII."""
    n_queries, length = SHAPES[shape]
    qrels, run, universe = tied_run(seed, n_queries, length, scores=(-3, 3), grades=(-2, 3))
    rename = {d: d + ("\u00e9" if k % 3 == 1 else "\udcff\u4e2d" if k % 3 == 2 else "") for k, d in enumerate(universe)}
    run = {q: {rename[d]: s for d, s in docs.items()} for q, docs in run.items()}
    qrels = {q: {rename[d]: g for d, g in docs.items()} for q, docs in qrels.items()}
    rng = np.random.default_rng(seed)
    run["no-judgments"] = {rename[universe[0]]: 1.0, rename[universe[1]]: 1.0}      # skipped: no qrels
    qrels["not-retrieved"] = {rename[universe[0]]: 1, rename[universe[2]]: 2}    # no value from the run
    if shape != "one":
        qrels["empty"] = {}                                                   # judged, without a judgment
        run["empty"] = {rename[universe[2]]: 0.5, rename[universe[3]]: 0.5}
    pieces = []
    for q, docs in run.items():
        items = list(docs.items())
        cuts = sorted(rng.choice(np.arange(1, len(items)), size=min(2, len(items) - 1), replace=False).tolist()) \
            if len(items) > 1 else []
        for a, b in zip([0, *cuts], [*cuts, len(items)]):
            pieces.append((q, items[a:b]))
    order = rng.permutation(len(pieces)).tolist()
    # each query's pieces stay in their order: a piece goes where the permutation puts its query's next one
    by_query = {}
    for q, items in pieces:
        by_query.setdefault(q, []).append(items)
    slots = [pieces[k][0] for k in order]
    lines = []
    for q in slots:
        for rank, (d, s) in enumerate(by_query[q].pop(0)):
            lines.append(f"{q}\tQ0 {d} {rank} {s!r} tag")
    return qrels, "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"


def lookup_segments(segments, joined):
    """A per-document value from the docid alone (its length and last character), checking ``joined``."""
    if joined is not None:
        assert joined == ["\n".join(s) for s in segments]
    return np.array([len(d) + ord(d[-1]) / 1e6 for s in segments for d in s], dtype=np.float64)


def same_array(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def compare(columns, dicts, depth, first):
    """Every public answer of the two preparations, the lazy arrays first used in the order ``first``."""
    if first == "grades":
        assert same_array(columns.full_grades, dicts.full_grades)
    elif first == "docids":
        assert columns.ranked_docids == dicts.ranked_docids
    else:
        for i in range(len(dicts.qids)):
            assert_same_query(columns.queries[i], dicts.queries[i])
    assert columns.qids == dicts.qids
    assert same_array(columns.offsets, dicts.offsets)
    assert same_array(columns.positive_grades, dicts.positive_grades)
    assert same_array(columns.ranked_scores(), dicts.ranked_scores())
    assert columns.ranked_docids == dicts.ranked_docids
    assert same_array(columns.full_grades, dicts.full_grades)
    for rel in (1, 2):
        assert same_array(columns.recall_bases(rel), dicts.recall_bases(rel))
    cutoffs = (None, 3, 5) if depth is None else (3, 5)
    for rel in (1, 2):
        for judged_only in (False, True):
            for cutoff in cutoffs:
                for judgments in (True, False):
                    a = columns.batch(rel, judged_only, cutoff, with_docids=True, judgments=judgments)
                    b = dicts.batch(rel, judged_only, cutoff, with_docids=True, judgments=judgments)
                    assert a.qids == b.qids and a.docids == b.docids and (a.rel, a.judgments) == (b.rel, b.judgments)
                    for name in ("offsets", "grades", "relevant", "recall_base"):
                        assert same_array(getattr(a, name), getattr(b, name)), (rel, judged_only, cutoff, name)
    for judged_only in (False, True):
        for cutoff in cutoffs:
            for exact in (True, False):
                a = columns.document_values(lookup_segments, judged_only, cutoff, exact)
                b = dicts.document_values(lookup_segments, judged_only, cutoff, exact)
                if exact or cutoff is not None or judged_only:
                    assert same_array(a, b), (judged_only, cutoff, exact)
                else:       # file order within positive-free tie groups: the same multiset, summed the same
                    assert a.shape == b.shape and sorted(a.tolist()) == sorted(b.tolist())
    assert len(columns.queries) == len(dicts.queries)
    for i in range(len(dicts.qids)):
        assert_same_query(columns.queries[i], dicts.queries[i])


def assert_same_query(a, b):
    assert a.qid == b.qid and a.joined_keys == b.joined_keys and a.docids == b.docids
    assert same_array(a.scores, b.scores) and same_array(a.positive_grades, b.positive_grades)
    assert same_array(a.grades, b.grades)


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
@pytest.mark.parametrize("shape,seed", [("short", 0), ("short", 1), ("one", 2), ("long", 3), ("short", 4)])
@pytest.mark.parametrize("depth,judgments,keep_scores,join_docids", [
    (None, False, False, False), (None, True, True, True), (5, False, False, True), (5, True, True, False),
    (None, False, True, True), (5, True, False, True), (None, True, False, False), (5, False, True, False)])
def test_columns_prepare_as_the_dicts(tmp_path, monkeypatch, token_engine, shape, seed, depth, judgments,
                                      keep_scores, join_docids):
    qrels, data = make_file(seed, shape)
    path = tmp_path / "input.run"
    path.write_bytes(data)
    dict_run = read_trec_run_lines(path)
    asked = force_token_engine(monkeypatch, token_engine)
    file_run = read_run_columns(path)
    made_run = run_from_columns(run_columns(data))
    assert isinstance(file_run, RunColumns) and isinstance(made_run, RunColumns)
    needs = [Needs(depth, join_docids, judgments, keep_scores)]
    first = ("grades", "docids", "queries")[seed % 3]
    for run in (file_run, made_run):
        dicts = PreparedRun(QrelsIndex(qrels), dict_run, needs)
        columns = PreparedRun(QrelsIndex(qrels), run, needs)
        # the file's docids stay one string; the dict run's were made a list at the boundary
        assert isinstance(columns._flat.run.docids, str) and isinstance(dicts._flat.run.docids, list)
        compare(columns, dicts, depth, first)
    assert asked.count("auto") >= 4     # the repeat checks and the joins asked the engine forced here


@pytest.mark.parametrize("token_engine", TOKEN_ENGINES)
def test_one_index_serves_both_forms_and_many_runs(tmp_path, monkeypatch, token_engine):
    """The judgment tables are made once per index: runs of both forms prepared in turn against one index."""
    force_token_engine(monkeypatch, token_engine)
    qrels, data = make_file(7, "short")
    index = QrelsIndex(qrels)
    path = tmp_path / "input.run"
    for k in range(3):
        rng = np.random.default_rng(k)
        lines = data.split(b"\n")[:-1]
        path.write_bytes(b"\n".join(lines[i] for i in rng.permutation(len(lines)).tolist()) + b"\n")
        for judgments in (False, True):
            columns = PreparedRun(index, read_run_columns(path), [Needs(document_values=True, judgments=judgments)])
            dicts = PreparedRun(index, read_trec_run_lines(path), [Needs(document_values=True, judgments=judgments)])
            compare(columns, dicts, None, ("grades", "docids", "queries")[k])


def test_a_run_without_judged_queries_prepares_nothing(tmp_path):
    path = tmp_path / "input.run"
    path.write_text("a Q0 d1 1 1 t\nb Q0 d2 1 1 t\n", encoding="utf-8")
    needs = [Needs(document_values=True, judgments=True)]
    columns = PreparedRun(QrelsIndex({"c": {"d1": 1}}), read_run_columns(path), needs)
    dicts = PreparedRun(QrelsIndex({"c": {"d1": 1}}), read_trec_run_lines(path), needs)
    compare(columns, dicts, None, "grades")
    assert columns.qids == [] and columns.batch().grades.size == 0
