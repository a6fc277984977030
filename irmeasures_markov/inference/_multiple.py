r"""Many systems at once: two-way ANOVA without replication, Tukey's HSD (randomized and parametric), effect sizes
with confidence intervals, and topic set size design.

The model is the two-way ANOVA without replication of a topics × systems matrix $y_{ij}$ (n topics,
m systems), $y_{ij} = \mu + \alpha_i + \beta_j + \varepsilon_{ij}$ with $\varepsilon_{ij} \sim N(0, \sigma^2)$
(Sakai 2018, *Laboratory Experiments in Information Retrieval*, ch. 3–5).  Its residual mean square

$$V_E = \frac{\sum_{ij} (y_{ij} - \bar y_{i\cdot} - \bar y_{\cdot j} + \bar y)^2}{(m-1)(n-1)}$$

estimates σ²; every parametric result here is built on it.

* **Randomized Tukey HSD** (Carterette, TOIS 30(1) 2012; Smucker, Allan & Carterette, CIKM 2007; Sakai 2018
  §4.5): under H0 the m scores of a topic are exchangeable among the systems.  Each of B draws permutes every
  topic's row independently and records the range $R_b = \max_j \bar y^{(b)}_{\cdot j} - \min_j
  \bar y^{(b)}_{\cdot j}$ of the permuted system means; the p-value of a pair is
  $p_{jk} = (\#\{b: R_b \ge |\bar y_{\cdot j} - \bar y_{\cdot k}|\} + 1) / (B + 1)$ — the +1 counts the observed
  arrangement, so no p-value is 0 — and the simultaneous interval is
  $\bar d \pm R_{(\lceil \ell B \rceil)}$, the ℓ-quantile of the ranges.  Every pair's p-value is
  family-wise adjusted by construction (the maximum over all pairs).
* **Parametric Tukey HSD** over the two-way ANOVA: $q_{jk} = |\bar d_{jk}| / \sqrt{V_E / n}$ against the
  studentized range distribution with m means and $(m-1)(n-1)$ degrees of freedom; simultaneous intervals
  $\bar d \pm q_{\ell}(m, (m-1)(n-1)) \sqrt{V_E/n}$.
* **Effect sizes** of every pair (Sakai 2018 §5.3): standardised by the paired standard deviation,
  $d_z = \bar d / s_d$, and by the ANOVA residual standard deviation, $ES_E = \bar d / \sqrt{V_E}$; their
  intervals are the pair's simultaneous interval of $\bar d$ divided by the same standardiser (the
  standardiser taken as known).
* **Topic set size design** (Sakai, *Topic set size design*, Information Retrieval Journal 19(3), 2016, §4.2,
  the one-way ANOVA-based design): the smallest n such that one-way ANOVA of m systems at level α has power
  $\ge 1-\beta$ when the best and worst system differ by ``min_difference`` = minD; with
  $\lambda = n\,\mathrm{minD}^2 / (2\sigma^2)$, $\phi_A = m - 1$, $\phi_E = m(n-1)$,
  power $= P(F'(\phi_A, \phi_E; \lambda) \ge F_{\alpha}(\phi_A, \phi_E))$; σ² is the residual variance, e.g.
  $V_E$ of a two-way ANOVA on past data.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from irmeasures_markov._util._compiled import numba_loaded, optional_kernels
from irmeasures_markov._util._lazy import lazy_module
from irmeasures_markov.inference._classic import standardised
from irmeasures_markov.inference._inputs import ScoresLike, check_choice, score_matrix
from irmeasures_markov.inference._letters import format_groups, letter_groups
from irmeasures_markov.inference._studentized import studentized_range_ppf, studentized_range_sf

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

# imported at the first test, so that importing the package does not load scipy
stats = lazy_module("scipy.stats")

__all__ = ["AnovaResult", "TukeyResult", "two_way_anova", "tukey_hsd", "topic_set_size", "range_null",
           "TUKEY_METHODS", "tukey_from_matrix", "tukey_measures"]

TUKEY_METHODS = ("randomized", "parametric")
_ENGINES = ("auto", "numpy", "numba")
_KERNELS: list = []  # memo of optional_kernels
#: draws × topics × systems beyond which an 'auto' engine imports numba (its import repays itself)
_NUMBA_WORK = 5_000_000
_BLOCK = 256  # draws per block: the numpy engine's gather holds measures × block × topics × systems floats


def _matrix(scores, measure):
    """The score matrix, with at least 2 systems and 2 topics."""
    sm = score_matrix(scores, measure)
    if sm.n_systems < 2:
        raise ValueError(f"comparing systems needs at least 2 systems, got {sm.n_systems}")
    if sm.n_topics < 2:
        raise ValueError(f"two-way ANOVA and Tukey's HSD need at least 2 topics, got {sm.n_topics}")
    return sm


def _anova_sums(y):
    """(system SS, topic SS, residual SS, total SS) of a topics × systems array."""
    grand = y.mean()
    ss_total = float(((y - grand) ** 2).sum())
    n, m = y.shape
    ss_system = float(n * ((y.mean(axis=0) - grand) ** 2).sum())
    ss_topic = float(m * ((y.mean(axis=1) - grand) ** 2).sum())
    resid = y - y.mean(axis=0) - y.mean(axis=1)[:, None] + grand
    ss_e = float((resid ** 2).sum())
    # residuals at the rounding level of the scores are an additive table's: V_E is 0, not 1e-33
    noise = n * m * (64 * np.finfo(np.float64).eps * max(1.0, float(np.abs(y).max()))) ** 2
    return ss_system, ss_topic, 0.0 if ss_e <= noise else ss_e, ss_total


@dataclass(repr=False)
class AnovaResult:
    """Two-way ANOVA without replication (systems × topics) of one measure.

    Attributes
    ----------
    systems : list of str
        The systems (columns), in the order of ``means``.
    means : numpy.ndarray
        Mean score of each system over the topics.
    n_topics : int
        Topics (rows).
    sum_sq : dict
        Sums of squares keyed ``'system'``, ``'topic'``, ``'residual'``, ``'total'``.
    df : dict
        Degrees of freedom keyed ``'system'``, ``'topic'``, ``'residual'``.
    mean_sq : dict
        Mean squares (sum of squares over degrees of freedom), the same keys.
    f_system : float
        F of the systems (their mean square over the residual one).
    p_system : float
        Its p-value.
    f_topic : float
        F of the topics.
    p_topic : float
        Its p-value.
    """
    systems: list[str]
    means: np.ndarray
    n_topics: int
    sum_sq: dict[str, float]
    df: dict[str, int]
    mean_sq: dict[str, float]
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float

    @property
    def residual_ms(self) -> float:
        """The residual mean square $V_E$ (σ² of the model)."""
        return self.mean_sq["residual"]

    def to_frame(self) -> pd.DataFrame:
        """The ANOVA table: rows ``system, topic, residual``; columns ``df, sum_sq, mean_sq, F, pvalue``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        rows = ("system", "topic", "residual")
        return pd.DataFrame({"df": [self.df[r] for r in rows], "sum_sq": [self.sum_sq[r] for r in rows],
                             "mean_sq": [self.mean_sq[r] for r in rows],
                             "F": [self.f_system, self.f_topic, np.nan],
                             "pvalue": [self.p_system, self.p_topic, np.nan]}, index=pd.Index(rows, name="source"))

    def __repr__(self) -> str:
        lines = [f"AnovaResult: {len(self.systems)} systems × {self.n_topics} topics (two-way, no replication)",
                 f"{'source':<9} {'df':>6} {'sum_sq':>12} {'mean_sq':>12} {'F':>10} {'pvalue':>10}"]
        for r, f, p in (("system", self.f_system, self.p_system), ("topic", self.f_topic, self.p_topic),
                        ("residual", None, None)):
            tail = f" {f:>10.4f} {p:>10.4g}" if f is not None else ""
            lines.append(f"{r:<9} {self.df[r]:>6} {self.sum_sq[r]:>12.6g} {self.mean_sq[r]:>12.6g}{tail}")
        return "\n".join(lines)


