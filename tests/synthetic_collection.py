"""A small synthetic collection (qrels and runs with graded judgments and tied scores) and a TREC run writer.

Shared by the tests of datasets, experiments, the grid, the grid command and progress output:
``from synthetic_collection import synthetic, write_run`` (``tests/`` is on ``sys.path``, see
``pythonpath`` in pyproject.toml).
"""
import gzip

import numpy as np


def synthetic(seed=0, n_topics=6, n_docs=60, n_runs=8, depth=40, ties=True):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {}
    for t in range(n_topics):
        q = str(400 + t)
        judged = rng.choice(n_docs, size=n_docs // 2, replace=False)
        qrels[q] = {f"D{d:03d}": int(rng.random() < 0.35) * int(rng.integers(1, 3)) for d in judged}
        qrels[q][f"D{judged[0]:03d}"] = 1
    for r in range(n_runs):
        skill = r / n_runs
        run = {}
        for q, docs in qrels.items():
            chosen = rng.choice(n_docs, size=depth, replace=False)
            base = np.array([docs.get(f"D{d:03d}", 0) for d in chosen], float)
            score = skill * base + rng.random(depth)
            if ties:
                score = np.round(score, 1)
            run[q] = {f"D{d:03d}": float(s) for d, s in zip(chosen, score)}
        runs[f"run{r}"] = run
    return qrels, runs


def write_run(path, run, tag="tag", shuffle=None, gz=False):
    lines = []
    for q, docs in run.items():
        for i, (d, s) in enumerate(docs.items()):
            lines.append(f"{q} Q0 {d} {i + 1} {s!r} {tag}\n")
    if shuffle is not None:
        shuffle.shuffle(lines)
    data = "".join(lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path
