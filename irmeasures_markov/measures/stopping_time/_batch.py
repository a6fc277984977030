"""P@H of every query of a run at once (the plugin path): queries stacked as uncoupled chains.

The expectation kernels on stacked chains here serve the single-ranking model too (one chain).
"""
from __future__ import annotations

import math

import numpy as np

from irmeasures_markov._util._segments import expand_ranges, query_blocks, segment_cumsum, segment_sum
from irmeasures_markov.core._birth_death import birth_death_discounted_visits, uncoupled_blocks
from irmeasures_markov.core._birth_death_order1 import (
    average_reward_groups,
    average_reward_starts,
    birth_death_average_reward,
)
from irmeasures_markov.core._gains import grade_gains
from irmeasures_markov.measures.stopping_time._params import Prob, model_params_iv, tail_constants
from irmeasures_markov.ranking._prepared import RelevanceBatch

__all__ = ["batch_transitions", "pad_batch", "path_at_h_batch", "user_forward", "apply_boundaries", "GROUP_RANKS",
           "gain_and_steps_flat", "order1_flat"]

#: ranks per call of the visit-count formula (its LAPACK path holds ~15 arrays of this size)
GROUP_RANKS = 1 << 17


def batch_transitions(batch: RelevanceBatch, *, browse: str | None = None, p: Prob = 0.8, q: Prob = 0.0,
                      p_rel: Prob | None = None, q_rel: Prob | None = None, user: str | None = None, top: str = "stop",
                      tail: str = "none", gain: str = "binary", b: float = 2.0, g_max: int | None = None) -> tuple:
    """Flat (forward, backward, gain, tail) arrays of every query of a RelevanceBatch.

    Parameters
    ----------
    batch : RelevanceBatch
        the rankings of the queries.
    browse : {'DFBM', 'SFBM', 'RWBM'}, optional
        browsing model (see [`browsing_model`][irmeasures_markov.browsing_model]).
    p : float, array or callable
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given).
    q : float, array or callable
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given).
    p_rel : float, optional
        forward / backward probabilities at relevant documents.
    q_rel : float, optional
        forward / backward probabilities at relevant documents.
    user : {'P', 'AP', 'RBP', 'DCG', 'ERR'}, optional
        a classical instantiation (sets the forward probabilities).
    top : {'stop', 'forward'}
        where backward mass at rank 1 goes.
    tail : {'none', 'inf'}
        'inf' adds an endless tail of non-relevant documents.
    gain : {'binary', 'grade', 'exp2'}
        gain of a relevant document.
    b : float
        log base of DCG (user='DCG').
    g_max : int or array_like of int, optional
        maximum grade of ERR's stop probabilities (per query; default 1).

    Returns
    -------
    tuple
        ``(forward, backward, gain, tail)``: flat float arrays over every document of the batch, and ``tail`` the ``(p,
        q)`` of the endless tail or None.
    """
    offsets = batch.offsets
    lengths = np.diff(offsets)
    relevant, grades = batch.relevant, batch.grades
    gain_vals = grade_gains(grades, batch.rel, gain)
    n = grades.size
    starts, lasts = offsets[:-1][lengths > 0], offsets[1:][lengths > 0] - 1
    bwd = np.zeros(n)
    if user is not None:
        err_top = None
        if user == "ERR":
            gm = np.ones(lengths.size) if g_max is None else np.asarray(g_max, dtype=np.float64)
            err_top = np.exp2(np.repeat(np.maximum(gm, 1.0), lengths))
            gain_vals = np.zeros(n)
            gain_vals[starts] = 1.0
        fwd = user_forward(user, relevant, grades, batch.ranks, offsets, p, b, err_top)
    elif browse == "DFBM":
        fwd = np.ones(n)
    else:
        # float64 scalars: np.where then returns float64 without a second copy
        fwd = np.where(relevant, np.float64(p if p_rel is None else p_rel), np.float64(p))
        bwd = np.where(relevant, np.float64(q if q_rel is None else q_rel), np.float64(q))
    # a user model has no backward move and no top rule, and only RBP an endless tail
    tail_pq = apply_boundaries(fwd, bwd, starts, lasts, top if user is None else "stop",
                               tail if user in (None, "RBP") else "none", p, 0.0 if user else q)
    return fwd, bwd, gain_vals, tail_pq


