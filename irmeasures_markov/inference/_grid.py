"""Inference on the grid engine: discriminative power, and Bayesian fits per collection.

Cells:

* ``allpairs`` — one (measure, test) of a discriminative-power table: the
  adjusted p-values of every system pair from
  [`all_pairs`][irmeasures_markov.inference.all_pairs] (same seed, same resamples,
  so the same bits on every backend); the share below ``alpha`` is taken on
  the client, so another ``alpha`` reuses the stored cells;
* ``bayes`` — one Bayesian linear model (Carterette 2011, §3.1) fitted to
  one collection's score matrix: the posterior draws of the system effects
  (draws x systems), with a second cell holding ``[max_rhat, divergences]``.

Each cell is keyed by a content hash of its score matrix (values, topics,
systems), its test or sampler settings and the seed.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from irmeasures_markov.grid._backends import Backend, resolve_backend
from irmeasures_markov.grid._cells import Cell
from irmeasures_markov.grid._runner import GridSummary, run_grid
from irmeasures_markov.grid._store import ParquetStore, StoreLike
from irmeasures_markov.inference._bayes import bayesian_linear_model
from irmeasures_markov.inference._classic import TESTS, all_pairs
from irmeasures_markov.inference._inputs import ScoreMatrix, ScoresLike, check_choice, score_matrix
from irmeasures_markov.inference._posterior import BayesResult

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client

__all__ = ["discriminative_power", "discriminative_power_grid", "fit_per_collection", "matrix_hash"]


def matrix_hash(sm: ScoreMatrix) -> str:
    """SHA-256 of a score matrix: its float64 values, topics and systems.

    Parameters
    ----------
    sm : ScoreMatrix

    Returns
    -------
    str
        The first 32 hexadecimal digits.
    """
    h = hashlib.sha256(b"scores\0")
    v = np.ascontiguousarray(sm.values, dtype=np.float64)
    h.update(repr(v.shape).encode())
    h.update(v.tobytes())
    h.update("\x1f".join(sm.topics).encode("utf-8", "surrogateescape") + b"\0")
    h.update("\x1f".join(sm.systems).encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:32]


@dataclass
class _MatrixTask:
    """A grid task computing its cells' arrays from one shared score matrix: ``arrays(sm, **kwargs)``."""
    key: str
    cells: list[Cell]
    needs: list[str]
    arrays: Callable[..., list[np.ndarray]]
    kwargs: dict

    def compute(self, shared):
        return self.arrays(shared[self.needs[0]], **self.kwargs)


def _pair_pvalues(sm, test, n_resamples, seed, correction):
    """The ``allpairs`` cell: the adjusted p-values of every pair."""
    return [all_pairs(sm, test, alternative="two-sided", correction=correction, n_resamples=n_resamples,
                      seed=seed).adjusted_pvalue]


def _fit_arrays(sm, sampler, fit_kwargs):
    """The two ``bayes`` cells: the system effects' draws, and ``[max_rhat, divergences]`` (NaN for None)."""
    res = bayesian_linear_model(sm, backend=sampler, progress=False, **fit_kwargs)
    diag = np.array([np.nan if res.max_rhat is None else float(res.max_rhat),
                     np.nan if res.divergences is None else float(res.divergences)])
    return [np.asarray(res.system_effects, dtype=np.float64), diag]


def _matrices(scores_by: Mapping[str, ScoresLike], what: str) -> tuple[dict[str, ScoreMatrix], dict[str, str]]:
    """The score matrix and `matrix_hash` of each entry of ``scores_by`` (the argument named ``what``)."""
    mats = {str(k): score_matrix(s) for k, s in scores_by.items()}
    if not mats:
        raise ValueError(f"`{what}` is empty.")
    return mats, {k: matrix_hash(sm) for k, sm in mats.items()}


def _run(jobs, prefix, arrays, mats, hashes, desc, backend, client, scheduler, n_jobs, store, progress):
    """run_grid of ``jobs`` (``{job: (matrix name, cells, kwargs)}``, a task ``arrays(sm, **kwargs)`` each) on the
    backend asked for (closed after if it was started here), the score matrices ``mats`` shared with the tasks
    as ``scores:HASH``."""
    by_name = {f"scores:{hashes[k]}": sm for k, sm in mats.items()}
    where = {c.key: j for j, (_, cells, _) in jobs.items() for c in cells}

    def make_tasks(missing):
        return [_MatrixTask(f"{prefix}-{jobs[j][1][0].key}", list(jobs[j][1]), [f"scores:{hashes[jobs[j][0]]}"],
                            arrays, jobs[j][2]) for j in dict.fromkeys(where[c.key] for c in missing)]

    be, owned = resolve_backend(backend, client=client, scheduler=scheduler, n_jobs=n_jobs)
    try:
        return run_grid([c for _, cells, _ in jobs.values() for c in cells], make_tasks,
                        lambda names: {k: v for k, v in by_name.items() if k in names},
                        backend=be, store=store if store is None or isinstance(store, ParquetStore)
                        else ParquetStore(store), progress=progress, desc=desc)
    finally:
        if owned:
            be.close()


