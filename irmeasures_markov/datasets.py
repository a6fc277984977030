"""Test collections, TREC run directories and pool downsampling (docs/reproducing-the-papers.md).

The experiments of the papers use the TREC 7, 8, 10 (2001 Web) and 14 (Robust
2005) ad hoc collections, all submitted runs that retrieved at least one
document for every topic, graded judgments mapped to binary leniently
(grade >= 1), and pools downsampled as in Buckley & Voorhees (2004).

* :data:`COLLECTIONS` / :func:`collection` — named collections and where
  their qrels come from (an ``ir_datasets`` id where one exists, else a local
  file);
* :func:`load_qrels`, :func:`load_topics` — judgments and topics, from a local
  file, the shared data directory, or ``ir_datasets`` (with a clear error
  naming the file to supply when none of those works);
* :func:`read_run`, :func:`load_run_dir` — a fast TREC run reader (vectorised
  over the whole file; ``.gz`` or plain) and a run-directory loader with the
  papers' "retrieved something for every topic" filter and a progress bar;
* :func:`downsample_qrels` — seeded, nested pool downsampling;
* :func:`seed_ir_datasets_home` — lay out local qrels/topics files where
  ``ir_datasets`` expects its downloads, so it works offline.
"""
from __future__ import annotations

import gzip
import io
import os
import pathlib
import re
import tarfile
import warnings
import zlib
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .io import InputError, read_trec_qrels, read_trec_run, to_qrels_dict
from .progress import progress_bar
from .readers.atomic import replacing
from .readers.fast_run import _parse_scores, build_run, columns_of_file, read_run  # noqa: F401  (_parse_scores: tests)
from .readers.text import decode, decompress, display_name, read_raw, short
from .readers.trec import GRADE_MAX, GRADE_MIN

__all__ = [
    "Collection",
    "COLLECTIONS",
    "PAPER_REDUCTION_PERCENTS",
    "collection",
    "binarize",
    "load_qrels",
    "load_topics",
    "read_topics",
    "read_run",
    "run_name",
    "run_names",
    "list_run_files",
    "load_run_dir",
    "complete_runs",
    "downsample_qrels",
    "seed_ir_datasets_home",
    "download_failure",
    "ir_datasets_download",
    "ir_datasets_unavailable",
]

PathLike = Union[str, os.PathLike]
Qrels = Dict[str, Dict[str, int]]
Run = Dict[str, Dict[str, float]]

#: Pool reduction rates R% of the MP paper (§5.1), after Buckley & Voorhees (2004).
PAPER_REDUCTION_PERCENTS = (90, 70, 50, 30, 10)


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
    ir_datasets_id: Optional[str]
    qrels_file: str
    topics_file: Optional[str]
    topic_range: Optional[Tuple[int, int]]
    runs_dir: Optional[str]
    graded: bool
    official_url: str
    official_topics_url: Optional[str] = None


COLLECTIONS: Dict[str, Collection] = {}


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
    """The :class:`Collection` called ``name`` (``trec7``, ``trec8``, ``trec10``, ``trec14``/``robust05``, ``robust04``, ``robust03``)."""
    try:
        return COLLECTIONS[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"Unknown collection {name!r}; known: {', '.join(sorted(COLLECTIONS))}") from None


def binarize(qrels: Mapping[str, Mapping[str, int]], rel: int = 1) -> Qrels:
    """Lenient binary mapping (paper §5.1): grade ``>= rel`` becomes 1, anything else 0.

    Every judgment is kept (a judged non-relevant document stays judged, which
    matters for bpref and for ``judged_only`` measures).  ``qrels`` may also be a
    qrels file path (or any form :func:`irmeasures_markov.io.to_qrels_dict` takes).
    """
    if not isinstance(qrels, Mapping):
        qrels = to_qrels_dict(qrels)
    return {q: {d: int(g >= rel) for d, g in docs.items()} for q, docs in qrels.items()}


def _data_dir(data_dir: Optional[PathLike]) -> Optional[pathlib.Path]:
    if data_dir is not None:
        return pathlib.Path(data_dir)
    from .testing import shared_data_dir
    return shared_data_dir()


def _short(e: BaseException, limit: int = 200) -> str:
    """One line of a nested exception: download errors from ir_datasets can run to whole tracebacks."""
    lines = str(e).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


#: exceptions (by class name, anywhere in a download error's chain) meaning that no connection could be made:
#: requests', urllib3's and urllib's names besides the builtin ConnectionError and socket.gaierror's subclasses
_NO_CONNECTION = {"ConnectionError", "NameResolutionError", "NewConnectionError", "MaxRetryError", "ConnectTimeout",
                  "ConnectTimeoutError", "gaierror", "URLError", "ProxyError"}


