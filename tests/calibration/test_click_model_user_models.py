"""Click models as user models of M1–M4 (issue 27, item 4): fit files with family "clickmodel".

A PBM's examination probabilities become a static stopping distribution (the user examines rank k with
probability g_k / g_1, after an isotonic fit; below the log's deepest rank the last continuation is kept); a DBN,
SDBN or CM fitted with qrels becomes a graded dynamic distribution, h(g) = 1 - gamma (1 - a(g) s(g)).  Every value
is checked against the formula written out here from the fit's params (dense loops over the ranks), against
numbers worked by hand, and against identities with the package's own distributions (SDBN with a(g) s(g) =
theta [g >= 1] is ERR(theta); a PBM with g_k = theta^(k-1) is RBP(theta)).
"""
import json

import ir_measures
import numpy as np
import pytest

from irmeasures_markov._util._errors import InputError
from irmeasures_markov.calibration import _registry as registry
from irmeasures_markov.calibration import load_fit, register_fitted, unregister_fitted
from irmeasures_markov.calibration._parameters import monotone_examination
from irmeasures_markov.calibration.click_models import ClickModelFit
from irmeasures_markov.measures._carterette_distributions import static_tables
from irmeasures_markov.plugin._fitted import carterette_distribution

# ---------------------------------------------------------------------------
# FIXTURES
# ---------------------------------------------------------------------------

EXAM = [0.95, 0.7, 0.5, 0.42, 0.3, 0.25]
DBN = {"continuation": 0.9, "attractiveness_by_grade": {"0": 0.2, "1": 0.6, "2": 0.8},
       "satisfaction_by_grade": {"0": 0.1, "1": 0.5, "2": 0.7}}


def clickmodel(model, params):
    """A click model as ClickModelFit.to_dict() writes it."""
    return {"name": model, "family": "clickmodel", "params": params, "loglik": -1.0, "n_params": 1, "n_sessions": 1}


def write_fit(path, fits, best):
    path.write_text(json.dumps({"format": "irmeasures_markov.fit", "version": 1, "log": {}, "fits": fits,
                                "best": best}))
    return str(path)


def values(measure, qrels, run):
    """Per-query values of a measure string."""
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)], qrels, run)}


def ranking_data(grade_lists):
    """One query per list of grades (rank order): qrels with those grades (-1: unjudged), a run in that order."""
    qrels, run = [], []
    for q, grades in enumerate(grade_lists):
        for k, g in enumerate(grades):
            if g >= 0:
                qrels.append(ir_measures.Qrel(f"q{q}", f"d{k}", int(g)))
            run.append(ir_measures.ScoredDoc(f"q{q}", f"d{k}", float(len(grades) - k)))
        qrels.append(ir_measures.Qrel(f"q{q}", "never-retrieved", 1))   # every query has RB > 0
    return qrels, run


def dense_reference(grades, h, model, rel=1, f="1/k"):
    """M1–M4 by a loop over the ranks, from the stopping probability h(g) per grade (unjudged: grade 0)."""
    reach, total, seen = 1.0, 0.0, 0
    for k, g in enumerate(grades, start=1):
        hk = h[max(g, 0)]
        p = reach * hk
        a = g >= rel
        seen += a
        total += {"M1": a * p, "M2": a * reach, "M3": p / k if f == "1/k" else p * k, "M4": p * seen / k}[model]
        reach *= 1.0 - hk
    return total


def dbn_h(params, gamma=None):
    gamma = params["continuation"] if gamma is None else gamma
    a, s = params["attractiveness_by_grade"], params["satisfaction_by_grade"]
    return {int(g): 1.0 - gamma * (1.0 - a[g] * s[g]) for g in a}


@pytest.fixture(autouse=True)
def isolated(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})


# ---------------------------------------------------------------------------
# PBM -> static distribution
# ---------------------------------------------------------------------------

