r"""Comparing systems: one table of runs × measures with significance markers.

[`compare`][irmeasures_markov.comparison.compare] evaluates every run on every measure (with
[`irmeasures_markov.experiments.evaluate`][irmeasures_markov.experiments.evaluate], so AP, P@k, nDCG, ... have
trec_eval's float64 values), tests the runs against a baseline or every pair
against every other, corrects for multiple comparisons, and returns a
[`Comparison`][irmeasures_markov.comparison.Comparison]: the labelled means (``.table``), the tests
(``.tests``), and renderings (``.to_text()``, ``.to_markdown()``,
``.to_latex()``, ``.to_csv()``) plus ``.plot()`` of the per-topic differences.

Tests (``test=``), on the per-topic scores of one measure, A − B for each pair:

* ``'t'``, ``'wilcoxon'``, ``'sign'``, ``'randomization'``, ``'bootstrap'`` —
  the classic paired tests of `irmeasures_markov.inference._classic`
  (their models are stated there); every pair's p-value is the one
  [`all_pairs`][irmeasures_markov.inference.all_pairs] gives it with the
  same ``seed``;
* ``'none'`` — no test: the means only (the tests table keeps each pair's
  mean difference and effect size; its p-values are NaN and no pair is
  significant).  It is also what a comparison on fewer than 2 topics does,
  with a warning, since no paired test is possible on one topic;
* ``'tukey'``, ``'anova'`` — Tukey's HSD over every pair at once (randomized, Carterette 2012; or over the
  two-way ANOVA's residual mean square), from
  [`tukey_hsd`][irmeasures_markov.inference.tukey_hsd]: family-wise p-values, so ``correction`` must be
  ``'none'``/None, and two-sided only; each measure's
  [`TukeyResult`][irmeasures_markov.inference.TukeyResult] is kept in ``Comparison.tukey``;
* ``'bayes'`` — Carterette's (2011) linear model
  $y_{ij} = \mu + \beta_j + \alpha_i + \varepsilon_{ij}$ fitted once per
  measure to every run together (`gibbs_linear_model`,
  numpy only); the statistic is the posterior probability
  $P(\beta_A > \beta_B \mid y)$ and the "p-value" its two-sided tail
  $2\min(P(\beta_A > \beta_B), P(\beta_A < \beta_B))$ (one-sided:
  $P(\beta_A \le \beta_B)$ for ``'greater'``).  It is not corrected:
  the joint hierarchical model already pools the systems' effects
  (Gelman, Hill & Yajima 2012), so ``correction`` must be ``'none'``/None.

Effect size: Cohen's $d_z = \bar d / s_d$, the mean of the paired
per-topic differences over their standard deviation (``ddof=1``); 0 when all
differences are 0, ±inf when they are all equal and non-zero, NaN with one topic.

Confidence intervals (``ci=0.95``): the t interval of each run's mean over
topics, $\bar y \pm t_{(1+\ell)/2,\,n-1}\, s/\sqrt n$.

Markers (a pair is significant when its corrected p-value is below ``alpha``):

* against a baseline: ``▲`` the run is significantly better than the baseline,
  ``▼`` significantly worse (LaTeX: ``$^{\blacktriangle}$``/``$^{\blacktriangledown}$``, amssymb);
* all pairs: every run gets a letter (``a``, ``b``, ... in the order given;
  ``A``.. after ``z``), and a mean carries the letters of the runs it is
  significantly better than;
* all pairs with ``'tukey'``/``'anova'``: Tukey groups instead (a compact letter display): runs sharing a
  letter do not differ significantly, ``a`` holds the best mean; beyond 12 runs three or more consecutive
  letters are written as a range (``a-d``);
* the best mean of each measure is bold in Markdown and LaTeX;
* ``effect=True`` (baseline only) adds each run's d_z against the baseline, ``(d=+0.31)``.

Tie order and unjudged documents (``ties=``, ``unjudged=``, ``residual=``
apply to every measure that takes them, `options`; ``ties=`` and ``holes=True`` add the
report of `sensitivity`: judged share of the top k, mean residual, tie
spread, and the pairs whose order or significance changes).
"""
from irmeasures_markov.comparison._core import COMPARE_TESTS, Comparison, compare, compare_evaluation, mean_intervals
from irmeasures_markov.comparison._pairs import effect_size
from irmeasures_markov.comparison._sensitivity import Sensitivity

__all__ = ["compare", "compare_evaluation", "Comparison", "COMPARE_TESTS", "effect_size", "mean_intervals",
           "Sensitivity"]
