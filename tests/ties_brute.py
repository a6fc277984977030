"""Brute force for the tie and hole variants of issue 26, through the default path only.

Every expectation here is computed WITHOUT the variant engine: a measure is evaluated in its plain form
(no ``ties``/``unjudged``/``residual``/``seed``) by ``irmeasures_markov.PROVIDER.iter_calc`` on runs and
qrels built explicitly for each scenario:

* a tie order is made explicit by giving the run distinct scores in that order;
* a judgment of the unjudged documents is made explicit by adding them to the qrels;
* documents read after the ranking are made explicit by appending them to the run.

Many scenarios are evaluated in one call: each becomes a query of its own (``c000017``), with its own
copy of the query's qrels, so a brute force over thousands of orders costs one evaluation.

The test modules import it as ``from ties_brute import ...`` (``tests`` is on ``pythonpath``).
"""
from __future__ import annotations

import itertools
import math

import ir_measures
import numpy as np

import irmeasures_markov as imm

#: the grade an unjudged document counts as when tie groups are sorted (optimistic/pessimistic), for rel >= 1;
#: with rel <= 0 (grade 0 relevant) it counts as rel - 1, below every relevant grade
UNJUDGED_SORT_GRADE = 0
#: a pool of document ids; per query the retrieved ones are drawn from it without replacement
POOL = [f"D{k:03d}" for k in range(400)]
#: lengths (words) of every pool document (registered as 'brute-all'), and of two thirds of them
#: (registered as 'brute-part', used with default_length)
_LENGTH_RNG = np.random.default_rng(2026)
LENGTHS = {d: float(_LENGTH_RNG.integers(0, 3000)) for d in POOL}
PART_LENGTHS = {d: v for i, (d, v) in enumerate(LENGTHS.items()) if i % 3}
#: the documents appended after a ranking stand for the ranks a user reads past its end (unjudged='rel'):
#: judged relevant at g_fill; for TBG they have a length (see :func:`tail_docs`)
_TAIL_LENGTHS = {}


#: holding rates per rank (registered as 'brute')
RATES = [float(x) for x in np.random.default_rng(7).uniform(0.2, 3.0, size=2000)]


def register_inputs():
    """Register the lengths and rates the measure strings of the tests name."""
    imm.register_lengths("brute-all", LENGTHS)
    imm.register_lengths("brute-part", PART_LENGTHS)
    imm.register_rates("brute", RATES)


register_inputs()


# --------------------------------------------------------------------------- orders

def trec_order(scores):
    """Docids of ``{docid: score}`` in trec_eval order: score descending, then docid descending."""
    return sorted(scores, key=lambda d: (scores[d], d), reverse=True)


def tie_groups(scores):
    """Maximal runs of equal score in trec_eval order, each a list of docids in that order."""
    groups = []
    for d in trec_order(scores):
        if groups and scores[groups[-1][0]] == scores[d]:
            groups[-1].append(d)
        else:
            groups.append([d])
    return groups


def n_orders(scores):
    """How many orders of the ranking the tie groups allow (product of the groups' factorials)."""
    return math.prod(math.factorial(len(g)) for g in tie_groups(scores))


def all_orders(scores):
    """Every order of the ranking: each tie group permuted (itertools.permutations), product over groups."""
    groups = tie_groups(scores)
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for g in combo for d in g]


def multiset_orders(items):
    """Every distinct order of a multiset (a list of hashable items), each once."""
    counts = {}
    for x in items:
        counts[x] = counts.get(x, 0) + 1
    keys = sorted(counts, key=repr)
    out, n = [], len(items)

    def rec(prefix):
        if len(prefix) == n:
            out.append(tuple(prefix))
            return
        for k in keys:
            if counts[k]:
                counts[k] -= 1
                prefix.append(k)
                rec(prefix)
                prefix.pop()
                counts[k] += 1
    rec([])
    return out


def grade_arrangements(scores, grades):
    """Every distinct arrangement of the grades inside each tie group (unjudged, written None, apart from 0),
    as document orders: the documents of one grade of a group fill that grade's places in trec order.
    For a measure that reads only grades these are the tie orders up to interchangeable documents, each
    standing for the same number of orders, so their mean is the mean over every order."""
    per_group = []
    for g in tie_groups(scores):
        by_grade = {}
        for d in g:
            by_grade.setdefault(grades.get(d), []).append(d)
        orders = []
        for pattern in multiset_orders([grades.get(d) for d in g]):
            used = {k: iter(v) for k, v in by_grade.items()}
            orders.append([next(used[k]) for k in pattern])
        per_group.append(orders)
    for combo in itertools.product(*per_group):
        yield [d for part in combo for d in part]


