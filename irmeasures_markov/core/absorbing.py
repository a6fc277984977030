r"""Absorbing chains: expected visits, absorption, hitting and return probabilities.

Write the transient part of a chain as the substochastic matrix :math:`Q`
(rows may sum to less than one; the missing mass goes to absorbing states)
and the transient-to-absorbing part as :math:`R`.  Then (Kemeny & Snell 1960;
Norris 1998, §1.3)

- the fundamental matrix :math:`N = (I - Q)^{-1}` holds expected visits:
  :math:`N_{ij} = E_i[\#\{n : X_n = j\}]`;
- absorption probabilities are :math:`B = N R`;
- expected accumulated reward is :math:`v = N \rho` for a per-visit reward :math:`\rho`;
- the probability of ever hitting :math:`j` from :math:`i` is :math:`h_i^j = N_{ij}/N_{jj}`;
- the probability of returning to :math:`i` is :math:`f_i = 1 - 1/N_{ii}`.

When the chain only moves to neighbouring states (birth–death chains, as in
the browsing models of P@H), :math:`I - Q` is tridiagonal and everything is
O(n) with the banded solvers below.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._util.lazy import lazy_module

# scipy.linalg loads at the first call: `import irmeasures_markov` stays cheap
scipy = lazy_module("scipy")

__all__ = [
    "fundamental_matrix",
    "expected_visits",
    "expected_reward",
    "absorption_probabilities",
    "hitting_probabilities",
    "return_probabilities",
    "solve_tridiagonal",
    "tridiagonal_expected_reward",
    "tridiagonal_hitting_and_return",
]


def _substochastic(Q):
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise ValueError(f"`Q` must be a square matrix, got shape {Q.shape}.")
    if not np.all(np.isfinite(Q)) or np.any(Q < 0):
        raise ValueError("`Q` must be finite and nonnegative.")
    if np.any(Q.sum(axis=1) > 1 + 1e-12):
        raise ValueError("The rows of `Q` must sum to at most 1.")
    return Q


def fundamental_matrix(Q: ArrayLike) -> np.ndarray:
    """The fundamental matrix :math:`N = (I - Q)^{-1}` (Kemeny & Snell 1960): expected visits.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.

    Returns
    -------
    numpy.ndarray, shape (n, n)

    Raises
    ------
    ValueError
        If ``Q`` is not substochastic, or some transient state is never absorbed.
    """
    Q = _substochastic(Q)
    n = Q.shape[0]
    try:
        N = scipy.linalg.solve(np.eye(n) - Q, np.eye(n))
    except scipy.linalg.LinAlgError as exc:
        raise ValueError("`I - Q` is singular: some states are never absorbed.") from exc
    return N


def expected_visits(Q: ArrayLike, start: int) -> np.ndarray:
    """Row ``start`` of the fundamental matrix: expected visits to each state from ``start``.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.
    start : int
        The start state.

    Returns
    -------
    numpy.ndarray, shape (n,)
        :math:`N_{start, j}`.
    """
    Q = _substochastic(Q)
    e = np.zeros(Q.shape[0])
    e[int(start)] = 1.0
    return scipy.linalg.solve((np.eye(Q.shape[0]) - Q).T, e)


def expected_reward(Q: ArrayLike, reward: ArrayLike) -> np.ndarray:
    r""":math:`v = (I - Q)^{-1} \rho`: expected total reward collected before absorption, per start.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.
    reward : array_like, shape (n,)
        Reward :math:`\rho` per visit of each state.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    Q = _substochastic(Q)
    return scipy.linalg.solve(np.eye(Q.shape[0]) - Q, np.asarray(reward, dtype=np.float64))


def absorption_probabilities(Q: ArrayLike, R: ArrayLike) -> np.ndarray:
    """:math:`B = (I - Q)^{-1} R`: probability of ending in each absorbing state.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.
    R : array_like, shape (n, m)
        Transient-to-absorbing probabilities.

    Returns
    -------
    numpy.ndarray, shape (n, m)
    """
    Q = _substochastic(Q)
    return scipy.linalg.solve(np.eye(Q.shape[0]) - Q, np.asarray(R, dtype=np.float64))


def hitting_probabilities(Q: ArrayLike, start: int) -> np.ndarray:
    r"""``h[j] = P_start(hit j before absorption)`` (``h[start] = 1``), via :math:`N_{sj}/N_{jj}`.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.
    start : int
        The start state :math:`s`.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    N = fundamental_matrix(Q)
    return N[int(start)] / np.diag(N)


def return_probabilities(Q: ArrayLike) -> np.ndarray:
    r"""``f[i] = P_i(return to i before absorption) = 1 - 1/N_ii``.

    Parameters
    ----------
    Q : array_like, shape (n, n)
        Transient part of the chain: nonnegative, rows summing to at most 1.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    N = fundamental_matrix(Q)
    return 1.0 - 1.0 / np.diag(N)


