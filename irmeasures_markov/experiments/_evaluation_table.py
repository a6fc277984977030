"""The result of [`evaluate`][irmeasures_markov.experiments.evaluate]: per-topic values of every run and measure."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from ir_measures import Measure

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Evaluation", "measure_frame"]


@dataclass
class Evaluation:
    """Per-topic values: ``values[i, j, k]`` is measure ``j`` of run ``i`` on topic ``k``.

    Topics a run did not answer hold the measure's DEFAULT (0), as in
    ``ir_measures``.  ``labels`` are the names the columns are shown with.

    The summaries are labelled pandas objects ([`means`][irmeasures_markov.experiments.Evaluation.means],
    [`column`][irmeasures_markov.experiments.Evaluation.column],
    [`per_topic`][irmeasures_markov.experiments.Evaluation.per_topic]); the same numbers as plain arrays are ``values``
    and
    [`means_array`][irmeasures_markov.experiments.Evaluation.means_array] /
    [`column_array`][irmeasures_markov.experiments.Evaluation.column_array].

    Per-query extras of a measure (``'se'`` of ``ties='expected'``, ``'lo'``/``'hi'`` of
    ``unjudged='range'``) are columns after all measures', labelled ``<label>_<name>``, their
    ``measures`` entry the measure; ``extras[j] = (i, name)``: column ``j`` is extra ``name`` of column ``i``.
    """
    runs: list[str]
    measures: list[Measure]
    topics: list[str]
    values: np.ndarray
    labels: list[str] = field(default_factory=list)
    extras: dict[int, tuple[int, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.labels:
            self.labels = [str(m) for m in self.measures]

    def means_array(self) -> np.ndarray:
        """Mean over topics as a plain array ``[run, measure]`` (rows ``runs``, columns ``labels``).

        Returns
        -------
        numpy.ndarray
            The means, shape ``(len(runs), len(measures))``.
        """
        return self.values.mean(axis=2)

    def means(self) -> pd.DataFrame:
        """Mean over topics: a DataFrame, index ``runs`` (named ``run``), columns ``labels`` (named ``measure``).

        Returns
        -------
        pandas.DataFrame
            The mean of every measure for every run.
        """
        import pandas as pd
        return measure_frame(self.means_array(), pd.Index(list(self.runs), name="run"), self.labels)

    def column_array(self, measure: Measure | str) -> np.ndarray:
        """Per-run means of one measure (given as object, printed form or label), as an array in ``runs`` order.

        Parameters
        ----------
        measure : ir_measures.Measure or str
            The measure, its printed form or its label.

        Returns
        -------
        numpy.ndarray
            The means, one per run, in ``runs`` order.

        Raises
        ------
        KeyError
            ``measure`` is not one of the evaluated measures.
        """
        return self.means_array()[:, self.measure_index(measure)]

    def column(self, measure: Measure | str) -> pd.Series:
        """Per-run means of one measure as a Series indexed by run, named by the measure's label.

        Parameters
        ----------
        measure : ir_measures.Measure or str
            The measure, its printed form or its label.

        Returns
        -------
        pandas.Series
            The means, indexed by run (named ``run``).

        Raises
        ------
        KeyError
            ``measure`` is not one of the evaluated measures.
        """
        import pandas as pd
        j = self.measure_index(measure)
        return pd.Series(self.means_array()[:, j], index=pd.Index(list(self.runs), name="run"), name=self.labels[j])

    def per_topic(self, measure: Measure | str) -> pd.DataFrame:
        """Per-topic values of one measure: a DataFrame, index ``topics`` (named ``topic``), columns ``runs``.

        [`score_matrix`][irmeasures_markov.inference.score_matrix], ``all_pairs`` and
        ``discriminative_power`` take it as it is.

        Parameters
        ----------
        measure : ir_measures.Measure or str
            The measure, its printed form or its label.

        Returns
        -------
        pandas.DataFrame
            The values, one row per topic and one column per run.

        Raises
        ------
        KeyError
            ``measure`` is not one of the evaluated measures.
        """
        import pandas as pd
        j = self.measure_index(measure)
        return pd.DataFrame(self.values[:, j, :].T, index=pd.Index(list(self.topics), name="topic"),
                            columns=pd.Index(list(self.runs), name="run"))

    def measure_index(self, measure: Measure | str) -> int:
        """The position of ``measure`` (an object, its printed form or its label) among `measures`.

        Parameters
        ----------
        measure : ir_measures.Measure or str
            The measure, its printed form or its label.

        Returns
        -------
        int
            The index ``j`` of the measure in ``values[:, j, :]``, `measures` and `labels`.

        Raises
        ------
        KeyError
            ``measure`` is not one of the evaluated measures.
        """
        key = str(measure)
        for j, (m, lab) in enumerate(zip(self.measures, self.labels)):
            if measure is m or key == lab or key == str(m):
                return j
        raise KeyError(f"{measure!r} is not among the evaluated measures {self.labels}")

    def to_frame(self) -> pd.DataFrame:
        """Mean scores as a DataFrame (runs x measure labels); the same as
        [`means`][irmeasures_markov.experiments.Evaluation.means].

        Returns
        -------
        pandas.DataFrame
            The mean of every measure for every run.
        """
        return self.means()


def measure_frame(values: np.ndarray, index: pd.Index, labels: list[str]) -> pd.DataFrame:
    """``values`` with one column per measure label (columns named ``measure``): the layout of every table of
    means and τ's of the experiments."""
    import pandas as pd
    return pd.DataFrame(values, index=index, columns=pd.Index(list(labels), name="measure"))
