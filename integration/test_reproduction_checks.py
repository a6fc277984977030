"""integration/reproduce/reproduction_checks.py (docs/reproduction-checks.md) in a small version, and the
numbers its page states that the small version can check: MP Table 1, the AP–Rprec τ from NIST's summaries,
the Yandex shares, the cause of Table 3's P@10 offset (on all 129 runs), the P@H appendix C function and the
TBG bound."""
import numpy as np
import pytest
import reproduction_checks as rc
from reproduce_mp_tables import PAPER_TABLE2_TREC8

from irmeasures_markov.experiments import evaluate, kendall_tau

SMALL = ["--max-runs", "4", "--seeds", "1", "--resamples", "100", "--users", "100", "--n-jobs", "1",
         "--no-progress"]


@pytest.fixture(scope="module")
def small_page(data_dir, tmp_path_factory):
    pytest.importorskip("sympy")
    out = tmp_path_factory.mktemp("checks") / "checks.md"
    assert rc.main(SMALL + ["--data-dir", str(data_dir), "--out", str(out)]) == 0
    return out.read_bytes()


def test_rerun_is_byte_identical(small_page, data_dir, tmp_path):
    out = tmp_path / "again.md"
    assert rc.main(SMALL + ["--data-dir", str(data_dir), "--out", str(out)]) == 0
    assert out.read_bytes() == small_page


def test_page_states_every_check(small_page):
    text = small_page.decode()
    for heading in ("Table 1", "AP–Rprec", "§5.5", "−0.002", "Figure 4", "backward transitions", "Appendix C",
                    "lower bound", "Table 2 analogue"):
        assert heading in text, heading
    assert "P@15" in text  # the summaries' P_10 column is named for what it is


def test_mp_table1_from_the_qrels(data_dir):
    t1 = rc.table1(data_dir)
    for label, (topics, lo, avg, hi) in t1.items():
        pt, _, plo, pavg, phi = rc.PAPER_TABLE1[label]
        assert (topics, lo, round(avg, 2), hi) == (pt, plo, pavg, phi), label


def test_ap_rprec_from_official_summaries(data_dir):
    summaries = rc.official_summaries(data_dir)
    assert {c: len(summaries[c]) for _, c in rc.COLLECTIONS.values()} == {
        "trec7/adhoc": 103, "trec8/adhoc": 129, "trec10/web": 97, "trec14/robust": 74}
    for label, (_, coll) in rc.COLLECTIONS.items():
        rows = summaries[coll]
        tau = kendall_tau([rows[n][0] for n in sorted(rows)], [rows[n][1] for n in sorted(rows)])
        assert tau == pytest.approx(rc.PAPER_AP_RPREC[label], abs=0.002), label


def test_yandex_shares(data_dir):
    counts = rc.yandex_counts(data_dir)
    moves, back, _, clicked, with_back, n = counts["train"]
    assert (round(back / moves, 3), round(with_back / clicked, 3), n) == (0.235, 0.151, 35064)
    moves, back, _, clicked, with_back, n = counts["test"]
    assert (round(back / moves, 3), round(with_back / clicked, 3), n) == (0.206, 0.163, 21413)


def test_p10_offset_is_float_summation(trec8):
    """τ-b(AP, P@10) is 0.0020 below the paper with numpy means; with the P@10 ties restored it agrees."""
    qrels, runs = trec8
    ev = evaluate(["AP", "P@10"], qrels, runs, progress=False)
    ap, p10 = ev.means_array().T
    exact = rc.tied_means(ev.values[:, 1, :])
    assert len(set(exact.tolist())) < len(set(p10.tolist()))  # float summation splits true ties
    np.testing.assert_allclose(exact * 500, np.round(exact * 500), rtol=0, atol=1e-6)  # multiples of 1/500
    paper = PAPER_TABLE2_TREC8["P@10"]
    assert kendall_tau(ap, p10) - paper == pytest.approx(-0.0020, abs=0.0002)
    assert abs(kendall_tau(ap, exact) - paper) < 0.0005


def test_appendix_c_is_expected_total_gain():
    pytest.importorskip("sympy")
    assert rc.appendix_c_symbolic()
    _, equal, worst = rc.ph_appendix_section()
    assert equal and worst < 1e-12


def test_tbg_user_closed_form_against_simulation():
    rng = np.random.default_rng(3)
    rel = rng.random(60) < 0.3
    click = np.where(rel, 0.64, 0.39)
    read = 0.018 * rng.lognormal(np.log(300), 0.8, 60) + 7.8
    exact = rc.expected_saved(rel, click, read)
    mean, se = rc.simulate_saved(rel, click, read, 40000, np.random.default_rng(0))
    assert abs(mean - exact) < 4 * se


def test_tbg_bound_on_trec8_runs(trec8):
    qrels, runs = trec8
    small = {name: runs[name] for name in sorted(runs)[::32]}
    lengths = rc.assumed_lengths(small)
    import irmeasures_markov as imm
    imm.register_lengths("trec8-checks-test", lengths)
    ev = evaluate({"TBG": "TBG(lengths='trec8-checks-test')"}, qrels, small, progress=False)
    tbg = {name: dict(zip(ev.topics, ev.values[i, 0, :].tolist())) for i, name in enumerate(ev.runs)}
    _, violations, worst_z = rc.tbg_bound_section(qrels, small, lengths, tbg, users=300, sim_every=2)
    assert violations == 0
    assert worst_z < 4