def two_way_anova(scores: ScoresLike, *, measure: Any = None) -> AnovaResult:
    r"""Two-way ANOVA without replication of per-topic scores: systems × topics, one score per cell.

    With n topics and m systems, $S_A = n\sum_j(\bar y_{\cdot j}-\bar y)^2$ (systems, φ = m − 1),
    $S_B = m\sum_i(\bar y_{i\cdot}-\bar y)^2$ (topics, φ = n − 1), $S_E = S_T - S_A - S_B$ (residual,
    φ = (m − 1)(n − 1)); $F = (S/\phi) / V_E$ with $V_E = S_E/\phi_E$ (Sakai 2018, *Laboratory Experiments in
    Information Retrieval*, §3.1).  The same F, p and $V_E$ as an OLS fit of ``score ~ C(system) + C(topic)``
    (statsmodels ``anova_lm``).

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems (anything [`score_matrix`][irmeasures_markov.inference.score_matrix]
        takes).
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.

    Returns
    -------
    AnovaResult
        ``.to_frame()`` is the ANOVA table; ``.residual_ms`` is $V_E$.

    Raises
    ------
    ValueError
        Fewer than 2 systems or 2 topics, or scores ``score_matrix`` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> r = two_way_anova(np.array([[0.5, 0.4], [0.3, 0.1], [0.6, 0.6]]))
    >>> r.df["residual"]
    2
    """
    sm = _matrix(scores, measure)
    y = sm.values
    n, m = y.shape
    ss_a, ss_b, ss_e, ss_t = _anova_sums(y)
    df = {"system": m - 1, "topic": n - 1, "residual": (m - 1) * (n - 1)}
    ms = {"system": ss_a / df["system"], "topic": ss_b / df["topic"], "residual": ss_e / df["residual"]}
    with np.errstate(divide="ignore", invalid="ignore"):
        f = {k: np.float64(ms[k]) / ms["residual"] for k in ("system", "topic")}
    p = {k: float(stats.f.sf(x, df[k], df["residual"])) if np.isfinite(x) else (0.0 if x > 0 else 1.0)
         for k, x in f.items()}
    return AnovaResult(list(sm.systems), y.mean(axis=0), n, {"system": ss_a, "topic": ss_b, "residual": ss_e,
                       "total": ss_t}, df, ms, float(f["system"]), p["system"], float(f["topic"]), p["topic"])


