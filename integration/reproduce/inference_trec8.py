"""Inference on TREC-8: discriminative power of seven measures and the Figure 1 analogue of Carterette (2011).

* Discriminative power (Smucker & Clarke 2012, Table 2): for each measure, the
  share of the 8,256 pairs of the 129 TREC-8 runs whose difference is
  significant at α = 0.05 (two-sided, no multiple-comparison correction) under
  the paired t-test, the randomization test and the bootstrap test
  (10,000 seeded resamples each).  Measures: AP, P@10, nDCG@10, RBP(p=0.8),
  TBG (assumed document lengths: TREC-8 has none public — every retrieved
  document gets a seeded log-normal length, median 300 words), MP GL_AD_ID
  and P@H under one random-walk browsing model.
* Figure 1 analogue: 500 seeded random pairs of runs; for each, the one-sided
  t-test p-value of "A better than B" against the Bayesian linear model's
  posterior P(β_A > β_B) (one model over all 129 runs, conjugate Gibbs
  sampler, 4 chains × 1000 draws), for P@10 and RBP(0.8), with their correlation.
  Panel (b), as the paper's Figure 1(b): the direct model of relevance (§3.2,
  PyMC NUTS, 2 chains × 500 draws) on the top-ranked judgments of 33 seeded
  runs (all their 528 pairs; user model uniform on ranks 1..10 for P@10,
  geometric θ = 0.8 to depth 25 for RBP), against the same one-sided t-test,
  and how well its p_ij estimates the per-topic measure (the paper's Fig. 2a).
  About a minute; ``--direct-runs 0`` skips it (and needs no PyMC).

    python integration/reproduce/inference_trec8.py [--data-dir ../shared/data] [--n-jobs 2] [--resamples 10000]
                                          [--direct-runs 33] [--scheduler ADDRESS|local] [--store DIR]

The discriminative-power table (one cell per measure and test) and the
Bayesian linear model fits (one cell per measure) are :mod:`irmeasures_markov.grid`
cells: on ``--n-jobs`` local processes by default, on a Dask cluster with
``--scheduler`` (``local`` starts a LocalCluster), resumable with ``--store``.
The numbers do not depend on the backend.

Writes docs/inference-trec8.md and docs/figures/inference_fig1_{p10,rbp}.png.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time
from itertools import combinations

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import ir_measures  # noqa: E402

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.experiments import evaluate  # noqa: E402
from irmeasures_markov.inference import discriminative_power, paired_t_test, score_matrix  # noqa: E402

PH_MODEL = "PH(browse='RWBM',p=0.7,q=0.2)"
#: user model (rank distribution) and judged depth of the direct model per measure
DIRECT_USERS = {"P@10": ("precision", 10), "RBP(0.8)": ("rbp", 25)}


def assumed_lengths(runs, seed=0):
    """Seeded log-normal lengths (median 300 words) for every retrieved document."""
    docids = sorted({d for run in runs.values() for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    return dict(zip(docids, np.round(rng.lognormal(np.log(300), 0.8, len(docids))).tolist()))


def measures_for(runs):
    imm.register_lengths("trec8-assumed-lengths", assumed_lengths(runs))
    out = {"AP": "AP", "P@10": "P@10", "nDCG@10": "nDCG@10", "RBP(0.8)": "RBP(p=0.8,rel=1)",
           "TBG": "TBG(lengths='trec8-assumed-lengths')", "MP GL_AD_ID": "MP"}
    try:
        ir_measures.parse_measure(PH_MODEL)
        out["P@H (RWBM)"] = PH_MODEL
    except Exception:  # P@H not available in this installation
        pass
    return out


def matrices(ev):
    return {lab: score_matrix(ev.values[:, j, :].T, topics=ev.topics, systems=ev.runs)
            for j, lab in enumerate(ev.labels)}


def figure1(mats, labels, n_pairs=500, seed=0, progress=True, **grid):
    """(pvalues, posterior probabilities, correlation) per measure label for seeded random run pairs.

    The Gibbs fits (one per measure) are grid cells; ``grid`` goes to
    :func:`irmeasures_markov.inference._grid.fit_per_collection` (``backend``, ``store``, ``n_jobs``).
    """
    from irmeasures_markov.inference import fit_per_collection
    rng = np.random.default_rng(seed)
    n = mats[labels[0]].n_systems
    pairs = set()
    while len(pairs) < n_pairs:
        a, b = rng.choice(n, 2, replace=False)
        pairs.add((int(a), int(b)))
    pairs = sorted(pairs)
    fits, _ = fit_per_collection({f"trec8 {lab}": mats[lab] for lab in labels}, sampler="gibbs", draws=1000,
                                 tune=1000, chains=4, seed=seed, progress=progress, **grid)
    out = {}
    for lab in labels:
        sm = mats[lab]
        beta = fits[f"trec8 {lab}"].system_effects
        probs = np.array([np.mean(beta[:, a] > beta[:, b]) for a, b in pairs])
        pvals = np.array([paired_t_test(sm.values[:, a], sm.values[:, b], "greater").pvalue for a, b in pairs])
        out[lab] = (pvals, probs, float(np.corrcoef(pvals, probs)[0, 1]))
    return out


def judgments(qrels, runs, names, topics, depth):
    """x[i, j, k] = 1 when the document run j ranks at k + 1 for topic i is relevant (trec_eval order)."""
    from irmeasures_markov.ranking._order import rank_documents
    x = np.zeros((len(topics), len(names), depth))
    for j, name in enumerate(names):
        for i, q in enumerate(topics):
            keys, _ = rank_documents(runs[name].get(q, {}), q)
            rel = qrels.get(q, {})
            top = [float(rel.get(d, 0) >= 1) for d in keys[:depth]]
            x[i, j, :len(top)] = top
    return x


def figure1_direct(mats, qrels, runs, labels, n_runs=33, seed=0, progress=True):
    """Direct model of relevance on ``n_runs`` seeded runs: (pvalues, posterior probabilities, correlation,
    correlation of the posterior p_ij with the per-topic measure) per label, over all pairs of those runs."""
    from irmeasures_markov.inference import direct_relevance_model
    sm0 = mats[labels[0]]
    rng = np.random.default_rng(seed)
    names = [sm0.systems[i] for i in sorted(rng.choice(sm0.n_systems, n_runs, replace=False))]
    pairs = list(combinations(range(n_runs), 2))
    out = {}
    for lab in labels:
        user, depth = DIRECT_USERS[lab]
        sm = mats[lab]
        y = sm.values[:, [sm.systems.index(n) for n in names]]
        x = judgments(qrels, runs, names, sm.topics, depth)
        post = direct_relevance_model(x, systems=names, topics=sm.topics, user=user, theta=0.8, draws=500,
                                      tune=500, chains=2, cores=2, seed=seed, progress=progress)
        beta = post.system_effects
        probs = np.array([np.mean(beta[:, a] > beta[:, b]) for a, b in pairs])
        pvals = np.array([paired_t_test(y[:, a], y[:, b], "greater").pvalue for a, b in pairs])
        out[lab] = (pvals, probs, float(np.corrcoef(pvals, probs)[0, 1]),
                    float(np.corrcoef(post.cell_estimates.ravel(), y.ravel())[0, 1]))
    return out


def plot_figure1(pvals, probs, corr, label, path, direct=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(pvals, probs, corr, "Bayesian linear model", "500 random run pairs")]
    if direct is not None:
        dp, dq, dc, _ = direct
        n = int(round((1 + np.sqrt(1 + 8 * len(dp))) / 2))
        panels.append((dp, dq, dc, "direct model of relevance", f"all {len(dp)} pairs of {n} runs"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 5), squeeze=False)
    for ax, (pv, pr, r, model, what), tag in zip(axes[0], panels, "ab"):
        ax.scatter(pv, pr, s=8, alpha=0.6)
        ax.plot([0, 1], [1, 0], "k--", lw=0.8, label="P = 1 − p")
        ax.set_xlabel("one-sided paired t-test p-value (A > B)")
        ax.set_ylabel(f"posterior P(β_A > β_B) ({model})")
        ax.set_title(f"({tag}) TREC-8 {label}: {what} (r = {r:.3f})", fontsize=10)
        ax.legend(loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(table, fig, n_runs, n_topics, resamples, ph_included, direct=None) -> str:
    lines = [
        "# Inference on TREC-8 (reproduced)",
        "",
        "Generated by `python integration/reproduce/inference_trec8.py`; do not edit by hand. "
        "How long the script takes: [benchmarks.md](benchmarks.md#the-reproduction-scripts-wall-time).",
        "",
        f"TREC-8 ad hoc, {n_runs} runs, {n_topics} topics; {n_runs * (n_runs - 1) // 2} run pairs.",
        "",
        "## Discriminative power",
        "",
        "Share of run pairs significantly different at α = 0.05 (two-sided, no correction), as in the TBG "
        f"paper's Table 2. Randomization and bootstrap use {resamples:,} seeded resamples. TBG uses assumed "
        "document lengths (seeded log-normal, median 300 words): TREC-8 has no public lengths."
        + ("" if ph_included else f" P@H was not available (`{PH_MODEL}` did not parse) and is omitted."),
        "",
        "| measure | " + " | ".join(table.columns) + " |",
        "|---|" + "---|" * len(table.columns),
    ]
    for lab, row in table.iterrows():
        lines.append(f"| {lab} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    lines += ["", "## Figure 1 analogue: t-test p-value vs posterior probability", ""]
    for lab, (_pvals, _probs, corr) in fig.items():
        lines.append(f"* {lab}: Pearson r = {corr:.3f} between the one-sided p-value and P(β_A > β_B) over 500 "
                     "random run pairs (a perfect negative relation would be r = −1).")
    if direct:
        m = len(next(iter(direct.values()))[0])
        n = int(round((1 + np.sqrt(1 + 8 * m)) / 2))
        lines += ["", f"Direct model of relevance (§3.2; panel b), {n} seeded runs, all {m} pairs; the user model "
                  "weights rank k by p_k (uniform on 1..10 for P@10, geometric θ = 0.8 to depth 25 for RBP):", ""]
        for lab, (_, _, corr, mcorr) in direct.items():
            lines.append(f"* {lab}: Pearson r = {corr:.3f} between the one-sided p-value and P(β_A > β_B); "
                         f"the posterior mean of p_ij correlates with the per-topic {lab} at {mcorr:.3f} "
                         "(the paper's Figure 2a).")
    lines += ["", "![P@10](figures/inference_fig1_p10.png) ![RBP](figures/inference_fig1_rbp.png)", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--out", default=str(REPO / "docs" / "inference-trec8.md"))
    ap.add_argument("--figures", default=str(REPO / "docs" / "figures"))
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--direct-runs", type=int, default=33,
                    help="runs for the direct model of relevance (PyMC; 0 skips it)")
    ap.add_argument("--scheduler", default=None,
                    help="run the tests and fits on a Dask cluster: a scheduler address, or 'local' for a "
                         "LocalCluster of --n-jobs workers (default: --n-jobs local processes)")
    ap.add_argument("--store", default=None, help="Parquet directory keeping finished cells (resumable reruns)")
    args = ap.parse_args(argv)
    from reproduce_mp_tables import load_trec8
    t0 = time.perf_counter()
    progress = not args.no_progress
    qrels, runs, _, _ = load_trec8(args.data_dir, progress=progress)
    measures = measures_for(runs)
    ev = evaluate(measures, qrels, runs, n_jobs=args.n_jobs, progress=progress)
    mats = matrices(ev)
    from irmeasures_markov.grid._backends import resolve_backend
    backend, owned = resolve_backend(scheduler=args.scheduler, n_jobs=args.n_jobs)
    try:
        table = discriminative_power(mats, n_resamples=args.resamples, progress=progress, backend=backend,
                                     store=args.store)
        fig = figure1(mats, ["P@10", "RBP(0.8)"], progress=progress, backend=backend, store=args.store)
    finally:
        if owned:
            backend.close()
    direct = None
    if args.direct_runs > 0:
        direct = figure1_direct(mats, qrels, runs, ["P@10", "RBP(0.8)"], n_runs=args.direct_runs,
                                progress=progress)
    figdir = pathlib.Path(args.figures)
    for lab, name in (("P@10", "p10"), ("RBP(0.8)", "rbp")):
        plot_figure1(*fig[lab], lab, figdir / f"inference_fig1_{name}.png",
                     direct=None if direct is None else direct[lab])
    seconds = time.perf_counter() - t0
    text = markdown(table, fig, len(runs), len(ev.topics), args.resamples, "P@H (RWBM)" in measures, direct)
    pathlib.Path(args.out).write_text(text)
    print(table.round(3).to_string())
    for lab, (_, _, corr) in fig.items():
        print(f"{lab}: r(p-value, posterior) = {corr:.3f}")
    for lab, (_, _, corr, mcorr) in (direct or {}).items():
        print(f"{lab}, direct model: r(p-value, posterior) = {corr:.3f}; r(p_ij, measure) = {mcorr:.3f}")
    print(f"total {seconds:.0f} s; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
