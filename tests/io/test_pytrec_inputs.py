"""Inputs that crash pytrec_eval's process reach it in a form it takes, on every entry point.

Each case runs in a child process: on a regression pytrec_eval segfaults,
which would take the test process down with it.
"""
import subprocess
import sys
import textwrap

from irmeasures_markov.io._pytrec import (
    ABSENT_DOCID,
    id_for_pytrec_eval,
    id_from_pytrec_eval,
    qrels_for_pytrec_eval,
    run_for_pytrec_eval,
)

# docids holding bytes that are not UTF-8, as the readers decode them (surrogateescape)
BAD_A = b"d\xff".decode("utf-8", "surrogateescape")
BAD_B = b"d\xfe".decode("utf-8", "surrogateescape")


def run_child(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"child exited with {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout


def test_ids_map_to_latin1_and_back_byte_exactly():
    for text in ["d1", "é", BAD_A, BAD_B, "ü" + BAD_A, ""]:
        converted = id_for_pytrec_eval(text)
        converted.encode("utf-8")  # no lone surrogate left
        assert id_from_pytrec_eval(converted) == text
    assert id_for_pytrec_eval(BAD_A) != id_for_pytrec_eval(BAD_B)
    # trec_eval breaks score ties by strcmp on what it gets: the bytes' order survives
    ids = ["a", "é", BAD_A, BAD_B, "z\u00e9", "\u4e2d"]
    by_bytes = sorted(ids, key=lambda s: s.encode("utf-8", "surrogateescape"))
    assert sorted(ids, key=lambda s: id_for_pytrec_eval(s).encode("utf-8")) == by_bytes


def test_ascii_inputs_are_handed_over_as_they_are():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0}}
    assert qrels_for_pytrec_eval(qrels)["1"] is qrels["1"]
    assert run_for_pytrec_eval(run) is run


def test_topics_with_only_negative_grades_get_a_grade_0_judgment():
    qrels = {"1": {"a": -1, "b": -2}, "2": {"a": 1}, "3": {}}
    out = qrels_for_pytrec_eval(qrels)
    assert out["1"] == {"a": -1, "b": -2, ABSENT_DOCID: 0}
    assert out["2"] == {"a": 1} and out["3"] == {}
    assert qrels["1"] == {"a": -1, "b": -2}


def test_relevance_evaluator_with_non_utf8_ids_and_negative_topics():
    out = run_child(f"""
        import irmeasures_markov as pytrec_eval
        a, b = {BAD_A!r}, {BAD_B!r}
        qrels = {{'1': {{a: 1, 'x': 0}}, '2': {{'p': -1, 'q': -2}}, 'q' + a: {{b: 1}}}}
        run = {{'1': {{b: 2.0, a: 1.0, 'x': 0.5}}, '2': {{'p': 1.0, 'z': 0.5}}, 'q' + a: {{b: 1.0}}}}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {{'map', 'P_5', 'ndcg', 'bpref', 'recip_rank', 'AP@10', 'MP'}})
        res = ev.evaluate(run)
        for q in sorted(res):
            print(ascii(q), sorted((k, round(v, 6)) for k, v in res[q].items()))
    """)
    lines = out.splitlines()
    q1 = [ln for ln in lines if ln.startswith("'1'")][0]
    assert "('map', 0.5)" in q1 and "('recip_rank', 0.5)" in q1 and "('MP', 0.5)" in q1
    q2 = [ln for ln in lines if ln.startswith("'2'")][0]
    assert "('map', 0.0)" in q2 and "('ndcg', 0.0)" in q2
    q3 = [ln for ln in lines if ln.startswith("'qd\\udcff'")][0]   # the query id comes back as it was read
    assert "('map', 1.0)" in q3 and "('AP@10', 1.0)" in q3


def test_experiments_evaluate_with_non_utf8_ids_through_pytrec_eval():
    out = run_child(f"""
        import warnings
        from irmeasures_markov import experiments
        a, b = {BAD_A!r}, {BAD_B!r}
        qrels = {{'1': {{a: 1, 'x': 0}}, '2': {{'p': -1, 'q': -2}}}}
        runs = {{'r': {{'1': {{b: 2.0, a: 1.0}}, '2': {{'p': 1.0}}}}}}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            ev = experiments.evaluate(['AP', 'P@5', 'nDCG@5', 'Judged@5'], qrels, runs, native=False)
        print(list(ev.topics), [round(float(v), 6) for v in ev.values[0, 0]])
    """)
    assert "['1', '2']" in out
    assert "0.5, 0.0" in out   # AP of topic 1 (relevant at rank 2), topic 2 scores 0

