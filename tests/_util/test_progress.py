"""Progress output: library calls print nothing when standard error is not a terminal (pytest's capture is
not one), something with ``progress=True``, and a bar on a terminal by default; ``progress=False`` is silent
even on a terminal.  One rule, in :mod:`irmeasures_markov._util._progress`."""
import io
import sys

import numpy as np
import pytest
from synthetic_collection import synthetic, write_run

from irmeasures_markov import experiments
from irmeasures_markov._util._progress import progress_bar, show_progress
from irmeasures_markov.inference import all_pairs, bayesian_linear_model, discriminative_power, score_matrix
from irmeasures_markov.inference._gibbs import gibbs_linear_model
from irmeasures_markov.io import load_run_dir


class Terminal(io.StringIO):
    """A standard error that says it is a terminal."""

    def isatty(self):
        return True


@pytest.fixture(scope="module")
def data():
    qrels, runs = synthetic(seed=3, n_topics=5, n_docs=30, n_runs=4, depth=15)
    return qrels, runs


def _scores(data):
    qrels, runs = data
    ev = experiments.evaluate(["AP", "P@5"], qrels, runs, progress=False)
    return {lab: score_matrix(ev.values[:, j, :].T, topics=list(ev.topics), systems=list(ev.runs))
            for j, lab in enumerate(["AP", "P@5"])}


def _calls(data, tmp_path):
    """Every library call that can show progress, as ``name -> f(progress)``; ``progress='default'`` omits it."""
    qrels, runs = data
    rdir = tmp_path / "runs"
    rdir.mkdir(exist_ok=True)
    for name, run in runs.items():
        write_run(rdir / f"input.{name}", run)
    scores = _scores(data)

    def kw(progress):
        return {} if progress == "default" else {"progress": progress}

    def fit_log(progress):
        from user_model_sim import simulate_mp

        from irmeasures_markov.calibration import fit
        log = simulate_mp(40, n_docs=5, rng=1)
        return fit(log, families="mp", bootstrap=0, **kw(progress))

    def grid_fits(progress):
        from irmeasures_markov.inference import fit_per_collection
        return fit_per_collection({"c": scores["AP"]}, draws=20, tune=20, chains=2, **kw(progress))

    def compare(progress):
        from irmeasures_markov.comparison import compare
        return compare(qrels, runs, ["AP"], test="bayes", bayes_draws=20, bayes_chains=2, **kw(progress))

    return {
        "datasets.load_run_dir": lambda p: load_run_dir(rdir, n_jobs=1, **kw(p)),
        "experiments.evaluate": lambda p: experiments.evaluate(["AP", "MP"], qrels, runs, **kw(p)),
        "experiments.pool_reduction": lambda p: experiments.pool_reduction(["AP"], qrels, runs, percents=(50,),
                                                                           **kw(p)),
        "inference.discriminative_power": lambda p: discriminative_power(scores, tests=("t", "randomization"),
                                                                         n_resamples=50, **kw(p)),
        "inference.all_pairs(wilcoxon)": lambda p: all_pairs(scores["AP"], "wilcoxon", **kw(p)),
        "bayes.gibbs_linear_model": lambda p: gibbs_linear_model(scores["AP"], draws=20, tune=20, **kw(p)),
        "bayes.bayesian_linear_model": lambda p: bayesian_linear_model(scores["AP"], draws=20, tune=20, **kw(p)),
        "grid.fit_per_collection": grid_fits,
        "comparison.compare(bayes)": compare,
        "calibration.fit": fit_log,
    }


CALLS = ["datasets.load_run_dir", "experiments.evaluate", "experiments.pool_reduction",
         "inference.discriminative_power", "inference.all_pairs(wilcoxon)", "bayes.gibbs_linear_model",
         "bayes.bayesian_linear_model", "grid.fit_per_collection", "comparison.compare(bayes)",
         pytest.param("calibration.fit", marks=pytest.mark.slow)]  # a model fit, five times


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # tiny Gibbs fits: R-hat warnings are not the point here
@pytest.mark.parametrize("name", CALLS)
def test_library_calls_are_silent_off_a_terminal_and_show_progress_when_asked(name, data, tmp_path, capsys,
                                                                               monkeypatch):
    call = _calls(data, tmp_path)[name]
    assert not sys.stderr.isatty()
    call("default")
    out, err = capsys.readouterr()
    assert (out, err) == ("", ""), f"{name} printed {out!r} {err!r} with standard error not a terminal"
    call(None)
    assert capsys.readouterr() == ("", "")
    call(True)
    out, err = capsys.readouterr()
    assert out == "" and err.strip(), f"{name}(progress=True) showed nothing on standard error"
    # on a terminal: progress by default, none with progress=False
    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    call("default")
    assert tty.getvalue().strip(), f"{name} showed no progress on a terminal"
    tty.seek(0)
    tty.truncate()
    call(False)
    assert tty.getvalue() == "" and capsys.readouterr().out == ""


def test_the_rule():
    class Closed:
        def isatty(self):
            raise ValueError("I/O operation on closed file")

    saved = sys.stderr
    try:
        sys.stderr = Terminal()
        assert show_progress(None) is True and show_progress(False) is False
        sys.stderr = io.StringIO()
        assert show_progress(None) is False and show_progress(True) is True
        sys.stderr = Closed()
        assert show_progress(None) is False
        sys.stderr = None  # pythonw, daemons
        assert show_progress(None) is False
    finally:
        sys.stderr = saved
    assert show_progress(np.True_) is True and show_progress(0) is False
    with pytest.raises(ValueError, match=r"`progress` must be True, False or None .*'yes'"):
        show_progress("yes")
    bar = progress_bar(range(3), False, desc="x")
    assert list(bar) == [0, 1, 2]
    bar.update(5)
    bar.close()


def _pool_reduction_files(data, tmp_path):
    qrels, runs = data
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    rdir = tmp_path / "runs"
    rdir.mkdir()
    for name, run in runs.items():
        write_run(rdir / f"input.{name}", run)
    return str(q), str(rdir)


def test_pool_reduction_command_shows_progress_on_a_terminal_only(data, tmp_path, capsys, monkeypatch):
    """The command line keeps its behaviour: a bar and the grid's summary on a terminal, --no-progress turns
    them off; off a terminal (a log file, a pipe) there is none, as for compare and fit."""
    from irmeasures_markov.cli import main
    qpath, rdir = _pool_reduction_files(data, tmp_path)
    argv = ["pool-reduction", qpath, rdir, "-m", "AP", "--percents", "50"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.count("\n") == 3  # a header and two rows
    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    assert "pool reduction" in tty.getvalue() and "cells" in tty.getvalue()
    assert capsys.readouterr().out.count("\n") == 3  # the table alone on standard output
    tty.seek(0)
    tty.truncate()
    assert main(argv + ["--no-progress"]) == 0
    assert tty.getvalue() == ""


@pytest.mark.slow  # Bayesian sampling (Gibbs) twice
def test_compare_command_shows_progress_on_a_terminal_only(data, tmp_path, capsys, monkeypatch):
    from irmeasures_markov.cli import main
    qpath, rdir = _pool_reduction_files(data, tmp_path)
    argv = ["compare", qpath, rdir, "-m", "AP", "--test", "bayes"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and "AP" in out
    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    shown = tty.getvalue()
    assert "reading runs" in shown and "evaluating" in shown and "Gibbs" in shown
    tty.seek(0)
    tty.truncate()
    assert main(argv + ["--no-progress"]) == 0
    assert tty.getvalue() == ""
