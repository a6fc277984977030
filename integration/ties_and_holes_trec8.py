"""Ties and holes on real runs: how much six measures depend on tie order and on unjudged documents.

Over all 129 TREC-8 ad hoc runs and the 10 Robust 2004 runs of the shared data, for AP, P@10, MP, PH,
M1 with the RBP distribution and TBG (seeded document lengths, see below):

* **Ties.** Every run is evaluated with ``ties='optimistic'`` (inside each group of equal scores the
  higher grades first) and ``ties='pessimistic'`` (lower grades first); per measure the table counts
  the run pairs whose order (sign of the difference of their means over topics) is not the same under
  the two, and gives the largest tie spread (optimistic - pessimistic mean) with its run.
* **Holes.** ``residual=True`` (the value with every unjudged retrieved document relevant minus the
  value with them non-relevant), as the per-run mean over topics: min / median / max over runs, on
  the full qrels and on pool-reduced qrels keeping 50 %, 30 % and 10 % of each topic's judgments
  (:func:`irmeasures_markov.io._datasets.downsample_qrels`, seeded and nested; the same reduction as the
  MP paper's Figures 3-4), with the share of (run, topic) pairs whose residual is negative.

Every value comes from ``experiments.evaluate(..., ties=, residual=)``, one call per setting for all six
measures. ``--reorder`` computes the same numbers by explicit constructions instead (a cross-check; the
integration test compares both): the run's scores are rewritten so that trec_eval's own order (score
desc, docid desc) is the optimistic or pessimistic order, and the residual of AP and P@10 is the
measure on qrels where each unjudged document the run retrieved is relevant at the topic's highest
judged grade (at least 1) minus the measure on the qrels, which is what ``unjudged='rel'`` means for
measures that do not read past the ranking (the others' residuals stay ``residual=True``).

TREC-8 and Robust04 document texts are not in the shared data, so TBG's lengths are an ASSUMPTION:
every document retrieved by a collection's runs gets a seeded log-normal length (median 300 words,
sigma 0.8, seed 0; as docs/scripts/make_tbg_figures.py draws them), and a document with no length
(ranks TBG adds after the ranking under ``unjudged='rel'``) is read as 300 words.

Usage (from the repository root; finds the data through ``$IRMEASURES_MARKOV_DATA`` or ../shared/data)::

    python integration/ties_and_holes_trec8.py [--out DIR] [--quick] [--reorder] [--n-jobs N]

Writes one figure per table (``ties_<collection>.png``, ``holes_<collection>.png``) to docs/figures/,
or with ``--out DIR`` the figures and ``tables.md`` to DIR; prints the tables, the date and the elapsed
time. ``--quick`` evaluates every 16th TREC-8 run and 3 Robust04 runs (for tests and a first look).
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import ir_measures  # noqa: E402
import numpy as np  # noqa: E402

import irmeasures_markov as imm  # noqa: E402
from irmeasures_markov.experiments import evaluate  # noqa: E402
from irmeasures_markov.io import downsample_qrels, load_run_dir, read_trec_qrels  # noqa: E402
from irmeasures_markov.testing import DATA_ENV, shared_data_dir  # noqa: E402

#: (name, qrels file, run directory) of each collection
COLLECTIONS = {"trec8": ("TREC-8", "trec8.qrels.gz", "trec8"),
               "robust04": ("Robust 2004", "robust04.qrels.gz", "robust04")}
#: label -> measure string (TBG gets its seeded lengths in :func:`measure_of`). The PH user is a random walk
#: (forward 0.6, back 0.3) over an endless ranking: PH's default user (RBP, p=0.8) would repeat M1 RBP's numbers.
MEASURES = {"AP": "AP", "P@10": "P@10", "MP": "MP", "PH": "PH(browse='RWBM',p=0.6,q=0.3,tail='inf')",
            "M1 RBP": "M1(dist='RBP')", "TBG": "TBG"}
NATIVE = ("AP", "P@10")
PERCENTS = (100, 50, 30, 10)
SEED = 0
MEDIAN_WORDS, SIGMA, DEFAULT_WORDS = 300, 0.8, 300
#: a residual counts as negative below -NEGATIVE (the difference of two values rounds to about 1e-16)
NEGATIVE = 1e-12


# ---------------------------------------------------------------------------
# data

@dataclass
class Collection:
    """One collection's qrels, runs (name -> {qid: {docid: score}}) and topics (those with a relevant document)."""
    key: str
    name: str
    qrels: dict
    runs: dict
    topics: list
    lengths: str = ""
    reordered: dict = field(default_factory=dict)   # ties mode -> reordered runs, "top10" -> top documents


