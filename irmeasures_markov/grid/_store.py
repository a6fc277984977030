"""A resumable result store: finished cells in a directory of Parquet files.

Layout: ``<store>/part-<time>-<uuid>.parquet``, one row per cell (its key, its
fields, the array's shape and its float64 values, flattened).  Each write
creates a new part under a fresh temporary name and renames it into place
(``os.replace``, atomic on one file system), so

* a reader never sees a partial file (temporary names start with ``.`` and
  are never read; a writer killed mid-write leaves only such a file);
* two clients writing to one store never write into the same file, so they
  cannot corrupt each other's results;
* a cell stored twice (two clients computed it at once, or a rerun) is read
  once: the first part in name order wins, and as a cell's numbers depend
  only on its key, both copies hold the same numbers;
* a part that cannot be read (truncated or corrupted outside the package) is
  passed over with a warning naming it: its cells are computed again.

float64 values are stored as Parquet DOUBLE, so a value read back is the same
bits as the one computed.
"""
from __future__ import annotations

import datetime
import os
import pathlib
import socket
import time
import uuid
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from irmeasures_markov.grid._cells import Cell
from irmeasures_markov.io._atomic import replacing

__all__ = ["ParquetStore", "StoreLike"]

_FIELDS = ("kind", "collection", "run", "measures", "pool", "seed", "resample", "qrels_hash", "run_hash")


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("the grid's result store needs pyarrow: pip install 'irmeasures-markov[dask]'") from e
    return pa, pq


class ParquetStore:
    """Finished cells of experiment grids, keyed by `Cell.key`.

    Parameters
    ----------
    path : path
        The store's directory (created when missing).  On a cluster it must be
        shared storage visible to the client (only the client writes).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = pathlib.Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"{self.path}: the grid store must be a directory, this is a file.")
        self.path.mkdir(parents=True, exist_ok=True)
        self._writer = f"{socket.gethostname()}:{os.getpid()}"

    def __repr__(self) -> str:
        return f"ParquetStore({str(self.path)!r})"

    def parts(self) -> list[pathlib.Path]:
        """The finished part files, in name (= roughly write) order.

        Returns
        -------
        list of pathlib.Path
            the paths of the part files.
        """
        return sorted(p for p in self.path.glob("part-*.parquet"))

    def get(self, keys: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """``{key: array}`` for the stored cells among ``keys`` (every stored cell when None).

        Parameters
        ----------
        keys : iterable of str or None
            the cell keys wanted (None: all).

        Returns
        -------
        dict of str to numpy.ndarray
            the stored array of each key found.
        """
        pa, pq = _pyarrow()
        want = None if keys is None else set(keys)
        out: dict[str, np.ndarray] = {}
        for _, table in self._tables(pq, ["key", "shape", "values"]):
            keys_col = table.column("key").to_pylist()
            take = [i for i, k in enumerate(keys_col) if k not in out and (want is None or k in want)]
            if not take:
                continue
            shapes = table.column("shape").to_pylist()
            vals = table.column("values").combine_chunks()
            offsets = vals.offsets.to_numpy()
            flat = vals.values.to_numpy(zero_copy_only=False)
            for i in take:
                out[keys_col[i]] = flat[offsets[i]:offsets[i + 1]].reshape(shapes[i]).copy()
        return out

    def keys(self) -> set[str]:
        """Keys of every stored cell.

        Returns
        -------
        set of str
            the keys found in the part files.
        """
        _, pq = _pyarrow()
        return {k for _, table in self._tables(pq, ["key"]) for k in table.column("key").to_pylist()}

    def _tables(self, pq, columns: list[str] | None):
        """``(part, its columns)`` of every part, in name order, passing over a part another client compacted away
        since it was listed (its rows are in the merged part) and, with a warning, a part that cannot be read."""
        pa, _ = _pyarrow()
        for part in self.parts():
            try:
                table = pq.read_table(part, columns=columns)
            except FileNotFoundError:
                continue
            except (OSError, pa.ArrowException) as e:
                warnings.warn(f"{part}: a part of the grid store that cannot be read ({type(e).__name__}: "
                              f"{str(e)[:120]}); its cells are computed again (delete it to silence this)",
                              RuntimeWarning, stacklevel=4)
                continue
            yield part, table

    def write(self, cells: Sequence[Cell], arrays: Sequence[np.ndarray]) -> pathlib.Path | None:
        """Store ``cells`` with their arrays as one new part file (atomically); returns its path.

        Parameters
        ----------
        cells : sequence of Cell
            the grid cells to store.
        arrays : sequence of numpy.ndarray
            the result array of each cell (stored as float64).

        Returns
        -------
        pathlib.Path or None
            the new part file, or None when ``cells`` is empty.

        Raises
        ------
        ValueError
            If ``cells`` and ``arrays`` differ in length.
        """
        if len(cells) != len(arrays):
            raise ValueError(f"{len(cells)} cells but {len(arrays)} arrays.")
        if not cells:
            return None
        pa, pq = _pyarrow()
        arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
        cols = {"key": pa.array([c.key for c in cells], pa.string())}
        for f in _FIELDS:
            vals = [getattr(c, f) for c in cells]
            typ = pa.float64() if f == "pool" else pa.int64() if f == "seed" else pa.string()
            cols[f] = pa.array(vals, typ)
        cols["shape"] = pa.array([list(a.shape) for a in arrays], pa.list_(pa.int64()))
        offsets = np.concatenate([[0], np.cumsum([a.size for a in arrays])]).astype(np.int32)
        flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)
        cols["values"] = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat, pa.float64()))
        now = datetime.datetime.now(datetime.timezone.utc)
        cols["written"] = pa.array([now] * len(cells), pa.timestamp("us", tz="UTC"))
        cols["writer"] = pa.array([self._writer] * len(cells), pa.string())
        return self._publish(pa.table(cols), pq)

    def _publish(self, table, pq) -> pathlib.Path:
        """Write ``table`` as a new part, renamed into place so that a reader never sees half a file."""
        dest = self.path / f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:12]}.parquet"
        with replacing(dest) as tmp:
            pq.write_table(table, tmp)
        return dest

    def compact(self) -> tuple[int, int]:
        """Merge every part into one (duplicates dropped); returns ``(parts_before, rows_kept)``.

        The merged part is written (atomically) before the old parts are
        removed, so a concurrent reader sees every cell at least once.  A part
        that cannot be read is left as it is (with a warning naming it).

        Returns
        -------
        tuple of (int, int)
            the number of parts before compaction and the number of rows kept.
        """
        pa, pq = _pyarrow()
        n_parts = len(self.parts())
        read = list(self._tables(pq, ["key"] if n_parts <= 1 else None))
        if len(read) <= 1:   # nothing to merge
            return n_parts, sum(t.num_rows for _, t in read)
        table = pa.concat_tables([t for _, t in read])
        seen, take = set(), []
        for i, k in enumerate(table.column("key").to_pylist()):
            if k not in seen:
                seen.add(k)
                take.append(i)
        self._publish(table.take(pa.array(take, pa.int64())), pq)
        for part, _ in read:
            part.unlink(missing_ok=True)
        return n_parts, len(take)


#: Where a grid keeps finished cells: a :class:`ParquetStore`, its directory, or None (nothing kept).
StoreLike = ParquetStore | str | os.PathLike | None
