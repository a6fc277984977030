"""Reproduce the experimental section of Carterette (SIGIR 2011) on TREC-8, Robust04 and the Yandex log.

B. Carterette. *System effectiveness, user models, and user utility: a conceptual framework for investigation.*
SIGIR 2011, §4–5. TREC-6 and its Waterloo qrels are not here (no assessor-disagreement Table 2); TREC-8 (129
runs, 50 topics) and Robust04 (10 runs, 249 topics) allow the other two robustness experiments:

* Figure 3 analogue — Kendall's τ-b between the run ranking on every topic and on random topic samples
  (``experiments.topic_sample_stability``), for the 24 combinations M1–M4 × six stopping distributions;
* Figure 4 analogue — τ-b between the ranking with the full qrels and with qrels cut to the union of every
  run's top d (``experiments.pool_depth_robustness``; a document outside the cut pool counts as not relevant);
* Figure 2 analogue — where users click on the Yandex WSCD 2012 sample (every click, and the last click, as a
  stopping rank) against the static distributions, and the package's likelihood calibration of each;
* the "negligible" DCG tail of §3 (the term dropped at n = 1000) on the TREC-8 runs.

Usage (from the repository root)::

    python integration/reproduce/reproduce_carterette2011.py [--data-dir ../shared/data] [--n-jobs 2]
        [--collections trec8,robust04] [--runs 0] [--sizes 5,10,...] [--trials 100] [--seed 0]
        [--depths 1,2,5,10,20,50,100] [--no-yandex] [--store DIR] [--figures DIR] [--out FILE] [--no-progress]

Every number on the page comes from fixed seeds and a fixed run order, so the same options write the same page
and figures byte for byte (no timing, no date). Writes docs/carterette-2011.md and
docs/figures/carterette2011-*.png.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time
import warnings

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.experiments import kendall_tau, pool_depth_robustness, topic_sample_stability  # noqa: E402
from irmeasures_markov.io import load_run_dir, read_trec_qrels  # noqa: E402

MODELS = ("M1", "M2", "M3", "M4")
DISTS = ("RBP", "DCG", "RR", "ERR", "AP", "RRR")
#: The paper's 15 measures (its Table 1): the family and tail averages are over these, as in the paper.
PAPER15 = {("M1", "RBP"): "RBP", ("M1", "DCG"): "CDG", ("M1", "RR"): "RRG",
           ("M2", "RBP"): "RBTR", ("M2", "DCG"): "DCG", ("M2", "RR"): "RR",
           ("M3", "ERR"): "ERR", ("M3", "AP"): "ARR", ("M3", "RRR"): "RRR",
           ("M4", "RBP"): "RBAP", ("M4", "DCG"): "DAG", ("M4", "RR"): "RAP", ("M4", "ERR"): "EPR",
           ("M4", "AP"): "AP", ("M4", "RRR"): "RRAP"}
#: Tail classes (our reading of the paper, which does not list them): geometric tails are slim; 1/k² tails (RR
#: over ranks, RRR over relevant ranks) medium; DCG's ≈ 1/(k ln² k) and AP's uniform mass over the relevant
#: documents fat.
TAILS = {"slim": ("RBP", "ERR"), "medium": ("RR", "RRR"), "fat": ("DCG", "AP")}
COLLECTIONS = {"trec8": ("TREC-8", "qrels/trec8.qrels.gz", "runs/trec8"),
               "robust04": ("Robust04", "qrels/robust04.qrels.gz", "runs/robust04")}
DEPTHS = (1, 2, 5, 10, 20, 50, 100)
#: Two family means within this distance are "about equal".
EQUAL = 0.01
#: The paper's bound on the spread between tail classes on topic samples ("a maximum difference of 0.026").
PAPER_TAIL_SPREAD = 0.026
#: Depth-1 τ at least this is "very good" (the paper: τ is "nearly always over 0.6", 0.9 "effectively perfect").
VERY_GOOD = 0.8
#: A family mean over the depths at least this is "quite robust".
ROBUST = 0.9
LOG = "logs/yandex-wscd2012-sample"
RANKS = 10


def label(model: str, dist: str) -> str:
    return f"{model} {dist}"


def measures() -> dict:
    """The 24 combinations, each with the paper's default normalisation (on for M2 and ARR)."""
    return {label(m, d): getattr(imm, m)(dist=d) for m in MODELS for d in DISTS}


