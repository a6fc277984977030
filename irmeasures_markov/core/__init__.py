"""The solver core: finite Markov chains with numpy/scipy only.

Nothing here knows about queries, documents or ir_measures; measures build
chains from rankings and call these functions.  Two families use it:

- Markov Precision: stationary distributions, censored chains
  (`chains`);
- P@H: birth–death (tridiagonal) absorbing chains, stacked end to end and
  solved in one pass: the LAPACK solves and the subtraction-free
  elimination for chains that are rarely absorbed (`_birth_death`), the
  order-1 averaged rewards with their truncation and quadrature
  (`_birth_death_order1`).
"""
from irmeasures_markov.core._birth_death import (
    birth_death_discounted_visits,
    birth_death_inverse_diagonal,
    birth_death_solve,
    birth_death_solve_pair,
)
from irmeasures_markov.core._birth_death_order1 import birth_death_average_reward, birth_death_average_reward_recursion
from irmeasures_markov.core._chains import (
    censored_transition_matrix,
    is_irreducible,
    stationary_distribution,
    transition_matrix_from_weights,
)

__all__ = [
    "censored_transition_matrix", "is_irreducible", "stationary_distribution", "transition_matrix_from_weights",
    "birth_death_average_reward", "birth_death_average_reward_recursion", "birth_death_discounted_visits",
    "birth_death_inverse_diagonal", "birth_death_solve", "birth_death_solve_pair",
]
