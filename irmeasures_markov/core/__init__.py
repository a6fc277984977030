"""The solver core: finite Markov chains with numpy/scipy only.

Nothing here knows about queries, documents or ir_measures; measures build
chains from rankings and call these functions.
"""
from .absorbing import (
    absorption_probabilities,
    expected_reward,
    expected_visits,
    fundamental_matrix,
    hitting_probabilities,
    return_probabilities,
    solve_tridiagonal,
    tridiagonal_expected_reward,
    tridiagonal_hitting_and_return,
)
from .chains import (
    MarkovChain,
    censored_transition_matrix,
    is_irreducible,
    reversible_stationary_distribution,
    stationary_distribution,
    transition_matrix_from_weights,
)

__all__ = [
    "MarkovChain", "censored_transition_matrix", "is_irreducible",
    "reversible_stationary_distribution", "stationary_distribution",
    "transition_matrix_from_weights",
    "absorption_probabilities", "expected_reward", "expected_visits", "fundamental_matrix",
    "hitting_probabilities", "return_probabilities", "solve_tridiagonal",
    "tridiagonal_expected_reward", "tridiagonal_hitting_and_return",
]
from .birth_death import (  # noqa: E402
    batched_inverse_diagonal,
    batched_tridiagonal_solve,
    birth_death_average_reward,
    birth_death_average_reward_recursion,
    birth_death_discounted_visits,
    birth_death_expected_visits,
    birth_death_inverse_diagonal,
    birth_death_solve,
    birth_death_solve_pair,
    graded_gauss_legendre,
)

__all__ += ["batched_inverse_diagonal", "batched_tridiagonal_solve", "birth_death_average_reward",
            "birth_death_average_reward_recursion", "birth_death_discounted_visits",
            "birth_death_expected_visits", "birth_death_inverse_diagonal", "birth_death_solve",
            "birth_death_solve_pair", "graded_gauss_legendre"]
