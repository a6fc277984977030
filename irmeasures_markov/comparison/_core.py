"""Runs × measures with significance tests: [`compare`][irmeasures_markov.comparison.compare],
[`compare_evaluation`][irmeasures_markov.comparison.compare_evaluation] and
[`Comparison`][irmeasures_markov.comparison.Comparison].

The tests, corrections, effect sizes, intervals and markers are stated in
[`irmeasures_markov.comparison`][irmeasures_markov.comparison]; the renderings are in `render`.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
from ir_measures import Measure
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.comparison import _render as render
from irmeasures_markov.comparison._options import applied_note, evaluate_with_options, unsupported_note
from irmeasures_markov.comparison._pairs import TUKEY_TESTS, effect_size, pair_tests, tukey_pairs
from irmeasures_markov.comparison._runs import RunsSpec, load_runs, resolve_baseline
from irmeasures_markov.comparison._sensitivity import Sensitivity, sensitivity
from irmeasures_markov.experiments import Evaluation
from irmeasures_markov.experiments._evaluation import MeasuresLike, QrelsLike
from irmeasures_markov.inference._classic import ALTERNATIVES
from irmeasures_markov.inference._corrections import CORRECTIONS  # the corrections compare() takes
from irmeasures_markov.inference._letters import letter_names
from irmeasures_markov.inference._multiple import TukeyResult, tukey_from_matrix, tukey_measures
from irmeasures_markov.io._normalise import qrels_dict

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

# imported at the first interval, so that importing the package does not load scipy.stats
stats = lazy_module("scipy.stats")

__all__ = ["COMPARE_TESTS", "Comparison", "compare", "compare_evaluation", "mean_intervals",
           "check_test_options", "python_spelling"]

#: the tests :func:`compare` knows
COMPARE_TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "bayes", "none", "tukey", "anova")
#: runs beyond which Tukey groups are written compactly (a-d for abcd)
COMPACT_RUNS = 12
#: the tests that take no correction (it defaults to 'none' for them), and why
UNCORRECTED = {"bayes": "takes no correction: its posterior probabilities come from one hierarchical model of every "
                        "run, which already pools them",
               "none": "runs no test, so it takes no correction",
               **dict.fromkeys(TUKEY_TESTS, "takes no correction: Tukey's HSD p-values are already family-wise over "
                                            "every pair")}


def mean_intervals(values: ArrayLike, level: float = 0.95) -> np.ndarray:
    r"""t intervals of the means over axis 0: $\bar y \pm t_{(1+\ell)/2,\,n-1}\, s/\sqrt n$.

    Parameters
    ----------
    values : array_like
        Shape (topics, ...).
    level : float
        Confidence level ℓ.

    Returns
    -------
    numpy.ndarray
        Shape ``values.shape[1:] + (2,)``: ``(low, high)``; NaN with fewer than 2 topics.
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[0]
    mean = v.mean(axis=0)
    if n < 2:  # no spread to estimate from one topic: the interval is undefined
        return np.stack([np.full_like(mean, np.nan), np.full_like(mean, np.nan)], axis=-1)
    half = stats.t.ppf((1 + level) / 2, n - 1) * v.std(axis=0, ddof=1) / math.sqrt(n)
    return np.stack([mean - half, mean + half], axis=-1)


def python_spelling(name: str, value: object = None) -> str:
    """A parameter as a Python caller writes it, `` `name` `` or `` `name='value'` ``: the messages of
    `check_test_options` name what the caller typed."""
    return f"`{name}`" if value is None else f"`{name}={value!r}`"


