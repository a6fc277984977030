"""trec_eval's own test suite (usnistgov/trec_eval, test/; tests/data/trec_eval/README.md) through every front end.

Issue 34, item 2. For each ``out.test*`` file of trec_eval's ``quicktest`` (the command line it comes from is in
``CASES``), every printed value (per topic and ``all``) of every trec_eval measure this package computes itself (the
float64 standard family of ``measures.standard_values``, Judged@k as 1 - ``unj_k``, and the measures of our families
that equal a trec_eval measure: ``M4(dist='AP')`` and ``MP(model='UNIFORM',recall=True)`` = ``map`` (also at a
cutoff: ``map_cut``), ``M2(dist='DCG',norm=True)`` = ``ndcg`` on binary grades, ``M1(theta=0.9)`` = ``rbp`` on
binary grades, ``M1(theta=0.9,residual=True)`` = ``rbp_resid``) is compared, at trec_eval's 4 printed decimals, with
what four front ends give on the same inputs and options: ``experiments.evaluate``, the ``irmeasures-markov`` main
command (its printed output), the pytrec_eval drop-in ``RelevanceEvaluator`` (trec_eval's names where pytrec_eval
has them) and ``ir_measures.iter_calc`` / ``calc_aggregate`` with this package registered.

trec_eval's options become: ``-c`` the mean over every qrels topic (the front ends' rule; the drop-in's dict is
averaged so by the test, a topic it lacks counting 0), ``-M100`` the first 100 documents of each topic in
trec_eval's order (score descending, docid descending) handed over, ``-l2`` ``rel=2`` (``relevance_level=2``).
trec_eval prints the sum over topics, not the mean, for ``num_ret``, ``num_rel`` and ``num_rel_ret``, and so do
ir_measures, the main command and pytrec_eval's ``compute_aggregated_measure``; ``Evaluation.means()`` is a mean,
compared with trec_eval's sum divided by its ``num_q``.

The comparison takes about 10 s (slow tier: ``--runslow``).  Every difference must be listed in ``KNOWN`` with its
reason, every trec_eval measure of the files not computed here in ``NOT_COMPUTED``; an entry that matches nothing
fails too, so the table stays what the suite shows.  Both tables are printed in docs/conventions.md (checked
below).
"""
from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from fnmatch import fnmatchcase
from pathlib import Path
from typing import NamedTuple

import ir_measures
import pytest

import irmeasures_markov.pytrec_eval as dropin
from irmeasures_markov.cli import main
from irmeasures_markov.experiments import evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "conventions.md"
FRONT_ENDS = ("evaluate", "cli", "RelevanceEvaluator", "ir_measures")


class Case(NamedTuple):
    """One ``quicktest`` line of trec_eval's Makefile: its inputs and the options that matter here."""
    command: str
    qrels: str
    run: str
    rel: int = 1
    max_docs: int | None = None


CASES = {
    "out.test": Case("trec_eval test/qrels.test test/results.test", "qrels.test", "results.test"),
    "out.test.a": Case("trec_eval -m all_trec test/qrels.test test/results.test", "qrels.test", "results.test"),
    "out.test.aq": Case("trec_eval -m all_trec -q test/qrels.test test/results.test", "qrels.test", "results.test"),
    "out.test.aqc": Case("trec_eval -m all_trec -q -c test/qrels.test test/results.trunc", "qrels.test",
                         "results.trunc"),
    "out.test.aqcM": Case("trec_eval -m all_trec -q -c -M100 test/qrels.test test/results.trunc", "qrels.test",
                          "results.trunc", max_docs=100),
    "out.test.aql": Case("trec_eval -m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test",
                         "qrels.rel_level", "results.test", rel=2),
    "out.test.meas_params": Case(
        "trec_eval -q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
        "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
        "test/qrels.test test/results.test", "qrels.test", "results.test"),
}


class Known(NamedTuple):
    """A legitimate difference: the trec_eval measures (glob), our measures (glob), files, topics and front ends
    (None: all) it covers, and why; ``as_pytrec_eval``: the value then equals pytrec_eval's (checked)."""
    trec_eval: str
    ours: str
    reason: str
    files: tuple[str, ...] | None = None
    topics: tuple[str, ...] | None = None
    front_ends: tuple[str, ...] | None = None
    as_pytrec_eval: bool = False


