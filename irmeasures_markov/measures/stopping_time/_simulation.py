"""Monte Carlo walk of P@H users: a compiled loop (numba) or numpy vectorised over users."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irmeasures_markov._util._compiled import optional_kernels

__all__ = ["DEFAULT_USERS", "ENGINES", "numba_walk", "simulate_walk"]

#: default number of simulated users when no exact method exists
DEFAULT_USERS = 1_000_000
#: users x ranks cells held at once by the simulation with utility loss
_SIM_CELLS = 1 << 22
_SIM_CHUNK = 1 << 20


_WALK: list = []   # the compiled walk's module, or None without numba; loaded on first use


def numba_walk() -> Callable | None:
    """The compiled walk of `irmeasures_markov.measures._ph_walk_numba`, or ``None`` without numba."""
    kernels = optional_kernels(_WALK, "irmeasures_markov.measures._ph_walk_numba")
    return None if kernels is None else kernels.walk


ENGINES = ("auto", "numba", "numpy")


def simulate_walk(forward: np.ndarray, backward: np.ndarray, gain: np.ndarray, loss: float, f_is_h: bool,
                  n_users: int, rng: np.random.Generator, engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Walk of ``n_users`` users; returns (P@H, H).

    ``engine='numba'`` (the default ``'auto'`` when numba is installed): a compiled
    loop over users; ``'numpy'``: vectorised over users, one step at a time.
    """
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {list(ENGINES)}, got {engine!r}.")
    walk = numba_walk() if engine != "numpy" else None
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