def load(data_dir: pathlib.Path, name: str, n_runs: int, n_jobs: int, progress: bool):
    """``(qrels, runs)``; ``n_runs`` > 0 keeps that many runs evenly spaced in name order."""
    _, qpath, rdir = COLLECTIONS[name]
    qrels = read_trec_qrels(data_dir / qpath)
    runs = load_run_dir(data_dir / rdir, progress=progress, n_jobs=n_jobs)
    names = sorted(runs)
    if 0 < n_runs < len(names):
        names = [names[int(i)] for i in np.linspace(0, len(names) - 1, n_runs).round().astype(int)]
    return qrels, {n: runs[n] for n in names}


def nanmean(x, axis=None):
    """``np.nanmean`` without the warning on an all-NaN slice (a measure constant over the runs has τ NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


def group_means(table, groups: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Mean over the columns of each group, row by row (NaN columns left out)."""
    return {g: nanmean(table[cols].to_numpy(), axis=1) for g, cols in groups.items()}


def families() -> dict[str, list[str]]:
    return {m: [label(m, d) for d in DISTS if (m, d) in PAPER15] for m in MODELS}


def tails() -> dict[str, list[str]]:
    return {t: [label(m, d) for (m, d) in PAPER15 if d in ds] for t, ds in TAILS.items()}


def experiment(name, qrels, runs, args, progress):
    """Topic-sample and pool-depth tables of one collection."""
    grid = {"n_jobs": args.n_jobs, "progress": progress, "store": args.store, "collection": name}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # topics without relevant documents (Robust04's 672)
        taus = topic_sample_stability(measures(), qrels, runs, sizes=args.sizes, trials=args.trials, seed=args.seed,
                                      **grid)
        depth = pool_depth_robustness(measures(), qrels, runs, depths=args.depths, **grid)
    return taus.groupby(level="size").mean(), depth


# --------------------------------------------------------------------------------------------- Figure 2 (Yandex)

def static_p(dist: str, n: int) -> np.ndarray:
    """P(k), k = 1..n, renormalised over the n ranks a result page shows."""
    k = np.arange(1, n + 1, dtype=np.float64)
    p = {"RBP": 0.2 * 0.8 ** (k - 1), "DCG": 1 / np.log2(k + 1) - 1 / np.log2(k + 2), "RR": 1 / (k * (k + 1))}[dist]
    return p / p.sum()


def click_distributions(data_dir: pathlib.Path):
    """Empirical stopping-rank distributions over ranks 1..10: every click, and the last click of a session."""
    from irmeasures_markov.calibration.readers import read_wscd
    every, last = np.zeros(RANKS), np.zeros(RANKS)
    n_sessions = n_clicked = 0
    for part in ("train.txt", "test.txt"):
        for s in read_wscd(data_dir / LOG / part).sessions:
            n_sessions += 1
            ranks = np.asarray(s.clicks, dtype=np.int64)
            if ranks.size == 0:
                continue
            if ranks.min() < 1 or ranks.max() > RANKS:
                raise ValueError(f"{part}: session {s.session_id} has click ranks {ranks.tolist()} outside 1..10")
            n_clicked += 1
            np.add.at(every, ranks - 1, 1)
            last[ranks[-1] - 1] += 1
    return every / every.sum(), last / last.sum(), n_sessions, n_clicked, int(every.sum())


def distances(emp: np.ndarray) -> dict[str, tuple[float, float]]:
    """Total variation and KL(empirical || model) to each static distribution."""
    out = {}
    for d in ("RBP", "DCG", "RR"):
        p = static_p(d, RANKS)
        out[d] = (0.5 * float(np.abs(emp - p).sum()), float(np.sum(emp * np.log(emp / p))))
    return out


