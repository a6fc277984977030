"""Benchmark: Bayesian linear model on 129 systems × 50 topics (4 chains × 1000 draws) and
all-pairs randomization tests (8,256 pairs × 10,000 permutations).

    python integration/bench_inference.py [--skip-pymc]

Uses TREC-8 AP scores when ../shared/data is present, else a synthetic matrix
of the same shape.  Targets: each under 60 s on this 2-core machine.
"""
import argparse
import time

import numpy as np

from irmeasures_markov.inference import all_pairs, score_matrix
from irmeasures_markov.testing import shared_data_dir


def scores():
    data = shared_data_dir()
    if data is None:
        rng = np.random.default_rng(0)
        y = np.clip(0.25 + rng.normal(0, 0.15, (50, 1)) + rng.normal(0, 0.05, (1, 129))
                     + rng.normal(0, 0.1, (50, 129)), 0, 1)
        return score_matrix(y), "synthetic"
    from irmeasures_markov.datasets import load_run_dir
    from irmeasures_markov.experiments import evaluate
    from irmeasures_markov.io import read_trec_qrels
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = load_run_dir(data / "runs" / "trec8", progress=False)
    ev = evaluate(["AP"], qrels, runs, n_jobs=2, progress=False)
    return score_matrix(ev.values[:, 0, :].T, topics=ev.topics, systems=ev.runs), "TREC-8 AP"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-pymc", action="store_true")
    args = ap.parse_args()
    sm, what = scores()
    print(f"{what}: {sm.n_topics} topics × {sm.n_systems} systems")
    t = time.perf_counter()
    res = all_pairs(sm, "randomization", n_resamples=10000, correction="holm", seed=0)
    print(f"all-pairs randomization, {res.pvalue.size} pairs × 10,000 permutations: {time.perf_counter() - t:6.1f} s")
    t = time.perf_counter()
    all_pairs(sm, "bootstrap", n_resamples=10000, seed=0)
    print(f"all-pairs bootstrap, same sizes:                               {time.perf_counter() - t:6.1f} s")
    from irmeasures_markov.inference.bayes import bayesian_linear_model
    t = time.perf_counter()
    gibbs = bayesian_linear_model(sm, backend="gibbs", draws=1000, tune=1000, chains=4, seed=0, progress=False)
    print(f"Bayesian linear model, Gibbs, 4 chains × 1000 draws (+1000 tune): {time.perf_counter() - t:6.1f} s")
    if not args.skip_pymc:
        t = time.perf_counter()
        nuts = bayesian_linear_model(sm, draws=1000, tune=1000, chains=4, cores=2, seed=0, progress=False)
        print(f"Bayesian linear model, PyMC NUTS, same sizes (compile included): {time.perf_counter() - t:6.1f} s")
        import arviz as az
        rhat = float(az.rhat(nuts.idata, var_names=["system"])["system"].max())
        ess = float(az.ess(nuts.idata, var_names=["system"])["system"].min())
        diff = float(np.abs(gibbs.prob_better_matrix() - nuts.prob_better_matrix()).max())
        print(f"  NUTS diagnostics over the 129 system effects: max R-hat {rhat:.3f}, min bulk ESS {ess:.0f}; "
              f"max |P_Gibbs(A>B) - P_NUTS(A>B)| over all pairs {diff:.3f}")


if __name__ == "__main__":
    main()
