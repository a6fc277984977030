"""Exceptions shared by every input path (files, in-memory runs and qrels, measure strings).

Kept in a module of its own, with no imports, so that readers, in-memory
normalisation, measures and the command line can all raise and catch the same
classes without importing each other.
"""
from __future__ import annotations

__all__ = ["InputError", "InputTypeError"]


class InputError(ValueError):
    """Malformed input; the message names the file and line (or query and document)."""


class InputTypeError(InputError, TypeError):
    """An in-memory id or grade of the wrong type (e.g. an int docid, a float grade).

    A ``TypeError``, as pytrec_eval raises for the same inputs, and an
    [`InputError`][irmeasures_markov.io.InputError], so code that reports malformed input catches it too.
    """
