"""Figure 1 of Carterette (SIGIR 2011): the six stopping distributions P(k) and F(k).

    python docs/scripts/make_carterette_fig1.py [--out docs/figures/carterette_fig1.png]

Static distributions (RBP, DCG, RR) do not depend on the ranking; the dynamic
ones (ERR, AP, RRR) are drawn for one example ranking (``EXAMPLE`` below, its
relevant documents marked on the axis), with θ = 0.5 for RBP and ERR as in the
paper.  Values come from :func:`irmeasures_markov.measures._carterette_distributions.stopping_distribution`,
so the figure shows what the measures compute.
"""
import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from irmeasures_markov.measures._carterette_distributions import (  # noqa: E402
    DYNAMIC_DISTRIBUTIONS,
    STATIC_DISTRIBUTIONS,
    stopping_distribution,
)

N = 25
#: example ranking for the dynamic distributions: 8 relevant documents in the top 25, RB = 10
EXAMPLE = np.zeros(N, dtype=int)
EXAMPLE[[0, 2, 3, 6, 9, 13, 17, 22]] = 1
RECALL_BASE = 10
THETA = {"RBP": 0.5, "ERR": 0.5}
STYLE = {"RBP": "o-", "DCG": "s-", "RR": "^-", "ERR": "o-", "AP": "s-", "RRR": "^-"}


def curves():
    out = {}
    for dist in STATIC_DISTRIBUTIONS + DYNAMIC_DISTRIBUTIONS:
        ranking = np.zeros(N, dtype=int) if dist in STATIC_DISTRIBUTIONS else EXAMPLE
        p, tail = stopping_distribution(ranking, dist, theta=THETA.get(dist), recall_base=RECALL_BASE)
        out[dist] = (p, tail)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parents[1] / "figures" / "carterette_fig1.png"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()
    k = np.arange(1, N + 1)
    data = curves()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for col, (group, title) in enumerate([(STATIC_DISTRIBUTIONS, "static"),
                                          (DYNAMIC_DISTRIBUTIONS, "dynamic (example ranking)")]):
        # mathtext, so subscripts print as subscripts (a plain string shows its TeX source);
        # an inline Σ keeps the y-label on one line
        for row, (idx, symbol, label) in enumerate([
                (0, "P", r"$P(k)$: stopping probability"),
                (1, "F", r"$F(k) = \Sigma_{i \geq k}\, P(i)$: viewing probability")]):
            ax = axes[row, col]
            for dist in group:
                name = rf"${symbol}_{{\mathrm{{{dist}}}}}$" + (f" (θ={THETA[dist]})" if dist in THETA else "")
                ax.plot(k, data[dist][idx], STYLE[dist], ms=3.5, lw=1, label=name)
            if col == 1:
                rel = np.flatnonzero(EXAMPLE) + 1
                ax.plot(rel, np.zeros(rel.size), "k|", ms=10, label="relevant document")
            ax.set_title(f"${symbol}(k)$ — {title}", fontsize=10)
            ax.set_ylabel(label, fontsize=9)
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=-0.02)
            if row == 1:
                ax.set_xlabel("rank k")
            ax.legend(fontsize=8)
    fig.suptitle(f"Carterette (SIGIR 2011) Fig. 1: the six stopping distributions "
                 f"(dynamic ones: {int(EXAMPLE.sum())} relevant in the top {N}, RB = {RECALL_BASE})",
                 fontsize=10)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