def load_collection(key: str, data_dir: pathlib.Path, runs: Sequence[str] | None = None) -> Collection:
    """Read a collection of :data:`COLLECTIONS`; ``runs`` keeps only these run names (in this order)."""
    name, qrels_file, run_dir = COLLECTIONS[key]
    qrels = read_trec_qrels(data_dir / "qrels" / qrels_file)
    all_runs = load_run_dir(data_dir / "runs" / run_dir, progress=False)
    names = sorted(all_runs) if runs is None else list(runs)
    missing = [n for n in names if n not in all_runs]
    if missing:
        raise ValueError(f"runs {missing} are not in {data_dir / 'runs' / run_dir}")
    topics = sorted(q for q, docs in qrels.items() if any(g >= 1 for g in docs.values()))
    col = Collection(key, name, qrels, {n: all_runs[n] for n in names}, topics)
    col.lengths = register_seeded_lengths(f"ties-and-holes-{key}", all_runs.values())
    return col


def register_seeded_lengths(name: str, runs, seed: int = SEED) -> str:
    """Register a seeded log-normal length (words) for every document ``runs`` retrieve (sorted docids)."""
    docids = sorted({d for run in runs for docs in run.values() for d in docs})
    rng = np.random.default_rng(seed)
    lengths = np.round(rng.lognormal(np.log(MEDIAN_WORDS), SIGMA, len(docids)))
    return imm.register_lengths(name, dict(zip(docids, lengths.tolist())))


def measure_of(label: str, lengths: str, **params):
    """The measure object of a label of :data:`MEASURES` with the given variant parameters."""
    if label == "TBG":
        return imm.TBG(lengths=lengths, default_length=float(DEFAULT_WORDS), **params)
    m = ir_measures.parse_measure(MEASURES[label])
    return m(**params) if params else m


# ---------------------------------------------------------------------------
# explicit constructions (the fallback for AP and P@10, and the tests' reference for every measure)

def reordered_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                  ties: str) -> dict:
    """The run with scores rewritten so that trec_eval's order (score desc, docid desc) is the ``ties`` order.

    ``'optimistic'``: inside a group of equal scores, higher grades first, then docid desc;
    ``'pessimistic'``: lower grades first. An unjudged document counts as grade 0 for this ordering.
    The new score of the document at rank i (from 0) of a topic of n documents is ``float(n - i)``.
    """
    if ties not in ("optimistic", "pessimistic"):
        raise ValueError(f"ties must be 'optimistic' or 'pessimistic', got {ties!r}")
    sign = 1 if ties == "optimistic" else -1
    out = {}
    for qid, docs in run.items():
        judged = qrels.get(qid, {})
        order = sorted(docs, key=lambda d: (docs[d], sign * judged.get(d, 0), d), reverse=True)
        n = len(order)
        out[qid] = {d: float(n - i) for i, d in enumerate(order)}
    return out


def filled_qrels(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]) -> dict:
    """``qrels`` where every document of ``run`` without a judgment is relevant at max(1, highest judged grade)."""
    out = {}
    for qid, judged in qrels.items():
        docs = run.get(qid, {})
        fill = max([1, *judged.values()])
        extra = {d: fill for d in docs if d not in judged}
        out[qid] = {**judged, **extra} if extra else judged
    return out


def paths_note(reorder: bool) -> str:
    """One sentence saying where the tie orders and residuals come from."""
    if reorder:
        return ("Tie orders by explicitly reordered runs; residuals of AP and P@10 by qrels filled with the "
                "unjudged retrieved documents, of the others by residual=True.")
    return "Every value through experiments.evaluate(..., ties=, residual=)."


