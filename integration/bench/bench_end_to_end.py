"""Benchmark: from 129 TREC-8 run files to MP and AP means, against the I/O floor and the peers.

    python integration/bench/bench_end_to_end.py [--rounds 5] [--runs N]

Times, in one process on the same files (page cache warm), interleaved round by
round (integration/bench/benchkit.py):

* ``floor``: decompress every file (python-isal if importable, else gzip) and
  split its bytes into tokens (``bytes.split``): the least any reader does;
* ``decompress only``: the floor without the split (bytes.split makes a Python
  object per token, which the columnar reader does not);
* ``ours``: the documented fast path, ``run_files.load_run_dir(n_jobs=1)`` +
  ``experiments.evaluate(["MP", "AP"])`` (qrels read inside the call);
* ``ours read only``: ``load_run_dir(n_jobs=1)`` alone, to split read from evaluate;
* ``ours, dicts``: the runs read into dicts (``io.read_trec_run`` per file) +
  the same ``evaluate``: the path of a user who holds dicts;
* ``ours, n_jobs=2``: the same path reading with two worker processes;
* ``pytrec_eval map`` with a plain Python reader (``line.split()`` into dicts),
  when pytrec_eval is importable;
* ``ir_measures``: ``calc_aggregate([AP], qrels, read_trec_run(file))`` per run
  (ir_measures' own readers);
* ``ranx`` when installed: ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate(map)``,
  warm (its numba compilation is timed apart, first call, before the rounds), on
  decompressed copies of the files (ranx reads no gzip), so its time leaves
  decompression out.

Prints best time and range of each, and each contender's ratio to the floor
(best and per-round range).  Exits with a message when the shared data is absent.
"""
import argparse
import glob
import gzip
import os
import sys
import time

from benchkit import format_report, interleaved

from irmeasures_markov.testing import shared_data_dir

try:
    from isal.igzip import decompress as gunzip
    GUNZIP = "isal"
except ImportError:
    gunzip = gzip.decompress
    GUNZIP = "gzip"

FLOOR = "floor (decompress + split)"


def floor(files):
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            n += len(gunzip(fh.read()).split())
    return n


def decompress_only(files):
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            n += len(gunzip(fh.read()))
    return n


def ours(qrels_path, run_dir, n_jobs=1):
    from irmeasures_markov import experiments
    from irmeasures_markov.io import load_run_dir
    runs = load_run_dir(run_dir, progress=False, n_jobs=n_jobs)
    ev = experiments.evaluate(["MP", "AP"], str(qrels_path), runs, progress=False)
    return ev


def ours_dicts(qrels_path, files):
    from irmeasures_markov import experiments
    from irmeasures_markov.io import read_trec_run
    from irmeasures_markov.io._run_files import run_name
    runs = {run_name(f): read_trec_run(f) for f in files}
    return experiments.evaluate(["MP", "AP"], str(qrels_path), runs, progress=False)


def ours_read(run_dir):
    from irmeasures_markov.io import load_run_dir
    return load_run_dir(run_dir, progress=False, n_jobs=1)


def plain_run(path):
    run = {}
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    for line in data.split(b"\n"):
        p = line.split()
        if len(p) == 6:
            run.setdefault(p[0].decode(), {})[p[2].decode()] = float(p[4])
    return run


def plain_qrels(path):
    qrels = {}
    with gzip.open(path, "rb") as fh:
        for line in fh:
            p = line.split()
            if len(p) == 4:
                qrels.setdefault(p[0].decode(), {})[p[2].decode()] = int(p[3])
    return qrels


def pytrec_map(qrels_path, files):
    import pytrec_eval
    ev = pytrec_eval.RelevanceEvaluator(plain_qrels(qrels_path), {"map"})
    means = []
    for f in files:
        res = ev.evaluate(plain_run(f))
        means.append(sum(r["map"] for r in res.values()) / max(len(res), 1))
    return means


def ir_measures_ap(qrels_path, files):
    import ir_measures
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    return [ir_measures.calc_aggregate([ir_measures.AP], qrels, ir_measures.read_trec_run(f)) for f in files]


def decompressed_copies(qrels_path, files):
    """Plain-text copies of the qrels and run files in a temporary directory (for readers without gzip)."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="bench_e2e_plain_")
    out = []
    for f in [qrels_path, *files]:
        dest = os.path.join(tmp, os.path.basename(str(f)).removesuffix(".gz"))
        with open(f, "rb") as fh, open(dest, "wb") as w:
            w.write(gunzip(fh.read()))
        out.append(dest)
    return out[0], out[1:]


def ranx_map(qrels_path, files):
    import ranx
    qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    return [ranx.evaluate(qrels, ranx.Run.from_file(f, kind="trec"), "map") for f in files]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 3)")
    ap.add_argument("--runs", type=int, default=None, help="only the first N run files (default all)")
    ap.add_argument("--only", default=None, help="comma-separated contenders (floor is always timed)")
    args = ap.parse_args()
    if args.rounds < 3:
        ap.error("--rounds must be >= 3")
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    run_dir = data / "runs" / "trec8"
    qrels_path = data / "qrels" / "trec8.qrels.gz"
    files = sorted(glob.glob(str(run_dir / "input.*")))
    if args.runs is not None:
        import shutil
        import tempfile
        tmp = tempfile.mkdtemp(prefix="bench_e2e_")
        for f in files[:args.runs]:
            shutil.copy(f, tmp)
        run_dir = type(run_dir)(tmp)
        files = sorted(glob.glob(str(run_dir / "input.*")))
    if not files or not qrels_path.exists():
        sys.exit(f"no TREC-8 runs or qrels under {data}")
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} run files, {size / 1e6:.0f} MB compressed, gunzip by {GUNZIP}, "
          f"{os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    contenders = {
        FLOOR: lambda: floor(files),
        "decompress only": lambda: decompress_only(files),
        "ours: load_run_dir + evaluate MP AP": lambda: ours(qrels_path, run_dir),
        "ours: load_run_dir only": lambda: ours_read(run_dir),
        "ours, dicts: read_trec_run + evaluate MP AP": lambda: ours_dicts(qrels_path, files),
        "ours, n_jobs=2: load_run_dir + evaluate MP AP": lambda: ours(qrels_path, run_dir, n_jobs=2),
    }
    try:
        import pytrec_eval  # noqa: F401
        contenders["pytrec_eval map, plain reader"] = lambda: pytrec_map(qrels_path, files)
    except ImportError:
        print("pytrec_eval not importable: not timed")
    contenders["ir_measures AP"] = lambda: ir_measures_ap(qrels_path, files)
    try:
        import ranx  # noqa: F401
        plain_qrels_path, plain_files = decompressed_copies(qrels_path, files)
        t0 = time.perf_counter()
        ranx_map(plain_qrels_path, plain_files[:1])
        print(f"ranx cold (numba compilation + first run): {time.perf_counter() - t0:.1f} s; ranx reads no gzip: "
              "it is given decompressed copies (its time leaves decompression out)")
        contenders["ranx map (warm, decompressed files)"] = lambda: ranx_map(plain_qrels_path, plain_files)
    except ImportError:
        print("ranx not installed: not timed")
    if args.only:
        keep = [s.strip() for s in args.only.split(",")]
        contenders = {k: v for k, v in contenders.items() if k == FLOOR or any(s in k for s in keep)}

    times = interleaved(contenders, rounds=args.rounds)
    print(format_report(times, peer=FLOOR, targets={"ours: load_run_dir + evaluate MP AP": 2.0}))


if __name__ == "__main__":
    main()
