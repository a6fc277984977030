"""ir_measures Measure for P@H (Ferrante & Ferro, ICTIR 2020): ``PH``, alias ``PatH``.

``PH`` alone is SFBM with p = 0.8, order 2 (RBP(N) with p = 0.8).  Examples:
``PH(browse='RWBM',p=0.5,q=0.25,loss=0.25,order=1)``, ``PH(user='AP')``,
``PH(user='RBP',p=0.5,tail='inf')`` (= RBP), ``PH(user='DCG',gain='grade')@10``.
See docs/stopping-time.md.
"""
from __future__ import annotations

import numpy as np

from irmeasures_markov.measures.stopping_time import BROWSING_MODELS, GAINS, USERS, path_at_h_batch
from irmeasures_markov.measures.stopping_time._params import model_params_iv, user_defaults
from irmeasures_markov.plugin._base import FLOAT, FamilyMeasure, ParamInfo, family_params
from irmeasures_markov.plugin._fitted import FitChoices, fitted_kwargs, is_fit_spec
from irmeasures_markov.plugin._provider import register_measure

__all__ = ["PH"]


class _PH(FamilyMeasure):
    """P@H: accumulated gain over the stopping time H of a Markov-chain browsing user.

    P@H = (1/f(H)) sum_{n<=H} gain(r[X_n]) (1-loss)^(k(n)-1).  Order 1 gives
    E[P@H], order 2 gives E[sum g]/E[f(H)]; both are computed exactly.
    """
    __name__ = NAME = "PH"
    PRETTY_NAME = "P@H (stopping-time precision)"
    SHORT_DESC = "Expected gain per visited document of a user who walks the ranking as a Markov chain."
    SUPPORTED_PARAMS = family_params(
        browse=ParamInfo(dtype=str, default="SFBM", choices=FitChoices(BROWSING_MODELS, "ph"),
                         desc="browsing model: DFBM (read all), SFBM (forward or stop), RWBM (forward, "
                              "backward or stop); with `user`, SFBM (the default) means the user "
                              "model's own (P: DFBM); 'fit:NAME' or 'file:PATH': the browsing model and "
                              "its p, q (p_rel, q_rel) fitted to a log"),
        p=ParamInfo(dtype=FLOAT, default=0.8, desc="forward probability (at non-relevant documents when "
                                                   "p_rel is given)"),
        q=ParamInfo(dtype=FLOAT, default=0.0, desc="backward probability (RWBM; at non-relevant documents "
                                                   "when q_rel is given)"),
        p_rel=ParamInfo(dtype=FLOAT, required=False, desc="forward probability at relevant documents"),
        q_rel=ParamInfo(dtype=FLOAT, required=False, desc="backward probability at relevant documents (RWBM)"),
        user=ParamInfo(dtype=str, required=False, choices=USERS,
                       desc="classical instantiation: P (DFBM), AP (over retrieved relevant, order 1), "
                            "RBP (SFBM p, order 2), DCG (f=1, discount max(1, log_b i)), ERR (E[1/H])"),
        loss=ParamInfo(dtype=FLOAT, default=0.0, desc="utility loss per revisit, lambda in [0, 1]"),
        f=ParamInfo(dtype=str, default="h", choices=("h", "1"),
                    desc="normaliser f(H): 'h' (H) or '1'; with `user`, 'h' (the default) means the user "
                         "model's own f (DCG: '1')"),
        order=ParamInfo(dtype=int, default=2, choices=(1, 2),
                        desc="1: E[P@H]; 2: E[sum g]/E[f(H)]. With `user`, 2 (the default) means the "
                             "user model's own order (AP, ERR: 1), since PH(user='AP',order=2) prints, "
                             "and so compares, as PH(user='AP')"),
        top=ParamInfo(dtype=str, default="stop", choices=("stop", "forward"),
                      desc="where backward mass at rank 1 goes: stop, or forward"),
        tail=ParamInfo(dtype=str, default="none", choices=("none", "inf"),
                       desc="'inf': the ranking continues with endless non-relevant documents "
                            "(RBP(inf), K(p,q,inf)); order 2 only"),
        gain=ParamInfo(dtype=str, default="binary", choices=GAINS,
                       desc="gain of a relevant document: 1, its grade, or 2^grade - 1"),
        b=ParamInfo(dtype=FLOAT, default=2, desc="log base of user='DCG'"),
        pad_to_cutoff=ParamInfo(dtype=bool, default=False,
                                desc="complete a ranking shorter than the cutoff k with non-relevant "
                                     "documents, so the user browses k documents (trec_eval's P@k "
                                     "divides by k); default: the ranking as retrieved (H = N)"),
    )

    def __init__(self, **params):
        # Measures compare by their printed form, which omits parameters at their declared
        # default: PH(user='AP',order=2) prints as PH(user='AP').  Dropping such parameters
        # here makes equal measures behave identically (order=2, f='h', browse='SFBM' with a
        # `user` mean "as the user model defines").  What a user instantiation implies is
        # dropped as well, so PH(user='AP',order=1) is PH(user='AP').
        user = params.get("user")
        implied = {}
        if isinstance(user, str) and user in USERS:
            implied = dict(zip(("browse", "f", "order"), user_defaults(user)))
        for name in list(params):
            value = params[name]
            info = self.SUPPORTED_PARAMS.get(name)
            if info is None or name in ("cutoff", "user") or not isinstance(value, (str, int, float)) \
                    or isinstance(value, bool) != isinstance(info.default, bool):
                continue
            if value == info.default or (name in implied and value == implied[name]):
                del params[name]
        super().__init__(**params)

    def _model_kwargs(self):
        P = self.params
        user = P.get("user")
        if "b" in P and user != "DCG":
            raise ValueError("PH: `b` is the log base of user='DCG'; it is not used otherwise.")
        if is_fit_spec(P.get("browse")):
            # a fitted browsing model: browse, p, q (p_rel, q_rel) come from the fit
            if user is not None:
                raise ValueError(f"PH: browse={P['browse']!r} sets the browsing model; `user` cannot be given too")
            P = {**P, **fitted_kwargs(P["browse"], "ph", "PH", "browse", ("browse", "p", "q", "p_rel", "q_rel"),
                                      self.params)}
        # browse, f and order not given are None: the user model's own with `user`, the kernel's default without
        kw = {name: P.get(name) for name in ("browse", "p_rel", "q_rel", "user", "f", "order")}
        kw.update({name: P.get(name, self.SUPPORTED_PARAMS[name].default)
                   for name in ("p", "q", "loss", "top", "tail", "gain", "b")})
        return kw

    def check_params(self):
        if self.params.get("pad_to_cutoff") and self.cutoff is None:
            raise ValueError("PH: pad_to_cutoff=True completes rankings up to the cutoff; give one (@k).")
        kw = self._model_kwargs()
        try:
            model_params_iv(**kw, p_given="p" in self.params, q_given="q" in self.params)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"PH: {exc}") from None

    def filled_length(self, lengths):
        """With ``pad_to_cutoff`` or an endless tail the user reads past the ranking: under unjudged='rel' the
        ranks there hold relevant documents, up to the cutoff, else until the chance of reading further is
        negligible (docs/stopping-time.md, "Ties and unjudged documents")."""
        if self.params.get("pad_to_cutoff") or (self.params.get("tail", "none") != "none" and self.cutoff is not None):
            return np.maximum(lengths, self.cutoff)
        if self.params.get("tail", "none") == "none":
            return lengths
        kw = self._model_kwargs()
        p = kw["p"] if kw["p_rel"] is None or kw["user"] else kw["p_rel"]
        q = 0.0 if kw["user"] else (kw["q"] if kw["q_rel"] is None else kw["q_rel"])
        depth = relevant_tail_depth(float(p), float(q))
        if depth is None:
            raise ValueError(f"{self}: with unjudged='rel' (or 'range', residual=True) the user reads an endless "
                             f"tail of relevant documents with forward {p} and backward {q} probabilities and may "
                             "never stop; give a cutoff (@k): ranks are then filled up to it.")
        return lengths + depth

    def compute(self, prepared):
        batch = self.batch(prepared)
        kw = self._model_kwargs()
        g_max = None
        if kw["user"] == "ERR":
            qi = prepared.qrels_index
            g_max = np.array([max(1, int(qi.judged_grades(q)[0])) if qi.judged_grades(q).size else 1
                              for q in batch.qids], dtype=np.float64)
        pad_to = self.cutoff if self.params.get("pad_to_cutoff") else None
        return path_at_h_batch(batch, g_max=g_max, pad_to=pad_to, **kw)


