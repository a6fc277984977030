"""Test collections, their qrels and topics, and pool downsampling (docs/reproducing-the-papers.md).

The experiments of the papers use the TREC 7, 8, 10 (2001 Web) and 14 (Robust
2005) ad hoc collections, all submitted runs that retrieved at least one
document for every topic, graded judgments mapped to binary leniently
(grade >= 1), and pools downsampled as in Buckley & Voorhees (2004).

* `COLLECTIONS` / [`collection`][irmeasures_markov.io.collection] — named collections and where
  their qrels come from (an ``ir_datasets`` id where one exists, else a local
  file);
* [`load_qrels`][irmeasures_markov.io.load_qrels], [`load_topics`][irmeasures_markov.io.load_topics] — judgments and
topics, from a local
  file, the shared data directory, or ``ir_datasets`` (with a clear error
  naming the file to supply when none of those works; `downloads`);
* [`downsample_qrels`][irmeasures_markov.io.downsample_qrels] — seeded, nested pool downsampling.

Run directories (``load_run_dir``, ``run_name``, ...) are read by
`run_files`, and the download messages are in `downloads`.
"""
from __future__ import annotations

import pathlib
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from irmeasures_markov import testing
from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._types import PathLike
from irmeasures_markov.io._downloads import download_failure
from irmeasures_markov.io._normalise import qrels_dict
from irmeasures_markov.io._text import decode, decompress, display_name, read_raw, short
from irmeasures_markov.io._tokens import GRADE_MAX, GRADE_MIN
from irmeasures_markov.io._trec import read_trec_qrels

