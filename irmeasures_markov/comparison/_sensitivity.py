"""How much a comparison depends on tie order and on unjudged documents (``compare(..., ties=..., holes=True)``).

Per run and measure (`Sensitivity.per_run`):

* ``judged``: the judged share of the top k, k the measure's cutoff or 10 —
  the fraction of the run's top-k documents (trec_eval order: score
  descending, docid descending) that have a judgment of any grade, averaged
  over the topics the run retrieved something for;
* ``residual``: the mean over topics of the measure with ``residual=True``
  (its value with every unjudged retrieved document relevant minus its value
  with them non-relevant);
* ``tie_spread``: the mean over topics of the value with ``ties='optimistic'``
  minus the value with ``ties='pessimistic'``.

Pairs (`Sensitivity.flags`, one row per measure, tested pair and kind),
A − B as in the comparison's tests, with the comparison's test, correction
and ``alpha``:

* ``ties``: both runs evaluated with ``ties='optimistic'`` and then both with
  ``ties='pessimistic'``; the ordering changes when the sign of the mean
  difference differs between the two, the significance when the pair is
  significant (or significant in one direction) under one order and not under
  the other;
* ``holes``: each run's mean ranges over ``[v, v + residual]`` (``v`` with
  unjudged documents non-relevant); the ordering may flip when the two
  ranges overlap (the difference can take the opposite sign), the
  significance changes when testing A with its unjudged documents
  non-relevant against B with them relevant, or A relevant against B
  non-relevant, is not what the test of ``v`` against ``v`` says.

Measures that take no ``ties``/``unjudged``/``residual`` parameter get NaN
and are listed in `Sensitivity.unsupported`.  The options themselves
are applied by `options`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from ir_measures import Measure

from irmeasures_markov.comparison import _options as variant_options
from irmeasures_markov.comparison._pairs import pair_tests
from irmeasures_markov.plugin._variants import VARIANT_DEFAULTS
from irmeasures_markov.ranking._order import read_scores, top_order, trec_order

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_JUDGED_DEPTH", "QUANTITIES", "Sensitivity", "judged_share", "sensitivity"]

#: k of the judged share for a measure without a cutoff
DEFAULT_JUDGED_DEPTH = 10
#: what `Sensitivity.per_run` holds of each measure, in the order of its columns
QUANTITIES = ("judged", "residual", "tie_spread")


def _cutoff(measure: Measure) -> int:
    k = getattr(measure, "params", {}).get("cutoff")
    return int(k) if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0 \
        else DEFAULT_JUDGED_DEPTH


def judged_share(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
                 topics: Sequence[str], k: int) -> np.ndarray:
    """Per topic, the fraction of the run's top ``k`` documents (trec_eval order) that have a judgment.

    Parameters
    ----------
    qrels : dict
        ``{qid: {docid: grade}}``; a document is judged when it has any grade (0 and negative ones too).
    run : dict
        ``{qid: {docid: score}}``.
    topics : sequence of str
    k : int
        Depth.

    Returns
    -------
    numpy.ndarray
        One value per topic; NaN for a topic the run retrieved nothing for.
    """
    out = np.full(len(topics), np.nan)
    for i, q in enumerate(topics):
        docs = run.get(q) or {}
        if not docs:
            continue
        keys = list(docs)
        scores = read_scores(docs, q, keys)
        order = top_order(keys, scores, k) if k < len(keys) else trec_order(keys, scores)
        judged = qrels.get(q) or {}
        out[i] = sum(keys[j] in judged for j in order.tolist()) / len(order)
    return out


@dataclass(eq=False)
class Sensitivity:
    """What `sensitivity` found (see the module docstring).

    Attributes
    ----------
    per_run : DataFrame
        Index ``run``; columns ``(measure label, 'judged' | 'residual' | 'tie_spread')``.
    depths : dict
        The k of each measure label's judged share.
    flags : DataFrame
        One row per measure, tested pair and kind: ``measure, run_a, run_b, kind ('ties' | 'holes'),
        difference, low, high, order_changes, significance_changes, flagged``; ``difference`` is the
        comparison's mean difference A − B, ``low``/``high`` the ends it takes (ties: under the two orders;
        holes: over the two ranges).
    notes : list of str
        One line per variant a measure of this package refuses (e.g. ``unjudged='range'`` with ``ties='expected'``).
    kinds : tuple of str
        The kinds of flags computed.
    unsupported : list of str
        The labels of the measures that take no ``ties``/``unjudged``/``residual`` (NaN, no flags).
    """
    per_run: pd.DataFrame
    depths: dict[str, int]
    flags: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    kinds: tuple[str, ...] = ()
    unsupported: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> pd.DataFrame:
        """The rows of `flags` whose ordering or significance changes."""
        return self.flags[self.flags["flagged"]]


def sensitivity(cmp: Any, qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, Mapping], *,
                ties: bool = True, holes: bool = True, options: Mapping[str, object] | None = None,
                n_resamples: int = 10000, seed: int | None = 0,
                n_jobs: int = 1, progress: bool | None = None, bayes_draws: int = 2000,
                bayes_chains: int = 4) -> Sensitivity:
    """The sensitivity report of a [`Comparison`][irmeasures_markov.comparison.Comparison] to tie order and holes.

    Parameters
    ----------
    cmp : Comparison
        The comparison (its measures, labels, topics, pairs, test, correction and ``alpha`` are used).
    qrels : dict
        ``{qid: {docid: grade}}``, the comparison's.
    runs : dict
        ``{name: run dict}``, every run of the comparison.
    ties : bool
        Which pairs to flag: under the optimistic and pessimistic tie orders, within the residual.
    holes : bool
        Which pairs to flag: under the optimistic and pessimistic tie orders, within the residual.
    options : mapping, optional
        The comparison's ``ties``/``unjudged``/``residual`` (the values it was evaluated with), for the
        measures ``experiments.evaluate`` computes itself; this package's measures carry theirs.
    n_resamples, seed, n_jobs, progress, bayes_draws, bayes_chains
        As for [`compare`][irmeasures_markov.comparison.compare].

    Returns
    -------
    Sensitivity
    """
    import pandas as pd
    ev = cmp.evaluation
    names, topics, labels = list(cmp.runs), list(ev.topics), list(cmp.labels)
    ordered = {n: runs[n] for n in names}
    requests: list[tuple[Measure, dict]] = []
    for m in ev.measures:
        requests += [(m, {"ties": "optimistic"}), (m, {"ties": "pessimistic"}),
                     (m, {"unjudged": "nonrel", "residual": False}), (m, {"unjudged": "nonrel", "residual": True})]
    given = {k: v for k, v in (options or {}).items() if v is not None and v != VARIANT_DEFAULTS[k]}
    values, notes = variant_options.evaluate_variants(qrels, ordered, topics, requests, n_jobs, progress, given)
    missing = [label for j, label in enumerate(labels) if all(v is None for v in values[4 * j:4 * j + 4])]
    depths = {label: _cutoff(m) for label, m in zip(labels, ev.measures)}
    shares = {k: np.array([np.nanmean(s) if np.isfinite(s).any() else np.nan
                           for s in (judged_share(qrels, ordered[n], topics, k) for n in names)])
              for k in sorted(set(depths.values()))}
    nan = np.full(len(names), np.nan)
    columns, data, rows = [], [], []
    position = {n: i for i, n in enumerate(names)}
    options = dict(test=cmp.test, correction=cmp.correction, alternative=cmp.alternative, n_resamples=n_resamples,
                   seed=seed, progress=progress, bayes_draws=bayes_draws, bayes_chains=bayes_chains)

    def key(values, pa, pb, diff):
        """0 for a pair not significant under ``values`` (topics × systems), else the sign of its ``diff``."""
        _, _, adjusted = pair_tests(values, pa, pb, **options)
        return np.where(adjusted < cmp.alpha, np.sign(diff), 0.0)

    for j, label in enumerate(labels):
        opt, pess, nonrel, resid = values[4 * j:4 * j + 4]
        spread = nan if opt is None or pess is None else (opt - pess).mean(axis=1)
        residual = nan if resid is None else resid.mean(axis=1)
        columns += [(label, quantity) for quantity in QUANTITIES]
        data += [shares[depths[label]], residual, spread]
        tests = cmp.tests[cmp.tests["measure"] == label]
        a = np.array([position[r] for r in tests["run_a"]], dtype=np.int64)
        b = np.array([position[r] for r in tests["run_b"]], dtype=np.int64)
        base = tests["mean_difference"].to_numpy(dtype=np.float64)
        if ties and opt is not None and pess is not None:
            diffs = [m[a] - m[b] for m in (opt.mean(axis=1), pess.mean(axis=1))]
            keys = [key(v.T, a, b, d) for v, d in zip((opt, pess), diffs)]
            rows += _flag_rows(label, tests, "ties", base, np.minimum(*diffs), np.maximum(*diffs),
                               np.sign(diffs[0]) != np.sign(diffs[1]), keys[0] != keys[1])
        if holes and nonrel is not None and resid is not None:
            v, r = nonrel.mean(axis=1), resid.mean(axis=1)
            lo, hi = v + np.minimum(r, 0.0), v + np.maximum(r, 0.0)
            low, high = lo[a] - hi[b], hi[a] - lo[b]
            stacked = np.concatenate([nonrel, nonrel + resid], axis=0).T  # topics × (runs nonrel, runs rel)
            n = len(names)
            keys = [key(stacked, pa, pb, stacked[:, pa].mean(axis=0) - stacked[:, pb].mean(axis=0))
                    for pa, pb in ((a, b), (a, b + n), (a + n, b))]
            changes = (keys[0] != keys[1]) | (keys[0] != keys[2])
            rows += _flag_rows(label, tests, "holes", base, low, high, (low < 0) & (high > 0), changes)
    per_run = pd.DataFrame(np.array(data).T.reshape(len(names), -1), index=pd.Index(names, name="run"),
                           columns=pd.MultiIndex.from_tuples(columns, names=["measure", "quantity"]))
    flags = pd.DataFrame(rows, columns=["measure", "run_a", "run_b", "kind", "difference", "low", "high",
                                        "order_changes", "significance_changes", "flagged"])
    kinds = tuple(k for k, on in (("ties", ties), ("holes", holes)) if on)
    return Sensitivity(per_run, depths, flags, notes, kinds, missing)


def _flag_rows(label, tests, kind, base, low, high, order, significance) -> list[dict]:
    return [{"measure": label, "run_a": ra, "run_b": rb, "kind": kind, "difference": float(base[k]),
             "low": float(low[k]), "high": float(high[k]), "order_changes": bool(order[k]),
             "significance_changes": bool(significance[k]), "flagged": bool(order[k] or significance[k])}
            for k, (ra, rb) in enumerate(zip(tests["run_a"], tests["run_b"]))]