def apply_boundaries(fwd: np.ndarray, bwd: np.ndarray, starts: np.ndarray, lasts: np.ndarray, top: str, tail: str,
                     p: float, q: float) -> tuple[float, float] | None:
    """The boundary rules, in place at the rankings' first and last ranks; the endless tail's ``(p, q)`` or None.

    Backward mass at rank 1 stops, or goes forward with ``top='forward'``; forward mass at rank N stops unless
    ``tail='inf'`` continues the ranking (docs/stopping-time.md).  The one rule of the single and the batch path.
    """
    if top == "forward":
        fwd[starts] = np.minimum(1.0, fwd[starts] + bwd[starts])
    bwd[starts] = 0.0
    if tail == "inf":
        return float(p), float(q)
    fwd[lasts] = 0.0
    return None


def user_forward(user: str, relevant: np.ndarray, grades: np.ndarray, ranks: np.ndarray, offsets: np.ndarray,
                 p: float, b: float, err_top: np.ndarray | float | None) -> np.ndarray:
    """Forward probability of a classical ``user`` at every flat position (rankings at ``offsets``), before
    the last rank's is set; ``err_top`` is ERR's 2^g_max.  The one rule of the single and the batch path."""
    n = relevant.size
    if user == "RBP":
        return np.full(n, float(p))
    if user == "AP":
        # stop at a relevant document with probability 1 / (relevant retrieved still ahead)
        # relevant ranks at and after each rank of its ranking (integer sums: exact)
        fwd = (np.repeat(segment_sum(relevant, offsets), np.diff(offsets)) - segment_cumsum(relevant, offsets)
               + relevant).astype(np.float64)
        np.maximum(fwd, 1.0, out=fwd)
        np.divide(-1.0, fwd, out=fwd)
        fwd += 1.0
        fwd[~relevant] = 1.0
        return fwd
    if user == "DCG":
        ranks = ranks.astype(np.float64)
        return np.maximum(1.0, np.log(ranks) / math.log(b)) / np.maximum(1.0, np.log(ranks + 1) / math.log(b))
    if user == "ERR":
        return 1.0 - (np.exp2(np.where(relevant, grades, 0).astype(np.float64)) - 1.0) / err_top
    return np.ones(n)   # P


def _segment_cumprod_shift(values, offsets):
    """Per segment: [1, v0, v0 v1, ...] (survival to each rank).

    The same sequential products as ``np.cumprod`` per segment; with many
    short segments they are formed rank by rank across all segments at once.
    """
    out = np.empty(values.shape, dtype=np.float64)
    lengths = np.diff(offsets)
    if lengths.size == 0:
        return out
    longest = int(lengths.max())
    if lengths.size <= longest:
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            if b > a:
                out[a] = 1.0
                if b - a > 1:
                    np.cumprod(values[a:b - 1], out=out[a + 1:b])
        return out
    order = np.argsort(-lengths, kind="stable")          # longest first: rank k is a prefix of them
    heads = offsets[:-1][order]
    alive = np.searchsorted(-lengths[order], -np.arange(1, longest + 1), side="right")
    out[heads[:alive[0]]] = 1.0
    for k in range(1, longest):
        at = heads[:alive[k]] + k
        out[at] = out[at - 1] * values[at - 1]
    return out