class TestPBM:
    def test_the_measure_reads_the_examination_probabilities(self, tmp_path):
        """M2 of a ranking whose only relevant document is at rank k is F(k), the chance to examine rank k:
        g_k / g_1; M1 is P(k) = (g_k - g_{k+1}) / g_1."""
        spec = "file:" + write_fit(tmp_path / "pbm.json", [clickmodel("PBM", {"examination": EXAM})],
                                   {"clickmodel": 0})
        D = len(EXAM)
        qrels, run = ranking_data([[0] * k + [1] + [0] * (D - k - 1) for k in range(D)])
        m2 = values(f"M2(dist='{spec}',norm=False)", qrels, run)
        m1 = values(f"M1(dist='{spec}')", qrels, run)
        g = np.array(EXAM) / EXAM[0]
        rho = EXAM[-1] / EXAM[-2]
        for k in range(D):
            assert m2[f"q{k}"] == pytest.approx(g[k], rel=1e-12)
            stop = g[k] - (g[k + 1] if k + 1 < D else g[k] * rho)
            assert m1[f"q{k}"] == pytest.approx(stop, rel=1e-12)

    def test_tail_below_the_deepest_rank_is_geometric(self, tmp_path):
        spec = "file:" + write_fit(tmp_path / "pbm.json", [clickmodel("PBM", {"examination": EXAM})],
                                   {"clickmodel": 0})
        key, theta = carterette_distribution(spec)
        p, tail = static_tables(key, theta, 64)
        rho = EXAM[-1] / EXAM[-2]
        D = len(EXAM)
        k = np.arange(D, 64)                               # 0-based index k is rank k + 1
        expected = EXAM[-1] / EXAM[0] * rho ** (k - D + 1) * (1 - rho)
        np.testing.assert_allclose(p[D:], expected, rtol=1e-12)
        np.testing.assert_allclose(tail[:D], np.array(EXAM) / EXAM[0], rtol=1e-12)

    def test_geometric_examination_is_rbp(self, tmp_path):
        theta = 0.7
        spec = "file:" + write_fit(tmp_path / "pbm.json",
                                   [clickmodel("PBM", {"examination": [0.6 * theta ** i for i in range(10)]})],
                                   {"clickmodel": 0})
        rng = np.random.default_rng(3)
        qrels, run = ranking_data([rng.integers(-1, 3, size=30).tolist() for _ in range(5)])
        for model in ("M1", "M2", "M3", "M4"):
            got = values(f"{model}(dist='{spec}',norm=False)", qrels, run)
            ref = values(f"{model}(dist='RBP',theta={theta},norm=False)", qrels, run)
            assert got == pytest.approx(ref, rel=1e-12), model

    def test_examination_is_made_non_increasing_by_isotonic_regression(self):
        # pool adjacent violators, worked by hand: (0.6, 0.65) -> 0.625; (0.3, 0.2, 0.4) -> 0.3
        np.testing.assert_allclose(monotone_examination([0.9, 0.6, 0.65, 0.3]), [0.9, 0.625, 0.625, 0.3])
        np.testing.assert_allclose(monotone_examination([1.0, 0.3, 0.2, 0.4, 0.1]),
                                   [1.0, 0.3, 0.3, 0.3, 0.1])
        rng = np.random.default_rng(0)
        for _ in range(50):
            g = rng.random(8)
            m = monotone_examination(g)
            assert np.all(np.diff(m) <= 1e-15)
            assert m.sum() == pytest.approx(g.sum())      # pooling keeps the total
            # least squares among non-increasing sequences: no better one nearby
            for _ in range(20):
                other = np.sort(m + rng.normal(0, 0.02, 8))[::-1]
                assert ((m - g) ** 2).sum() <= ((other - g) ** 2).sum() + 1e-12

    def test_hand_computed_value(self, tmp_path):
        """g = (0.9, 0.6, 0.65, 0.3) -> isotonic (0.9, 0.625, 0.625, 0.3) -> / 0.9; continuations
        (0.625/0.9, 1, 0.48), then 0.48 repeated.  Ranking a(2) b(0) x(unjudged) c(1) d(1): relevant at 1, 4, 5."""
        spec = "file:" + write_fit(tmp_path / "pbm.json",
                                   [clickmodel("PBM", {"examination": [0.9, 0.6, 0.65, 0.3]})], {"clickmodel": 0})
        qrels = [ir_measures.Qrel("q", d, g) for d, g in [("a", 2), ("b", 0), ("c", 1), ("d", 1)]]
        run = [ir_measures.ScoredDoc("q", d, 10 - i) for i, d in enumerate(["a", "b", "x", "c", "d"])]
        g2 = 0.625 / 0.9
        g4 = 0.3 / 0.9
        p1, p4, p5 = 1 - g2, g4 * (1 - 0.48), g4 * 0.48 * (1 - 0.48)
        got = ir_measures.calc_aggregate([ir_measures.parse_measure(f"M1(dist='{spec}')")], qrels, run)
        assert list(got.values())[0] == pytest.approx(p1 + p4 + p5, rel=1e-12)