# ---------------------------------------------------------------------------
# per-topic values: arrays [run, topic] in the order of col.runs and col.topics

def _evaluate(measure, qrels, runs, topics, n_jobs, **setting) -> np.ndarray:
    ev = evaluate([measure], qrels, runs, topics=topics, progress=False, n_jobs=n_jobs, **setting)
    return np.asarray(ev.values)[:, 0, :]


def tie_values(label: str, col: Collection, ties: str, *, reorder: bool = False, n_jobs: int = 1) -> np.ndarray:
    """Per (run, topic) value of measure ``label`` under ``ties`` ('docid', 'optimistic' or 'pessimistic').

    ``reorder``: evaluate the default measure on the runs reordered by :func:`reordered_run` instead.
    """
    m = measure_of(label, col.lengths)
    if ties == "docid":
        return _evaluate(m, col.qrels, col.runs, col.topics, n_jobs)
    if reorder:
        if ties not in col.reordered:
            col.reordered[ties] = {n: reordered_run(r, col.qrels, ties) for n, r in col.runs.items()}
        return _evaluate(m, col.qrels, col.reordered[ties], col.topics, n_jobs)
    return _evaluate(m, col.qrels, col.runs, col.topics, n_jobs, ties=ties)


def residual_values(label: str, col: Collection, qrels: Mapping, *, reorder: bool = False,
                    n_jobs: int = 1) -> np.ndarray:
    """Per (run, topic) residual (value with unjudged relevant - value with them non-relevant) on ``qrels``.

    ``reorder`` (AP and P@10 only, which do not read past the ranking): the measure on :func:`filled_qrels`
    minus the measure on ``qrels`` instead.
    """
    m = measure_of(label, col.lengths)
    if reorder and label in NATIVE:
        base = _evaluate(m, qrels, col.runs, col.topics, n_jobs)
        filled = np.vstack([_evaluate(m, filled_qrels(r, qrels), {n: r}, col.topics, 1)
                            for n, r in col.runs.items()])
        return filled - base
    return _evaluate(m, qrels, col.runs, col.topics, n_jobs, residual=True)


def top_documents(runs: Mapping, topics: Sequence[str], k: int = 10) -> list[list[list[str]]]:
    """Per run and topic, the top ``k`` documents in trec_eval order (score desc, docid desc)."""
    return [[sorted(docs, key=lambda d, docs=docs: (docs[d], d), reverse=True)[:k]
             for docs in (run.get(q, {}) for q in topics)] for run in runs.values()]


def judged_share(top: list[list[list[str]]], qrels: Mapping, topics: Sequence[str], k: int = 10) -> np.ndarray:
    """Per run, the share of judged documents in the top ``k`` (:func:`top_documents`), averaged over topics."""
    judged = [qrels.get(q, {}) for q in topics]
    return np.array([np.mean([sum(d in j for d in docs) / k for docs, j in zip(run, judged)]) for run in top])


# ---------------------------------------------------------------------------
# summaries

def swapped_pairs(a: np.ndarray, b: np.ndarray) -> int:
    """Pairs i < j of runs whose sign of difference differs between the means ``a`` and ``b``."""
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    return int(np.triu(sa != sb, 1).sum())


@dataclass
class TieResult:
    label: str
    docid: np.ndarray        # per-run means
    optimistic: np.ndarray
    pessimistic: np.ndarray
    per_topic_opt: np.ndarray
    per_topic_pes: np.ndarray

    @property
    def spread(self) -> np.ndarray:
        return self.optimistic - self.pessimistic

    @property
    def swaps(self) -> int:
        return swapped_pairs(self.optimistic, self.pessimistic)


@dataclass
class HoleResult:
    label: str
    percent: float
    per_topic: np.ndarray    # [run, topic] residuals
    judged10: np.ndarray     # per run judged share of the top 10

    @property
    def per_run(self) -> np.ndarray:
        return self.per_topic.mean(axis=1)