def calibration(data_dir: pathlib.Path):
    """The package's likelihood fit of the family's static distributions (held out: test.txt)."""
    from irmeasures_markov.calibration import fit
    from irmeasures_markov.calibration.readers import read_wscd
    report = fit(read_wscd(data_dir / LOG / "train.txt"), test=read_wscd(data_dir / LOG / "test.txt"),
                 families=["carterette"], bootstrap=0, seed=0)
    return [(r["model"], r["heldout_loglik"], r["click_perplexity"]) for r in report.rows()
            if r["model"] in ("RBP", "RBP(theta=0.8)", "DCG", "RR")]


# ------------------------------------------------------------------------------------------ the DCG tail (§3)

def dcg_tail(qrels, runs, n: int = 1000):
    """Per run: the dropped terms' share of DCG (Σ_q r_q / log2(n+2) over Σ_q DCG_q) and of Σ a_k/k for RR's
    1/(n+1), Σ_q DCG_q and Σ_q (DCG_q − r_q / log2(n+2)), computed here from the runs (trec_eval order: score,
    then docid, descending)."""
    w_dcg, w_rr = 1 / math.log2(n + 2), 1 / (n + 1)
    shares = []
    for name in sorted(runs):
        run = runs[name]
        dcg = rr = dropped_dcg = dropped_rr = 0.0
        for q, judged in qrels.items():
            docs = run.get(q) or {}
            ranked = sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[:n]
            rel = [k for k, (d, _) in enumerate(ranked, start=1) if judged.get(d, 0) >= 1]
            dcg += sum(1 / math.log2(k + 1) for k in rel)
            rr += sum(1 / k for k in rel)
            dropped_dcg += len(rel) * w_dcg
            dropped_rr += len(rel) * w_rr
        shares.append((dropped_dcg / dcg if dcg else float("nan"), dropped_rr / rr if rr else float("nan"),
                       dcg, dcg - dropped_dcg))
    return w_dcg, w_rr, np.array(shares)


# ----------------------------------------------------------------------------------------------------- figures

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.hashsalt"] = "carterette2011"
    return plt


def _save(fig, path: pathlib.Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)


def plot_topics(results, path):
    plt = _plt()
    fig, axes = plt.subplots(len(results), 2, figsize=(10, 3.6 * len(results)), squeeze=False)
    for row, (name, (sizes_tab, _)) in enumerate(results.items()):
        sizes = list(sizes_tab.index)
        for col, groups in enumerate((families(), tails())):
            ax = axes[row][col]
            for g, v in group_means(sizes_tab, groups).items():
                ax.plot(sizes, v, marker="o", markersize=4, label=g)
            ax.set_title(f"{COLLECTIONS[name][0]}: by {'model' if col == 0 else 'tail'}")
            ax.set_xlabel("topics in the sample")
            ax.set_ylabel("mean Kendall's τ-b")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def plot_depths(results, path):
    plt = _plt()
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.8), squeeze=False)
    for col, (name, (_, depth)) in enumerate(results.items()):
        ax = axes[0][col]
        for g, v in group_means(depth, families()).items():
            ax.plot(list(depth.index), v, marker="o", markersize=4, label=g)
        for g, v in group_means(depth, tails()).items():
            ax.plot(list(depth.index), v, ls=":", label=f"{g} tail")
        ax.set_xscale("log")
        ax.set_title(f"{COLLECTIONS[name][0]}: pool depth")
        ax.set_xlabel("pool depth d (union of every run's top d)")
        ax.set_ylabel("Kendall's τ-b with the full qrels")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    _save(fig, path)


def plot_clicks(every, last, path):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    k = np.arange(1, RANKS + 1)
    ax.plot(k, every, "k-o", label="every click")
    ax.plot(k, last, "k--s", label="last click")
    for d in ("RBP", "DCG", "RR"):
        ax.plot(k, static_p(d, RANKS), ":", marker=".", label=f"P_{d}" + (" (θ = 0.8)" if d == "RBP" else ""))
    ax.set_yscale("log")
    ax.set_xticks(k)
    ax.set_xlabel("rank k")
    ax.set_ylabel("P(stop at k), ranks 1–10")
    ax.set_title("Yandex WSCD 2012: clicks as stopping ranks")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


# ---------------------------------------------------------------------------------------------------- findings

def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in values.items())


