r"""Finite Markov chains: invariant distributions and censored ("watched") chains.

A discrete-time chain on states $S = \{0, \dots, n-1\}$ is given by a
row-stochastic matrix $P$ ($p_{ij} \ge 0$, $\sum_j p_{ij} = 1$).
It is *irreducible* when every state reaches every other state with positive
probability; then it has a unique invariant distribution $\pi = \pi P$.

Censored chains.  Watching a chain only while it is in a subset $A$
(Norris 1998, §1.3; Ferrante et al. 2014, eq. 8) gives a chain on $A$
with transition matrix

$$
\tilde P = P_{AA} + P_{AB} (I - P_{BB})^{-1} P_{BA}, \qquad B = S \setminus A,
$$

whose invariant distribution is $\pi|_A / \pi(A)$ for any irreducible
chain.  Markov Precision's general solver for user-supplied kernels rests on it.

References
----------
[1] J. R. Norris, *Markov Chains*, Cambridge University Press, 1998.
[2] M. Ferrante, N. Ferro, M. Maistro, "Injecting User Models and Time into
       Precision via Markov Chains", SIGIR 2014.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from irmeasures_markov._util._lazy import lazy_module

# scipy.linalg and scipy.sparse(.csgraph, .linalg) load at the first call: `import irmeasures_markov` stays cheap
scipy = lazy_module("scipy")

__all__ = ["stationary_distribution", "censored_transition_matrix", "is_irreducible", "transition_matrix_from_weights"]

_STOCHASTIC_ATOL = 1e-10


def _as_matrix(P, name="P"):
    """Return ``P`` as a float64 dense array or CSR matrix, validated as square."""
    if scipy.sparse.issparse(P):
        P = scipy.sparse.csr_matrix(P, dtype=np.float64)
    else:
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2:
            raise ValueError(f"`{name}` must be a 2-D matrix, got an array of shape {P.shape}.")
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"`{name}` must be a square matrix, got shape {P.shape}.")
    if P.shape[0] == 0:
        raise ValueError(f"`{name}` must have at least one state.")
    return P


def _check_stochastic(P):
    data = P.data if scipy.sparse.issparse(P) else P
    if not np.all(np.isfinite(data)):
        raise ValueError("`P` must contain only finite values.")
    if np.any(data < 0):
        raise ValueError("`P` must be nonnegative.")
    rows = np.asarray(P.sum(axis=1)).ravel()
    if not np.allclose(rows, 1.0, rtol=0, atol=_STOCHASTIC_ATOL):
        bad = int(np.argmax(np.abs(rows - 1.0)))
        raise ValueError(f"The rows of `P` must sum to 1 (row {bad} sums to {rows[bad]!r}).")


def is_irreducible(P: ArrayLike) -> bool:
    """True when the directed graph of the positive entries of ``P`` is strongly connected.

    Parameters
    ----------
    P : (n, n) array_like or sparse matrix
        A square (transition) matrix; only where its entries are positive matters.

    Returns
    -------
    bool
        Whether every state reaches every other state.

    Raises
    ------
    ValueError
        ``P`` is not a square 2-D matrix with at least one state.
    """
    P = _as_matrix(P)
    if P.shape[0] == 1:
        return True
    graph = scipy.sparse.csr_matrix(P) if not scipy.sparse.issparse(P) else P
    n_components = scipy.sparse.csgraph.connected_components(
        graph, directed=True, connection="strong", return_labels=False)
    return n_components == 1


def transition_matrix_from_weights(W: ArrayLike) -> np.ndarray:
    r"""Row-normalise a nonnegative weight matrix: $p_{ij} = w_{ij} / \sum_k w_{ik}$.

    The diagonal is kept as given (MP kernels have no self-loops, so callers pass
    a zero diagonal).  A state with no outgoing weight is an error because the
    chain would have nowhere to go.

    Parameters
    ----------
    W : (n, n) array_like or sparse matrix
        Nonnegative, finite weights $w_{ij}$.

    Returns
    -------
    (n, n) ndarray or sparse matrix
        The row-stochastic matrix $P$ (sparse when ``W`` is).

    Raises
    ------
    ValueError
        ``W`` is not square, has a negative or non-finite entry, or a row without positive weight.
    """
    W = _as_matrix(W, "W")
    data = W.data if scipy.sparse.issparse(W) else W
    if not np.all(np.isfinite(data)) or np.any(data < 0):
        raise ValueError("`W` must be finite and nonnegative.")
    out = np.asarray(W.sum(axis=1)).ravel()
    if np.any(out <= 0):
        bad = int(np.flatnonzero(out <= 0)[0])
        raise ValueError(f"State {bad} has no outgoing weight; the chain cannot leave it.")
    if scipy.sparse.issparse(W):
        return scipy.sparse.diags(1.0 / out) @ W
    return W / out[:, None]


def stationary_distribution(P: ArrayLike, *, check: bool = True) -> np.ndarray:
    r"""Invariant distribution of an irreducible chain by a direct linear solve.

    Solves $\pi (I - P) = 0$ with one balance equation replaced by
    $\sum_i \pi_i = 1$, which is nonsingular exactly when ``P`` is
    irreducible.  Dense input uses LAPACK; ``scipy.sparse`` input uses SuperLU.

    Parameters
    ----------
    P : (n, n) array_like or sparse matrix
        Row-stochastic, irreducible transition matrix.
    check : bool
        Validate stochasticity and irreducibility first (default True).

    Returns
    -------
    pi : (n,) ndarray
        Nonnegative, sums to 1, ``pi @ P == pi``.
    """
    P = _as_matrix(P)
    if check:
        _check_stochastic(P)
        if not is_irreducible(P):
            raise ValueError("`P` is not irreducible: some state cannot reach another, "
                             "so the invariant distribution is not unique.")
    n = P.shape[0]
    if n == 1:
        return np.ones(1)
    b = np.zeros(n)
    b[-1] = 1.0
    if scipy.sparse.issparse(P):
        A = (scipy.sparse.identity(n, format="csr") - P).T.tolil()
        A[n - 1, :] = np.ones(n)
        pi = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    else:
        A = (np.eye(n) - P).T.copy()
        A[n - 1, :] = 1.0
        pi = scipy.linalg.solve(A, b)
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def censored_transition_matrix(P: ArrayLike, watched: ArrayLike) -> np.ndarray:
    r"""Transition matrix of ``P`` watched only on the states ``watched``.

    Computes $\tilde P = P_{AA} + P_{AB} H$ where $H = (I - P_{BB})^{-1} P_{BA}$
    is the minimal nonnegative solution of $h = P_{\cdot A} + P_{\cdot B} h$
    restricted to $B$ (paper eq. 8).  Row ``i`` of the result is the law of
    the next watched state after leaving watched state ``i``.

    Parameters
    ----------
    P : (n, n) array_like or sparse matrix
        Row-stochastic transition matrix (irreducible, so every unwatched state
        eventually reaches a watched one).
    watched : sequence of int or boolean mask
        The watched set ``A``, in the order the output rows/columns use.

    Returns
    -------
    P_tilde : (|A|, |A|) ndarray
    """
    P = _as_matrix(P)
    n = P.shape[0]
    watched = np.asarray(watched)
    if watched.dtype == bool:
        if watched.shape != (n,):
            raise ValueError(f"Boolean `watched` must have length {n}.")
        A = np.flatnonzero(watched)
    else:
        A = watched.astype(np.int64)
        if A.size and (A.min() < 0 or A.max() >= n):
            raise ValueError(f"`watched` indices must lie in [0, {n}).")
        if np.unique(A).size != A.size:
            raise ValueError("`watched` contains repeated states.")
    if A.size == 0:
        raise ValueError("`watched` must contain at least one state.")
    mask = np.zeros(n, dtype=bool)
    mask[A] = True
    B = np.flatnonzero(~mask)
    if scipy.sparse.issparse(P):
        P_AA = P[A][:, A].toarray()
        if B.size == 0:
            return P_AA
        P_AB = P[A][:, B]
        P_BA = P[B][:, A].toarray()
        M = (scipy.sparse.identity(B.size, format="csc") - P[B][:, B]).tocsc()
        H = scipy.sparse.linalg.splu(M).solve(P_BA)
        return P_AA + np.asarray(P_AB @ H)
    P_AA = P[np.ix_(A, A)]
    if B.size == 0:
        return P_AA.copy()
    H = scipy.linalg.solve(np.eye(B.size) - P[np.ix_(B, B)], P[np.ix_(B, A)])
    return P_AA + P[np.ix_(A, B)] @ H