# --- the randomized test's null distribution -------------------------------------------------------------------------

def _numpy_ranges(x, raw, out, start):
    """The reference engine: the same Fisher–Yates shuffles as the numba kernel, vectorised over draws × topics."""
    n_measures, n_topics, n_systems = x.shape
    blk = raw.shape[0]
    perm = np.broadcast_to(np.arange(n_systems), (blk * n_topics, n_systems)).copy()
    rows = np.arange(blk * n_topics)
    words = raw.reshape(blk * n_topics, -1)
    halves = np.empty((blk * n_topics, 2 * words.shape[1]), dtype=np.uint64)
    halves[:, 0::2] = words & np.uint64(0xFFFFFFFF)
    halves[:, 1::2] = words >> np.uint64(32)
    for i in range(n_systems - 1, 0, -1):
        j = ((halves[:, i - 1] * np.uint64(i + 1)) >> np.uint64(32)).astype(np.int64)
        held = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = held
    perm = perm.reshape(blk, n_topics, n_systems)
    topic = np.arange(n_topics)[None, :, None]
    for m in range(n_measures):
        sums = x[m][topic, perm].sum(axis=1)  # blk × systems
        out[m, start:start + blk] = (sums.max(axis=1) - sums.min(axis=1)) / n_topics


def _engine_kernels(engine, work):
    """The numba kernels to use, or None for the numpy engine."""
    check_choice("engine", engine, _ENGINES)
    if engine == "numpy":
        return None
    if engine == "auto" and not (numba_loaded() or work >= _NUMBA_WORK):
        return None
    kernels = optional_kernels(_KERNELS, "irmeasures_markov.inference._tukey_numba")
    if kernels is None and engine == "numba":
        raise ImportError("engine='numba' needs numba: pip install 'irmeasures-markov[fast]'")
    return kernels


