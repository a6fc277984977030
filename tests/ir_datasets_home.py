"""Local qrels and topics laid out where ``ir_datasets`` caches its downloads, so that it works offline.

A helper of the tests (``from ir_datasets_home import seed_ir_datasets_home``: pytest puts ``tests/`` on
``sys.path``); integration/test_datasets.py uses it for trec7, trec8, robust04 and robust05.
"""
import gzip
import io
import pathlib
import tarfile
from collections.abc import Sequence

from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._atomic import replacing
from irmeasures_markov.io._datasets import collection, data_directory
from irmeasures_markov.io._text import decompress, display_name, read_raw


def _gz_text(path: pathlib.Path) -> bytes:
    return decompress(read_raw(path), display_name(path))


def _write_tar(dest: pathlib.Path, members: Sequence[tuple[str, bytes]]):
    with replacing(dest) as tmp, tarfile.open(tmp, "w:gz") as tar:
        for name, payload in members:
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))


def _write(dest: pathlib.Path, payload: bytes):
    with replacing(dest) as tmp:
        tmp.write_bytes(payload)


def seed_ir_datasets_home(home: PathLike, data_dir: PathLike | None = None,
                          names: Sequence[str] = ("trec7", "trec8", "robust04", "trec14")) -> pathlib.Path:
    """Place local qrels (and topics) where ``ir_datasets`` caches its downloads.

    ``ir_datasets`` does not re-check files already at their cache path, so after
    this, with ``IR_DATASETS_HOME=home`` set *before* ``ir_datasets`` is imported,
    ``ir_datasets.load('disks45/nocr/trec8').qrels_iter()`` works offline.

    Parameters
    ----------
    home : str or os.PathLike
        The ``ir_datasets`` home directory to fill.
    data_dir : path, optional
        The data directory holding the collections' files (default
        ``$IRMEASURES_MARKOV_DATA`` or ../shared/data).
    names : sequence of str
        The collections to place.

    Returns
    -------
    pathlib.Path
        ``home``.

    Raises
    ------
    FileNotFoundError
        No data directory, or a collection's qrels file is missing.
    ValueError
        A collection ``ir_datasets`` has no id for.
    """
    ddir = data_directory(data_dir)
    if ddir is None:
        raise FileNotFoundError("no data directory: pass data_dir or set $IRMEASURES_MARKOV_DATA")
    home = pathlib.Path(home)
    for name in names:
        c = collection(name)
        qrels = _gz_text(ddir / c.qrels_file)
        topics = _gz_text(ddir / c.topics_file) if c.topics_file and (ddir / c.topics_file).exists() else None
        if c.name == "trec8":
            _write_tar(home / "disks45" / "qrels.trec8.adhoc.parts1-5.tar.gz", [("qrels.trec8.adhoc.parts1-5", qrels)])
            if topics:
                _write(home / "disks45" / "topics.401-450.gz", gzip.compress(topics))
        elif c.name == "trec7":
            lines = qrels.splitlines(keepends=True)
            step = -(-len(lines) // 5)
            parts = [(f"qrels.trec7.adhoc.part{i + 1}.gz", gzip.compress(b"".join(lines[i * step:(i + 1) * step])))
                     for i in range(5)]
            _write_tar(home / "disks45" / "qrels.trec7.adhoc.parts1-5.tar.gz", parts)
            if topics:
                _write(home / "disks45" / "topics.351-400.gz", gzip.compress(topics))
        elif c.name == "robust04":
            _write(home / "disks45" / "qrels.robust2004.txt", qrels)
            if topics:
                _write(home / "disks45" / "04.testset.gz", gzip.compress(topics))
        elif c.name == "trec14":
            _write(home / "aquaint" / "trec-robust-2005" / "qrels", qrels)
            if topics:
                _write(home / "aquaint" / "trec-robust-2005" / "queries", topics)
        else:
            raise ValueError(f"{name}: ir_datasets has no id for this collection; nothing to seed")
    return home
