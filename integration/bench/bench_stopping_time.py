"""Benchmark P@H: single-ranking latency, simulation throughput, and the whole TREC-8 set against
pytrec_eval `map` on the same parsed inputs, in the same process.

    python integration/bench/bench_stopping_time.py [--rounds 5] [--skip-trec] [--skip-simulation]

Every section times its contenders interleaved round by round (integration/bench/benchkit.py) and prints
the best time of each, and each ratio's best and per-round range, with the date.

Targets: order-2 expectation of a 1000-document ranking <= 1 ms; simulation >= 5e7 user-steps/s on
one core (numba engine); TREC-8 ratio (ours / pytrec_eval map) <= 2 for order 2 and <= 1 for
`PH(browse='RWBM',p=0.5,q=0.25,loss=0.25,order=1)`.
"""
import argparse
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchkit import interleaved, print_report, ratios  # noqa: E402

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.core._birth_death_order1 import _birth_death_average_reward_graded  # noqa: E402
from irmeasures_markov.measures.stopping_time import browsing_model  # noqa: E402
from irmeasures_markov.measures.stopping_time._simulation import numba_walk  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402

RWBM = dict(browse="RWBM", p=0.5, q=0.25)


def per_call(fn, loops):
    def run():
        for _ in range(loops):
            fn()
    return run


def bench_single(rounds):
    rng = np.random.default_rng(0)
    grades = (rng.random(1000) < 0.1).astype(int)
    cases = {
        "order 2, RWBM p=.5 q=.25": dict(RWBM),
        "order 2, RWBM p=.5 q=.25 loss=.25": dict(RWBM, loss=0.25),
        "order 1, RWBM p=.5 q=.25 loss=.25": dict(RWBM, loss=0.25, order=1),
        "order 1, SFBM p=.8 (closed form)": dict(p=0.8, order=1),
    }
    models = {label: browsing_model(grades, **params) for label, params in cases.items()}
    loops = 50
    contenders = {label: per_call(m.value, loops) for label, m in models.items()}
    contenders["build + order 2, RWBM"] = per_call(lambda: browsing_model(grades, **RWBM).value(), loops)
    # the graded rule that order 1 used before the truncated, a-priori-sized rule
    m1 = models["order 1, RWBM p=.5 q=.25 loss=.25"]
    old = lambda: float(_birth_death_average_reward_graded(m1.forward, m1.backward, m1.gain, [0],  # noqa: E731
                                                             1.0 - m1.loss).sum())
    contenders["order 1, graded rule (before)"] = per_call(old, 5)
    print(f"single ranking, N = 1000 (times per call in ms; {loops} calls per round, 5 for the graded rule):")
    times = interleaved(contenders, rounds=rounds)
    times = {name: [t * 1e3 / (5 if "graded" in name else loops) for t in ts] for name, ts in times.items()}
    print_report(times, peer="order 2, RWBM p=.5 q=.25", unit="ms")


def bench_simulation(rounds, users=200_000):
    engines = ["numba", "numpy"] if numba_walk() is not None else ["numpy"]
    print(f"simulation, one core, {users} users per call (engines: {', '.join(engines)}):")
    r = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    rng = np.random.default_rng(1)
    long_r = (rng.random(1000) < 0.1).astype(int)
    for label, grades, params in (
            ("Fig. 1d RWBM N=10, loss .25", r, dict(RWBM, loss=0.25, top="forward")),
            ("RWBM N=1000 p=.7 q=.29, loss .25", long_r, dict(browse="RWBM", p=0.7, q=0.29, loss=0.25)),
            ("SFBM N=10 p=.5 (RBP)", r, dict(p=0.5))):
        model = browsing_model(grades, **params)
        _, steps = model.simulate(users, seed=0, return_steps=True)
        total = int(steps.sum())
        times = interleaved({e: (lambda e=e, model=model: model.simulate(users, seed=0, engine=e)) for e in engines},
                            rounds=rounds)
        rates = ", ".join(f"{e} {total / min(ts):.3g} user-steps/s" for e, ts in times.items())
        print(f"  {label}: {total / users:.2f} steps/user; best {rates}")
        if len(engines) > 1:
            r_ = ratios(times, "numba", "numpy")
            print(f"    time numba / numpy: best {min(r_):.3f}, per-round range {min(r_):.3f}-{max(r_):.3f}")


def bench_trec8(rounds):
    data = shared_data_dir()
    if data is None:
        print("TREC-8: shared data not found (set IRMEASURES_MARKOV_DATA); skipped")
        return
    import pytrec_eval

    from irmeasures_markov.io import read_trec_qrels, read_trec_run
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    print(f"TREC-8: {len(runs)} runs, {sum(len(r) for r in runs)} (run, topic) rankings, same parsed dicts "
          f"for both tools; each round evaluates every run once per contender")

    def run_pytrec():
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
        for run in runs:
            ev.evaluate(run)

    measures = {
        "PH(browse='RWBM',p=0.5,q=0.25) order 2": imm.PH(**RWBM),
        "PH(...,loss=0.25) order 2": imm.PH(**RWBM, loss=0.25),
        "PH(...,loss=0.25,order=1)": imm.PH(**RWBM, loss=0.25, order=1),
        "PH(...,p_rel=0.3,q_rel=0.4,loss=0.25,order=1)": imm.PH(**RWBM, p_rel=0.3, q_rel=0.4, loss=0.25, order=1),
        "PH(user='AP')": imm.PH(user="AP"),
    }

    def ours(m):
        def run_ours():
            ev = imm.PROVIDER.evaluator([m], qrels)
            for run in runs:
                ev.values(run)
        return run_ours

    contenders = {"pytrec_eval map": run_pytrec}
    contenders.update({label: ours(m) for label, m in measures.items()})
    times = interleaved(contenders, rounds=rounds)
    print_report(times, peer="pytrec_eval map",
                 targets={"PH(browse='RWBM',p=0.5,q=0.25) order 2": 2.0, "PH(...,loss=0.25) order 2": 2.0,
                          "PH(...,loss=0.25,order=1)": 1.0})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-trec", action="store_true")
    ap.add_argument("--skip-simulation", action="store_true")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be at least 5 (interleaved rounds give the ratio's range)")
    bench_single(args.rounds)
    if not args.skip_simulation:
        bench_simulation(args.rounds)
    if not args.skip_trec:
        bench_trec8(args.rounds)


if __name__ == "__main__":
    sys.exit(main())
