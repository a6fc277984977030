"""ir_measures Measures for Markov Precision: ``MP`` and ``MPcont``."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from irmeasures_markov._util._registry import Registry
from irmeasures_markov.io import read_rates
from irmeasures_markov.io._content import ContentCache, digest_value
from irmeasures_markov.measures.markov_precision import (
    ModelChoices,
    check_rates,
    kernel_batch,
    kernel_fingerprint,
    markov_precision_batch,
)
from irmeasures_markov.measures.markov_precision._models import KERNEL_REGISTRY
from irmeasures_markov.measures.markov_precision._ties import expected_markov_precision
from irmeasures_markov.plugin._base import FamilyMeasure, ParamInfo, family_params, plain_name_rule
from irmeasures_markov.plugin._fitted import FitChoices, is_fit_spec, mp_model
from irmeasures_markov.plugin._provider import register_measure
from irmeasures_markov.plugin._tbg import (
    LENGTH_PARAMS,
    TIME_MODEL_PARAMS,
    LengthTies,
    length_fingerprints,
    tbg_flat_rates,
    time_parameters,
)
from irmeasures_markov.plugin._variants import EXACT_LIMIT, FIRST_SAMPLES, MAX_SAMPLES, TARGET_SE

__all__ = ["MP", "MPcont", "register_rates", "REGISTERED_RATES", "RATES_REGISTRY", "load_rates", "rates_source"]

#: Rates registered by name with :func:`register_rates` (validated, normalised).
REGISTERED_RATES: dict[str, object] = {}


#: the rule of rates names: a plain word, not a path
RATES_REGISTRY = Registry("rates", lambda: REGISTERED_RATES, name_rule=plain_name_rule("register_rates"))


def register_rates(name: str, rates: Sequence[float] | Mapping) -> str:
    r"""Make in-memory holding rates usable in measure strings: ``MPcont(rates='name')``.

    MPcont (Ferrante, Ferro & Maistro, SIGIR 2014, §4.1) weights the watched
    invariant distribution by the mean holding times $1/\mu_i$.

    Parameters
    ----------
    name : str
        A plain word (not a path); a registered name wins over a file of the same name.
    rates : sequence or mapping
        One of

        * a sequence ``[mu_1, mu_2, ...]`` for ranks 1, 2, ... of every query;
        * a mapping ``{rank: mu}`` (1-based ranks) for every query;
        * a mapping ``{qid: sequence or {rank: mu}}``, rates per query.

        Every rate must be positive and finite (checked here); every rank of an
        evaluated ranking needs a rate (checked when the measure runs, naming the rank).

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a plain word or a rate is not positive and finite.
    """
    return RATES_REGISTRY.register(name, rates, check=check_rates)


#: ``MPcont(rates='sample')``: the holding rates bundled with the sample data (the paper's Table 4, run 1,
#: ranks 1-10; irmeasures_markov/data/sample_rates.tsv), used by ``irmeasures-markov demo``
register_rates("sample", read_rates(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                                                 "sample_rates.tsv")))

#: MP's own parameters (MPcont's too)
_MP_PARAMS = {
    "model": ParamInfo(dtype=str, default="GL_AD_ID", choices=FitChoices(ModelChoices(), "mp", KERNEL_REGISTRY,
                                                                         kernel_fingerprint),
                       desc="user model CONN_STATES_KERNEL (GL|LO, AD|OR, ID|LID), UNIFORM, a name "
                            "given to a custom kernel with irmeasures_markov.register_kernel, or a model fitted "
                            "to a log: 'fit:NAME' (calibration.register_fitted) or 'file:PATH' (a fit file)"),
    "recall": ParamInfo(dtype=bool, default=False,
                        desc="multiply by recall r/RB (the paper's @Rec(T)); UNIFORM with recall is AP"),
}


class _MP(FamilyMeasure):
    """Markov Precision (Ferrante, Ferro & Maistro, SIGIR 2014).

    MP = sum over relevant retrieved ranks i of pi_i * Prec(i), pi the invariant
    distribution of the user's Markov chain watched on the relevant ranks.
    ``MP`` alone is ``MP(model='GL_AD_ID')``.  See docs/markov-precision.md.
    """
    __name__ = NAME = "MP"
    PRETTY_NAME = "Markov Precision"
    SHORT_DESC = "Precision averaged under the invariant distribution of a Markov-chain user model."
    SUPPORTED_PARAMS = family_params(**_MP_PARAMS)

    def check_params(self):
        if is_fit_spec(self.params.get("model")):
            mp_model(self["model"], self.NAME)  # an unknown name or a bad file is reported now

    def mp_values(self, batch, rates=None, flat_rates=None):
        """MP of a batch under this measure's model (a fitted kernel goes to the general solver)."""
        model = self["model"]
        if is_fit_spec(model):
            name, kernel, states, _ = mp_model(model, self.NAME)
            if name is None:
                if flat_rates is not None:   # the general solver takes rates per query
                    o = batch.offsets
                    rates = {q: flat_rates[o[i]:o[i + 1]] for i, q in enumerate(batch.qids)}
                return kernel_batch(batch, kernel, states, recall=self["recall"], rates=rates, name=model)
            model = name
        return markov_precision_batch(batch, model, recall=self["recall"], rates=rates, flat_rates=flat_rates)

    def compute(self, prepared):
        return self.mp_values(self.batch(prepared))

    def expected_over_ties(self, reading, keys, seed=0):
        # a paper model over whole rankings: MP reads the relevant ranks alone, so every order is enumerated there
        model = self["model"]
        if (type(self) is not _MP or self.cutoff is not None or self["judged_only"] or not isinstance(model, str)
                or is_fit_spec(model) or model in KERNEL_REGISTRY):
            return None
        batch = self.batch(reading)
        return expected_markov_precision(batch.relevant, batch.offsets, reading.group_ids, batch.recall_base,
                                         reading.source_qids, model, recall=self["recall"], limit=EXACT_LIMIT,
                                         seed=seed, target_se=TARGET_SE, first_samples=FIRST_SAMPLES,
                                         max_samples=MAX_SAMPLES)


