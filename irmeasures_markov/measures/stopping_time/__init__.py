r"""P@H: stopping-time measures (Ferrante & Ferro, ICTIR 2020).

A user starts at rank 1 and moves among ranks as an absorbing Markov chain on
$\{End\} \cup \{1..N\}$: from rank $i$ forward with probability
$p_i$, backward with $q_i$, stop with $s_i = 1 - p_i - q_i$.
$H$ is the number of documents visited (the stopping time) and

$$
P@H = \frac{1}{f(H)} \sum_{n=1}^{H} g(k(n), r[X_n]),
\qquad g(k, y) = \mathrm{gain}(y) (1-\lambda)^{k-1},
$$

with $k(n)$ the visit count of $X_n$ so far and $f(h) = h$
or $1$.  P@H is a random variable; runs are ordered by

- order 1: $E[P@H]$;
- order 2: $E[\sum g] / E[f(H)]$;
- order 3: first-order stochastic dominance of the distributions.

Boundaries (docs/stopping-time.md): forward mass at rank N stops; backward mass at rank 1
stops (``top='stop'``) or goes forward (``top='forward'``).  ``tail='inf'``
continues the ranking with infinitely many non-relevant documents browsed with
the non-relevant ``p, q`` (RBP(∞), $K(p, q, \infty)$; order 2 only).

Exact methods, and where each is used (the chain algebra is in
`irmeasures_markov.core`; this package builds the chains and
sums per query):

- **forward models** (no backward moves: DFBM, SFBM): $H$ is the stopping
  rank, $P(H = h) = (1-p_h)\prod_{j<h} p_j$; expectation (both orders),
  variance, distribution and quantiles are closed form.
- **order 2** (and order 1 with f = 1): visit-count formula $E_1[\sum g]
  = \sum_i \mathrm{gain}_i N_{1i} / ((1-c) N_{ii} + c)$, $c = 1-\lambda$,
  and $E_1[H] = \sum_i N_{1i}$ with $N = (I - \tilde P)^{-1}$ the
  tridiagonal fundamental matrix: its first row from one tridiagonal solve,
  its diagonal (λ > 0 only) from two ``?pttrf``
  (``core._birth_death.birth_death_discounted_visits``).  With λ = 0 this is
  $((I - \tilde P)^{-1} \rho)_1$.
- **order 1, backward moves, f = h** (with or without λ): generating function
  of the stopping time, $1/H = \int_0^1 z^{H-1} dz$, so
  $E[\sum g / H] = \int_0^1 \sum_i \mathrm{gain}_i\, N^z_{1i}\,
  \psi^z_i / ((1-c) N^z_{ii} + c)\, dz$ with $N^z = (I - z\tilde P)^{-1}$,
  $\psi^z = N^z s$ (``core.birth_death_order1.birth_death_average_reward``).
  The ranking is first cut where the walk from rank 1 is no longer reached
  (probability below 1e-16, bounded by $\prod_{j<i} p_j / (1 - q_j
  \bar a_{j-1})$), then one Gauss–Legendre rule integrates with as many
  nodes as Trefethen's a-priori error bound asks for 1e-15 (the integrand is
  a power series with nonnegative coefficients, analytic for $|z| <
  1/\rho(\tilde P)$, bounded there by its value on the real axis); each
  node costs two ``?pttrf`` and two ``?gttrs`` (O(N)), and queries with
  identical chains (p, q not depending on relevance) are integrated once.
- **order 1 by step recursion** (``expectation(1, method='recursion')``):
  per target rank a forward recursion carries the expected loss discount and
  a backward recursion $E[1/H]$ of the remaining steps, truncated when
  the surviving mass is below 1e-12
  (``core.birth_death_order1.birth_death_average_reward_recursion``); agrees with
  the generating function to ~1e-12 but costs O(N²·steps) with λ > 0.
- **distribution, variance, quantiles with backward moves**: no exact method
  is implemented; they come from a seeded Monte Carlo simulation and carry
  their standard errors (``exact=False``).

In the batch (plugin) path all queries of a run are one stack of uncoupled
chains (forward 0 at each last rank, backward 0 at each first rank), so every
tridiagonal solve or factorisation above serves all queries at once.
"""
from __future__ import annotations

from irmeasures_markov.core._gains import GAINS

# The package splits along the seams of the computation: parameters and their validation
# (params), result objects (results), the model of one ranking (model), the Monte Carlo walk
# (simulation) and the batch path of the plugin with the expectation kernels on stacked chains
# (batch).  The public names are importable from here; helpers the modules share are public
# in their own module (params.model_params_iv, batch.order1_flat, simulation.simulate_walk).
from irmeasures_markov.measures.stopping_time._batch import batch_transitions, pad_batch, path_at_h_batch
from irmeasures_markov.measures.stopping_time._model import ORDER1_METHODS, BrowsingModel, browsing_model, path_at_h
from irmeasures_markov.measures.stopping_time._params import BROWSING_MODELS, USERS, Prob, k_infinite, rbp_normaliser
from irmeasures_markov.measures.stopping_time._results import DominanceResult, PHDistribution, compare_distributions
from irmeasures_markov.measures.stopping_time._simulation import DEFAULT_USERS, ENGINES

__all__ = [
    "BROWSING_MODELS", "USERS", "GAINS", "ORDER1_METHODS", "DEFAULT_USERS", "ENGINES", "Prob",
    "BrowsingModel", "PHDistribution", "DominanceResult", "compare_distributions",
    "browsing_model", "path_at_h", "path_at_h_batch", "batch_transitions", "pad_batch", "k_infinite",
    "rbp_normaliser",
]
