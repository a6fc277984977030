"""Logs as pandas DataFrames, one row per click with the TSV format's columns: :func:`from_dataframe`,
:func:`to_dataframe`."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration._logs import ClickLog
from irmeasures_markov.calibration.readers._rows import TSV_COLUMNS, TSV_REQUIRED, check_unshown, sessions_from_rows
from irmeasures_markov.io._text import short

if TYPE_CHECKING:
    import pandas

__all__ = ["from_dataframe", "to_dataframe"]


def from_dataframe(df: pandas.DataFrame, *, unshown: str = "error", description: str = "",
                   source: str = "DataFrame") -> ClickLog:
    """A log from a pandas DataFrame with the TSV format's columns, one row per click.

    Required columns ``session_id``, ``query_id``, ``shown`` (a list/tuple of
    document ids, or one string of ids separated by spaces); optional
    ``rank`` (1-based) or ``doc``, ``time``, ``dwell``, ``ended``.  Missing
    values (None, NaN) mean "no click" (``rank``/``doc``), "unknown"
    (``dwell``, ``ended``).  Rows of a session must be together, in click
    order.  Errors name the row (its position and index label).

    Parameters
    ----------
    df : pandas.DataFrame
    unshown : {'error', 'drop'}
    description : str
    source : str

    Returns
    -------
    ClickLog

    Raises
    ------
    InputError
        Missing or unknown columns, or a bad value, naming the row.
    """
    check_unshown(unshown)
    missing = [c for c in TSV_REQUIRED if c not in df.columns]
    unknown = [c for c in df.columns if c not in TSV_COLUMNS]
    if missing or unknown:
        raise InputError(f"DataFrame: columns {list(TSV_REQUIRED)} are required and "
                         f"{[c for c in TSV_COLUMNS if c not in TSV_REQUIRED]} optional; "
                         + (f"missing {missing}" if missing else "") + (" " if missing and unknown else "")
                         + (f"unknown {unknown}" if unknown else ""))
    cols = [c for c in TSV_COLUMNS if c in df.columns]
    rows = []
    for pos, (label, *values) in enumerate(df[cols].itertuples(index=True, name=None)):
        where = f"DataFrame row {pos} (index {label!r})"
        rows.append((where, {c: _cell_text(c, v, where) for c, v in zip(cols, values)}))
    return ClickLog(sessions_from_rows(rows, unshown), description, source, {"format": "dataframe"})


def _missing(v) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN, pandas.NA compare unequal to themselves (NA raises)
    except TypeError:
        return True


def _cell_text(column: str, v, where: str) -> str:
    if column == "shown":
        if isinstance(v, str):
            return v
        if isinstance(v, (list, tuple, np.ndarray)):
            ids = [str(d) if isinstance(d, (str, np.str_)) else None for d in v]
            if None in ids:
                raise InputError(f"{where}: document ids in 'shown' must be strings")
            bad = [d for d in ids if not d or len(d.split()) != 1]
            if bad:
                raise InputError(f"{where}: document id {bad[0]!r} in 'shown' is empty or holds whitespace")
            return " ".join(ids)
        raise InputError(f"{where}: 'shown' must be a list of document ids or a space-separated string, "
                         f"got {short(v)}")
    if isinstance(v, (list, tuple, np.ndarray)):
        raise InputError(f"{where}: column {column!r} must hold one value per row (one click per row)")
    if _missing(v):
        return ""
    if column == "ended":
        if isinstance(v, (bool, np.bool_)):
            return "1" if v else "0"
        return str(v)
    if column == "rank":
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))  # a rank column with missing values is float in pandas
        return str(v)
    if column in ("time", "dwell"):
        return repr(float(v)) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)
    if not isinstance(v, str):
        raise InputError(f"{where}: {column} must be a string, got {short(v)} ({type(v).__name__}); convert it "
                         f"with str()")
    return v


def to_dataframe(log: ClickLog) -> pandas.DataFrame:
    """The log as a DataFrame, one row per click (a session without clicks: one row with rank None).

    Columns are the TSV format's; ``shown`` holds tuples.  :func:`from_dataframe`
    reads it back.

    Parameters
    ----------
    log : ClickLog

    Returns
    -------
    pandas.DataFrame
        Columns ``TSV_COLUMNS``; ``rank`` is a nullable integer column.
    """
    import pandas as pd
    records = []
    for s in log.sessions:
        base = {"session_id": s.session_id, "query_id": s.query_id, "shown": s.shown, "ended": s.ended}
        if not s.n_clicks:
            records.append({**base, "rank": None, "doc": None, "time": None, "dwell": None})
        for k, r in enumerate(s.clicks.tolist()):
            records.append({**base, "rank": r, "doc": s.shown[r - 1],
                            "time": float(s.times[k]) if s.times is not None else None,
                            "dwell": float(s.dwell[k]) if s.dwell is not None else None})
    frame = pd.DataFrame.from_records(records, columns=list(TSV_COLUMNS))
    frame["rank"] = frame["rank"].astype("Int64")
    return frame
