"""``irmeasures-markov fit --family all``: held-out LL/session and click perplexity for the families and the click
models, the split by query, on a small synthetic WSCD log (issue 27, items 2 and 5)."""
import json
import math

import numpy as np
import pytest

from irmeasures_markov.calibration import read_wscd
from irmeasures_markov.calibration._click_metrics import click_metrics, click_vector
from irmeasures_markov.calibration.click_models import fit_click_model
from irmeasures_markov.cli import main


def _wscd(path, n_sessions, seed, n_queries=12, n_docs=5):
    """A WSCD log of a position-based model with per-query-document attractiveness (one line per query)."""
    rng = np.random.default_rng(seed)
    exam = 0.85 ** np.arange(n_docs)
    attract = np.random.default_rng(99).uniform(0.05, 0.8, size=(n_queries, n_docs))  # the same in both files
    by_query = {}
    for _ in range(n_sessions):
        q = int(rng.integers(n_queries))
        docs = [f"q{q}d{r}" for r in range(n_docs)]
        clicked = [docs[r] for r in range(n_docs) if rng.random() < exam[r] * attract[q, r]]
        by_query.setdefault(q, []).append(f"q{q}\t{','.join(docs)} :" + (" " + " , ".join(clicked) if clicked else ""))
    path.write_text("".join("; ".join(v) + ";\n" for _, v in sorted(by_query.items())))
    return str(path)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("clicks")
    return _wscd(d / "train.txt", 600, 1), _wscd(d / "test.txt", 300, 2)


def _row(out, family, model):
    """(LL/session, click perplexity) of the table's row ``family model``; None for '—'."""
    for line in out.splitlines():
        tok = line.split()
        if len(tok) > 2 and tok[0] == family and tok[1] == model:
            tok = [t for t in tok if t != "*"]
            return tuple(None if t == "—" else float(t) for t in tok[8:10])
    raise AssertionError(f"no row {family} {model} in\n{out}")


@pytest.mark.slow  # fits every family and click model
def test_family_all_prints_click_metrics_for_families_and_click_models(logs, tmp_path, capsys):
    train_path, test_path = logs
    out_file = tmp_path / "fit.json"
    assert main(["fit", train_path, "--format", "wscd", "--test", test_path, "--family", "all", "--bootstrap", "0",
                 "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert "LL/session" in head and "click ppl" in head
    train, test = read_wscd(train_path), read_wscd(test_path)
    # the click models: the numbers click_metrics gives for each fitted model on the test log
    for name in ("PBM", "CM", "UBM", "DBN"):
        m = click_metrics(fit_click_model(name, train), test)
        ll, ppl = _row(out, "clickmodel", name)
        assert ll == pytest.approx(m.loglik_per_session, abs=1e-4) and ppl == pytest.approx(m.perplexity, abs=1e-4)
    # a family: perplexity recomputed by hand from the fit's click probabilities (fit file's fit = the printed one)
    from irmeasures_markov.calibration import load_fit
    saved = load_fit(out_file)
    car = saved.best("carterette")
    per_rank = []
    for r in range(5):
        terms = [math.log2(p if c else 1 - p) for s in test
                 for p, c in [(car.click_probabilities(s)[r], click_vector(s)[r])]]
        per_rank.append(2 ** (-sum(terms) / len(terms)))
    ll, ppl = _row(out, "carterette", car.model)
    assert ppl == pytest.approx(sum(per_rank) / 5, abs=1e-4)
    assert ll == pytest.approx(sum(car.session_loglik(s) for s in test) / len(test), abs=1e-4)
    assert _row(out, "mp", saved.best("mp").model) == (None, None)  # MP models no clicked set
    base_ll, base_ppl = _row(out, "baseline", "rank-CTR")
    assert base_ppl > _row(out, "clickmodel", "PBM")[1]  # attractiveness per document helps on these queries
    assert "held out: the test log" in out and "click perplexity by rank (held-out sessions)" in out
    # the fit file keeps every fit's metrics
    raw = json.loads(out_file.read_text())
    pbm = next(f for f in raw["fits"] if f["family"] == "clickmodel" and f["model"] == "PBM")
    assert pbm["heldout_metrics"]["perplexity"] == pytest.approx(_row(out, "clickmodel", "PBM")[1], abs=1e-4)
    assert pbm["train_metrics"]["n_sessions"] == len(train)
    assert raw["log"]["split"] == {"kind": "file", "source": test_path}


@pytest.mark.slow  # model fits
def test_test_split_is_by_query_by_default(logs, tmp_path, capsys):
    train_path, _ = logs
    out_file = tmp_path / "fit.json"
    assert main(["fit", train_path, "--test-split", "0.3", "--seed", "4", "--family", "carterette,clickmodels",
                 "--bootstrap", "0", "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "split by query (all sessions of a query on one side), seed 4" in out
    log = json.loads(out_file.read_text())["log"]
    assert log["split"] == {"kind": "query", "fraction": 0.3, "seed": 4}
    sizes = (log["n_sessions"], log["n_heldout"])
    # the same seed, the same split
    assert main(["fit", train_path, "--test-split", "0.3", "--seed", "4", "--family", "carterette",
                 "--bootstrap", "0", "-o", str(out_file)]) == 0
    capsys.readouterr()
    log = json.loads(out_file.read_text())["log"]
    assert (log["n_sessions"], log["n_heldout"]) == sizes
    assert main(["fit", train_path, "--test-split", "0.3", "--split", "sessions", "--family", "carterette",
                 "--bootstrap", "0", "-o", str(out_file)]) == 0
    assert "split by session, seed 0" in capsys.readouterr().out
    assert json.loads(out_file.read_text())["log"]["split"]["kind"] == "sessions"


def test_split_usage_errors(logs, capsys):
    train_path, _ = logs
    assert main(["fit", train_path, "--split", "sessions"]) == 2
    assert "--split chooses how --test-split draws the held-out sessions" in capsys.readouterr().err
    assert main(["fit", train_path, "--test-split", "0.3", "--split", "docs"]) == 2
    assert "invalid choice: 'docs'" in capsys.readouterr().err
    assert main(["fit", train_path, "--family", "clickmodel"]) == 2
    assert "clickmodels" in capsys.readouterr().err
