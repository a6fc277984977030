"""Benchmark: many short rankings (MS MARCO style), every family against pytrec_eval's `map`.

    python integration/bench/bench_queries.py [--sizes 100x100,1000x100,10000x100,100000x100,7000x1000]
                                        [--rounds 5] [--no-memory] [--no-time]
                                        [--memory-sizes 100000x100] [--memory-families map,MP,...]

Synthetic inputs, seeded: ``Q x N`` is Q queries of N retrieved documents
each (scores with 3 decimals, so ties occur), 10 judged documents per query
(grades 0-2, about a third relevant, some not retrieved), docids such as
MS MARCO's numeric passage ids.  For each size, the run is evaluated by
pytrec_eval ``map`` and by one measure of each family, interleaved
(integration/bench/benchkit.py): MP (GL_AD_ID), TBG (a length registered for every
document), Carterette M1 (RBP) and P@H (order 2), each through
``irmeasures_markov.RelevanceEvaluator(qrels, [measure]).evaluate(run)``, the
call pytrec_eval's is compared with.  The time of each includes building its
evaluator from the qrels, the qrels index included (the cache of
irmeasures_markov.ranking._cache is emptied before each call: what a user pays
on a first call, and pytrec_eval rebuilds its own each time).  "MP reused"
is MP again with the index an earlier call made for the same qrels object
(what every later call with those qrels pays).

Memory (unless --no-memory): each family, and `map`, is run in a subprocess
of its own on the same inputs; after the inputs are built, the kernel's
peak-RSS mark is reset (``/proc/self/clear_refs``), and the peak reached
while evaluating, above the RSS with the inputs loaded, is reported in
bytes per retrieved document (also tracemalloc's peak, numpy's allocations
included, for our families), for the timed families and MEMORY_ONLY: P@H
order 1, P@H RWBM order 1 with loss, MPcont with TBG time, Carterette
M2-M4 (the qrels index built in the call, as timed).  Memory is measured at
--memory-sizes, else at the --sizes given, else at 100,000 x 100.  Targets:
time ratio MP / map <= 0.8 at 100,000 x 100 (index built in the call); peak
memory of every family <= map's and <= 64 bytes per retrieved document.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit import interleaved, print_report  # noqa: E402

FAMILIES = ("map", "MP", "TBG", "Carterette", "PH")
#: measured for memory only (not timed): the other variants the memory bound covers
MEMORY_ONLY = ("PH1", "PHrw1", "MPcont", "M2", "M3", "M4")
#: MP timed a second way: the qrels index made by an earlier call with the same qrels object, reused
MP_REUSED = "MP reused"


def synthetic(n_queries: int, n_docs: int, seed: int = 0):
    """Qrels and run dicts: n_queries rankings of n_docs documents, 10 judgments per query."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    ids = rng.integers(0, 8_841_823, size=(n_queries, n_docs + 5))
    scores = np.round(rng.normal(10.0, 2.0, size=(n_queries, n_docs)), 3)
    grades = rng.choice([0, 0, 1, 2], size=(n_queries, 10))
    picks = rng.integers(0, n_docs + 5, size=(n_queries, 10))
    for q in range(n_queries):
        qid = str(1_000_000 + q)
        docs = list(dict.fromkeys(map(str, ids[q].tolist())))
        run[qid] = dict(zip(docs[:n_docs], scores[q].tolist()))
        qrels[qid] = {docs[min(j, len(docs) - 1)]: g for j, g in zip(picks[q].tolist(), grades[q].tolist())}
    return qrels, run