def _exception_chain(exc: BaseException) -> List[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, or holds in its arguments (ir_datasets'
    "All download sources failed" lists each mirror's error), outermost first."""
    chain: List[BaseException] = []
    todo = [exc]
    while todo and len(chain) < 100:
        e = todo.pop(0)
        if any(e is seen for seen in chain):
            continue
        chain.append(e)
        todo += [x for x in (e.__cause__ or e.__context__,) if x is not None] + list(_held(e.args))
    return chain


def _held(value, depth: int = 3):
    """The exceptions inside nested lists and tuples (a few levels deep)."""
    for item in value:
        if isinstance(item, BaseException):
            yield item
        elif depth and isinstance(item, (list, tuple)):
            yield from _held(item, depth - 1)


def download_failure(exc: BaseException) -> str:
    """Why ``ir_datasets`` could not provide a file, in one line (never a piece of a nested message).

    A chain holding a connection error (name resolution, refused or timed-out
    connection) reads "the download failed: this machine seems to be offline
    (ConnectionError)"; any other failure gives the first line of its
    innermost exception.
    """
    chain = _exception_chain(exc)
    offline = [type(e).__name__ for e in chain if type(e).__name__ in _NO_CONNECTION]
    if offline:
        return f"the download failed: this machine seems to be offline ({offline[0]})"
    return f"the download failed ({_short(chain[-1])})"


def ir_datasets_download(dataset, what: str = "qrels") -> Tuple[Optional[str], Optional[str]]:
    """``(path, url)``: where ``ir_datasets`` keeps the file behind a dataset's qrels (``what='qrels'``) or
    queries (``'queries'``), and where it downloads it from; None for what it does not say.

    Placing that file (as downloaded) at ``path`` lets ``ir_datasets`` work
    offline.  Read from ir_datasets' download objects, which are not a public
    interface: any other layout gives ``(None, None)``.
    """
    try:
        handler = getattr(dataset, f"{what}_handler")()
        node = getattr(handler, f"_{what}_dlc", None)
    except Exception:  # noqa: BLE001 - a dataset without that handler: nothing to say
        return None, None
    path = url = None
    for _ in range(8):  # a Cache or TarExtract wraps the Download that holds the URL
        if node is None:
            break
        for attr in ("_cache_path", "_path"):
            value = getattr(node, attr, None)
            if path is None and isinstance(value, (str, os.PathLike)):
                path = os.fspath(value)
        mirrors = getattr(node, "mirrors", None)
        if url is None and mirrors:
            url = getattr(mirrors[0], "url", None)
        node = getattr(node, "_streamer", None)
    return path, url if isinstance(url, str) else None


def ir_datasets_unavailable(dataset_id: str, what: str, exc: BaseException, dataset=None) -> str:
    """One line for a download by ``ir_datasets`` that failed: the dataset, why (offline or the error), and how to
    provide the file: a local file instead, or the downloaded file placed in ir_datasets' cache."""
    path, url = ir_datasets_download(dataset, "queries" if what == "topics" else what) if dataset is not None \
        else (None, None)
    kind = "TREC qrels file" if what == "qrels" else "TREC topics file"
    msg = f"{dataset_id}: ir_datasets could not provide the {what}: {download_failure(exc)}. Give a {kind} instead"
    if path is not None:
        msg += f", or put the file{f' downloaded from {url}' if url else ''} at {path} (ir_datasets' cache)"
    else:
        msg += ", or run once where the download works (ir_datasets caches it)"
    return msg


def _official_source(c: Collection, what: str) -> Optional[str]:
    return c.official_url if what == "qrels" else c.official_topics_url


def _missing_message(c: Collection, what: str, data_dir: Optional[pathlib.Path], reason: str,
                     cause: Optional[BaseException] = None) -> str:
    """What to do first, then why: the nested exception, if any, goes last and shortened."""
    from .testing import DATA_ENV
    rel = c.qrels_file if what == "qrels" else c.topics_file
    if rel is None:
        place = ""
    elif data_dir is not None:
        place = f" or place it at {pathlib.Path(data_dir) / rel}"
    else:
        # no data directory was found, so name the setting rather than a path that does not exist
        place = (f" or place it at ${DATA_ENV}/{rel} (set {DATA_ENV} to your data directory, "
                 "or pass data_dir='...')")
    kind = "TREC qrels file" if what == "qrels" else "TREC topics file"
    source = _official_source(c, what)
    msg = (f"cannot load the {what} of {c.name} ({reason}). To fix: pass path='...' (a {kind}){place}."
           + (f" Official file: {source}." if source else ""))
    if cause is not None:
        msg += f" [{download_failure(cause)}]"
    return msg


def _check_source(source: str):
    if source not in ("auto", "local", "ir_datasets"):
        raise ValueError(f"`source` must be 'auto', 'local' or 'ir_datasets', got {source!r}.")


def load_qrels(name: str, *, binary: bool = False, path: Optional[PathLike] = None,
               source: str = "auto", data_dir: Optional[PathLike] = None) -> Qrels:
    """Qrels ``{qid: {docid: grade}}`` of a named collection.

    Parameters
    ----------
    name : str
        A key of :data:`COLLECTIONS`, or any ``ir_datasets`` id with qrels.
    binary : bool
        Apply the lenient binary mapping (grade >= 1 -> 1) of :func:`binarize`.
    path : path, optional
        A local TREC qrels file (plain or ``.gz``); overrides everything else.
    source : {'auto', 'local', 'ir_datasets'}
        ``auto`` reads the collection's file from the data directory when it is
        there, else asks ``ir_datasets``; ``local``/``ir_datasets`` force one.
    data_dir : path, optional
        The data directory (default ``$IRMEASURES_MARKOV_DATA`` or ../shared/data).

    Raises
    ------
    FileNotFoundError
        Nothing could provide the qrels; the message names the file to supply.
    """
    _check_source(source)
    if path is not None:
        qrels = read_trec_qrels(path)
        return binarize(qrels) if binary else qrels
    c = COLLECTIONS.get(name.lower()) if isinstance(name, str) else None
    if c is None:
        if "/" not in str(name):
            raise ValueError(f"Unknown collection {name!r}; known: {', '.join(sorted(COLLECTIONS))} "
                             "(or give an ir_datasets id such as 'disks45/nocr/trec8').")
        qrels = _ir_datasets_qrels(str(name), None, None)
        return binarize(qrels) if binary else qrels
    ddir = _data_dir(data_dir)
    local = ddir / c.qrels_file if ddir is not None else None
    qrels = None
    if source in ("auto", "local") and local is not None and local.exists():
        qrels = read_trec_qrels(local)
    elif source == "local":
        raise FileNotFoundError(_missing_message(
            c, "qrels", ddir, f"{local} does not exist" if local is not None else "no data directory found"))
    else:
        if c.ir_datasets_id is None:
            raise FileNotFoundError(_missing_message(
                c, "qrels", ddir, "ir_datasets has no id for this collection"
                + (f" and {local} does not exist" if local is not None else "")))
        qrels = _ir_datasets_qrels(c.ir_datasets_id, c, ddir)
    return binarize(qrels) if binary else qrels


def _ir_datasets_qrels(dataset_id: str, c: Optional[Collection], ddir: Optional[pathlib.Path]) -> Qrels:
    def unavailable(reason: str, cause: Optional[BaseException] = None) -> FileNotFoundError:
        if c is not None:
            return FileNotFoundError(_missing_message(c, "qrels", ddir, reason, cause))
        return FileNotFoundError(f"cannot load the qrels of {dataset_id!r} ({reason}). To fix: pass path='...' "
                                 "(a TREC qrels file)." + (f" [{download_failure(cause)}]" if cause else ""))

    try:
        import ir_datasets
    except ImportError as e:  # pragma: no cover - ir_datasets is a dependency
        raise unavailable("ir_datasets is not installed: pip install ir_datasets") from e
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


def read_topics(path: PathLike, topic_range: Optional[Tuple[int, int]] = None) -> Dict[str, str]:
    """Titles ``{qid: title}`` from a TREC topics file (``<top> <num> <title> ...``)."""
    text = decode(decompress(read_raw(path), display_name(path)))
    topics: Dict[str, str] = {}
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


def load_topics(name: str, *, path: Optional[PathLike] = None, source: str = "auto",
                data_dir: Optional[PathLike] = None) -> Dict[str, str]:
    """Topic titles ``{qid: title}`` of a named collection (local topics file or ``ir_datasets``).

    Raises
    ------
    FileNotFoundError
        Nothing could provide the topics; the message names the file to supply.
    """
    _check_source(source)
    c = collection(name)
    if path is not None:
        return read_topics(path, c.topic_range)
    ddir = _data_dir(data_dir)
    local = ddir / c.topics_file if (ddir is not None and c.topics_file) else None
    if source in ("auto", "local") and local is not None and local.exists():
        return read_topics(local, c.topic_range)
    if source == "local" or c.ir_datasets_id is None:
        reason = (f"{local} does not exist" if local is not None
                  else "no data directory found" if ddir is None else "no local topics file")
        if c.ir_datasets_id is None:
            reason += " and ir_datasets has no id for this collection"
        raise FileNotFoundError(_missing_message(c, "topics", ddir, reason))
    try:
        import ir_datasets
    except ImportError as e:  # pragma: no cover - ir_datasets is a dependency
        raise FileNotFoundError(_missing_message(c, "topics", ddir, "ir_datasets is not installed")) from e
    try:
        return {q.query_id: getattr(q, "title", "") for q in ir_datasets.load(c.ir_datasets_id).queries_iter()}
    except Exception as e:  # download failures come as many exception types
        raise FileNotFoundError(_missing_message(c, "topics", ddir, "ir_datasets could not download them",
                                                 e)) from e


# ---------------------------------------------------------------------------
# Fast run reading
# ---------------------------------------------------------------------------

#: Suffixes :func:`run_name` drops, compression first, then the usual run-file extensions (any letter case).
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
RUN_FILE_SUFFIXES = (".run", ".txt", ".trec", ".res")


def _without_suffix(name: str, suffixes: Sequence[str]) -> str:
    low = name.lower()
    for suffix in suffixes:
        if low.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return name


def run_name(path: PathLike) -> str:
    """Run name from a file name: the file name without a compression suffix (``.gz``, ``.bz2``, ``.xz``,
    ``.zst``), then without a run-file suffix (``.run``, ``.txt``, ``.trec``, ``.res``), then without TREC's
    ``input.`` prefix: ``input.NAME.gz`` -> ``NAME``, ``bm25.run`` -> ``bm25``, ``runs/dph.res.bz2`` -> ``dph``.
    """
    base = os.path.basename(os.fspath(path))
    base = _without_suffix(_without_suffix(base, COMPRESSION_SUFFIXES), RUN_FILE_SUFFIXES)
    if base.startswith("input.") and len(base) > len("input."):
        base = base[len("input."):]
    return base


def run_names(paths: Sequence[PathLike]) -> List[str]:
    """:func:`run_name` of every path; :class:`InputError` naming both files when two give one name."""
    names = [run_name(p) for p in paths]
    seen: Dict[str, PathLike] = {}
    for name, path in zip(names, paths):
        if name in seen:
            raise InputError(f"{os.fspath(path)}: gives the run name {name!r}, as {os.fspath(seen[name])} does; "
                             "give runs distinct file names")
        seen[name] = path
    return names


def list_run_files(directory: PathLike, pattern: Optional[str] = None) -> List[str]:
    """Run files in ``directory``: ``input.*`` (TREC's naming) if any exist, else every regular file.

    Hidden files are ignored; ``pattern`` (a glob) overrides the choice.
    """
    import glob
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"run directory {directory!r} does not exist")
    if pattern is not None:
        files = glob.glob(os.path.join(directory, pattern))
    else:
        files = glob.glob(os.path.join(directory, "input.*"))
        if not files:
            files = [os.path.join(directory, f) for f in os.listdir(directory) if not f.startswith(".")]
    files = sorted(f for f in files if os.path.isfile(f))
    if not files:
        raise FileNotFoundError(f"no run files in {directory!r}" + (f" matching {pattern!r}" if pattern else ""))
    run_names(files)  # two files giving one name (input.X and input.X.gz, X.run and X.txt) are an error
    return files


def complete_runs(runs: Mapping[str, Mapping[str, Mapping[str, float]]],
                  topics: Iterable[str]) -> Tuple[Dict[str, Run], List[str]]:
    """Split runs into those that retrieved at least one document for every topic, and the others.

    Returns ``(kept, dropped_names)``; this is the papers' run-selection rule.
    """
    topics = [str(t) for t in topics]
    kept, dropped = {}, []
    for name, run in runs.items():
        if all(len(run.get(t, ())) > 0 for t in topics):
            kept[name] = run
        else:
            dropped.append(name)
    return kept, dropped


def _default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def load_run_dir(directory: PathLike, *, topics: Optional[Iterable[str]] = None, pattern: Optional[str] = None,
                 progress: Optional[bool] = None, n_jobs: Optional[int] = None) -> Dict[str, Run]:
    """Load every run of a TREC run directory: ``{run_name: {qid: {docid: score}}}``.

    Parameters
    ----------
    directory : path
        A directory of run files (``input.NAME`` or ``input.NAME.gz``, TREC's
        naming; any file names otherwise).  Names come from :func:`run_name`.
    topics : iterable of str, optional
        When given (e.g. the qrels' topic ids), keep only runs that retrieved at
        least one document for every topic (paper §5.1); dropped runs are named
        in a ``RuntimeWarning``.
    pattern : str, optional
        Glob selecting the files (default ``input.*``, else every file).
    progress : bool or None
        A progress bar on standard error: ``None`` (default) only when it is a
        terminal, ``True`` always, ``False`` never.
    n_jobs : int, optional
        Worker processes that read, decompress and tokenise files while this
        process builds the dictionaries (default ``min(2, cpu_count)``; 1 reads
        everything in this process).

    The result equals reading each file with :func:`irmeasures_markov.io.read_trec_run`
    (same dictionaries, same order, same errors).
    """
    files = list_run_files(directory, pattern)
    n_jobs = _default_jobs() if n_jobs is None else int(n_jobs)
    if n_jobs < 1:
        raise ValueError(f"`n_jobs` must be a positive integer, got {n_jobs!r}.")
    runs: Dict[str, Run] = {}
    bar = progress_bar(None, progress, total=len(files), unit="run",
                       desc=f"runs {os.path.basename(os.fspath(directory).rstrip('/'))}")

    def add(path, cols):
        run = build_run(cols) if cols is not None else None
        runs[run_name(path)] = run if run is not None else read_trec_run(path)
        bar.update(1)

    try:
        if n_jobs == 1 or len(files) < 4:
            for f in files:
                runs[run_name(f)] = read_run(f)
                bar.update(1)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx) as pool:
                for f, cols in zip(files, pool.map(columns_of_file, files, chunksize=1)):
                    add(f, cols)
    finally:
        bar.close()
    if topics is not None:
        runs, dropped = complete_runs(runs, topics)
        if dropped:
            warnings.warn(f"{len(dropped)} run(s) did not retrieve a document for every topic and were "
                          f"dropped: {', '.join(dropped)}", RuntimeWarning, stacklevel=2)
    return runs


