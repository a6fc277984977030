"""Renderings of a [`Comparison`][irmeasures_markov.comparison.Comparison]: text, Markdown, LaTeX, CSV/TSV, records,
plot.

Each function takes the [`Comparison`][irmeasures_markov.comparison.Comparison]
as ``cmp`` (typed ``Any`` here: this module sits below the one defining
it).  Every table is built once as a grid of cell strings (`means_grid`,
`pairs_grid`) and then laid out for its format, so the formats cannot
disagree on a number or a marker.
"""
from __future__ import annotations

import csv
import io
import math
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from irmeasures_markov._util._numbers import format_number
from irmeasures_markov._util._plotting import pyplot
from irmeasures_markov.comparison._runs import resolve_baseline
from irmeasures_markov.comparison._sensitivity import QUANTITIES

if TYPE_CHECKING:
    from ir_measures import Measure
    from matplotlib.figure import Figure

__all__ = ["UP", "DOWN", "legend", "means_grid", "pairs_grid", "table", "to_delimited",
           "records", "plot", "layout", "latex_escape", "plot_pairs", "significance_matrix"]

#: The markers of a run significantly better (UP) or worse (DOWN) than the baseline.
UP, DOWN = "\u25b2", "\u25bc"

TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
              "randomization": "paired randomization test", "bootstrap": "paired bootstrap test",
              "bayes": "Bayesian linear model (Carterette 2011)", "none": "no significance test",
              "tukey": "randomized Tukey HSD", "anova": "Tukey HSD over the two-way ANOVA"}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "Benjamini-Hochberg FDR",
                    "none": "no"}

_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (``_`` -> ``\\_``, ``&`` -> ``\\&``, ...)."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def legend(cmp: Any, effect: bool = False) -> str:
    """One paragraph saying what the markers mean."""
    test = TEST_NAMES[cmp.test]
    if cmp.test == "bayes":
        how = f"{test}, posterior two-sided tail 2 min(P(A>B), P(A<B)) < {cmp.alpha:g}" \
            if cmp.alternative == "two-sided" else f"{test}, posterior P(not better) < {cmp.alpha:g}"
    elif getattr(cmp, "tukey", None):
        first = next(iter(cmp.tukey.values()))
        draws = f", {first.n_resamples} permutations" if first.n_resamples else ""
        how = f"{test}{draws}, family-wise p < {cmp.alpha:g}"
    else:
        alt = "" if cmp.alternative == "two-sided" else f", one-sided ({cmp.alternative})"
        how = f"{test}{alt}, {CORRECTION_NAMES[cmp.correction]} correction, p < {cmp.alpha:g}"
    n, n_pairs = len(cmp.evaluation.topics), len(cmp.tests) // max(1, len(cmp.labels))
    if cmp.test == "none":
        why = "no test is possible with fewer than 2 topics" if n < 2 else "means only"
        text = f"No significance test ({why}; {n} topic{'' if n == 1 else 's'})."
    elif cmp.baseline is not None:
        text = (f"{UP}/{DOWN}: significantly better/worse than the baseline {cmp.baseline} ({how}; "
                f"{n} topics).")
    elif getattr(cmp, "tukey", None):
        compact = ", a-d stands for abcd" if any("-" in m for m in cmp.markers.to_numpy().ravel()) else ""
        text = (f"Letters: Tukey groups; runs sharing a letter do not differ significantly, a holds the best "
                f"mean{compact} ({how}; all {n_pairs} pairs; {n} topics).")
    else:
        text = (f"Letters: the runs a mean is significantly better than ({how}; all {n_pairs} "
                f"pairs; {n} topics).")
    if cmp.ci is not None:
        text += f" Brackets: {cmp.ci:.0%} t confidence interval of the mean" + \
            (" (undefined with one topic)." if n < 2 else ".")
    if effect:
        text += " d: Cohen's d_z of the per-topic differences with the baseline (mean / standard deviation)."
    for note in getattr(cmp, "notes", ()):
        text += f" Note: {note}."
    return text


def _escaper(style: str):
    """Cell text made safe for ``style``: LaTeX escapes, or a Markdown pipe escaped."""
    return latex_escape if style == "latex" else (lambda s: s.replace("|", r"\|") if style == "md" else s)