def pad_batch(batch: RelevanceBatch, length: int) -> RelevanceBatch:
    """``batch`` with every ranking shorter than ``length`` completed with non-relevant documents.

    The padding documents have grade ``min(0, rel - 1)`` (below ``rel``, so not
    relevant and without gain); rankings of ``length`` or more are unchanged.

    Parameters
    ----------
    batch : RelevanceBatch
        the rankings of the queries.
    length : int
        the minimum ranking length (positive).

    Returns
    -------
    RelevanceBatch
        the padded batch (``batch`` itself when no ranking is shorter).

    Raises
    ------
    ValueError
        If ``length`` is not a positive integer.
    """
    _check_pad_length(length)
    lengths = np.diff(batch.offsets)
    if not np.any(lengths < length):
        return batch
    new_lengths = np.maximum(lengths, int(length))
    offsets = np.concatenate([[0], np.cumsum(new_lengths)]).astype(batch.offsets.dtype)
    # position of every original document in the padded arrays
    keep = np.arange(batch.offsets[-1]) + np.repeat(offsets[:-1] - batch.offsets[:-1], lengths)
    grades = np.full(offsets[-1], min(0, batch.rel - 1), dtype=batch.grades.dtype)
    grades[keep] = batch.grades
    relevant = np.zeros(offsets[-1], dtype=bool)
    relevant[keep] = batch.relevant
    return RelevanceBatch(list(batch.qids), offsets, grades, relevant, batch.recall_base, batch.rel,
                          judgments=batch.judgments)


