"""What every session of a loaded scenario shares in the process (a training loop's
episodes replay one tape): one value per scenario, made on first use and forgotten with
the scenario (:class:`PerScenario`), whose remembered entries are bounded
(:class:`Bounded`). Used for checked programs (:mod:`.program`) and the frame parts of a
bar (:mod:`.bar_parts`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar
from weakref import WeakKeyDictionary

from ..catalog.model import LoadedScenario

__all__ = ["Bounded", "PerScenario"]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class Bounded(dict[K, V]):
    """A dict holding at most ``most`` entries: all are forgotten when it is full and
    another is kept (read it as any dict)."""

    __slots__ = ("most",)

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most

    def keep(self, key: K, value: V) -> None:
        """Remember ``value`` as ``key``'s, forgetting every other first when full."""
        if len(self) >= self.most:
            self.clear()
        self[key] = value


class PerScenario(Generic[T]):
    """One value per loaded scenario, made by ``make`` on first use and kept while the
    scenario is loaded (keyed weakly)."""

    __slots__ = ("_kept", "_make")

    def __init__(self, make: Callable[[LoadedScenario], T]) -> None:
        self._kept: WeakKeyDictionary[LoadedScenario, T] = WeakKeyDictionary()
        self._make = make

    def of(self, loaded: LoadedScenario) -> T:
        """``loaded``'s value (the same for every session of it in the process)."""
        kept = self._kept.get(loaded)
        if kept is None:
            kept = self._kept.setdefault(loaded, self._make(loaded))
        return kept