__all__ = [
    "data_directory",
    "Collection",
    "COLLECTIONS",
    "collection",
    "binarize",
    "load_qrels",
    "load_topics",
    "read_topics",
    "downsample_qrels",
]


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
    """The `Collection` called ``name``.

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
    ../shared/data, `irmeasures_markov.testing.shared_data_dir`), or None when there is none.

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


Qrels = dict[str, dict[str, int]]


def binarize(qrels: Mapping[str, Mapping[str, int]], rel: int = 1) -> Qrels:
    """Lenient binary mapping (paper §5.1): grade ``>= rel`` becomes 1, anything else 0.

    Every judgment is kept (a judged non-relevant document stays judged, which
    matters for bpref and for ``judged_only`` measures).

    Parameters
    ----------
    qrels : mapping or path
        ``{qid: {docid: grade}}``, a qrels file path, or any form
        [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] takes.
    rel : int
        The smallest grade counted as relevant.

    Returns
    -------
    dict
        ``{qid: {docid: 0 or 1}}``.

    Raises
    ------
    InputError
        Malformed qrels (see [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict]).
    """
    if not isinstance(qrels, Mapping):
        qrels = qrels_dict(qrels)
    return {q: {d: int(g >= rel) for d, g in docs.items()} for q, docs in qrels.items()}


def _missing_message(c: Collection, what: str, data_dir: pathlib.Path | None, reason: str,
                     cause: BaseException | None = None) -> str:
    """What to do first, then why: the nested exception, if any, goes last and shortened."""
    rel = c.qrels_file if what == "qrels" else c.topics_file
    if rel is None:
        place = ""
    elif data_dir is not None:
        place = f" or place it at {pathlib.Path(data_dir) / rel}"
    else:
        # no data directory was found, so name the setting rather than a path that does not exist
        place = (f" or place it at ${testing.DATA_ENV}/{rel} (set {testing.DATA_ENV} to your data directory, "
                 "or pass data_dir='...')")
    kind = "TREC qrels file" if what == "qrels" else "TREC topics file"
    source = c.official_url if what == "qrels" else c.official_topics_url
    msg = (f"cannot load the {what} of {c.name} ({reason}). To fix: pass path='...' (a {kind}){place}."
           + (f" Official file: {source}." if source else ""))
    if cause is not None:
        msg += f" [{download_failure(cause)}]"
    return msg


def _check_source(source: str):
    if source not in ("auto", "local", "ir_datasets"):
        raise ValueError(f"`source` must be 'auto', 'local' or 'ir_datasets', got {source!r}.")


def load_qrels(name: str, *, binary: bool = False, path: PathLike | None = None,
               source: str = "auto", data_dir: PathLike | None = None) -> Qrels:
    """Qrels ``{qid: {docid: grade}}`` of a named collection.

    Parameters
    ----------
    name : str
        A key of `COLLECTIONS`, or any ``ir_datasets`` id with qrels.
    binary : bool
        Apply the lenient binary mapping (grade >= 1 -> 1) of `binarize`.
    path : path, optional
        A local TREC qrels file (plain or ``.gz``); overrides everything else.
    source : {'auto', 'local', 'ir_datasets'}
        ``auto`` reads the collection's file from the data directory when it is
        there, else asks ``ir_datasets``; ``local``/``ir_datasets`` force one.
    data_dir : path, optional
        The data directory (default ``$IRMEASURES_MARKOV_DATA`` or ../shared/data).

    Returns
    -------
    dict of str to dict of str to int
        ``{qid: {docid: grade}}`` (grades 0/1 with ``binary=True``).

    Raises
    ------
    FileNotFoundError
        Nothing could provide the qrels; the message names the file to supply.
    InputError
        A malformed qrels file, or one holding an id that is not valid UTF-8
        (as [`read_trec_qrels`][irmeasures_markov.io.read_trec_qrels]).
    """
    _check_source(source)
    c = COLLECTIONS.get(name.lower()) if isinstance(name, str) else None
    ddir = data_directory(data_dir) if c is not None else None
    local = ddir / c.qrels_file if ddir is not None else None
    if path is not None:
        qrels = read_trec_qrels(path)
    elif c is None:
        if "/" not in str(name):
            raise ValueError(f"Unknown collection {name!r}; known: {', '.join(sorted(COLLECTIONS))} "
                             "(or give an ir_datasets id such as 'disks45/nocr/trec8').")
        qrels = _ir_datasets_qrels(str(name), None, None)
    elif source in ("auto", "local") and local is not None and local.exists():
        qrels = read_trec_qrels(local)
    elif source == "local":
        raise FileNotFoundError(_missing_message(
            c, "qrels", ddir, f"{local} does not exist" if local is not None else "no data directory found"))
    elif c.ir_datasets_id is None:
        raise FileNotFoundError(_missing_message(
            c, "qrels", ddir, "ir_datasets has no id for this collection"
            + (f" and {local} does not exist" if local is not None else "")))
    else:
        qrels = _ir_datasets_qrels(c.ir_datasets_id, c, ddir)
    return binarize(qrels) if binary else qrels


def _ir_datasets_qrels(dataset_id: str, c: Collection | None, ddir: pathlib.Path | None) -> Qrels:
    def unavailable(reason: str, cause: BaseException | None = None) -> FileNotFoundError:
        if c is not None:
            return FileNotFoundError(_missing_message(c, "qrels", ddir, reason, cause))
        return FileNotFoundError(f"cannot load the qrels of {dataset_id!r} ({reason}). To fix: pass path='...' "
                                 "(a TREC qrels file)." + (f" [{download_failure(cause)}]" if cause else ""))

    import ir_datasets
    try:
        ds = ir_datasets.load(dataset_id)
    except KeyError:
        raise ValueError(f"{dataset_id!r} is not an ir_datasets id") from None
    except Exception as e:  # whatever stops ir_datasets here, the user's way out is the same local file
        raise unavailable("ir_datasets could not download them", e) from e
    if not ds.has_qrels():
        raise ValueError(f"ir_datasets id {dataset_id!r} has no qrels")
    try:
        records = [(q.query_id, q.doc_id, q.relevance) for q in ds.qrels_iter()]
    except Exception as e:  # download failures come as many exception types
        raise unavailable("ir_datasets could not download them", e) from e
    qrels: Qrels = {}
    for qid, docid, grade in records:
        qrels.setdefault(qid, {})[docid] = _grade_of(grade, f"ir_datasets {dataset_id!r}: query {short(qid)}, "
                                                           f"document {short(docid)}")
    return qrels


def _grade_of(value, where: str) -> int:
    """A relevance grade from ir_datasets as an int in the signed 32-bit range trec_eval reads."""
    grade = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        grade = int(value)
    elif isinstance(value, str):
        try:
            grade = int(value)
        except ValueError:
            pass
    elif isinstance(value, float) and value.is_integer():
        grade = int(value)
    if grade is None or not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputError(f"{where}: relevance grade {short(value)} is not an integer in the 32-bit range "
                         f"[{GRADE_MIN}, {GRADE_MAX}] that trec_eval and pytrec_eval read")
    return grade


_TOP_RE = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM_RE = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE_RE = re.compile(r"<title>\s*(?:Topic:)?(.*?)(?=<desc>|<narr>|</top>|$)", re.S | re.I)


def read_topics(path: PathLike, topic_range: tuple[int, int] | None = None) -> dict[str, str]:
    """Titles ``{qid: title}`` from a TREC topics file (``<top> <num> <title> ...``).

    Parameters
    ----------
    path : str or os.PathLike
        The topics file (plain, gzip, bzip2 or xz).
    topic_range : tuple of int, optional
        ``(lo, hi)``: keep only numeric topic ids in that closed range.

    Returns
    -------
    dict
        ``{qid: title}`` in file order (whitespace of a title collapsed).

    Raises
    ------
    InputError
        No ``<top>`` block, or a block without ``<num>``.
    """
    text = decode(decompress(read_raw(path), display_name(path)))
    topics: dict[str, str] = {}
    for block in _TOP_RE.findall(text):
        num = _NUM_RE.search(block)
        if num is None:
            raise InputError(f"{path}: a <top> block has no <num> field")
        qid = num.group(1).strip()
        title = _TITLE_RE.search(block)
        topics[qid] = " ".join(title.group(1).split()) if title else ""
    if not topics:
        raise InputError(f"{path}: no <top> blocks found; is this a TREC topics file?")
    if topic_range is not None:
        lo, hi = topic_range
        topics = {q: t for q, t in topics.items() if q.isdigit() and lo <= int(q) <= hi}
    return topics


def load_topics(name: str, *, path: PathLike | None = None, source: str = "auto",
                data_dir: PathLike | None = None) -> dict[str, str]:
    """Topic titles ``{qid: title}`` of a named collection (local topics file or ``ir_datasets``).

    Parameters
    ----------
    name : str
        A key of `COLLECTIONS`.
    path : path, optional
        A local TREC topics file; overrides everything else.
    source : {'auto', 'local', 'ir_datasets'}
        As for [`load_qrels`][irmeasures_markov.io.load_qrels].
    data_dir : path, optional
        The data directory (default ``$IRMEASURES_MARKOV_DATA`` or ../shared/data).

    Returns
    -------
    dict
        ``{qid: title}``.

    Raises
    ------
    FileNotFoundError
        Nothing could provide the topics; the message names the file to supply.
    """
    _check_source(source)
    c = collection(name)
    if path is not None:
        return read_topics(path, c.topic_range)
    ddir = data_directory(data_dir)
    local = ddir / c.topics_file if (ddir is not None and c.topics_file) else None
    if source in ("auto", "local") and local is not None and local.exists():
        return read_topics(local, c.topic_range)
    if source == "local" or c.ir_datasets_id is None:
        reason = (f"{local} does not exist" if local is not None
                  else "no data directory found" if ddir is None else "no local topics file")
        if c.ir_datasets_id is None:
            reason += " and ir_datasets has no id for this collection"
        raise FileNotFoundError(_missing_message(c, "topics", ddir, reason))
    import ir_datasets
    try:
        return {q.query_id: getattr(q, "title", "") for q in ir_datasets.load(c.ir_datasets_id).queries_iter()}
    except Exception as e:  # download failures come as many exception types
        raise FileNotFoundError(_missing_message(c, "topics", ddir, "ir_datasets could not download them",
                                                 e)) from e


# ---------------------------------------------------------------------------
# Pool downsampling
# ---------------------------------------------------------------------------

def downsample_qrels(qrels: Mapping[str, Mapping[str, int]], percent: float, *, seed: int = 0,
                     rel: int = 1, min_relevant: int = 1, min_nonrelevant: int = 10) -> Qrels:
    """Reduce the pool to ``percent`` % of its judgments per topic (Buckley & Voorhees 2004).

    For each topic the relevant (grade >= ``rel``) and the non-relevant judged
    documents are shuffled separately and the first ``round(percent% * n)`` of
    each list are kept, but at least ``min_relevant`` relevant and
    ``min_nonrelevant`` non-relevant documents (or all of them when there are
    fewer).  Documents dropped from the pool become unjudged.

    The shuffle of a topic depends only on ``seed`` and the topic id, so pools
    for different percentages are nested (the 10% pool is inside the 30% pool)
    and results do not depend on the order of the qrels.

    Parameters
    ----------
    qrels : mapping or path
        ``{qid: {docid: grade}}``, a qrels file path, or any form
        [`irmeasures_markov.io.to_qrels_dict`][irmeasures_markov.io.to_qrels_dict] takes.
    percent : float
        The share of each topic's judgments kept, in (0, 100].
    seed : int
        Seeds every topic's shuffle (with the topic id).
    rel : int
        The smallest grade counted as relevant.
    min_relevant : int
        The fewest relevant and non-relevant judgments kept per topic.
    min_nonrelevant : int
        The fewest relevant and non-relevant judgments kept per topic.

    Returns
    -------
    dict
        The reduced qrels ``{qid: {docid: grade}}``, documents sorted.

    Raises
    ------
    ValueError
        ``percent`` outside (0, 100], or a negative minimum.
    """
    if not isinstance(qrels, Mapping):
        qrels = qrels_dict(qrels)
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not (0 < percent <= 100):
        raise ValueError(f"`percent` must be in (0, 100], got {percent!r} "
                         "(the paper's rates are 90, 70, 50, 30, 10).")
    if min_relevant < 0 or min_nonrelevant < 0:
        raise ValueError("`min_relevant` and `min_nonrelevant` must be non-negative.")
    out: Qrels = {}
    for qid, docs in qrels.items():
        items = sorted(docs.items())
        rng = np.random.default_rng([int(seed), zlib.crc32(str(qid).encode("utf-8"))])
        keep = []
        # the relevant documents' permutation is drawn first, then the non-relevant ones'
        for docids, minimum in (([d for d, g in items if g >= rel], min_relevant),
                                ([d for d, g in items if g < rel], min_nonrelevant)):
            n = len(docids)
            count = min(n, max(minimum, int(np.floor(n * percent / 100.0 + 0.5))))
            keep += [docids[i] for i in rng.permutation(n)[:count]]
        out[qid] = {d: docs[d] for d in sorted(keep)}
    return out
