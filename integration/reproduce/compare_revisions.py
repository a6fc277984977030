"""Compare every measure of the package between two git revisions, bit for bit, on all TREC-8 runs.

    python integration/reproduce/compare_revisions.py REV_A REV_B [--jobs N] [--runs N] [--columns-b]
        [--columns-engine auto|dict|numba]

Each revision is exported (``git archive``) into a temporary directory.  Worker
processes, each with ``PYTHONPATH`` set to one export, evaluate the same list
of measures (every family and named measure of the package, with several
parameterisations each, plus a few ir_measures measures as controls) on every
run of TREC-8, query by query, through public entry points only
(``ir_measures.iter_calc`` after ``import irmeasures_markov``, and
``irmeasures_markov.io.read_trec_run`` / ``read_trec_qrels``), so the script
works on the package's old and new layouts alike.  ``--columns-a`` / ``--columns-b`` make that
revision's workers read each run with ``irmeasures_markov.io._run_columns.read_run_columns``
instead (the package's measures then get the columnar run, the ir_measures controls its
``to_dict()``), which checks the columnar path against the dict path bit for bit;
``--columns-engine`` picks how those workers look docids up: ``auto`` (as a user
gets it), ``numba`` (numba imported before the first run, so the compiled
engines run throughout) or ``dict`` (numba made unimportable in those workers,
as in an installation without it).  The values of one measure
form a float64 array (runs x queries, NaN where a run has no value for a
query), saved as ``.npz`` per revision, and the two revisions are compared
bit for bit (the arrays' 64-bit patterns).  Exit status 0 when every value is
identical, 1 otherwise (with the differing measures, their counts of differing
values and the largest absolute difference).

The data directory is ``--data``, else ``IRMEASURES_MARKOV_DATA``, else
``../shared/data`` from the repository root; it must hold
``runs/trec8/input.*.gz`` and ``qrels/trec8.qrels.gz``.  The document lengths,
duplicate groups and holding rates some measures need are written (seeded) to
the temporary directory, the same files for both revisions.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import os
import subprocess
import sys
import tempfile
import time
from itertools import chain
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]

MP_MODELS = ["GL_AD_ID", "GL_AD_LID", "GL_OR_ID", "GL_OR_LID", "LO_AD_ID", "LO_AD_LID", "LO_OR_ID", "LO_OR_LID"]
DISTS = ["RBP", "DCG", "RR", "ERR", "AP", "RRR"]
NAMED = ["CDG", "RRG", "RBTR", "ARR", "RRR", "RBAP", "DAG", "RAP", "EPR", "RRAP"]
CONTROLS = ["AP", "P@10", "nDCG@10", "RR", "R@100", "Bpref"]


def measure_strings(aux: Path) -> list[str]:
    """The measures compared, as ir_measures strings (``aux`` holds the lengths, duplicates and rates files)."""
    full, part, dups, rates = (str(aux / n) for n in ("lengths.tsv.gz", "lengths_part.tsv", "dups.tsv", "rates.tsv"))
    out: list[str] = []
    # Markov Precision: every paper model, with recall, cutoffs, judged_only; UNIFORM (AP identity)
    for m in MP_MODELS:
        out += [f"MP(model='{m}')", f"MP(model='{m}',recall=True)", f"MP(model='{m}')@10",
                f"MP(model='{m}',recall=True)@100"]
    out += ["MP(model='UNIFORM')", "MP(model='UNIFORM',recall=True)", "MP(judged_only=True)@20",
            "MP(model='LO_OR_LID',judged_only=True,recall=True)"]
    # continuous time: a rates file; TBG's time model with assumed lengths
    for m in ("GL_AD_ID", "LO_OR_LID", "GL_OR_LID"):
        out += [f"MPcont(model='{m}',rates='{rates}')@100", f"MPcont(model='{m}',rates='{rates}',recall=True)@50"]
    out += [f"MPcont(rates='{rates}')@10",
            "MPcont(time='tbg',default_length=500)", "MPcont(time='tbg',default_length=500,recall=True)@100",
            f"MPcont(time='tbg',lengths='{full}')@100", f"MPcont(model='LO_OR_ID',time='tbg',lengths='{part}',"
            "default_length=350,t_summary=3.0,a=0.02,b=5.0,pc_rel=0.7)",
            f"MPcont(time='tbg',lengths='{full}',duplicates='{dups}')@100"]
    # P@H: browsing models, classical users, gains, cutoffs, orders, tails, losses
    out += ["PH", "PatH(p=0.6)@10", "PH(browse='DFBM')@20", "PH(browse='SFBM',p=0.5)", "PH(browse='SFBM',p=0.9)@100",
            "PH(browse='RWBM',p=0.7,q=0.2)", "PH(browse='RWBM',p=0.5,q=0.25,loss=0.25)",
            "PH(browse='RWBM',p=0.5,q=0.25,loss=0.25,order=1)@100", "PH(browse='RWBM',p=0.6,q=0.3,top='forward')@50",
            "PH(browse='SFBM',p=0.8,p_rel=0.5)", "PH(browse='RWBM',p=0.6,q=0.2,p_rel=0.4,q_rel=0.4)@100",
            "PH(browse='SFBM',p=0.7,f='1')", "PH(browse='SFBM',p=0.7,order=1)", "PH(browse='SFBM',p=0.7,tail='inf')",
            "PH(browse='RWBM',p=0.5,q=0.3,tail='inf')@100", "PH(gain='grade')@10", "PH(gain='exp2',p=0.7)",
            "PH(user='P')@10", "PH(user='P',pad_to_cutoff=True)@20", "PH(user='AP')", "PH(user='AP')@100",
            "PH(user='RBP',p=0.5)", "PH(user='RBP',p=0.5,tail='inf')", "PH(user='DCG')@10", "PH(user='DCG',b=10)",
            "PH(user='ERR')@20", "PH(judged_only=True,p=0.7)@10"]
    # time-biased gain: assumed lengths, a seeded lengths table, duplicates, norms, graded parameters
    out += ["TBG(default_length=500)", "TBG(default_length=500)@10", f"TBG(lengths='{full}')",
            f"TBG(lengths='{full}',norm='constant')@100", f"TBG(lengths='{full}',norm='ideal')",
            f"TBG(lengths='{part}',default_length=250)@100", f"TBG(lengths='{full}',duplicates='{dups}')",
            f"TBG(lengths='{full}',halflife=100,t_summary=3,a=0.02,b=6,pc_rel=0.7,pc_nonrel=0.3,ps_rel=0.8)@50",
            "TBG(default_length=400,pc_by_grade='0:0.4,1:0.6',ps_by_grade='0:0.2,1:0.7')",
            "TBG(default_length=500,judged_only=True)@20"]
    # Carterette's M1-M4 x six distributions, with cutoffs, theta, norm, f; the ten named measures
    for fam in ("M1", "M2", "M3", "M4"):
        for d in DISTS:
            out += [f"{fam}(dist='{d}')", f"{fam}(dist='{d}')@20"]
        out += [f"{fam}(dist='RBP',theta=0.5)", f"{fam}(dist='ERR',theta=0.3)@100", f"{fam}(dist='DCG',norm=True)@10",
                f"{fam}(dist='AP',norm=False)", f"{fam}(dist='AP',norm=True)", f"{fam}(dist='RBP',judged_only=True)@10"]
    out += ["M3(dist='RBP',f='k')", "M3(dist='RR',f='k')@20"]
    for n in NAMED:
        out += [n, f"{n}@10"]
    out += ["RBTR(theta=0.95)", "ARR(f='k')", "EPR(theta=0.5)@100", "RBAP(norm=True)"]
    return out + CONTROLS


def write_aux(aux: Path, qrels: Path, runs: list[Path]) -> None:
    """Seeded lengths (full and ~90 % tables), duplicate groups and holding rates for the measures that need them."""
    docids: set[str] = set()
    for path in [qrels, *runs]:
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
            docids.update(line.split()[2] for line in f if line.strip())
    ordered = sorted(docids)
    rng = np.random.default_rng(20261124)
    lengths = rng.integers(20, 3000, size=len(ordered))
    with gzip.open(aux / "lengths.tsv.gz", "wt", encoding="utf-8") as f:
        f.writelines(f"{d}\t{n}\n" for d, n in zip(ordered, lengths, strict=True))
    keep = rng.random(len(ordered)) < 0.9
    with open(aux / "lengths_part.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{d}\t{n}\n" for d, n, k in zip(ordered, lengths, keep, strict=True) if k)
    dup = rng.random(len(ordered)) < 0.05
    groups = rng.integers(0, 2000, size=len(ordered))
    with open(aux / "dups.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{d}\tg{g}\n" for d, g, k in zip(ordered, groups, dup, strict=True) if k)
    mu = rng.uniform(0.05, 1.5, size=1000)
    with open(aux / "rates.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{r}\t{float(m)!r}\n" for r, m in enumerate(mu, start=1))


# ---- worker: runs inside a subprocess whose PYTHONPATH is one exported revision -------------------------

COLUMNS_MODULE = "irmeasures_markov.io._run_columns"
#: ``--columns-engine``: how the columns' workers look docids up (see the module docstring)
COLUMN_ENGINES = ("auto", "dict", "numba")
#: put first on a ``dict`` worker's path: numba cannot be imported there
_NO_NUMBA = "raise ImportError('numba is made unimportable here by compare_revisions.py --columns-engine dict')\n"


def run_reader(columns: str | None):
    """``(read, as_dict)``: the worker's run reader and what gives the ir_measures controls a dict of its run.

    ``columns`` (one of :data:`COLUMN_ENGINES`): read with ``read_run_columns`` of :data:`COLUMNS_MODULE`
    (exits with a message naming the revision's package when it has none), numba imported first for
    ``'numba'``; None: ``irmeasures_markov.io.read_trec_run``.
    """
    if columns is None:
        from irmeasures_markov.io import read_trec_run
        return read_trec_run, lambda run: run
    import importlib
    if columns == "numba":
        import numba  # noqa: F401  (loaded: every 'auto' engine of the package takes the compiled kernels)
    try:
        read = importlib.import_module(COLUMNS_MODULE).read_run_columns
    except (ImportError, AttributeError) as exc:
        import irmeasures_markov
        sys.exit(f"--columns: the revision at {Path(irmeasures_markov.__file__).parent} has no "
                 f"{COLUMNS_MODULE}.read_run_columns ({exc}); give it to a revision that has the columnar reader")
    return read, lambda run: run.to_dict()


def worker(export: Path, aux: Path, qrels_path: Path, run_paths: list[Path], out: Path,
           columns: str | None = None) -> None:
    import ir_measures

    import irmeasures_markov
    from irmeasures_markov.io import read_trec_qrels
    where = Path(irmeasures_markov.__file__).resolve()
    if export.resolve() not in where.parents:
        sys.exit(f"worker imported irmeasures_markov from {where}, not from the export {export}")
    read_run, as_dict = run_reader(columns)
    names, parsed, controls = [], [], []
    strings = measure_strings(aux)
    for k, s in enumerate(strings):  # a string equal to an earlier one (a default spelled out) is dropped
        m = ir_measures.parse_measure(s)
        if m not in parsed:
            names.append(s.replace(str(aux), "<aux>"))   # the same name in both revisions' temporary paths
            parsed.append(m)
            if k >= len(strings) - len(CONTROLS):
                controls.append(m)
    # the package's measures, then the ir_measures controls (which need a dict), in both modes alike
    groups = [[m for m in parsed if m not in controls], controls]
    by_measure = {m: i for i, m in enumerate(parsed)}
    qrels = read_trec_qrels(qrels_path)
    qids = sorted(qrels)
    qindex = {q: j for j, q in enumerate(qids)}
    values = np.full((len(names), len(run_paths), len(qids)), np.nan)
    extra: dict[tuple[int, int, str], float] = {}
    for r, path in enumerate(run_paths):
        run = read_run(path)
        metrics = chain(ir_measures.iter_calc(groups[0], qrels, run),
                        ir_measures.iter_calc(groups[1], qrels, as_dict(run)))
        for metric in metrics:
            i = by_measure[metric.measure]
            j = qindex.get(metric.query_id)
            if j is None:  # a value for a query without judgments (should not happen): kept apart
                extra[(i, r, metric.query_id)] = float(metric.value)
            else:
                values[i, r, j] = metric.value
    np.savez(out, values=values, names=np.array(names), runs=np.array([p.name for p in run_paths]),
             qids=np.array(qids), extra=np.array(sorted((names[i], run_paths[r].name, q, v)
                                                        for (i, r, q), v in extra.items()), dtype=object))


# ---- driver ---------------------------------------------------------------------------------------------

def export_revision(rev: str, dest: Path) -> str:
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         check=True, capture_output=True, text=True).stdout.strip()
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {rev} failed")
    return sha


def worker_command(python: str, export: Path, aux: Path, qrels: Path, chunk: list[Path], out: Path,
                   columns: str | None = None) -> list[str]:
    """The command line of one worker (``columns``, an engine: it reads the runs with ``read_run_columns``)."""
    return [python, str(Path(__file__).resolve()), "--worker", *([f"--columns={columns}"] if columns else []),
            str(export), str(aux), str(qrels), str(out), *map(str, chunk)]


def worker_main(argv: list[str]) -> None:
    """Run a worker from the arguments :func:`worker_command` gives after ``--worker``."""
    columns = argv[0].partition("=")[2] if argv and argv[0].startswith("--columns=") else None
    export, aux, qrels, out, *chunk = argv[1:] if columns else argv
    worker(Path(export), Path(aux), Path(qrels), [Path(p) for p in chunk], Path(out), columns)


def worker_path(export: Path, columns: str | None) -> str:
    """A worker's ``PYTHONPATH``: the export, after a directory whose ``numba`` cannot be imported for
    ``columns == 'dict'``."""
    if columns != "dict":
        return str(export)
    blocked = export.parent / "no-numba"
    blocked.mkdir(exist_ok=True)
    (blocked / "numba.py").write_text(_NO_NUMBA, encoding="utf-8")
    return os.pathsep.join([str(blocked), str(export)])


def run_chunk(export: Path, aux: Path, qrels: Path, chunk: list[Path], out: Path, python: str,
              columns: str | None = None) -> tuple[Path, float]:
    t0 = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=worker_path(export, columns), PYTHONHASHSEED="0")
    cmd = worker_command(python, export, aux, qrels, chunk, out, columns)
    proc = subprocess.run(cmd, env=env, cwd=str(export), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker on {export.name} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return out, time.perf_counter() - t0


def merge(parts: list[Path], dest: Path) -> dict[str, np.ndarray]:
    loaded = [np.load(p, allow_pickle=True) for p in parts]
    names = [str(n) for n in loaded[0]["names"]]
    qids = loaded[0]["qids"]
    for d in loaded[1:]:
        assert [str(n) for n in d["names"]] == names and np.array_equal(d["qids"], qids)
    values = np.concatenate([d["values"] for d in loaded], axis=1)
    runs = np.concatenate([d["runs"] for d in loaded])
    extra = [tuple(e) for d in loaded for e in d["extra"]]
    arrays = {n: values[i] for i, n in enumerate(names)}
    np.savez(dest, **{f"{i:03d}": values[i] for i in range(len(names))}, names=np.array(names), runs=runs,
             qids=qids)
    arrays["__runs__"], arrays["__qids__"] = runs, qids
    arrays["__extra__"] = np.array([repr(e) for e in sorted(extra)])
    return arrays


def compare(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> int:
    for key in ("__runs__", "__qids__", "__extra__"):
        if not np.array_equal(a[key], b[key]):
            print(f"DIFFERENT {key.strip('_')}: {a[key][:5]} ... vs {b[key][:5]} ...")
            return 1
    differing = 0
    names = [n for n in a if not n.startswith("__")]
    for name in names:
        x, y = a[name], b[name]
        same_bits = x.shape == y.shape and np.array_equal(x.view(np.uint64), y.view(np.uint64))
        if same_bits:
            continue
        differing += 1
        if x.shape != y.shape:
            print(f"DIFFERENT {name}: shapes {x.shape} vs {y.shape}")
            continue
        bits = x.view(np.uint64) != y.view(np.uint64)
        nan_mismatch = np.isnan(x) != np.isnan(y)
        both = ~np.isnan(x) & ~np.isnan(y)
        diff = np.abs(x[both] - y[both])
        print(f"DIFFERENT {name}: {int(bits.sum())} of {x.size} values differ in their bits "
              f"({int(nan_mismatch.sum())} present in one revision only), "
              f"max abs difference {diff.max() if diff.size else 0.0:.3g}, "
              f"equal as numbers (np.array_equal, equal_nan): {np.array_equal(x, y, equal_nan=True)}")
    n_values = sum(int(np.count_nonzero(~np.isnan(a[n]))) for n in names)
    if differing:
        print(f"{differing} of {len(names)} measures differ")
        return 1
    print(f"IDENTICAL: {len(names)} measures x {len(a['__runs__'])} runs x {len(a['__qids__'])} queries "
          f"({n_values} values), bit for bit")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--data", type=Path, default=None, help="data directory (default: IRMEASURES_MARKOV_DATA, "
                    "else ../shared/data from the repository root)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel worker processes")
    ap.add_argument("--runs", type=int, default=None, help="only the first N runs (a quick check)")
    ap.add_argument("--chunks", type=int, default=None, help="work units per revision (default 2 x jobs)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the two .npz files in this directory")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the workers (default: this one)")
    ap.add_argument("--columns-a", action="store_true", help="REV_A's workers read runs with "
                    f"{COLUMNS_MODULE}.read_run_columns instead of read_trec_run")
    ap.add_argument("--columns-b", action="store_true", help="REV_B's workers read runs with "
                    f"{COLUMNS_MODULE}.read_run_columns instead of read_trec_run")
    ap.add_argument("--columns-engine", choices=COLUMN_ENGINES, default="auto",
                    help="docid lookups of the workers that read columns: as a user gets them (auto), with numba "
                    "imported first (numba), or with numba unimportable (dict)")
    args = ap.parse_args(argv)
    data = args.data or Path(os.environ.get("IRMEASURES_MARKOV_DATA") or REPO.parent / "shared" / "data")
    qrels = data / "qrels" / "trec8.qrels.gz"
    runs = sorted((data / "runs" / "trec8").glob("input.*.gz"))
    if not qrels.is_file() or not runs:
        print(f"TREC-8 data not found under {data} (pass --data or set IRMEASURES_MARKOV_DATA)", file=sys.stderr)
        return 2
    runs = runs[:args.runs] if args.runs else runs
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compare_revisions.") as tmp:
        tmp = Path(tmp)
        shas = {}
        columns = {t: args.columns_engine if c else None for t, c in (("a", args.columns_a), ("b", args.columns_b))}
        for tag, rev in (("a", args.rev_a), ("b", args.rev_b)):
            shas[tag] = export_revision(rev, tmp / tag)
        aux = tmp / "aux"
        aux.mkdir()
        write_aux(aux, qrels, runs)
        print(f"{args.rev_a} = {shas['a'][:12]}, {args.rev_b} = {shas['b'][:12]}; {len(runs)} runs, "
              f"{len(measure_strings(aux))} measure strings, {args.jobs} processes"
              f"{''.join(f'; {t.upper()} reads columns (engine {c})' for t, c in columns.items() if c)} "
              f"(set-up {time.perf_counter() - t0:.1f} s)", flush=True)
        n_chunks = max(1, min(len(runs), args.chunks or 2 * args.jobs))
        chunks = [runs[k::n_chunks] for k in range(n_chunks)]
        chunks = [sorted(c) for c in chunks if c]
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for k, chunk in enumerate(chunks):  # interleave the revisions so both finish together
                for tag in ("a", "b"):
                    out = tmp / f"{tag}.{k:03d}.npz"
                    jobs[pool.submit(run_chunk, tmp / tag, aux, qrels, chunk, out, args.python, columns[tag])] = tag
            busy = {"a": 0.0, "b": 0.0}
            for fut in concurrent.futures.as_completed(jobs):
                _, seconds = fut.result()
                busy[jobs[fut]] += seconds
        merged = {}
        for tag in ("a", "b"):
            parts = [tmp / f"{tag}.{k:03d}.npz" for k in range(len(chunks))]
            dest = (args.keep / f"{tag}-{shas[tag][:12]}.npz") if args.keep else tmp / f"{tag}.npz"
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
            merged[tag] = merge(parts, dest)
        print(f"evaluation: {busy['a']:.1f} s ({args.rev_a}) + {busy['b']:.1f} s ({args.rev_b}) of worker time; "
              f"wall time {time.perf_counter() - t0:.1f} s", flush=True)
        status = compare(merged["a"], merged["b"])
    print(f"total {time.perf_counter() - t0:.1f} s")
    return status


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
    else:
        sys.exit(main())