def _run_label(cmp: Any, run: str) -> str:
    if cmp.baseline is not None:
        return f"{run} (baseline)" if run == cmp.baseline else run
    return f"({cmp.letters[run]}) {run}" if run in cmp.letters else run


def means_grid(cmp: Any, places: int, style: str, effect: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the means table; ``style`` is 'text', 'md' or 'latex' (markers and bold differ).

    ``effect``: add each run's effect size against the baseline, ``(d=+0.31)``.
    """
    if effect and cmp.baseline is None:
        raise ValueError("effect sizes in the means table need a baseline; for all pairs they are in the "
                         "tests table (pairs=True).")
    effects = {key: d for key, (d, _) in _versus_baseline(cmp).items()} if effect else {}
    table = cmp.table
    best = {label: table[label].max() for label in table.columns}
    esc = _escaper(style)
    header = ["run"] + [esc(str(c)) for c in table.columns]
    # text: markers left-aligned after the numbers, so the numbers of a column stay aligned
    pad = {label: max(len(m) for m in cmp.markers[label]) for label in table.columns}
    effect_pad = {label: max([len(f"(d={d:+.2f})") for (r, m), d in effects.items() if m == label] or [0])
                  for label in table.columns}
    rows = []
    for run in table.index:
        row = [esc(_run_label(cmp, run))]
        for label in table.columns:
            mean = float(table.loc[run, label])
            cell = format_number(mean, places)
            if style in ("md", "latex") and mean == best[label]:
                cell = f"**{cell}**" if style == "md" else rf"\textbf{{{cell}}}"
            if cmp.intervals is not None:
                lo, hi = (float(cmp.intervals.loc[run, (label, b)]) for b in ("low", "high"))
                cell += f" [{format_number(lo, places)}, {format_number(hi, places)}]"
            mark = cmp.markers.loc[run, label]
            if mark and style == "latex":
                mark = {UP: r"\blacktriangle", DOWN: r"\blacktriangledown"}.get(mark, rf"\mathrm{{{mark}}}")
                cell += f"$^{{{mark}}}$"
            elif mark and style == "md":
                cell += mark if mark in (UP, DOWN) else f"<sup>{mark}</sup>"
            elif style == "text" and pad[label]:
                cell += " " + mark.ljust(pad[label])
            if effect:
                text = f"(d={effects[run, label]:+.2f})" if (run, label) in effects else ""
                cell += " " + (text.ljust(effect_pad[label]) if style == "text" else text)
            row.append(cell.rstrip() if style != "text" else cell)
        rows.append(row)
    return header, rows


PAIR_COLUMNS = ["measure", "run_a", "run_b", "mean_difference", "effect_size", "statistic", "pvalue",
                "adjusted_pvalue", "significant"]


def pairs_grid(cmp: Any, places: int, style: str = "text") -> tuple[list[str], list[list[str]]]:
    """Header and rows of the tests table (one row per measure and pair); ``style`` 'csv': every p-value in
    fixed point and ``significant`` as true/false.  A sensitivity report adds a column per kind of flag, saying
    what changes: 'order', 'significance', 'order+significance' or '-'."""
    esc = _escaper(style)
    pvalue = format_number if style == "csv" else _pvalue
    yes, no = ("true", "false") if style == "csv" else ("yes", "no")
    kinds = [] if cmp.sensitivity is None else list(cmp.sensitivity.kinds)
    flags = _flags_by_pair(cmp)
    rows = []
    for r in cmp.tests.itertuples(index=False):
        by_kind = flags.get((r.measure, r.run_a, r.run_b), {})
        rows.append([esc(str(r.measure)), esc(r.run_a), esc(r.run_b), format_number(r.mean_difference, places),
                     format_number(r.effect_size, places), format_number(r.statistic, places),
                     pvalue(r.pvalue, places), pvalue(r.adjusted_pvalue, places), yes if r.significant else no]
                    + [esc("+".join(_changes(by_kind[k])) or "-") if k in by_kind else "" for k in kinds])
    return [esc(c) for c in PAIR_COLUMNS + kinds], rows


def _flags_by_pair(cmp: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    """``{(measure, run_a, run_b): {kind: its row of the sensitivity flags}}``, for the tests table and records."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in [] if cmp.sensitivity is None else cmp.sensitivity.flags.itertuples(index=False):
        out.setdefault((r.measure, r.run_a, r.run_b), {})[r.kind] = r
    return out


def _changes(row: Any) -> list[str]:
    """What a flagged pair's row says can change: 'order', 'significance', both or neither."""
    return [w for w, on in (("order", row.order_changes), ("significance", row.significance_changes)) if on]


SENSITIVITY_LEGEND = ("judged@k: share of the top k documents that have a judgment (k: the measure's cutoff, "
                      "else 10), mean over topics; residual: mean value with the unjudged documents relevant "
                      "minus with them non-relevant; spread: mean value with ties broken optimistically "
                      "(higher grades first) minus pessimistically.")


def sensitivity_grid(cmp: Any, places: int, style: str = "text") -> tuple[list[str], list[list[str]]]:
    """Header and rows of the sensitivity table: per run and measure, judged@k, residual and tie spread."""
    sens = cmp.sensitivity
    esc = _escaper(style)
    header = ["run"] + [esc(f"{label} judged@{sens.depths[label]}" if q == "judged" else
                            f"{label} {'spread' if q == 'tie_spread' else q}") for label, q in sens.per_run.columns]
    rows = [[esc(run)] + [format_number(float(sens.per_run.loc[run, col]), places) for col in sens.per_run.columns]
            for run in sens.per_run.index]
    return header, rows


def flagged_lines(cmp: Any, places: int) -> list[str]:
    """One line per flagged pair (or one line saying no pair is), for text, Markdown and LaTeX comments."""
    sens = cmp.sensitivity
    what = {"ties": "between the optimistic and pessimistic tie orders", "holes": "within the residual"}
    lines = []
    for r in sens.flagged.itertuples(index=False):
        low, high = format_number(r.low, places), format_number(r.high, places)
        lines.append(f"{r.measure}: {r.run_a} vs {r.run_b}: {' and '.join(_changes(r))} can change {what[r.kind]} "
                     f"(A - B = {format_number(r.difference, places)}, from {low} to {high})")
    if not lines:
        lines.append("No pair changes order or significance " + " or ".join(what[k] for k in sens.kinds) + ".")
    return lines


def _sensitivity_block(cmp: Any, places: int, style: str) -> str:
    """The sensitivity table, its legend and the flagged pairs ('' without a report)."""
    if cmp.sensitivity is None:
        return ""
    table = layout(*sensitivity_grid(cmp, places, style), style)
    lines = flagged_lines(cmp, places)
    if style == "latex":
        return "\n\n" + "".join(f"% {x}\n" for x in textwrap.wrap(SENSITIVITY_LEGEND, 96) + lines) + table
    if style == "md":
        return "\n\n" + table + "\n\n" + SENSITIVITY_LEGEND + "\n\n" + "\n".join(f"* {x}" for x in lines)
    return "\n\n" + table + "\n\n" + "\n".join(textwrap.wrap(SENSITIVITY_LEGEND, 110) + lines)


def _pvalue(p: float, places: int) -> str:
    if places is not None and places >= 0 and 0 < p < 10 ** -places:
        return f"{p:.{max(1, places - 2)}e}"  # a small p stays readable instead of 0.0000
    return format_number(p, places)


def layout(header: list[str], rows: list[list[str]], style: str) -> str:
    """Lay out a grid: aligned text, a Markdown pipe table or a LaTeX tabular."""
    if style == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    if style == "latex":
        lines = [r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\hline",
                 " & ".join(header) + r" \\", r"\hline"]
        lines += [" & ".join(r) + r" \\" for r in rows]
        lines += [r"\hline", r"\end{tabular}"]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    out = []
    for k, r in enumerate([header] + rows):
        cells = [r[0].ljust(widths[0])] + [x.rjust(w) for x, w in zip(r[1:], widths[1:])]
        out.append("  ".join(cells).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def table(cmp: Any, style: str, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
    """The means table (``pairs=True``: the tests table) in ``style``, 'text', 'md' or 'latex', with the legend
    and the sensitivity report: below the table, or as ``%`` comment lines above a LaTeX tabular (whose baseline
    triangles need amssymb).  See [`Comparison.to_text`][irmeasures_markov.comparison.Comparison.to_text]."""
    if pairs:
        return layout(*pairs_grid(cmp, places, style), style)
    grid = layout(*means_grid(cmp, places, style, effect), style)
    report = _sensitivity_block(cmp, places, style)
    if style != "latex":
        return grid + "\n\n" + legend(cmp, effect) + report
    head = "".join(f"% {line}\n" for line in textwrap.wrap(legend(cmp, effect), 96))
    amssymb = "% \\blacktriangle needs \\usepackage{amssymb}\n" if cmp.baseline is not None else ""
    return head + amssymb + grid + report


def to_delimited(cmp: Any, sep: str = ",", places: int | None = None, pairs: bool = False) -> str:
    """CSV/TSV: the means table (one row per run; per measure its mean, interval and markers) or the tests;
    ``places`` None: 15 significant digits in their shortest form (`format_number`)."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    if pairs:
        header, rows = pairs_grid(cmp, places, "csv")
        w.writerows([header] + rows)
        return buf.getvalue()
    vs = _versus_baseline(cmp)
    per_run = ("letter", "judged_depth")  # a column of its own, and a part of the judged column's name
    header = ["run"] + (["letter"] if cmp.letters else [])
    for label in cmp.labels:
        fields = _mean_fields(cmp, cmp.runs[0], label, vs)
        header += [label if k == "mean" else f"{label} judged@{fields['judged_depth']}" if k == "judged"
                   else f"{label} {k}" for k in fields if k not in per_run]
    w.writerow(header)
    for run in cmp.runs:
        row = [run] + ([cmp.letters[run]] if cmp.letters else [])
        for label in cmp.labels:
            row += ["" if v is None else v if isinstance(v, str) else format_number(v, places)
                    for k, v in _mean_fields(cmp, run, label, vs).items() if k not in per_run]
        w.writerow(row)
    return buf.getvalue()


def _mean_fields(cmp: Any, run: str, label: str, vs: dict) -> dict[str, object]:
    """One run and measure of the means table: the fields of its JSON record after ``run`` and ``measure``, in
    order, whose numbers are also its CSV columns (None: the baseline's effect size against itself)."""
    out: dict[str, object] = {"mean": float(cmp.table.loc[run, label])}
    if cmp.intervals is not None:
        out.update({f"ci_{b}": float(cmp.intervals.loc[run, (label, b)]) for b in ("low", "high")})
    out["markers"] = cmp.markers.loc[run, label]
    if cmp.baseline is None:
        if run in cmp.letters:
            out["letter"] = cmp.letters[run]
    else:
        out["effect_size"], out["adjusted_pvalue"] = vs.get((run, label), (None, None))
    if cmp.sensitivity is not None:
        out["judged_depth"] = cmp.sensitivity.depths[label]
        out.update({q: float(cmp.sensitivity.per_run.loc[run, (label, q)]) for q in QUANTITIES})
    return out


def _versus_baseline(cmp: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """(effect size, adjusted p-value) of each (run, measure) against the baseline; the baseline has none."""
    if cmp.baseline is None:
        return {}
    rows = cmp.tests[cmp.tests["run_b"] == cmp.baseline]
    return {(r.run_a, r.measure): (float(r.effect_size), float(r.adjusted_pvalue))
            for r in rows.itertuples(index=False)}


def _json(x: float):
    return float(x) if math.isfinite(x) else None


def records(cmp: Any, pairs: bool = False) -> Iterator[dict[str, object]]:
    """JSON-ready records: one per run and measure (mean, interval, markers) or one per test."""
    if pairs:
        flags = _flags_by_pair(cmp)
        names, numbers = PAIR_COLUMNS[:3], PAIR_COLUMNS[3:-1]  # then 'significant'
        for r in cmp.tests.itertuples(index=False):
            yield {**{c: getattr(r, c) for c in names}, **{c: _json(getattr(r, c)) for c in numbers},
                   "significant": bool(r.significant), "test": cmp.test, "correction": cmp.correction,
                   **{f"{kind}_{key}": value for kind, f in flags.get((r.measure, r.run_a, r.run_b), {}).items()
                      for key, value in (("order_changes", bool(f.order_changes)),
                                         ("significance_changes", bool(f.significance_changes)),
                                         ("low", _json(f.low)), ("high", _json(f.high)))}}
        return
    vs = _versus_baseline(cmp)
    for run in cmp.runs:
        for label in cmp.labels:
            fields = _mean_fields(cmp, run, label, vs)
            yield {"run": run, "measure": label, **{k: v if isinstance(v, (str, int)) else _json(v)
                                                    for k, v in fields.items() if v is not None}}


def plot(cmp: Any, measure: Measure | str | None = None, baseline: str | None = None,
         axes: Any = None) -> Figure:
    """See [`Comparison.plot`][irmeasures_markov.comparison.Comparison.plot]."""
    plt = pyplot("Comparison.plot")
    ev = cmp.evaluation
    j = 0 if measure is None else ev.measure_index(measure)
    label = ev.labels[j]
    base = resolve_baseline(baseline, ev.runs)  # a run name or its file name, as for compare()
    if base is None:
        base = ev.runs[0] if cmp.baseline is None else cmp.baseline
    b = ev.runs.index(base)
    others = [i for i in range(len(ev.runs)) if i != b]
    if axes is None:
        ncols = min(3, len(others))
        nrows = math.ceil(len(others) / ncols)
        axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 2.8 * nrows), squeeze=False, sharey=True)[1]
    axes = np.atleast_1d(axes).ravel()
    fig = axes[0].figure
    if len(axes) < len(others):
        raise ValueError(f"`axes` has {len(axes)} panels for {len(others)} runs.")
    tests = cmp.tests[cmp.tests["measure"] == label]
    for ax, i in zip(axes, others):
        d = np.sort(ev.values[i, j, :] - ev.values[b, j, :])[::-1]
        ax.bar(np.arange(d.size), d, width=1.0, color=np.where(d >= 0, "tab:blue", "tab:red"))
        ax.axhline(0.0, color="black", linewidth=0.8)
        row = tests[((tests.run_a == ev.runs[i]) & (tests.run_b == base)) |
                    ((tests.run_a == base) & (tests.run_b == ev.runs[i]))]
        note = f", p = {row.adjusted_pvalue.iloc[0]:.3g}" if len(row) else ""
        ax.set_title(f"{ev.runs[i]} − {base}: {d.mean():+.4f}{note}", fontsize=9)
        ax.set_xlabel("topics (sorted by difference)")
    axes[0].set_ylabel(f"Δ {label}")
    for ax in axes[len(others):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def significance_matrix(cmp: Any, sep: str = ",") -> str:
    """The pairwise adjusted p-values as one runs × runs block per measure (``measure,run,<runs>...``; empty cells
    for the pairs not tested and the diagonal), in the order of the table, every digit."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    runs = cmp.runs
    position = {r: i for i, r in enumerate(runs)}
    w.writerow(["measure", "run"] + runs)
    for label in cmp.labels:
        grid = [[""] * len(runs) for _ in runs]
        for r in cmp.tests[cmp.tests["measure"] == label].itertuples(index=False):
            cell = "" if math.isnan(r.adjusted_pvalue) else repr(float(r.adjusted_pvalue))
            i, j = position[r.run_a], position[r.run_b]
            grid[i][j] = grid[j][i] = cell
        for run, row in zip(runs, grid):
            w.writerow([label, run] + row)
    return buf.getvalue()


def plot_pairs(cmp: Any, results: dict, path: str | None = None, kind: str = "auto") -> Figure:
    """See [`Comparison.plot_pairs`][irmeasures_markov.comparison.Comparison.plot_pairs]."""
    plt = pyplot("Comparison.plot_pairs")

    from irmeasures_markov.inference._tukey_plot import PAIRS_SHOWN, tukey_panel
    n_pairs = max(len(r.a) for r in results.values())
    pairs = kind == "pairs" or (kind == "auto" and n_pairs <= PAIRS_SHOWN)
    height = max(2.5, 0.22 * (n_pairs if pairs else len(cmp.runs)) + 1.2)
    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), height), squeeze=False)
    for ax, (label, result) in zip(axes[0], results.items()):
        tukey_panel(result, cmp.alpha, ax, f"{label}: Tukey HSD ({result.method})", kind)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig
