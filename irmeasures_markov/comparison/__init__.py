r"""Comparing systems: one table of runs × measures with significance markers.

:func:`compare` evaluates every run on every measure (with
:func:`irmeasures_markov.experiments.evaluate`, so AP, P@k, nDCG, ... have
trec_eval's float64 values), tests the runs against a baseline or every pair
against every other, corrects for multiple comparisons, and returns a
:class:`Comparison`: the labelled means (``.table``), the tests
(``.tests``), and renderings (``.to_text()``, ``.to_markdown()``,
``.to_latex()``, ``.to_csv()``) plus ``.plot()`` of the per-topic differences.

Tests (``test=``), on the per-topic scores of one measure, A − B for each pair:

* ``'t'``, ``'wilcoxon'``, ``'sign'``, ``'randomization'``, ``'bootstrap'`` —
  the classic paired tests of :mod:`irmeasures_markov.inference.classic`
  (their models are stated there); every pair's p-value is the one
  :func:`~irmeasures_markov.inference.classic.all_pairs` gives it with the
  same ``seed``;
* ``'none'`` — no test: the means only (the tests table keeps each pair's
  mean difference and effect size; its p-values are NaN and no pair is
  significant).  It is also what a comparison on fewer than 2 topics does,
  with a warning, since no paired test is possible on one topic;
* ``'bayes'`` — Carterette's (2011) linear model
  :math:`y_{ij} = \mu + \beta_j + \alpha_i + \varepsilon_{ij}` fitted once per
  measure to every run together (:func:`~irmeasures_markov.inference.bayes.gibbs_linear_model`,
  numpy only); the statistic is the posterior probability
  :math:`P(\beta_A > \beta_B \mid y)` and the "p-value" its two-sided tail
  :math:`2\min(P(\beta_A > \beta_B), P(\beta_A < \beta_B))` (one-sided:
  :math:`P(\beta_A \le \beta_B)` for ``'greater'``).  It is not corrected:
  the joint hierarchical model already pools the systems' effects
  (Gelman, Hill & Yajima 2012), so ``correction`` must be ``'none'``/None.

Effect size: Cohen's :math:`d_z = \bar d / s_d`, the mean of the paired
per-topic differences over their standard deviation (``ddof=1``); 0 when all
differences are 0, ±inf when they are all equal and non-zero, NaN with one topic.

Confidence intervals (``ci=0.95``): the t interval of each run's mean over
topics, :math:`\bar y \pm t_{(1+\ell)/2,\,n-1}\, s/\sqrt n`.

Markers (a pair is significant when its corrected p-value is below ``alpha``):

* against a baseline: ``▲`` the run is significantly better than the baseline,
  ``▼`` significantly worse (LaTeX: ``$^{\blacktriangle}$``/``$^{\blacktriangledown}$``, amssymb);
* all pairs: every run gets a letter (``a``, ``b``, ... in the order given;
  ``A``.. after ``z``), and a mean carries the letters of the runs it is
  significantly better than;
* the best mean of each measure is bold in Markdown and LaTeX;
* ``effect=True`` (baseline only) adds each run's d_z against the baseline, ``(d=+0.31)``.
"""
from __future__ import annotations

import glob
import math
import os
from dataclasses import dataclass, field
from itertools import combinations
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["compare", "compare_evaluation", "Comparison", "COMPARE_TESTS", "CORRECTIONS", "effect_size", "mean_intervals",
           "resolve_baseline", "resolve_run_paths", "run_letters"]

#: the tests :func:`compare` knows
COMPARE_TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "bayes", "none")
#: the multiple-comparison corrections (the same as :func:`~irmeasures_markov.inference.classic.adjust_pvalues`)
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")

UP, DOWN = "\u25b2", "\u25bc"
_GLOB_CHARS = set("*?[")


def effect_size(d) -> np.ndarray:
    """Cohen's d_z of paired differences: ``mean(d) / std(d, ddof=1)`` along axis 0 (topics).

    NaN with fewer than 2 topics (no standard deviation to divide by).
    """
    d = np.asarray(d, dtype=np.float64)
    mean = d.mean(axis=0)
    if d.shape[0] < 2:
        return np.full_like(mean, np.nan)
    sd = d.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0), np.where(mean == 0, 0.0, np.sign(mean) * np.inf))


