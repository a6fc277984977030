"""Markov Precision's model names: the paper models, ``UNIFORM`` and the kernels registered by name.

Ferrante, Ferro & Maistro, "Injecting User Models and Time into Precision via
Markov Chains", SIGIR 2014: a model ``CONN_STATES_KERNEL`` (``GL``/``LO``,
``AD``/``OR``, ``ID``/``LID``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irmeasures_markov._util._registry import RegisteredNames, Registry
from irmeasures_markov.io._content import registration_fingerprint
from irmeasures_markov.measures.markov_precision._kernels import KERNELS

__all__ = ["PAPER_MODELS", "MODELS", "Model", "CUSTOM_KERNELS", "register_kernel", "kernel_fingerprint",
           "ModelChoices", "parse_model", "KERNEL_REGISTRY"]

PAPER_MODELS = tuple(f"{c}_{s}_{k}" for c in ("GL", "LO") for s in ("AD", "OR") for k in ("ID", "LID"))
MODELS = PAPER_MODELS + ("UNIFORM",)

Model = str | Callable | np.ndarray

#: name -> (kernel, states) for kernels registered with :func:`register_kernel`.
CUSTOM_KERNELS: dict = {}
#: name -> fingerprint of the registered kernel (see :func:`kernel_fingerprint`)
_KERNEL_FINGERPRINTS: dict = {}
#: the rule of kernel names: upper-case, not a paper model
KERNEL_REGISTRY = Registry("kernel", lambda: CUSTOM_KERNELS, builtin=MODELS, upper=True,
                           builtin_message="{name!r} is a paper model name; choose another name for a custom kernel.")


def register_kernel(name: str, kernel: Callable | np.ndarray, states: str = "AD") -> str:
    """Give a custom kernel a model name usable everywhere, e.g. ``MP(model='MYKERNEL')``.

    Parameters
    ----------
    name : str
        Model name (stored upper-case); must not clash with a paper model.
    kernel : callable or (n, n) array
        A weight function ``alpha(i, j)`` of 1-based ranks or a weight matrix
        indexed by rank-1; may be non-symmetric (then the general censored-chain
        solver is used per ranking).
    states : {'AD', 'OR'}
        Whether the chain lives on all ranks or on the relevant ranks only.

    Returns
    -------
    str
        The name as stored (upper-case).

    Raises
    ------
    ValueError
        If ``name`` is a paper model, ``states`` is not 'AD' or 'OR', or a matrix is not square.
    """
    key = KERNEL_REGISTRY.key(name)
    if states not in ("AD", "OR"):
        raise ValueError(f"`states` must be 'AD' or 'OR', got {states!r}.")
    if not callable(kernel):
        kernel = np.asarray(kernel, dtype=np.float64)
        if kernel.ndim != 2 or kernel.shape[0] != kernel.shape[1]:
            raise ValueError(f"A custom kernel matrix must be square, got shape {kernel.shape}.")
    KERNEL_REGISTRY.register(key, (kernel, states))
    _KERNEL_FINGERPRINTS[key] = registration_fingerprint(kernel, states)
    return key


def kernel_fingerprint(name: str) -> str:
    """What identifies the kernel registered under ``name``: its weights and states for a weight matrix;
    for a function (whose content cannot be read) this registration, so results are not kept beyond it.

    Parameters
    ----------
    name : str
        A registered kernel's model name (any case).

    Returns
    -------
    str
        The fingerprint.
    """
    key = str(name).upper()
    return _KERNEL_FINGERPRINTS.get(key) or registration_fingerprint(*CUSTOM_KERNELS.get(key, (None,)))


class ModelChoices(RegisteredNames):
    """The valid ``model`` values: the paper models, UNIFORM and registered kernels."""

    def __init__(self):
        super().__init__(MODELS, lambda: CUSTOM_KERNELS)


def parse_model(model: str) -> tuple[str, str, str]:
    """Split a model name into ``(connectivity, states, kernel)``; ``UNIFORM`` gives ``('GL','AD','UNIFORM')``.

    Model names follow Ferrante, Ferro & Maistro, "Injecting User Models and
    Time into Precision via Markov Chains", SIGIR 2014 (any case accepted).

    Parameters
    ----------
    model : str
        A model name ``CONN_STATES_KERNEL`` or ``UNIFORM``.

    Returns
    -------
    tuple of (str, str, str)
        Connectivity (``'GL'``/``'LO'``), states (``'AD'``/``'OR'``) and kernel, upper-case.

    Raises
    ------
    TypeError
        If ``model`` is not a str.
    ValueError
        If ``model`` is not a model name of that form.
    """
    if not isinstance(model, str):
        raise TypeError(f"`model` must be a model name, got {type(model).__name__}.")
    name = model.upper()
    if name == "UNIFORM":
        return "GL", "AD", "UNIFORM"
    parts = name.split("_")
    if len(parts) != 3 or parts[0] not in ("GL", "LO") or parts[1] not in ("AD", "OR") or parts[2] not in KERNELS:
        known = ", ".join(MODELS + tuple(CUSTOM_KERNELS))
        raise ValueError(f"Unknown MP model {model!r}. Known models: {known} "
                         "(or pass a weight function / weight matrix as a custom kernel, or name one "
                         "with register_kernel).")
    return parts[0], parts[1], parts[2]