def discriminative_power_grid(scores_by_measure: Mapping[str, ScoresLike], *, alpha: float = 0.05,
                              tests: Sequence[str] = ("t", "randomization", "bootstrap"),
                              n_resamples: int = 10000, seed: int | None = 0, correction: str | None = None,
                              progress: bool | None = None, backend: Backend | str | None = None,
                              client: Client | None = None, scheduler: str | None = None, n_jobs: int = 1,
                              store: StoreLike = None, collection: str = "") -> tuple[pd.DataFrame, GridSummary]:
    """[`discriminative_power`][irmeasures_markov.inference.discriminative_power] with one grid cell per (measure,
    test).

    Returns ``(table, summary)``: the DataFrame (one row per measure, one
    column per test) and the [`GridSummary`][irmeasures_markov.grid.GridSummary].

    Parameters
    ----------
    scores_by_measure : mapping of str to ScoresLike
        ``{measure label: scores}`` with anything `score_matrix` accepts (all over the same
        systems and topics).
    alpha : float
        Significance level, in (0, 1).
    tests : sequence of str
        Tests of `TESTS`, one column each.
    n_resamples, seed, correction
        As for `all_pairs` (``correction`` None: uncorrected p-values).
    progress : bool or None
        The grid's bar and summary on standard error (None: only when it is a terminal).
    backend, client, scheduler, n_jobs
        Where the cells are computed (`resolve_backend`).
    store : ParquetStore, path or None
        Keeps the p-values for reruns.
    collection : str
        The collection's name in the cells' keys.

    Returns
    -------
    (pandas.DataFrame, GridSummary)

    Raises
    ------
    ValueError
        ``alpha`` outside (0, 1), an unknown test, or no measure.
    """
    import pandas as pd
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1), got {alpha!r}.")
    for t in tests:
        check_choice("test", t, list(TESTS))
    mats, hashes = _matrices(scores_by_measure, "scores_by_measure")
    cells = {(label, t): Cell("allpairs", collection, "", label, 100.0, 0,
                              f"{t}/n={int(n_resamples) if t in ('randomization', 'bootstrap') else 0}/seed={seed}"
                              f"/correction={correction}", hashes[label], "") for label in mats for t in tests}
    jobs = {(label, t): (label, (c,), dict(test=t, n_resamples=int(n_resamples), seed=seed, correction=correction))
            for (label, t), c in cells.items()}
    arrays, summary = _run(jobs, "grid-pairs", _pair_pvalues, mats, hashes, "discriminative power", backend, client,
                           scheduler, n_jobs, store, progress)
    rows = {label: {t: float(np.mean(arrays[cells[(label, t)].key] < alpha)) for t in tests} for label in mats}
    return pd.DataFrame.from_dict(rows, orient="index")[list(tests)], summary


