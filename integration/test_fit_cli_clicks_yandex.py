"""Issue 27's acceptance command on the Yandex WSCD 2012 sample (skips without the shared data):
``irmeasures-markov fit train.txt --format wscd --test test.txt --family all`` prints the held-out log-likelihood
per session and the click perplexity of the package's families and of PBM, CM, UBM and DBN, and the click-model
perplexities agree within 0.01 with the independent figures of the issue."""
import pytest

from irmeasures_markov.testing import shared_data_dir

DATA = shared_data_dir()
LOGS = DATA / "logs" / "yandex-wscd2012-sample" if DATA is not None else None
pytestmark = pytest.mark.skipif(LOGS is None or not LOGS.is_dir(),
                                reason="Yandex WSCD sample not found under the shared data directory")

#: issue 27: held-out click perplexity on test.txt measured by independent implementations
ISSUE = {("clickmodel", "PBM"): 1.4334, ("clickmodel", "UBM"): 1.4340, ("clickmodel", "DBN"): 1.4378,
         ("clickmodel", "CM"): 1.5402, ("baseline", "rank-CTR"): 1.4880, ("carterette", "RBP(theta=0.8)"): 1.4853,
         ("carterette", "empirical"): 1.4860, ("ph", "RWBM"): 1.5061}


def test_acceptance_command(capsys):
    from irmeasures_markov.cli import main
    assert main(["fit", str(LOGS / "train.txt"), "--format", "wscd", "--test", str(LOGS / "test.txt"),
                 "--family", "all", "--bootstrap", "0", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "LL/session" in out.splitlines()[0] and "click ppl" in out.splitlines()[0]
    rows = {}
    for line in out.splitlines():
        tok = [t for t in line.split() if t != "*"]
        if len(tok) >= 10 and tok[0] in ("mp", "ph", "carterette", "tbg", "clickmodel", "baseline"):
            rows[(tok[0], tok[1])] = tuple(None if t == "—" else float(t) for t in tok[8:10])
    for key, want in ISSUE.items():
        ll, ppl = rows[key]
        assert ppl == pytest.approx(want, abs=0.01), key
        assert ll is not None and ll < 0
    assert rows[("clickmodel", "UBM")][0] == pytest.approx(-3.239, abs=0.01)
    assert all(rows[k] == (None, None) for k in rows if k[0] == "mp")  # MP models no clicked set
