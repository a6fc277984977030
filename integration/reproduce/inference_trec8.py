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
* Figures 1(b), 2(a), 2(b): the direct model of relevance (§3.2, PyMC NUTS,
  2 chains × ``--direct-draws``) in both variants (``variant='package'``, the
  package's default, and ``variant='paper'``, the model as published) on the
  top-ranked judgments of ``--direct-runs`` seeded runs (all their pairs; user
  model uniform on ranks 1..10 for P@10, geometric θ = 0.8 to depth 25 for
  RBP), against the same one-sided t-test, and how well its p_ij estimates the
  per-topic measure (Fig. 2a).  ``--direct-runs 0`` skips it (and needs no PyMC).
* Figure 3(a) analogue (corpus effects): every run of ``--corpus-runs`` seeded
  runs split into its four TREC-8 sub-collections by docid prefix (FBIS, FR94,
  FT, LA); P@10 of each run × topic × sub-collection (rows where the run
  retrieved nothing from a sub-collection are left out: unbalanced, as in the
  paper); ``fit_linear_model(effects=['corpus'])`` on that long table against
  the one-sided t-test on the runs' whole P@10.  The sampler is
  ``--corpus-backend`` (default `CORPUS_BACKEND`: fit_linear_model's Gibbs
  backend; ``nuts`` for PyMC's NUTS).  ``--corpus-runs`` defaults to all runs; ``0`` skips it.

    python integration/reproduce/inference_trec8.py [--data-dir ../shared/data] [--n-jobs 2] [--resamples 10000]
                                          [--direct-runs 12] [--direct-draws 300] [--corpus-runs N]
                                          [--corpus-draws 1000] [--corpus-backend gibbs]
                                          [--scheduler ADDRESS|local] [--store DIR]

The discriminative-power table (one cell per measure and test) and the
Bayesian linear model fits (one cell per measure) are :mod:`irmeasures_markov.grid`
cells: on ``--n-jobs`` local processes by default, on a Dask cluster with
``--scheduler`` (``local`` starts a LocalCluster), resumable with ``--store``.
The numbers do not depend on the backend.

Writes docs/inference-trec8.md and docs/figures/inference_fig1_{p10,rbp}.png (Fig. 1 and 2b),
inference_fig2a_rbp.png and inference_fig3a_corpus.png.
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
#: the direct model's variants, drawn side by side (direct_relevance_model(variant=...))
DIRECT_VARIANTS = ("package", "paper")
#: TREC-8's sub-collections by docid prefix (FR94 documents start "FR9")
CORPORA = {"FBIS": "FBIS", "FR94": "FR", "FT": "FT", "LA": "LA"}
#: The sampler of the Figure 3(a) analogue's fit_linear_model: "nuts" is fit_linear_model as it is (PyMC NUTS,
#: no backend keyword); any other value is passed as fit_linear_model(backend=...).  "gibbs" because it converges
#: on all 129 runs in seconds, where NUTS diverged on 4.
CORPUS_BACKEND = "gibbs"


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


def agreement(pvals, probs):
    """How a posterior P(A > B) agrees with the one-sided p-value: Pearson r, mean |P − 0.5| against
    mean |(1 − p) − 0.5| (their difference is the shrinkage towards 0.5: positive = more conservative),
    and the share of pairs with P > 0.95 against the share with p < 0.05."""
    pvals, probs = np.asarray(pvals), np.asarray(probs)
    return {"r": float(np.corrcoef(pvals, probs)[0, 1]), "dist_p": float(np.mean(np.abs(0.5 - pvals))),
            "dist_post": float(np.mean(np.abs(probs - 0.5))),
            "shrinkage": float(np.mean(np.abs(0.5 - pvals)) - np.mean(np.abs(probs - 0.5))),
            "share_p": float(np.mean(pvals < 0.05)), "share_post": float(np.mean(probs > 0.95))}


def seeded_runs(systems, n_runs, seed=0):
    """``n_runs`` run names drawn without replacement (seeded), in the matrix's order."""
    rng = np.random.default_rng(seed)
    return [systems[i] for i in sorted(rng.choice(len(systems), n_runs, replace=False))]


def figure1_direct(mats, qrels, runs, labels, n_runs=33, seed=0, progress=True, variants=DIRECT_VARIANTS,
                   draws=500):
    """Direct model of relevance on ``n_runs`` seeded runs, per label and variant: {'pvals', 'probs', 'r',
    'measure_r' (posterior p_ij against the per-topic measure), 'cells', 'measure', 'divergences',
    'max_rhat', 'seconds'} over all pairs of those runs."""
    from irmeasures_markov.inference import direct_relevance_model
    names = seeded_runs(mats[labels[0]].systems, n_runs, seed)
    pairs = list(combinations(range(n_runs), 2))
    out = {}
    for lab in labels:
        user, depth = DIRECT_USERS[lab]
        sm = mats[lab]
        y = sm.values[:, [sm.systems.index(n) for n in names]]
        x = judgments(qrels, runs, names, sm.topics, depth)
        pvals = np.array([paired_t_test(y[:, a], y[:, b], "greater").pvalue for a, b in pairs])
        for variant in variants:
            t = time.perf_counter()
            post = direct_relevance_model(x, systems=names, topics=sm.topics, user=user, theta=0.8, draws=draws,
                                          tune=draws, chains=2, cores=2, seed=seed, progress=progress,
                                          variant=variant)
            beta = post.system_effects
            probs = np.array([np.mean(beta[:, a] > beta[:, b]) for a, b in pairs])
            out[lab, variant] = {"pvals": pvals, "probs": probs, "r": float(np.corrcoef(pvals, probs)[0, 1]),
                                 "measure_r": float(np.corrcoef(post.cell_estimates.ravel(), y.ravel())[0, 1]),
                                 "cells": post.cell_estimates, "measure": y, "divergences": post.divergences,
                                 "max_rhat": post.max_rhat, "seconds": time.perf_counter() - t}
    return out


def corpus_table(qrels, runs, names, topics, depth=10):
    """Long table of P@``depth`` per run × topic × sub-collection (the run restricted to the sub-collection's
    documents, in the run's order); rows where the run retrieved nothing there are left out."""
    rows = {"system": [], "topic": [], "corpus": [], "value": []}
    for corpus, prefix in CORPORA.items():
        sub = {n: {q: {d: sc for d, sc in runs[n].get(q, {}).items() if d.startswith(prefix)} for q in topics}
               for n in names}
        x = judgments(qrels, sub, names, topics, depth)
        for j, n in enumerate(names):
            for i, q in enumerate(topics):
                if sub[n][q]:
                    rows["system"].append(n)
                    rows["topic"].append(q)
                    rows["corpus"].append(corpus)
                    rows["value"].append(float(x[i, j].mean()))
    return rows


def figure3a(mats, qrels, runs, n_runs=None, seed=0, progress=True, draws=1000, backend=CORPUS_BACKEND,
             target_accept=0.95):
    """The Figure 3(a) analogue on ``n_runs`` seeded runs (None: all): the one-sided t-test on the runs' P@10 against
    P(β_A > β_B) of the linear model with a corpus effect; {'pvals', 'probs', 'r', 'rows', 'divergences',
    'max_rhat', 'seconds', 'corpus_effects'}."""
    from irmeasures_markov.inference import fit_linear_model
    sm = mats["P@10"]
    n_runs = len(sm.systems) if n_runs is None else n_runs
    names = seeded_runs(sm.systems, n_runs, seed + 1)
    data = corpus_table(qrels, runs, names, sm.topics)
    kwargs = {"cores": 2, "target_accept": target_accept} if backend == "nuts" else {"backend": backend}
    chains = 2 if backend == "nuts" else 4       # Gibbs chains cost no process each
    t = time.perf_counter()
    post = fit_linear_model(data, effects=["corpus"], draws=draws, tune=draws, chains=chains, seed=seed,
                            progress=progress, **kwargs)
    pairs = list(combinations(range(n_runs), 2))
    y = sm.values[:, [sm.systems.index(n) for n in names]]
    pvals = np.array([paired_t_test(y[:, a], y[:, b], "greater").pvalue for a, b in pairs])
    beta = post.system_effects
    probs = np.array([np.mean(beta[:, a] > beta[:, b]) for a, b in pairs])
    corpus = post.idata.posterior["corpus"].values.reshape(-1, len(CORPORA)).mean(axis=0)
    return {"pvals": pvals, "probs": probs, "r": float(np.corrcoef(pvals, probs)[0, 1]), "rows": len(data["value"]),
            "runs": names, "chains": chains, "divergences": post.divergences, "max_rhat": post.max_rhat,
            "seconds": time.perf_counter() - t, "corpus_effects": dict(zip(post_levels(data), corpus))}


def post_levels(data):
    """The corpus levels in fit_linear_model's order (first appearance)."""
    return list(dict.fromkeys(data["corpus"]))


def _scatter(ax, pv, pr, title, ylabel):
    """One p-value against posterior panel, with the P = 1 − p line."""
    ax.scatter(pv, pr, s=8, alpha=0.6)
    ax.plot([0, 1], [1, 0], "k--", lw=0.8, label="P = 1 − p")
    ax.set_xlabel("one-sided paired t-test p-value (A > B)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right")


def _plt():
    """matplotlib without a display."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path):
    """Write a figure, creating its folder."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    _plt().close(fig)


def plot_figure1(pvals, probs, corr, label, path, direct=None):
    """Panel (a): the linear model; then one panel per direct-model variant (``direct``: {variant: result})."""
    plt = _plt()
    panels = [(pvals, probs, f"(a) TREC-8 {label}: linear model,\n500 random run pairs (r = {corr:.3f})",
               "posterior P(β_A > β_B), linear model")]
    for variant, d in (direct or {}).items():
        n = int(round((1 + np.sqrt(1 + 8 * len(d["pvals"]))) / 2))
        panels.append((d["pvals"], d["probs"], f"(b) {label}: direct model, variant='{variant}',\nall "
                       f"{len(d['pvals'])} pairs of {n} runs (r = {d['r']:.3f})",
                       f"posterior P(β_A > β_B), direct model ({variant})"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 5), squeeze=False)
    for ax, (pv, pr, title, ylabel) in zip(axes[0], panels):
        _scatter(ax, pv, pr, title, ylabel)
    _save(fig, path)


def plot_figure2a(direct, label, path):
    """Fig. 2(a): the posterior mean p_ij against the per-topic measure, one panel per variant."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(direct), figsize=(5 * len(direct), 5), squeeze=False)
    for ax, (variant, d) in zip(axes[0], direct.items()):
        ax.scatter(d["measure"].ravel(), d["cells"].ravel(), s=5, alpha=0.4)
        ax.plot([0, 1], [0, 1], "k--", lw=0.8)
        ax.set_xlabel(f"per-topic {label}")
        ax.set_ylabel("posterior mean p_ij")
        ax.set_title(f"(2a) variant='{variant}': r = {d['measure_r']:.3f}", fontsize=9)
    _save(fig, path)


def plot_figure3a(res, path):
    """Fig. 3(a) analogue: t-test p-value against the corpus model's posterior."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 5))
    _scatter(ax, res["pvals"], res["probs"], f"(3a) TREC-8 P@10, corpus effect:\n{len(res['pvals'])} pairs of "
             f"{len(res['runs'])} runs (r = {res['r']:.3f})", "posterior P(β_A > β_B), linear model + corpus")
    _save(fig, path)


def _agreement_rows(name, pvals, probs, extra=""):
    """A markdown row of `agreement`."""
    a = agreement(pvals, probs)
    return (f"| {name} | {len(pvals)} | {a['r']:.3f} | {a['dist_p']:.3f} | {a['dist_post']:.3f} | "
            f"{a['shrinkage']:+.3f} | {a['share_p']:.3f} | {a['share_post']:.3f} |{extra}")


def _diag(d):
    """Divergences and max R-hat as table text."""
    rhat = "—" if d["max_rhat"] is None else f"{d['max_rhat']:.3f}"
    divergences = "none (Gibbs)" if d["divergences"] is None else d["divergences"]
    return f" {divergences} | {rhat} |"


def markdown(table, fig, n_runs, n_topics, resamples, ph_included, direct=None, corpus=None, sizes=None) -> str:
    sizes = sizes or {}
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
    lines += ["", "## Figures 1, 2 and 3(a) of Carterette (2011): t-test p-value vs posterior probability", "",
              "Each row compares the one-sided paired t-test p-value of \"A better than B\" with the posterior "
              "P(β_A > β_B) over the pairs named. *mean \\|1−p−½\\|* and *mean \\|P−½\\|* are how far the two "
              "lie from indifference; *shrinkage* is their difference (positive: the posterior is more "
              "conservative than the t-test). The last two columns are the share of pairs with p < 0.05 and "
              "with P > 0.95.", "",
              "| model | pairs | Pearson r | mean \\|1−p−½\\| | mean \\|P−½\\| | shrinkage | p < 0.05 | "
              "P > 0.95 | divergences | max R-hat |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for lab, (pvals, probs, _corr) in fig.items():
        lines.append(_agreement_rows(f"(1a) linear model, {lab} (Gibbs, 129 runs)", pvals, probs,
                                     " none (Gibbs) | — |"))
    for (lab, variant), d in (direct or {}).items():
        tag = "1b" if lab == "P@10" else "2b"
        lines.append(_agreement_rows(f"({tag}) direct model, {lab}, variant='{variant}'", d["pvals"], d["probs"],
                                     _diag(d)))
    if corpus:
        lines.append(_agreement_rows("(3a) linear model + corpus effect, P@10", corpus["pvals"], corpus["probs"],
                                     _diag(corpus)))
    lines += ["", "Sizes: the linear model (Fig. 1a) over all 129 runs, 500 seeded pairs, Gibbs 4 chains × 1000 "
              "draws."]
    if direct:
        m = len(next(iter(direct.values()))["pvals"])
        n = int(round((1 + np.sqrt(1 + 8 * m)) / 2))
        lines += [f"The direct model of relevance (§3.2; Fig. 1b, 2a, 2b): {n} seeded runs, all {m} pairs, PyMC "
                  f"NUTS 2 chains × {sizes.get('direct_draws', 500)} draws after as many tuning steps; the user "
                  "model weights rank k by p_k (uniform on 1..10 for P@10, geometric θ = 0.8 to depth 25 for "
                  "RBP). Fig. 2(a), how well the posterior mean of p_ij estimates the per-topic measure:", ""]
        for (lab, variant), d in direct.items():
            lines.append(f"* {lab}, variant='{variant}': Pearson r = {d['measure_r']:.3f} between p_ij and the "
                         f"per-topic {lab}.")
    if corpus:
        eff = ", ".join(f"{k} {v:+.3f}" for k, v in corpus["corpus_effects"].items())
        lines += ["", f"The Figure 3(a) analogue: {len(corpus['runs'])} seeded runs split into TREC-8's four "
                  f"sub-collections by docid prefix (FBIS, FR94, FT, LA), P@10 per run × topic × sub-collection "
                  f"({corpus['rows']:,} rows; a run that retrieved nothing from a sub-collection for a topic has no "
                  f"row there), `fit_linear_model(effects=['corpus'])` with "
                  f"{sizes.get('corpus_backend', CORPUS_BACKEND)} {corpus['chains']} chains × "
                  f"{sizes.get('corpus_draws', 1000)} draws after as many discarded"
                  f"{' (target_accept 0.95)' if corpus.get('divergences') is not None else ''}; the t-test is on the "
                  f"runs' whole P@10. Posterior mean corpus "
                  f"effects: {eff}. The package's linear model has one variant (its departures from the paper's "
                  "priors are in [inference.md](inference.md#bayesian-models)), so Fig. 1(a) and 3(a) show it "
                  "alone."]
    lines += ["", "![P@10](figures/inference_fig1_p10.png)", "", "![RBP](figures/inference_fig1_rbp.png)", ""]
    if direct:
        lines += ["![Fig. 2a](figures/inference_fig2a_rbp.png)", ""]
    if corpus:
        lines += ["![Fig. 3a](figures/inference_fig3a_corpus.png)", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--out", default=str(REPO / "docs" / "inference-trec8.md"))
    ap.add_argument("--figures", default=str(REPO / "docs" / "figures"))
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--direct-runs", type=int, default=12,
                    help="runs for the direct model of relevance (PyMC; 0 skips it)")
    ap.add_argument("--direct-draws", type=int, default=300, help="NUTS draws (and tuning steps) per chain")
    ap.add_argument("--direct-variants", default=",".join(DIRECT_VARIANTS),
                    help="comma-separated variants of the direct model")
    ap.add_argument("--corpus-runs", type=int, default=None,
                    help="runs for the Figure 3(a) analogue, split by sub-collection (default all; 0 skips it)")
    ap.add_argument("--corpus-draws", type=int, default=1000, help="draws (and tuning steps) per chain")
    ap.add_argument("--corpus-backend", default=CORPUS_BACKEND,
                    help="'nuts' (fit_linear_model as it is) or a fit_linear_model backend= value")
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
    variants = tuple(v for v in args.direct_variants.split(",") if v)
    if args.direct_runs > 0:
        direct = figure1_direct(mats, qrels, runs, ["P@10", "RBP(0.8)"], n_runs=args.direct_runs,
                                progress=progress, variants=variants, draws=args.direct_draws)
    corpus = None
    if args.corpus_runs != 0:
        corpus = figure3a(mats, qrels, runs, n_runs=args.corpus_runs, progress=progress, draws=args.corpus_draws,
                          backend=args.corpus_backend)
    figdir = pathlib.Path(args.figures)
    for lab, name in (("P@10", "p10"), ("RBP(0.8)", "rbp")):
        plot_figure1(*fig[lab], lab, figdir / f"inference_fig1_{name}.png",
                     direct=None if direct is None else {v: direct[lab, v] for v in variants})
    if direct is not None:
        plot_figure2a({v: direct["RBP(0.8)", v] for v in variants}, "RBP(0.8)", figdir / "inference_fig2a_rbp.png")
    if corpus is not None:
        plot_figure3a(corpus, figdir / "inference_fig3a_corpus.png")
    seconds = time.perf_counter() - t0
    sizes = {"direct_draws": args.direct_draws, "corpus_draws": args.corpus_draws,
             "corpus_backend": "NUTS" if args.corpus_backend == "nuts" else f"backend={args.corpus_backend!r}"}
    text = markdown(table, fig, len(runs), len(ev.topics), args.resamples, "P@H (RWBM)" in measures, direct,
                    corpus, sizes)
    pathlib.Path(args.out).write_text(text)
    print(table.round(3).to_string())
    for lab, (_, _, corr) in fig.items():
        print(f"{lab}: r(p-value, posterior) = {corr:.3f}")
    for (lab, variant), d in (direct or {}).items():
        a = agreement(d["pvals"], d["probs"])
        print(f"{lab}, direct model ({variant}): r = {d['r']:.3f}; shrinkage {a['shrinkage']:+.4f}; "
              f"P>0.95 {a['share_post']:.3f} vs p<0.05 {a['share_p']:.3f}; r(p_ij, measure) = {d['measure_r']:.3f}; "
              f"{d['divergences']} divergences, max R-hat {d['max_rhat']}; {d['seconds']:.0f} s")
    if corpus:
        print(f"corpus model: r = {corpus['r']:.3f}; {corpus['divergences']} divergences, max R-hat "
              f"{corpus['max_rhat']}; {corpus['seconds']:.0f} s")
    print(f"total {seconds:.0f} s; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
