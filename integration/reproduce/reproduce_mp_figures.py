"""Reproduce Figures 3 and 4 of the MP paper (Ferrante, Ferro & Maistro, SIGIR 2014) on TREC-8.

Pool downsampling after Buckley & Voorhees (2004): for each pool size
R% in 90, 70, 50, 30, 10 the qrels keep a seeded random R% of each topic's
relevant and non-relevant judged documents (at least 1 relevant and 10
non-relevant, nested pools), and all runs are re-evaluated on the same topics.

* Figure 3: pool size (x) vs. the measure averaged over topics and runs (y);
* Figure 4: pool size (x) vs. Kendall's τ-b between the run rankings on the
  full pool and on the reduced pool (y).

Measures: AP, P@10, Rprec, bpref, RBP(p=0.8) and, with and without @Rec(T),
a global and a local MP model on all documents (GL_AD_ID, LO_AD_ID): the
paper's text says its TREC-8 panels show GL and LO_AD models, but not whether
ID or LID (LO_AD_ID and LO_AD_LID coincide, its footnote 4).

The paper gives these figures only as plots, so what can be compared is its
qualitative findings (§5.3-5.4): :func:`findings` checks each one against the
numbers and the document says which are reproduced and which are not.  As
the τ on a small pool depends much on the random pool, :func:`sensitivity`
repeats the 30% and 10% pools with other seeds for every GL model with
@Rec(T).

Usage (from the repository root)::

    python integration/reproduce/reproduce_mp_figures.py [--data-dir ../shared/data] [--n-jobs 2] [--seed 0]
        [--seeds 5] [--scheduler ADDRESS|local] [--store DIR] [--no-progress]

Every (run, pool) evaluation is a cell of one :mod:`irmeasures_markov.grid`
grid: on local processes by default, on a Dask cluster with ``--scheduler``
(``local`` starts a LocalCluster of ``--n-jobs`` workers; the workers read
the run files themselves), and resumable with ``--store`` (a Parquet
directory: a rerun computes only missing cells).  The numbers do not depend
on the backend.

Writes docs/figures/mp_fig3_trec8.png, docs/figures/mp_fig4_trec8.png and
docs/mp-figures-trec8.md (the plotted numbers as tables, the findings check).
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from irmeasures_markov.experiments import evaluate_grid, pool_reduction  # noqa: E402
from irmeasures_markov.experiments._pools import reduction_of  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from reproduce_mp_tables import load_trec8  # noqa: E402

PERCENTS = (90, 70, 50, 30, 10)

MEASURES = {
    "AP": "AP", "P@10": "P@10", "Rprec": "Rprec", "bpref": "Bpref", "RBP": "RBP(p=0.8,rel=1)",
    "MP LO_AD_ID": "MP(model='LO_AD_ID')", "MP LO_AD_ID@Rec(T)": "MP(model='LO_AD_ID',recall=True)",
    "MP GL_AD_ID": "MP", "MP GL_AD_ID@Rec(T)": "MP(recall=True)",
}

#: Every GL model with @Rec(T) (the paper's "GL models ... provided with the recall base"), for the seed check.
SENSITIVITY_MEASURES = {
    "AP": "AP", "bpref": "Bpref",
    "MP GL_AD_ID@Rec(T)": "MP(recall=True)", "MP GL_AD_LID@Rec(T)": "MP(model='GL_AD_LID',recall=True)",
    "MP GL_OR_ID@Rec(T)": "MP(model='GL_OR_ID',recall=True)",
    "MP GL_OR_LID@Rec(T)": "MP(model='GL_OR_LID',recall=True)",
    "MP LO_AD_ID@Rec(T)": "MP(model='LO_AD_ID',recall=True)",
}
SENSITIVITY_PERCENTS = (30, 10)

#: Two τ values are called close (or "on par", "comparable") when they differ by at most this much.
CLOSE = 0.03
#: A mean score "stays constant" when it stays within this share of its full-pool value.
FLAT = 0.15

STYLE = {  # baselines dashed, MP solid
    "AP": ("k", "--", "o"), "P@10": ("tab:orange", "--", "s"), "Rprec": ("tab:green", "--", "^"),
    "bpref": ("tab:purple", "--", "D"), "RBP": ("tab:brown", "--", "v"),
    "MP LO_AD_ID": ("tab:blue", "-", "o"), "MP LO_AD_ID@Rec(T)": ("tab:blue", "-", "x"),
    "MP GL_AD_ID": ("tab:red", "-", "o"), "MP GL_AD_ID@Rec(T)": ("tab:red", "-", "x"),
}


def plot(result, column, ylabel, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    values = result.mean_scores if column == "mean" else result.tau
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for j, lab in enumerate(result.labels):
        color, ls, marker = STYLE.get(lab, (None, "-", "."))
        ax.plot(result.percents, values[:, j], ls, color=color, marker=marker, label=lab, markersize=5)
    ax.set_xlabel("pool size kept (% of judged documents per topic)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_xticks(result.percents)
    ax.invert_xaxis()  # the paper reads left to right as the pool shrinks
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sensitivity(qrels, runs, seeds, n_jobs=1, progress=True, **grid):
    """{seed: PoolReduction} of :data:`SENSITIVITY_MEASURES` on the 30% and 10% pools for each seed.

    One grid holds every seed's pools, so a cluster works on all of them at
    once; ``grid`` goes to :func:`irmeasures_markov.experiments.evaluate_grid`
    (``backend``, ``store``).
    """
    seeds = list(seeds)
    pools = [100] + [(pc, s) for s in seeds for pc in SENSITIVITY_PERCENTS]
    evs, _ = evaluate_grid(SENSITIVITY_MEASURES, qrels, runs, pools=pools, n_jobs=n_jobs, progress=progress,
                           collection="trec8", desc="seed check", **grid)
    full = evs[(100.0, 0)]
    return {s: reduction_of(full, [evs[(float(pc), s)] for pc in SENSITIVITY_PERCENTS], SENSITIVITY_PERCENTS)
            for s in seeds}


def bpref_gaps(sens):
    """{seed: smallest τ(bpref) − τ(GL model with @Rec(T)) on the 10% pool} over the GL models of the seed check."""
    gl_rec = [x for x in SENSITIVITY_MEASURES if x.startswith("MP GL_")]
    return {seed: min(res.tau[-1, res.labels.index("bpref")] - res.tau[-1, res.labels.index(x)] for x in gl_rec)
            for seed, res in sens.items()}


def _pools(result, rows):
    return ", ".join(f"{result.percents[r]:g}%" for r in rows)


def _span(values):
    values = list(values)
    return f"{min(values):+.4f} to {max(values):+.4f}" if len(values) > 1 else f"{values[0]:+.4f}"


def findings(result, sens=None):
    """The paper's TREC-8 findings (§5.3-5.4) checked on ``result``: a list of (finding, our numbers, verdict).

    Every verdict is computed from the numbers (criteria: :data:`CLOSE`,
    :data:`FLAT`, "almost always" = all pool sizes but one), so the document
    cannot claim more than they show.
    """
    lab = result.labels
    m, t = result.mean_scores, result.tau
    red = range(1, len(result.percents))  # the reduced pools
    last = len(result.percents) - 1
    col = {name: lab.index(name) for name in lab}
    mp = [x for x in lab if x.startswith("MP ")]
    out = []

    falling = ["AP", "Rprec"] + mp
    not_falling = [x for x in falling if not np.all(np.diff(m[:, col[x]]) < 0)]
    out.append((
        "Fig. 3: MP's mean score falls as the pool shrinks, like AP's and Rprec's",
        f"mean strictly decreasing from 100% to 10% for AP, Rprec and the {len(mp)} MP variants; 100% → 10%: "
        + ", ".join(f"{x} {m[0, col[x]]:.4f} → {m[last, col[x]]:.4f}" for x in ("AP", "Rprec", mp[0])),
        "reproduced" if not not_falling else f"not reproduced: {', '.join(not_falling)} not monotone"))

    loss = {x: 1.0 - m[last, col[x]] / m[0, col[x]] for x in lab}
    sharp, others = ("P@10", "RBP"), ["AP", "Rprec"] + mp
    worst_other = max(others, key=loss.get)
    out.append((
        "Fig. 3: P@10 and RBP fall more markedly",
        f"share of the full-pool mean lost at 10%: P@10 {loss['P@10']:.0%}, RBP {loss['RBP']:.0%}; "
        f"at most {loss[worst_other]:.0%} for AP, Rprec and MP ({worst_other})",
        "reproduced" if min(loss[x] for x in sharp) > loss[worst_other] else "not reproduced"))

    jb = col["bpref"]
    drift = max(abs(m[r, jb] - m[0, jb]) for r in red) / m[0, jb]
    out.append((
        "Fig. 3: bpref tends to stay constant",
        f"bpref stays within {drift:.0%} of its full-pool mean ({m[0, jb]:.4f}) at every pool size, while every "
        f"other measure loses at least {min(v for k, v in loss.items() if k != 'bpref'):.0%} by 10%",
        "reproduced" if drift < FLAT else "not reproduced"))

    others_tau = [x for x in lab if x != "bpref"]
    best = [max(others_tau, key=lambda x: t[r, col[x]]) for r in red]
    lost = [r for r, b in zip(red, best) if t[r, col[b]] > t[r, jb]]
    out.append((
        "Fig. 4: bpref is almost always the measure most robust to pool reduction",
        f"bpref has the highest τ at {len(red) - len(lost)} of {len(red)} pool sizes"
        + (f"; not at {_pools(result, lost)} ("
           + ", ".join(f"{best[r - 1]} {t[r, col[best[r - 1]]]:.4f} vs bpref {t[r, jb]:.4f}" for r in lost) + ")"
           if lost else ""),
        "reproduced" if len(lost) <= 1 else "not reproduced"))

    gl, glr, lo, lor = "MP GL_AD_ID", "MP GL_AD_ID@Rec(T)", "MP LO_AD_ID", "MP LO_AD_ID@Rec(T)"
    ja = col["AP"]
    d = [t[r, col[gl]] - t[r, ja] for r in red]
    far = [r for r, x in zip(red, d) if abs(x) > CLOSE]
    out.append((
        "Fig. 4: the GL models perform comparably to AP",
        f"τ(GL_AD_ID) − τ(AP) over the reduced pools: {_span(d)}; beyond ±{CLOSE} at "
        + (_pools(result, far) if far else "no pool size"),
        "reproduced" if not far else
        (f"partly: within ±{CLOSE} of AP at {_pools(result, [r for r in red if r not in far])}, " if len(far) < len(d)
         else "not reproduced: ")
        + f"{'below' if all(d[r - 1] < 0 for r in far) else 'off'} AP by up to "
        f"{max(abs(d[r - 1]) for r in far):.3f} at {_pools(result, far)}"))

    gain = [t[r, col[glr]] - t[r, col[gl]] for r in red]
    out.append((
        "Fig. 4: with @Rec(T) the GL models consistently improve",
        f"τ(GL_AD_ID@Rec(T)) − τ(GL_AD_ID) over the reduced pools: {_span(gain)}",
        "reproduced" if all(x > 0 for x in gain) else "not reproduced"))

    d = [t[r, col[glr]] - t[r, ja] for r in red]
    seeds_ap = []
    if sens:
        seeds_ap = [res.tau[-1, res.labels.index(glr)] - res.tau[-1, res.labels.index("AP")]
                    for res in sens.values()]
    beats = all(x > CLOSE for x in d)
    out.append((
        "Fig. 4 (TREC 8): with @Rec(T) the GL models outperform AP",
        f"τ(GL_AD_ID@Rec(T)) − τ(AP) over the reduced pools: {_span(d)}"
        + (f"; at 10% over {len(seeds_ap)} seeds: {_span(seeds_ap)}" if seeds_ap else ""),
        "reproduced" if beats else
        f"not reproduced: on par with AP (within ±{CLOSE}), not above it" if all(abs(x) <= CLOSE for x in d)
        else "not reproduced"))

    gap = [t[r, jb] - t[r, col[glr]] for r in red]
    near = all(abs(x) <= CLOSE for x in gap)
    numbers = (f"τ(bpref) − τ(GL_AD_ID@Rec(T)): {gap[-1]:.4f} at 10% (τ {t[last, col[glr]]:.4f} vs "
               f"{t[last, jb]:.4f}), {_span(gap)} over the reduced pools")
    if sens:
        per_seed = bpref_gaps(sens)
        numbers += (f"; at 10%, the smallest gap between bpref and any of the 4 GL models with @Rec(T) over seeds "
                    f"{', '.join(map(str, per_seed))}: {_span(per_seed.values())}")
        near_some_seed = any(x <= CLOSE for x in per_seed.values())
    else:
        near_some_seed = False
    out.append((
        "Fig. 4 (TREC 8): with @Rec(T) the GL models perform closely to bpref",
        numbers,
        "reproduced" if near else
        ("not reproduced with this seed; close to bpref for some other random pools (see the seed check)"
         if near_some_seed else "not reproduced")))

    d = [t[r, col[lo]] - t[r, col[gl]] for r in red] + [t[r, col[lor]] - t[r, col[glr]] for r in red]
    out.append((
        "Fig. 4 (TREC 8): the LO models on all documents behave comparably to the GL ones",
        f"τ(LO_AD_ID) − τ(GL_AD_ID), with and without @Rec(T), over the reduced pools: {_span(d)}",
        "reproduced" if all(abs(x) <= CLOSE for x in d) else "not reproduced"))
    return out


def markdown(result, n_runs, n_topics, seed, fig3, fig4, sens=None) -> str:
    head = "| pool % | " + " | ".join(result.labels) + " |"
    sep = "|---|" + "---|" * len(result.labels)

    def rows(values):
        return [f"| {p:g} | " + " | ".join(f"{v:.4f}" for v in row) + " |"
                for p, row in zip(result.percents, values)]

    checks = findings(result, sens)
    n_ok = sum(v == "reproduced" for _, _, v in checks)
    n_partly = sum(v.startswith("partly") for _, _, v in checks)
    lines = [
        "# MP paper, Figures 3 and 4 on TREC-8 (reproduced)",
        "",
        "Generated by `python integration/reproduce/reproduce_mp_figures.py`; do not edit by hand. "
        "How long the script takes: [benchmarks.md](benchmarks.md#the-reproduction-scripts-wall-time).",
        "",
        f"TREC-8 ad hoc, {n_runs} runs, {n_topics} topics. Pools reduced with "
        f"`irmeasures_markov.io._datasets.downsample_qrels(qrels, percent, seed={seed})` (Buckley & Voorhees "
        "2004: per topic a random share of the relevant and of the non-relevant judged documents, at least 1 "
        "relevant and 10 non-relevant; pools are nested). Every run is evaluated on the full pool's topics.",
        "",
        "The paper gives Figures 3 and 4 only as plots: none of their numbers is in this repository, so our "
        "numbers are not compared with the paper's curves, only with the findings its §5.3–5.4 state in words "
        "(checked below). Its text says the TREC-8 panels show global (GL) and local (LO) models on all "
        "documents (AD) but not whether with ID or LID; we plot GL_AD_ID and LO_AD_ID (= LO_AD_LID, the "
        "paper's footnote 4).",
        "",
        "## Figure 3: mean score over topics and runs",
        "",
        f"![Figure 3]({fig3})",
        "",
        head, sep, *rows(result.mean_scores),
        "",
        "## Figure 4: Kendall's τ-b with the full-pool ranking",
        "",
        f"![Figure 4]({fig4})",
        "",
        head, sep, *rows(result.tau),
        "",
        "## The paper's findings, checked",
        "",
        f"Of the {len(checks)} findings of the paper's §5.3–5.4 that concern TREC-8, {n_ok} are reproduced, "
        f"{n_partly} partly and {len(checks) - n_ok - n_partly} not. Each verdict is "
        f"computed by `findings()` in the script from the numbers above: τ values within ±{CLOSE} are called "
        f"close (on par, comparable), a mean score within {FLAT:.0%} of its full-pool value constant, and "
        "\"almost always\" allows one pool size as an exception.",
        "",
        "| the paper | ours | verdict |",
        "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in checks],
        "",
    ]
    if sens:
        labels = list(next(iter(sens.values())).labels)
        at10 = np.array([res.tau[-1] for res in sens.values()])
        ja, jb = labels.index("AP"), labels.index("bpref")
        top = sum(at10[k, jb] >= at10[k].max() for k in range(len(at10)))
        lines += [
            "## How much the τ depends on the random pool",
            "",
            f"The 30% and 10% pools again with seeds {', '.join(map(str, sens))}, for AP, bpref and every GL "
            "model with @Rec(T) (and LO_AD_ID@Rec(T)). As in our figures, each is a single random pool per rate "
            f"(the paper does not say how many it drew). At 10% the τ of AP ranges from {at10[:, ja].min():.4f} "
            f"to {at10[:, ja].max():.4f} over the seeds and that of bpref from {at10[:, jb].min():.4f} to "
            f"{at10[:, jb].max():.4f}; bpref has the highest τ at 10% for {top} of the {len(at10)} seeds.",
        ]
        near = [sd for sd, g in bpref_gaps(sens).items() if g <= CLOSE]
        if near:
            lines.append(f"With seed {', '.join(map(str, near))}, a GL model with @Rec(T) comes within ±{CLOSE} of "
                         "bpref at 10%, so the paper's finding that they perform closely to bpref on TREC 8 "
                         "can hold for one random pool and not for another.")
        else:
            lines.append(f"With none of these seeds does a GL model with @Rec(T) come within ±{CLOSE} of bpref at "
                         "10%.")
        lines.append("")
        for k, pc in enumerate(SENSITIVITY_PERCENTS, start=1):
            lines += [f"τ-b with the full-pool ranking, {pc}% pool:", "",
                      "| seed | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels),
                      *[f"| {sd} | " + " | ".join(f"{v:.4f}" for v in res.tau[k]) + " |" for sd, res in sens.items()],
                      ""]
    return "\n".join(lines)


def run_paths(data_dir, runs):
    """``{name: path}`` of the TREC-8 run files of ``runs``, in the order of ``runs``."""
    from irmeasures_markov.io import collection
    from irmeasures_markov.io._run_files import list_run_files, run_name
    from irmeasures_markov.testing import shared_data_dir
    ddir = pathlib.Path(data_dir) if data_dir else shared_data_dir()
    files = {run_name(f): str(f) for f in list_run_files(ddir / collection("trec8").runs_dir)}
    return {name: files[name] for name in runs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="shared data directory (default: $IRMEASURES_MARKOV_DATA "
                                                     "or ../shared/data)")
    ap.add_argument("--n-jobs", type=int, default=2, help="worker processes, for loading the runs and for "
                                                          "evaluating them (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the pool downsampling (default 0)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds for the check of how τ depends on the random "
                                                         "pool: --seed and the next ones (default 5; 0 skips it)")
    ap.add_argument("--figures", default=str(REPO / "docs" / "figures"), help="output directory for the PNGs")
    ap.add_argument("--out", default=str(REPO / "docs" / "mp-figures-trec8.md"), help="Markdown output")
    ap.add_argument("--scheduler", default=None,
                    help="evaluate on a Dask cluster: a scheduler address (tcp://host:8786), or 'local' for a "
                         "LocalCluster of --n-jobs workers (default: local processes, no Dask)")
    ap.add_argument("--store", default=None, help="Parquet directory keeping finished cells (resumable reruns)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    progress = not args.no_progress
    qrels, runs, _, _ = load_trec8(args.data_dir, progress=progress, n_jobs=args.n_jobs)
    grid = {"store": args.store}
    backend = None
    if args.scheduler:
        from irmeasures_markov.grid._backends import resolve_backend
        backend, _ = resolve_backend(scheduler=args.scheduler, n_jobs=args.n_jobs)
        grid["backend"] = backend
        runs = run_paths(args.data_dir, runs)  # workers read the files; nothing big leaves this process
    try:
        result = pool_reduction(MEASURES, qrels, runs, percents=PERCENTS, seed=args.seed, n_jobs=args.n_jobs,
                                progress=progress, collection="trec8", **grid)
        sens = (sensitivity(qrels, runs, range(args.seed, args.seed + args.seeds), n_jobs=args.n_jobs,
                            progress=progress, **grid) if args.seeds > 0 else None)
    finally:
        if backend is not None:
            backend.close()
    seconds = time.perf_counter() - t0
    figdir = pathlib.Path(args.figures)
    fig3, fig4 = figdir / "mp_fig3_trec8.png", figdir / "mp_fig4_trec8.png"
    plot(result, "mean", "mean score over topics and runs", "TREC-8: pool reduction vs. mean score (MP paper Fig. 3)",
         fig3)
    plot(result, "tau", "Kendall's τ-b with the full-pool ranking",
         "TREC-8: pool reduction vs. rank correlation (MP paper Fig. 4)", fig4)
    out = pathlib.Path(args.out)
    rel = lambda p: p.resolve().relative_to(out.resolve().parent) if p.resolve().is_relative_to(  # noqa: E731
        out.resolve().parent) else p.resolve()
    out.write_text(markdown(result, len(runs), len(result.evaluations[0].topics), args.seed,
                            rel(fig3), rel(fig4), sens))
    mean, tau = result.to_frames()
    print("mean scores\n", mean.round(4).to_string(), "\n\nKendall tau-b with the full pool\n",
          tau.round(4).to_string(), sep="")
    for finding, _, verdict in findings(result, sens):
        print(f"{verdict}: {finding}")
    print(f"total {seconds:.1f} s; wrote {fig3}, {fig4}, {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
