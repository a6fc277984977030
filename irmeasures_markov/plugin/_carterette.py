"""ir_measures Measures for Carterette's framework: ``M1``–``M4`` and the paper's ten new names.

``M1(dist='RBP')`` … ``M4(dist='RRR')`` take ``dist``, ``theta`` (RBP/ERR
only), ``f`` (M3 only), ``norm``, ``rel``, ``judged_only`` and a cutoff.  The
names RBTR, RBAP, CDG, DAG, EPR, ARR, RRG, RAP, RRR and RRAP are measures of
their own with the model and distribution fixed (``RBTR`` is
``M2(dist='RBP')``), so their ``str()`` is just the name plus any non-default
parameter: ``RBTR``, ``RBTR(theta=0.9)@10``.  Names that ir_measures already
has (RBP, DCG, RR, ERR, AP) are reached as ``M1(dist='RBP')`` and so on.
See docs/user-model-framework.md.
"""
from __future__ import annotations

from numbers import Real

import numpy as np

from irmeasures_markov.measures._carterette import expected_user_model, user_model_batch
from irmeasures_markov.measures._carterette_distributions import (
    DEFAULT_THETA,
    DISTRIBUTION_REGISTRY,
    DISTRIBUTIONS,
    F_CHOICES,
    DistributionChoices,
    default_norm,
    distribution_fingerprint,
    graded_user_model_batch,
    is_graded,
    is_static,
    negligible_depth,
)
from irmeasures_markov.plugin._base import FLOAT, FamilyMeasure, ParamInfo, family_params
from irmeasures_markov.plugin._fitted import FitChoices, carterette_distribution, is_fit_spec
from irmeasures_markov.plugin._provider import register_measure
from irmeasures_markov.ranking._prepared import select_positions

__all__ = ["M1", "M2", "M3", "M4", "CDG", "RRG", "RBTR", "ARR", "RRR", "RBAP", "DAG", "RAP", "EPR", "RRAP"]

_DIST = ParamInfo(dtype=str, default="RBP",
                  choices=FitChoices(DistributionChoices(), "carterette", DISTRIBUTION_REGISTRY,
                                     distribution_fingerprint),
                  desc="stopping distribution P(k): RBP, DCG, RR (static) or ERR, AP, RRR (dynamic), a name given "
                       "to one with register_distribution, or one fitted to a log: 'fit:NAME' "
                       "(calibration.register_fitted) or 'file:PATH' (a fit file)")
_THETA = ParamInfo(dtype=FLOAT, required=False,
                   desc="parameter of the RBP (persistence, default 0.8) or ERR (stopping probability at a relevant "
                        "document, default 0.5) distribution; in (0, 1)")
_NORM = ParamInfo(dtype=bool, required=False,
                  desc="divide by the ideal ranking's value (RB relevant documents, then non-relevant ones up to the "
                       "run's length, cut at the cutoff; default: on for M2 and ARR, off otherwise)")
_F = ParamInfo(dtype=str, default="1/k", choices=F_CHOICES,
               desc="M3's effort f(k): '1/k' (expected reciprocal rank) or 'k' (expected stopping rank)")
#: what each model's value reads
_READINGS = {
    "M1": "expected relevance at the stopping rank, sum_k a_k P(k)",
    "M2": "expected total relevance seen, sum_k a_k F(k)",
    "M3": "expected effort at the stopping rank, sum_k f(k) P(k)",
    "M4": "expected precision at the stopping rank, sum_k P(k) Prec(k)",
}