def findings(name, sizes_tab, depth):
    """``[(paper's words, what holds here, verdict)]`` for one collection."""
    out = []
    fam_t = {g: float(nanmean(v)) for g, v in group_means(sizes_tab, families()).items()}
    tail_t = {g: float(nanmean(v)) for g, v in group_means(sizes_tab, tails()).items()}
    tail_rows = np.array(list(group_means(sizes_tab, tails()).values()))
    spread = float(np.max(tail_rows.max(axis=0) - tail_rows.min(axis=0)))
    best, worst = max(fam_t, key=fam_t.get), min(fam_t, key=fam_t.get)
    ordered = tail_t["fat"] >= tail_t["medium"] >= tail_t["slim"]
    out.append(("Topic samples: “fatter tails result in more stable results”",
                f"mean τ over the sizes: {_fmt(tail_t)}",
                "holds" if ordered else ("partly" if tail_t["fat"] > tail_t["slim"] else "does not hold")))
    out.append(("Topic samples: “M2 provides more stable results than the other models”",
                f"mean τ over the sizes: {_fmt(fam_t)}; most stable: {best}",
                "holds" if best == "M2" else "does not hold"))
    out.append(("Topic samples: “M3 appears to be least robust to varying the topic sample”",
                f"least stable: {worst} ({fam_t[worst]:.3f})", "holds" if worst == "M3" else "does not hold"))
    gap = abs(fam_t["M1"] - fam_t["M4"])
    out.append(("Topic samples: “M1 and M4 look equally robust”",
                f"M1 {fam_t['M1']:.3f}, M4 {fam_t['M4']:.3f} (difference {gap:.3f}; equal: ≤ {EQUAL})",
                "holds" if gap <= EQUAL else "does not hold"))
    out.append(("Topic samples: tail fatness matters less, “a maximum difference of 0.026 between any two points”",
                f"largest spread between the tail classes at one size: {spread:.3f}",
                "holds" if spread <= PAPER_TAIL_SPREAD else "does not hold"))
    fam_d = {g: float(nanmean(v)) for g, v in group_means(depth, families()).items()}
    first = {g: float(v[0]) for g, v in group_means(depth, families()).items()}
    d0 = int(depth.index[0])
    out.append((f"Pool depth: “Correlation is already very good with a pool depth of just 1” (here depth {d0})",
                f"family means at depth {d0}: {_fmt(first)} (very good: ≥ {VERY_GOOD})",
                "holds" if min(first.values()) >= VERY_GOOD else "does not hold"))
    best, worst = max(fam_d, key=fam_d.get), min(fam_d, key=fam_d.get)
    out.append(("Pool depth: “The M2 family is actually least robust to missing judgments”",
                f"mean τ over the depths: {_fmt(fam_d)}; least robust: {worst}",
                "holds" if worst == "M2" else "does not hold"))
    out.append(("Pool depth: “while the M1 family is most robust”", f"most robust: {best} ({fam_d[best]:.3f})",
                "holds" if best == "M1" else "does not hold"))
    out.append(("Pool depth: “The M4 family is more robust to missing judgments than the M3 family”",
                f"M4 {fam_d['M4']:.3f}, M3 {fam_d['M3']:.3f}", "holds" if fam_d["M4"] > fam_d["M3"] else
                "does not hold"))
    out.append(("Pool depth: “all four are quite robust on average”",
                f"lowest family mean {min(fam_d.values()):.3f} (quite robust: ≥ {ROBUST})",
                "holds" if min(fam_d.values()) >= ROBUST else "does not hold"))
    shallow = depth.loc[[d for d in depth.index if d <= 10]]
    tail_s = {g: float(nanmean(v)) for g, v in group_means(shallow, tails()).items()}
    out.append(("Pool depth: “slim-tail distributions are more robust to shallow pools than fatter-tail ones”",
                f"mean τ over the depths ≤ 10: {_fmt(tail_s)}",
                "holds" if tail_s["slim"] >= tail_s["medium"] >= tail_s["fat"] else
                ("partly" if tail_s["slim"] > tail_s["fat"] else "does not hold")))
    return out


# ------------------------------------------------------------------------------------------------------- page