#: rates files read, keyed by the digest of their bytes
_RATES_FILES = ContentCache(read_rates, maxsize=32)


def rates_source(path: str) -> tuple[str, object]:
    """``(fingerprint, rates)``: the rates registered under ``path`` with
    [`register_rates`][irmeasures_markov.register_rates], else those
    of the file.

    Files hold ``rank<TAB>mu`` or ``qid<TAB>rank<TAB>mu`` lines; a file is
    read on every call and parsed only when its bytes are new, so a rewritten
    file is always seen.  The fingerprint is the digest of the file's bytes,
    or of the registered rates.
    """
    if path in REGISTERED_RATES:
        return digest_value(REGISTERED_RATES[path]), REGISTERED_RATES[path]
    if not os.path.isfile(path):
        known = f"; registered names: {sorted(REGISTERED_RATES)}" if REGISTERED_RATES else ""
        raise FileNotFoundError(f"MPcont: rates={path!r} is neither a name given to rates with "
                                f"irmeasures_markov.register_rates nor an existing file (the file does not "
                                f"exist){known}")
    return _RATES_FILES.get(path)


def load_rates(path: str) -> object:
    """The rates of `rates_source` (registered rates are not hashed: they are used as they are)."""
    return REGISTERED_RATES[path] if path in REGISTERED_RATES else rates_source(path)[1]


