"""The P@H user model on one ranking ([`BrowsingModel`][irmeasures_markov.BrowsingModel]) and its construction from
grades."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irmeasures_markov.core._birth_death_order1 import birth_death_average_reward, birth_death_average_reward_recursion
from irmeasures_markov.core._gains import grade_gains
from irmeasures_markov.measures.stopping_time._batch import apply_boundaries, gain_and_steps_flat, user_forward
from irmeasures_markov.measures.stopping_time._params import (
    Prob,
    check_choice,
    check_prob,
    model_params_iv,
    prob_array,
    tail_constants,
)
from irmeasures_markov.measures.stopping_time._results import DominanceResult, PHDistribution, compare_distributions
from irmeasures_markov.measures.stopping_time._simulation import DEFAULT_USERS, simulate_walk

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["BrowsingModel", "browsing_model", "path_at_h", "ORDER1_METHODS"]

#: order-1 methods of :meth:`BrowsingModel.expectation`
ORDER1_METHODS = ("auto", "generating", "recursion")


class BrowsingModel:
    """A P@H user model on one ranking: transitions, gains, utility loss and f.

    Build it with [`browsing_model`][irmeasures_markov.browsing_model] (from grades and named parameters) or directly
    from effective transition
    arrays: ``forward[i]`` / ``backward[i]`` are the probabilities of moving from rank i+1 to the next / previous rank
    after the boundary rules (so ``forward[-1] == 0`` unless ``tail`` is given, and ``backward[0] == 0``).

    Parameters
    ----------
    forward : array_like, shape (N,)
    backward : array_like, shape (N,)
    gain : array_like, shape (N,)
        ``gain(r[i])`` per rank (the utility of a first visit).
    loss : float
        λ in [0, 1]; the k-th visit of a document yields ``gain (1-λ)^(k-1)``.
    f : {'h', '1'}
        ``f(H) = H`` or ``1``.
    order : {1, 2}
        default order used by [`value`][irmeasures_markov.BrowsingModel.value].
    tail : (p, q) or None
        continue the ranking with endless non-relevant documents browsed with these probabilities (order 2 only).
    """

    def __init__(self, forward: np.ndarray, backward: np.ndarray, gain: np.ndarray, *, loss: float = 0.0,
                 f: str = "h", order: int = 2, tail: tuple | None = None) -> None:
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
        self.loss = check_prob("loss", loss)
        check_choice("f", f, ("h", "1"))
        check_choice("order", order, (1, 2))
        if tail is not None:
            tp, tq = check_prob("tail p", tail[0]), check_prob("tail q", tail[1])
            tail_constants(tp, tq)
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
    def expected_gain_and_steps(self) -> tuple[float, float]:
        """``(E[Σ g], E[H])`` exactly (closed form, or the visit-count formula on the tridiagonal chain).

        Returns
        -------
        tuple of (float, float)
            the expected total gain E[Σ g] and the expected number of steps E[H] ((0, 0) for an empty ranking).
        """
        if self.n == 0:
            return 0.0, 0.0
        if self.is_forward:
            surv = np.concatenate([[1.0], np.cumprod(self.forward[:-1])])
            return float(self.gain @ surv), float(surv.sum())
        eg, eh = gain_and_steps_flat(self.forward, self.backward, self.gain, np.array([0, self.n]), self.loss,
                                     self.tail)
        return float(eg[0]), float(eh[0])

    def expectation(self, order: int | None = None, method: str = "auto") -> float:
        r"""Order 1: $E[P@H]$; order 2: $E[\sum g]/E[f(H)]$; both exact.

        Methods (docs/stopping-time.md; ``irmeasures_markov.core``):

        - order 2, and order 1 with f = 1 (where $P@H = \sum g$): forward models in closed form, $\sum_i g_i
          \prod_{j<i} p_j$ over $\sum_i \prod_{j<i} p_j$; with backward moves the visit-count formula
          $E_1[\sum g] = \sum_i g_i N_{1i} / ((1-c) N_{ii} + c)$, $c = 1 - \lambda$, and $E_1[H] =
          \sum_i N_{1i}$, from one tridiagonal solve for the row of the fundamental matrix $N$ and, when λ > 0,
          two ``?pttrf`` for its diagonal
          ([`birth_death_discounted_visits`][irmeasures_markov.core.birth_death_discounted_visits]).
        - order 1, f = h, forward models: closed form $\sum_h P(H = h) \sum_{i \le h} g_i / h$.
        - order 1, f = h, backward moves (RWBM): the generating function of $H$ integrated by Gauss–Legendre,
          exact to ~1e-15 ([`birth_death_average_reward`][irmeasures_markov.core.birth_death_average_reward]);
          ``method='recursion'`` uses the step recursion instead
          ([`birth_death_average_reward_recursion`][irmeasures_markov.core.birth_death_average_reward_recursion]: per
          target rank a
          forward recursion carries the loss discount and a backward one E[1/H] of the remaining steps, truncated when
          the surviving mass is below 1e-12; O(N²·steps) with λ > 0, O(N·steps) without).

        Parameters
        ----------
        order : {1, 2}, optional
            default: the model's ``order``.
        method : {'auto', 'generating', 'recursion'}
            order 1 only: ``'auto'`` is the closed form for forward models and ``'generating'`` otherwise;
            ``'generating'`` and ``'recursion'`` apply to any model without tail, forward or not. With f = 1 (order 1 =
            E[Σ g]) ``'auto'`` and ``'generating'`` use the visit-count formula, ``'recursion'`` the step recursion
            without 1/H. The methods agree to ~1e-12; the generating function is faster on long rankings (O(N · nodes)).

        Returns
        -------
        float
            the expectation of P@H of that order (0 for an empty ranking).
        """
        order = self.order if order is None else order
        check_choice("order", order, (1, 2))
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
        if method != "generating" or self.f != "h":
            if order == 2 or self.f == "1":
                eg, eh = self.expected_gain_and_steps()
                return eg if self.f == "1" else eg / eh
            if self.is_forward:
                return float(self._stopping_rank_pmf() @ self._forward_values())
        return float(birth_death_average_reward(self.forward, self.backward, self.gain, [0],
                                                1.0 - self.loss).sum())

    def value(self) -> float:
        """The expectation of the model's default order.

        Returns
        -------
        float
            [`expectation`][irmeasures_markov.BrowsingModel.expectation] of order ``self.order``.
        """
        return self.expectation(self.order)

    # ---- distributions ---------------------------------------------------------------------
    def _forward_values(self) -> np.ndarray:
        cum = np.cumsum(self.gain)
        return cum / np.arange(1, self.n + 1) if self.f == "h" else cum

    def distribution(self, n_users: int = DEFAULT_USERS, seed: int | None = 0) -> PHDistribution:
        """Distribution of P@H.

        Forward models: exact (support = P@H at each stopping rank, merged). Otherwise: empirical distribution of
        ``n_users`` simulated users (seeded), with Monte Carlo standard errors of the CDF.

        Parameters
        ----------
        n_users : int
            number of simulated users (models with backward moves only).
        seed : int or None
            seed of the simulation (None: fresh randomness).

        Returns
        -------
        PHDistribution
            the support points of P@H with their probabilities (exact, or empirical with standard errors).
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

    def variance(self, n_users: int = DEFAULT_USERS, seed: int | None = 0) -> float:
        """Var[P@H]: exact for forward models, Monte Carlo (``n_users``, ``seed``) otherwise.

        Parameters
        ----------
        n_users : int
            number of simulated users (models with backward moves only).
        seed : int or None
            seed of the simulation.

        Returns
        -------
        float
            the variance of P@H.
        """
        if self.is_forward or self.n == 0:
            return self.distribution().variance()
        return float(np.var(self.simulate(n_users, seed)))

    def quantile(self, u: ArrayLike, n_users: int = DEFAULT_USERS, seed: int | None = 0) -> np.ndarray:
        """Quantiles of P@H (exact for forward models, Monte Carlo otherwise).

        Parameters
        ----------
        u : array_like of float
            probability levels in [0, 1].
        n_users : int
            number of simulated users (models with backward moves only).
        seed : int or None
            seed of the simulation.

        Returns
        -------
        numpy.ndarray
            the quantile of P@H at each level of ``u``.
        """
        return self.distribution(n_users, seed).quantile(u)

    def simulate(self, n_users: int, seed: int | None = None, return_steps: bool = False,
                 engine: str = "auto") -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """P@H of ``n_users`` simulated users (the same seed gives the same users).

        Returns an array of P@H values, and also the stopping times H when ``return_steps``.  ``engine``: ``'numba'``
        (compiled loop; the ``'auto'`` choice when numba is installed) or ``'numpy'`` (vectorised over users). The two
        engines use different random streams.  ``tail='inf'`` is not simulated.

        Parameters
        ----------
        n_users : int
            number of simulated users (positive).
        seed : int or None
            seed of the random generator (None: fresh randomness).
        return_steps : bool
            also return the stopping time H of each user.
        engine : {'auto', 'numba', 'numpy'}
            simulation engine.

        Returns
        -------
        numpy.ndarray or tuple of (numpy.ndarray, numpy.ndarray)
            P@H of each user, or ``(values, steps)`` with ``return_steps``.
        """
        if isinstance(n_users, bool) or not isinstance(n_users, (int, np.integer)) or n_users < 1:
            raise ValueError(f"`n_users` must be a positive integer, got {n_users!r}.")
        if self.tail is not None:
            raise ValueError("simulation with tail='inf' is not supported.")
        if self.n == 0:
            z = np.zeros(n_users)
            return (z, z.astype(np.int64)) if return_steps else z
        values, steps = simulate_walk(self.forward, self.backward, self.gain, self.loss, self.f == "h",
                                  int(n_users), np.random.default_rng(seed), engine=engine)
        return (values, steps) if return_steps else values

    def dominance(self, other: BrowsingModel, n_users: int = DEFAULT_USERS, seed: int | None = 0,
                  z: float = 4.0) -> DominanceResult:
        """Order ≤3: does one run's P@H stochastically dominate the other's?

        Compares the CDFs on the union of the support points.  Exact distributions are compared with tolerance 1e-12;
        simulated ones treat a difference within ``z`` combined standard errors as a tie.

        Parameters
        ----------
        other : BrowsingModel
            the model of the other run.
        n_users : int
            number of simulated users per model (models with backward moves only).
        seed : int or None
            seed of the simulations.
        z : float
            number of combined standard errors within which simulated CDFs tie.

        Returns
        -------
        DominanceResult
            which of the two distributions, if either, dominates the other.
        """
        if not isinstance(other, BrowsingModel):
            raise TypeError("`other` must be a BrowsingModel.")
        return compare_distributions(self.distribution(n_users, seed), other.distribution(n_users, seed), z=z)


