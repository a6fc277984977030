"""From fitted parameters to measure parameters, per family (see FamilyFit.measure_parameters)."""
from __future__ import annotations


def measure_parameters(fit) -> dict:
    raise NotImplementedError(f"measure parameters of a {fit.family!r} fit are not implemented yet")