def path_at_h_batch(batch: RelevanceBatch, *, browse: str | None = None, p: Prob = 0.8, q: Prob = 0.0,
                    p_rel: Prob | None = None, q_rel: Prob | None = None, user: str | None = None, loss: float = 0.0,
                    f: str | None = None, order: int | None = None, top: str = "stop", tail: str = "none",
                    gain: str = "binary", b: float = 2.0, g_max: int | None = None,
                    pad_to: int | None = None) -> np.ndarray:
    """P@H of every query of a [`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch] (plugin path).

    Same methods as [`BrowsingModel`][irmeasures_markov.BrowsingModel] (exact throughout): forward models in closed
    form; with backward moves the
    queries are stacked into one chain of uncoupled blocks, so order 2 (visit-count formula) takes one tridiagonal
    solve, plus two ``?pttrf`` with loss, per group of queries, and order 1 (generating-function integral) cuts every
    ranking where the walk is no longer reached and solves all its nodes in one stacked call (queries with identical
    chains once).  Queries with no relevant document (RB = 0) or an empty ranking score 0.

    ``pad_to=k`` first completes every ranking shorter than k with non-relevant documents
    ([`pad_batch`][irmeasures_markov.measures.stopping_time.pad_batch]): the user
    then browses k documents, as trec_eval's P@k divides by k.  ``None`` (the default) browses the ranking as retrieved,
    so a DFBM user reads N documents (the paper's H = N).

    Memory: with numbers for the probabilities the queries go in blocks, so the temporaries (a handful of arrays of 8
    bytes per document, and the ranks) do not grow with the run: forward models (no backward move, no endless tail; the
    default included) in blocks of about `BLOCK_DOCS` retrieved documents (padded per block), order 2 (and f = 1)
    with backward moves or the tail in the groups of ``GROUP_RANKS`` ranks its solves use anyway (unless padded).  The
    values are those of one pass over all queries, bit for bit: every quantity is formed per query (the running sums of
    integer gains are exact), and the method (closed form or solves) is chosen for the whole run.  Order 1 with backward
    moves integrates groups of about ``ORDER1_GROUP_STATES`` kept states with one quadrature rule each; the groups are
    those of one pass, found by a first pass over blocks of queries, and each group reads its queries' transitions when
    it is integrated (`_order1_in_blocks`).  Padded order 2 with backward moves takes the run at once.

    Parameters
    ----------
    batch : RelevanceBatch
        the rankings of the queries.
    browse : {'DFBM', 'SFBM', 'RWBM'}, optional
        browsing model (see [`browsing_model`][irmeasures_markov.browsing_model]).
    p : float, array or callable
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given).
    q : float, array or callable
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given).
    p_rel : float, optional
        forward / backward probabilities at relevant documents.
    q_rel : float, optional
        forward / backward probabilities at relevant documents.
    user : {'P', 'AP', 'RBP', 'DCG', 'ERR'}, optional
        a classical instantiation; fixes browse, f and order.
    loss : float
        utility loss λ in [0, 1] per revisit.
    f : {'h', '1'}, optional
        normalisation f(H) (default 'h').
    order : {1, 2}, optional
        order of the expectation (default 2; with ``user``, the user model's order).
    top : {'stop', 'forward'}
        where backward mass at rank 1 goes.
    tail : {'none', 'inf'}
        'inf' adds an endless tail of non-relevant documents.
    gain : {'binary', 'grade', 'exp2'}
        gain of a relevant document: 1, its grade, or 2^grade - 1.
    b : float
        log base of DCG (user='DCG').
    g_max : int or array_like of int, optional
        maximum grade of ERR's stop probabilities.
    pad_to : int, optional
        complete every shorter ranking to this length (see
        [`pad_batch`][irmeasures_markov.measures.stopping_time.pad_batch]).

    Returns
    -------
    numpy.ndarray
        P@H of each query, in the order of ``batch.qids``.
    """
    params = model_params_iv(browse=browse, p=p, q=q, p_rel=p_rel, q_rel=q_rel, user=user, loss=loss, f=f,
                              order=order, top=top, tail=tail, gain=gain, b=b)
    if pad_to is not None:
        _check_pad_length(pad_to)
    # the keywords of batch_transitions
    kw = dict(browse=params["browse"], p=p, q=q, p_rel=p_rel, q_rel=q_rel, user=params["user"], top=top, tail=tail,
              gain=gain, b=params["b"])
    offsets = batch.offsets
    if offsets.size < 2 or offsets[-1] <= BLOCK_DOCS or not _scalar_probabilities(p, q, p_rel, q_rel):
        return _path_at_h_block(batch, params, kw, g_max, pad_to)
    if _forward_only(params, q, q_rel):
        block, backward = BLOCK_DOCS, False
    elif pad_to is None and (params["order"] == 2 or params["f"] == "1"):
        # the visit-count solves already go in groups of GROUP_RANKS ranks by the queries' first
        # rank; blocks formed by the same rule hand them exactly the same groups (padding would
        # move the first ranks).  Whether the run has backward moves at all, which selects the
        # method, is decided for the whole run.
        backward = params["tail"] != "none" or _has_backward(batch, q, q_rel)
        block = GROUP_RANKS if backward else BLOCK_DOCS
    elif params["order"] == 1:
        # order 1 (f = h): the quadrature's groups of states are the run's; see _order1_in_blocks
        return _order1_in_blocks(batch, params, kw, g_max, pad_to)
    else:
        # padded order 2 with backward moves: padding would move the solves' groups; keep the run together
        return _path_at_h_block(batch, params, kw, g_max, pad_to)
    return _in_blocks(batch, params, kw, g_max, pad_to, block, backward)


def _in_blocks(batch, params, kw, g_max, pad_to, block, backward):
    """`_path_at_h_block` on blocks of about ``block`` documents, with the run's choice of ``backward``."""
    out = np.zeros(batch.offsets.size - 1)
    for a, b in query_blocks(batch.offsets, block):
        out[a:b] = _path_at_h_block(_sub_batch(batch, a, b), params, kw,
                                    None if g_max is None else np.asarray(g_max)[a:b], pad_to, backward)
    return out


#: documents per block of the forward (closed-form) batch path; its temporaries are a few
#: float64 arrays of this size instead of the run's
BLOCK_DOCS = 1 << 17


def _check_pad_length(length):
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"`length` must be a positive integer, got {length!r}.")


def _scalar_probabilities(*probs) -> bool:
    """Blocks need numbers: array or callable probabilities are per flat position (not sliced)."""
    return all(v is None or (not callable(v) and np.ndim(v) == 0) for v in probs)