def _table(tab, fmt="{:.3f}", first="") -> list[str]:
    cols = list(tab.columns)
    lines = [f"| {first} | " + " | ".join(str(c) for c in cols) + " |", "|---|" + "---:|" * len(cols)]
    for idx, row in tab.iterrows():
        lines.append(f"| {idx} | " + " | ".join("—" if not np.isfinite(v) else fmt.format(v) for v in row) + " |")
    return lines


def _combination_table(sizes_tab, depth) -> list[str]:
    """One row per combination: mean τ over the sample sizes and over the depths, τ at the smallest of each."""
    lines = ["| model × dist | paper's name | mean τ, topic samples | τ at the smallest sample | mean τ, pool depths "
             "| τ at the shallowest pool |", "|---|---|---:|---:|---:|---:|"]
    for m in MODELS:
        for d in DISTS:
            lab = label(m, d)
            vals = [nanmean(sizes_tab[lab]), sizes_tab[lab].iloc[0], nanmean(depth[lab]), depth[lab].iloc[0]]
            cells = " | ".join("—" if not np.isfinite(v) else f"{v:.3f}" for v in vals)
            lines.append(f"| {m} × {d} | {PAPER15.get((m, d), '—')} | {cells} |")
    return lines


def _clicks_reading(best_e, best_l, order) -> str:
    """What the fits say, in words that follow the numbers."""
    text = (f"By KL the closest static distribution is P_{best_e} for every click and P_{best_l} for the last click")
    if order is not None:
        agree = order[0] == best_e == best_l
        text += (f"; the likelihood fit puts {order[0]} first and {order[-1]} last, "
                 + ("the same winner." if agree else "another winner."))
    else:
        text += "."
    text += (" The paper's model takes every click (or the last one) for a stop and has no click probability; the "
             "calibration's reader also reads ranks without clicking them, so its stop can lie below the last "
             "click. ")
    text += ("The finding is about AOL 2006 with its own result pages; on this log P_RR is not the best fit."
             if "RR" not in (best_e, best_l) else "On this log P_RR fits best too.")
    return text


def _share_words(median: float, top: float) -> str:
    """How large a dropped term is, from the median and largest share over the runs."""
    if top < 0.05:
        return "Negligible on every run, as the paper says."
    if median < 0.05:
        return f"Small on most runs (the paper's “negligible”), but up to {top:.1%} on one."
    return "Not negligible."