def n_arrangements(scores, grades):
    """How many distinct grade arrangements the tie groups allow (unjudged apart from 0)."""
    total = 1
    for g in tie_groups(scores):
        counts = {}
        for d in g:
            counts[grades.get(d)] = counts.get(grades.get(d), 0) + 1
        total *= math.factorial(len(g)) // math.prod(math.factorial(c) for c in counts.values())
    return total


def explicit_run(order):
    """``{docid: score}`` whose only order (distinct scores) is ``order``."""
    n = len(order)
    return {d: float(n - i) for i, d in enumerate(order)}


def sorted_within_ties(scores, grades, how, rel=1):
    """The order 'optimistic' (grades descending) or 'pessimistic' (ascending) inside each tie group;
    unjudged documents count as grade 0 (``rel - 1`` when ``rel <= 0``); equal grades keep trec_eval's order
    (docid descending)."""
    sign = -1 if how == "optimistic" else 1
    unjudged = min(UNJUDGED_SORT_GRADE, rel - 1)
    out = []
    for g in tie_groups(scores):
        # sorted() is stable: equal grades stay in trec_eval order
        out.extend(sorted(g, key=lambda d: sign * grades.get(d, unjudged)))
    return out


# --------------------------------------------------------------------------- evaluation (default path)

def plain(measure):
    """A measure given as a string or object, parsed."""
    return ir_measures.parse_measure(measure) if isinstance(measure, str) else measure


def values(measure, qrels, run):
    """``{qid: value}`` of ``measure`` by ``PROVIDER.iter_calc``."""
    return {m.query_id: m.value for m in imm.PROVIDER.iter_calc([plain(measure)], qrels, run)}


def batched(measure, scenarios):
    """Values of ``measure`` on a list of ``(qrels of one query, run of one query)``, in one evaluation."""
    qrels, run = {}, {}
    for i, (q, r) in enumerate(scenarios):
        qrels[f"c{i:06d}"] = q
        run[f"c{i:06d}"] = r
    got = values(measure, qrels, run)
    return np.array([got[f"c{i:06d}"] for i in range(len(scenarios))], dtype=np.float64)


def per_order_values(measure, qrels, run, qid):
    """The values of every order of query ``qid``'s tie groups (explicit runs)."""
    return batched(measure, [(qrels[qid], explicit_run(o)) for o in all_orders(run[qid])])


def brute_expected(measure, qrels, run):
    """``{qid: mean over every order of every tie group}``."""
    return {q: float(np.mean(per_order_values(measure, qrels, run, q))) for q in run if q in qrels}


def brute_sorted(measure, qrels, run, how):
    """``{qid: value}`` on the run reordered inside its tie groups (``how`` optimistic or pessimistic)."""
    rel = int(plain(measure).params.get("rel", 1))
    explicit = {q: explicit_run(sorted_within_ties(run[q], qrels.get(q, {}), how, rel)) for q in run}
    return values(measure, qrels, explicit)


# --------------------------------------------------------------------------- holes

def g_fill(qrels_q):
    """The grade an unjudged document gets under unjudged='rel': max(1, highest judged grade)."""
    return max([1, *qrels_q.values()])


def unjudged_docs(qrels_q, run_q):
    """The retrieved documents without a judgment, in trec_eval order."""
    return [d for d in trec_order(run_q) if d not in qrels_q]


def filled_qrels(qrels, run):
    """The qrels with every unjudged retrieved document judged at g_fill."""
    out = {}
    for q, judged in qrels.items():
        out[q] = dict(judged)
        for d in unjudged_docs(judged, run.get(q, {})):
            out[q][d] = g_fill(judged)
    return out


def tail_docs(count, length=None):
    """``count`` document ids to append after a ranking. With a ``length`` they have that length in both
    registered tables ('brute-all', 'brute-part'); without one they have none (TBG then reads its
    default_length)."""
    if length is None:
        return [f"~free{i:05d}" for i in range(count)]
    key = float(length)
    docs = [f"~tail{i:05d}@{key!r}" for i in range(count)]
    if _TAIL_LENGTHS.get(key, 0) < count:
        LENGTHS.update(dict.fromkeys(docs, key))
        PART_LENGTHS.update(dict.fromkeys(docs, key))
        register_inputs()
        _TAIL_LENGTHS[key] = count
    return docs