#: every difference between trec_eval's suite and a front end here, with its reason
KNOWN = [
    Known("iprec_at_recall_*", "IPrec*",
          "trec_eval 10.0 changed the rounding: it reaches round(r·R) relevant documents, trec_eval 9 and pytrec_eval "
          "int(r·R + 0.9), which this package keeps; every such value equals pytrec_eval's (checked)",
          files=("out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aql", "out.test.meas_params"),
          as_pytrec_eval=True),
    Known("num_rel", "NumRel*",
          "trec_eval -c evaluates a topic the run lacks as an empty ranking, which has num_rel = R; every front "
          "end here scores such a topic 0, as every measure (ir_measures' rule)",
          files=("out.test.aqc", "out.test.aqcM"), topics=("302", "all")),
    Known("num_rel", "NumRel(rel=2)",
          "ir_measures has no provider for NumRel with rel other than 1 (ValueError: Unsupported measures)",
          files=("out.test.aql",), front_ends=("ir_measures",)),
    Known("rbp", "*",
          "trec_eval 10.0's rbp is graded: a document's gain is its grade, scaled into [0, 1] when the topic's "
          "grades leave it (topic 301 of qrels.rel_level: grade/4); RBP(rel=...) and M1 are binary (grade >= rel)",
          files=("out.test.aql",), topics=("301", "all")),
    Known("unj_*", "Judged@*",
          "compared as 1 - unj: a topic the run lacks has unj 0 in trec_eval -c (nothing retrieved) and Judged@k 0 "
          "here (every measure's score for a topic the run lacks)",
          files=("out.test.aqc", "out.test.aqcM"), topics=("302", "all")),
    Known("unj_*", "Judged@*",
          "ir_measures' Judged@k counts a document graded negative as judged (it is in the qrels), trec_eval's unj "
          "as unjudged; the package computes Judged@k as ir_measures defines it", files=("out.test.aql",)),
]

#: the trec_eval measures of the suite's output that this package does not compute itself, and why
NOT_COMPUTED = {
    "gm_map": "a geometric mean over topics, not a per-topic measure (pytrec_eval's through the drop-in)",
    "gm_bpref": "as gm_map",
    "infAP": "ir_measures' infAP, computed by pytrec_eval",
    "set_map": "ir_measures' SetAP, computed by pytrec_eval",
    "ndcg_1=3,2=9,4=4.5": "nDCG with custom gains: computed by ir_measures (pytrec_eval), named in one warning line",
    "relative_P_*": "not a measure of ir_measures (pytrec_eval's through the drop-in)",
    "Rprec_mult_*": "as relative_P",
    "11pt_avg*": "as relative_P",
    "utility*": "as relative_P",
    "binG": "as relative_P",
    "G": "as relative_P",
    "Rndcg": "as relative_P",
    "ndcg_rel": "as relative_P",
    "num_nonrel_judged_ret": "as relative_P",
    "relstring*": "not a number",
    "runid": "not a number",
    "num_q": "the number of topics averaged over, not a measure",
}

_CUT = re.compile(r"^(P|recall|success|map_cut|ndcg_cut|iprec_at_recall)_([0-9.]+)$")
_SUMMED = ("num_ret", "num_rel", "num_rel_ret")


def our_measures(name: str, rel: int, binary: bool) -> list[str] | None:
    """The ir_measures strings (ours first, then the identities of our families) for trec_eval measure ``name``
    at relevance level ``rel``, or None for a measure not computed here; ``binary``: the qrels grade 0 and 1 only."""
    r = f"rel={rel}"
    simple = {
        "map": [f"AP({r})", f"M4(dist='AP',{r})", f"MP(model='UNIFORM',recall=True,{r})"],
        "Rprec": [f"Rprec({r})"], "bpref": [f"Bpref({r})"], "recip_rank": [f"RR({r})"],
        "ndcg": ["nDCG"] + (["M2(dist='DCG',norm=True)"] if binary else []),
        "num_ret": ["NumRet"], "num_rel": [f"NumRel({r})"], "num_rel_ret": [f"NumRet({r})"],
        "set_P": [f"SetP({r})"], "set_relative_P": [f"SetP({r},relative=True)"], "set_recall": [f"SetR({r})"],
        "set_F": [f"SetF({r})"], "rbp": [f"RBP(p=0.9,{r})", f"M1(theta=0.9,{r})"],
        "rbp_resid": [f"M1(theta=0.9,{r},residual=True)"],
    }
    if name in simple:
        return simple[name]
    if name.startswith("unj_"):  # compared as 1 - unj
        return [f"Judged@{int(name[4:])}"]
    m = _CUT.match(name)
    if m is None:
        return None
    base, k = m.groups()
    if base == "iprec_at_recall":
        return [f"IPrec({r})@{float(k)}"]
    k = int(k)
    return {"P": [f"P({r})@{k}"], "recall": [f"R({r})@{k}"], "success": [f"Success({r})@{k}"],
            "map_cut": [f"AP({r})@{k}", f"M4(dist='AP',{r})@{k}", f"MP(model='UNIFORM',recall=True,{r})@{k}"],
            "ndcg_cut": [f"nDCG@{k}"] + ([f"M2(dist='DCG',norm=True)@{k}"] if binary else [])}[base]