def page(args, results, info, clicks, tail, figs) -> str:
    sizes_text = ", ".join(map(str, args.sizes)) if args.sizes else "5, 10, … below the number of topics"
    lines = [
        "# Carterette (SIGIR 2011): robustness of M1–M4 × six stopping distributions",
        "",
        "<!-- generated by integration/reproduce/reproduce_carterette2011.py; do not edit by hand: rerun it -->",
        "",
        "B. Carterette. *System effectiveness, user models, and user utility: a conceptual framework for "
        "investigation.* SIGIR 2011. The measures are this package's (see "
        "[user-model-framework.md](user-model-framework.md)); this page reruns the paper's experiments that the "
        "data here allows and sets each finding beside what holds here.",
        "",
        "## What was run",
        "",
        "The paper's data, TREC-6 (74 runs) with the Waterloo qrels, is not here, so the assessor-disagreement "
        "experiment (its Table 2) is not reproduced. The topic-sample and pool-depth experiments are run on:",
        "",
    ]
    for name, (n_runs, n_topics, judged) in info.items():
        lines.append(f"* **{COLLECTIONS[name][0]}**: {n_runs} runs, {n_topics} topics, {judged:,} judgments.")
    lines += [
        "",
        "Every one of the 24 combinations M1–M4 × {RBP (θ = 0.8), DCG, RR, ERR (θ = 0.5), AP, RRR} is evaluated "
        "(M2 and ARR normalised, as the paper). As in the paper, the family and tail curves average the τ of the "
        "paper's 15 measures (its Table 1; the other nine are either constant in the judgments — M3 with a static "
        "distribution — or rank-insensitive — M1 and M2 with a dynamic one). Tail classes (the paper does not list "
        "them; our reading): **slim** RBP, ERR (geometric); **medium** RR, RRR (1/k² over ranks or over relevant "
        "ranks); **fat** DCG, AP.",
        "",
        f"* **Topic samples** (`experiments.topic_sample_stability`): sizes {sizes_text}; {args.trials} random "
        f"samples per size (seed {args.seed}), the same sample for all measures; τ-b between the ranking by the "
        "mean over every topic and by the mean over the sample.",
        f"* **Pool depth** (`experiments.pool_depth_robustness`): depths {', '.join(map(str, args.depths))}; the "
        "depth-d qrels keep the judgments of the documents some run ranks in its top d (trec_eval's order); a "
        "document outside the cut pool is unjudged and counts as not relevant (`unjudged='nonrel'`, as trec_eval). "
        "The pools are made from the runs evaluated (all of them), as the paper's were from its 74 runs. Means "
        "over the depths take every depth listed, those whose pool keeps every judgment (τ = 1) included.",
        "",
        "A finding *holds* when the numbers here show it, *partly* when the order is only partly the paper's; "
        f"“about equal” is within {EQUAL}, a depth-1 τ is “very good” from {VERY_GOOD}, a family “quite robust” "
        f"from a mean τ of {ROBUST}.",
        "",
    ]
    summary = []
    for name, (sizes_tab, depth) in results.items():
        verdicts = [v for _, _, v in findings(name, sizes_tab, depth)]
        summary.append(f"{COLLECTIONS[name][0]}: {verdicts.count('holds')} of {len(verdicts)} findings hold, "
                       f"{verdicts.count('partly')} partly, {verdicts.count('does not hold')} do not")
    lines += ["**In short.** " + "; ".join(summary) + ".", ""]
    for name, (sizes_tab, depth) in results.items():
        title = COLLECTIONS[name][0]
        lines += [f"## {title}", "", "### Findings", "", "| the paper | here | verdict |", "|---|---|---|"]
        lines += [f"| {p} | {h} | **{v}** |" for p, h, v in findings(name, sizes_tab, depth)]
        fam_t = group_means(sizes_tab, families())
        tail_t = group_means(sizes_tab, tails())
        tab = sizes_tab.iloc[:, :0].copy()
        for g, v in {**fam_t, **tail_t}.items():
            tab[g] = v
        lines += ["", "### Topic samples (Figure 3)", "", "Mean τ over the trials, by model and by tail class:", ""]
        lines += _table(tab, first="topics")
        fam_d = group_means(depth, families())
        tab = depth.iloc[:, :0].copy()
        for g, v in {**fam_d, **group_means(depth, tails())}.items():
            tab[g] = v
        tab["judgments kept"] = [depth.attrs["judgments"][d] for d in depth.index]
        lines += ["", "### Pool depth (Figure 4)", "", "τ with the full qrels, by model and by tail class:", ""]
        lines += _table(tab.drop(columns="judgments kept"), first="depth")
        lines += ["", "Judgments kept: " + ", ".join(f"depth {d}: {depth.attrs['judgments'][d]:,}"
                                                      for d in depth.index)
                  + f" (full qrels: {depth.attrs['full_judgments']:,}).", ""]
        lines += ["### Every combination", ""] + _combination_table(sizes_tab, depth)
        lines += ["", "— : τ undefined, the measure being equal for every run (M3 with a static distribution depends "
                  "only on the rankings' lengths).", ""]
    lines += ["## Figures", "", f"![Figure 3 analogue: τ as the topic sample grows]({figs['topics']})", "",
              f"![Figure 4 analogue: τ as the pool deepens]({figs['depth']})", ""]
    if clicks is not None:
        every, last, n_sessions, n_clicked, n_clicks, fits = clicks
        de, dl = distances(every), distances(last)
        best_e, best_l = min(de, key=lambda d: de[d][1]), min(dl, key=lambda d: dl[d][1])
        lines += [
            "## Figure 2 analogue: where users click (Yandex WSCD 2012)",
            "",
            f"The sample's {n_sessions:,} sessions (train.txt and test.txt; {n_clicked:,} with a click, "
            f"{n_clicks:,} clicks, ten results each). As the paper did with the AOL log, each click is taken as a "
            "stopping rank (“every click”), or only a session's last click in click order (“last click”); the "
            "static distributions are renormalised over the ten ranks shown.",
            "",
            "| distribution | every click: total variation | every click: KL | last click: total variation "
            "| last click: KL |",
            "|---|---:|---:|---:|---:|",
        ]
        for d in ("RBP", "DCG", "RR"):
            lines.append(f"| P_{d}{' (θ = 0.8)' if d == 'RBP' else ''} | {de[d][0]:.3f} | {de[d][1]:.3f} | "
                         f"{dl[d][0]:.3f} | {dl[d][1]:.3f} |")
        lines += ["", "Empirical distribution by rank (every click / last click): "
                  + "; ".join(f"{k + 1}: {every[k]:.3f} / {last[k]:.3f}" for k in range(RANKS)) + ".", ""]
        if fits:
            lines += ["The package's calibration ([calibration.md](calibration.md)) fits the distributions to the "
                      "same log by likelihood, with a reader who reads down to the stopping rank and clicks each "
                      "document read with probability γ (fitted on train.txt, scored on test.txt):", "",
                      "| distribution | held-out log-likelihood | click perplexity |", "|---|---:|---:|"]
            lines += [f"| {m} | {ll:.1f} | {cp:.4f} |" for m, ll, cp in sorted(fits, key=lambda r: -r[1])]
            order = [m for m, _, _ in sorted(fits, key=lambda r: -r[1]) if m != "RBP(theta=0.8)"]
            lines += ["", f"Order by likelihood: {' > '.join(order)}.", ""]
        verdict = "holds" if best_e == best_l == "RR" else "does not hold"
        lines += [
            "| the paper | here | verdict |", "|---|---|---|",
            f"| “Among the distributions we are considering, P_RR is clearly the best fit to both models of the "
            f"data” (AOL 2006) | closest by KL: {best_e} (every click), {best_l} (last click)"
            + (f"; by likelihood: {order[0]} best, {order[-1]} worst" if fits else "") + f" | **{verdict}** |",
            "",
            _clicks_reading(best_e, best_l, order if fits else None),
            "",
            f"![Figure 2 analogue: click ranks and the static distributions]({figs['clicks']})",
            "",
        ]
    if tail is not None:
        w_dcg, w_rr, shares = tail
        dcg_s, rr_s = shares[:, 0], shares[:, 1]
        lines += [
            "## The “negligible” tail (§3)",
            "",
            "The paper derives P_DCG and P_RR on a ranking of n documents, where F(k) carries a term that does not "
            "depend on k — 1/log₂(n+2) for DCG, 1/(n+1) for RR — and drops it “for large enough n”, saying “it "
            "does not require very large n for the effect to be negligible”. With n = 1000 (TREC runs):",
            "",
            f"* DCG: the dropped term weighs 1/log₂(1002) = {w_dcg:.4f} per relevant document retrieved, against "
            "1/log₂(k+1) at rank k; on the "
            f"{len(dcg_s)} TREC-8 runs it is {np.nanmedian(dcg_s):.1%} of DCG (median over runs of Σ_q r_q/log₂(1002) "
            f"over Σ_q DCG_q; range {np.nanmin(dcg_s):.1%}–{np.nanmax(dcg_s):.1%}). "
            f"{_share_words(np.nanmedian(dcg_s), np.nanmax(dcg_s))} M2 × DCG on a ranking of n documents is "
            "DCG − r/log₂(n+2), another measure: Kendall's τ-b between the run rankings by the two (means over "
            f"the topics, unnormalised) is {kendall_tau(shares[:, 2], shares[:, 3]):.3f}.",
            f"* RR: 1/1001 = {w_rr:.4f}; {np.nanmedian(rr_s):.2%} of Σ a_k/k (median; range "
            f"{np.nanmin(rr_s):.2%}–{np.nanmax(rr_s):.2%}). {_share_words(np.nanmedian(rr_s), np.nanmax(rr_s))}",
            "",
            "What the package does instead: for M2 with a static distribution F is the infinite tail (θ^{k−1}, "
            "1/log₂(k+1), 1/k), i.e. a ranking cut at N is completed with non-relevant documents, so nothing is "
            "dropped and M2 × DCG unnormalised is exactly DCG (see [user-model-framework.md]"
            "(user-model-framework.md), “Conventions”).",
            "",
        ]
    lines += ["## Regenerate", "", "```", " ".join(["python integration/reproduce/reproduce_carterette2011.py"]
                                                   + args.argv_shown), "```", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="shared data directory (default: $IRMEASURES_MARKOV_DATA "
                                                     "or ../shared/data)")
    ap.add_argument("--n-jobs", type=int, default=2, help="local processes (default 2)")
    ap.add_argument("--collections", default="trec8,robust04", help="trec8 and/or robust04 (default both)")
    ap.add_argument("--runs", type=int, default=0, help="runs per collection, evenly spaced in name order (0: all)")
    ap.add_argument("--sizes", default=None, help="topic sample sizes (default 5, 10, ... below the topic count)")
    ap.add_argument("--trials", type=int, default=100, help="topic samples per size (default 100, as the paper)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the topic samples (default 0)")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)), help="pool depths (default %(default)s)")
    ap.add_argument("--no-yandex", action="store_true", help="skip the Figure 2 analogue")
    ap.add_argument("--no-calibration", action="store_true", help="Figure 2 analogue without the likelihood fit")
    ap.add_argument("--no-tail", action="store_true", help="skip the DCG-tail section")
    ap.add_argument("--store", default=None, help="Parquet directory keeping finished cells (resumable reruns)")
    ap.add_argument("--figures", default=str(REPO / "docs" / "figures"), help="output directory for the PNGs")
    ap.add_argument("--out", default=str(REPO / "docs" / "carterette-2011.md"), help="Markdown output")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    raw = list(sys.argv[1:] if argv is None else argv)
    # the options that change numbers, for the page's "Regenerate" line (not paths, jobs or progress)
    shown, skip = [], {"--data-dir", "--n-jobs", "--store", "--figures", "--out"}
    i = 0
    while i < len(raw):
        if raw[i] in skip:
            i += 2
            continue
        if raw[i].split("=")[0] in skip:
            i += 1
            continue
        if raw[i] != "--no-progress":
            shown.append(raw[i])
        i += 1
    args.argv_shown = shown
    args.sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    args.depths = [int(d) for d in args.depths.split(",")]
    from irmeasures_markov.testing import shared_data_dir
    data_dir = pathlib.Path(args.data_dir) if args.data_dir else shared_data_dir()
    if data_dir is None:
        ap.error("no data directory: give --data-dir or set IRMEASURES_MARKOV_DATA (or put it at ../shared/data)")
    progress = not args.no_progress
    t0 = time.perf_counter()
    results, info, tail = {}, {}, None
    for name in args.collections.split(","):
        qrels, runs = load(data_dir, name, args.runs, args.n_jobs, progress)
        results[name] = experiment(name, qrels, runs, args, progress)
        info[name] = (len(runs), len(qrels), sum(map(len, qrels.values())))
        if name == "trec8" and not args.no_tail:
            tail = dcg_tail(qrels, runs)
        print(f"{name}: done at {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    clicks = None
    if not args.no_yandex:
        every, last, n_sessions, n_clicked, n_clicks = click_distributions(data_dir)
        fits = None if args.no_calibration else calibration(data_dir)
        clicks = (every, last, n_sessions, n_clicked, n_clicks, fits)
    out = pathlib.Path(args.out)
    figdir = pathlib.Path(args.figures)
    paths = {"topics": figdir / "carterette2011-topics.png", "depth": figdir / "carterette2011-depth.png",
             "clicks": figdir / "carterette2011-clicks.png"}
    plot_topics(results, paths["topics"])
    plot_depths(results, paths["depth"])
    if clicks is not None:
        plot_clicks(clicks[0], clicks[1], paths["clicks"])

    def rel(p):
        p, base = p.resolve(), out.resolve().parent
        return p.relative_to(base).as_posix() if p.is_relative_to(base) else p.as_posix()

    out.write_text(page(args, results, info, clicks, tail, {k: rel(p) for k, p in paths.items()}), encoding="utf-8")
    for name, (sizes_tab, depth) in results.items():
        for p, h, v in findings(name, sizes_tab, depth):
            print(f"{name}: {v}: {p} -- {h}")
    print(f"total {time.perf_counter() - t0:.1f} s; wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
