"""From fit to measure: register_fitted, save_fit/load_fit and the 'fit:NAME' / 'file:PATH' measure parameters.

The fits here have hand-set parameters whose measures are known: an MP kernel 1/(d+1) on all ranks is
GL_AD_ID, an empirical stopping distribution equal to RBP(0.8)'s is RBP's, a P@H or TBG fit is the measure with
those parameters written out.  ``FamilyFit.measure_parameters`` is replaced by a stub reading those parameters
(the conversions of real fits are tested with the fits).
"""
import json
import math
import os

import ir_measures
import numpy as np
import pytest

import irmeasures_markov
from irmeasures_markov import RelevanceEvaluator
from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration import FamilyFit
from irmeasures_markov.calibration import _parameters as parameters_module
from irmeasures_markov.calibration import _registry as registry
from irmeasures_markov.calibration._registry import (
    FitFile,
    load_fit,
    register_fitted,
    registered_fits,
    save_fit,
    unregister_fitted,
)
from irmeasures_markov.cli import main
from irmeasures_markov.measures import _carterette as carterette
from irmeasures_markov.measures import _carterette_distributions as carterette_distributions
from irmeasures_markov.plugin import _fitted as fitted

# ---------------------------------------------------------------------------
# FIXTURES
# ---------------------------------------------------------------------------


def stub_measure_parameters(fit):
    p = fit.params
    if fit.family == "mp":
        if "model" in p:  # a paper model: named, no kernel function
            return {"kernel": None, "model": p["model"], "states": p["model"].split("_")[1], "rates": None}
        assert p["kernel"] == "ID"
        return {"kernel": lambda i, j: 1.0 / (np.abs(i - j) + 1.0), "states": p.get("states", "AD"),
                "rates": p.get("rates")}
    if fit.family == "carterette":
        if "dist" in p:  # one of the six distributions with its θ
            return {"stop_probabilities": None, **p}
        theta = p["rbp"]
        return {"stop_probabilities": lambda n: (1 - theta) * theta ** np.arange(n)}
    return dict(p)


@pytest.fixture(autouse=True)
def clean(monkeypatch, tmp_path):
    monkeypatch.setattr(parameters_module, "measure_parameters", stub_measure_parameters)
    # the stub fits' parameters are not those of real fits (schema checks are tested in test_content_keys.py)
    monkeypatch.setattr(parameters_module, "check_params", lambda fit: None)
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(registry, "_PARAMS", {})
    monkeypatch.setattr(carterette_distributions, "CUSTOM_DISTRIBUTIONS", {})
    monkeypatch.setattr(fitted, "_DIST_KEYS", {})
    monkeypatch.delenv(registry.FITS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)


def fits(**over):
    out = [
        FamilyFit("mp", "GL_AD_ID", {"kernel": "ID"}, loglik=-10.5, n_params=1, n_sessions=100,
                  log_description="a synthetic log"),
        FamilyFit("mp", "nonparametric", {"kernel": "ID", "states": "OR"}, loglik=float("nan")),
        FamilyFit("carterette", "RBP", {"rbp": 0.8}, intervals={"theta": (0.79, 0.81)}),
        FamilyFit("ph", "RWBM", {"browse": "RWBM", "p": 0.5, "q": 0.25}),
        FamilyFit("tbg", "clicks", {"pc_rel": 0.5, "pc_nonrel": 0.2, "halflife": 100.0}),
    ]
    return out


class StubReport:
    """What register_fitted and save_fit need of a FitReport: .fits and .best(family)."""

    def __init__(self, fits):
        self.fits = fits

    def best(self, family):
        return next(f for f in self.fits if f.family == family)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for q in range(6):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(40)]
        qrels[qid] = {d: int(g) for d, g in zip(docs, rng.choice([0, 0, 1, 2], size=40))}
        qrels[qid]["unret" + qid] = 1
        run[qid] = {d: float(s) for d, s in zip(docs[:35], rng.random(35))}
    return qrels, run


def write_trec(tmp_path, qrels, run):
    qp, rp = tmp_path / "t.qrels", tmp_path / "t.run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    rp.write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, ds in run.items() for d, s in ds.items()))
    return str(qp), str(rp)