def printed(path: Path) -> dict[tuple[str, str], str]:
    """trec_eval's output: ``{(measure, topic): printed value}``."""
    rows = {}
    for line in path.read_text().splitlines():
        name, topic, value = line.split()
        rows[(name, topic)] = value
    return rows


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """The qrels as trec_eval reads them."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def read_run(path: Path, max_docs: int | None) -> dict[str, dict[str, float]]:
    """The run as trec_eval reads it: six fields (results.trunc has words after the sixth on three lines, which
    trec_eval ignores and this package's readers refuse), cut at ``max_docs`` in trec_eval's order (``-M``)."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _, docid, _, score, _ = line.split()[:6]
        run.setdefault(qid, {})[docid] = float(score)
    if max_docs is not None:
        run = {q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:max_docs])
               for q, docs in run.items()}
    return run


def pytrec_eval_name(name: str) -> bool:
    """Whether pytrec_eval knows trec_eval measure ``name`` (``P_5``: ``P`` with a cutoff)."""
    return any(name == s or name.startswith(f"{s}_") for s in dropin.supported_measures)


def through_front_ends(case: Case, measures: list[str], trec_names: dict[str, str],
                       tmp: Path) -> dict[str, dict[str, dict[str, float] | None]]:
    """``{front end: {measure: {topic or 'all': value}}}``, None where the front end does not take the measure;
    ``trec_names`` maps the standard measures among ``measures`` to trec_eval's names."""
    qrels, run = read_qrels(DATA / case.qrels), read_run(DATA / case.run, case.max_docs)
    topics = sorted(qrels)
    out: dict[str, dict[str, dict]] = {f: {} for f in FRONT_ENDS}

    ev = evaluate(measures, qrels, {"run": run})
    means = ev.means_array()[0]
    for j, m in enumerate(measures):
        out["evaluate"][m] = {**{t: float(ev.values[0, j, k]) for k, t in enumerate(ev.topics)}, "all": means[j]}

    run_file = tmp / "run"
    run_file.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([str(DATA / case.qrels), str(run_file), *measures, "-q"]) == 0
    lines = buf.getvalue().splitlines()
    assert len(lines) % len(measures) == 0
    for i, line in enumerate(lines):  # per topic, the measures in the order given (printed in their own spelling)
        topic, _, value = line.split("\t")
        out["cli"].setdefault(measures[i % len(measures)], {})[topic] = float(value)

    # a pytrec_eval script asks for trec_eval's measures by trec_eval's names where pytrec_eval has them, for the
    # others by their ir_measures strings; the dict holds the topics of the run, a qrels topic it lacks counts 0 (-c)
    keys = {m: trec_names[m] if pytrec_eval_name(trec_names.get(m, "")) else str(ir_measures.parse_measure(m))
            for m in measures}
    per_query = dropin.RelevanceEvaluator(qrels, set(keys.values()), relevance_level=case.rel).evaluate(run)
    for m in measures:
        values = {t: per_query[t][keys[m]] if t in per_query else 0.0 for t in topics}
        out["RelevanceEvaluator"][m] = {**values,
                                        "all": dropin.compute_aggregated_measure(keys[m], list(values.values()))}

    parsed = {m: ir_measures.parse_measure(m) for m in measures}
    for m in measures:  # a measure no provider of ir_measures computes with these parameters is left out
        if not any(p.supports(parsed[m]) and p.is_available() for p in ir_measures.DefaultPipeline.providers):
            out["ir_measures"][m] = None
    taken = [p for m, p in parsed.items() if m not in out["ir_measures"]]
    per: dict = {}
    for x in ir_measures.iter_calc(taken, qrels, run):
        per.setdefault(x.measure, {})[x.query_id] = x.value
    aggregate = ir_measures.calc_aggregate(taken, qrels, run)
    for m, p in parsed.items():
        if m not in out["ir_measures"]:
            out["ir_measures"][m] = {**per.get(p, {}), "all": aggregate[p]}
    return out