def _all_values(labels: Sequence[str], col: Collection, qrels: Mapping, n_jobs: int, **setting) -> dict:
    """``{label: values[run, topic]}`` of every measure under one setting of ``experiments.evaluate``."""
    measures = [measure_of(label, col.lengths) for label in labels]
    ev = evaluate(measures, qrels, col.runs, topics=col.topics, progress=False, n_jobs=n_jobs, **setting)
    values = np.asarray(ev.values)
    return {label: values[:, j, :] for j, label in enumerate(labels)}


def run_ties(col: Collection, *, reorder: bool = False, n_jobs: int = 1,
             measures: Sequence[str] = tuple(MEASURES)) -> list[TieResult]:
    """Per measure, the per-run means under the docid, optimistic and pessimistic tie orders."""
    if not reorder:
        base, opt, pes = (_all_values(measures, col, col.qrels, n_jobs, **({"ties": t} if t != "docid" else {}))
                          for t in ("docid", "optimistic", "pessimistic"))
    else:
        base, opt, pes = ({label: tie_values(label, col, t, reorder=reorder, n_jobs=n_jobs) for label in measures}
                          for t in ("docid", "optimistic", "pessimistic"))
    return [TieResult(label, base[label].mean(axis=1), opt[label].mean(axis=1), pes[label].mean(axis=1),
                      opt[label], pes[label]) for label in measures]


def run_holes(col: Collection, *, percents=PERCENTS, reorder: bool = False, n_jobs: int = 1,
              measures: Sequence[str] = tuple(MEASURES)) -> list[HoleResult]:
    """Per pool size and measure, the residual of every run and topic, with the judged share of the top 10."""
    out = []
    if "top10" not in col.reordered:
        col.reordered["top10"] = top_documents(col.runs, col.topics)
    for pc in percents:
        qrels = col.qrels if pc == 100 else downsample_qrels(col.qrels, pc, seed=SEED)
        judged = judged_share(col.reordered["top10"], qrels, col.topics)
        if not reorder:
            values = _all_values(measures, col, qrels, n_jobs, residual=True)
        else:
            values = {label: residual_values(label, col, qrels, reorder=reorder, n_jobs=n_jobs) for label in measures}
        out.extend(HoleResult(label, float(pc), values[label], judged) for label in measures)
    return out