# ---------------------------------------------------------------------------
# Pool downsampling
# ---------------------------------------------------------------------------

def _topic_rng(seed: int, qid: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(qid).encode("utf-8"))])


def _keep_count(n: int, percent: float, minimum: int) -> int:
    k = int(np.floor(n * percent / 100.0 + 0.5))
    return min(n, max(minimum, k))


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
    and results do not depend on the order of the qrels.  ``qrels`` may also be a
    qrels file path (or any form :func:`irmeasures_markov.io.to_qrels_dict` takes).
    """
    if not isinstance(qrels, Mapping):
        qrels = to_qrels_dict(qrels)
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not (0 < percent <= 100):
        raise ValueError(f"`percent` must be in (0, 100], got {percent!r} "
                         "(the paper's rates are 90, 70, 50, 30, 10).")
    if min_relevant < 0 or min_nonrelevant < 0:
        raise ValueError("`min_relevant` and `min_nonrelevant` must be non-negative.")
    out: Qrels = {}
    for qid, docs in qrels.items():
        items = sorted(docs.items())
        relevant = [d for d, g in items if g >= rel]
        nonrel = [d for d, g in items if g < rel]
        rng = _topic_rng(seed, qid)
        perm_r = rng.permutation(len(relevant))
        perm_n = rng.permutation(len(nonrel))
        keep = [relevant[i] for i in perm_r[:_keep_count(len(relevant), percent, min_relevant)]]
        keep += [nonrel[i] for i in perm_n[:_keep_count(len(nonrel), percent, min_nonrelevant)]]
        out[qid] = {d: docs[d] for d in sorted(keep)}
    return out


# ---------------------------------------------------------------------------
# ir_datasets offline cache
# ---------------------------------------------------------------------------

def _gz_text(path: pathlib.Path) -> bytes:
    return decompress(read_raw(path), display_name(path))


def _write_tar(dest: pathlib.Path, members: Sequence[Tuple[str, bytes]]):
    with replacing(dest) as tmp, tarfile.open(tmp, "w:gz") as tar:
        for name, payload in members:
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))


def _write(dest: pathlib.Path, payload: bytes):
    with replacing(dest) as tmp:
        tmp.write_bytes(payload)


def seed_ir_datasets_home(home: PathLike, data_dir: Optional[PathLike] = None,
                          names: Sequence[str] = ("trec7", "trec8", "robust04", "trec14")) -> pathlib.Path:
    """Place local qrels (and topics) where ``ir_datasets`` caches its downloads.

    ``ir_datasets`` does not re-check files already at their cache path, so after
    this, with ``IR_DATASETS_HOME=home`` set *before* ``ir_datasets`` is imported,
    ``ir_datasets.load('disks45/nocr/trec8').qrels_iter()`` works offline.
    Returns ``home``.
    """
    ddir = _data_dir(data_dir)
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