def aggregate(measures, qrels, run):
    return ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in measures], qrels, run)


def values(measures, qrels, run):
    """Aggregates in the order of ``measures``."""
    got = aggregate(measures, qrels, run)
    return [got[ir_measures.parse_measure(m)] for m in measures]


def cli_values(capsys, qp, rp, measures):
    assert main([qp, rp, *measures]) == 0, capsys.readouterr().err
    return {k: float(v) for k, v in (line.split("\t") for line in capsys.readouterr().out.strip().splitlines())}


# (fitted measure, the same measure with its parameters written out)
PAIRS = [
    ("MP(model='{}')", "MP"),
    ("MP(model='{}',recall=True)@20", "MP(recall=True)@20"),
    ("M1(dist='{}')", "M1(dist='RBP')"),
    ("M2(dist='{}')", "M2(dist='RBP')"),
    ("M3(dist='{}')@10", "M3(dist='RBP')@10"),
    ("M4(dist='{}',norm=True)", "M4(dist='RBP',norm=True)"),
    ("PH(browse='{}')", "PH(browse='RWBM',p=0.5,q=0.25)"),
    ("PH(browse='{}',order=1)@10", "PH(browse='RWBM',p=0.5,q=0.25,order=1)@10"),
    ("TBG(user='{}',default_length=300)", "TBG(pc_rel=0.5,pc_nonrel=0.2,halflife=100,default_length=300)"),
]


# ---------------------------------------------------------------------------
# TESTS
# ---------------------------------------------------------------------------

