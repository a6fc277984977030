"""Carterette (SIGIR 2011) reproduction: a small version of integration/reproduce/reproduce_carterette2011.py.

Runs the script twice on a subset (8 TREC-8 runs, 2 sample sizes, 2 depths; .ci/run runs a larger version on
both collections) and checks that it
writes the same page and figures byte for byte, that the page holds every section and a verdict for every
finding, and that its numbers are those of the library functions; the DCG tail weight is the closed form.
"""
import math
import re

import numpy as np
import pytest
from reproduce_carterette2011 import PAPER15, dcg_tail, main, measures

from irmeasures_markov.experiments import pool_depth_robustness

SMALL = ["--collections", "trec8", "--runs", "8", "--sizes", "5,25", "--trials", "10", "--depths", "1,10",
         "--no-calibration", "--n-jobs", "2", "--no-progress"]


@pytest.fixture(scope="module")
def pages(data_dir, tmp_path_factory):
    out = []
    for k in range(2):
        d = tmp_path_factory.mktemp(f"carterette{k}")
        assert main(SMALL + ["--data-dir", str(data_dir), "--out", str(d / "page.md"), "--figures", str(d)]) == 0
        out.append(d)
    return out


def test_page_and_figures_are_byte_for_byte_reproducible(pages):
    a, b = pages
    names = sorted(p.name for p in a.iterdir())
    assert names == ["carterette2011-clicks.png", "carterette2011-depth.png", "carterette2011-topics.png",
                     "page.md"]
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_every_finding_has_a_verdict(pages):
    text = (pages[0] / "page.md").read_text(encoding="utf-8")
    for section in ("## TREC-8", "## Figure 2 analogue", "## The “negligible” tail",
                    "### Every combination"):
        assert section in text
    verdicts = re.findall(r"\| \*\*(holds|partly|does not hold)\*\* \|$", text, re.M)
    assert len(verdicts) == 11 + 1
    assert "carterette2011-topics.png" in text and "--runs 8" in text and "--data-dir" not in text


def test_page_numbers_are_the_library_functions(pages, trec8):
    qrels, runs = trec8
    names = sorted(runs)
    names = [names[int(i)] for i in np.linspace(0, len(names) - 1, 8).round().astype(int)]
    depth = pool_depth_robustness(measures(), qrels, {n: runs[n] for n in names}, depths=[1, 10], progress=False)
    text = (pages[0] / "page.md").read_text(encoding="utf-8")
    trec = text[text.index("## TREC-8"):text.index("## Figures")]
    row = next(line for line in trec.splitlines() if line.startswith("| M4 × AP | AP |"))
    assert row.split("|")[-2].strip() == f"{depth.loc[1, 'M4 AP']:.3f}"
    assert len(PAPER15) == 15


def test_dcg_tail_weight(trec8):
    qrels, runs = trec8
    w_dcg, w_rr, shares = dcg_tail(qrels, {n: runs[n] for n in sorted(runs)[:3]})
    assert w_dcg == pytest.approx(1 / math.log2(1002)) and round(w_dcg, 3) == 0.100
    assert w_rr == 1 / 1001 and shares.shape == (3, 4) and np.all((shares[:, :2] > 0) & (shares[:, :2] < 1))
    np.testing.assert_allclose(shares[:, 3], shares[:, 2] * (1 - shares[:, 0]))