def appended(qrels, run, n_tail, tail_length=None):
    """Run and qrels with relevant documents (at g_fill) appended after each ranking (scores below every
    retrieved score), on top of :func:`filled_qrels`: the user who reads past the end of the ranking under
    unjudged='rel'. ``n_tail`` is a number of documents, or a function of the ranking's length giving it;
    ``tail_length(run of the query)`` gives their length (None: no length, see :func:`tail_docs`). Being
    judged, they join the recall base."""
    qrels_out, run_out = filled_qrels(qrels, run), dict(run)
    for q, scores in run.items():
        if q in qrels_out:
            count = n_tail(len(scores)) if callable(n_tail) else n_tail
            length = tail_length(scores) if tail_length is not None else None
            qrels_out[q], run_out[q] = with_tail(qrels_out[q], scores, count, g_fill(qrels[q]), length)
    return qrels_out, run_out


def all_judgments(qrels_q, docs):
    """Every one of the 2^u qrels in which each document of ``docs`` is judged 0 or at g_fill."""
    fill = g_fill(qrels_q)
    for bits in itertools.product((0, fill), repeat=len(docs)):
        q = dict(qrels_q)
        q.update(zip(docs, bits))
        yield q


def with_tail(qrels_q, run_q, count, fill, length=None):
    """One query's qrels and run with ``count`` relevant documents (grade ``fill``, :func:`tail_docs` of
    ``length``) appended after the ranking."""
    low = min(run_q.values()) if run_q else 0.0
    tail = tail_docs(count, length)
    return {**qrels_q, **dict.fromkeys(tail, fill)}, {**run_q, **{d: low - 1.0 - i for i, d in enumerate(tail)}}


def brute_range(measure, qrels, run, n_tail=None, tail_length=None):
    """``{qid: (lo, hi)}``: min and max over every judgment of the query's unjudged retrieved documents.

    With ``n_tail`` (a function of the ranking's length, for a user who reads past the ranking) the ranks
    after the ranking are one more unknown: each judgment is also read with that many relevant documents
    appended (all of them, or none: the ranking ends)."""
    out = {}
    for q, scores in run.items():
        if q not in qrels:
            continue
        judgments = list(all_judgments(qrels[q], unjudged_docs(qrels[q], scores)))
        scenarios = [(j, scores) for j in judgments]
        count = n_tail(len(scores)) if n_tail is not None else 0
        if count:
            length = tail_length(scores) if tail_length is not None else None
            scenarios += [with_tail(j, scores, count, g_fill(qrels[q]), length) for j in judgments]
        vals = batched(measure, scenarios)
        out[q] = (float(vals.min()), float(vals.max()))
    return out


# --------------------------------------------------------------------------- random cases

def random_case(seed, *, n_queries=(1, 4), n_docs=(3, 10), n_scores=(2, 3), max_orders=2000,
                unjudged_share=0.3, max_unjudged=None, unretrieved=(0, 2), grades=(0, 2)):
    """``(qrels, run)`` with heavy ties: per query 3-10 retrieved documents whose scores take 2-3
    distinct values (at most ``max_orders`` orders of the tie groups), grades 0-2 (``grades``), about
    ``unjudged_share`` of them unjudged (at most ``max_unjudged``), and 0-2 judged documents that the run
    does not retrieve (grades 0-2, so the recall base exceeds what is retrieved). Every query has a
    document of grade 1 or 2 (added unretrieved when none was drawn)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for j in range(int(rng.integers(n_queries[0], n_queries[1] + 1))):
        qid = f"q{j}"
        while True:
            n = int(rng.integers(n_docs[0], n_docs[1] + 1))
            levels = rng.choice([0.5, 1.0, 2.0, 3.25], size=int(rng.integers(n_scores[0], n_scores[1] + 1)),
                                replace=False)
            scores = rng.choice(levels, size=n).tolist()
            docs = [POOL[i] for i in rng.choice(len(POOL), size=n + 3, replace=False).tolist()]
            retrieved = dict(zip(docs[:n], scores))
            if n_orders(retrieved) <= max_orders:
                break
        judged = {}
        for d in docs[:n]:
            if rng.random() >= unjudged_share:
                judged[d] = int(rng.integers(grades[0], grades[1] + 1))
        if max_unjudged is not None:
            for d in [d for d in docs[:n] if d not in judged][max_unjudged:]:
                judged[d] = int(rng.integers(grades[0], grades[1] + 1))
        for d in docs[n:n + int(rng.integers(unretrieved[0], unretrieved[1] + 1))]:
            judged[d] = int(rng.integers(grades[0], grades[1] + 1))
        if not any(g >= 1 for g in judged.values()):
            judged[docs[-1]] = int(rng.integers(1, 3))  # an unretrieved relevant document
        qrels[qid], run[qid] = judged, retrieved
    return qrels, run
