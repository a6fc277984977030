"""The line-by-line reference readers of the run and qrels grammar, for tests of the package's whole-file readers.

They stream a file one line at a time through the line grammar
(:func:`~irmeasures_markov.io._trec.run_from_lines`,
:func:`~irmeasures_markov.io._trec.qrels_from_lines`), never through the
whole-file tokenisers, so a test comparing :func:`~irmeasures_markov.io.read_trec_run`
or :func:`~irmeasures_markov.io.read_trec_qrels` with them (same dicts, same
float bits, same error naming file and line) checks the tokenisers against the
grammar.  Test modules import them as ``from reference_readers import ...``
(``tests`` is on ``sys.path``: pyproject's ``pythonpath``).
"""
from irmeasures_markov.io._text import display_name, open_lines
from irmeasures_markov.io._trec import qrels_from_lines, run_from_lines


def read_trec_run_lines(path):
    """``{qid: {docid: score}}`` of a run file (or ``-``), read line by line; InputError as ``read_trec_run``."""
    with open_lines(path) as lines:
        return run_from_lines(lines, display_name(path))


def read_trec_qrels_lines(path):
    """``{qid: {docid: grade}}`` of a qrels file (or ``-``), read line by line; InputError as ``read_trec_qrels``."""
    with open_lines(path) as lines:
        return qrels_from_lines(lines, display_name(path))
