"""The TREC test collections of the papers: names, where their qrels, topics and runs come from.

:data:`COLLECTIONS` maps names (and aliases) to :class:`Collection` records;
:func:`collection` looks one up; :func:`data_directory` finds the directory
that holds the collections' local files.  The loaders are in :mod:`.datasets`.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

from .. import testing
from .._util.types import PathLike

__all__ = ["Collection", "COLLECTIONS", "collection", "data_directory"]


@dataclass(frozen=True)
class Collection:
    """A TREC test collection used in the papers' experiments.

    ``qrels_file``/``topics_file``/``runs_dir`` are paths relative to the shared
    data directory (``$IRMEASURES_MARKOV_DATA``); ``topic_range`` restricts a
    topics file that covers several tracks.  ``official_url`` and
    ``official_topics_url`` are where NIST publishes the qrels and the topics
    (named in the error raised when a file has to be supplied by hand).
    """
    name: str
    title: str
    ir_datasets_id: str | None
    qrels_file: str
    topics_file: str | None
    topic_range: tuple[int, int] | None
    runs_dir: str | None
    graded: bool
    official_url: str
    official_topics_url: str | None = None


COLLECTIONS: dict[str, Collection] = {}


def _add(c: Collection, *aliases: str):
    for name in (c.name, *aliases):
        COLLECTIONS[name] = c


_add(Collection("trec7", "TREC 7 ad hoc (disks 4&5 minus CR), topics 351-400", "disks45/nocr/trec7",
                "qrels/trec7.qrels.gz", "topics/trec7.topics", (351, 400), None, False,
                "https://trec.nist.gov/data/qrels_eng/qrels.trec7.adhoc.parts1-5.tar.gz",
                "https://trec.nist.gov/data/topics_eng/topics.351-400.gz"))
_add(Collection("trec8", "TREC 8 ad hoc (disks 4&5 minus CR), topics 401-450", "disks45/nocr/trec8",
                "qrels/trec8.qrels.gz", "topics/trec8.topics", (401, 450), "runs/trec8", False,
                "https://trec.nist.gov/data/qrels_eng/qrels.trec8.adhoc.parts1-5.tar.gz",
                "https://trec.nist.gov/data/topics_eng/topics.401-450.gz"))
_add(Collection("trec10", "TREC 2001 (TREC-10) Web track, WT10g, topics 501-550", None,
                "qrels/web2001.qrels.gz", "topics/trec9-10.topics", (501, 550), None, True,
                "https://trec.nist.gov/data/qrels_eng/ (qrels.trec10.main_web / adhoc_qrels.txt for topics 501-550)",
                "https://trec.nist.gov/data/topics_eng/topics.501-550.txt"),
     "web2001")
_add(Collection("trec14", "TREC 2005 (TREC-14) Robust track, AQUAINT, 50 topics", "aquaint/trec-robust-2005",
                "qrels/robust05.qrels.gz", "topics/robust05.topics", None, None, True,
                "https://trec.nist.gov/data/robust/05/TREC2005.qrels.txt",
                "https://trec.nist.gov/data/robust/05/05.50.topics.txt"),
     "robust05")
_add(Collection("robust04", "TREC 2004 Robust track (disks 4&5 minus CR), 249 topics",
                "disks45/nocr/trec-robust-2004", "qrels/robust04.qrels.gz", "topics/robust04.topics", None,
                "runs/robust04", True, "https://trec.nist.gov/data/robust/qrels.robust2004.txt",
                "https://trec.nist.gov/data/robust/04.testset.gz"))
_add(Collection("robust03", "TREC 2003 Robust track, 100 topics (local files only)", None,
                "qrels/robust03.qrels.gz", None, None, "runs/robust03", True,
                "https://trec.nist.gov/data/robust/ (qrels.robust2003.txt)"))


def collection(name: str) -> Collection:
    """The :class:`Collection` called ``name``.

    Parameters
    ----------
    name : str
        ``trec7``, ``trec8``, ``trec10``, ``trec14``/``robust05``, ``robust04``
        or ``robust03`` (any letter case).

    Returns
    -------
    Collection

    Raises
    ------
    ValueError
        An unknown name; the message lists the known ones.
    """
    try:
        return COLLECTIONS[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"Unknown collection {name!r}; known: {', '.join(sorted(COLLECTIONS))}") from None


def data_directory(data_dir: PathLike | None = None) -> pathlib.Path | None:
    """The data directory: ``data_dir`` when given, else the shared one (``$IRMEASURES_MARKOV_DATA`` or
    ../shared/data, :func:`irmeasures_markov.testing.shared_data_dir`), or None when there is none.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        A data directory given by the caller.

    Returns
    -------
    pathlib.Path or None
    """
    if data_dir is not None:
        return pathlib.Path(data_dir)
    return testing.shared_data_dir()  # looked up at each call (tests replace it)