def browsing_model(grades: ArrayLike, *, browse: str | None = None, p: Prob = 0.8, q: Prob = 0.0,
                   p_rel: Prob | None = None, q_rel: Prob | None = None, user: str | None = None,
                   loss: float = 0.0, f: str | None = None, order: int | None = None,
                   top: str = "stop", tail: str = "none", gain: str = "binary", rel: int = 1,
                   b: float = 2.0, g_max: int | None = None) -> BrowsingModel:
    """Build the P@H user model of one ranking (docs/stopping-time.md).

    Parameters
    ----------
    grades : array_like of int
        relevance grades in rank order (unjudged: anything below ``rel``).
    browse : {'DFBM', 'SFBM', 'RWBM'}
        browsing model (default 'SFBM'; fixed by ``user``).  DFBM takes none
        of ``p, q, p_rel, q_rel, loss, top, tail``; ``loss`` needs RWBM.
    p : float, array of length N, or callable ``(ranks, grades) -> array``
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given; everywhere
        otherwise).  DFBM forces p = 1; SFBM needs q = 0.
    q : float, array of length N, or callable ``(ranks, grades) -> array``
        forward / backward probabilities (at non-relevant documents when ``p_rel`` / ``q_rel`` are given; everywhere
        otherwise).  DFBM forces p = 1; SFBM needs q = 0.
    p_rel : float, optional
        forward / backward probabilities at relevant documents.
    q_rel : float, optional
        forward / backward probabilities at relevant documents.
    user : {'P', 'AP', 'RBP', 'DCG', 'ERR'}, optional
        a classical instantiation; fixes browse, f and order (giving a different one is an error; here ``None`` means
        unspecified, while the ``PH`` measure also treats its declared defaults, e.g. ``order=2``, as unspecified
        because its printed form omits them).
    loss : float
        utility loss λ in [0, 1] per revisit.
    f : {'h', '1'}
        normalisation f(H) (default 'h').
    order : {1, 2}
        default order of [`BrowsingModel.value`][irmeasures_markov.BrowsingModel.value] (default 2; with ``user``, the
        user model's order).
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

    Returns
    -------
    BrowsingModel
        the user model of the ranking; [`BrowsingModel.value`][irmeasures_markov.BrowsingModel.value] gives its P@H.

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
    params = model_params_iv(browse=browse, p=p, q=q, p_rel=p_rel, q_rel=q_rel, user=user, loss=loss, f=f,
                              order=order, top=top, tail=tail, gain=gain, b=b)
    n = grades.size
    relevant = grades >= rel
    gain_vals = grade_gains(grades, rel, params["gain"])
    ranks = np.arange(1, n + 1)
    user = params["user"]
    if user is not None:
        gm = g_max if g_max is not None else max(1, int(grades.max()) if n else 1)
        fwd = user_forward(user, relevant, grades, ranks, np.array([0, n]), params["p"], params["b"], 2.0 ** gm)
        if user == "ERR":
            gain_vals = np.zeros(n)
            gain_vals[:1] = 1.0
        bwd = np.zeros(n)
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
    # an empty ranking has no boundary, but a user model keeps its endless tail (RBP) even then
    tail_pq = None
    if n or user is not None:
        first = np.arange(min(n, 1))
        tail_pq = apply_boundaries(fwd, bwd, first, first + n - 1, params["top"], params["tail"], p,
                                   0.0 if user else q)
    return BrowsingModel(fwd, bwd, gain_vals, loss=params["loss"], f=params["f"], order=params["order"], tail=tail_pq)


def _resolve_prob(name, base, rel_value, ranks, grades, relevant, n):
    arr = prob_array(name, base, ranks, grades, n)
    if arr is None:
        arr = np.full(n, float(base))
    if rel_value is not None:
        rarr = prob_array(name + "_rel", rel_value, ranks, grades, n)
        arr = np.where(relevant, float(rel_value) if rarr is None else rarr, arr)
    return arr


def path_at_h(grades: ArrayLike, *, order: int | None = None, **params: object) -> float:
    """P@H of one ranking: the expectation of order ``order`` (see
    [`browsing_model`][irmeasures_markov.browsing_model]).

    Parameters
    ----------
    grades : array_like of int
        relevance grades in rank order.
    order : {1, 2}, optional
        order of the expectation (default: that of the user model, see
        [`browsing_model`][irmeasures_markov.browsing_model]).
    **params : object
        the other keyword arguments of [`browsing_model`][irmeasures_markov.browsing_model].

    Returns
    -------
    float
        the expectation of P@H of that order.
    """
    model = browsing_model(grades, order=order, **params)
    return model.value()