def mean_intervals(values, level: float = 0.95) -> np.ndarray:
    """t intervals of the means over axis 0: ``[..., (low, high)]`` for ``values`` of shape (topics, ...)."""
    from scipy import stats
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[0]
    mean = v.mean(axis=0)
    if n < 2:  # no spread to estimate from one topic: the interval is undefined
        return np.stack([np.full_like(mean, np.nan), np.full_like(mean, np.nan)], axis=-1)
    half = stats.t.ppf((1 + level) / 2, n - 1) * v.std(axis=0, ddof=1) / math.sqrt(n)
    return np.stack([mean - half, mean + half], axis=-1)


def run_letters(n: int) -> List[str]:
    """Letters naming n runs in all-pairs markers: a..z, then A..Z, then 53, 54, ... as numbers."""
    import string
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    return [alphabet[i] if i < len(alphabet) else str(i + 1) for i in range(n)]


def resolve_run_paths(specs: Union[str, os.PathLike, Sequence]) -> List[str]:
    """Run files from files, directories (their ``input.*`` files, else every file) and glob patterns.

    Order: the specs in the order given; files of one directory or pattern sorted.
    Raises ``FileNotFoundError`` naming a spec that matches nothing.
    """
    from ..datasets import list_run_files
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: List[str] = []
    for spec in specs:
        spec = os.fspath(spec)
        if os.path.isdir(spec):
            found = list_run_files(spec)
        elif os.path.exists(spec):
            found = [spec]
        elif _GLOB_CHARS & set(spec):
            found = sorted(f for f in glob.glob(spec) if os.path.isfile(f))
            if not found:
                raise FileNotFoundError(f"{spec}: no run file matches this pattern")
        else:
            raise FileNotFoundError(f"{spec}: no such file or directory")
        out += [f for f in found if f not in out]
    return out


def _load_runs(runs) -> Tuple[Dict[str, dict], Dict[str, str]]:
    """``({name: run}, {name: path})`` from a mapping (values: run dicts or paths) or paths/directories/globs."""
    from ..datasets import read_run, run_names  # read_run: the fast reader, io.read_trec_run's dicts and errors
    if isinstance(runs, Mapping):
        paths = {str(k): os.fspath(v) for k, v in runs.items() if isinstance(v, (str, os.PathLike))}
        return {str(k): (read_run(paths[str(k)]) if str(k) in paths else v) for k, v in runs.items()}, paths
    files = resolve_run_paths(runs)
    paths = dict(zip(run_names(files), files))
    return {name: read_run(p) for name, p in paths.items()}, paths