def check_test_options(test, correction, alpha, alternative, ci, n_resamples, spell=python_spelling) -> str:
    """The test options of `compare` checked (by the command line too, before it reads a run, with its own
    ``spell``ing of the options); returns ``correction`` normalised to a name."""
    if test not in COMPARE_TESTS:
        raise ValueError(f"{spell('test')} must be one of {list(COMPARE_TESTS)}, got {test!r}.")
    if correction is None:
        correction = "none" if test in UNCORRECTED else "holm"
    if correction not in CORRECTIONS:
        raise ValueError(f"{spell('correction')} must be one of {list(CORRECTIONS)}, got {correction!r}.")
    if test in UNCORRECTED and correction != "none":
        raise ValueError(f"{spell('test', test)} {UNCORRECTED[test]}; use {spell('correction', 'none')}.")
    if test in TUKEY_TESTS and alternative != "two-sided":
        raise ValueError(f"{spell('test', test)} is two-sided (the range of the means); use "
                         f"{spell('alternative', 'two-sided')}.")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"{spell('alternative')} must be one of {list(ALTERNATIVES)}, got {alternative!r}.")
    if isinstance(alpha, bool) or not (0.0 < float(alpha) < 1.0):
        raise ValueError(f"{spell('alpha')} must be in (0, 1), got {alpha!r}.")
    if ci is not None and (isinstance(ci, bool) or not (0.0 < float(ci) < 1.0)):
        raise ValueError(f"{spell('ci')} must be a confidence level in (0, 1) (e.g. 0.95), got {ci!r}.")
    if int(n_resamples) < 1:
        raise ValueError(f"{spell('n_resamples')} must be a positive integer, got {n_resamples!r}.")
    return correction


