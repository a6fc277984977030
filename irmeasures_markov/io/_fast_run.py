"""The whole-file tokeniser of TREC runs: a run file's bytes to compact columns at once, with numpy or numba.

The grammar is the line reader's (:mod:`irmeasures_markov.io`): every line
holds 0 or 6 fields separated by ASCII whitespace, lines end at LF.  The
vectorised tokeniser checks that rule on the bytes and answers None whenever
the file breaks a rule (or a fast path does not apply);
:func:`irmeasures_markov.io._trec.read_trec_run` then reads the file line by
line, so the dictionaries and the error messages are the line reader's.
"""
from __future__ import annotations

import warnings

import numpy as np

from irmeasures_markov._util._compiled import numba_loaded, optional_kernels
from irmeasures_markov.io._text import decode
from irmeasures_markov.io._tokens import token_bounds

__all__ = ["Columns", "run_columns", "build_run", "ENGINES", "COMPILED_AFTER"]

Run = dict[str, dict[str, float]]
#: ``(qids, bounds, docids_joined, scores)``: see :func:`run_columns`
Columns = tuple[list[str], list[int], str, np.ndarray]

_LF = 10
#: tokenising engines: 'numba' scans the bytes in one compiled pass (numba installed; numpy without it),
#: 'numpy' in whole-array passes; 'auto' takes numba once it is loaded in the process, or once COMPILED_AFTER
#: bytes have been tokenised (it is then loaded).  The columns are the same.
ENGINES = ("auto", "numba", "numpy")
#: importing numba and loading the compiled scan costs a fixed time once per process (about what the numpy
#: path spends on this many bytes): one run file never pays it, a directory of runs does once
COMPILED_AFTER = 64_000_000
_KERNELS = []  # the compiled kernels' module, or None without numba; loaded on first use
_TOKENISED = [0]  # bytes tokenised so far by the numpy engine in this process


def _compiled_kernels():
    return optional_kernels(_KERNELS, "irmeasures_markov.io._run_scan_numba")


def _engine_kernels(engine: str, size: int):
    """The compiled kernels' module when ``engine`` (see :data:`ENGINES`) picks numba for ``size`` bytes, else None."""
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}.")
    if engine == "numpy":
        return None
    if engine == "auto" and not _KERNELS:
        _TOKENISED[0] += size
        if not _numba_loaded() and _TOKENISED[0] < COMPILED_AFTER:
            return None
    return _compiled_kernels()


def _numba_loaded() -> bool:
    return numba_loaded()


def _parse_scores(text: str, n: int) -> np.ndarray | None:
    """The ``n`` newline-separated scores of ``text`` as float64, exactly as ``float()`` reads them.

    numpy reads text numbers with ``PyOS_string_to_double``, the parser behind
    ``float(str)``, in one C pass; a token it does not take whole (``float``
    also accepts underscores) sends the text through ``float`` itself.  None
    when a token is not a number at all.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # numpy only warns when it stops before the end
        try:
            scores = np.fromstring(text, dtype=np.float64, sep="\n")
        except (ValueError, DeprecationWarning):
            scores = None
    if scores is not None and scores.size == n:
        return scores
    try:
        return np.array(list(map(float, text.split("\n"))), dtype=np.float64)
    except ValueError:
        return None


def _joined(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> bytes:
    """The tokens ``buf[start[i]:end[i]]`` joined by newlines, gathered in one numpy pass.

    Unlike :func:`~irmeasures_markov.io._tokens.joined_tokens` the tokens may come in any order (a query's
    records gathered from several places of the file).
    """
    slot = end - start + 1                      # each token and the newline after it
    slot_end = np.cumsum(slot)
    src = np.repeat(start - (slot_end - slot), slot) + np.arange(int(slot_end[-1]))
    out = buf[np.minimum(src, buf.size - 1)]
    out[slot_end - 1] = _LF
    return out[:-1].tobytes()


def run_columns(data: bytes, engine: str = "auto") -> Columns | None:
    """Tokenise a whole run file (decompressed, BOM removed) into compact columns, or None.

    Returns ``(qids, bounds, docids_joined, scores)``: query ``qids[k]`` owns
    records ``bounds[k]:bounds[k+1]``; the docids are joined by newlines (one
    string is cheap to hand between processes) and the scores are a float64
    array.  None means "use the line reader", which also produces the exact
    error message for a malformed file.  Only the docids and scores become
    Python objects; qids longer than 64 bytes or a NUL byte send the file
    through :func:`_columns_by_split`.

    Parameters
    ----------
    data : bytes
        The file's content, decompressed, BOM removed.
    engine : str
        One of :data:`ENGINES` (the answer does not depend on it).

    Returns
    -------
    tuple or None
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        return [], [0], "", np.zeros(0)
    kernels = _engine_kernels(engine, buf.size)
    if kernels is not None:
        return _compiled_columns(buf, kernels)
    bounds = token_bounds(buf, 6)
    if bounds is None:
        return None
    start, end = bounds
    n = start.shape[0]
    if n == 0:
        return [], [0], "", np.zeros(0)
    width = int((end[:, 0] - start[:, 0]).max())
    if width > 64 or not buf.all():
        return _columns_by_split(data)
    # qids as fixed-width byte strings (NUL-padded; no NUL in the file) to find the segments
    at = start[:, :1] + np.arange(width)
    qid_bytes = np.where(at < end[:, :1], buf[np.minimum(at, buf.size - 1)], 0).astype(np.uint8)
    qids = np.ascontiguousarray(qid_bytes).view(f"S{width}").ravel()
    first = np.flatnonzero(np.concatenate(([True], qids[1:] != qids[:-1])))
    if np.unique(qids[first]).size != first.size:
        # a query in several pieces: group records by query, first-seen order, file order within a query
        _, first_seen, group = np.unique(qids, return_index=True, return_inverse=True)
        rank = np.empty(first_seen.size, dtype=np.int64)
        rank[np.argsort(first_seen, kind="stable")] = np.arange(first_seen.size)
        perm = np.argsort(rank[group.ravel()], kind="stable")
        start, end, qids = start[perm], end[perm], qids[perm]
        first = np.flatnonzero(np.concatenate(([True], qids[1:] != qids[:-1])))
    score_bytes = _joined(buf, start[:, 4], end[:, 4])
    if not score_bytes.isascii():
        return None   # scores are ASCII numbers: the line reader names the bad one
    scores = _parse_scores(score_bytes.decode("ascii"), n)
    if scores is None or not np.isfinite(scores).all():
        return None
    order = [decode(q) for q in qids[first].tolist()]
    return order, first.tolist() + [n], decode(_joined(buf, start[:, 2], end[:, 2])), scores


