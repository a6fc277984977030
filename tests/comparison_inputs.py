"""Small collections for the comparison tests (compare, its command, Tukey): runs of increasing quality, and
the same written as a qrels file and a run directory."""
import numpy as np


def collection(seed=0, n_topics=12, n_docs=40, n_runs=5, depth=20):
    """Runs of increasing quality: run k puts relevant documents higher as k grows."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"r{k}": {} for k in range(n_runs)}
    for t in range(n_topics):
        q = str(t + 1)
        grades = (rng.random(n_docs) < 0.3).astype(int)
        grades[0] = 1
        qrels[q] = {f"d{i}": int(g) for i, g in enumerate(grades)}
        for k in range(n_runs):
            score = rng.random(n_docs) + 0.12 * k * grades
            top = np.argsort(-score)[:depth]
            runs[f"r{k}"][q] = {f"d{i}": float(score[i]) for i in top}
    return qrels, runs


def write_collection(tmp_path, qrels, runs):
    qpath = tmp_path / "qrels.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rdir = tmp_path / "runs"
    rdir.mkdir()
    for name, run in runs.items():
        lines = [f"{q} Q0 {d} {i} {s!r} {name}\n" for q, docs in run.items()
                 for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))]
        (rdir / f"input.{name}").write_text("".join(lines))
    return qpath, rdir