def fit_per_collection(scores_by_collection: Mapping[str, ScoresLike], *, sampler: str = "gibbs",
                       progress: bool | None = None, backend: Backend | str | None = None,
                       client: Client | None = None, scheduler: str | None = None, n_jobs: int = 1,
                       store: StoreLike = None, **fit_kwargs: Any) -> tuple[dict[str, BayesResult], GridSummary]:
    """One Bayesian linear model per collection, each a grid cell: ``({collection: BayesResult}, summary)``.

    ``scores_by_collection``: ``{collection: scores}`` (anything
    [`score_matrix`][irmeasures_markov.inference.score_matrix] accepts, one measure).
    ``sampler`` and ``fit_kwargs`` (``draws``, ``tune``, ``chains``, ``seed``, ...)
    go to [`bayesian_linear_model`][irmeasures_markov.inference.bayesian_linear_model]; a
    seed must be given for the fit to be reproducible (it is 0 by default for
    the Gibbs sampler).  The results carry ``system_effects``, ``max_rhat`` and
    ``divergences``; ``idata`` is None (the draws come back from the worker or
    the store, not the sampler's InferenceData).

    Parameters
    ----------
    scores_by_collection : mapping of str to ScoresLike
        ``{collection: scores}``.
    sampler : {'gibbs', 'pymc'}
        The ``backend`` of [`bayesian_linear_model`][irmeasures_markov.inference.bayesian_linear_model].
    progress : bool or None
        The grid's bar and summary on standard error (None: only when it is a terminal).
    backend, client, scheduler, n_jobs
        Where the cells are computed (`resolve_backend`).
    store : ParquetStore, path or None
        Keeps the draws for reruns.
    **fit_kwargs
        For the sampler (``draws``, ``tune``, ``chains``, ``seed``, ...); part of the cells' keys.

    Returns
    -------
    (dict of str to BayesResult, GridSummary)

    Raises
    ------
    ValueError
        An unknown sampler or no collection.
    """
    check_choice("sampler", sampler, ("gibbs", "pymc"))
    mats, hashes = _matrices(scores_by_collection, "scores_by_collection")
    settings = json.dumps({"sampler": sampler, **fit_kwargs}, sort_keys=True, default=repr)
    seed = int(fit_kwargs.get("seed", 0) or 0)
    cells = {c: tuple(Cell("bayes", c, "", part, 100.0, seed, settings, hashes[c], "")
                      for part in ("effects", "diagnostics")) for c in mats}
    jobs = {c: (c, pair, dict(sampler=sampler, fit_kwargs=dict(fit_kwargs))) for c, pair in cells.items()}
    arrays, summary = _run(jobs, "grid-bayes", _fit_arrays, mats, hashes, "Bayesian fits", backend, client, scheduler,
                           n_jobs, store, progress)
    out = {}
    for c, (ce, cd) in cells.items():
        rhat, div = arrays[cd.key]
        out[c] = BayesResult(list(mats[c].systems), arrays[ce.key], None, topics=list(mats[c].topics),
                             divergences=None if np.isnan(div) else int(div),
                             max_rhat=None if np.isnan(rhat) else float(rhat))
    return out, summary


def discriminative_power(scores_by_measure: Mapping[str, ScoresLike], *, alpha: float = 0.05,
                         tests: Sequence[str] = ("t", "randomization", "bootstrap"),
                         n_resamples: int = 10000, seed: int | None = 0, correction: str | None = None,
                         progress: bool | None = None, backend: Backend | str | None = None,
                         client: Client | None = None, scheduler: str | None = None, n_jobs: int = 1,
                         store: StoreLike = None) -> pd.DataFrame:
    """Share of system pairs significantly different at ``alpha`` (Smucker & Clarke 2012, Table 2).

    ``scores_by_measure``: ``{measure label: scores}`` with anything
    [`score_matrix`][irmeasures_markov.inference.score_matrix] accepts (all over the same systems and topics).
    Returns a DataFrame, one row per measure, one column per test.

    Each (measure, test) is a cell of an `irmeasures_markov.grid` grid:
    computed in this process by default, on ``n_jobs`` local processes, or on
    Dask (``client=``, ``scheduler=``, ``backend=``), with the same numbers on
    every backend; ``store`` (a directory) keeps the p-values for reruns.

    Parameters
    ----------
    scores_by_measure : mapping of str to ScoresLike
        ``{measure label: scores}`` with anything `score_matrix` accepts (all over the same
        systems and topics).
    alpha : float
        Significance level, in (0, 1).
    tests : sequence of str
        Tests of `TESTS`, one column each.
    n_resamples, seed, correction
        As for `all_pairs` (``correction`` None: uncorrected p-values).
    progress : bool or None
        The grid's bar and summary on standard error (None: only when it is a terminal).
    backend, client, scheduler, n_jobs
        Where the cells are computed (`resolve_backend`).
    store : ParquetStore, path or None
        Keeps the p-values for reruns.

    Returns
    -------
    pandas.DataFrame
        The share of pairs with an (adjusted) p-value below ``alpha``: one row per measure, one column per
        test.

    Raises
    ------
    ValueError
        ``alpha`` outside (0, 1), an unknown test, or no measure.
    """
    table, _ = discriminative_power_grid(scores_by_measure, alpha=alpha, tests=tests, n_resamples=n_resamples,
                                         seed=seed, correction=correction, progress=progress, backend=backend,
                                         client=client, scheduler=scheduler, n_jobs=n_jobs, store=store)
    return table
