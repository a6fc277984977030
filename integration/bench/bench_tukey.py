"""Benchmark: randomized Tukey HSD on 129 systems × 50 topics × 3 measures, 10,000 permutations (issue 36 item 4),
against ranx's statistical tests on the same score matrices.

    python integration/bench/bench_tukey.py [--rounds 5] [--synthetic] [--ranx-runs 6] [--ranx-permutations 1000]
                                            [--ranx-tukey-runs 20]

Score matrices: TREC-8 AP, P@10 and MP of all 129 runs when ../shared/data holds them (unless --synthetic), else a
synthetic topics × systems matrix of the same shape per measure.  Contenders, interleaved round by round
(benchkit.py):

* ``ours: tukey, 3 measures`` — `tukey_measures` (what ``compare --test tukey`` runs: the permutations drawn once
  for the three measures, every pair's p-value, intervals, effect sizes), engine 'auto' (numba when installed);
* ``ours: anova, 3 measures`` — the parametric Tukey HSD over the two-way ANOVA;
* ``ranx: tukey (subset)`` — ranx's ``compute_statistical_significance(stat_test='tukey')``, the statistical
  part of ``ranx.compare`` (scipy's one-way ``tukey_hsd``: no topic blocking, no permutations), on the first
  ``--ranx-tukey-runs`` runs: scipy integrates the studentized range pair by pair (tens of milliseconds each),
  so the full 8,256 pairs × 3 measures would take many minutes; its time is scaled linearly in pairs;
* ``ranx: fisher (subset)`` — ranx's Fisher randomization test on the first ``--ranx-runs`` runs with
  ``--ranx-permutations`` permutations: at 129 runs × 10,000 permutations it would take hours on this machine
  (it tests every ordered pair in Python), so its time is scaled linearly in pairs × permutations.

The scaled figures are estimates, printed as such.

Targets: ours ≤ 5 s and ≤ 300 MB for the randomized test: the peak traced allocation (tracemalloc) of the call,
and the peak resident memory of a child process that imports the package and runs only it.  Needs ranx
(``pip install ranx``); without it, ours alone.
"""
import argparse
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from benchkit import format_report, interleaved

from irmeasures_markov.inference._multiple import tukey_measures
from irmeasures_markov.testing import shared_data_dir

MEASURES = ("AP", "P@10", "MP")
TARGET_S, TARGET_MB = 5.0, 300.0


def synthetic():
    rng = np.random.default_rng(0)
    out = []
    for _ in MEASURES:
        y = np.clip(0.25 + rng.normal(0, 0.15, (50, 1)) + rng.normal(0, 0.05, (1, 129))
                    + rng.normal(0, 0.1, (50, 129)), 0, 1)
        out.append(y)
    return np.stack(out), [f"run{i:03d}" for i in range(129)], "synthetic"


def matrices(force_synthetic=False):
    """measures × topics × systems, the run names, and what they are."""
    data = shared_data_dir()
    if force_synthetic or data is None or not (data / "runs" / "trec8").is_dir():
        return synthetic()
    from irmeasures_markov.experiments import evaluate
    from irmeasures_markov.io import load_run_dir, read_trec_qrels
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = load_run_dir(data / "runs" / "trec8", progress=False)
    ev = evaluate(list(MEASURES), qrels, runs, n_jobs=2, progress=False)
    return np.transpose(ev.values, (1, 2, 0)), list(ev.runs), "TREC-8"


CHILD = """
import resource, numpy as np
from irmeasures_markov.inference._multiple import tukey_measures
values = np.random.default_rng(0).random((3, 50, 129))
tukey_measures(values, [str(i) for i in range(129)], "randomized", 0.95, 10000, 0)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5)")
    ap.add_argument("--synthetic", action="store_true", help="the synthetic matrices even when TREC-8 is present")
    ap.add_argument("--ranx-runs", type=int, default=6, help="runs of ranx's Fisher test (default 6)")
    ap.add_argument("--ranx-tukey-runs", type=int, default=20, help="runs of ranx's Tukey test (default 20)")
    ap.add_argument("--ranx-permutations", type=int, default=1000, help="its permutations (default 1000)")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    values, names, what = matrices(args.synthetic)
    n_m, n_t, n_s = values.shape
    print(f"{what}: {n_m} measures × {n_t} topics × {n_s} systems ({n_s * (n_s - 1) // 2} pairs), "
          f"{os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    tukey = "ours: tukey, 3 measures"
    contenders = {tukey: lambda: tukey_measures(values, names, "randomized", 0.95, 10000, 0),
                  "ours: anova, 3 measures": lambda: tukey_measures(values, names, "parametric", 0.95, 1, 0)}
    try:
        from ranx.statistical_tests import compute_statistical_significance
    except ImportError:
        compute_statistical_significance = None
        print("ranx is not installed (pip install ranx): ours alone")
    scale = None
    if compute_statistical_significance is not None:
        scores = {n: {m: values[k, :, j] for k, m in enumerate(MEASURES)} for j, n in enumerate(names)}
        sub, sub_t = names[:args.ranx_runs], names[:args.ranx_tukey_runs]
        contenders["ranx: tukey (subset)"] = lambda: compute_statistical_significance(
            sub_t, {n: scores[n] for n in sub_t}, "tukey", 10000, 0.05, 42)
        contenders["ranx: fisher (subset)"] = lambda: compute_statistical_significance(
            sub, {n: scores[n] for n in sub}, "fisher", args.ranx_permutations, 0.05, 42)
        scale = {"ranx: tukey (subset)": (n_s * (n_s - 1)) / (len(sub_t) * (len(sub_t) - 1)),
                 "ranx: fisher (subset)": (n_s * (n_s - 1)) / (len(sub) * (len(sub) - 1)) * 10000
                 / args.ranx_permutations}
    times = interleaved(contenders, rounds=args.rounds)
    print(format_report(times, peer=tukey))
    for name, factor in (scale or {}).items():
        best = min(times[name])
        print(f"  {name}: best {best:.2f} s; scaled to {n_s} runs (× {factor:,.0f}) and 10,000 permutations: "
              f"about {best * factor:,.0f} s (an estimate)")
    tracemalloc.start()
    t0 = time.perf_counter()
    tukey_measures(values, names, "randomized", 0.95, 10000, 0)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    best = min(times[tukey])
    print(f"  target {tukey} <= {TARGET_S:.0f} s: {'met' if best <= TARGET_S else 'NOT met'} (best {best:.2f} s); "
          f"peak traced memory {peak:.0f} MB (target <= {TARGET_MB:.0f} MB: "
          f"{'met' if peak <= TARGET_MB else 'NOT met'}; that call {elapsed:.2f} s under tracing)")

    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    rss = float(out.stdout.split()[-1])
    print(f"  peak resident memory of a process running only {tukey} (imports included): {rss:.0f} MB "
          f"(target <= {TARGET_MB:.0f} MB: {'met' if rss <= TARGET_MB else 'NOT met'})")


if __name__ == "__main__":
    main()