def _compiled_columns(buf: np.ndarray, kernels) -> Columns | None:
    """:func:`run_columns` with the compiled kernels of :mod:`._run_scan_numba`."""
    bounds, n = kernels.scan(buf)
    if n <= 0:
        return ([], [0], "", np.zeros(0)) if n == 0 else None
    bounds = bounds[:, :n]
    q_start, q_end = bounds[0], bounds[1]
    first = kernels.segments(buf, q_start, q_end)
    seg_qids = [decode(buf[a:b].tobytes()) for a, b in zip(q_start[first].tolist(), q_end[first].tolist())]
    if len(set(seg_qids)) != len(seg_qids):
        # a query in several pieces: group records by query, first-seen order, file order within a query
        rank: dict[str, int] = {}
        seg_rank = np.array([rank.setdefault(q, len(rank)) for q in seg_qids], dtype=np.int64)
        lengths = np.diff(np.append(first, n))
        perm = np.argsort(np.repeat(seg_rank, lengths), kind="stable")
        bounds = bounds[:, perm]
        q_start, q_end = bounds[0], bounds[1]
        first = kernels.segments(buf, q_start, q_end)
        seg_qids = list(rank)
    scores, slow = kernels.parse_scores(buf, bounds[4], bounds[5])
    if slow.size:
        # the forms the compiled parser leaves to float() (e.g. 17 significant digits): parsed as the numpy
        # engine parses every score, in one call
        text = kernels.joined(buf, bounds[4][slow], bounds[5][slow]).tobytes()
        if not text.isascii() or b"\0" in text:
            return None   # scores are ASCII numbers: the line reader names the bad one
        parsed = _parse_scores(text.decode("ascii"), slow.size)
        if parsed is None:
            return None
        scores[slow] = parsed
    if not np.isfinite(scores).all():
        return None
    docids = decode(kernels.joined(buf, bounds[2], bounds[3]).tobytes())
    return seg_qids, first.tolist() + [n], docids, scores


def _columns_by_split(data: bytes):
    """:func:`run_columns` for a file whose lines all hold 0 or 6 fields, tokenised with ``bytes.split``."""
    tok = data.split()
    n = len(tok) // 6
    try:
        scores = np.array(list(map(float, tok[4::6])), dtype=np.float64)
    except ValueError:
        return None
    if not np.isfinite(scores).all():
        return None
    qids = [decode(q) for q in tok[0::6]]
    docids = decode(b"\n".join(tok[2::6]))
    del tok
    # query segments: a sample proposes the order of distinct qids; the counts verify it
    order = list(dict.fromkeys(qids[::64]))
    if order[0] != qids[0]:
        order.insert(0, qids[0])
    bounds = [0]
    start = 0
    for k, q in enumerate(order):
        try:
            end = qids.index(order[k + 1], start) if k + 1 < len(order) else n
        except ValueError:
            end = -1
        if end < start or qids[start:end].count(q) != end - start:
            order = None
            break
        bounds.append(end)
        start = end
    if order is None:
        order = list(dict.fromkeys(qids))
        # unsorted or short segments: sort records by query, keeping file order within a query
        rank = {q: i for i, q in enumerate(order)}
        key = np.fromiter((rank[q] for q in qids), dtype=np.int64, count=n)
        perm = np.argsort(key, kind="stable")
        doc_list = docids.split("\n")
        docids = "\n".join([doc_list[i] for i in perm.tolist()])
        scores = scores[perm]
        counts = np.bincount(key, minlength=len(order))
        bounds = [0] + np.cumsum(counts).tolist()
    return order, bounds, docids, scores


def build_run(cols: Columns) -> Run | None:
    """``{qid: {docid: score}}`` from :func:`run_columns`' columns, or None when a query lists a document twice.

    Parameters
    ----------
    cols : tuple
        :func:`run_columns`' answer.

    Returns
    -------
    dict or None
    """
    qids, bounds, docids, scores = cols
    if not qids:
        return {}
    doc_list = docids.split("\n")
    score_list = scores.tolist()
    run: Run = {}
    for k, q in enumerate(qids):
        a, b = bounds[k], bounds[k + 1]
        docs = dict(zip(doc_list[a:b], score_list[a:b]))
        if len(docs) != b - a:
            return None  # a document listed twice: let the exact reader report it
        run[q] = docs
    return run