def _forward_only(params, q, q_rel) -> bool:
    """Whether the model (scalar probabilities) can have no backward move and no endless tail."""
    if params["user"] is not None:
        return not (params["user"] == "RBP" and params["tail"] == "inf")
    if params["tail"] != "none":
        return False
    return params["browse"] != "RWBM" or (q == 0 and (q_rel is None or q_rel == 0))


def _has_backward(batch, q, q_rel) -> bool:
    """Whether [`batch_transitions`][irmeasures_markov.measures.stopping_time.batch_transitions] gives a backward
    probability > 0 anywhere in ``batch``
    (RWBM, scalar q and q_rel): at every rank but a query's first, q_rel where relevant, q elsewhere."""
    q_rel = q if q_rel is None else q_rel
    lengths = np.diff(batch.offsets)
    if q > 0 and q_rel > 0:
        return bool(np.any(lengths >= 2))
    if q == 0 and q_rel == 0:
        return False
    heads = batch.offsets[:-1][lengths > 0]
    relevant_heads = int(np.count_nonzero(batch.relevant[heads]))
    relevant = int(np.count_nonzero(batch.relevant))
    if q_rel > 0:
        return relevant > relevant_heads
    return int(batch.offsets[-1]) - relevant > heads.size - relevant_heads


def _sub_batch(batch, a, b):
    """Queries ``a:b`` of ``batch`` as a batch of their own (views of its arrays)."""
    lo, hi = int(batch.offsets[a]), int(batch.offsets[b])
    return RelevanceBatch(batch.qids[a:b], batch.offsets[a:b + 1] - lo, batch.grades[lo:hi],
                          batch.relevant[lo:hi], batch.recall_base[a:b], batch.rel, judgments=batch.judgments)


def _path_at_h_block(batch, params, kw, g_max, pad_to, backward=None):
    """[`path_at_h_batch`][irmeasures_markov.measures.stopping_time.path_at_h_batch] on validated parameters, all of
    ``batch``'s queries at once.

    ``backward`` (None: from this batch's transitions) selects the closed form (False) or the
    chain solves (True); blocks of a run are given the run's choice."""
    if pad_to is not None:
        batch = pad_batch(batch, pad_to)
    offsets = batch.offsets
    lengths = np.diff(offsets)
    nq = lengths.size
    out = np.zeros(nq)
    if nq == 0 or offsets[-1] == 0:
        return out
    fwd, bwd, g, tail_pq = batch_transitions(batch, g_max=g_max, **kw)
    f, order, loss = params["f"], params["order"], params["loss"]
    if backward is None:
        backward = tail_pq is not None or bool(np.any(bwd > 0))
    if order == 1 and f == "h" and backward:
        out = order1_flat(fwd, bwd, g, offsets, loss)
    elif order == 1 and f == "h":
        # per ranking, the sums np.cumsum gives of it alone (the single-ranking path's)
        vals = segment_cumsum(g, offsets)
        vals /= batch.ranks
        vals *= _segment_cumprod_shift(fwd, offsets)
        np.subtract(1.0, fwd, out=fwd)   # fwd is this function's own array
        vals *= fwd
        out = segment_sum(vals, offsets)
    else:
        if backward:
            eg, eh = gain_and_steps_flat(fwd, bwd, g, offsets, loss, tail_pq)
        else:
            surv = _segment_cumprod_shift(fwd, offsets)
            eg = segment_sum(g * surv, offsets)
            eh = segment_sum(surv, offsets)
        out = eg if f == "1" else np.divide(eg, eh, out=np.zeros(nq), where=eh > 0)
    out[batch.recall_base == 0] = 0.0
    return out


