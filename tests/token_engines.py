"""Make :mod:`irmeasures_markov._util._token_sets`' ``'auto'`` engine answer with one engine, for tests of its callers.

The test modules import it as ``from token_engines import TOKEN_ENGINES, force_token_engine``
(pytest's default import mode puts this directory on ``sys.path``).  Both engines
are checked against Python sets and dicts in tests/_util/test_token_sets.py;
the callers' tests run under each to show the answers do not depend on it.
"""
from irmeasures_markov._util import _token_sets as token_sets

TOKEN_ENGINES = ("dict", "numba")


def force_token_engine(monkeypatch, engine):
    """``'auto'`` (what the readers and the columnar join ask for) becomes ``engine``; returns the list of the
    engines asked for since, to show the callers went through it."""
    asked = []
    real = token_sets._kernels

    def kernels(e):
        asked.append(e)
        return real(engine if e == "auto" else e)
    monkeypatch.setattr(token_sets, "_kernels", kernels)
    return asked