def range_null(x: np.ndarray, n_resamples: int, seed: int | None, engine: str = "auto") -> np.ndarray:
    """Ranges of the system means under within-topic permutation, for measures × topics × systems scores ``x``.

    Every measure sees the same permutations (draw b permutes topic t the same way for all of them).  Each topic's
    permutation is a Fisher–Yates shuffle whose index j ∈ [0, i] is ``(r * (i + 1)) >> 32`` for a 32-bit random r
    (Lemire's multiply-shift: a bias below (i + 1)/2³², immaterial against the Monte Carlo error); the words come
    from ``numpy.random.default_rng(seed).bit_generator.random_raw``, two 32-bit halves each, block by block in
    one stream, so the result depends on neither the block size nor the engine.

    Returns
    -------
    numpy.ndarray
        measures × ``n_resamples``.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    n_measures, n_topics, n_systems = x.shape
    n_resamples = int(n_resamples)
    kernels = _engine_kernels(engine, n_resamples * n_topics * n_systems)
    rng = np.random.default_rng(seed)
    words = n_systems // 2  # 32 random bits for each of the n_systems − 1 swaps, two to a word
    out = np.empty((n_measures, n_resamples))
    for start in range(0, n_resamples, _BLOCK):
        blk = min(_BLOCK, n_resamples - start)
        raw = rng.bit_generator.random_raw(blk * n_topics * words).reshape(blk, n_topics, words)
        if kernels is None:
            _numpy_ranges(x, raw, out, start)
        else:
            kernels.permuted_ranges(x, raw, out, start)
    return out


# --- Tukey's HSD ---------------------------------------------------------------------------------------------------

@dataclass(repr=False, eq=False)
class TukeyResult:
    """Tukey's HSD over every pair of systems: ``pvalue[k]`` compares ``systems[a[k]]`` with ``systems[b[k]]``.

    Attributes
    ----------
    systems : list of str
        The systems, in the order of ``means``.
    means : numpy.ndarray
        Each system's mean over the topics.
    a : numpy.ndarray
        First system of each pair (position; a < b); differences are A − B.
    b : numpy.ndarray
        Second system of each pair.
    mean_difference : numpy.ndarray
        $\\bar d$ of each pair.
    statistic : numpy.ndarray
        $|\\bar d|$ (randomized) or $q = |\\bar d|/\\sqrt{V_E/n}$ (parametric).
    pvalue : numpy.ndarray
        Already family-wise over every pair (no further correction).
    low : numpy.ndarray
        Lower end of the simultaneous ``level`` interval of each mean difference.
    high : numpy.ndarray
        Its upper end.
    effect_paired : numpy.ndarray
        $d_z = \\bar d/s_d$ (±inf when $s_d = 0$ and $\\bar d \\ne 0$, 0 when both are 0).
    effect_paired_low : numpy.ndarray
        ``low`` divided by $s_d$.
    effect_paired_high : numpy.ndarray
        ``high`` divided by $s_d$.
    effect_residual : numpy.ndarray
        $ES_E = \\bar d/\\sqrt{V_E}$.
    effect_residual_low : numpy.ndarray
        ``low`` divided by $\\sqrt{V_E}$.
    effect_residual_high : numpy.ndarray
        ``high`` divided by $\\sqrt{V_E}$.
    method : str
        ``'randomized'`` or ``'parametric'``.
    level : float
        Confidence level of the intervals.
    n_topics : int
        Topics (rows).
    residual_ms : float
        $V_E$ of the two-way ANOVA.
    critical : float
        Half-width of every interval: the ``level`` quantile of the null range (randomized) or
        $q_\\ell\\sqrt{V_E/n}$ (parametric).
    n_resamples : int or None
        Permutations of the randomized test.
    null : numpy.ndarray or None
        The randomized test's ranges of the permuted means, one per permutation.
    """
    systems: list[str]
    means: np.ndarray
    a: np.ndarray
    b: np.ndarray
    mean_difference: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    low: np.ndarray
    high: np.ndarray
    effect_paired: np.ndarray
    effect_paired_low: np.ndarray
    effect_paired_high: np.ndarray
    effect_residual: np.ndarray
    effect_residual_low: np.ndarray
    effect_residual_high: np.ndarray
    method: str
    level: float
    n_topics: int
    residual_ms: float
    critical: float
    n_resamples: int | None = None
    null: np.ndarray | None = field(default=None, repr=False)

    def significant(self, alpha: float = 0.05) -> np.ndarray:
        """True for each pair whose p-value is below ``alpha``.

        Parameters
        ----------
        alpha : float
            Family-wise significance level.

        Returns
        -------
        numpy.ndarray
        """
        return self.pvalue < alpha

    def matrix(self) -> pd.DataFrame:
        """The p-values as a symmetric systems × systems DataFrame (1 on the diagonal).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        return pd.DataFrame(self._square(1.0, self.pvalue), index=self.systems, columns=self.systems)

    def groups(self, alpha: float = 0.05, compact: bool = False) -> dict[str, str]:
        """Grouping letters: systems sharing a letter do not differ significantly at ``alpha``; ``a`` holds the best.

        Parameters
        ----------
        alpha : float
            Family-wise significance level.
        compact : bool
            Write three or more consecutive letters as a range (``a-d``).

        Returns
        -------
        dict
            ``{system: letters}``, in the order of ``systems``.
        """
        sig = self._square(False, self.significant(alpha))
        return dict(zip(self.systems, format_groups(letter_groups(self.means, sig), len(self.systems), compact)))

    def _square(self, diagonal: Any, values: np.ndarray) -> np.ndarray:
        """systems × systems with the value of each pair in both of its cells and ``diagonal`` on the diagonal."""
        out = np.full((len(self.systems),) * 2, diagonal)
        out[self.a, self.b] = out[self.b, self.a] = values
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: ``system_a, system_b, mean_difference, low, high, statistic, pvalue`` and the effect
        sizes with their intervals.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        cols = {"system_a": [self.systems[i] for i in self.a], "system_b": [self.systems[i] for i in self.b]}
        for name in ("mean_difference", "low", "high", "statistic", "pvalue", "effect_paired", "effect_paired_low",
                     "effect_paired_high", "effect_residual", "effect_residual_low", "effect_residual_high"):
            cols[name] = getattr(self, name)
        return pd.DataFrame(cols)

    def plot(self, alpha: float = 0.05, ax: Any = None, title: str | None = None, kind: str = "auto") -> Figure:
        """The pairwise differences with their simultaneous intervals, and the groups; needs matplotlib.

        With every system on the same topics all intervals have one half-width c, so for many systems
        (``kind='systems'``, the default beyond 45 pairs) the panel shows each system's mean ± c/2 instead: two
        systems differ significantly exactly when theirs do not overlap.

        Parameters
        ----------
        alpha : float
            Significance level of the colours and the groups.
        ax : matplotlib Axes, optional
            Default: a new figure.
        title : str, optional
            Panel title.
        kind : {'auto', 'pairs', 'systems'}
            Every pair, or one comparison interval per system.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from irmeasures_markov.inference._tukey_plot import tukey_panel
        return tukey_panel(self, alpha, ax, title, kind)

    def __repr__(self) -> str:
        what = (f"randomized, {self.n_resamples} permutations" if self.method == "randomized"
                else f"parametric, df = {(len(self.systems) - 1) * (self.n_topics - 1)}")
        lines = [f"TukeyResult ({what}): {len(self.systems)} systems × {self.n_topics} topics, "
                 f"{self.level:.0%} simultaneous intervals, V_E = {self.residual_ms:.6g}"]
        groups = self.groups(1 - self.level)
        shown = min(len(self.a), 10)
        for k in np.argsort(self.pvalue, kind="stable")[:shown]:
            a, b = self.systems[self.a[k]], self.systems[self.b[k]]
            lines.append(f"  {a} − {b}: {self.mean_difference[k]:+.4f} [{self.low[k]:+.4f}, {self.high[k]:+.4f}]"
                         f"  p = {self.pvalue[k]:.4g}  ES_E = {self.effect_residual[k]:+.3f}")
        if len(self.a) > shown:
            lines.append(f"  ... {len(self.a) - shown} more pairs (to_frame())")
        lines.append("groups: " + ", ".join(f"{s} {g}" for s, g in groups.items()))
        return "\n".join(lines)


def _check_options(method, level, n_resamples, engine):
    """Validated Tukey options."""
    check_choice("method", method, TUKEY_METHODS)
    if isinstance(level, bool) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a confidence level in (0, 1), got {level!r}")
    if isinstance(n_resamples, bool) or int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    check_choice("engine", engine, _ENGINES)


def tukey_from_matrix(y: np.ndarray, systems: list[str], method: str, level: float, n_resamples: int,
                      seed: int | None, engine: str, null: np.ndarray | None = None) -> TukeyResult:
    """`tukey_hsd` on a validated topics × systems array (``null``: ranges already drawn, for several measures)."""
    n, m = y.shape
    a, b = (np.array(x, dtype=np.int64) for x in zip(*combinations(range(m), 2)))
    means = y.mean(axis=0)
    diff = means[a] - means[b]
    v_e = _anova_sums(y)[2] / ((m - 1) * (n - 1))
    tol = 1e-12 * np.maximum(1.0, np.abs(diff))  # a draw equal to the observation up to rounding counts as extreme
    if method == "randomized":
        if null is None:
            null = range_null(y[None], n_resamples, seed, engine)[0]
        ranges = np.sort(null)
        hits = ranges.size - np.searchsorted(ranges, np.abs(diff) - tol, side="left")
        p = (hits + 1) / (ranges.size + 1)
        critical = float(ranges[min(ranges.size - 1, math.ceil(level * ranges.size) - 1)])
        stat = np.abs(diff)
    else:
        se = math.sqrt(v_e / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.where(se > 0, np.abs(diff) / se, np.where(np.abs(diff) > tol, np.inf, 0.0))
        p = studentized_range_sf(stat, m, (m - 1) * (n - 1))
        critical = studentized_range_ppf(level, m, (m - 1) * (n - 1)) * se
    low, high = diff - critical, diff + critical
    sd = (y[:, a] - y[:, b]).std(axis=0, ddof=1)
    root = np.full_like(diff, math.sqrt(v_e))
    es = [standardised(x, by) for by in (sd, root) for x in (diff, low, high)]
    return TukeyResult(list(systems), means, a, b, diff, stat, np.minimum(p, 1.0), low, high, *es, method=method,
                       level=float(level), n_topics=n, residual_ms=float(v_e), critical=critical,
                       n_resamples=int(n_resamples) if method == "randomized" else None,
                       null=null if method == "randomized" else None)


def tukey_measures(values: np.ndarray, systems: list[str], method: str, level: float, n_resamples: int,
                   seed: int | None, engine: str = "auto") -> list[TukeyResult]:
    """`tukey_hsd` of each measure of ``values`` (measures × topics × systems), the randomized test drawing its
    permutations once for all of them (the same ones `tukey_hsd` draws for each with the same ``seed``)."""
    _check_options(method, level, n_resamples, engine)
    values = np.asarray(values, dtype=np.float64)
    null = range_null(values, n_resamples, seed, engine) if method == "randomized" else [None] * len(values)
    return [tukey_from_matrix(y, systems, method, level, n_resamples, seed, engine, null=z)
            for y, z in zip(values, null)]


def tukey_hsd(scores: ScoresLike, method: str = "randomized", *, measure: Any = None, level: float = 0.95,
              n_resamples: int = 10000, seed: int | None = 0, engine: str = "auto") -> TukeyResult:
    r"""Tukey's HSD test of every pair of systems, randomized (the default) or over the two-way ANOVA.

    Randomized (Carterette, *Multiple testing in statistical analysis of systems-based information retrieval
    experiments*, TOIS 30(1), 2012; Smucker, Allan & Carterette, CIKM 2007): each of B draws permutes the scores
    of every topic among the systems; with $R_b$ the range (max − min) of the permuted system means,
    $p_{jk} = (\#\{b: R_b \ge |\bar y_{\cdot j} - \bar y_{\cdot k}|\} + 1)/(B + 1)$.  Parametric:
    $q_{jk} = |\bar d_{jk}|/\sqrt{V_E/n}$ against the studentized range with m means and $(m-1)(n-1)$ degrees of
    freedom, $V_E$ the residual mean square of [`two_way_anova`][irmeasures_markov.inference.two_way_anova].
    The p-values are family-wise over all pairs: no further correction.  Effect sizes (Sakai 2018, §5.3): $d_z =
    \bar d/s_d$ and $ES_E = \bar d/\sqrt{V_E}$, with the simultaneous interval of $\bar d$ divided by the same
    standardiser.

    Parameters
    ----------
    scores : ScoresLike
        Per-topic scores of the systems (anything [`score_matrix`][irmeasures_markov.inference.score_matrix]
        takes).
    method : {'randomized', 'parametric'}
        The null distribution of the range.
    measure : ir_measures.Measure or str, optional
        Which measure of ``scores`` when it holds several.
    level : float
        Confidence level of the simultaneous intervals (default 0.95).
    n_resamples : int
        Permutations of the randomized test (default 10,000).
    seed : int or None
        Seed of the permutations (default 0).
    engine : {'auto', 'numpy', 'numba'}
        The randomized test's permutation loop: numba when it is installed and already imported or the work is
        large (``'auto'``), else numpy; both give the same ranges.

    Returns
    -------
    TukeyResult
        ``.to_frame()`` one row per pair; ``.groups()`` grouping letters; ``.matrix()`` the p-values;
        ``.plot()`` a picture.

    Raises
    ------
    ValueError
        An unknown method or engine, ``level`` outside (0, 1), ``n_resamples`` < 1, fewer than 2 systems or 2 topics.
    ImportError
        ``engine='numba'`` without numba.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[0.7, 0.5, 0.0], [0.3, 0.1, 0.0], [0.2, 0.0, 0.2], [0.6, 0.2, 0.1]])
    >>> r = tukey_hsd(y, "parametric")
    >>> r.pvalue.shape
    (3,)
    """
    _check_options(method, level, n_resamples, engine)
    sm = _matrix(scores, measure)
    return tukey_from_matrix(sm.values, sm.systems, method, float(level), int(n_resamples), seed, engine)


def topic_set_size(min_difference: float, variance: float, n_systems: int = 2, *, alpha: float = 0.05,
                   beta: float = 0.20, max_topics: int = 100_000) -> int:
    r"""Topics needed so that one-way ANOVA detects a difference ``min_difference`` between the best and worst of
    ``n_systems`` systems with power 1 − β (Sakai, *Topic set size design*, Information Retrieval Journal 19(3),
    2016, §4.2).

    The smallest n with $P(F'(\phi_A, \phi_E; \lambda) \ge F_{\alpha}(\phi_A, \phi_E)) \ge 1 - \beta$, where
    $\phi_A = m - 1$, $\phi_E = m(n - 1)$, and the noncentrality for the least favourable configuration (two
    systems ±minD/2 from the mean, the others at it) is $\lambda = n\,\mathrm{minD}^2/(2\sigma^2)$.  σ² is the
    residual variance estimated from past data, e.g. ``two_way_anova(...).residual_ms`` ($V_E$).  With m = 2
    this is the two-sample t-test design with effect size minD/σ.

    Parameters
    ----------
    min_difference : float
        minD, the smallest difference between the best and the worst system worth detecting (> 0).
    variance : float
        σ², the residual variance (> 0).
    n_systems : int
        m, the number of systems to be compared (≥ 2).
    alpha : float
        Type I error rate (default 0.05).
    beta : float
        Type II error rate (default 0.20: power 0.8).
    max_topics : int
        Give up beyond this many topics.

    Returns
    -------
    int
        The number of topics n.

    Raises
    ------
    ValueError
        A non-positive difference or variance, fewer than 2 systems, α or β outside (0, 1), or no n up to
        ``max_topics``.

    Examples
    --------
    >>> topic_set_size(0.1, 0.02, 2)
    33
    """
    for name, x in (("min_difference", min_difference), ("variance", variance)):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{name} must be a positive number, got {x!r}")
    if isinstance(n_systems, bool) or int(n_systems) != n_systems or n_systems < 2:
        raise ValueError(f"n_systems must be an integer ≥ 2, got {n_systems!r}")
    for name, x in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < float(x) < 1.0:
            raise ValueError(f"{name} must be in (0, 1), got {x!r}")
    m = int(n_systems)
    delta = min_difference ** 2 / (2.0 * variance)

    def power(n):
        df_a, df_e = m - 1, m * (n - 1)
        return float(stats.ncf.sf(stats.f.isf(alpha, df_a, df_e), df_a, df_e, n * delta))

    lo, hi = 2, 2
    while power(hi) < 1 - beta:  # power grows with n: double, then bisect
        lo, hi = hi, hi * 2
        if hi > 2 * max_topics:
            raise ValueError(f"no topic set size up to {max_topics} reaches power {1 - beta:g}")
    lo = bisect.bisect_left(range(hi + 1), True, lo, hi, key=lambda n: power(n) >= 1 - beta)
    if lo > max_topics:
        raise ValueError(f"no topic set size up to {max_topics} reaches power {1 - beta:g}")
    return lo
