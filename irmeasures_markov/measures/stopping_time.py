r"""P@H: stopping-time measures (Ferrante & Ferro, ICTIR 2020).

A user starts at rank 1 and moves among ranks as an absorbing Markov chain on
:math:`\{End\} \cup \{1..N\}`: from rank :math:`i` forward with probability
:math:`p_i`, backward with :math:`q_i`, stop with :math:`s_i = 1 - p_i - q_i`.
:math:`H` is the number of documents visited (the stopping time) and

.. math::

    P@H = \frac{1}{f(H)} \sum_{n=1}^{H} g(k(n), r[X_n]),
    \qquad g(k, y) = \mathrm{gain}(y) (1-\lambda)^{k-1},

with :math:`k(n)` the visit count of :math:`X_n` so far and :math:`f(h) = h`
or :math:`1`.  P@H is a random variable; runs are ordered by

- order 1: :math:`E[P@H]`;
- order 2: :math:`E[\sum g] / E[f(H)]`;
- order 3: first-order stochastic dominance of the distributions.

Boundaries (docs/stopping-time.md): forward mass at rank N stops; backward mass at rank 1
stops (``top='stop'``) or goes forward (``top='forward'``).  ``tail='inf'``
continues the ranking with infinitely many non-relevant documents browsed with
the non-relevant ``p, q`` (RBP(∞), :math:`K(p, q, \infty)`; order 2 only).

Exact methods, and where each is used (the chain algebra is in
:mod:`irmeasures_markov.core.birth_death`; this module builds the chains and
sums per query):

- **forward models** (no backward moves: DFBM, SFBM): :math:`H` is the stopping
  rank, :math:`P(H = h) = (1-p_h)\prod_{j<h} p_j`; expectation (both orders),
  variance, distribution and quantiles are closed form.
- **order 2** (and order 1 with f = 1): visit-count formula :math:`E_1[\sum g]
  = \sum_i \mathrm{gain}_i N_{1i} / ((1-c) N_{ii} + c)`, :math:`c = 1-\lambda`,
  and :math:`E_1[H] = \sum_i N_{1i}` with :math:`N = (I - \tilde P)^{-1}` the
  tridiagonal fundamental matrix: its first row from one tridiagonal solve,
  its diagonal (λ > 0 only) from two ``?pttrf``
  (``core.birth_death.birth_death_discounted_visits``).  With λ = 0 this is
  :math:`((I - \tilde P)^{-1} \rho)_1`.
- **order 1, backward moves, f = h** (with or without λ): generating function
  of the stopping time, :math:`1/H = \int_0^1 z^{H-1} dz`, so
  :math:`E[\sum g / H] = \int_0^1 \sum_i \mathrm{gain}_i\, N^z_{1i}\,
  \psi^z_i / ((1-c) N^z_{ii} + c)\, dz` with :math:`N^z = (I - z\tilde P)^{-1}`,
  :math:`\psi^z = N^z s` (``core.birth_death.birth_death_average_reward``).
  Each node costs one tridiagonal LU factorisation and two solves (O(N));
  Gauss–Legendre on pieces graded towards 1, as many as
  :math:`\log_2 \max_i E_i[H] + 2` (the pole of the integrand lies beyond
  :math:`1 + 1/\max_i E_i[H]`), gives near machine precision.
- **order 1 by step recursion** (``expectation(1, method='recursion')``):
  per target rank a forward recursion carries the expected loss discount and
  a backward recursion :math:`E[1/H]` of the remaining steps, truncated when
  the surviving mass is below 1e-12
  (``core.birth_death.birth_death_average_reward_recursion``); agrees with
  the generating function to ~1e-12 but costs O(N²·steps) with λ > 0.
- **distribution, variance, quantiles with backward moves**: no exact method
  is implemented; they come from a seeded Monte Carlo simulation and carry
  their standard errors (``exact=False``).

In the batch (plugin) path all queries of a run are one stack of uncoupled
chains (forward 0 at each last rank, backward 0 at each first rank), so every
tridiagonal solve or factorisation above serves all queries at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import numpy as np

from ..core.birth_death import (birth_death_average_reward, birth_death_average_reward_recursion,
                                birth_death_discounted_visits)

__all__ = [
    "BROWSING_MODELS", "USERS", "BrowsingModel", "PHDistribution", "DominanceResult",
    "browsing_model", "path_at_h", "path_at_h_batch", "pad_batch", "k_infinite", "rbp_normaliser",
]

BROWSING_MODELS = ("DFBM", "SFBM", "RWBM")
USERS = ("P", "AP", "RBP", "DCG", "ERR")
GAINS = ("binary", "grade", "exp2")
#: order-1 methods of :meth:`BrowsingModel.expectation`
ORDER1_METHODS = ("auto", "generating", "recursion")
#: default number of simulated users when no exact method exists
DEFAULT_USERS = 1_000_000
#: users x ranks cells held at once by the simulation with utility loss
_SIM_CELLS = 1 << 22
_SIM_CHUNK = 1 << 20

Prob = Union[float, Sequence[float], np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]]


# ----------------------------------------------------------------------------------------------
# result objects
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PHDistribution:
    """Distribution of P@H: support points and their probabilities.

    ``exact=True``: closed form (forward models).  ``exact=False``: empirical
    distribution of ``n_users`` simulated users; ``stderr[k]`` is the Monte Carlo
    standard error :math:`\\sqrt{F(1-F)/n}` of the CDF at ``support[k]``.
    """
    support: np.ndarray
    probabilities: np.ndarray
    exact: bool
    n_users: Optional[int] = None
    stderr: Optional[np.ndarray] = field(default=None, repr=False)

    @property
    def cdf_values(self) -> np.ndarray:
        return np.minimum(np.cumsum(self.probabilities), 1.0)

    def cdf(self, x) -> np.ndarray:
        """:math:`F(x) = P(P@H \\le x)`."""
        c = np.concatenate([[0.0], self.cdf_values])
        return c[np.searchsorted(self.support, np.asarray(x, dtype=np.float64), side="right")]

    def quantile(self, u) -> np.ndarray:
        """Smallest support point x with :math:`F(x) \\ge u`, for u in [0, 1]."""
        u = np.asarray(u, dtype=np.float64)
        if np.any((u < 0) | (u > 1)):
            raise ValueError("`u` must be in [0, 1].")
        k = np.searchsorted(self.cdf_values, u - 1e-12, side="left")
        return self.support[np.minimum(k, self.support.size - 1)]

    def mean(self) -> float:
        return float(self.support @ self.probabilities)

    def variance(self) -> float:
        m = self.mean()
        return float(((self.support - m) ** 2) @ self.probabilities)


@dataclass(frozen=True)
class DominanceResult:
    """First-order stochastic dominance (the paper's order ≤3) between two runs.

    ``relation``: ``'first'`` (the first run's P@H is stochastically larger),
    ``'second'``, ``'equal'`` or ``'incomparable'``; ``crossings``: values x where
    :math:`F_1 - F_2` changes sign (CDFs cross); ``exact``: both distributions
    exact; ``max_diff``: :math:`\\max_x |F_1(x) - F_2(x)|`.
    """
    relation: str
    crossings: np.ndarray
    exact: bool
    max_diff: float


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------

def _check_prob(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"`{name}` must be a number in [0, 1], got {value!r}.")
    if not (0.0 <= float(value) <= 1.0):
        raise ValueError(f"`{name}` must be in [0, 1], got {value!r}.")
    return float(value)


def _prob_array(name, value, ranks, grades, n):
    if callable(value):
        arr = np.asarray(value(ranks, grades), dtype=np.float64)
        arr = np.broadcast_to(arr, (n,)).copy()
    elif np.ndim(value) == 0:
        return None
    else:
        arr = np.asarray(value, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"`{name}` has {arr.size} values for a ranking of {n} documents.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"`{name}` must lie in [0, 1] at every rank.")
    return arr


def _gain_values(grades, rel, gain):
    g = np.asarray(grades)
    relevant = g >= rel
    if gain == "binary":
        return relevant.astype(np.float64)
    if gain == "grade":
        return np.where(relevant, g, 0).astype(np.float64)
    if gain == "exp2":
        return np.where(relevant, np.exp2(np.where(relevant, g, 0).astype(np.float64)) - 1.0, 0.0)
    raise ValueError(f"`gain` must be one of {list(GAINS)}, got {gain!r}.")


def k_infinite(p: float, q: float) -> float:
    r""":math:`K(p, q, \infty) = (2p - 1 + \sqrt{1-4pq}) / (2p(1-p-q))`: expected
    visits of an endless homogeneous random walk started at rank 1 (backward at
    rank 1 stops).  :math:`K(p, 0, \infty) = 1/(1-p)`."""
    p, q = _check_prob("p", p), _check_prob("q", q)
    if p + q >= 1:
        raise ValueError("K(p, q, inf) needs p + q < 1 (the user must stop with positive probability).")
    if p == 0:
        return 1.0
    return (2 * p - 1 + math.sqrt(1 - 4 * p * q)) / (2 * p * (1 - p - q))


def _tail_constants(p: float, q: float):
    """(u, T) of an endless homogeneous tail entered from its left end.

    u = P(ever step back out of the tail), T = expected documents visited in the
    tail before leaving it (stop or step back)."""
    if p + q >= 1:
        raise ValueError("tail='inf' needs p + q < 1 for non-relevant documents "
                         "(otherwise the user may never stop).")
    u = 0.0 if p == 0 else (1 - math.sqrt(1 - 4 * p * q)) / (2 * p)
    return u, 1.0 / (1 - p * (1 + u))


def rbp_normaliser(p: float, n: Optional[int] = None) -> float:
    """:math:`K(p, N) = (1-p^N)/(1-p)`, or :math:`1/(1-p)` for ``n=None`` (N = ∞)."""
    p = _check_prob("p", p)
    if n is None:
        if p >= 1:
            raise ValueError("K(p, inf) needs p < 1.")
        return 1.0 / (1.0 - p)
    return float(n) if p == 1 else (1 - p ** n) / (1 - p)


# ----------------------------------------------------------------------------------------------
# the model
# ----------------------------------------------------------------------------------------------

class BrowsingModel:
    """A P@H user model on one ranking: transitions, gains, utility loss and f.

    Build it with :func:`browsing_model` (from grades and named parameters) or
    directly from effective transition arrays: ``forward[i]`` / ``backward[i]``
    are the probabilities of moving from rank i+1 to the next / previous rank
    after the boundary rules (so ``forward[-1] == 0`` unless ``tail`` is given,
    and ``backward[0] == 0``).

    Parameters
    ----------
    forward, backward : array_like, shape (N,)
    gain : array_like, shape (N,)
        ``gain(r[i])`` per rank (the utility of a first visit).
    loss : float
        λ in [0, 1]; the k-th visit of a document yields ``gain (1-λ)^(k-1)``.
    f : {'h', '1'}
        ``f(H) = H`` or ``1``.
    order : {1, 2}
        default order used by :meth:`value`.
    tail : (p, q) or None
        continue the ranking with endless non-relevant documents browsed with
        these probabilities (order 2 only).
    """

    def __init__(self, forward, backward, gain, *, loss=0.0, f="h", order=2, tail=None):
        fwd = np.array(forward, dtype=np.float64, ndmin=1)
        bwd = np.array(backward, dtype=np.float64, ndmin=1)
        g = np.array(gain, dtype=np.float64, ndmin=1)
        if not (fwd.shape == bwd.shape == g.shape) or fwd.ndim != 1:
            raise ValueError(f"`forward`, `backward` and `gain` must be 1-D of one length, got shapes "
                             f"{fwd.shape}, {bwd.shape}, {g.shape}.")
        n = fwd.size
        for name, a in (("forward", fwd), ("backward", bwd)):
            if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > 1):
                raise ValueError(f"`{name}` must lie in [0, 1] at every rank.")
        if np.any(fwd + bwd > 1 + 1e-12):
            i = int(np.argmax(fwd + bwd))
            raise ValueError(f"forward + backward probability exceeds 1 at rank {i + 1} "
                             f"({fwd[i]} + {bwd[i]}); p + q must be <= 1.")
        if n and bwd[0] != 0:
            raise ValueError("`backward[0]` must be 0 (apply the top boundary rule first).")
        if n and fwd[-1] != 0 and tail is None:
            raise ValueError("`forward[-1]` must be 0: forward mass at rank N stops (or give `tail`).")
        if not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ValueError("`gain` must be finite and nonnegative.")
        self.loss = _check_prob("loss", loss)
        if f not in ("h", "1"):
            raise ValueError(f"`f` must be 'h' or '1', got {f!r}.")
        if order not in (1, 2):
            raise ValueError(f"`order` must be 1 or 2, got {order!r}.")
        if tail is not None:
            tp, tq = _check_prob("tail p", tail[0]), _check_prob("tail q", tail[1])
            _tail_constants(tp, tq)
            tail = (tp, tq)
        self.forward, self.backward, self.gain = fwd, bwd, g
        self.f, self.order, self.tail = f, order, tail
        self.n = n
        for a in (fwd, bwd, g):
            a.setflags(write=False)

    # ---- structure -------------------------------------------------------------------------
    @property
    def is_forward(self) -> bool:
        """No backward moves (DFBM/SFBM): H is the stopping rank."""
        return self.tail is None and not np.any(self.backward > 0)

    @property
    def stop(self) -> np.ndarray:
        return np.clip(1.0 - self.forward - self.backward, 0.0, 1.0)

    def __repr__(self):
        kind = "forward" if self.is_forward else "random-walk"
        return (f"BrowsingModel(N={self.n}, {kind}, loss={self.loss}, f={self.f!r}, order={self.order}"
                f"{', tail=' + repr(self.tail) if self.tail else ''})")

    def _stopping_rank_pmf(self) -> np.ndarray:
        """P(H = h), h = 1..N, forward models."""
        surv = np.concatenate([[1.0], np.cumprod(self.forward[:-1])])
        return surv * (1.0 - self.forward)

    # ---- expectations ----------------------------------------------------------------------
    def expected_gain_and_steps(self):
        """``(E[Σ g], E[H])`` exactly (closed form, or the visit-count formula on the tridiagonal chain)."""
        if self.n == 0:
            return 0.0, 0.0
        if self.is_forward:
            surv = np.concatenate([[1.0], np.cumprod(self.forward[:-1])])
            return float(self.gain @ surv), float(surv.sum())
        fwd, diag, extra = self._folded_tail()
        eg, eh = _gain_and_steps_flat(fwd, self.backward, diag, self.gain, np.array([0, self.n]), self.loss,
                                      np.array([extra]))
        return float(eg[0]), float(eh[0])

    def _folded_tail(self):
        """(forward with no coupling past rank N, diagonal of I - Q, expected tail visits per visit of rank N).

        The endless tail is replaced by its effect on rank N: a return to N with
        probability ``forward[-1] * u`` (on the diagonal) and ``T`` tail documents
        read per excursion."""
        fwd = self.forward.copy()
        diag = np.ones(self.n)
        extra = 0.0
        if self.tail is not None:
            u, T = _tail_constants(*self.tail)
            diag[-1] -= fwd[-1] * u
            extra = fwd[-1] * T
        fwd[-1] = 0.0
        return fwd, diag, extra

    def expectation(self, order: Optional[int] = None, method: str = "auto") -> float:
        r"""Order 1: :math:`E[P@H]`; order 2: :math:`E[\sum g]/E[f(H)]`; both exact.

        Methods (docs/stopping-time.md; ``irmeasures_markov.core.birth_death``):

        - order 2, and order 1 with f = 1 (where :math:`P@H = \sum g`):
          forward models in closed form, :math:`\sum_i g_i \prod_{j<i} p_j`
          over :math:`\sum_i \prod_{j<i} p_j`; with backward moves the
          visit-count formula :math:`E_1[\sum g] = \sum_i g_i N_{1i} / ((1-c)
          N_{ii} + c)`, :math:`c = 1 - \lambda`, and :math:`E_1[H] = \sum_i
          N_{1i}`, from one tridiagonal solve for the row of the fundamental
          matrix :math:`N` and, when λ > 0, two ``?pttrf`` for its diagonal
          (:func:`~irmeasures_markov.core.birth_death.birth_death_discounted_visits`).
        - order 1, f = h, forward models: closed form
          :math:`\sum_h P(H = h) \sum_{i \le h} g_i / h`.
        - order 1, f = h, backward moves (RWBM): the generating function of
          :math:`H` integrated by Gauss–Legendre, exact to ~1e-15
          (:func:`~irmeasures_markov.core.birth_death.birth_death_average_reward`);
          ``method='recursion'`` uses the step recursion instead
          (:func:`~irmeasures_markov.core.birth_death.birth_death_average_reward_recursion`:
          per target rank a forward recursion carries the loss discount and a
          backward one E[1/H] of the remaining steps, truncated when the
          surviving mass is below 1e-12; O(N²·steps) with λ > 0, O(N·steps)
          without).

        Parameters
        ----------
        order : {1, 2}, optional
            default: the model's ``order``.
        method : {'auto', 'generating', 'recursion'}
            order 1 only: ``'auto'`` is the closed form for forward models and
            ``'generating'`` otherwise; ``'generating'`` and ``'recursion'``
            apply to any model without tail, forward or not.  With f = 1
            (order 1 = E[Σ g]) ``'auto'`` and ``'generating'`` use the
            visit-count formula, ``'recursion'`` the step recursion without
            1/H.  The methods agree to ~1e-12; the generating function is
            faster on long rankings (O(N · nodes)).
        """
        order = self.order if order is None else order
        if order not in (1, 2):
            raise ValueError(f"`order` must be 1 or 2, got {order!r}.")
        if method not in ORDER1_METHODS:
            raise ValueError(f"`method` must be one of {list(ORDER1_METHODS)}, got {method!r}.")
        if method != "auto" and order != 1:
            raise ValueError(f"`method` selects an order-1 method; order 2 has one exact method "
                             f"(got method={method!r} with order=2).")
        if self.n == 0:
            return 0.0
        if self.tail is not None and order == 1 and (self.f == "h" or method == "recursion"):
            raise ValueError("order 1 is not available with tail='inf' (use order 2).")
        if method == "recursion":
            return birth_death_average_reward_recursion(self.forward, self.backward, self.gain, 0, 1.0 - self.loss,
                                                        average=self.f == "h")
        if method == "generating" and self.f == "h":
            return float(birth_death_average_reward(self.forward, self.backward, self.gain, [0],
                                                    1.0 - self.loss).sum())
        if order == 2 or self.f == "1":
            eg, eh = self.expected_gain_and_steps()
            return eg if self.f == "1" else eg / eh
        if self.is_forward:
            pmf = self._stopping_rank_pmf()
            return float(pmf @ self._forward_values())
        return float(birth_death_average_reward(self.forward, self.backward, self.gain, [0],
                                                1.0 - self.loss).sum())

    def value(self) -> float:
        """The expectation of the model's default order."""
        return self.expectation(self.order)

    # ---- distributions ---------------------------------------------------------------------
    def _forward_values(self) -> np.ndarray:
        cum = np.cumsum(self.gain)
        return cum / np.arange(1, self.n + 1) if self.f == "h" else cum

    def distribution(self, n_users: int = DEFAULT_USERS, seed=0) -> PHDistribution:
        """Distribution of P@H.

        Forward models: exact (support = P@H at each stopping rank, merged).
        Otherwise: empirical distribution of ``n_users`` simulated users (seeded),
        with Monte Carlo standard errors of the CDF.
        """
        if self.n == 0:
            return PHDistribution(np.zeros(1), np.ones(1), True)
        if self.is_forward:
            vals, pmf = self._forward_values(), self._stopping_rank_pmf()
            keep = pmf > 0
            support, inv = np.unique(vals[keep], return_inverse=True)
            probs = np.bincount(inv, weights=pmf[keep], minlength=support.size)
            return PHDistribution(support, probs, True)
        sample = self.simulate(n_users, seed)
        support, counts = np.unique(sample, return_counts=True)
        probs = counts / sample.size
        F = np.cumsum(probs)
        return PHDistribution(support, probs, False, n_users=int(sample.size),
                              stderr=np.sqrt(np.clip(F * (1 - F), 0, None) / sample.size))

    def variance(self, n_users: int = DEFAULT_USERS, seed=0) -> float:
        """Var[P@H]: exact for forward models, Monte Carlo (``n_users``, ``seed``) otherwise."""
        if self.is_forward or self.n == 0:
            return self.distribution().variance()
        return float(np.var(self.simulate(n_users, seed)))

    def quantile(self, u, n_users: int = DEFAULT_USERS, seed=0):
        """Quantiles of P@H (exact for forward models, Monte Carlo otherwise)."""
        return self.distribution(n_users, seed).quantile(u)

    def simulate(self, n_users: int, seed=None, return_steps: bool = False, engine: str = "auto"):
        """P@H of ``n_users`` simulated users (the same seed gives the same users).

        Returns an array of P@H values, and also the stopping times H when
        ``return_steps``.  ``engine``: ``'numba'`` (compiled loop; the ``'auto'``
        choice when numba is installed) or ``'numpy'`` (vectorised over users).
        The two engines use different random streams.  ``tail='inf'`` is not simulated.
        """
        if isinstance(n_users, bool) or not isinstance(n_users, (int, np.integer)) or n_users < 1:
            raise ValueError(f"`n_users` must be a positive integer, got {n_users!r}.")
        if self.tail is not None:
            raise ValueError("simulation with tail='inf' is not supported.")
        if self.n == 0:
            z = np.zeros(n_users)
            return (z, z.astype(np.int64)) if return_steps else z
        values, steps = _simulate(self.forward, self.backward, self.gain, self.loss, self.f == "h",
                                  int(n_users), np.random.default_rng(seed), engine=engine)
        return (values, steps) if return_steps else values

    def dominance(self, other: "BrowsingModel", n_users: int = DEFAULT_USERS, seed=0,
                  z: float = 4.0) -> DominanceResult:
        """Order ≤3: does one run's P@H stochastically dominate the other's?

        Compares the CDFs on the union of the support points.  Exact
        distributions are compared with tolerance 1e-12; simulated ones treat a
        difference within ``z`` combined standard errors as a tie.
        """
        if not isinstance(other, BrowsingModel):
            raise TypeError("`other` must be a BrowsingModel.")
        return compare_distributions(self.distribution(n_users, seed), other.distribution(n_users, seed), z=z)


def compare_distributions(d1: PHDistribution, d2: PHDistribution, z: float = 4.0) -> DominanceResult:
    """First-order stochastic dominance between two P@H distributions (see :class:`DominanceResult`)."""
    xs = np.union1d(d1.support, d2.support)
    F1, F2 = d1.cdf(xs), d2.cdf(xs)
    diff = F1 - F2
    exact = d1.exact and d2.exact
    if exact:
        tol = np.full(xs.shape, 1e-12)
    else:
        var = np.zeros(xs.shape)
        for d, F in ((d1, F1), (d2, F2)):
            if not d.exact:
                var += F * (1 - F) / d.n_users
        tol = z * np.sqrt(var) + 1e-12
    sign = np.where(diff > tol, 1, np.where(diff < -tol, -1, 0))
    nz = np.flatnonzero(sign)
    crossings = []
    for a, b in zip(nz[:-1], nz[1:]):
        if sign[a] != sign[b]:
            crossings.append(xs[b - 1] if b - 1 > a else xs[a])
    pos, neg = np.any(sign > 0), np.any(sign < 0)
    # F1 >= F2 everywhere: run 1 is stochastically smaller
    relation = "incomparable" if (pos and neg) else "second" if pos else "first" if neg else "equal"
    return DominanceResult(relation, np.asarray(crossings, dtype=np.float64), exact,
                           float(np.max(np.abs(diff))) if diff.size else 0.0)


# ----------------------------------------------------------------------------------------------
# building models from rankings
# ----------------------------------------------------------------------------------------------

def _user_transitions(user, grades, relevant, gain_vals, n, p, b, g_max):
    """(forward, gain) of the classical instantiations (all forward models)."""
    fwd = np.ones(n)
    if user == "P":
        pass
    elif user == "RBP":
        fwd[:] = p
    elif user == "AP":
        rel = relevant.astype(np.int64)
        ahead = rel[::-1].cumsum()[::-1]           # relevant retrieved at ranks >= i
        with np.errstate(divide="ignore"):
            stop = np.where(rel > 0, 1.0 / np.maximum(ahead, 1), 0.0)
        fwd = 1.0 - stop
    elif user == "DCG":
        i = np.arange(1, n + 1, dtype=np.float64)
        disc = np.maximum(1.0, np.log(i) / math.log(b))
        disc_next = np.maximum(1.0, np.log(i + 1) / math.log(b))
        fwd = disc / disc_next
    elif user == "ERR":
        g = np.where(relevant, np.asarray(grades, dtype=np.float64), 0.0)
        fwd = 1.0 - (np.exp2(g) - 1.0) / 2.0 ** g_max
        gain_vals = np.zeros(n)
        if n:
            gain_vals[0] = 1.0
    if n:
        fwd[-1] = 0.0
    return fwd, gain_vals


def _user_defaults(user):
    return {"P": ("DFBM", "h", 1), "AP": ("SFBM", "h", 1), "RBP": ("SFBM", "h", 2),
            "DCG": ("SFBM", "1", 2), "ERR": ("SFBM", "h", 1)}[user]


def browsing_model(grades, *, browse: Optional[str] = None, p: Prob = 0.8, q: Prob = 0.0,
                   p_rel: Optional[Prob] = None, q_rel: Optional[Prob] = None, user: Optional[str] = None,
                   loss: float = 0.0, f: Optional[str] = None, order: Optional[int] = None,
                   top: str = "stop", tail: str = "none", gain: str = "binary", rel: int = 1,
                   b: float = 2.0, g_max: Optional[int] = None) -> BrowsingModel:
    """Build the P@H user model of one ranking (docs/stopping-time.md).

    Parameters
    ----------
    grades : array_like of int
        relevance grades in rank order (unjudged: anything below ``rel``).
    browse : {'DFBM', 'SFBM', 'RWBM'}
        browsing model (default 'SFBM'; fixed by ``user``).  DFBM takes none
        of ``p, q, p_rel, q_rel, loss, top, tail``; ``loss`` needs RWBM.
    p, q : float, array of length N, or callable ``(ranks, grades) -> array``
        forward / backward probabilities (at non-relevant documents when
        ``p_rel`` / ``q_rel`` are given; everywhere otherwise).  DFBM forces
        p = 1; SFBM needs q = 0.
    p_rel, q_rel : float, optional
        forward / backward probabilities at relevant documents.
    user : {'P', 'AP', 'RBP', 'DCG', 'ERR'}, optional
        a classical instantiation; fixes browse, f and order (giving a
        different one is an error; here ``None`` means unspecified, while the
        ``PH`` measure also treats its declared defaults, e.g. ``order=2``, as
        unspecified because its printed form omits them).
    loss : float
        utility loss λ in [0, 1] per revisit.
    f : {'h', '1'}
        normalisation f(H) (default 'h').
    order : {1, 2}
        default order of :meth:`BrowsingModel.value` (default 2; with
        ``user``, the user model's order).
    top : {'stop', 'forward'}
        where backward mass at rank 1 goes.
    tail : {'none', 'inf'}
        'inf' adds an endless tail of non-relevant documents browsed with
        ``p, q``, which must then be numbers (order 2 only).
    gain : {'binary', 'grade', 'exp2'}
        gain of a relevant document: 1, its grade, or 2^grade - 1.
    rel : int
        minimum relevant grade.
    b : float
        log base of DCG (user='DCG').
    g_max : int, optional
        maximum grade of ERR's stop probabilities (default: max of ``grades``, at least 1).

    Examples
    --------
    >>> round(browsing_model([1,0,0,1,0,0,1,0,0,1], user='AP').value(), 4)
    0.5821
    """
    grades = np.asarray(grades)
    if grades.ndim != 1:
        raise ValueError("`grades` must be 1-D (one ranking).")
    if grades.dtype.kind not in "iub":
        if grades.size and not np.all(np.equal(np.mod(grades, 1), 0)):
            raise ValueError("`grades` must be integers.")
        grades = grades.astype(np.int64)
    params = _model_params_iv(browse=browse, p=p, q=q, p_rel=p_rel, q_rel=q_rel, user=user, loss=loss, f=f,
                              order=order, top=top, tail=tail, gain=gain, b=b)
    n = grades.size
    relevant = grades >= rel
    gain_vals = _gain_values(grades, rel, params["gain"])
    ranks = np.arange(1, n + 1)
    user = params["user"]
    tail_pq = None
    if user is not None:
        gm = g_max if g_max is not None else max(1, int(grades.max()) if n else 1)
        fwd, gain_vals = _user_transitions(user, grades, relevant, gain_vals, n, params["p"], params["b"], gm)
        bwd = np.zeros(n)
        if user == "RBP" and params["tail"] == "inf":
            fwd[-1:] = params["p"]
            tail_pq = (params["p"], 0.0)
    else:
        fwd = _resolve_prob("p", p, p_rel, ranks, grades, relevant, n)
        bwd = _resolve_prob("q", q, q_rel, ranks, grades, relevant, n)
        if params["browse"] == "DFBM":
            fwd, bwd = np.ones(n), np.zeros(n)
        if np.any(fwd + bwd > 1 + 1e-12):
            i = int(np.argmax(fwd + bwd))
            raise ValueError(f"p + q must be <= 1; it is {fwd[i] + bwd[i]} at rank {i + 1}.")
        if params["browse"] == "SFBM" and np.any(bwd > 0):
            raise ValueError("SFBM has no backward moves: q (and q_rel) must be 0; use browse='RWBM'.")
        if n:
            if params["top"] == "forward":
                fwd[0] = min(1.0, fwd[0] + bwd[0])
            bwd[0] = 0.0
            if params["tail"] == "inf":
                tail_pq = (float(p), float(q))
            else:
                fwd[-1] = 0.0
    return BrowsingModel(fwd, bwd, gain_vals, loss=params["loss"], f=params["f"], order=params["order"],
                         tail=tail_pq)


def _resolve_prob(name, base, rel_value, ranks, grades, relevant, n):
    arr = _prob_array(name, base, ranks, grades, n)
    if arr is None:
        arr = np.full(n, float(base))
    if rel_value is not None:
        rarr = _prob_array(name + "_rel", rel_value, ranks, grades, n)
        arr = np.where(relevant, float(rel_value) if rarr is None else rarr, arr)
    return arr


def _given(value, default, flag):
    """Whether a parameter counts as given: as the plugin says (``flag``), else when not at its default."""
    if flag is not None:
        return bool(flag)
    return callable(value) or np.ndim(value) != 0 or value != default


def _unused_params(*, p, q, p_rel, q_rel, loss, top, tail, p_given, q_given):
    """Names of the browsing parameters given to a model that fixes its own browsing."""
    used = [name for name, given in (("p", _given(p, 0.8, p_given)), ("q", _given(q, 0.0, q_given)),
                                     ("p_rel", p_rel is not None), ("q_rel", q_rel is not None),
                                     ("loss", _given(loss, 0.0, None)), ("top", top != "stop"),
                                     ("tail", tail != "none")) if given]
    return sorted(used)


def _model_params_iv(*, browse, p, q, p_rel, q_rel, user, loss, f, order, top, tail, gain, b,
                     p_given=None, q_given=None):
    """Validate and normalise the model parameters (shared by the functional API and the plugin)."""
    if user is not None:
        if user not in USERS:
            raise ValueError(f"`user` must be one of {list(USERS)}, got {user!r}.")
        ubrowse, uf, uorder = _user_defaults(user)
        if browse is not None and browse != ubrowse:
            raise ValueError(f"user='{user}' is a {ubrowse} model; it conflicts with browse={browse!r}.")
        if order is not None and order != uorder and not (user in ("P", "DCG")):
            raise ValueError(f"user='{user}' is defined with order {uorder}; it conflicts with order={order!r}.")
        if f is not None and f != uf:
            raise ValueError(f"user='{user}' uses f='{uf}'; it conflicts with f={f!r}.")
        extras = _unused_params(p=p if user != "RBP" else 0.8, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top,
                                tail=tail if user != "RBP" else "none",
                                p_given=p_given if user != "RBP" else None, q_given=q_given)
        if extras:
            raise ValueError(f"user='{user}' fixes its browsing model; it does not take {extras}.")
        if user == "RBP":
            p = _check_prob("p", p)
            if tail == "inf" and p >= 1:
                raise ValueError("user='RBP' with tail='inf' needs p < 1.")
        if user == "DCG":
            if isinstance(b, bool) or not isinstance(b, (int, float)) or not b > 1:
                raise ValueError(f"`b` (DCG log base) must be a number > 1, got {b!r}.")
        browse, f, order = ubrowse, uf, uorder if order is None else order
    else:
        browse = "SFBM" if browse is None else browse
        if browse not in BROWSING_MODELS:
            raise ValueError(f"`browse` must be one of {list(BROWSING_MODELS)}, got {browse!r}.")
        if browse == "DFBM":
            used = _unused_params(p=p, q=q, p_rel=p_rel, q_rel=q_rel, loss=loss, top=top, tail=tail,
                                  p_given=p_given, q_given=q_given)
            if used:
                raise ValueError(f"browse='DFBM' reads every document (p = 1); it does not take {used}.")
        if browse != "RWBM" and loss != 0:
            raise ValueError("`loss` needs revisits; with browse='SFBM'/'DFBM' nobody revisits a document "
                             "(use browse='RWBM').")
        if tail == "inf":
            varying = [f"`{name}`" for name, v in (("p", p), ("q", q)) if callable(v) or np.ndim(v) != 0]
            if varying:
                raise ValueError(f"tail='inf' needs constant numbers `p` and `q` (the probabilities of the "
                                 f"endless non-relevant tail); {' and '.join(varying)} vary with the rank.")
        for name, v in (("p", p), ("q", q), ("p_rel", p_rel), ("q_rel", q_rel)):
            if v is not None and np.ndim(v) == 0 and not callable(v):
                _check_prob(name, v)
        for a, c, label in ((p, q, "p + q"), (p_rel if p_rel is not None else p,
                                              q_rel if q_rel is not None else q, "p_rel + q_rel")):
            if np.ndim(a) == 0 and np.ndim(c) == 0 and not callable(a) and not callable(c) \
                    and float(a) + float(c) > 1 + 1e-12:
                raise ValueError(f"{label} must be <= 1 (the rest is the stop probability), got "
                                 f"{float(a)} + {float(c)}.")
        if browse == "SFBM" and ((np.ndim(q) == 0 and not callable(q) and q != 0)
                                 or (q_rel is not None and np.ndim(q_rel) == 0 and q_rel != 0)):
            raise ValueError("SFBM has no backward moves: q (and q_rel) must be 0; use browse='RWBM'.")
        f = "h" if f is None else f
        order = 2 if order is None else order
    if f not in ("h", "1"):
        raise ValueError(f"`f` must be 'h' or '1', got {f!r}.")
    if order not in (1, 2):
        raise ValueError(f"`order` must be 1 or 2, got {order!r}.")
    if top not in ("stop", "forward"):
        raise ValueError(f"`top` must be 'stop' or 'forward', got {top!r}.")
    if tail not in ("none", "inf"):
        raise ValueError(f"`tail` must be 'none' or 'inf', got {tail!r}.")
    if tail == "inf" and order == 1 and f == "h":
        raise ValueError("tail='inf' is defined for order 2 only (E[sum g] / E[H]).")
    if gain not in GAINS:
        raise ValueError(f"`gain` must be one of {list(GAINS)}, got {gain!r}.")
    loss = _check_prob("loss", loss)
    return dict(browse=browse, p=p, q=q, user=user, loss=loss, f=f, order=order, top=top, tail=tail,
                gain=gain, b=float(b))


def path_at_h(grades, *, order: Optional[int] = None, **params) -> float:
    """P@H of one ranking: the expectation of order ``order`` (see :func:`browsing_model`)."""
    model = browsing_model(grades, order=order, **params)
    return model.value()


# ----------------------------------------------------------------------------------------------
# kernels shared by the single-ranking and batch paths
# ----------------------------------------------------------------------------------------------

def _gain_and_steps_flat(fwd, bwd, diag, gain, offsets, loss, extra):
    """(E[Σ g], E[H]) per block of stacked uncoupled chains (visit-count formula, O(total)).

    ``fwd`` must be 0 at every block's last rank and ``bwd`` 0 at every first
    rank; ``extra[b]`` are expected tail visits per visit of block b's last rank.
    """
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    starts = offsets[:-1][nonempty]
    visits, discounted = birth_death_discounted_visits(fwd, bwd, starts, 1.0 - loss, diag=diag)
    nq = lengths.size
    eg = np.zeros(nq)
    eh = np.zeros(nq)
    eg[nonempty] = np.add.reduceat(gain * discounted, starts)
    eh[nonempty] = np.add.reduceat(visits, starts)
    eh[nonempty] += visits[offsets[1:][nonempty] - 1] * np.asarray(extra, dtype=np.float64)[nonempty]
    return eg, eh


def _order1_flat(forward, backward, gain, offsets, loss):
    """E[Σ g / H] per block of stacked uncoupled chains (generating function, all blocks per node)."""
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    out = np.zeros(lengths.size)
    if gain.size == 0:
        return out
    starts = offsets[:-1][nonempty]
    terms = birth_death_average_reward(forward, backward, gain, starts, 1.0 - loss)
    out[nonempty] = np.add.reduceat(terms, starts)
    return out


def _numba_walk():
    try:
        from ._ph_walk_numba import walk
    except ImportError:
        return None
    return walk


ENGINES = ("auto", "numba", "numpy")


def _simulate(forward, backward, gain, loss, f_is_h, n_users, rng, engine="auto"):
    """Walk of ``n_users`` users; returns (P@H, H).

    ``engine='numba'`` (the default ``'auto'`` when numba is installed): a compiled
    loop over users; ``'numpy'``: vectorised over users, one step at a time.
    """
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {list(ENGINES)}, got {engine!r}.")
    walk = _numba_walk() if engine != "numpy" else None
    if engine == "numba" and walk is None:
        raise ValueError("engine='numba' needs numba (pip install numba).")
    if walk is not None:
        values = np.empty(n_users)
        steps = np.empty(n_users, dtype=np.int64)
        seed = int(rng.integers(0, 2 ** 63 - 1))
        walk(np.ascontiguousarray(forward), np.ascontiguousarray(forward + backward),
             np.ascontiguousarray(gain), 1.0 - loss, loss > 0, n_users, seed, values, steps)
        if f_is_h:
            values = values / steps
        return values, steps
    return _simulate_numpy(forward, backward, gain, loss, f_is_h, n_users, rng)


def _simulate_numpy(forward, backward, gain, loss, f_is_h, n_users, rng):
    """Vectorised walk of ``n_users`` users; returns (P@H, H).

    The End state is index N (gain 0, absorbing), so users that stopped stay
    put until the active set is compacted.
    """
    n = forward.size
    t_fwd = np.append(forward, 0.0)
    t_any = np.append(forward + backward, 0.0)
    g = np.append(gain, 0.0)
    values = np.empty(n_users)
    steps_out = np.empty(n_users, dtype=np.int64)
    c = 1.0 - loss
    chunk = _SIM_CHUNK if loss == 0 else max(1, min(_SIM_CHUNK, _SIM_CELLS // (n + 1)))
    end = n
    for start in range(0, n_users, chunk):
        m = min(chunk, n_users - start)
        uid = np.arange(m)
        pos = np.zeros(m, dtype=np.intp)
        acc = np.zeros(m)
        steps = np.zeros(m, dtype=np.int64)
        disc = np.ones(m * (n + 1)) if loss > 0 else None
        while uid.size:
            if disc is None:
                acc += g[pos]
            else:
                cell = uid * (n + 1) + pos
                d = disc[cell]
                acc += g[pos] * d
                disc[cell] = d * c
            steps += pos != end
            u = rng.random(uid.size)
            pos = np.where(u < t_fwd[pos], pos + 1, np.where(u < t_any[pos], pos - 1, end))
            dead = pos == end
            if dead.all():
                values[start + uid] = acc
                steps_out[start + uid] = steps
                break
            if np.count_nonzero(dead) * 2 > uid.size:
                values[start + uid[dead]] = acc[dead]
                steps_out[start + uid[dead]] = steps[dead]
                live = ~dead
                uid, pos, acc, steps = uid[live], pos[live], acc[live], steps[live]
    if f_is_h:
        values = values / np.maximum(steps_out, 1)
    return values, steps_out


# ----------------------------------------------------------------------------------------------
# batch (plugin) path
# ----------------------------------------------------------------------------------------------

def _segment_reverse_cumsum(values, offsets):
    out = np.empty(values.shape, dtype=np.float64)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        if b > a:
            out[a:b] = np.cumsum(values[a:b][::-1])[::-1]
    return out


def batch_transitions(batch, *, browse=None, p=0.8, q=0.0, p_rel=None, q_rel=None, user=None, top="stop",
                      tail="none", gain="binary", b=2.0, g_max=None):
    """Flat (forward, backward, gain, tail) arrays of every query of a RelevanceBatch."""
    offsets = batch.offsets
    lengths = np.diff(offsets)
    relevant = batch.relevant
    grades = batch.grades
    gain_vals = _gain_values(grades, batch.rel, gain)
    n = grades.size
    starts, lasts = offsets[:-1][lengths > 0], offsets[1:][lengths > 0] - 1
    ranks = batch.ranks.astype(np.float64)
    tail_pq = None
    bwd = np.zeros(n)
    if user is not None:
        fwd = np.ones(n)
        if user == "RBP":
            fwd[:] = p
        elif user == "AP":
            ahead = _segment_reverse_cumsum(relevant.astype(np.float64), offsets)
            fwd = np.where(relevant, 1.0 - 1.0 / np.maximum(ahead, 1.0), 1.0)
        elif user == "DCG":
            fwd = np.maximum(1.0, np.log(ranks) / math.log(b)) / np.maximum(1.0, np.log(ranks + 1) / math.log(b))
        elif user == "ERR":
            if g_max is None:
                g_max = np.ones(lengths.size)
            gm = np.repeat(np.maximum(np.asarray(g_max, dtype=np.float64), 1.0), lengths)
            g = np.where(relevant, grades, 0).astype(np.float64)
            fwd = 1.0 - (np.exp2(g) - 1.0) / np.exp2(gm)
            gain_vals = np.zeros(n)
            gain_vals[starts] = 1.0
        if user == "RBP" and tail == "inf":
            tail_pq = (float(p), 0.0)
        else:
            fwd[lasts] = 0.0
    else:
        if browse == "DFBM":
            fwd = np.ones(n)
        else:
            fwd = np.where(relevant, p if p_rel is None else p_rel, p).astype(np.float64)
            bwd = np.where(relevant, q if q_rel is None else q_rel, q).astype(np.float64)
        if top == "forward":
            fwd[starts] = np.minimum(1.0, fwd[starts] + bwd[starts])
        bwd[starts] = 0.0
        if tail == "inf":
            tail_pq = (float(p), float(q))
        else:
            fwd[lasts] = 0.0
    return fwd, bwd, gain_vals, tail_pq


def _segment_cumprod_shift(values, offsets):
    """Per segment: [1, v0, v0 v1, ...] (survival to each rank)."""
    out = np.empty(values.shape, dtype=np.float64)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        if b > a:
            out[a] = 1.0
            if b - a > 1:
                np.cumprod(values[a:b - 1], out=out[a + 1:b])
    return out


def pad_batch(batch, length: int):
    """``batch`` with every ranking shorter than ``length`` completed with non-relevant documents.

    The padding documents have grade ``min(0, rel - 1)`` (below ``rel``, so not
    relevant and without gain); rankings of ``length`` or more are unchanged.
    """
    from ..rankings import RelevanceBatch
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"`length` must be a positive integer, got {length!r}.")
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


def path_at_h_batch(batch, *, browse=None, p=0.8, q=0.0, p_rel=None, q_rel=None, user=None, loss=0.0,
                    f=None, order=None, top="stop", tail="none", gain="binary", b=2.0, g_max=None,
                    pad_to: Optional[int] = None) -> np.ndarray:
    """P@H of every query of a :class:`~irmeasures_markov.rankings.RelevanceBatch` (plugin path).

    Same methods as :class:`BrowsingModel` (exact throughout): forward models in
    closed form; with backward moves the queries are stacked into one chain
    of uncoupled blocks, so order 2 (visit-count formula) takes one
    tridiagonal solve, plus two ``?pttrf`` with loss, for all queries, and
    order 1 (generating-function integral) one factorisation per node.  Queries with no
    relevant document (RB = 0) or an empty ranking score 0.

    ``pad_to=k`` first completes every ranking shorter than k with
    non-relevant documents (:func:`pad_batch`): the user then browses k
    documents, as trec_eval's P@k divides by k.  ``None`` (the default) browses
    the ranking as retrieved, so a DFBM user reads N documents (the paper's H = N).
    """
    params = _model_params_iv(browse=browse, p=p, q=q, p_rel=p_rel, q_rel=q_rel, user=user, loss=loss, f=f,
                              order=order, top=top, tail=tail, gain=gain, b=b)
    if pad_to is not None:
        batch = pad_batch(batch, pad_to)
    offsets = batch.offsets
    lengths = np.diff(offsets)
    nq = lengths.size
    out = np.zeros(nq)
    if nq == 0 or offsets[-1] == 0:
        return out
    fwd, bwd, g, tail_pq = batch_transitions(batch, browse=params["browse"], p=p, q=q, p_rel=p_rel, q_rel=q_rel,
                                             user=params["user"], top=top, tail=tail, gain=gain, b=params["b"],
                                             g_max=g_max)
    f, order, loss = params["f"], params["order"], params["loss"]
    nonempty = lengths > 0
    starts = offsets[:-1]
    if tail_pq is None and not np.any(bwd > 0):
        surv = _segment_cumprod_shift(fwd, offsets)
        if order == 2 or f == "1":
            eg = np.zeros(nq)
            eh = np.zeros(nq)
            eg[nonempty] = np.add.reduceat(g * surv, starts[nonempty])
            eh[nonempty] = np.add.reduceat(surv, starts[nonempty])
            out = eg if f == "1" else np.divide(eg, eh, out=np.zeros(nq), where=eh > 0)
        else:
            cum = np.zeros(g.size)
            for a, bb in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
                if bb > a:
                    np.cumsum(g[a:bb], out=cum[a:bb])
            vals = cum / batch.ranks
            out[nonempty] = np.add.reduceat(surv * (1.0 - fwd) * vals, starts[nonempty])
    elif order == 2 or f == "1":
        lastpos = offsets[1:][nonempty] - 1
        diag = np.ones(g.size)
        ex = np.zeros(nq)
        fwd_c = fwd.copy()
        if tail_pq is not None:
            # the endless tail folded into each last rank (see BrowsingModel._folded_tail)
            u, T = _tail_constants(*tail_pq)
            diag[lastpos] -= fwd[lastpos] * u
            ex[nonempty] = fwd[lastpos] * T
        fwd_c[lastpos] = 0.0          # uncouples the queries' blocks
        eg, eh = _gain_and_steps_flat(fwd_c, bwd, diag, g, offsets, loss, ex)
        out = eg if f == "1" else np.divide(eg, eh, out=np.zeros(nq), where=eh > 0)
    else:
        out = _order1_flat(fwd, bwd, g, offsets, loss)
    out = np.asarray(out, dtype=np.float64)
    out[batch.recall_base == 0] = 0.0
    return out