def resolve_baseline(baseline, runs: Sequence[str], paths: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The name of the run ``baseline`` designates: a run name, a run's file path, or a file name.

    ``runs`` are the run names, ``paths`` the file of each run read from one
    (``{name: path}``).  ``baseline`` is, in this order: a run name; the path
    of one of the runs' files (compared as absolute paths); a file name
    without a directory whose :func:`~irmeasures_markov.datasets.run_name` is
    a run name (``bm25.run`` for the run ``bm25``).  None gives None;
    anything else is a ``ValueError`` listing the runs.
    """
    if baseline is None:
        return None
    from ..datasets import run_name
    names = [str(n) for n in runs]
    spec = os.fspath(baseline) if isinstance(baseline, os.PathLike) else str(baseline)
    if spec in names:
        return spec
    for name, path in (paths or {}).items():
        if os.path.abspath(spec) == os.path.abspath(path):
            return name
    if os.path.basename(spec) == spec and run_name(spec) in names:
        return run_name(spec)
    raise ValueError(f"`baseline` {spec!r} is not one of the runs ({', '.join(names[:10])}"
                     f"{', ...' if len(names) > 10 else ''}): give a run name or one of the run files")


def _compare_iv(runs, baseline, test, correction, alpha, alternative, ci, n_resamples):
    """Validated options; ``correction`` normalised to a name."""
    from ..inference.classic import ALTERNATIVES
    if test not in COMPARE_TESTS:
        raise ValueError(f"`test` must be one of {list(COMPARE_TESTS)}, got {test!r}.")
    if correction is None:
        correction = "none" if test in ("bayes", "none") else "holm"
    if correction not in CORRECTIONS:
        raise ValueError(f"`correction` must be one of {list(CORRECTIONS)}, got {correction!r}.")
    if test == "bayes" and correction != "none":
        raise ValueError("`test='bayes'` takes no correction: its posterior probabilities come from one "
                         "hierarchical model of every run, which already pools them; use correction='none'.")
    if test == "none" and correction != "none":
        raise ValueError("`test='none'` runs no test, so it takes no correction; use correction='none'.")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"`alternative` must be one of {list(ALTERNATIVES)}, got {alternative!r}.")
    if isinstance(alpha, bool) or not (0.0 < float(alpha) < 1.0):
        raise ValueError(f"`alpha` must be in (0, 1), got {alpha!r}.")
    if ci is not None and (isinstance(ci, bool) or not (0.0 < float(ci) < 1.0)):
        raise ValueError(f"`ci` must be a confidence level in (0, 1) (e.g. 0.95) or None, got {ci!r}.")
    if int(n_resamples) < 1:
        raise ValueError(f"`n_resamples` must be a positive integer, got {n_resamples!r}.")
    if len(runs) < 2:
        raise ValueError(f"comparing needs at least 2 runs, got {len(runs)}.")
    if baseline is not None and str(baseline) not in runs:
        raise ValueError(f"`baseline` {baseline!r} is not one of the runs {list(runs)[:10]}.")
    return correction


@dataclass(eq=False)  # DataFrame fields have no boolean equality
class Comparison:
    """Runs compared on several measures (see the module docstring for the tests and markers).

    Attributes
    ----------
    table : DataFrame
        Means, index ``run``, columns the measure labels.
    intervals : DataFrame or None
        With ``ci``: columns ``(measure, 'low'|'high')``.
    tests : DataFrame
        One row per measure and pair: ``measure, run_a, run_b, mean_difference, effect_size,
        statistic, pvalue, adjusted_pvalue, significant`` (A − B; against a baseline A is the run and B the
        baseline).
    evaluation : :class:`~irmeasures_markov.experiments.Evaluation`
        The per-topic values behind everything.
    """
    table: object
    intervals: Optional[object]
    tests: object
    evaluation: object
    baseline: Optional[str]
    test: str
    correction: str
    alpha: float
    alternative: str
    ci: Optional[float]
    markers: object = None
    letters: Dict[str, str] = field(default_factory=dict)

    @property
    def runs(self) -> List[str]:
        return list(self.evaluation.runs)

    @property
    def labels(self) -> List[str]:
        return list(self.evaluation.labels)

    def pvalues(self, measure, adjusted: bool = False):
        """p-values of one measure as a Series indexed by ``(run_a, run_b)``."""
        label = self.labels[self.evaluation._index(measure)]
        rows = self.tests[self.tests["measure"] == label]
        col = "adjusted_pvalue" if adjusted else "pvalue"
        return rows.set_index(["run_a", "run_b"])[col]

    def legend(self, effect: bool = False) -> str:
        from .render import legend
        return legend(self, effect)

    def to_text(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """The means table as aligned text with the legend (``pairs=True``: the tests table)."""
        from .render import to_text
        return to_text(self, places, pairs, effect)

    def to_markdown(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """A Markdown pipe table; best means bold, letters as ``<sup>``."""
        from .render import to_markdown
        return to_markdown(self, places, pairs, effect)

    def to_latex(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """A LaTeX ``tabular`` (``\\hline`` rules only; the triangles need amssymb), legend as comments."""
        from .render import to_latex
        return to_latex(self, places, pairs, effect)

    def to_csv(self, sep: str = ",", places: int = -1, pairs: bool = False) -> str:
        """CSV (or TSV with ``sep='\\t'``): one row per run, or one per test with ``pairs=True``."""
        from .render import to_delimited
        return to_delimited(self, sep, places, pairs)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_markdown_(self) -> str:  # notebooks
        return self.to_markdown()

    def plot(self, measure=None, *, baseline: Optional[str] = None, axes=None):
        """Per-topic differences (run − baseline) of one measure, one panel per compared run.

        Bars are the topics sorted by difference; the title gives the mean
        difference and the test's (corrected) p-value.  ``baseline`` defaults
        to the comparison's baseline, else the first run.  Needs matplotlib
        (``pip install "irmeasures-markov[plot]"``).  Returns the figure.
        """
        from .render import plot
        return plot(self, measure, baseline, axes)


def _bayes_pairs(values, a, b, alternative, seed, draws, chains, progress):
    """Posterior P(β_A > β_B) of the joint linear model and its tail "p-value" for each pair."""
    from ..inference.bayes import prob_better_pairs
    p_ab, p_ba = prob_better_pairs(values, a, b, draws=draws, tune=draws, chains=chains, seed=seed,
                                   progress=progress)
    if alternative == "two-sided":
        p = np.minimum(1.0, 2.0 * np.minimum(p_ab, p_ba))
    elif alternative == "greater":
        p = 1.0 - p_ab
    else:
        p = 1.0 - p_ba
    return p_ab, p


def compare(qrels, runs, measures, *, baseline: Optional[str] = None, test: str = "t",
            correction: Optional[str] = None, alpha: float = 0.05, alternative: str = "two-sided",
            ci: Optional[float] = None, n_resamples: int = 10000, seed: Optional[int] = 0,
            topics: Optional[Sequence[str]] = None, labels: Optional[Sequence[str]] = None, n_jobs: int = 1,
            progress: Optional[bool] = None, bayes_draws: int = 2000, bayes_chains: int = 4) -> Comparison:
    """Evaluate runs on measures and test them against a baseline or pairwise.

    Parameters
    ----------
    qrels : dict or path
        ``{qid: {docid: grade}}`` or a TREC qrels file (any form
        :func:`~irmeasures_markov.experiments.evaluate` takes).
    runs : mapping or paths
        ``{name: run}`` (run dicts or file paths), or run files, directories
        and glob patterns (names from the file names by
        :func:`~irmeasures_markov.datasets.run_name`: ``input.NAME.gz``,
        ``NAME.run``, ``NAME.txt.gz`` -> ``NAME``; two files giving one name are
        an error naming both).
    measures : list, or dict {label: measure}
        As for :func:`~irmeasures_markov.experiments.evaluate`.
    baseline : str or path, optional
        Test every other run against this one (A = run, B = baseline); a run
        name, a run's file, or its file name (:func:`resolve_baseline`).  The
        baseline comes first in the tables.  Default: every pair.
    test : {'t', 'wilcoxon', 'sign', 'randomization', 'bootstrap', 'bayes', 'none'}
        ``'none'``: the means only.  With fewer than 2 topics no test is possible: the comparison is
        made as with ``'none'`` and a ``UserWarning`` says so.
    correction : {'holm', 'bonferroni', 'fdr_bh', 'none'}, optional
        Over the pairs of one measure.  Default ``'holm'`` (``'none'`` for ``'bayes'`` and ``'none'``).
    alpha : float
        Significance level of the markers (on the corrected p-values).
    alternative : {'two-sided', 'greater', 'less'}
    ci : float, optional
        Confidence level of the t intervals of the means (e.g. 0.95); None: no intervals.
    n_resamples, seed
        Randomization/bootstrap resamples and their seed (``seed`` also seeds the Bayesian sampler).
    topics, labels, n_jobs, progress
        As for :func:`~irmeasures_markov.experiments.evaluate` (topics default to every qrels topic).
    bayes_draws, bayes_chains
        Gibbs draws (after as many tuning steps) and chains for ``test='bayes'``.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        An unknown test or correction, ``alpha``/``ci`` outside (0, 1), fewer than 2 runs, a baseline that is
        not a run, a correction with ``test='bayes'``.
    """
    from ..experiments import evaluate
    from ..inputs import to_qrels_dict
    qrels = to_qrels_dict(qrels)
    runs, paths = _load_runs(runs)
    baseline = resolve_baseline(baseline, list(runs), paths)
    correction = _compare_iv(runs, baseline, test, correction, alpha, alternative, ci, n_resamples)
    ev = evaluate(measures, qrels, runs, topics=topics, labels=labels, n_jobs=n_jobs, progress=progress)
    return compare_evaluation(ev, baseline=baseline, test=test, correction=correction, alpha=alpha,
                              alternative=alternative, ci=ci, n_resamples=n_resamples, seed=seed,
                              progress=progress, bayes_draws=bayes_draws, bayes_chains=bayes_chains)


def compare_evaluation(evaluation, *, baseline: Optional[str] = None, test: str = "t",
                       correction: Optional[str] = None, alpha: float = 0.05, alternative: str = "two-sided",
                       ci: Optional[float] = None, n_resamples: int = 10000, seed: Optional[int] = 0,
                       progress: Optional[bool] = None, bayes_draws: int = 2000, bayes_chains: int = 4) -> Comparison:
    """:func:`compare` on an :class:`~irmeasures_markov.experiments.Evaluation` already computed."""
    import pandas as pd
    from ..inference.classic import pairwise
    ev = evaluation
    baseline = resolve_baseline(baseline, list(ev.runs))
    correction = _compare_iv(dict.fromkeys(ev.runs), baseline, test, correction, alpha, alternative, ci,
                             n_resamples)
    n_topics = len(ev.topics)
    if n_topics < 2 and test != "none":
        import warnings
        warnings.warn(f"{n_topics} topic{'' if n_topics == 1 else 's'}: no significance test is possible with "
                      "fewer than 2 topics; the means only (test 'none')", UserWarning, stacklevel=2)
        test, correction = "none", "none"
    if baseline is not None:  # the baseline first, in every table
        ev = _baseline_first(ev, baseline)
    names = list(ev.runs)
    if baseline is not None:
        base = 0
        pairs = [(j, base) for j in range(1, len(names))]
    else:
        pairs = list(combinations(range(len(names)), 2))
    a = np.array([x for x, _ in pairs], dtype=np.int64)
    b = np.array([y for _, y in pairs], dtype=np.int64)
    rows = []
    for j, label in enumerate(ev.labels):
        values = ev.values[:, j, :].T  # topics × runs
        diffs = values[:, a] - values[:, b]
        if test == "none":
            stat = p = adjusted = np.full(len(pairs), np.nan)
        elif test == "bayes":
            stat, p = _bayes_pairs(values, a, b, alternative, seed, int(bayes_draws), int(bayes_chains), progress)
            adjusted = p.copy()
        else:
            res = pairwise(values, pairs, test, alternative=alternative,
                           correction=None if correction == "none" else correction, n_resamples=n_resamples,
                           seed=seed, progress=progress)
            stat, p, adjusted = res.statistic, res.pvalue, res.adjusted_pvalue
        d_z = effect_size(diffs)
        for k in range(len(pairs)):
            rows.append({"measure": label, "run_a": names[a[k]], "run_b": names[b[k]],
                         "mean_difference": float(diffs[:, k].mean()), "effect_size": float(d_z[k]),
                         "statistic": float(stat[k]), "pvalue": float(p[k]), "adjusted_pvalue": float(adjusted[k]),
                         "significant": bool(adjusted[k] < alpha)})
    tests = pd.DataFrame(rows, columns=["measure", "run_a", "run_b", "mean_difference", "effect_size", "statistic",
                                        "pvalue", "adjusted_pvalue", "significant"])
    intervals = None
    if ci is not None:
        iv = mean_intervals(np.moveaxis(ev.values, 2, 0), float(ci))  # runs × measures × 2
        cols = pd.MultiIndex.from_product([list(ev.labels), ["low", "high"]], names=["measure", "bound"])
        intervals = pd.DataFrame(iv.reshape(len(names), -1), index=pd.Index(names, name="run"), columns=cols)
    letters = dict(zip(names, run_letters(len(names)))) if baseline is None else {}
    cmp = Comparison(ev.means(), intervals, tests, ev, None if baseline is None else str(baseline), test,
                     correction, float(alpha), alternative, None if ci is None else float(ci), letters=letters)
    cmp.markers = _markers(cmp)
    return cmp


def _baseline_first(ev, baseline: str):
    """``ev`` with the run ``baseline`` moved first (the others keep their order)."""
    from ..experiments import Evaluation
    names = list(ev.runs)
    order = [names.index(baseline)] + [i for i, n in enumerate(names) if n != baseline]
    if order == list(range(len(names))):
        return ev
    return Evaluation([names[i] for i in order], list(ev.measures), list(ev.topics), ev.values[order],
                      list(ev.labels))


def _markers(cmp: Comparison):
    """The marker string of every (run, measure) cell, as a DataFrame shaped like ``table``."""
    import pandas as pd
    cells: Dict[tuple, List[int]] = {}
    position = {name: i for i, name in enumerate(cmp.runs)}
    for row in cmp.tests[cmp.tests["significant"]].itertuples(index=False):
        diff = row.mean_difference
        if diff == 0:
            continue
        if cmp.baseline is not None:
            cells.setdefault((row.run_a, row.measure), []).append(0 if diff > 0 else 1)
        else:
            winner, loser = (row.run_a, row.run_b) if diff > 0 else (row.run_b, row.run_a)
            cells.setdefault((winner, row.measure), []).append(position[loser])
    out = pd.DataFrame("", index=cmp.table.index, columns=cmp.table.columns)
    letters = list(cmp.letters.values())
    sep = "," if len(letters) > 52 else ""  # beyond z and Z the names are numbers
    for (run, label), marks in cells.items():
        if cmp.baseline is not None:
            out.loc[run, label] = UP if marks[0] == 0 else DOWN
        else:
            out.loc[run, label] = sep.join(letters[i] for i in sorted(marks))
    return out
