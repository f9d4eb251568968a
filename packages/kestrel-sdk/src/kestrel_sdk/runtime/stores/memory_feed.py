"""A forward tape's rows in memory (a part of :class:`.memory.MemoryStore`): the bars
of each scenario in index order and its window's flags, under the store's lock, with
the contract the SQL adapters keep (a batch all or none; a taken index or a frozen feed
is :class:`FeedConflict`, nothing written; the batch stamped with its clock under the
lock that every reader takes, the last thing before it becomes visible, and again once
that lock is let go: ``visible_by``).

Each append also notifies :attr:`MemoryFeeds.published` (a condition on the store's
lock), so that a waiter in the same process wakes when a bar is published rather than
polling.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import replace

from kestrel_protocol.store_feed import FeedBar, FeedConflict, FeedStatus

__all__ = ["MemoryFeeds"]


class MemoryFeeds:
    """The forward-tape methods of the memory store."""

    def __init__(self, lock: threading.RLock) -> None:
        self._feed_lock = lock
        self._feed_bars: dict[str, list[FeedBar]] = {}
        self._feed_flags: dict[str, tuple[bool, bool]] = {}  # scenario -> (frozen, unsealed)
        self.published = threading.Condition(lock)
        """Notified (all) after every append: a bar may now be published."""

    def feed_bars(self, scenario_id: str, after: int = 0) -> list[FeedBar]:
        with self._feed_lock:
            held = self._feed_bars.get(scenario_id, [])
            return held[bisect_left(held, after, key=_index) :]

    def append_feed(self, scenario_id: str, bars: list[FeedBar], clock: Callable[[], str]) -> None:
        self._publish(scenario_id, bars, clock)
        if not bars:
            return
        visible_by = clock()  # the lock let go: every reader can see the batch by now
        with self._feed_lock:
            held = self._feed_bars.get(scenario_id, [])
            for bar in bars:
                at = bisect_left(held, bar.index, key=_index)
                if at < len(held) and held[at].index == bar.index:  # not forgotten meanwhile
                    held[at] = replace(held[at], visible_by=visible_by)

    def _publish(self, scenario_id: str, bars: list[FeedBar], clock: Callable[[], str]) -> None:
        with self._feed_lock:
            if self._feed_flags.get(scenario_id, (False, False))[0]:
                raise FeedConflict(f"the feed of {scenario_id} is frozen")
            held = self._feed_bars.setdefault(scenario_id, [])
            indexes = [bar.index for bar in bars]
            if len(set(indexes)) != len(indexes) or any(map(_taken(held), indexes)):
                raise FeedConflict(f"a bar of {scenario_id} was published meanwhile")
            last = held[-1].index if held else -1
            at = clock()
            held.extend(replace(bar, published_at=at, visible_by="") for bar in bars)
            if indexes != sorted(indexes) or indexes[:1] < [last]:
                held.sort(key=_index)  # a batch before a bar held (the runtime's never is)
            self._feed_flags.setdefault(scenario_id, (False, False))
            self.published.notify_all()

    def feed_state(self, scenario_id: str) -> FeedStatus | None:
        with self._feed_lock:
            held = self._feed_bars.get(scenario_id)
            flags = self._feed_flags.get(scenario_id)
            if flags is None:
                return None
            if not held:
                return FeedStatus(0, "", "", *flags)
            last = held[-1]
            return FeedStatus(last.index + 1, last.time, last.prefix_root, *flags)

    def set_feed_state(
        self, scenario_id: str, *, frozen: bool | None = None, unsealed: bool | None = None
    ) -> None:
        with self._feed_lock:
            was_frozen, was_unsealed = self._feed_flags.get(scenario_id, (False, False))
            self._feed_flags[scenario_id] = (
                was_frozen if frozen is None else frozen,
                was_unsealed if unsealed is None else unsealed,
            )
            self.published.notify_all()

    def forget_feeds(self) -> None:
        with self._feed_lock:
            self._feed_bars.clear()
            self._feed_flags.clear()


def _index(bar: FeedBar) -> int:
    return bar.index


def _taken(held: list[FeedBar]) -> Callable[[int], bool]:
    """Whether an index is among ``held`` (in index order)."""

    def taken(index: int) -> bool:
        at = bisect_left(held, index, key=_index)
        return at < len(held) and held[at].index == index

    return taken
