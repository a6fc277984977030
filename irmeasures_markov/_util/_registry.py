"""One helper for the package's name registries (kernels, distributions, lengths, rates, fits).

A `Registry` knows the rule its names follow, the built-in names they
must not take, and where its entries live.  The entries stay a plain mapping
owned by the registering module (``CUSTOM_KERNELS``, ``REGISTERED_RATES``...),
read through a function on every use, so a mapping replaced later (e.g. by a
test) is the one seen::

    >>> entries = {}
    >>> colours = Registry("colour", lambda: entries, builtin=("RED",), upper=True)
    >>> colours.register("teal", (0, 128, 128))
    'TEAL'
    >>> colours.get("Teal")
    (0, 128, 128)
    >>> "TEAL" in colours, colours.names()
    (True, ('RED', 'TEAL'))
    >>> colours.get("mauve")
    Traceback (most recent call last):
    ...
    KeyError: "unknown colour 'mauve'; registered: ['TEAL']"
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

__all__ = ["Registry", "RegisteredNames"]


class Registry:
    """Values registered by name at run time, next to a fixed set of built-in names.

    Parameters
    ----------
    kind : str
        What is registered, for messages (``"kernel"``, ``"rates"``...).
    entries : callable
        Returns the mapping that holds the registered ``{name: value}``; called on every use.
    builtin : iterable of str, optional
        Names that exist without registration and cannot be registered.
    upper : bool, optional
        Store and look names up upper-case (case-insensitive names).
    name_rule : callable, optional
        ``name_rule(name)`` raises ``ValueError`` (naming the rule) for a name not allowed.
    builtin_message : str, optional
        Message of the ``ValueError`` for a built-in name; ``{name!r}`` is replaced by the name given.
    """

    def __init__(self, kind: str, entries: Callable[[], MutableMapping[str, Any]], *, builtin: Iterable[str] = (),
                 upper: bool = False, name_rule: Callable[[object], object] | None = None,
                 builtin_message: str | None = None) -> None:
        self.kind = kind
        self._entries = entries
        self.builtin = tuple(builtin)
        self._upper = upper
        self._name_rule = name_rule
        self._builtin_message = builtin_message or "{name!r} is a built-in " + kind + "; choose another name"

    @property
    def entries(self) -> MutableMapping[str, Any]:
        """The mapping of registered names to values (the registering module's own)."""
        return self._entries()

    def key(self, name: object) -> str:
        """The stored form of ``name`` for registration, after checking it.

        Raises
        ------
        ValueError
            If ``name`` breaks the name rule or is a built-in name.
        """
        if self._name_rule is not None:
            self._name_rule(name)
        key = str(name).upper() if self._upper else str(name)
        if key in self.builtin:
            raise ValueError(self._builtin_message.format(name=name))
        return key

    def register(self, name: object, value: Any, check: Callable[[Any], Any] | None = None) -> str:
        """Register ``value`` under ``name`` (replacing an earlier value) and return the stored name.

        ``check(value)``, called after the name passed, validates the value and
        returns what is stored.

        Raises
        ------
        ValueError
            If the name is not allowed (see `key`), or as ``check`` raises.
        """
        key = self.key(name)
        self._entries()[key] = value if check is None else check(value)
        return key

    def _lookup_key(self, name: object) -> str:
        return str(name).upper() if self._upper and isinstance(name, str) else name  # type: ignore[return-value]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (built-in names are not entries)."""
        return isinstance(name, str) and self._lookup_key(name) in self._entries()

    def get(self, name: object) -> Any:
        """The value registered under ``name``.

        Raises
        ------
        KeyError
            If nothing is registered under ``name``, naming the registered names.
        """
        entries = self._entries()
        key = self._lookup_key(name)
        if key not in entries:
            raise KeyError(f"unknown {self.kind} {name!r}; registered: {sorted(entries)}")
        return entries[key]

    def names(self) -> tuple[str, ...]:
        """The built-in names, then the registered ones in order of registration."""
        return self.builtin + tuple(self._entries())

    def unregister(self, name: object) -> None:
        """Forget ``name``.

        Raises
        ------
        KeyError
            If nothing is registered under ``name``, naming the registered names.
        """
        self.get(name)
        del self._entries()[self._lookup_key(name)]


class RegisteredNames:
    """The valid values of a name parameter whose set grows at run time (MP's ``model``, M1-M4's ``dist``).

    Built-in names and the names registered so far, looked up case-insensitively;
    ``registry()`` returns the registry's current mapping, called on each use, so
    a name registered later, or a registry replaced, is seen.
    """

    def __init__(self, builtin: tuple[str, ...], registry: Callable[[], MutableMapping[str, object]]) -> None:
        self._builtin = builtin
        self._registry = registry

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name.upper() in self._builtin or name.upper() in self._registry())

    def __iter__(self) -> Iterator[str]:
        return iter(self._builtin + tuple(self._registry()))

    def __repr__(self) -> str:
        return repr(list(self))