# ---------------------------------------------------------------------------
# DBN / SDBN / CM -> graded dynamic distribution
# ---------------------------------------------------------------------------

class TestDBN:
    @pytest.mark.parametrize("model", ["M1", "M2", "M3", "M4"])
    @pytest.mark.parametrize("cutoff", ["", "@7"])
    def test_equals_the_dbn_formula(self, tmp_path, model, cutoff):
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        rng = np.random.default_rng(1)
        lists = [rng.integers(-1, 3, size=n).tolist() for n in (1, 5, 12, 30)]
        qrels, run = ranking_data(lists)
        got = values(f"{model}(dist='{spec}'){cutoff}", qrels, run)
        h = dbn_h(DBN)
        for q, grades in enumerate(lists):
            cut = grades[:7] if cutoff else grades
            assert got[f"q{q}"] == pytest.approx(dense_reference(cut, h, model), rel=1e-12, abs=1e-15)

    def test_reach_probability_is_the_continuation_product(self, tmp_path):
        """M2 of a ranking whose one relevant document is at rank k + 1: F(k + 1) = prod_{j<=k} gamma (1 - a s)."""
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        above = [1, 0, 0, 1, -1, 0]                       # not relevant at rel=2
        qrels, run = ranking_data([above[:k] + [2] for k in range(len(above) + 1)])
        got = values(f"M2(dist='{spec}',rel=2)", qrels, run)
        a, s = DBN["attractiveness_by_grade"], DBN["satisfaction_by_grade"]
        for k in range(len(above) + 1):
            expected = np.prod([DBN["continuation"] * (1 - a[str(max(g, 0))] * s[str(max(g, 0))])
                                for g in above[:k]])
            assert got[f"q{k}"] == pytest.approx(expected, rel=1e-12)
        # the per-rank parameters the measure registered are those of the fit
        key, _ = carterette_distribution(spec)
        from irmeasures_markov.measures._carterette_distributions import CUSTOM_DISTRIBUTIONS
        np.testing.assert_allclose(CUSTOM_DISTRIBUTIONS[key].hazard([0, 1, 2]),
                                   [dbn_h(DBN)[g] for g in (0, 1, 2)], rtol=1e-15)

    def test_hand_computed_value(self, tmp_path):
        """h(2) = 1 - .9 (1 - .56) = .604, h(0) = .118, h(1) = .37; grades a=2 b=0 x=unjudged c=1 d=1."""
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        qrels = [ir_measures.Qrel("q", d, g) for d, g in [("a", 2), ("b", 0), ("c", 1), ("d", 1)]]
        run = [ir_measures.ScoredDoc("q", d, 10 - i) for i, d in enumerate(["a", "b", "x", "c", "d"])]
        reach4 = 0.396 * 0.882 * 0.882
        m1 = 0.604 + reach4 * 0.37 + reach4 * 0.63 * 0.37
        got = ir_measures.calc_aggregate([ir_measures.parse_measure(f"M1(dist='{spec}')")], qrels, run)
        assert list(got.values())[0] == pytest.approx(m1, rel=1e-12)

    def test_sdbn_with_binary_satisfaction_is_err(self, tmp_path):
        """gamma = 1 and a(g) s(g) = theta [g >= 1]: Chapelle's ERR distribution, M3(dist='ERR', theta)."""
        theta = 0.4
        sdbn = {"continuation": 1.0, "attractiveness_by_grade": {"0": 0.0, "1": 0.8, "2": 0.8},
                "satisfaction_by_grade": {"0": 0.3, "1": theta / 0.8, "2": theta / 0.8}}
        spec = "file:" + write_fit(tmp_path / "sdbn.json", [clickmodel("SDBN", sdbn)], {"clickmodel": 0})
        rng = np.random.default_rng(2)
        qrels, run = ranking_data([rng.integers(-1, 3, size=n).tolist() for n in (3, 10, 40)])
        for model in ("M1", "M3", "M4"):
            got = values(f"{model}(dist='{spec}')", qrels, run)
            ref = values(f"{model}(dist='ERR',theta={theta})", qrels, run)
            assert got == pytest.approx(ref, rel=1e-12), model

    def test_cascade_model_stops_at_its_first_click(self, tmp_path):
        cm = {"attractiveness_by_grade": {"0": 0.1, "1": 0.5}}
        spec = "file:" + write_fit(tmp_path / "cm.json", [clickmodel("CM", cm)], {"clickmodel": 0})
        grades = [0, 1, -1, 1, 0, 1]
        qrels, run = ranking_data([grades])
        for model in ("M1", "M2", "M3", "M4"):
            got = values(f"{model}(dist='{spec}')", qrels, run)["q0"]
            assert got == pytest.approx(dense_reference(grades, {0: 0.1, 1: 0.5}, model), rel=1e-12)

    def test_grades_outside_the_table_take_the_nearest_grade_below(self, tmp_path):
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        grades = [4, 0, 3, 1]
        qrels, run = ranking_data([grades])
        got = values(f"M1(dist='{spec}')", qrels, run)["q0"]
        h = dbn_h(DBN)
        assert got == pytest.approx(dense_reference([2, 0, 2, 1], h, "M1"), rel=1e-12)

    def test_ties_expected_is_the_mean_over_tie_orders(self, tmp_path):
        """a, b tied (grades 2, 0), x, c tied (unjudged, 1), then d (1): the mean over the four orders."""
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        qrels = [ir_measures.Qrel("q", d, g) for d, g in [("a", 2), ("b", 0), ("c", 1), ("d", 1)]]
        run = [ir_measures.ScoredDoc("q", d, s) for d, s in [("a", 3), ("b", 3), ("x", 2), ("c", 2), ("d", 1)]]
        h = dbn_h(DBN)
        orders = [top + mid + [1] for top in ([0, 2], [2, 0]) for mid in ([0, 1], [1, 0])]
        for model in ("M1", "M4"):
            got = values(f"{model}(dist='{spec}',ties='expected')", qrels, run)["q"]
            assert got == pytest.approx(np.mean([dense_reference(o, h, model) for o in orders]), rel=1e-12)

    def test_norm_is_refused(self, tmp_path):
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", DBN)], {"clickmodel": 0})
        qrels, run = ranking_data([[1, 0]])
        with pytest.raises(ValueError, match="norm is not available"):
            ir_measures.calc_aggregate([ir_measures.parse_measure(f"M2(dist='{spec}',norm=True)")], qrels, run)