class _MPcont(LengthTies, _MP):
    """Continuous-time Markov Precision: MP with exponential holding times per rank.

    pi~_i = (pi_i / mu_i) / sum_j pi_j / mu_j;  MPcont = sum_i pi~_i Prec(i).
    Rates come from ``rates='path'`` (TSV ``rank<TAB>mu`` or ``qid<TAB>rank<TAB>mu``),
    from ``rates='name'`` for rates given to [`register_rates`][irmeasures_markov.register_rates], or from
    TBG's time model with ``time='tbg'`` (with it, documents of equal grade and length have equal rates: the
    length ties of `LengthTies`).
    """
    __name__ = NAME = "MPcont"
    PRETTY_NAME = "Continuous-time Markov Precision"
    SHORT_DESC = "Markov Precision weighted by expected holding time at each rank."
    SUPPORTED_PARAMS = family_params(
        **_MP_PARAMS,
        rates=ParamInfo(dtype=str, required=False,
                        desc="holding rates: a TSV file 'rank<TAB>mu' (1-based ranks, all queries) or "
                             "'qid<TAB>rank<TAB>mu' (per query), or a name given to rates with "
                             "irmeasures_markov.register_rates"),
        time=ParamInfo(dtype=str, default="rates", choices=("rates", "tbg"),
                       desc="where holding times come from: 'rates' (the rates file) or 'tbg' (TBG's time "
                            "model: mean time at rank i = t_summary + (a*l_i + b)*P(C=1|r_i), from document "
                            "lengths l_i)"),
        **LENGTH_PARAMS,
        # the chain moves between relevant documents only: the click probability of a non-relevant one is inert
        **{n: p for n, p in TIME_MODEL_PARAMS.items() if n != "pc_nonrel"},
    )

    def __init__(self, **params):
        if "pc_nonrel" in params:
            raise ValueError("MPcont: pc_nonrel has no effect: MP's chain moves between relevant documents only, "
                             "so only their holding times t_summary + (a*l + b)*pc_rel count (pc_by_grade may "
                             "set pc per relevant grade).")
        super().__init__(**params)

    def check_params(self):
        super().check_params()
        time = self.params.get("time", "rates")
        tbg_only = sorted(n for n in (*LENGTH_PARAMS, *TIME_MODEL_PARAMS) if n in self.params)
        if time == "rates":
            if "rates" not in self.params and is_fit_spec(self.params.get("model")):
                if mp_model(self["model"], self.NAME)[3] is None:
                    raise ValueError(f"MPcont: the fit {self['model']!r} has no holding rates (its log has no "
                                     "timestamps); give rates='file' or time='tbg'")
            elif "rates" not in self.params:
                raise ValueError("MPcont needs holding rates: MPcont(rates='path/to/rates.tsv'), a file of "
                                 "'rank<TAB>mu' lines, MPcont(rates='name') for rates given to "
                                 "irmeasures_markov.register_rates, or MPcont(time='tbg', lengths=...) for TBG's "
                                 "time model (see docs/markov-precision.md).")
            if tbg_only:
                raise ValueError(f"MPcont: {tbg_only} only apply with time='tbg'")
        else:
            if "rates" in self.params:
                raise ValueError("MPcont: give either rates='file' or time='tbg', not both")
            time_parameters(self)  # validates the constants

    def reads_document_values(self) -> bool:
        return self.params.get("time", "rates") == "tbg"

    def input_fingerprints(self):
        out = super().input_fingerprints()
        if "rates" in self.params:
            out["rates"] = rates_source(self["rates"])[0]
        if self.params.get("time", "rates") == "tbg":
            out.update(length_fingerprints(self))
        return out

    def compute(self, prepared):
        if self["time"] == "tbg":
            batch = self.batch(prepared)
            return self.mp_values(batch, flat_rates=tbg_flat_rates(prepared, batch, self))
        # without rates, check_params has seen a fitted model with rates of its own
        rates = load_rates(self["rates"]) if "rates" in self.params else mp_model(self["model"], self.NAME)[3]
        return self.mp_values(self.batch(prepared), rates=rates)


#: measure strings the brute-force tie and unjudged tests evaluate (see plugin/_base.py's Family)
EXAMPLES = (
    "MP", "MP(model='LO_OR_LID')", "MP(model='GL_OR_ID')@5", "MP(model='UNIFORM',recall=True)", "MP(rel=2)",
    "MP(judged_only=True)", "MP(model='LO_AD_LID',rel=2)@4",
    "MPcont(rates='brute')", "MPcont(model='LO_OR_ID',rates='brute')@5",
    "MPcont(judged_only=True,rates='brute',rel=2)", "MPcont(lengths='brute-all',time='tbg')",
)

MP = register_measure(_MP())
MPcont = register_measure(_MPcont())