def _select_queries(batch, qs):
    """Queries ``qs`` (increasing indices) of ``batch`` as a batch of their own."""
    if qs.size and qs[-1] - qs[0] + 1 == qs.size:
        return _sub_batch(batch, int(qs[0]), int(qs[-1]) + 1)
    lengths = np.diff(batch.offsets)[qs]
    at = expand_ranges(batch.offsets[:-1][qs], lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(batch.offsets.dtype)
    return RelevanceBatch([batch.qids[i] for i in qs.tolist()], offsets, batch.grades[at], batch.relevant[at],
                          batch.recall_base[qs], batch.rel, judgments=batch.judgments)


def _order1_in_blocks(batch, params, kw, g_max, pad_to):
    """[`path_at_h_batch`][irmeasures_markov.measures.stopping_time.path_at_h_batch] for order 1 (f = h) without the
    run's transitions in memory, bit for bit.

    One pass over all queries (``_path_at_h_block``) integrates groups of about ``ORDER1_GROUP_STATES`` kept states, one
    quadrature rule (node count) per group, so a query's value depends on the other queries of its group. Here a first
    pass over blocks of queries finds the uncoupled chains and their starts; the truncation and the groups then read the
    transitions of just the queries they cover
    (`average_reward_groups`): the same states in the same groups, so
    the same rules and values. Memory: the chains' bounds and starts (two integers per chain: one chain per ranking
    unless a forward probability of 0 cuts it), and the transitions of about ``BLOCK_DOCS`` documents at a time besides
    a group's own solves.
    """
    lengths = np.diff(batch.offsets)
    if pad_to is not None:
        lengths = np.maximum(lengths, int(pad_to))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)   # of the (padded) run
    nq = lengths.size

    def transitions(qs):
        sub = _select_queries(batch, qs)
        if pad_to is not None:
            sub = pad_batch(sub, pad_to)
        fwd, bwd, g, _ = batch_transitions(sub, g_max=None if g_max is None else np.asarray(g_max)[qs], **kw)
        return fwd, bwd, g

    # first pass: the uncoupled chains (every query's first and last ranks cut them) and their starts
    heads, starts, backward = [], [], False
    for a, b in query_blocks(offsets, BLOCK_DOCS):
        lo = int(offsets[a])
        if offsets[b] == lo:
            continue
        fwd, bwd, g = transitions(np.arange(a, b))
        backward = backward or bool(np.any(bwd > 0))
        chains = uncoupled_blocks(fwd, bwd)
        sub = offsets[a:b + 1] - lo
        heads.append(chains[:-1] + lo)
        starts.append(average_reward_starts(chains, sub[:-1][np.diff(sub) > 0], g))
    if not backward:
        # no backward move anywhere (e.g. rankings of one document): the closed form, as one pass chooses
        return _in_blocks(batch, params, kw, g_max, pad_to, BLOCK_DOCS, False)
    chains = np.concatenate(heads + [offsets[-1:]])
    local = np.concatenate(starts)

    def gather(idx):
        """(fwd, bwd, gain) at the increasing positions ``idx``, from the queries they fall in."""
        out = tuple(np.empty(idx.size) for _ in range(3))
        for qs, part, local, _ in _by_query_blocks(idx, offsets, lengths):
            for dst, src in zip(out, transitions(qs)):
                dst[part] = src[local]
        return out

    out = np.zeros(nq)
    held_at, held = np.zeros(0, dtype=np.intp), np.zeros(0)
    for at, values, (gain,) in average_reward_groups(gather, chains, local, 1.0 - params["loss"]):
        at, terms = np.concatenate([held_at, at]), np.concatenate([held, values * gain])
        # the last query may have states in the next group: its sum waits for them
        cut = np.searchsorted(at, offsets[np.searchsorted(offsets, at[-1], side="right") - 1])
        _query_sums(at[:cut], terms[:cut], offsets, lengths, out)
        held_at, held = at[cut:], terms[cut:]
    _query_sums(held_at, held, offsets, lengths, out)
    out[batch.recall_base == 0] = 0.0
    return out


