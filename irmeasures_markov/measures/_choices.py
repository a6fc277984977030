"""Valid values of a name parameter whose set grows at run time (MP's ``model``, M1-M4's ``dist``)."""
from typing import Callable, Mapping, Tuple


class RegisteredNames:
    """Built-in names and the names registered so far (looked up case-insensitively).

    ``registry()`` returns the registry's current mapping: it is called on
    each use, so a name registered later, or a registry replaced, is seen.
    """

    def __init__(self, builtin: Tuple[str, ...], registry: Callable[[], Mapping[str, object]]):
        self._builtin = builtin
        self._registry = registry

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and (name.upper() in self._builtin or name.upper() in self._registry())

    def __iter__(self):
        return iter(self._builtin + tuple(self._registry()))

    def __repr__(self):
        return repr(list(self))
