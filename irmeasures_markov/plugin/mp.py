"""ir_measures Measures for Markov Precision: ``MP`` and ``MPcont``."""
from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from ..io import read_rates
from ..measures.markov_precision import ModelChoices, markov_precision_batch
from .base import FLOAT, FamilyMeasure, ParamInfo, register_measure
from .tbg import LENGTH_PARAMS, TIME_MODEL_PARAMS, tbg_rates, time_parameters

__all__ = ["MP", "MPcont"]

_MP_PARAMS = {
    "cutoff": ParamInfo(dtype=int, required=False, desc="ranking cutoff: evaluate the first k documents only"),
    "model": ParamInfo(dtype=str, default="GL_AD_ID", choices=ModelChoices(),
                       desc="user model CONN_STATES_KERNEL (GL|LO, AD|OR, ID|LID), UNIFORM, or a name "
                            "given to a custom kernel with irmeasures_markov.register_kernel"),
    "recall": ParamInfo(dtype=bool, default=False,
                        desc="multiply by recall r/RB (the paper's @Rec(T)); UNIFORM with recall is AP"),
    "rel": ParamInfo(dtype=int, default=1, desc="minimum grade counted as relevant (inclusive)"),
    "judged_only": ParamInfo(dtype=bool, default=False,
                             desc="drop unjudged documents before ranking (condensed list)"),
}


class _MP(FamilyMeasure):
    """Markov Precision (Ferrante, Ferro & Maistro, SIGIR 2014).

    MP = sum over relevant retrieved ranks i of pi_i * Prec(i), pi the invariant
    distribution of the user's Markov chain watched on the relevant ranks.
    ``MP`` alone is ``MP(model='GL_AD_ID')``.  See docs/markov-precision.md.
    """
    __name__ = "MP"
    NAME = __name__
    PRETTY_NAME = "Markov Precision"
    SHORT_DESC = "Precision averaged under the invariant distribution of a Markov-chain user model."
    SUPPORTED_PARAMS = dict(_MP_PARAMS)

    def __init__(self, **params):
        if isinstance(params.get("model"), str):
            params["model"] = params["model"].upper()
        super().__init__(**params)

    def compute(self, prepared):
        return markov_precision_batch(self.batch(prepared), self["model"], recall=self["recall"])


@lru_cache(maxsize=32)
def _load_rates(path: str, mtime: float):
    return read_rates(path)


def load_rates(path: str):
    """Rates from a ``rank<TAB>mu`` or ``qid<TAB>rank<TAB>mu`` file, cached per path and mtime."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"MPcont: rates file {path!r} does not exist")
    return _load_rates(os.path.abspath(path), os.path.getmtime(path))


class _MPcont(_MP):
    """Continuous-time Markov Precision: MP with exponential holding times per rank.

    pi~_i = (pi_i / mu_i) / sum_j pi_j / mu_j;  MPcont = sum_i pi~_i Prec(i).
    Rates come from ``rates='path'`` (TSV ``rank<TAB>mu`` or ``qid<TAB>rank<TAB>mu``).
    """
    __name__ = "MPcont"
    NAME = __name__
    PRETTY_NAME = "Continuous-time Markov Precision"
    SHORT_DESC = "Markov Precision weighted by expected holding time at each rank."
    SUPPORTED_PARAMS = {
        **_MP_PARAMS,
        "rates": ParamInfo(dtype=str, required=False,
                           desc="path of a TSV file of holding rates: 'rank<TAB>mu' (1-based ranks, all "
                                "queries) or 'qid<TAB>rank<TAB>mu' (per query)"),
        "time": ParamInfo(dtype=str, default="rates", choices=("rates", "tbg"),
                          desc="where holding times come from: 'rates' (the rates file) or 'tbg' (TBG's time "
                               "model: mean time at rank i = t_summary + (a*l_i + b)*P(C=1|r_i), from document "
                               "lengths l_i)"),
        **LENGTH_PARAMS,
        **TIME_MODEL_PARAMS,
    }

    def check_params(self):
        time = self.params.get("time", "rates")
        tbg_only = sorted(n for n in (*LENGTH_PARAMS, *TIME_MODEL_PARAMS) if n in self.params)
        if time == "rates":
            if "rates" not in self.params:
                raise ValueError("MPcont needs holding rates: MPcont(rates='path/to/rates.tsv'), a file of "
                                 "'rank<TAB>mu' lines, or MPcont(time='tbg', lengths=...) for TBG's time model "
                                 "(see docs/markov-precision.md).")
            if tbg_only:
                raise ValueError(f"MPcont: {tbg_only} only apply with time='tbg'")
        else:
            if "rates" in self.params:
                raise ValueError("MPcont: give either rates='file' or time='tbg', not both")
            time_parameters(self)  # validates the constants

    def holding_rates(self, prepared):
        return load_rates(self["rates"])

    def compute(self, prepared):
        if self["time"] == "tbg":
            batch = self.batch(prepared)
            return markov_precision_batch(batch, self["model"], recall=self["recall"],
                                          rates=tbg_rates(prepared, batch, self))
        rates = self.holding_rates(prepared)
        return markov_precision_batch(self.batch(prepared), self["model"], recall=self["recall"], rates=rates)


MP = register_measure(_MP())
MPcont = register_measure(_MPcont())