class _UserModelMeasure(FamilyMeasure):
    """Base of M1–M4: value = Σ_k over the ranking under stopping distribution P(k) (docs/user-model-framework.md).

    A measure is a subclass ``class _NAME(_UserModelMeasure, model="M1", dist=None)``: its name is the class
    name without the underscore, ``dist`` fixes the stopping distribution of the paper's named measures.
    """

    def __init_subclass__(cls, model: str = "M1", dist: str | None = None, **kwargs):
        # the parameters follow from the model and the distribution: dist unless fixed, theta where the
        # distribution has one, f for M3
        super().__init_subclass__(**kwargs)
        cls.NAME, cls.MODEL, cls.FIXED_DIST = cls.__name__.lstrip("_"), model, dist
        own = {} if cls.FIXED_DIST else {"dist": _DIST}
        if cls.FIXED_DIST in (None, *DEFAULT_THETA):
            own["theta"] = _THETA
        own["norm"] = _NORM
        if cls.MODEL == "M3":
            own["f"] = _F
        cls.SUPPORTED_PARAMS = family_params(**own)

    @property
    def __name__(self) -> str:  # what ir_measures prints (the class keeps its own name, for pickling)
        return self.NAME

    @property
    def PRETTY_NAME(self) -> str:  # ir_measures' attribute, from MODEL and FIXED_DIST
        if self.FIXED_DIST is None:
            return f"Carterette's {self.MODEL}"
        return f"{self.NAME} ({self.MODEL} with the {self.FIXED_DIST} stopping distribution)"

    @property
    def SHORT_DESC(self) -> str:
        reading = _READINGS[self.MODEL]
        return reading if self.FIXED_DIST is None else f"{self.MODEL}(dist='{self.FIXED_DIST}'): {reading}"

    def __init__(self, **params):
        # Canonical form, so that measures equal in meaning print (and compare, hash) the same:
        # theta/norm are dropped when they equal the default of the chosen distribution/model (those
        # defaults depend on dist, so ParamInfo cannot hold them); the base upper-cases dist
        dist = self.FIXED_DIST or params.get("dist", "RBP")
        dist = dist.upper() if isinstance(dist, str) else dist
        theta = params.get("theta")   # any number: the base stores it as a float
        if dist in DEFAULT_THETA and isinstance(theta, Real) and not isinstance(theta, bool) \
                and theta == DEFAULT_THETA[dist]:
            del params["theta"]
        norm = params.get("norm")
        if isinstance(norm, bool) and dist in DISTRIBUTIONS and norm == default_norm(self.MODEL, dist):
            del params["norm"]
        super().__init__(**params)

    @property
    def dist(self) -> str:
        return self.FIXED_DIST or self["dist"]

    def check_params(self):
        dist = self.dist
        theta = self.params.get("theta")
        if theta is not None:
            if dist not in DEFAULT_THETA:
                raise ValueError(f"{self.NAME}: dist={dist!r} has no parameter theta "
                                 f"(only {sorted(DEFAULT_THETA)} do)")
            if not (0 < theta < 1):
                raise ValueError(f"{self.NAME}: theta must be in (0, 1), got {theta!r}")
        if is_fit_spec(dist):
            key, _ = carterette_distribution(dist, self.NAME)  # an unknown name or a bad file is reported now
            if is_graded(key) and self.params.get("norm"):
                raise ValueError(f"{self.NAME}: dist={dist!r} is a click model's stopping probability per grade; "
                                 "norm is not available with it (the best ranking under it is not the "
                                 "grade-sorted one): drop norm=True")
        if (self.params.get("residual") or self.params.get("unjudged") in ("rel", "range")) \
                and is_static(self._distribution()[0]):
            self._fill_depth()  # refused now, not once the run is read

    def norm(self, dist=None) -> bool:
        n = self.params.get("norm")
        return default_norm(self.MODEL, dist or self.dist) if n is None else n

    def _distribution(self):
        dist, theta = self.dist, self.params.get("theta")
        if is_fit_spec(dist):  # the fitted distribution (and θ), with the paper's norm default for it
            dist, theta = carterette_distribution(dist, self.NAME)
        return dist, theta

    def compute(self, prepared):
        dist, theta = self._distribution()
        if is_graded(dist):   # a click model's stopping probability per grade: reads the grades
            return graded_user_model_batch(self.batch(prepared), self.MODEL, dist, f=self.params.get("f") or "1/k",
                                           norm=self.norm(dist), cutoff=self.cutoff)
        return user_model_batch(self.batch(prepared), self.MODEL, dist, theta=theta,
                                f=self.params.get("f") or "1/k", norm=self.norm(dist), cutoff=self.cutoff)

    def filled_length(self, lengths):
        """A user of a static distribution reads past the ranking: up to the cutoff, else until relevant
        documents at every later rank would add less than 1e-17 (docs/user-model-framework.md)."""
        dist, theta = self._distribution()
        if not is_static(dist):      # a dynamic user stops only at relevant documents of the ranking
            return lengths
        return np.maximum(lengths, self._fill_depth())

    def _fill_depth(self) -> int:
        """The depth a static user reads to when unjudged documents may be relevant: the cutoff, else the
        rank past which the distribution's weight is negligible (a ValueError saying how to get one if none)."""
        dist, theta = self._distribution()
        if self.cutoff is not None:
            return self.cutoff
        depth = negligible_depth(self.MODEL, dist, theta, self.params.get("f") or "1/k")
        if depth is None:
            raise ValueError(f"{self}: with unjudged='rel' (or 'range', residual=True) the user reads past the "
                             f"ranking, and the {dist} stopping distribution leaves too much weight after any "
                             "feasible depth; give a cutoff (e.g. @1000): ranks are then filled up to it.")
        return depth

    def expected_over_ties(self, reading, keys, seed=0):
        """The exact mean over every tie order in closed form (measures/_carterette.py): for static
        distributions the value at each tie group's mean relevance, for dynamic ones a sum over the
        hypergeometric count of relevant documents above each rank; None if that sum is too large."""
        dist, theta = self._distribution()
        if is_graded(dist):   # no closed form over tie orders: the general method evaluates them
            return None
        jo = bool(self["judged_only"])
        batch = reading.batch(rel=self["rel"], judged_only=jo, cutoff=None)
        keep, _ = select_positions(reading.grades, reading.offsets, jo, None)
        gid = reading.group_ids if keep is None else reading.group_ids[keep]
        return expected_user_model(batch.relevant, batch.offsets, batch.recall_base, gid, self.MODEL, dist,
                                   theta=theta, f=self.params.get("f") or "1/k", norm=self.norm(dist),
                                   cutoff=self.cutoff)


