r"""Birth–death (tridiagonal) absorbing chains: the public face of the solver core.

A birth–death chain moves only between neighbouring states: from state
:math:`i` to :math:`i+1` with probability ``forward[i]``, to :math:`i-1` with
``backward[i]``, and is absorbed with the rest.  Several independent chains can
be stacked end to end in one array (a zero coupling between blocks), and every
function here solves all blocks in one pass:

- :func:`birth_death_solve`, :func:`birth_death_solve_pair`: solves with
  :math:`M = D - zQ` and :math:`M^T`;
- :func:`birth_death_expected_visits`: rows of :math:`N = (I - Q)^{-1}`;
- :func:`birth_death_discounted_visits`: expected visits whose value decays
  geometrically with each revisit;
- :func:`birth_death_inverse_diagonal`: the diagonal of :math:`M^{-1}`;
- :func:`birth_death_average_reward`: :math:`E[\frac1H \sum_{n \le H} r(X_n)
  c^{k(n)-1}]` (:math:`H` the absorption time, :math:`k(n)` the visit count),
  and :func:`birth_death_average_reward_recursion`, the same by step recursions.

The solves live in :mod:`.birth_death_lapack`, the order-1 quantities in
:mod:`.birth_death_order1`, their quadrature in :mod:`.birth_death_quadrature`.
"""
from __future__ import annotations

from .birth_death_lapack import (
                                 batched_inverse_diagonal,
                                 batched_tridiagonal_solve,
                                 birth_death_discounted_visits,
                                 birth_death_expected_visits,
                                 birth_death_inverse_diagonal,
                                 birth_death_solve,
                                 birth_death_solve_pair,
                                 graded_gauss_legendre,
)
from .birth_death_order1 import (
                                 MAX_RECURSION_VISITS,
                                 ORDER1_QUADRATURE_TOL,
                                 ORDER1_TRUNCATION_TOL,
                                 birth_death_average_reward,
                                 birth_death_average_reward_recursion,
)

__all__ = ["batched_tridiagonal_solve", "batched_inverse_diagonal", "graded_gauss_legendre",
           "birth_death_inverse_diagonal", "birth_death_solve", "birth_death_solve_pair",
           "birth_death_expected_visits", "birth_death_discounted_visits", "birth_death_average_reward",
           "birth_death_average_reward_recursion", "MAX_RECURSION_VISITS", "ORDER1_QUADRATURE_TOL",
           "ORDER1_TRUNCATION_TOL"]
