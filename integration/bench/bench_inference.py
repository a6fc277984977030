"""Benchmark: Bayesian linear model on 129 systems × 50 topics (4 chains × 1000 draws) and
all-pairs randomization tests (8,256 pairs × 10,000 permutations).

    python integration/bench/bench_inference.py [--rounds 5] [--skip-pymc] [--synthetic]

Uses TREC-8 AP scores when ../shared/data is present (unless --synthetic),
else a synthetic matrix of the same shape.  The computations run interleaved
round by round (integration/bench/benchkit.py): each round runs each once, in an
order that alternates between rounds.  Printed: each one's best time and
range, the ratio our Gibbs sampler / PyMC NUTS (same model, same sizes; NUTS
compile included) or, with --skip-pymc, bootstrap / randomization, each as
best and per-round range, with the date.  Targets: each under 60 s on this
2-core machine (checked on the worst round too).  NUTS diagnostics come from
its last round.
"""
import argparse
import os

import numpy as np
from benchkit import format_report, interleaved

from irmeasures_markov.inference import all_pairs, score_matrix
from irmeasures_markov.testing import shared_data_dir

RAND = "all-pairs randomization"
BOOT = "all-pairs bootstrap"
GIBBS = "Bayesian linear model, Gibbs"
NUTS = "Bayesian linear model, PyMC NUTS"
TARGET_S = 60.0


def synthetic():
    rng = np.random.default_rng(0)
    y = np.clip(0.25 + rng.normal(0, 0.15, (50, 1)) + rng.normal(0, 0.05, (1, 129))
                + rng.normal(0, 0.1, (50, 129)), 0, 1)
    return score_matrix(y), "synthetic"


def scores(force_synthetic=False):
    data = shared_data_dir()
    if data is None or force_synthetic:
        return synthetic()
    from irmeasures_markov.experiments import evaluate
    from irmeasures_markov.io import load_run_dir, read_trec_qrels
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = load_run_dir(data / "runs" / "trec8", progress=False)
    ev = evaluate(["AP"], qrels, runs, n_jobs=2, progress=False)
    return score_matrix(ev.values[:, 0, :].T, topics=ev.topics, systems=ev.runs), "TREC-8 AP"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5)")
    ap.add_argument("--skip-pymc", action="store_true")
    ap.add_argument("--synthetic", action="store_true", help="the synthetic matrix even when TREC-8 is present")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    sm, what = scores(args.synthetic)
    print(f"{what}: {sm.n_topics} topics × {sm.n_systems} systems, {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    from irmeasures_markov.inference import bayesian_linear_model

    last = {}

    def keep(name, fn):
        def run():
            last[name] = fn()
        return run

    contenders = {
        RAND: keep(RAND, lambda: all_pairs(sm, "randomization", n_resamples=10000, correction="holm", seed=0)),
        BOOT: keep(BOOT, lambda: all_pairs(sm, "bootstrap", n_resamples=10000, seed=0)),
        GIBBS: keep(GIBBS, lambda: bayesian_linear_model(sm, backend="gibbs", draws=1000, tune=1000, chains=4,
                                                         seed=0, progress=False)),
    }
    if not args.skip_pymc:
        contenders[NUTS] = keep(NUTS, lambda: bayesian_linear_model(sm, backend="pymc", draws=1000, tune=1000,
                                                                    chains=4, cores=2, seed=0, progress=False))
    # no untimed warm-up: NUTS compile time is part of what a user waits for, in every round alike
    times = interleaved(contenders, rounds=args.rounds, warmup=False)
    print(f"{last[RAND].pvalue.size} pairs × 10,000 permutations or resamples; 4 chains × 1000 draws (+1000 tune)")
    if NUTS in times:
        print(format_report(times, peer=NUTS, candidates=[GIBBS]))
    else:
        print(format_report(times, peer=RAND, candidates=[BOOT]))
    for name, ts in times.items():
        status = "met" if max(ts) < TARGET_S else ("met at best only" if min(ts) < TARGET_S else "NOT met")
        print(f"  target {name} < {TARGET_S:.0f} s: {status} (best {min(ts):.1f} s, worst {max(ts):.1f} s)")
    if NUTS in last:
        import arviz as az
        nuts, gibbs = last[NUTS], last[GIBBS]
        rhat = float(az.rhat(nuts.idata, var_names=["system"])["system"].max())
        ess = float(az.ess(nuts.idata, var_names=["system"])["system"].min())
        diff = float(np.abs(gibbs.prob_better_matrix() - nuts.prob_better_matrix()).max())
        print(f"  NUTS diagnostics over the {sm.n_systems} system effects: max R-hat {rhat:.3f}, min bulk ESS "
              f"{ess:.0f}; max |P_Gibbs(A>B) - P_NUTS(A>B)| over all pairs {diff:.3f}")


if __name__ == "__main__":
    main()