def evaluators(qrels, run, memory_only=False):
    """``{family: zero-argument callable evaluating the run}`` (with ``memory_only``, MEMORY_ONLY too)."""
    import pytrec_eval

    import irmeasures_markov as imm
    from irmeasures_markov.ranking import _cache as qrels_cache
    lengths = {d: 50.0 + int(d) % 300 for docs in run.values() for d in docs}
    imm.register_lengths("bench-queries", lengths)
    ours = {"MP": imm.MP, "TBG": imm.TBG(lengths="bench-queries"), "Carterette": imm.M1(dist="RBP"),
            "PH": imm.PH(order=2)}
    if memory_only:
        ours.update({"PH1": imm.PH(order=1), "PHrw1": imm.PH(browse="RWBM", p=0.5, q=0.25, loss=0.25, order=1),
                     "MPcont": imm.MPcont(time="tbg", lengths="bench-queries"),
                     "M2": imm.M2(dist="RBP"), "M3": imm.M3(dist="RBP"), "M4": imm.M4(dist="RBP")})

    def ours_fn(m, reuse=False):
        def run_it():
            if not reuse:
                qrels_cache.clear()  # the qrels index is built inside the call, as a user's first call builds it
            imm.RelevanceEvaluator(qrels, [m]).evaluate(run)
        return run_it

    out = {"map": lambda: pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)}
    out.update({name: ours_fn(m) for name, m in ours.items()})
    if not memory_only:
        out[MP_REUSED] = ours_fn(imm.MP, reuse=True)
    return out


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory_child(family: str, n_queries: int, n_docs: int) -> dict:
    """Peak memory of evaluating one family, above the loaded inputs (run in a subprocess)."""
    qrels, run = synthetic(n_queries, n_docs)
    fns = evaluators(qrels, run, memory_only=True)
    fn = fns[family]
    if family in ("TBG", "MPcont"):
        # the length table is built once per length source and reused by every run: not per-run memory; so is
        # numba's compiled docid probe (when installed), loaded once per process ('auto' uses it from then on)
        # and its machine code, loaded on its first call: loaded first, then called once by this warm-up
        import irmeasures_markov as imm
        from irmeasures_markov.documents import _docid_table as docid_table
        docid_table._compiled_probe()
        imm.PROVIDER.evaluator([imm.TBG(lengths="bench-queries")], qrels).values({q: run[q] for q in list(run)[:1]})
    del fns
    gc.collect()
    base = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    fn()
    peak = _status("VmHWM") - base
    gc.collect()
    traced = None
    if family != "map":  # pytrec_eval's C++ allocations are invisible to tracemalloc
        tracemalloc.start()
        fn()
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    n = n_queries * n_docs
    return {"family": family, "rss_peak": peak, "rss_per_doc": peak / n,
            "traced_per_doc": None if traced is None else traced / n}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=None,
                    help="QxN sizes timed (default 100x100,1000x100,10000x100,100000x100,7000x1000); also the "
                         "sizes of the memory measurement when given without --memory-sizes")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--memory-sizes", default=None,
                    help="sizes at which memory is measured (each family in its own subprocess); default: "
                         "--sizes when given, else 100000x100")
    ap.add_argument("--memory-families", default=",".join(FAMILIES + MEMORY_ONLY),
                    help="families whose memory is measured (PH1 = PH(order=1); MPcont, M2-M4 memory only)")
    ap.add_argument("--memory-child", nargs=3, metavar=("FAMILY", "QUERIES", "DOCS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    # the synthetic qrels have queries without a relevant document: every evaluator made would say so
    warnings.simplefilter("ignore", RuntimeWarning)
    if args.memory_child:
        family, nq, nd = args.memory_child
        print(json.dumps(memory_child(family, int(nq), int(nd))))
        return
    if args.memory_sizes is None:
        args.memory_sizes = args.sizes or "100000x100"
    if args.sizes is None:
        args.sizes = "100x100,1000x100,10000x100,100000x100,7000x1000"
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",") if s]
    if not args.no_time:
        for nq, nd in sizes:
            qrels, run = synthetic(nq, nd)
            fns = evaluators(qrels, run)
            times = interleaved(fns, rounds=args.rounds)
            n = nq * nd
            print(f"\n{nq} queries x {nd} documents ({n:,} retrieved documents)")
            print_report(times, peer="map", targets={"MP": 0.8} if (nq, nd) == (100_000, 100) else None)
            rate = {k: n / min(v) / 1e6 for k, v in times.items()}
            print("  throughput (M docs/s, best round): " + ", ".join(f"{k} {r:.2f}" for k, r in rate.items()))
            del qrels, run, fns
            gc.collect()
    if not args.no_memory:
        for spec in args.memory_sizes.split(","):
            nq, nd = map(int, spec.split("x"))
            print(f"\npeak memory while evaluating {nq} x {nd}, above the loaded inputs (one subprocess each):")
            for family in args.memory_families.split(","):
                t = time.perf_counter()
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", family,
                                      str(nq), str(nd)], capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                traced = "" if r["traced_per_doc"] is None else f", tracemalloc peak {r['traced_per_doc']:.0f} B/doc"
                print(f"  {family:<11} RSS +{r['rss_peak'] / 2 ** 20:7.1f} MiB = {r['rss_per_doc']:5.0f} B/doc"
                      f"{traced}   ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
