"""G(t) and T(k) of Time-Biased Gain (Smucker & Clarke, SIGIR 2012, Figures 3-4) for TREC-8 runs.

    python docs/scripts/make_tbg_figures.py [--out docs/figures/tbg_gain_curves_trec8.png]

TREC-8 document texts are not in the shared data, so the lengths are an
ASSUMPTION, stated in the figure: every document retrieved by the four runs
gets a seeded random length, log-normal with median 300 words (sigma 0.8,
seed 0), and for comparison a fixed length of 300 words for every document.
``integration/bench/bench_tbg.py`` draws the same way but over the docids of all
129 runs, so a docid gets a different length there.  Calibration: the
paper's Table 1 defaults.

Left: G(t), the expected cumulative gain (no decay) by time t, averaged over
the 50 topics (a topic contributes its final G once its ranking is exhausted).
Right: T(k), the expected time to reach rank k, for the top 100 ranks,
averaged over the topics where the run has at least 100 documents (23 for
READWARE2, 46 to 50 for the others), so that every rank has the same topics.
Values come from :mod:`irmeasures_markov.measures._time_model`, so the figure shows
what the measure computes; the legend gives each run's mean TBG (``TBG`` with
the random lengths, N = 1).
"""
import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.io import read_trec_qrels, read_trec_run  # noqa: E402
from irmeasures_markov.measures import mean_gain_curve, plot_gain_curves, time_models  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402

#: four of the best TREC-8 ad hoc runs by official MAP (READWARE2 answers fewer than 1000 documents for every topic)
RUNS = ("READWARE2", "orcl99man", "iit99ma1", "CL99XT")
MEDIAN_WORDS, SIGMA, SEED, FIXED_WORDS = 300, 0.8, 0, 300
MINUTES = 150
DEPTH = 100


def assumed_lengths(runs, seed=SEED):
    """Seeded log-normal length (words) for every document any of ``runs`` retrieved (sorted docids)."""
    docids = sorted({d for run in runs for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    return dict(zip(docids, np.round(rng.lognormal(np.log(MEDIAN_WORDS), SIGMA, len(docids))).tolist()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parents[1] / "figures" / "tbg_gain_curves_trec8.png"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()
    data = shared_data_dir()
    if data is None:
        sys.exit("shared TREC data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = {name: read_trec_run(data / "runs" / "trec8" / f"input.{name}.gz") for name in RUNS}
    lengths = assumed_lengths(runs.values())
    tbg = imm.TBG(lengths=imm.register_lengths("trec8-figure-assumed", lengths))
    times = np.linspace(0, MINUTES * 60, 901)

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    random_curves, fixed_curves = {}, {}
    for name, run in runs.items():
        value = imm.PROVIDER.calc_aggregate([tbg], qrels, run)[tbg]
        random_curves[f"{name} (mean TBG {value:.2f})"] = (times, mean_gain_curve(qrels, run, lengths, times))
        fixed_curves[name] = (times, mean_gain_curve(qrels, run, None, times, default_length=FIXED_WORDS))
    plot_gain_curves(random_curves, ax=left, title="G(t), mean over the 50 TREC-8 topics")
    colours = [line.get_color() for line in left.get_lines()]
    for (_name, (t, g)), colour in zip(fixed_curves.items(), colours):
        left.step(t / 60, g, where="post", color=colour, ls=":", lw=1)
    left.plot([], [], "k:", lw=1, label=f"dotted: every document {FIXED_WORDS} words")
    left.legend(fontsize=8, loc="lower right")

    for (name, run), colour in zip(runs.items(), colours):
        models = [tm for tm in time_models(qrels, run, lengths, cutoff=DEPTH).values() if tm.reach.size == DEPTH]
        reach = np.array([tm.reach for tm in models])
        k = np.arange(1, DEPTH + 1)
        right.plot(k, reach.mean(axis=0) / 60, color=colour, lw=1.2, label=f"{name} ({len(models)} topics)")
        if name == RUNS[0]:
            right.fill_between(k, reach.min(axis=0) / 60, reach.max(axis=0) / 60, color=colour, alpha=0.12,
                               label=f"{name}: min-max over topics")
    right.set_xlabel("rank k")
    right.set_ylabel("T(k), expected time to reach rank k (minutes)")
    right.set_title(f"T(k) for the top {DEPTH} ranks, mean over topics", fontsize=10)
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    fig.suptitle("Time-Biased Gain time model on TREC-8 (calibration of Smucker & Clarke 2012, Table 1)\n"
                 f"ASSUMED document lengths (TREC-8 texts are not available here): seeded log-normal, median "
                 f"{MEDIAN_WORDS} words (sigma {SIGMA}, seed {SEED})", fontsize=9)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
