"""Forward scenarios: a tape that grows by appends while agents trade, then freezes.

A scenario whose ``scenario.toml`` says ``forward = true`` declares a prefix (possibly
none); its bars after that are **appended** (:meth:`Feed.append`), each batch validated
as an import is (by the tape readers of :mod:`.catalog.tapes`), idempotent by bar time
(the identical bar again is a duplicate, nothing written; a different bar at a published
time is refused naming the time and what differs), atomic and durable in the store
before it is acknowledged. Every bar's prefix root is committed with it (the chain of
:mod:`.catalog.forward_tape`). The time a bar was published is read from the caller's
clock (the door's) by the store, in the append's transaction as the last thing before
its commit (never before the batch was validated and written), and read again once it
committed: the bar became visible between the two. The runtime never reads a
clock itself, and no root holds the time.

Sessions trade at the edge (:mod:`.live`): each process's copy of the tape is a cache
of the store, refreshed when a session needs a bar past it, so a bar appended through
one process is tradable through every other at once. :meth:`Feed.freeze` ends the
window (the tape is fixed: prefix plus appended bars); the scenario stays sealed until
:meth:`Feed.unseal`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.store import RuntimeStore
from kestrel_protocol.store_feed import FeedBar, FeedConflict, FeedStatus

from .catalog.forward_tape import GrowingTape, bar_epoch, prefix_link
from .catalog.model import CatalogIndex, LoadedScenario
from .catalog.tapes import HEADER, parse_tape, render_tape
from .catalog.terms import INTERVAL_SECONDS
from .engine.program import Program
from .lang.syntax import WaitingAdvance
from .live import LiveSession

__all__ = ["BarNotPublished", "Feed", "FeedAppend", "Feeds", "bar_not_published"]

_RETRIES = 8  # appends raced by other writers before giving up


@dataclass(frozen=True, slots=True)
class FeedAppend:
    """What an append did: bars ``accepted`` (new), ``duplicates`` (already published,
    identical), and the feed after it: ``bars`` published in all (the prefix's too), the
    last one's time and the prefix root ending with it."""

    accepted: int
    duplicates: int
    bars: int
    last_time: str
    prefix_root: str


class BarNotPublished(KestrelError):
    """``BAR_NOT_PUBLISHED``: the bar a submission (or an open) needs is past a forward
    tape's edge. Retryable; nothing was applied. ``needed`` (bars the tape must hold)
    is for a waiter in this process, never shown: the refusal says nothing of what
    comes next."""

    def __init__(self, message: str, detail: dict[str, object], needed: int, wait_ms: int) -> None:
        super().__init__(RefusalCode.BAR_NOT_PUBLISHED, message, detail)
        self.needed = needed
        self.wait_ms = wait_ms
        """The longest ``wait`` the refused source asked (0: none)."""


def bar_not_published(what: str, clock: int, needed: int = 1, wait_ms: int = 0) -> BarNotPublished:
    """The refusal of a step (or an open) that needs ``what`` (``bar 12``, ``the bar at
    T``), made at bar ``clock``."""
    return BarNotPublished(
        f"{what} is not published yet: nothing was applied; submit again once it is, "
        "or wait for it (advance 1 wait 30s)",
        {"bar": clock, "retryable": True},
        needed,
        wait_ms,
    )


def _invalid(message: str, **detail: object) -> KestrelError:
    return KestrelError(RefusalCode.INVALID_ARGUMENT, message, dict(detail))


class Feed:
    """One forward scenario's tape over ``store``: the declared prefix of ``declared``
    (the catalog's scenario) and the bars published since."""

    def __init__(self, store: RuntimeStore, declared: LoadedScenario) -> None:
        scenario = declared.scenario
        forward = scenario.forward_tape
        if not declared.forward or forward is None:
            raise _invalid(
                f"scenario {scenario.id} is not a forward scenario", scenario=scenario.id
            )
        self.store = store
        self.declared = declared
        self.id = scenario.id
        prefix = declared.tape
        self._prefix_text = render_tape(prefix)
        self._prefix_bars = len(prefix)
        self._prefix_times = prefix.times
        self._prefix_set = frozenset(prefix.times)
        self._head = forward.head
        self._volume_scale = prefix.volume_scale
        self._scale = prefix.scale
        self._ticks = {item.symbol: item.tick for item in scenario.instruments}
        self._step = INTERVAL_SECONDS[scenario.tape.interval]
        self._lock = threading.Lock()
        self._bars: list[FeedBar] = []  # the appended bars this process has read
        self._rows_at: dict[str, str] = {}  # their rows by time
        self._growing: GrowingTape | None = None  # their tape, read as they come
        self._loaded: LoadedScenario | None = declared  # the tape as of ``_bars`` (None:
        # not made since the last bars were read; made when asked)
        self._roots: list[str] = [self._head] * self._prefix_bars
        self._unsealed = False  # once published, for good

    # -- reading -------------------------------------------------------------------------

    def refresh(self) -> int:
        """Read the bars published since this process last looked; the bars now known."""
        with self._lock:
            after = self._prefix_bars + len(self._bars)
            new = self.store.feed_bars(self.id, after=after)
            if new:
                if self._growing is None:
                    self._growing = GrowingTape(self._prefix_text, self._ticks, self._scale)
                self._growing.extend([bar.rows for bar in new])
                self._bars.extend(new)
                self._roots.extend(bar.prefix_root for bar in new)
                self._rows_at.update((bar.time, bar.rows) for bar in new)
                self._loaded = None
            return self._prefix_bars + len(self._bars)

    def loaded(self, bars: int = 0) -> LoadedScenario:
        """The scenario over its tape as published, refreshed from the store when fewer
        than ``bars`` bars are known here."""
        if self._prefix_bars + len(self._bars) < bars:
            self.refresh()
        with self._lock:
            if self._loaded is None:
                self._loaded = self._grown()
            return self._loaded

    def roots(self) -> list[str]:
        """The prefix root ending with each known bar, by index (a prefix bar's is the
        declared prefix's root: the chain starts at its last bar)."""
        return self._roots

    def status(self) -> FeedStatus:
        """How far the tape has grown, and whether it is frozen or unsealed."""
        known = self.refresh()
        state = self.store.feed_state(self.id)
        frozen, unsealed = (state.frozen, state.unsealed) if state is not None else (False, False)
        last = self._bars[-1].time if self._bars else (self._prefix_times[-1:] or ("",))[0]
        root = self._roots[-1] if self._roots else self._head
        return FeedStatus(known, last, root, frozen, unsealed)

    def unsealed(self) -> bool:
        """Whether the tape has been published (:meth:`unseal`, by any process)."""
        if not self._unsealed:
            state = self.store.feed_state(self.id)
            self._unsealed = state is not None and state.unsealed
        return self._unsealed

    def published(self) -> list[tuple[int, str, str, str]]:
        """``(bar, time, published_at, visible_by)`` of every bar, the prefix's first
        (published before the window: ``""`` both). A bar read here before its
        append wrote ``visible_by`` (just after its commit) is read again for it."""
        self.refresh()
        with self._lock:
            unconfirmed = next((n for n, bar in enumerate(self._bars) if not bar.visible_by), None)
        if unconfirmed is not None:
            again = self.store.feed_bars(self.id, after=self._bars[unconfirmed].index)
            with self._lock:
                for bar in again:
                    at = bar.index - self._prefix_bars
                    if 0 <= at < len(self._bars) and self._bars[at].index == bar.index:
                        self._bars[at] = bar
        prefix = [(index, time, "", "") for index, time in enumerate(self._prefix_times)]
        return prefix + [
            (bar.index, bar.time, bar.published_at, bar.visible_by) for bar in self._bars
        ]

    def edge(self) -> tuple[int, str]:
        """How many bars the tape holds as published (the prefix's too) and the tape
        root of those bars (of their canonical text), read together."""
        self.refresh()
        with self._lock:
            bars = self._prefix_bars + len(self._bars)
            if self._growing is None:
                return bars, self.declared.tape.root
            return bars, self._growing.root()

    def _grown(self) -> LoadedScenario:
        assert self._growing is not None  # bars were read
        grown = self.declared.with_tape(self._growing.tape())
        grown.prefix_roots = list(self._roots)
        return grown

    # -- appending -----------------------------------------------------------------------

    def append(self, data: bytes, *, clock: Callable[[], str]) -> FeedAppend:
        """Publish the bars of ``data`` (tape CSV, header optional), all or none; each
        is stamped ``clock()`` (UTC text), read by the store as the bars become visible."""
        bars = self._parse(data)
        for _ in range(_RETRIES):
            self.refresh()
            state = self.store.feed_state(self.id)
            if state is not None and state.frozen:
                raise _invalid(
                    f"the feed of {self.id} is frozen: its tape takes no more bars",
                    scenario=self.id,
                )
            new, duplicates = self._sorted_out(bars)
            if not new:
                status = self.status()
                return FeedAppend(0, duplicates, status.bars, status.last_time, status.prefix_root)
            rows = self._chained(new)
            try:
                self.store.append_feed(self.id, rows, clock)
            except FeedConflict:
                continue  # another writer published (or froze) first: decide again
            known = self.refresh()
            return FeedAppend(len(new), duplicates, known, rows[-1].time, rows[-1].prefix_root)
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the feed of {self.id} is being appended to by other writers without pause; "
            "append again",
            {"scenario": self.id},
        )

    def _parse(self, data: bytes) -> list[tuple[str, str]]:
        """``(time, canonical rows)`` of each bar of ``data``, read as a tape is."""
        text = data.lstrip(b"\xef\xbb\xbf")
        added = 0
        first = text.lstrip()[:1]
        if not first or first.isdigit():  # rows alone (a first line that is no row: a header)
            text, added = (HEADER + "\n").encode("ascii") + text, 1
        parsed = parse_tape(text, self._ticks, self._scale)
        if isinstance(parsed, list):
            problem = parsed[0]
            line = None if problem.line is None else problem.line - added
            where = f"line {line}: " if line is not None else ""
            raise _invalid(f"the bars of {self.id}: {where}{problem.reason}", line=line)
        if parsed.volume_scale > self._volume_scale:
            raise _invalid(
                f"the bars of {self.id}: a volume has {parsed.volume_scale} decimal places; "
                f"this forward tape's volumes have at most {self._volume_scale}",
                scenario=self.id,
            )
        lines = render_tape(parsed).splitlines(keepends=True)[1:]
        width = len(parsed.symbols)
        return [
            (parsed.times[k], "".join(lines[k * width : (k + 1) * width]))
            for k in range(len(parsed))
        ]

    def _sorted_out(self, bars: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
        """The bars not published yet, and how many are published already (identical);
        a different bar at a published time, or a new bar off the interval or before the
        last, is refused."""
        published = self._rows_at
        prefix = self._prefix_set
        last = self._bars[-1].time if self._bars else (self._prefix_times[-1:] or ("",))[0]
        new: list[tuple[str, str]] = []
        duplicates = 0
        for time, rows in bars:
            if time in prefix:
                raise _invalid(f"bar {time} is in the declared prefix of {self.id}", time=time)
            if time in published:
                if published[time] != rows:
                    raise _invalid(
                        f"bar {time} of {self.id} is published with other values: "
                        f"published {published[time].strip()!r}, given {rows.strip()!r}",
                        time=time,
                    )
                duplicates += 1
                continue
            previous = new[-1][0] if new else last
            if previous and time <= previous:
                raise _invalid(
                    f"bar {time} of {self.id} is not after the last published bar {previous}",
                    time=time,
                )
            if previous and (bar_epoch(time) - bar_epoch(previous)) % self._step:
                raise _invalid(
                    f"bar {time} of {self.id} is not on the {self.declared.scenario.tape.interval}"
                    f" interval after {previous}",
                    time=time,
                )
            new.append((time, rows))
        return new, duplicates

    def _chained(self, new: list[tuple[str, str]]) -> list[FeedBar]:
        """The new bars with their indexes and prefix roots (unstamped: the store
        stamps them)."""
        index = self._prefix_bars + len(self._bars)
        prev = self._roots[-1] if self._roots else self._head
        out: list[FeedBar] = []
        for time, rows in new:
            prev = prefix_link(index, prev, rows)
            out.append(FeedBar(index, time, rows, prev, ""))
            index += 1
        return out

    # -- the window ----------------------------------------------------------------------

    def freeze(self) -> FeedStatus:
        """End the window: the tape is fixed as published (idempotent)."""
        self.store.set_feed_state(self.id, frozen=True)
        return self.status()

    def unseal(self) -> FeedStatus:
        """Publish the tape of a frozen feed; ``INVALID_ARGUMENT`` while it is open."""
        if not self.status().frozen:
            raise _invalid(
                f"the feed of {self.id} is still open: freeze it before unsealing",
                scenario=self.id,
            )
        self.store.set_feed_state(self.id, unsealed=True)
        return self.status()


class Feeds:
    """The forward scenarios of one runtime: a :class:`Feed` per scenario, made on first
    use over the runtime's store and catalog (``declared``: a scenario by id), and the
    edge its sessions trade at."""

    def __init__(self, store: RuntimeStore, declared: Callable[[str], LoadedScenario]) -> None:
        self._store = store
        self._declared = declared
        self._feeds: dict[str, Feed] = {}
        self._lock = threading.Lock()

    def feed(self, scenario_id: str) -> Feed:
        """The scenario's feed; ``UNKNOWN_SCENARIO`` for an unknown id,
        ``INVALID_ARGUMENT`` for a scenario that is not forward."""
        found = self._feeds.get(scenario_id)
        if found is None:
            declared = self._declared(scenario_id)
            with self._lock:
                found = self._feeds.get(scenario_id)
                if found is None:
                    found = self._feeds[scenario_id] = Feed(self._store, declared)
        return found

    def trading(self, scenario_id: str) -> LoadedScenario:
        """The scenario sessions trade on: a forward one over its tape as published now
        (read from the store), any other as the catalog has it."""
        declared = self._declared(scenario_id)
        if not declared.forward:
            return declared
        feed = self.feed(scenario_id)
        feed.refresh()
        return feed.loaded()

    def grown(self, index: CatalogIndex) -> CatalogIndex:
        """``index`` with each forward scenario over its tape as published (what its
        sessions traded on), for a verification on this store."""
        scenarios = {i: found for i in index.ids() if (found := index.get(i)) is not None}
        if not any(loaded.forward for loaded in scenarios.values()):
            return index
        grown = {i: self.trading(i) if s.forward else s for i, s in scenarios.items()}
        return CatalogIndex(index.catalog, grown, index.problems)

    def to_edge(
        self, live: LiveSession, program: Program, extend: Callable[[LiveSession], None]
    ) -> None:
        """Let ``program`` apply on the forward session ``live`` (its lock held) only if
        every bar it advances to is published: its engine is first extended with the
        bars published since (``extend``); ``BarNotPublished`` otherwise, unless the
        feed is frozen (the engine then stands down at the tape's end)."""
        engine = live.engine
        assert engine is not None
        if engine.unpublished(program) is None:
            return
        extend(live)
        missing = engine.unpublished(program)
        if missing is None or self.feed(live.row.scenario_id).status().frozen:
            return
        waits = [st.wait_ms for st in program.statements if isinstance(st, WaitingAdvance)]
        raise bar_not_published(missing[0], engine.clock, missing[1], max(waits, default=0))