class _M1(_UserModelMeasure, model="M1"):
    """Carterette (SIGIR 2011) M1: expected relevance at the stopping rank, sum_k a_k P(k)."""


class _M2(_UserModelMeasure, model="M2"):
    """Carterette (SIGIR 2011) M2: expected total relevance seen, sum_k a_k F(k)."""


class _M3(_UserModelMeasure, model="M3"):
    """Carterette (SIGIR 2011) M3: expected effort at the stopping rank, sum_k f(k) P(k)."""


class _M4(_UserModelMeasure, model="M4"):
    """Carterette (SIGIR 2011) M4: expected precision at the stopping rank, sum_k P(k) Prec(k)."""


#: measure strings the brute-force tie and unjudged tests evaluate (see plugin/_base.py's Family)
EXAMPLES = (
    "M1", "M1(theta=0.5)@5", "M1(dist='DCG')", "M1(dist='RR',rel=2)", "M1(dist='ERR')@4",
    "M1(dist='AP',judged_only=True)",
    "M2", "M2(norm=False,theta=0.6)", "M2(dist='DCG')@5", "M2(dist='RRR')", "M2(dist='ERR',rel=2,theta=0.3)",
    "M3(dist='ERR')", "M3(dist='RRR',f='k')", "M3(dist='AP')@5", "M3", "M3(dist='ERR',judged_only=True)",
    "M4", "M4(dist='AP')", "M4(dist='ERR',theta=0.7)@5", "M4(dist='RRR',rel=2)", "M4(dist='DCG',judged_only=True)",
    "M4(norm=True,theta=0.9)",
    "RBTR(theta=0.7)", "RBAP", "ARR@5", "EPR(rel=2)",
)

M1 = register_measure(_M1())
M2 = register_measure(_M2())
M3 = register_measure(_M3())
M4 = register_measure(_M4())


# the paper's ten new names: a model with its distribution fixed (the other five are ir_measures' own names)


class _CDG(_UserModelMeasure, model="M1", dist="DCG"):
    """CDG: M1 with the DCG stopping distribution."""


class _RRG(_UserModelMeasure, model="M1", dist="RR"):
    """RRG: M1 with the RR stopping distribution."""


class _RBTR(_UserModelMeasure, model="M2", dist="RBP"):
    """RBTR: M2 with the RBP stopping distribution."""


class _ARR(_UserModelMeasure, model="M3", dist="AP"):
    """ARR: M3 with the AP stopping distribution."""


class _RRR(_UserModelMeasure, model="M3", dist="RRR"):
    """RRR: M3 with the RRR stopping distribution."""


class _RBAP(_UserModelMeasure, model="M4", dist="RBP"):
    """RBAP: M4 with the RBP stopping distribution."""


class _DAG(_UserModelMeasure, model="M4", dist="DCG"):
    """DAG: M4 with the DCG stopping distribution."""


class _RAP(_UserModelMeasure, model="M4", dist="RR"):
    """RAP: M4 with the RR stopping distribution."""


class _EPR(_UserModelMeasure, model="M4", dist="ERR"):
    """EPR: M4 with the ERR stopping distribution."""


class _RRAP(_UserModelMeasure, model="M4", dist="RRR"):
    """RRAP: M4 with the RRR stopping distribution."""


CDG = register_measure(_CDG())
RRG = register_measure(_RRG())
RBTR = register_measure(_RBTR())
ARR = register_measure(_ARR())
RRR = register_measure(_RRR())
RBAP = register_measure(_RBAP())
DAG = register_measure(_DAG())
RAP = register_measure(_RAP())
EPR = register_measure(_EPR())
RRAP = register_measure(_RRAP())