# ---------------------------------------------------------------------------
# Which fit a measure uses, and errors
# ---------------------------------------------------------------------------

class TestResolution:
    def test_best_may_name_a_click_model_for_the_carterette_measures(self, tmp_path):
        fits = [{"family": "carterette", "model": "RBP", "params": {"dist": "RBP", "theta": 0.5}},
                clickmodel("PBM", {"examination": EXAM})]
        qrels, run = ranking_data([[1, 0, 2, 1, 0, 0, 1]])
        pbm = values("M1(dist='file:" + write_fit(tmp_path / "only.json", fits[1:], {"clickmodel": 0}) + "')",
                     qrels, run)
        as_best = values("M1(dist='file:" + write_fit(tmp_path / "b.json", fits, {"carterette": 1, "clickmodel": 1})
                         + "')", qrels, run)
        rbp_best = values("M1(dist='file:" + write_fit(tmp_path / "c.json", fits, {"carterette": 0, "clickmodel": 1})
                          + "')", qrels, run)
        assert as_best == pytest.approx(pbm)
        assert rbp_best == pytest.approx(values("M1(dist='RBP',theta=0.5)", qrels, run))
        assert pbm != pytest.approx(rbp_best)

    def test_a_report_record_of_a_click_model(self, tmp_path):
        """A report stores a click model as a FamilyFit record (family 'clickmodel', "model" its name, the
        query-document side under per_document); M1 reads it as it reads ClickModelFit.to_dict()."""
        record = {"family": "clickmodel", "model": "PBM", "loglik": -1.0, "n_sessions": 3,
                  "params": {"examination": EXAM, "per_document": {"unseen": {"attractiveness": 0.5},
                                                                   "prior": [1.0, 1.0]}}}
        qrels, run = ranking_data([[1, 0, 2, 0, 1]])
        as_record = values("M1(dist='file:" + write_fit(tmp_path / "r.json", [record], {"clickmodel": 0}) + "')",
                           qrels, run)
        as_click = values("M1(dist='file:" + write_fit(tmp_path / "c.json", [clickmodel("PBM", {"examination": EXAM})],
                                                       {"clickmodel": 0}) + "')", qrels, run)
        assert as_record == as_click

    def test_a_registered_click_model(self):
        fit = ClickModelFit.from_dict(clickmodel("PBM", {"examination": EXAM}))
        register_fitted("pbm", fit)
        try:
            qrels, run = ranking_data([[0, 0, 1]])
            got = values("M2(dist='fit:pbm',norm=False)", qrels, run)["q0"]
            assert got == pytest.approx(EXAM[2] / EXAM[0], rel=1e-12)
        finally:
            unregister_fitted("pbm")

    def test_ubm_is_not_an_mp_kernel(self, tmp_path):
        ubm = clickmodel("UBM", {"examination": [[0.9, 0.0, 0.0], [0.5, 0.7, 0.0], [0.3, 0.4, 0.6]]})
        spec = "file:" + write_fit(tmp_path / "ubm.json", [ubm], {"clickmodel": 0})
        with pytest.raises(ValueError, match="not an MP kernel"):
            ir_measures.calc_aggregate([ir_measures.parse_measure(f"MP(model='{spec}')")], *ranking_data([[1, 0]]))
        with pytest.raises(ValueError, match="not a user model"):
            ir_measures.calc_aggregate([ir_measures.parse_measure(f"M1(dist='{spec}')")], *ranking_data([[1, 0]]))

    def test_the_error_names_the_click_models_that_could_serve(self, tmp_path):
        fits = [clickmodel("PBM", {"examination": EXAM}),
                clickmodel("UBM", {"examination": [[0.9, 0.0], [0.5, 0.7]]})]
        spec = "file:" + write_fit(tmp_path / "two.json", fits, {"clickmodel": 1})
        with pytest.raises(ValueError, match=r"best click model \(UBM\) is not a user model.*fit 0 \(PBM\) can be"):
            ir_measures.calc_aggregate([ir_measures.parse_measure(f"M1(dist='{spec}')")], *ranking_data([[1, 0]]))

    def test_dbn_without_grades_is_not_a_user_model(self, tmp_path):
        spec = "file:" + write_fit(tmp_path / "dbn.json", [clickmodel("DBN", {"continuation": 0.9})],
                                   {"clickmodel": 0})
        with pytest.raises(ValueError, match=r"click model \(DBN\) is not a user model"):
            ir_measures.calc_aggregate([ir_measures.parse_measure(f"M1(dist='{spec}')")], *ranking_data([[1, 0]]))

    @pytest.mark.parametrize("fit, message", [
        (clickmodel("PBM", {"examination": [0.9, 1.4]}), "fit 0 (clickmodel 'PBM'): field 'examination'"),
        (clickmodel("XYZ", {}), "click model name must be one of"),
        (clickmodel("PBM", {}), "field 'examination' is missing"),
        (clickmodel("UBM", {"examination": [0.9, 0.5]}), "examination' of a UBM fit must be a list of rows"),
        (clickmodel("SDBN", {"continuation": 0.5}), "SDBN has continuation 1"),
        (clickmodel("DBN", {"continuation": 0.5, "satisfaction_by_grade": {"x": 0.5}}),
         "field 'satisfaction_by_grade'"),
        (clickmodel("DBN", {"continuation": 0.5, "speed": 1}), "unknown field 'speed'"),
    ])
    def test_schema_errors_name_the_file_fit_and_field(self, tmp_path, fit, message):
        path = write_fit(tmp_path / "bad.json", [fit], {"clickmodel": 0})
        with pytest.raises(InputError, match="bad.json") as e:
            load_fit(path)
        assert message in str(e.value)

    def test_best_carterette_cannot_name_a_ubm(self, tmp_path):
        ubm = clickmodel("UBM", {"examination": [[0.9, 0.0], [0.5, 0.7]]})
        with pytest.raises(InputError, match="'carterette' -> 0 is not the index"):
            load_fit(write_fit(tmp_path / "bad.json", [ubm], {"carterette": 0}))


