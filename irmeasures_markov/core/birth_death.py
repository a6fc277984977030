r"""Many independent birth–death (tridiagonal) systems at once.

The absorbing chains of P@H move only between neighbouring ranks, so
:math:`M = I - zQ` is tridiagonal.  The functions here solve a stack of such
systems, one per row of 2-D arrays (row = one query, or one quadrature node of
one query), with the Thomas algorithm vectorised over rows and a loop over the
columns.  Shorter systems are padded with identity rows (diagonal 1, zero
couplings), which leaves the solution of the real part unchanged.

Without pivoting the Thomas algorithm is stable for (weakly) diagonally
dominant matrices; :math:`I - zQ` with :math:`Q` substochastic and
:math:`0 \le z \le 1` is one.  A zero pivot means that some states are never
absorbed (e.g. forward 1 at rank i and backward 1 at rank i+1): that raises.

References
----------
.. [1] G. Meurant, "A review on the inverse of symmetric tridiagonal and block
   tridiagonal matrices", SIAM J. Matrix Anal. Appl. 13 (1992) 707–728
   (diagonal of the inverse from the two one-sided eliminations).
"""
from __future__ import annotations

import numpy as np

__all__ = ["batched_tridiagonal_solve", "batched_inverse_diagonal", "graded_gauss_legendre",
           "birth_death_inverse_diagonal"]

_TINY = 1e-300


def _parts(lower, diag, upper):
    diag = np.asarray(diag, dtype=np.float64)
    if diag.ndim != 2:
        raise ValueError(f"`diag` must be 2-D (rows x size), got shape {diag.shape}.")
    lower = np.broadcast_to(np.asarray(lower, dtype=np.float64), diag.shape)
    upper = np.broadcast_to(np.asarray(upper, dtype=np.float64), diag.shape)
    return lower, diag, upper


def _left_pivots(lower, diag, upper):
    n = diag.shape[1]
    d = np.empty_like(diag)
    d[:, 0] = diag[:, 0]
    for i in range(1, n):
        d[:, i] = diag[:, i] - lower[:, i] * upper[:, i - 1] / d[:, i - 1]
    if np.any(np.abs(d) < 1e-14):
        raise ValueError("singular birth–death system: some states are never absorbed "
                         "(the user never stops).")
    return d


def batched_tridiagonal_solve(lower, diag, upper, rhs) -> np.ndarray:
    """Solve ``M x = rhs`` for every row of a stack of tridiagonal matrices.

    Row ``b`` describes ``M_b`` by ``diag[b, i] = M[i, i]``, ``lower[b, i] =
    M[i, i-1]`` (``lower[b, 0]`` ignored) and ``upper[b, i] = M[i, i+1]``
    (``upper[b, -1]`` ignored); all arrays have shape ``(B, n)`` (``lower``
    and ``upper`` broadcast).  Thomas algorithm, O(B n).
    """
    lower, diag, upper = _parts(lower, diag, upper)
    rhs = np.asarray(rhs, dtype=np.float64)
    if rhs.shape != diag.shape:
        raise ValueError(f"`rhs` must have shape {diag.shape}, got {rhs.shape}.")
    n = diag.shape[1]
    d = _left_pivots(lower, diag, upper)
    y = np.empty_like(rhs)
    y[:, 0] = rhs[:, 0]
    for i in range(1, n):
        y[:, i] = rhs[:, i] - lower[:, i] / d[:, i - 1] * y[:, i - 1]
    x = np.empty_like(rhs)
    x[:, n - 1] = y[:, n - 1] / d[:, n - 1]
    for i in range(n - 2, -1, -1):
        x[:, i] = (y[:, i] - upper[:, i] * x[:, i + 1]) / d[:, i]
    return x


def batched_inverse_diagonal(lower, diag, upper) -> np.ndarray:
    r"""Diagonal of :math:`M^{-1}` for every row of a stack of tridiagonal matrices.

    With the pivots :math:`\delta_i` of elimination from the top and
    :math:`\epsilon_i` from the bottom, :math:`(M^{-1})_{ii} = 1 / (\delta_i +
    \epsilon_i - M_{ii})` ([1]_).  Same layout as :func:`batched_tridiagonal_solve`.
    """
    lower, diag, upper = _parts(lower, diag, upper)
    n = diag.shape[1]
    d_top = _left_pivots(lower, diag, upper)
    d_bot = np.empty_like(diag)
    d_bot[:, n - 1] = diag[:, n - 1]
    for i in range(n - 2, -1, -1):
        d_bot[:, i] = diag[:, i] - upper[:, i] * lower[:, i + 1] / d_bot[:, i + 1]
    return 1.0 / (d_top + d_bot - diag)


def graded_gauss_legendre(levels: int, nodes_per_piece: int = 12):
    r"""Nodes and weights on [0, 1], refined geometrically towards 1.

    Pieces :math:`[0, 1/2], [1/2, 3/4], \dots, [1 - 2^{-K}, 1]` with
    ``levels`` = K, each with a Gauss–Legendre rule.  A function analytic in
    a disc of radius :math:`1 + \varepsilon` around 0 (a generating function
    with a pole just beyond 1) is integrated to near machine precision when
    :math:`2^{-K} \lesssim \varepsilon / 4`: every piece then has its nearest
    singularity at least one piece-length away.
    """
    x, w = np.polynomial.legendre.leggauss(int(nodes_per_piece))
    edges = np.concatenate([1.0 - 0.5 ** np.arange(int(levels) + 1), [1.0]])
    nodes, weights = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        nodes.append(a + (b - a) * (x + 1) / 2)
        weights.append(w * (b - a) / 2)
    return np.concatenate(nodes), np.concatenate(weights)


def birth_death_inverse_diagonal(forward, backward, diag=None) -> np.ndarray:
    r"""Diagonal of :math:`(D - Q)^{-1}` for a birth–death chain, with LAPACK (O(n)).

    ``Q[i, i+1] = forward[i]``, ``Q[i+1, i] = backward[i+1]``; ``diag`` defaults
    to ones.  The elimination pivots of a tridiagonal matrix depend on the
    off-diagonals only through the products ``forward[i] * backward[i+1]``, so
    they equal those of the symmetric matrix with off-diagonal
    :math:`-\sqrt{p_i q_{i+1}}`, which is positive definite when the chain is
    absorbing; ``?pttrf`` (:math:`LDL^T`, no pivoting) gives them from the top,
    and again on the reversed chain from the bottom.  Independent chains can
    be stacked into one array: a zero product uncouples them.
    """
    from scipy.linalg import lapack
    forward = np.asarray(forward, dtype=np.float64)
    backward = np.asarray(backward, dtype=np.float64)
    n = forward.size
    d = np.ones(n) if diag is None else np.asarray(diag, dtype=np.float64)
    if n <= 1:
        if n == 1 and not d[0] > 0:
            raise ValueError("singular birth–death system: some states are never absorbed "
                             "(the user never stops).")
        return 1.0 / d
    e = -np.sqrt(forward[:-1] * backward[1:])
    top, _, info1 = lapack.dpttrf(d, e)
    bot, _, info2 = lapack.dpttrf(d[::-1], e[::-1])
    if info1 != 0 or info2 != 0:
        raise ValueError("singular birth–death system: some states are never absorbed "
                         "(the user never stops).")
    return 1.0 / (top + bot[::-1] - d)