def solve_tridiagonal(lower: ArrayLike, diag: ArrayLike, upper: ArrayLike, rhs: ArrayLike) -> np.ndarray:
    """Solve a tridiagonal system in O(n).

    ``lower[i]`` is entry (i+1, i), ``upper[i]`` entry (i, i+1) (both length n-1),
    ``rhs`` has shape (n,) or (n, k).

    Parameters
    ----------
    lower : array_like of float
        sub-diagonal, length n-1.
    diag : array_like of float
        diagonal, length n.
    upper : array_like of float
        super-diagonal, length n-1.
    rhs : array_like of float
        right-hand side(s), shape (n,) or (n, k).

    Returns
    -------
    numpy.ndarray
        the solution, of the shape of ``rhs``.
    """
    diag = np.asarray(diag, dtype=np.float64)
    n = diag.size
    ab = np.zeros((3, n))
    ab[0, 1:] = upper
    ab[1] = diag
    ab[2, :-1] = lower
    return scipy.linalg.solve_banded((1, 1), ab, np.asarray(rhs, dtype=np.float64))


def _tridiagonal_parts(forward, backward):
    forward = np.asarray(forward, dtype=np.float64)
    backward = np.asarray(backward, dtype=np.float64)
    n = forward.size
    if backward.size != n:
        raise ValueError("`forward` and `backward` must have the same length.")
    if np.any(forward < 0) or np.any(backward < 0) or np.any(forward + backward > 1 + 1e-12):
        raise ValueError("Need forward, backward >= 0 and forward + backward <= 1 at every state.")
    if n and (forward[-1] != 0 or backward[0] != 0):
        raise ValueError("`forward[-1]` and `backward[0]` must be 0 (no moves off the list).")
    return forward, backward, n


def tridiagonal_expected_reward(forward: ArrayLike, backward: ArrayLike, reward: ArrayLike) -> np.ndarray:
    r"""Expected reward before absorption for a birth–death chain, every start state.

    State ``i`` moves to ``i+1`` with probability ``forward[i]``, to ``i-1`` with
    ``backward[i]`` and is absorbed with the rest.  Solves
    :math:`(I - Q) v = \rho` with the tridiagonal :math:`Q` in O(n).

    Parameters
    ----------
    forward : array_like of float
        probability of moving from state i to i+1 (``forward[-1]`` must be 0).
    backward : array_like of float
        probability of moving from state i to i-1 (``backward[0]`` must be 0).
    reward : array_like of float
        reward :math:`\rho_i` collected at each visit of state i.

    Returns
    -------
    numpy.ndarray
        expected total reward before absorption from each start state.

    Raises
    ------
    ValueError
        If ``forward`` and ``backward`` differ in length, are not
        probabilities with ``forward + backward <= 1``, or move off the list.
    """
    forward, backward, n = _tridiagonal_parts(forward, backward)
    return solve_tridiagonal(-backward[1:], np.ones(n), -forward[:-1], reward)


def tridiagonal_hitting_and_return(forward: ArrayLike, backward: ArrayLike,
                                   start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Hitting probabilities from ``start`` and return probabilities, birth–death chain, O(n).

    Returns ``(h, f)`` with ``h[j] = P_start(hit j)`` and ``f[j] = P_j(return to j)``.
    Uses :math:`h_j = N_{sj}/N_{jj}` and :math:`f_j = 1 - 1/N_{jj}`; the diagonal of
    :math:`N = (I-Q)^{-1}` comes from the two-sided elimination (LU from both
    ends) of the tridiagonal matrix, and row ``start`` from one banded solve.

    Parameters
    ----------
    forward : array_like of float
        probability of moving from state i to i+1 (``forward[-1]`` must be 0).
    backward : array_like of float
        probability of moving from state i to i-1 (``backward[0]`` must be 0).
    start : int
        start state.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        ``(h, f)``: hitting probabilities from ``start`` and return probabilities of every state.

    Raises
    ------
    ValueError
        If ``forward`` and ``backward`` differ in length, are not
        probabilities with ``forward + backward <= 1``, or move off the list.
    """
    forward, backward, n = _tridiagonal_parts(forward, backward)
    # I - Q: diag 1, super -forward[:-1], sub -backward[1:]
    a = -backward[1:]   # sub-diagonal, a[i] = M[i+1, i]
    c = -forward[:-1]   # super-diagonal, c[i] = M[i, i+1]
    # left elimination pivots: d_left[i] = 1 - a[i-1] c[i-1] / d_left[i-1]
    d_left = np.empty(n)
    d_right = np.empty(n)
    d_left[0] = 1.0
    for i in range(1, n):
        d_left[i] = 1.0 - a[i - 1] * c[i - 1] / d_left[i - 1]
    d_right[n - 1] = 1.0
    for i in range(n - 2, -1, -1):
        d_right[i] = 1.0 - a[i] * c[i] / d_right[i + 1]
    # (M^{-1})_{ii} = 1 / (d_left[i] + d_right[i] - 1)  since M_ii = 1
    N_diag = 1.0 / (d_left + d_right - 1.0)
    e = np.zeros(n)
    e[int(start)] = 1.0
    # row `start` of N = column `start` of N^T: solve M^T x = e
    row = solve_tridiagonal(c, np.ones(n), a, e)
    return row / N_diag, 1.0 - 1.0 / N_diag