def ties_table(col: Collection, results: list[TieResult]) -> str:
    names = list(col.runs)
    n = len(names)
    lines = [f"**{col.name}** ({n} runs, {len(col.topics)} topics, {n * (n - 1) // 2} run pairs)", "",
             "| measure | runs with ties that matter | pairs swapping (optimistic vs pessimistic) "
             "| mean tie spread | largest tie spread (run) |",
             "|---|---:|---:|---:|---|"]
    for r in results:
        s = r.spread
        i = int(np.argmax(s))
        share = 100 * r.swaps / max(1, n * (n - 1) // 2)
        lines.append(f"| {r.label} | {int((s > 0).sum())} | {r.swaps} ({share:.1f} %)"
                     f" | {s.mean():.4f} | {f'{s[i]:.4f} ({names[i]})' if s[i] > 0 else '0'} |")
    return "\n".join(lines)


def holes_table(col: Collection, results: list[HoleResult]) -> str:
    names = list(col.runs)
    lines = [f"**{col.name}** ({len(col.runs)} runs; residual = per-run mean over {len(col.topics)} topics)", "",
             "| measure | pool kept | judged in top 10 | residual min | median | max (run) | mean | mean - full pool "
             "| (run, topic) < 0 |",  # below -NEGATIVE: rounding of two values ~1 apart is not a negative residual
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    full = {r.label: r.per_run.mean() for r in results if r.percent == 100}
    for label in dict.fromkeys(r.label for r in results):
        for r in (x for x in results if x.label == label):
            v = r.per_run
            grow = v.mean() - full[label] if label in full else float("nan")
            neg = 100 * (r.per_topic < -NEGATIVE).mean()
            lines.append(f"| {label} | {r.percent:g} % | {100 * r.judged10.mean():.1f} % | {v.min():.4f} "
                         f"| {np.median(v):.4f} | {v.max():.4f} ({names[int(np.argmax(v))]}) | {v.mean():.4f} "
                         f"| {grow:+.4f} | {neg:.1f} % |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# figures

def plot_ties(col: Collection, results: list[TieResult], path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), constrained_layout=True)
    for ax, r in zip(axes.flat, results):
        order = np.argsort(-r.docid, kind="stable")
        x = np.arange(len(order))
        ax.vlines(x, r.pessimistic[order], r.optimistic[order], color="tab:red", lw=1.5,
                  label="pessimistic .. optimistic")
        ax.plot(x, r.docid[order], ".", color="black", ms=3, label="docid (trec_eval)")
        ax.set_title(f"{r.label}: {r.swaps} pairs swap, max spread {r.spread.max():.3f}", fontsize=10)
        ax.set_xlabel("run (by trec_eval-order mean)")
        ax.set_ylabel("mean over topics")
    for ax in axes.flat[len(results):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{col.name}: each run's mean under the pessimistic and optimistic tie orders")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_holes(col: Collection, results: list[HoleResult], path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = list(dict.fromkeys(r.label for r in results))
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), constrained_layout=True)
    for ax, label in zip(axes.flat, labels):
        rs = sorted((r for r in results if r.label == label), key=lambda r: -r.percent)
        pcs = [r.percent for r in rs]
        v = [r.per_run for r in rs]
        ax.fill_between(pcs, [x.min() for x in v], [x.max() for x in v], color="tab:blue", alpha=0.2,
                        label="min..max over runs")
        ax.plot(pcs, [np.median(x) for x in v], "o-", color="tab:blue", label="median run")
        ax.axhline(0, color="grey", lw=0.8)
        ax.invert_xaxis()
        ax.set_xticks(pcs)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("% of the pool kept")
        ax.set_ylabel("mean residual")
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{col.name}: residual (unjudged relevant - unjudged non-relevant) as the pool shrinks")
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=None,
                    help="write the figures and tables.md here (default: figures to docs/figures, tables printed)")
    ap.add_argument("--quick", action="store_true", help="every 16th TREC-8 run and 3 Robust04 runs")
    ap.add_argument("--reorder", action="store_true",
                    help="tie orders by explicitly reordered runs, AP/P@10 residuals by filled qrels (a cross-check)")
    ap.add_argument("--collections", default="trec8,robust04", help="comma-separated: trec8, robust04")
    ap.add_argument("--measures", default=";".join(MEASURES),
                    help=f"semicolon-separated subset of {'; '.join(MEASURES)}")
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    measures = [m.strip() for m in args.measures.split(";") if m.strip()]
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        ap.error(f"--measures: unknown {unknown}; allowed: {'; '.join(MEASURES)}")
    data = shared_data_dir()
    if data is None:
        sys.exit(f"shared TREC data not found: set {DATA_ENV} or place it at ../shared/data")
    out_dir = args.out if args.out is not None else REPO / "docs" / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    header = [f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, irmeasures_markov "
              f"{imm.__version__}{'; --quick subset' if args.quick else ''}. {paths_note(args.reorder)}"]
    sections = []
    for key in args.collections.split(","):
        subset = None
        if args.quick:
            names = sorted(p.name[len("input."):-len(".gz")]
                           for p in (data / "runs" / COLLECTIONS[key][2]).glob("input.*.gz"))
            subset = names[::16] if key == "trec8" else names[:3]
        col = load_collection(key, data, subset)
        t0 = time.perf_counter()
        ties = run_ties(col, reorder=args.reorder, n_jobs=args.n_jobs, measures=measures)
        holes = run_holes(col, reorder=args.reorder, n_jobs=args.n_jobs, measures=measures)
        plot_ties(col, ties, out_dir / f"ties_{key}.png")
        plot_holes(col, holes, out_dir / f"holes_{key}.png")
        sections.append(f"### Ties, {col.name}\n\n{ties_table(col, ties)}\n\n"
                        f"### Holes, {col.name}\n\n{holes_table(col, holes)}\n")
        print(f"[{key}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr)
    elapsed = time.perf_counter() - start
    text = "\n".join(header) + f" Elapsed {elapsed:.0f} s.\n\n" + "\n".join(sections)
    print(text)
    if args.out is not None:
        (out_dir / "tables.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