def _compare_iv(runs, baseline, test, correction, alpha, alternative, ci, n_resamples):
    """Validated options; ``correction`` normalised to a name."""
    correction = check_test_options(test, correction, alpha, alternative, ci, n_resamples)
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
        One row per measure and pair: ``measure, run_a, run_b, mean_difference, effect_size, statistic, pvalue,
        adjusted_pvalue, significant`` (A − B; against a baseline A is the run and B the baseline).
    evaluation : [`Evaluation`][irmeasures_markov.experiments.Evaluation]
        The per-topic values behind everything.
    sensitivity : [`Sensitivity`][irmeasures_markov.comparison.Sensitivity] or None
        With ``ties`` or ``holes``: judged shares, residuals, tie spreads and the flagged pairs.
    notes : list of str
        Lines about measures the ``ties``/``unjudged``/``residual`` options do not apply to.
    tukey : dict
        With ``test='tukey'`` or ``'anova'``: the
        [`TukeyResult`][irmeasures_markov.inference.TukeyResult] of each measure label (intervals at level
        1 − ``alpha``, effect sizes, groups).
    """
    table: pd.DataFrame
    intervals: pd.DataFrame | None
    tests: pd.DataFrame
    evaluation: Evaluation
    baseline: str | None
    test: str
    correction: str
    alpha: float
    alternative: str
    ci: float | None
    markers: pd.DataFrame | None = None
    letters: dict[str, str] = field(default_factory=dict)
    sensitivity: Sensitivity | None = None
    notes: list[str] = field(default_factory=list)
    tukey: dict[str, TukeyResult] = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        """The run names, in the order of the tables (the baseline first)."""
        return list(self.evaluation.runs)

    @property
    def labels(self) -> list[str]:
        """The measure labels, in the order of the table's columns."""
        return list(self.evaluation.labels)

    def pvalues(self, measure: Measure | str, adjusted: bool = False) -> pd.Series:
        """p-values of one measure as a Series indexed by ``(run_a, run_b)``.

        Parameters
        ----------
        measure : ir_measures.Measure or str
            One of the compared measures (object, printed form or label).
        adjusted : bool
            The corrected p-values instead of the raw ones.

        Returns
        -------
        pandas.Series
        """
        label = self.labels[self.evaluation.measure_index(measure)]
        rows = self.tests[self.tests["measure"] == label]
        col = "adjusted_pvalue" if adjusted else "pvalue"
        return rows.set_index(["run_a", "run_b"])[col]

    def legend(self, effect: bool = False) -> str:
        """The legend of the markers (and of ``effect`` sizes) printed under the text table.

        Parameters
        ----------
        effect : bool
            also explain the effect sizes.

        Returns
        -------
        str
            the legend text.
        """
        return render.legend(self, effect)

    def to_text(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """The means table as aligned text with the legend (``pairs=True``: the tests table).

        Parameters
        ----------
        places : int
            decimal places of the numbers.
        pairs : bool
            the table of pairwise tests instead of the means table.
        effect : bool
            also show effect sizes.

        Returns
        -------
        str
            the text table with its legend.
        """
        return render.table(self, "text", places, pairs, effect)

    def to_markdown(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """A Markdown pipe table; best means bold, letters as ``<sup>``.

        Parameters
        ----------
        places : int
            decimal places of the numbers.
        pairs : bool
            the table of pairwise tests instead of the means table.
        effect : bool
            also show effect sizes.

        Returns
        -------
        str
            the Markdown table.
        """
        return render.table(self, "md", places, pairs, effect)

    def to_latex(self, places: int = 4, pairs: bool = False, effect: bool = False) -> str:
        """A LaTeX ``tabular`` (``\\hline`` rules only; the triangles need amssymb), legend as comments.

        Parameters
        ----------
        places : int
            decimal places of the numbers.
        pairs : bool
            the table of pairwise tests instead of the means table.
        effect : bool
            also show effect sizes.

        Returns
        -------
        str
            the LaTeX table.
        """
        return render.table(self, "latex", places, pairs, effect)

    def to_csv(self, sep: str = ",", places: int | None = None, pairs: bool = False) -> str:
        """CSV (or TSV with ``sep='\\t'``): one row per run, or one per test with ``pairs=True``.

        Parameters
        ----------
        sep : str
            field delimiter.
        places : int or None
            decimal places of the numbers (-1: every digit; None: 15 significant digits in their shortest
            form, 0.702 rather than 0.7019999999999998).
        pairs : bool
            the table of pairwise tests instead of the means table.

        Returns
        -------
        str
            the delimited table.
        """
        return render.to_delimited(self, sep, places, pairs)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_markdown_(self) -> str:  # notebooks
        return self.to_markdown()

    def plot(self, measure: Measure | str | None = None, *, baseline: str | None = None,
             axes: Any = None) -> Figure:
        """Per-topic differences (run − baseline) of one measure, one panel per compared run.

        Bars are the topics sorted by difference; the title gives the mean difference and the test's (corrected)
        p-value.  ``baseline`` defaults to the comparison's baseline, else the first run.  Needs matplotlib (``pip
        install "irmeasures-markov[plot]"``).

        Parameters
        ----------
        measure : ir_measures.Measure or str, optional
            Default: the first measure.
        baseline : str, optional
            A run name (or its file name).
        axes : sequence of matplotlib Axes, optional
            One per compared run; default a new figure.

        Returns
        -------
        matplotlib.figure.Figure
        """
        return render.plot(self, measure, baseline, axes)

    def tukey_results(self) -> dict[str, TukeyResult]:
        """Tukey's HSD of every measure: the comparison's own with ``test='tukey'``/``'anova'``, else the parametric
        test over the two-way ANOVA (intervals at level 1 − ``alpha``).

        Returns
        -------
        dict
            ``{measure label: TukeyResult}``.
        """
        if self.tukey:
            return dict(self.tukey)
        ev = self.evaluation
        return {label: tukey_from_matrix(ev.values[:, j, :].T, list(ev.runs), "parametric", 1 - self.alpha, 1,
                                         None, "numpy") for j, label in enumerate(ev.labels)}

    def plot_pairs(self, path: str | None = None, *, kind: str = "auto") -> Figure:
        """Pairwise differences with their simultaneous intervals and the Tukey groups, one panel per measure.

        With ``test='tukey'``/``'anova'`` the comparison's own Tukey results, else the parametric Tukey HSD over the
        two-way ANOVA; beyond 45 pairs a panel shows each run's comparison interval, mean ± half the critical
        difference (two runs differ significantly exactly when theirs do not overlap).  Needs matplotlib (``pip
        install "irmeasures-markov[plot]"``).

        Parameters
        ----------
        path : str, optional
            Also save the figure there (the format from the suffix: .png, .pdf, .svg, ...).
        kind : {'auto', 'pairs', 'systems'}
            Every pair, one interval per run, or the first up to 45 pairs.

        Returns
        -------
        matplotlib.figure.Figure
        """
        return render.plot_pairs(self, self.tukey_results(), path, kind)


def compare(qrels: QrelsLike, runs: RunsSpec, measures: MeasuresLike, *, baseline: str | None = None, test: str = "t",
            correction: str | None = None, alpha: float = 0.05, alternative: str = "two-sided",
            ci: float | None = None, n_resamples: int = 10000, seed: int | None = 0,
            topics: Sequence[str] | None = None, labels: Sequence[str] | None = None, n_jobs: int = 1,
            progress: bool | None = None, bayes_draws: int = 2000, bayes_chains: int = 4,
            ties: str | None = None, unjudged: str | None = None, residual: bool = False,
            holes: bool = False) -> Comparison:
    """Evaluate runs on measures and test them against a baseline or pairwise.

    Parameters
    ----------
    qrels : dict or path
        ``{qid: {docid: grade}}`` or a TREC qrels file (any form [`evaluate`][irmeasures_markov.experiments.evaluate]
        takes).
    runs : mapping or paths
        ``{name: run}`` (run dicts or file paths), or run files, directories and glob patterns (names from the file
        names by `run_name`: ``input.NAME.gz``, ``NAME.run``, ``NAME.txt.gz`` ->
        ``NAME``; two files giving one name are an error naming both).
    measures : list, or dict {label: measure}
        As for [`evaluate`][irmeasures_markov.experiments.evaluate].
    baseline : str or path, optional
        Test every other run against this one (A = run, B = baseline); a run name, a run's file, or its file name
        (`resolve_baseline`).  The baseline comes first in the tables.  Default: every pair.
    test : {'t', 'wilcoxon', 'sign', 'randomization', 'bootstrap', 'bayes', 'none', 'tukey', 'anova'}
        ``'none'``: the means only; ``'tukey'``: randomized Tukey HSD, ``'anova'``: Tukey HSD over the two-way
        ANOVA (both over every pair, grouping letters in the table; see
        [`tukey_hsd`][irmeasures_markov.inference.tukey_hsd]).  With fewer than 2 topics no test is possible:
        the comparison is made as with ``'none'`` and a ``UserWarning`` says so.
    correction : {'holm', 'bonferroni', 'fdr_bh', 'none'}, optional
        Over the pairs of one measure.  Default ``'holm'`` (``'none'`` for ``'bayes'``, ``'none'``, ``'tukey'``
        and ``'anova'``, which take no other).
    alpha : float
        Significance level of the markers (on the corrected p-values).
    alternative : {'two-sided', 'greater', 'less'}
    ci : float, optional
        Confidence level of the t intervals of the means (e.g. 0.95); None: no intervals.
    n_resamples, seed
        Randomization/bootstrap resamples and their seed (``seed`` also seeds the Bayesian sampler).
    topics, labels, n_jobs, progress
        As for [`evaluate`][irmeasures_markov.experiments.evaluate] (topics default to every qrels topic).
    bayes_draws, bayes_chains
        Gibbs draws (after as many tuning steps) and chains for ``test='bayes'``.
    ties, unjudged, residual
        Tie order, unjudged documents and residual of every measure that takes them and does not set them
        itself (`options`); a measure that takes none is named in ``notes``.  ``ties`` (any value)
        also adds the sensitivity report with the tie flags (``.sensitivity``).
    holes : bool
        Add the sensitivity report with the flags within the residual.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        An unknown test or correction, ``alpha``/``ci`` outside (0, 1), fewer than 2 runs, a baseline that is
        not a run, a correction with ``test='bayes'``.
    """
    qrels = qrels_dict(qrels)
    runs, paths = load_runs(runs)
    baseline = resolve_baseline(baseline, list(runs), paths)
    correction = _compare_iv(runs, baseline, test, correction, alpha, alternative, ci, n_resamples)
    given = dict(ties=ties, unjudged=unjudged, residual=residual)
    ev, unsupported, applied = evaluate_with_options(measures, qrels, runs, topics=topics, labels=labels,
                                                     n_jobs=n_jobs, progress=progress, **given)
    options = dict(n_resamples=n_resamples, seed=seed, progress=progress, bayes_draws=bayes_draws,
                   bayes_chains=bayes_chains)
    cmp = compare_evaluation(ev, baseline=baseline, test=test, correction=correction, alpha=alpha,
                             alternative=alternative, ci=ci, **options)
    report = ties is not None or bool(holes)
    if report:
        cmp.sensitivity = sensitivity(cmp, qrels, runs, ties=ties is not None, holes=bool(holes), n_jobs=n_jobs,
                                      options=given, **options)
        unsupported = [x for x in cmp.labels if x in unsupported or x in cmp.sensitivity.unsupported]
    cmp.notes = [n for n in [unsupported_note(unsupported, report=report, **given),
                             applied_note(applied, **given)] if n]
    cmp.notes += cmp.sensitivity.notes if report else []
    return cmp


def compare_evaluation(evaluation: Evaluation, *, baseline: str | None = None, test: str = "t",
                       correction: str | None = None, alpha: float = 0.05, alternative: str = "two-sided",
                       ci: float | None = None, n_resamples: int = 10000, seed: int | None = 0,
                       progress: bool | None = None, bayes_draws: int = 2000, bayes_chains: int = 4) -> Comparison:
    """[`compare`][irmeasures_markov.comparison.compare] on an [`Evaluation`][irmeasures_markov.experiments.Evaluation]
    already computed.

    Parameters
    ----------
    evaluation : Evaluation
        Per-topic values of the runs (from [`evaluate`][irmeasures_markov.experiments.evaluate]).
    baseline, test, correction, alpha, alternative, ci, n_resamples, seed, progress, bayes_draws, bayes_chains
        As for [`compare`][irmeasures_markov.comparison.compare]; ``baseline`` is a run name or a run's file name.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        As for [`compare`][irmeasures_markov.comparison.compare].

    Warns
    -----
    UserWarning
        Fewer than 2 topics: no test is possible, the means are compared as with ``test='none'``.
    """
    import pandas as pd
    ev = evaluation
    baseline = resolve_baseline(baseline, list(ev.runs))
    correction = _compare_iv(dict.fromkeys(ev.runs), baseline, test, correction, alpha, alternative, ci,
                             n_resamples)
    n_topics = len(ev.topics)
    if n_topics < 2 and test != "none":
        warnings.warn(f"{n_topics} topic{'' if n_topics == 1 else 's'}: no significance test is possible with "
                      "fewer than 2 topics; the means only (test 'none')", UserWarning, stacklevel=2)
        test, correction = "none", "none"
    if baseline is not None:  # the baseline first, in every table
        ev = _baseline_first(ev, baseline)
    names = list(ev.runs)
    pairs = [(j, 0) for j in range(1, len(names))] if baseline is not None else \
        list(combinations(range(len(names)), 2))
    a, b = np.array(pairs, dtype=np.int64).T
    rows = []
    tukey = {}
    if test in TUKEY_TESTS:  # every measure at once: the randomized test draws its permutations once
        tukey = dict(zip(ev.labels, tukey_measures(np.transpose(ev.values, (1, 2, 0)), names, TUKEY_TESTS[test],
                                                   1 - float(alpha), int(n_resamples), seed)))
    for j, label in enumerate(ev.labels):
        values = ev.values[:, j, :].T  # topics × runs
        diffs = values[:, a] - values[:, b]
        if tukey:
            stat, p, adjusted = tukey_pairs(tukey[label], a, b)
        else:
            stat, p, adjusted = pair_tests(values, a, b, test=test, correction=correction, alternative=alternative,
                                           n_resamples=n_resamples, seed=seed, progress=progress,
                                           bayes_draws=bayes_draws, bayes_chains=bayes_chains)
        d_z = effect_size(diffs)
        for k in range(len(pairs)):
            rows.append({"measure": label, "run_a": names[a[k]], "run_b": names[b[k]],
                         "mean_difference": float(diffs[:, k].mean()), "effect_size": float(d_z[k]),
                         "statistic": float(stat[k]), "pvalue": float(p[k]), "adjusted_pvalue": float(adjusted[k]),
                         "significant": bool(adjusted[k] < alpha)})
    tests = pd.DataFrame(rows, columns=render.PAIR_COLUMNS)
    intervals = None
    if ci is not None:
        iv = mean_intervals(np.moveaxis(ev.values, 2, 0), float(ci))  # runs × measures × 2
        cols = pd.MultiIndex.from_product([list(ev.labels), ["low", "high"]], names=["measure", "bound"])
        intervals = pd.DataFrame(iv.reshape(len(names), -1), index=pd.Index(names, name="run"), columns=cols)
    letters = dict(zip(names, letter_names(len(names)))) if baseline is None and not tukey else {}
    cmp = Comparison(ev.means(), intervals, tests, ev, None if baseline is None else str(baseline), test,
                     correction, float(alpha), alternative, None if ci is None else float(ci), letters=letters,
                     tukey=tukey)
    cmp.markers = _markers(cmp)
    return cmp


def _baseline_first(ev, baseline: str):
    """``ev`` with the run ``baseline`` moved first (the others keep their order)."""
    names = list(ev.runs)
    order = [names.index(baseline)] + [i for i, n in enumerate(names) if n != baseline]
    if order == list(range(len(names))):
        return ev
    return Evaluation([names[i] for i in order], list(ev.measures), list(ev.topics), ev.values[order],
                      list(ev.labels))


def _markers(cmp: Comparison):
    """The marker string of every (run, measure) cell, as a DataFrame shaped like ``table``."""
    import pandas as pd
    out = pd.DataFrame("", index=cmp.table.index, columns=cmp.table.columns)
    if cmp.tukey and cmp.baseline is None:  # grouping letters: runs sharing one do not differ significantly
        for label, result in cmp.tukey.items():
            groups = result.groups(cmp.alpha, compact=len(cmp.runs) > COMPACT_RUNS)
            out[label] = [groups[run] for run in out.index]
        return out
    beaten: dict[tuple, list[int]] = {}  # all pairs: (winner, measure) -> positions of the runs it beats
    position = {name: i for i, name in enumerate(cmp.runs)}
    for row in cmp.tests[cmp.tests["significant"]].itertuples(index=False):
        diff = row.mean_difference
        if diff == 0:
            continue
        if cmp.baseline is not None:  # one test per run and measure, against the baseline
            out.loc[row.run_a, row.measure] = render.UP if diff > 0 else render.DOWN
        else:
            winner, loser = (row.run_a, row.run_b) if diff > 0 else (row.run_b, row.run_a)
            beaten.setdefault((winner, row.measure), []).append(position[loser])
    letters = list(cmp.letters.values())
    sep = "," if len(letters) > 52 else ""  # beyond z and Z the names are numbers
    for (run, label), marks in beaten.items():
        out.loc[run, label] = sep.join(letters[i] for i in sorted(marks))
    return out