def _query_sums(at, terms, offsets, lengths, out):
    """``out[q]`` = the sum over query q's ranks of ``terms`` (at positions ``at``, 0 elsewhere), for the
    queries with a position in ``at``: the sum of one pass over the run's per-rank terms, zeros included."""
    for qs, part, local, heads in _by_query_blocks(at, offsets, lengths):
        buf = np.zeros(int(heads[-1]))
        buf[local] = terms[part]
        out[qs] = np.add.reduceat(buf, heads[:-1])


def _by_query_blocks(at, offsets, lengths):
    """For increasing positions ``at`` of the run (``offsets``, ``lengths`` per query), blocks of about
    `BLOCK_DOCS` documents of the queries they fall in: ``(queries, part, local, heads)``, the
    slice of ``at`` in those queries, its positions counted in the queries' concatenation and the
    queries' offsets there."""
    if at.size == 0:
        return
    query = np.searchsorted(offsets, at, side="right") - 1
    first = np.flatnonzero(np.concatenate([[True], query[1:] != query[:-1]]))
    ends = np.append(first[1:], at.size)
    qs = query[first]
    sizes = lengths[qs]
    for a, b in query_blocks(np.concatenate([[0], np.cumsum(sizes)]), BLOCK_DOCS):
        part = slice(int(first[a]), int(ends[b - 1]))
        heads = np.concatenate([[0], np.cumsum(sizes[a:b])])
        local = at[part] - offsets[query[part]] + np.repeat(heads[:-1], ends[a:b] - first[a:b])
        yield qs[a:b], part, local, heads


def gain_and_steps_flat(fwd: np.ndarray, bwd: np.ndarray, gain: np.ndarray, offsets: np.ndarray, loss: float,
                        tail: tuple | None) -> tuple[np.ndarray, np.ndarray]:
    """(E[Σ g], E[H]) per block of stacked chains (visit-count formula, O(total)): the chains of all queries.

    ``bwd`` must be 0 at every first rank.  ``tail``, the ``(p, q)`` of an endless tail after every last
    rank, is folded into that rank: a return to it with probability ``fwd * u`` (on the diagonal of I - Q)
    and ``T`` tail documents read per excursion; ``fwd`` past each last rank is dropped, which uncouples the
    blocks.  Queries are taken in groups of about `GROUP_RANKS` ranks, which bounds the memory of the
    solves.
    """
    lengths = np.diff(offsets)
    nq = lengths.size
    nonempty = lengths > 0
    lastpos = offsets[1:][nonempty] - 1
    diag = np.ones(gain.size)
    extra = np.zeros(nq)
    if tail is not None:
        u, T = tail_constants(*tail)
        diag[lastpos] -= fwd[lastpos] * u
        extra[nonempty] = fwd[lastpos] * T
    fwd = fwd.copy()
    fwd[lastpos] = 0.0
    eg = np.zeros(nq)
    eh = np.zeros(nq)
    for a, b in query_blocks(offsets, GROUP_RANKS):
        lo, hi = int(offsets[a]), int(offsets[b])
        sub = offsets[a:b + 1] - lo
        nonempty = np.diff(sub) > 0
        if not nonempty.any():
            continue
        starts = sub[:-1][nonempty]
        visits, discounted = birth_death_discounted_visits(fwd[lo:hi], bwd[lo:hi], starts, 1.0 - loss,
                                                           diag=diag[lo:hi])
        eg[a:b][nonempty] = np.add.reduceat(gain[lo:hi] * discounted, starts)
        eh[a:b][nonempty] = np.add.reduceat(visits, starts) + visits[sub[1:][nonempty] - 1] * extra[a:b][nonempty]
    return eg, eh


def order1_flat(forward: np.ndarray, backward: np.ndarray, gain: np.ndarray, offsets: np.ndarray,
                loss: float) -> np.ndarray:
    """E[Σ g / H] per block of stacked uncoupled chains (generating function, all blocks per node)."""
    # one start per non-empty ranking, then the sum of each ranking's terms
    terms = birth_death_average_reward(forward, backward, gain, offsets[:-1][np.diff(offsets) > 0], 1.0 - loss)
    return segment_sum(terms, offsets)
