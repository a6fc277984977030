"""Regenerate the synthetic sample qrels/run bundled in irmeasures_markov/data (seeded)."""
import pathlib

import numpy as np

out = pathlib.Path(__file__).resolve().parents[1] / "irmeasures_markov" / "data"
rng = np.random.default_rng(20140706)
qrels_lines, run_lines = [], []
for q in range(1, 9):
    qid = f"q{q}"
    n_docs = 200
    docs = [f"D{q:02d}-{i:04d}" for i in range(n_docs)]
    grades = rng.choice([0, 0, 0, 1, 2], size=n_docs, p=[0.5, 0.2, 0.1, 0.15, 0.05])
    judged = rng.random(n_docs) < 0.6
    for d, g, j in zip(docs, grades, judged):
        if j:
            qrels_lines.append(f"{qid} 0 {d} {g}")
    k = 20 if q == 8 else 100  # one short ranking
    chosen = rng.choice(n_docs, size=k, replace=False)
    scores = np.round(rng.normal(size=k) + 0.8 * grades[chosen], 1)  # rounded: ties on purpose
    order = np.lexsort((-np.arange(k), -scores))
    for rank, i in enumerate(order, start=1):
        run_lines.append(f"{qid} Q0 {docs[chosen[i]]} {rank} {scores[i]:.1f} sample")
# a short query (one relevant document, retrieved at rank 2) and a judged query missing from the run; every
# query has a relevant document, so that `irmeasures-markov demo` prints no warning
qrels_lines += ["q9 0 D09-0001 0", "q9 0 D09-0002 0", "q9 0 D09-0003 1", "q10 0 D10-0001 1"]
run_lines += ["q9 Q0 D09-0001 1 2.0 sample", "q9 Q0 D09-0003 2 1.0 sample"]
(out / "sample.qrels").write_text("\n".join(qrels_lines) + "\n")
(out / "sample.run").write_text("\n".join(run_lines) + "\n")
# holding rates of the paper's Table 4, run 1 (GL_AD_ID), for ranks 1..10
mu = [0.2000, 0.0357, 0.2000, 0.0400, 0.0056, 0.0005, 0.0035, 0.0017, 0.0034, 0.0024]
(out / "sample_rates.tsv").write_text("# rank\tmu (paper Table 4, run 1)\n" +
                                      "".join(f"{r}\t{m}\n" for r, m in enumerate(mu, start=1)))
