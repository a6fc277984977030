"""Reproduce Figure 1 of Ferrante & Ferro (ICTIR 2020): CDFs of P@H for r = 1001001001 and
s = 0111100000 under four browsing models, with the order-1 (dashed) and order-2 (dotted) lines.

    python docs/scripts/make_ph_fig1.py [--out docs/figures] [--users 1000000] [--seed 2020]

Panels (a)-(c) are forward models: their distributions are exact.  Panel (d) (RWBM with utility
loss) has no exact distribution: it is the empirical CDF of --users simulated users per run (seeded);
its order-1/order-2 lines are still exact.  Writes ph_fig1a.png ... ph_fig1d.png and ph_fig1.png
(all four panels) and prints the values shown.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from irmeasures_markov.measures.stopping_time import browsing_model  # noqa: E402

R = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
S = [0, 1, 1, 1, 1, 0, 0, 0, 0, 0]
PANELS = {
    "a": ("DFBM à la Precision", dict(browse="DFBM")),
    "b": ("SFBM à la AP", dict(user="AP")),
    "c": ("SFBM à la RBP, p = 0.5", dict(user="RBP", p=0.5)),
    "d": ("RWBM p = 0.5, q = 0.25, 25% utility loss", dict(browse="RWBM", p=0.5, q=0.25, loss=0.25,
                                                           top="forward")),
}
COLORS = {"r": "tab:blue", "s": "tab:red"}


def draw(ax, key, users, seed):
    title, params = PANELS[key]
    lines = []
    dists = {}
    for name, run in (("r", R), ("s", S)):
        model = browsing_model(run, **params)
        d = model.distribution(n_users=users, seed=seed)
        dists[name] = d
        e1, e2 = model.expectation(1), model.expectation(2)
        xs = [0.0, *d.support.tolist(), 1.0]
        cdf = [0.0, *d.cdf_values.tolist(), 1.0]
        ax.step(xs, cdf, where="post", color=COLORS[name],
                label=f"{name}: E1={e1:.2f}, E2={e2:.2f}" + ("" if d.exact else " (simulated)"))
        ax.axvline(e1, color=COLORS[name], linestyle="--", linewidth=1)
        ax.axvline(e2, color=COLORS[name], linestyle=":", linewidth=1.5)
        lines.append((name, e1, e2, d.exact))
    dom = browsing_model(R, **params).dominance(browsing_model(S, **params), n_users=users, seed=seed)
    ax.set_title(f"({key}) {title}", fontsize=10)
    ax.set_xlabel("x = P@H")
    ax.set_ylabel("F(x)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=8)
    return lines, dom


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "figures")))
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2020)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    fig_all, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    for key, ax_all in zip(PANELS, axes.ravel()):
        fig, ax = plt.subplots(figsize=(5.5, 4.2))
        lines, dom = draw(ax, key, args.users, args.seed)
        draw(ax_all, key, args.users, args.seed)
        fig.tight_layout()
        path = os.path.join(args.out, f"ph_fig1{key}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        desc = "; ".join(f"{n}: order1 {e1:.4f}, order2 {e2:.4f}{'' if ex else ' (CDF simulated)'}"
                         for n, e1, e2, ex in lines)
        cross = ", ".join(f"{x:.3f}" for x in dom.crossings)
        print(f"({key}) {desc}; order 3: {dom.relation}{' (crossings ' + cross + ')' if cross else ''} -> {path}")
    fig_all.suptitle("P@H CDFs, r = 1001001001 (blue), s = 0111100000 (red); dashed: order 1, dotted: order 2")
    fig_all.tight_layout()
    path = os.path.join(args.out, "ph_fig1.png")
    fig_all.savefig(path, dpi=100)
    print(f"-> {path}")


if __name__ == "__main__":
    main()
