"""One generic registry and one discovery mechanism for every pluggable kind.

Adding a part is one module plus one decorator::

    METRICS = Registry[Metric]("metric", package="tasks.metrics",
                               entry_point_group="evaflow.metrics")

    @METRICS.register("turn_taking")
    def turn_taking(...): ...

A registry finds its parts lazily, on the first lookup or listing: it imports every
module of ``package`` (so a new file there is found without being listed anywhere),
then loads every entry point of ``entry_point_group`` (so another installed
distribution plugs in without editing evaflow). Loading an entry point imports its
module, whose decorators register the parts; the entry point's own name is a label.

Lookups of unknown names raise :class:`UnknownNameError` whose message lists the valid
names, so a typo on the command line tells the user what they could have typed.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised for a name that is not registered; the message lists the valid names."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class PluginLoadError(ImportError):
    """An entry point of an installed plug-in could not be loaded; names group and value."""


class Registry(Generic[T]):
    """A named mapping from string names to registered objects, discovered on first use.

    ``package``: dotted name whose modules are all imported on discovery (modules whose
    name starts with ``_`` and those in ``skip`` are left alone). ``entry_point_group``:
    the ``importlib.metadata`` group whose entry points are loaded after that.
    ``tolerate_import_errors``: a package module that fails to import is recorded in
    :attr:`import_errors` instead of raising (one broken metric must not take the others
    down); entry points always fail loudly.
    """

    def __init__(
        self,
        kind: str,
        *,
        package: str | None = None,
        entry_point_group: str | None = None,
        skip: Iterable[str] = (),
        tolerate_import_errors: bool = False,
    ) -> None:
        self.kind = kind
        self.package = package
        self.entry_point_group = entry_point_group
        self.skip = frozenset(skip)
        self.tolerate_import_errors = tolerate_import_errors
        self.import_errors: dict[str, str] = {}
        self._items: dict[str, T] = {}
        self._discovered = package is None and entry_point_group is None
        self._done = self._discovered
        self._lock = threading.RLock()

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name`` and returns it unchanged."""

        def decorator(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorator

    def add(self, name: str, obj: T) -> None:
        if name in self._items and self._items[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def discover(self) -> None:
        """Import the package's modules and load the entry points (once; re-entrant)."""
        if self._done:
            return
        # Another thread's lookup waits until discovery finished (it would see an empty
        # registry); this thread's own nested lookups pass (re-entrant lock, flag below).
        with self._lock:
            if self._discovered:
                return
            # Set first: a discovered module may look names up while it is being imported.
            self._discovered = True
            try:
                if self.package is not None:
                    self._import_package(self.package)
                if self.entry_point_group is not None:
                    self._load_entry_points(self.entry_point_group)
            except BaseException:
                self._discovered = False  # the next lookup raises the same error again
                raise
            self._done = True

    def _import_package(self, package: str) -> None:
        module = importlib.import_module(package)
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if info.name.startswith("_") or info.name in self.skip:
                continue
            name = f"{package}.{info.name}"
            try:
                importlib.import_module(name)
            except Exception as exc:
                if not self.tolerate_import_errors:
                    raise
                self.import_errors[info.name] = f"{type(exc).__name__}: {exc}"
                warnings.warn(f"{self.kind} module {name} failed to import: {exc}", stacklevel=2)

    def _load_entry_points(self, group: str) -> None:
        for point in entry_points(group=group):
            try:
                point.load()
            except Exception as exc:
                raise PluginLoadError(
                    f"{self.kind} plug-in {point.name!r} (entry point group {group!r},"
                    f" value {point.value!r}) failed to load: {type(exc).__name__}: {exc}"
                ) from exc

    def get(self, name: str) -> T:
        self.discover()
        try:
            return self._items[name]
        except KeyError:
            valid = ", ".join(sorted(self._items)) or "(none registered)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; valid names: {valid}") from None

    def names(self) -> list[str]:
        self.discover()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        """``(name, object)`` pairs sorted by name."""
        self.discover()
        return sorted(self._items.items())

    def remove(self, name: str) -> None:
        """Forget ``name`` (tests that register a part for one case clean up with this)."""
        self._items.pop(name, None)

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self.discover()
        return len(self._items)
