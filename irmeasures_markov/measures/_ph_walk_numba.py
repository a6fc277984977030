"""Optional compiled walk for P@H simulation (used when numba is installed).

One user at a time.  Uniforms come from SplitMix64 (Steele, Lea & Flood,
OOPSLA 2014; passes BigCrush) seeded from the caller's
``numpy.random.Generator``, so the same seed gives the same users.  The
vectorised numpy walk in `stopping_time` is the fallback and the
reference; both are checked against the exact expectations in the tests.
"""
import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SCALE = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def walk(t_fwd, t_any, gain, c, use_loss, n_users, seed, values, steps):  # pragma: no cover - compiled
    state = np.uint64(seed)
    n = gain.size
    disc = np.ones(n)
    stamp = np.full(n, -1, dtype=np.int64)
    for u in range(n_users):
        pos = 0
        acc = 0.0
        h = 0
        while True:
            if use_loss:
                if stamp[pos] != u:
                    stamp[pos] = u
                    disc[pos] = 1.0
                acc += gain[pos] * disc[pos]
                disc[pos] *= c
            else:
                acc += gain[pos]
            h += 1
            state += _GOLDEN
            z = state
            # shifts by uint64 amounts: numba keeps the arithmetic in uint64
            z = (z ^ (z >> np.uint64(30))) * _M1
            z = (z ^ (z >> np.uint64(27))) * _M2
            z = z ^ (z >> np.uint64(31))
            r = float(z >> np.uint64(11)) * _SCALE
            if r < t_fwd[pos]:
                pos += 1
            elif r < t_any[pos]:
                pos -= 1
            else:
                break
        values[u] = acc
        steps[u] = h