class TestFittedMeasures:
    @pytest.mark.parametrize("spec", ["fit:yandex", "file:fit.json", "FILE:sub/../fit.json"])
    def test_ir_measures(self, data, spec, tmp_path):
        qrels, run = data
        register_fitted("yandex", StubReport(fits()))
        (tmp_path / "sub").mkdir()
        save_fit("fit.json", StubReport(fits()))
        got = aggregate([f.format(spec) for f, _ in PAIRS], qrels, run)
        want = aggregate([w for _, w in PAIRS], qrels, run)
        for (f, w) in PAIRS:
            key = ir_measures.parse_measure(f.format(spec))
            assert got[key] == pytest.approx(want[ir_measures.parse_measure(w)], abs=1e-12), f
            assert 0 < got[key]

    def test_values_differ_from_other_parameters(self, data):
        """The fitted measures do not equal every measure: the comparison above could fail."""
        qrels, run = data
        register_fitted("yandex", StubReport(fits()))
        got = values(["MP(model='fit:yandex')", "M1(dist='fit:yandex')", "PH(browse='fit:yandex')"], qrels, run)
        other = values(["MP(model='GL_AD_LID')", "M1(dist='RBP',theta=0.5)", "PH"], qrels, run)
        assert all(a != pytest.approx(b) for a, b in zip(got, other))

    def test_m1_is_rbp_of_ir_measures(self, data):
        """M1 with the RBP(0.8) distribution is RBP (binary, rel=1), computed here by ir_measures' own provider."""
        qrels, run = data
        register_fitted("yandex", StubReport(fits()))
        got = values(["M1(dist='fit:yandex')", "RBP(p=0.8,rel=1)"], qrels, run)
        a, b = got
        assert a == pytest.approx(b, abs=1e-6)

    def test_relevance_evaluator(self, data):
        qrels, run = data
        save_fit("fit.json", StubReport(fits()))
        names = [f.format("file:fit.json") for f, _ in PAIRS] + [w for _, w in PAIRS]
        out = RelevanceEvaluator(qrels, names).evaluate(run)
        for q in run:
            for f, w in PAIRS:
                k_f = str(ir_measures.parse_measure(f.format("file:fit.json")))
                k_w = str(ir_measures.parse_measure(w))
                assert out[q][k_f] == pytest.approx(out[q][k_w], abs=1e-12)

    def test_command_line(self, data, tmp_path, capsys, monkeypatch):
        qp, rp = write_trec(tmp_path, *data)
        save_fit("yandex.json", StubReport(fits()))
        os.mkdir("elsewhere")
        save_fit("elsewhere/other.json", StubReport(fits()))
        monkeypatch.setenv(registry.FITS_ENV, str(tmp_path / "elsewhere") + os.pathsep + str(tmp_path))
        # 'fit:NAME' on the command line: NAME.json in $IRMEASURES_MARKOV_FITS
        measures = [f.format(s) for f, _ in PAIRS for s in ("file:yandex.json", "fit:yandex", "fit:other")]
        got = cli_values(capsys, qp, rp, measures + [w for _, w in PAIRS])
        for f, w in PAIRS:
            want = got[str(ir_measures.parse_measure(w))]
            for s in ("file:yandex.json", "fit:yandex", "fit:other"):
                assert got[str(ir_measures.parse_measure(f.format(s)))] == pytest.approx(want, abs=1e-4)

    def test_mpcont_uses_the_fit_rates(self, data):
        qrels, run = data
        rates = [1.0 / (1 + k) for k in range(40)]
        register_fitted("timed", FamilyFit("mp", "GL_AD_ID", {"kernel": "ID", "rates": rates}))
        irmeasures_markov.register_rates("byhand", rates)
        got = values(["MPcont(model='fit:timed')", "MPcont(rates='byhand')", "MP"], qrels, run)
        a, b, c = got
        assert a == pytest.approx(b, abs=1e-12) and a != pytest.approx(c)

    def test_mpcont_without_rates(self, data):
        register_fitted("untimed", StubReport(fits()))
        with pytest.raises(ValueError, match="the fit 'fit:untimed' has no holding rates"):
            aggregate(["MPcont(model='fit:untimed')"], *data)

    def test_or_states(self, data):
        qrels, run = data
        register_fitted("or", FamilyFit("mp", "x", {"kernel": "ID", "states": "OR"}))
        got = values(["MP(model='fit:or')", "MP(model='GL_OR_ID')"], qrels, run)
        a, b = got
        assert a == pytest.approx(b, abs=1e-12)

    @pytest.mark.parametrize("params, fitted, same", [
        ({"model": "LO_OR_LID"}, "MP(model='fit:n')@20", "MP(model='LO_OR_LID')@20"),
        ({"dist": "ERR", "theta": 0.3}, "M3(dist='fit:n')", "M3(dist='ERR',theta=0.3)"),
        ({"dist": "AP"}, "M3(dist='fit:n')", "ARR"),  # the paper normalises ARR: the default follows the fit
        ({"dist": "RBP", "theta": 0.6}, "M2(dist='fit:n')", "RBTR(theta=0.6)"),
    ])
    def test_named_models_and_distributions(self, data, params, fitted, same):
        """A fit that is a paper model or one of the six distributions is evaluated as that model."""
        family = "mp" if "model" in params else "carterette"
        register_fitted("n", FamilyFit(family, "x", params))
        a, b = values([fitted, same], *data)
        assert a == pytest.approx(b, abs=1e-12)

    def test_registering_again_replaces(self, data):
        qrels, run = data
        register_fitted("y", FamilyFit("carterette", "RBP", {"rbp": 0.8}))
        first = values(["M1(dist='fit:y')"], qrels, run)
        register_fitted("y", FamilyFit("carterette", "RBP", {"rbp": 0.5}))
        second = values(["M1(dist='fit:y')", "M1(dist='RBP',theta=0.5)"], qrels, run)
        a, b = second
        assert a == pytest.approx(b, abs=1e-12) and a != pytest.approx(first[0])

    def test_changed_file_is_read_again(self, data):
        qrels, run = data
        save_fit("f.json", FamilyFit("carterette", "RBP", {"rbp": 0.8}))
        first, = values(["M1(dist='file:f.json')"], qrels, run)
        save_fit("f.json", FamilyFit("carterette", "RBP", {"rbp": 0.5}))
        st = os.stat("f.json")
        os.utime("f.json", ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
        second = values(["M1(dist='file:f.json')", "M1(dist='RBP',theta=0.5)"], qrels, run)
        a, b = second
        assert a == pytest.approx(b, abs=1e-12) and a != pytest.approx(first)

    def test_canonical_form(self):
        m = ir_measures.parse_measure("MP(model='FILE:Some/Path.json')")
        assert str(m) == "MP(model='file:Some/Path.json')"
        assert str(ir_measures.parse_measure("M2(dist='Fit:Yandex')")) == "M2(dist='fit:Yandex')"
        assert str(ir_measures.parse_measure("MP(model='gl_ad_lid')")) == "MP(model='GL_AD_LID')"


class TestErrors:
    def check(self, measure, exc, message, data):
        with pytest.raises(exc, match=message):
            aggregate([measure], *data)

    def test_unknown_name(self, data):
        self.check("MP(model='fit:nope')", ValueError,
                   r"MP: model='fit:nope': no fit is registered under 'nope' \(registered: none\) and there is no "
                   r"nope.json in", data)

    def test_missing_file(self, data):
        self.check("M2(dist='file:missing.json')", FileNotFoundError, "no such fit file: missing.json", data)

    def test_bad_json(self, data, tmp_path):
        (tmp_path / "bad.json").write_text('{"format": "irmeasures_markov.fit",\n "version": 1,\n oops}')
        self.check("MP(model='file:bad.json')", InputError, r"bad.json:3: not a fit file: not valid JSON", data)

    @pytest.mark.parametrize("content, message", [
        ({"format": "other"}, r"x.json: not a fit file \(expected a JSON object with \"format\""),
        ({"format": "irmeasures_markov.fit", "version": 2}, "x.json: fit file version 2"),
        ({"format": "irmeasures_markov.fit", "version": 1, "fits": [{"family": "mp"}], "best": {}},
         "x.json: fit 0 is not a valid fit"),
        ({"format": "irmeasures_markov.fit", "version": 1, "fits": [{"family": "xx", "model": "m", "params": {}}],
          "best": {}}, "x.json: fit 0 is not a valid fit .*unknown family 'xx'"),
        ({"format": "irmeasures_markov.fit", "version": 1, "fits": [], "best": {"mp": 0}},
         "x.json: \"best\": 'mp' -> 0 is not the index"),
    ])
    def test_invalid_file(self, tmp_path, content, message):
        (tmp_path / "x.json").write_text(json.dumps(content))
        with pytest.raises(InputError, match=message):
            load_fit("x.json")

    def test_family_missing(self, data):
        save_fit("mp_only.json", fits()[0])
        self.check("PH(browse='file:mp_only.json')", ValueError,
                   r"PH: browse='file:mp_only.json': the fit file .*mp_only.json has no 'ph' fit \(it has: mp\)", data)
        register_fitted("m", fits()[0])
        self.check("M1(dist='fit:m')", ValueError, r"have no 'carterette' fit \(they have: mp\)", data)

    def test_parameters_set_by_the_fit(self, data):
        register_fitted("y", StubReport(fits()))
        self.check("PH(browse='fit:y',p=0.3)", ValueError, r"the fit sets \['p'\]; do not give them as well", data)
        self.check("PH(browse='fit:y',user='AP')", ValueError, "`user` cannot be given too", data)
        self.check("TBG(user='fit:y',halflife=50,default_length=1)", ValueError, r"the fit sets \['halflife'\]",
                   data)
        self.check("M1(dist='fit:y',theta=0.5)", ValueError, "has no parameter theta", data)

    def test_command_line_errors(self, data, tmp_path, capsys):
        qp, rp = write_trec(tmp_path, *data)
        assert main([qp, rp, "MP(model='file:nowhere.json')"]) == 2
        assert "no such fit file: nowhere.json" in capsys.readouterr().err
        (tmp_path / "bad.json").write_text("[1, 2")
        assert main([qp, rp, "M1(dist='file:bad.json')"]) == 2
        assert "bad.json:1: not a fit file: not valid JSON" in capsys.readouterr().err


class TestRegistry:
    def test_register_report_and_fit(self):
        register_fitted("a", StubReport(fits()))
        register_fitted("b", fits()[2])
        register_fitted("b", fits()[3])  # another family: kept beside the first
        assert registered_fits() == {"a": ("mp", "ph", "carterette", "tbg"), "b": ("ph", "carterette")}
        unregister_fitted("a")
        assert "a" not in registered_fits()

    @pytest.mark.parametrize("name", ["", "a b ", "x:y", "it's", "a/b", 3])
    def test_bad_names(self, name):
        with pytest.raises(ValueError, match="the name must be a plain word"):
            register_fitted(name, fits()[0])

    def test_bad_objects(self):
        with pytest.raises(TypeError, match="expected a FamilyFit or a FitReport"):
            register_fitted("x", {"family": "mp"})
        with pytest.raises(ValueError, match="unknown family"):
            register_fitted("x", FamilyFit("nope", "m", {}))

    def test_save_load_round_trip(self):
        report = StubReport(fits())
        save_fit("r.json", report, description="Yandex WSCD 2012 sample, train", source="train.txt")
        raw = json.loads(open("r.json").read())  # strict JSON: the NaN log-likelihood is null
        assert raw["format"] == "irmeasures_markov.fit" and raw["version"] == 1
        assert raw["fits"][1]["loglik"] is None
        assert raw["best"] == {"mp": 0, "carterette": 2, "ph": 3, "tbg": 4}
        assert raw["log"] == {"description": "Yandex WSCD 2012 sample, train", "source": "train.txt",
                              "n_sessions": 100}
        back = load_fit("r.json")
        assert isinstance(back, FitFile) and back.families == ("mp", "ph", "carterette", "tbg")
        for a, b in zip(back.fits, report.fits):
            da, db = a.to_dict(), b.to_dict()
            assert math.isnan(da.pop("loglik")) == math.isnan(db["loglik"])
            db.pop("loglik")
            assert da == db
        assert back.best("carterette").intervals == {"theta": (0.79, 0.81)}
        register_fitted("again", back)  # a loaded file registers like a report
        assert registered_fits()["again"] == back.families

    def test_the_report_describes_its_log(self):
        report = StubReport(fits())
        report.log = {"description": "d", "source": "s", "n_sessions": 35064, "n_heldout": 21413}
        report.notes = ["tbg: no click timestamps in the log"]
        save_fit("r.json", report)
        back = load_fit("r.json")
        assert back.log == report.log and back.notes == report.notes

    def test_numpy_parameters_are_saved_as_json(self):
        save_fit("n.json", FamilyFit("mp", "np", {"kernel": "ID", "w": np.arange(3.0), "k": np.int64(2)}))
        assert load_fit("n.json").fits[0].params == {"kernel": "ID", "w": [0.0, 1.0, 2.0], "k": 2}


class TestRegisterDistribution:
    def test_table_and_function(self, data):
        qrels, run = data
        carterette_distributions.register_distribution("half", [0.5, 0.25, 0.125])  # P = 0 beyond rank 3, F(4) = 0.125
        p, tail = carterette_distributions.stopping_distribution([1, 0, 1, 1, 0], "HALF")
        np.testing.assert_allclose(p, [0.5, 0.25, 0.125, 0, 0])
        np.testing.assert_allclose(tail, [1, 0.5, 0.25, 0.125, 0.125])
        # M2 with it: Σ a_k F(k) over the relevant ranks 1, 3, 4
        assert carterette.user_model_measure([1, 0, 1, 1, 0], "M2", "HALF", norm=False) == pytest.approx(1.375)
        carterette_distributions.register_distribution("r8", lambda n: 0.2 * 0.8 ** np.arange(n))
        got = values(["M4(dist='r8')", "M4(dist='RBP')"], qrels, run)
        a, b = got
        assert a == pytest.approx(b, abs=1e-12)

    def test_input_validation(self):
        with pytest.raises(ValueError, match="'rbp' is a built-in distribution"):
            carterette_distributions.register_distribution("rbp", [1.0])
        with pytest.raises(ValueError, match="sum to .* > 1"):
            carterette_distributions.register_distribution("big", [0.7, 0.7])
        with pytest.raises(ValueError, match="finite and >= 0"):
            carterette_distributions.register_distribution("neg", [0.5, -0.1])
        carterette_distributions.register_distribution("badf", lambda n: np.ones(n + 1))
        with pytest.raises(ValueError, match=r"f\(16\) returned shape \(17,\)"):
            carterette.user_model_measure([1, 0], "M1", "BADF")
        with pytest.raises(ValueError, match="unknown stopping distribution"):
            carterette.user_model_measure([1, 0], "M1", "NOPE")


# ---------------------------------------------------------------------------
# With the fits' own conversions (FamilyFit.measure_parameters of calibration.parameters), when present
# ---------------------------------------------------------------------------

def _real_conversions() -> bool:
    try:
        FamilyFit("tbg", "x", {}).measure_parameters()
    except NotImplementedError:
        return False
    return True


_REAL = _real_conversions()  # evaluated at import, before the autouse fixture stubs the conversions


@pytest.mark.skipif(not _REAL, reason="calibration.parameters has no conversions yet (the fits are elsewhere)")
class TestRealFits:
    @pytest.fixture(autouse=True)
    def real(self, monkeypatch):
        monkeypatch.undo()  # the conversions of calibration.parameters, not the stub
        monkeypatch.setattr(registry, "_REGISTERED", {})
        monkeypatch.setattr(registry, "_PARAMS", {})
        monkeypatch.setattr(carterette_distributions, "CUSTOM_DISTRIBUTIONS", {})
        monkeypatch.setattr(fitted, "_DIST_KEYS", {})

    @pytest.mark.parametrize("fit, fitted, same", [
        (FamilyFit("mp", "GL_AD_ID", {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": 1.0}),
         "MP(model='fit:r')", "MP"),
        (FamilyFit("mp", "GL_OR_LID", {"connectivity": "GL", "states": "OR", "kernel": "LID", "decay": 1.0}),
         "MP(model='fit:r')@15", "MP(model='GL_OR_LID')@15"),
        (FamilyFit("mp", "GL_AD_ID(decay)", {"connectivity": "GL", "states": "AD", "kernel": "ID", "decay": 2.0}),
         "MP(model='fit:r')@20", "MP(model='SQUARED')@20"),
        (FamilyFit("carterette", "empirical", {"dist": "empirical", "continuation": [0.8] * 9}),
         "M1(dist='fit:r')", "M1(dist='RBP')"),
        (FamilyFit("carterette", "empirical", {"dist": "empirical", "continuation": [0.8] * 9}),
         "M2(dist='fit:r')@10", "M2(dist='RBP')@10"),
        (FamilyFit("carterette", "RBP", {"dist": "RBP", "theta": 0.7}), "M4(dist='fit:r')", "RBAP(theta=0.7)"),
        (FamilyFit("ph", "RWBM", {"browse": "RWBM", "p": 0.6, "q": 0.3, "gamma": 0.2}),
         "PH(browse='fit:r')", "PH(browse='RWBM',p=0.6,q=0.3)"),
        (FamilyFit("tbg", "clicks", {"pc_rel": 0.5, "pc_nonrel": 0.2}),
         "TBG(user='fit:r',default_length=300)", "TBG(pc_rel=0.5,pc_nonrel=0.2,default_length=300)"),
    ])
    def test_fitted_parameters(self, data, fit, fitted, same):
        irmeasures_markov.register_kernel("SQUARED", lambda i, j: 1.0 / (np.abs(i - j) + 1.0) ** 2)
        register_fitted("r", fit)
        a, b = values([fitted, same], *data)
        assert a == pytest.approx(b, abs=1e-12)

    def test_file_to_report(self, tmp_path, monkeypatch):
        monkeypatch.setattr(parameters_module, "check_params", lambda fit: None)  # stub fits
        save_fit(tmp_path / "r.json", StubReport(fits()))
        report = load_fit(tmp_path / "r.json").to_report()
        assert [f.model for f in report.fits] == [f.model for f in fits()]
        assert "RWBM" in str(report) and report.best("carterette").model == "RBP"
