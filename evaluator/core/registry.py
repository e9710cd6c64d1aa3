"""One registry pattern for every pluggable name: benchmarks, detectors, LLM providers, judge
protocols, job handlers and metrics (see docs/ARCHITECTURE.md, "Registries").

A `Registry` maps names to entries. Entries are added by decorator (`@REG.register("name")`), by
`REG.add(name, entry)`, or lazily (`REG.add_lazy(name, load)`: `load()` runs on the first `get`,
so a heavy module is imported only when its entry is used). `modules` lists the modules whose
import registers entries; they are imported the first time the registry is read, never at import
time of the registry itself. `get(name)` raises UnknownNameError naming the known names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar

from evaluator.core.errors import UnknownNameError

T = TypeVar("T")
E = TypeVar("E")


class _Lazy(Generic[T]):
    __slots__ = ("load",)

    def __init__(self, load: Callable[[], T]):
        self.load = load


class Registry(Generic[T]):
    """Names -> entries of one kind (`what` names the kind in messages: "detector", ...)."""

    def __init__(self, what: str, modules: Iterable[str] = ()):
        self.what = what
        self.modules = tuple(modules)
        self._entries: dict[str, T | _Lazy[T]] = {}
        self._loaded = not self.modules
        self.version = 0  # changes with every change of the entries (for readers' caches)

    # ---- registration

    def add(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Register `entry` under `name`; a second registration of a name is an error unless
        `replace` (then the new entry wins)."""
        if not replace and name in self._entries:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._entries[name] = entry
        self.version += 1
        return entry

    def register(self, name: str, *, replace: bool = False) -> Callable[[E], E]:
        """Decorator form of `add`: `@REG.register("name")` over a class or function."""

        def deco(entry: E) -> E:
            self.add(name, entry, replace=replace)  # type: ignore[arg-type]
            return entry

        return deco

    def add_lazy(self, name: str, load: Callable[[], T], *, replace: bool = False) -> None:
        """Register an entry produced by `load()` on first use (and kept from then on)."""
        if not replace and name in self._entries:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._entries[name] = _Lazy(load)
        self.version += 1

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)
        self.version += 1

    # ---- reading

    def load(self) -> None:
        """Import the modules that register entries (once)."""
        if self._loaded:
            return
        for m in self.modules:
            importlib.import_module(m)
        self._loaded = True

    def get(self, name: str) -> T:
        """The entry registered as `name`; UnknownNameError lists the known names."""
        self.load()
        try:
            entry = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.what, name, self._entries) from None
        if isinstance(entry, _Lazy):
            entry = entry.load()
            self._entries[name] = entry
        return entry

    def find(self, name: str) -> T | None:
        """The entry registered as `name`, or None (lazy entries are resolved)."""
        return self.get(name) if name in self else None

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self.load()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """(name, entry) in registration order (lazy entries are resolved)."""
        self.load()
        return [(n, self.get(n)) for n in list(self._entries)]

    def values(self) -> list[T]:
        return [e for _, e in self.items()]

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        """Names in registration order."""
        self.load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    # ---- tests

    def snapshot(self) -> dict[str, T | _Lazy[T]]:
        """The current entries, for `restore` (tests that register entries of their own)."""
        return dict(self._entries)

    def restore(self, snapshot: Mapping[str, T | _Lazy[T]]) -> None:
        self._entries = dict(snapshot)
        self.version += 1
