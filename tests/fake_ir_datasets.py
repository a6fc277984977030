"""A fake ``ir_datasets`` for the tests: ``load(id)`` for a few ids, datasets with qrels and docs in memory.

The test modules import it as ``from fake_ir_datasets import ...``: pytest's default import mode puts
``tests/`` on ``sys.path``.  ``install(monkeypatch)`` puts the fake module in ``sys.modules`` for one test.
"""
import sys
import types


class FakeIrDatasets:
    """Just enough of ``ir_datasets`` for qrels and docs: ``load(id)`` for the ids in ``datasets``, a KeyError for
    any other id (what ``ir_datasets.load`` raises for an unknown id)."""

    def __init__(self, datasets=None):
        self.datasets = {} if datasets is None else datasets
        self.module = types.ModuleType("ir_datasets")
        self.module.load = self.load

    def load(self, dataset_id):
        if dataset_id not in self.datasets:
            raise KeyError(dataset_id)
        return self.datasets[dataset_id]

    def install(self, monkeypatch):
        """Make ``import ir_datasets`` give this fake until the end of the test; returns the fake."""
        monkeypatch.setitem(sys.modules, "ir_datasets", self.module)
        return self


class FakeDataset:
    """One dataset of a :class:`FakeIrDatasets`.

    qrels: ``(query_id, doc_id, relevance)`` triples.
    docs: ``(doc_id, text)`` pairs, or ``(doc_id, text, fields)`` with ``fields`` a dict of further attributes of
    the document object (``title``, ``body``, ...); ``default_text()`` returns ``text``.
    error: an exception that ``qrels_iter`` and ``docs_iter`` raise (a dataset that cannot be downloaded).
    docs_once: a second ``docs_iter`` raises AssertionError (the length cache was not used); ``docs_iterations``
    has one entry per call of ``docs_iter``.
    """

    def __init__(self, qrels=(), docs=(), error=None, docs_once=False, name="the dataset"):
        self.qrels, self.docs, self.error = list(qrels), list(docs), error
        self.docs_once, self.name = docs_once, name
        self.docs_iterations = []

    def has_qrels(self):
        return True

    def has_docs(self):
        return True

    def docs_count(self):
        return len(self.docs)

    def qrels_iter(self):
        if self.error:
            raise self.error
        return iter(types.SimpleNamespace(query_id=q, doc_id=d, relevance=g, iteration="0") for q, d, g in self.qrels)

    def docs_iter(self):
        if self.error:
            raise self.error
        if self.docs_once and self.docs_iterations:
            raise AssertionError(f"{self.name} iterated twice: the cache was not used")
        self.docs_iterations.append(1)
        return iter(types.SimpleNamespace(doc_id=doc[0], default_text=(lambda t=doc[1]: t),
                                          **(doc[2] if len(doc) > 2 else {}))
                    for doc in self.docs)
