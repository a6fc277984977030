"""From fitted parameters to measure parameters, per family (see FamilyFit.measure_parameters)."""
from __future__ import annotations

import numpy as np

__all__ = ["measure_parameters"]


def _mp(fit) -> dict:
    p = fit.params
    rates = p.get("rates")
    rates = None if rates is None else np.asarray(rates, dtype=np.float64)
    states = p["states"]
    if p["kernel"] == "nonparametric":
        w = {int(k): float(v) for k, v in p["weights"].items()}
        far_fwd = w[max(w)]
        far_bwd = w[min(w)]

        def alpha(i, j):
            # displacements beyond the log's ranking keep the weight of the longest observed jump
            d = np.asarray(j, dtype=np.int64) - np.asarray(i, dtype=np.int64)
            out = np.where(d > 0, far_fwd, far_bwd).astype(np.float64)
            for k, v in w.items():
                out = np.where(d == k, v, out)
            return np.where(d == 0, 0.0, out)
        return {"kernel": alpha, "states": states, "rates": rates}
    conn, kern, decay = p["connectivity"], p["kernel"], float(p["decay"])
    if conn == "LO" and states == "OR":
        if decay == 1.0:
            return {"kernel": None, "model": f"LO_OR_{kern}", "states": states, "rates": rates}
        raise ValueError("an LO_OR chain (neighbours in the list of relevant ranks) with a fitted decay is not a "
                         "kernel of rank pairs; it cannot be registered as an MP model")
    base = (lambda d: d + 1.0) if kern == "ID" else (lambda d: np.log10(d + 2.0))

    def alpha(i, j):
        d = np.abs(np.asarray(i, dtype=np.float64) - np.asarray(j, dtype=np.float64))
        w = base(d) ** (-decay)
        if conn == "LO":
            w = np.where(d == 1, w, 0.0)
        return np.where(d == 0, 0.0, w)
    out = {"kernel": alpha, "states": states, "rates": rates}
    if decay == 1.0:
        out["model"] = f"{conn}_{states}_{kern}"
    return out


def _ph(fit) -> dict:
    p = fit.params
    out = {"browse": p["browse"]}
    if p["browse"] != "DFBM":
        out["p"] = float(p["p"])
        if p["browse"] == "RWBM":
            out["q"] = float(p["q"])
        for k in ("p_rel", "q_rel"):
            if k in p and (k != "q_rel" or p["browse"] == "RWBM"):
                out[k] = float(p[k])
    return out


def _carterette(fit) -> dict:
    from .carterette import stop_probabilities
    p = fit.params
    dist = p["dist"]
    if dist in ("ERR", "AP", "RRR"):
        out = {"stop_probabilities": None, "dist": dist}
        if "theta" in p:
            out["theta"] = float(p["theta"])
        return out
    out = {"stop_probabilities": lambda n: stop_probabilities(dist, p, int(n))}
    if dist != "empirical":
        out["dist"] = dist
        if "theta" in p:
            out["theta"] = float(p["theta"])
    return out


def _tbg(fit) -> dict:
    return {k: float(fit.params[k]) for k in ("pc_rel", "pc_nonrel", "halflife", "t_summary") if k in fit.params}


def measure_parameters(fit) -> dict:
    """What the family's measure takes (shapes documented in FamilyFit.measure_parameters)."""
    conv = {"mp": _mp, "ph": _ph, "carterette": _carterette, "tbg": _tbg}.get(fit.family)
    if conv is None:
        raise ValueError(f"unknown family {fit.family!r}")
    return conv(fit)
