"""Benchmark: the linear model with a corpus effect and its interactions on TREC-8's four sub-collections.

    IRMEASURES_MARKOV_DATA=../shared/data python integration/bench/bench_inference_multifactor.py \\
        [--measure AP] [--all-topics] [--draws 1000] [--tune 500] [--nuts-runs 12] [--skip-pymc]

TREC-8's documents come from four sub-collections, named by the docid prefix: FBIS, FR94, FT, LA.  For each, the
qrels and every run are restricted to its documents and ``--measure`` is computed per run and topic, over the
topics with a relevant document there (a topic without one has no AP: the cell is left out, so the table is
unbalanced; ``--all-topics`` scores such a topic 0 instead, trec_eval's ``-c``, for the full 129 × 50 × 4 =
25,800 rows).  The model (`fit_linear_model`, Carterette 2011 §3.3) is

    score ~ μ + system + topic + corpus + system×corpus + topic×corpus,

every effect N(0, σ_e²) with a half-Cauchy(0, 1) scale.  Printed for the Gibbs backend on all 129 runs, and
for PyMC's NUTS on the first ``--nuts-runs`` runs (it does not converge on all of them in reasonable time): wall
time and CPU time of the fit (``time.process_time``: on a loaded machine the wall time counts other processes'
turns; NUTS's chains in worker processes are not in it), max R-hat and min bulk ESS (ArviZ, rank-normalised
split) over every reported quantity — the system contrasts β_j − β̄, every scale σ and the corpus effects —
divergences, and the posterior corpus effects.
Targets (issue 36): Gibbs R-hat <= 1.01, bulk ESS >= 400, no divergence, <= 60 s.  One timed fit each (the
figures are about convergence; interleaving would only double the run time).
"""
from __future__ import annotations

import argparse
import datetime
import os
import time
import warnings

import numpy as np

from irmeasures_markov.testing import shared_data_dir

PREFIXES = ("FBIS", "FR94", "FT", "LA")
EFFECTS = ["corpus"]
INTERACTIONS = [("system", "corpus"), ("topic", "corpus")]
TARGET_S, TARGET_RHAT, TARGET_ESS = 60.0, 1.01, 400


def subcollection_table(measure: str = "AP", n_runs: int | None = None, all_topics: bool = False):
    """Long table (system, topic, corpus, value) of ``measure`` per run, topic and TREC-8 sub-collection."""
    import pandas as pd

    from irmeasures_markov.experiments import evaluate
    from irmeasures_markov.io import load_run_dir, read_trec_qrels

    data = shared_data_dir()
    if data is None:
        raise SystemExit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    loaded = load_run_dir(data / "runs" / "trec8", progress=False)
    runs = {name: run.to_dict() for name, run in list(loaded.items())[:n_runs]}
    frames = []
    for prefix in PREFIXES:
        sub_qrels = {q: {d: g for d, g in docs.items() if d.startswith(prefix)} for q, docs in qrels.items()}
        topics = [q for q, docs in sub_qrels.items() if any(g > 0 for g in docs.values())]
        sub_runs = {name: {q: {d: s for d, s in ranked.items() if d.startswith(prefix)} for q, ranked in run.items()}
                    for name, run in runs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # with --all-topics: one warning per topic without a relevant doc
            ev = evaluate([measure], sub_qrels, sub_runs, topics=None if all_topics else topics, progress=False)
        values = ev.values[:, 0, :]                                  # runs × topics
        frames.append(pd.DataFrame({"system": np.repeat(ev.runs, len(ev.topics)),
                                    "topic": np.tile(ev.topics, len(ev.runs)), "corpus": prefix,
                                    "value": values.ravel()}))
    return pd.concat(frames, ignore_index=True)


def diagnostics(res):
    """(max R-hat, min bulk ESS) over the system contrasts, every scale and the corpus effects."""
    import arviz as az

    post = res.idata.posterior
    beta = post["system"]
    quantities = {"system_contrast": beta - beta.mean(beta.dims[-1]), "corpus": post["corpus"]}
    quantities.update({str(v): post[v] for v in post.data_vars if str(v).startswith("sigma")})
    ds = az.convert_to_dataset({k: v.values for k, v in quantities.items()})
    rhat = az.rhat(ds).to_array().values
    ess = az.ess(ds, method="bulk").to_array().values
    return float(np.nanmax(np.concatenate([np.ravel(x) for x in rhat]))), \
        float(np.nanmin(np.concatenate([np.ravel(x) for x in ess])))


def fit(table, backend, draws, tune):
    from irmeasures_markov.inference import fit_linear_model

    t0, cpu0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the figures below say what the SamplingWarning would
        res = fit_linear_model(table, effects=EFFECTS, interactions=INTERACTIONS, draws=draws, tune=tune,
                               chains=4, seed=0, progress=False, backend=backend,
                               **({"cores": 2} if backend == "pymc" else {}))
    return res, (time.perf_counter() - t0, time.process_time() - cpu0)


def report(name, table, res, times):
    rhat, ess = diagnostics(res)
    wall, cpu = times
    corpus = res.idata.posterior["corpus"].values.reshape(-1, len(PREFIXES))
    div = "none (Gibbs)" if res.divergences is None else str(res.divergences)
    print(f"{name}: {table['system'].nunique()} runs, {len(table)} rows: {wall:.1f} s wall ({cpu:.1f} s CPU in this "
          f"process), max R-hat {rhat:.4f}, min bulk ESS {ess:.0f}, divergences {div}")
    print("  corpus effects (posterior mean ± sd): "
          + ", ".join(f"{p} {m:+.3f} ± {s:.3f}" for p, m, s in zip(PREFIXES, corpus.mean(0), corpus.std(0))))
    return rhat, ess


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", default="AP")
    ap.add_argument("--all-topics", action="store_true",
                    help="keep the topics without a relevant document in a sub-collection, scored 0")
    ap.add_argument("--draws", type=int, default=1000, help="kept draws per chain (4 chains)")
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--nuts-runs", type=int, default=12, help="runs in the (smaller) NUTS fit")
    ap.add_argument("--skip-pymc", action="store_true")
    args = ap.parse_args()
    print(f"{datetime.date.today().isoformat()}, {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.measure}, 4 chains × {args.draws} draws "
          f"(+{args.tune} tune)")
    table = subcollection_table(args.measure, all_topics=args.all_topics)
    res, times = fit(table, "gibbs", args.draws, args.tune)
    rhat, ess = report("Gibbs", table, res, times)
    met = times[0] <= TARGET_S and rhat <= TARGET_RHAT and ess >= TARGET_ESS
    print(f"  targets (<= {TARGET_S:.0f} s, R-hat <= {TARGET_RHAT}, bulk ESS >= {TARGET_ESS}): "
          f"{'met' if met else 'NOT met'}")
    if not args.skip_pymc:
        small = table[table["system"].isin(sorted(table["system"].unique())[:args.nuts_runs])]
        for backend in ("gibbs", "pymc"):
            res, times = fit(small, backend, args.draws, args.tune)
            report("Gibbs" if backend == "gibbs" else "NUTS (target_accept 0.9)", small, res, times)


if __name__ == "__main__":
    main()