def _known(file: str, front_end: str, name: str, ours: str, topic: str) -> Known | None:
    """The entry of KNOWN covering this value, if any."""
    for k in KNOWN:
        if (fnmatchcase(name, k.trec_eval) and fnmatchcase(ours, k.ours) and (k.files is None or file in k.files)
                and (k.topics is None or topic in k.topics) and (k.front_ends is None or front_end in k.front_ends)):
            return k
    return None


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    """Every compared value: ``[(file, front end, trec_eval measure, our measure, topic, theirs, ours)]``, and the
    trec_eval measures not computed here."""
    rows, skipped = [], set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # topic 302 missing from results.trunc, float32 notes: not what is tested
        for file, case in CASES.items():
            expected = printed(DATA / file)
            binary = set(g for q in read_qrels(DATA / case.qrels).values() for g in q.values()) <= {0, 1}
            wanted: dict[str, list[tuple[str, str, str]]] = {}
            trec_names: dict[str, str] = {}
            for (name, topic), value in expected.items():
                ms = our_measures(name, case.rel, binary)
                if ms is None:
                    skipped.add(name)
                    continue
                trec_names[ms[0]] = name
                for m in ms:
                    wanted.setdefault(m, []).append((name, topic, value))
            got = through_front_ends(case, list(wanted), trec_names, tmp_path_factory.mktemp(file))
            for front_end, values in got.items():
                for m, want in wanted.items():
                    for name, topic, value in want:
                        mine = None if values[m] is None else values[m].get(topic)
                        if front_end == "evaluate" and topic == "all" and name in _SUMMED:  # a mean, not the sum
                            value = repr(float(value) / float(expected[("num_q", "all")]))
                        if name.startswith("unj_"):
                            value = f"{1 - float(value):.4f}"
                        rows.append((file, front_end, name, m, topic, value, mine))
    return rows, skipped


def _differs(theirs: str, ours: float | None) -> bool:
    """Not equal at trec_eval's 4 printed decimals (a value the front end does not give differs)."""
    return ours is None or math.isnan(ours) or f"{ours:.4f}" != f"{float(theirs):.4f}"


@pytest.mark.slow
@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_every_value_of_trec_eval_suite_or_a_listed_difference(comparison, front_end):
    rows, _ = comparison
    mine = [r for r in rows if r[1] == front_end]
    assert len(mine) > 1000
    unlisted = [r for r in mine if _differs(r[5], r[6]) and _known(r[0], r[1], r[2], r[3], r[4]) is None]
    assert not unlisted, "\n".join(f"{f} {fe} {n} {m} {t}: trec_eval {v}, ours {o}" for f, fe, n, m, t, v, o
                                   in unlisted[:40])


@pytest.mark.slow
def test_listed_differences_of_iprec_are_pytrec_eval_values(comparison):
    rows, _ = comparison
    pytrec = {(r[0], r[2], r[4]): r[6] for r in rows if r[1] == "RelevanceEvaluator"}
    checked = [(r, pytrec[(r[0], r[2], r[4])]) for r in rows
               if _differs(r[5], r[6]) and _known(*r[:5]).as_pytrec_eval]
    assert len(checked) > 40
    assert not [(r, p) for r, p in checked if f"{r[6]:.4f}" != f"{p:.4f}"]


@pytest.mark.slow
def test_every_listed_difference_occurs(comparison):
    rows, _ = comparison
    hit = {id(_known(*r[:5])) for r in rows if _differs(r[5], r[6])}
    stale = [k for k in KNOWN if id(k) not in hit]
    assert not stale


@pytest.mark.slow
def test_every_measure_not_computed_is_listed(comparison):
    _, skipped = comparison
    assert not [n for n in skipped if not any(fnmatchcase(n, pattern) for pattern in NOT_COMPUTED)]
    assert not [p for p in NOT_COMPUTED if not any(fnmatchcase(n, p) for n in skipped)]


def docs_table() -> str:
    """KNOWN and NOT_COMPUTED as the Markdown table of docs/conventions.md."""
    lines = ["| trec_eval | ours | where | why |", "|---|---|---|---|"]
    for k in KNOWN:
        where = "; ".join(f"{label}: {', '.join(v)}" for label, v in
                          (("files", k.files), ("topics", k.topics), ("front ends", k.front_ends)) if v) or "all"
        lines.append(f"| `{k.trec_eval}` | `{k.ours}` | {where} | {k.reason} |")
    for name, reason in NOT_COMPUTED.items():
        lines.append(f"| `{name}` | not computed here | | {reason} |")
    return "\n".join(lines) + "\n"


def test_the_table_is_printed_in_the_docs():
    assert docs_table() in DOCS.read_text(), "docs/conventions.md: paste docs_table() of this module"