def relevant_tail_depth(p: float, q: float, tol: float = 1e-17, max_ranks: int = 1 << 20) -> int | None:
    """Ranks m past the end after which a walker (forward ``p``, backward ``q``) is negligible.

    From any rank the walker ever advances one rank with probability
    v = (1 - sqrt(1 - 4pq)) / (2q) (v = p when q = 0), so it reaches m ranks
    further with probability at most v^m, and the expected visits of the ranks
    beyond are at most v^m / (1 - v)^3: m is the first with that below ``tol``.

    Parameters
    ----------
    p : float
        Forward and backward probabilities at the filled (relevant) ranks.
    q : float
        Forward and backward probabilities at the filled (relevant) ranks.
    tol : float
        What the ranks beyond may add, at most.
    max_ranks : int
        Give up beyond this many ranks.

    Returns
    -------
    int or None
        m, or None when ``p + q >= 1`` (the walker may never stop) or m > ``max_ranks``.
    """
    if p + q >= 1.0:
        return None
    v = p if q == 0 else (1.0 - np.sqrt(1.0 - 4.0 * p * q)) / (2.0 * q)
    if v <= 0.0:
        return 0
    depth = int(np.ceil((np.log(tol) + 3.0 * np.log1p(-v)) / np.log(v)))
    return depth if depth <= max_ranks else None


#: measure strings the brute-force tie and unjudged tests evaluate (see plugin/_base.py's Family)
EXAMPLES = (
    "PH", "PH(p=0.5)@5", "PH(browse='RWBM',p=0.6,q=0.3)", "PH(user='AP')", "PH(user='DCG')", "PH(user='ERR')",
    "PH(tail='inf')", "PH(gain='grade',p=0.6,tail='inf')", "PH(p=0.5,p_rel=0.9,rel=2)",
    "PH(judged_only=True,order=1)", "PH(gain='exp2',rel=2,tail='inf')@6", "PH(p=0.7,pad_to_cutoff=True)@8",
    "PatH(p=0.7)",
)

PH = register_measure(_PH(), aliases=["PatH"])