# ---------------------------------------------------------------------------
# Fits made by calibration.click_models, through fit files
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fitted():
    """The five click models fitted with qrels to a simulated DBN log whose parameters rise with the grade."""
    from click_model_sim import docs_of, simulate

    from irmeasures_markov.calibration.click_models import fit_click_model
    rng = np.random.default_rng(5)
    grades = {f"q{q}": {d: int(rng.integers(0, 3)) for d in docs_of(f"q{q}", 5)} for q in range(3)}
    attr = {(q, d): 0.2 + 0.3 * g for q, docs in grades.items() for d, g in docs.items()}
    sat = {(q, d): 0.1 + 0.35 * g for q, docs in grades.items() for d, g in docs.items()}
    log = simulate("DBN", 3000, attr, sat=sat, gamma=0.85, rng=6)
    fits = {name: fit_click_model(name, log, qrels=grades) for name in ("PBM", "DBN", "SDBN", "CM", "UBM")}
    assert set(fits["DBN"].params["satisfaction_by_grade"]) == {"0", "1", "2"}
    return fits


class TestFittedClickModels:

    def test_measures_use_the_fitted_parameters(self, fitted, tmp_path):
        from irmeasures_markov.calibration import save_fit
        rng = np.random.default_rng(7)
        lists = [rng.integers(-1, 3, size=n).tolist() for n in (4, 9, 25)]
        qrels, run = ranking_data(lists)
        for name in ("DBN", "SDBN", "CM"):
            path = tmp_path / f"{name}.json"
            save_fit(path, fitted[name])
            p = fitted[name].params
            a = {int(g): v for g, v in p["attractiveness_by_grade"].items()}
            s = {int(g): v for g, v in p.get("satisfaction_by_grade", dict.fromkeys(p["attractiveness_by_grade"],
                                                                                      1.0)).items()}
            gamma = p.get("continuation", 1.0)
            h = {g: 1 - gamma * (1 - a[g] * s[g]) for g in a}
            for model in ("M1", "M2", "M3", "M4"):
                got = values(f"{model}(dist='file:{path}')", qrels, run)
                for q, grades in enumerate(lists):
                    assert got[f"q{q}"] == pytest.approx(dense_reference(grades, h, model), rel=1e-12), (name, model)
        path = tmp_path / "PBM.json"
        save_fit(path, fitted["PBM"])
        g = monotone_examination(fitted["PBM"].params["examination"])
        D = g.size
        qrels, run = ranking_data([[0] * k + [1] for k in range(D)])
        got = values(f"M2(dist='file:{path}',norm=False)", qrels, run)
        for k in range(D):
            assert got[f"q{k}"] == pytest.approx(g[k] / g[0], rel=1e-12)

    def test_a_report_file_with_every_click_model(self, fitted, tmp_path):
        """The five click models in one file, the PBM as the Carterette measures' best: M1 reads the PBM; MP
        refuses the UBM with the reason."""
        from irmeasures_markov.calibration import FitFile, save_fit
        names = list(fitted)
        ff = FitFile([fitted[n] for n in names], {"carterette": names.index("PBM"), "clickmodel": names.index("UBM")})
        path = tmp_path / "all.json"
        save_fit(path, ff)
        loaded = load_fit(path)
        assert [f.name for f in loaded.fits] == names
        assert loaded.best("carterette").params == fitted["PBM"].params
        qrels, run = ranking_data([[1, 0, 2, 0, 1]])
        single = tmp_path / "pbm.json"
        save_fit(single, fitted["PBM"])
        assert values(f"M1(dist='file:{path}')", qrels, run) == values(f"M1(dist='file:{single}')", qrels, run)
        with pytest.raises(ValueError, match="not an MP kernel"):
            values(f"MP(model='file:{path}')", qrels, run)
