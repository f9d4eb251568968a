"""The runtime's forward tapes as the door uses them (the operator's feed).

A forward scenario's tape grows by appends the operator makes through the door
(``kestrel-door feed``, or ``POST`` at the door's ``FEED_BARS_PATH``); the runtime validates, stores
and publishes them (``kestrel_sdk.runtime.feed``); the door only lends each append its
own clock (:func:`~.arrivals.door_time`), which the store reads as the last thing before
the bars become visible and the first after (``published_at``, ``visible_by``: the
runtime reads no clock of its own). :class:`FeedRuntime` is what
the door asks of the runtime (the composition root passes the runtime itself);
:class:`RuntimeFeeds` answers the door's :class:`~.arrivals.ForwardFeeds` from it;
:func:`feed_json` is a result as the faces say it; :func:`bar_groups` cuts a tape file
into its bars, one time each, for ``feed replay``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from kestrel_protocol import KestrelError, RefusalCode

from .arrivals import Stamps

__all__ = ["FeedRuntime", "RuntimeFeeds", "bar_groups", "feed_json"]


class FeedRuntime(Protocol):
    """The runtime's forward-tape methods (``kestrel_sdk.runtime``'s service)."""

    def append_bars(self, scenario_id: str, data: bytes, *, clock: Callable[[], str]) -> Any: ...
    def feed_status(self, scenario_id: str) -> Any: ...
    def feed_published(self, scenario_id: str) -> list[tuple[int, str, str, str]]: ...
    def feed_edge(self, scenario_id: str) -> tuple[int, str]: ...
    def published_tape(self, scenario_id: str) -> str: ...  # once unsealed
    def freeze_feed(self, scenario_id: str) -> Any: ...  # the status after, as unseal_feed
    def unseal_feed(self, scenario_id: str) -> Any: ...


class RuntimeFeeds:
    """The door's view of the runtime's forward tapes: which scenarios are forward (a
    declaration: remembered once known), when each bar was published, where the tape
    ends and whether the feed is frozen (read anew)."""

    def __init__(self, runtime: FeedRuntime) -> None:
        self.runtime = runtime
        self._forward: dict[str, bool] = {}
        self._lock = threading.Lock()

    def is_forward(self, scenario_id: str) -> bool:
        with self._lock:
            known = self._forward.get(scenario_id)
        if known is not None:
            return known
        try:
            self.runtime.feed_status(scenario_id)
            forward = True
        except KestrelError as exc:
            if exc.code == RefusalCode.BACKEND_UNAVAILABLE:
                raise
            forward = False
        with self._lock:
            self._forward[scenario_id] = forward
        return forward

    def published(self, scenario_id: str) -> Mapping[int, Stamps]:
        published = self.runtime.feed_published(scenario_id)
        return {index: (at, visible_by) for index, _, at, visible_by in published}

    def edge(self, scenario_id: str) -> tuple[int, str]:
        return self.runtime.feed_edge(scenario_id)

    def frozen(self, scenario_id: str) -> bool:
        return bool(self.runtime.feed_status(scenario_id).frozen)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def feed_json(found: Any) -> dict[str, Any]:
    """A feed result (the runtime's ``FeedAppend`` / ``FeedStatus``) as JSON data."""
    if dataclasses.is_dataclass(found) and not isinstance(found, type):
        return {_camel(k): v for k, v in dataclasses.asdict(found).items()}
    to_json = getattr(found, "to_json", None)
    if callable(to_json):
        data: dict[str, Any] = to_json()
        return data
    raise TypeError(f"not a feed result: {type(found).__name__}")


def bar_groups(data: bytes) -> Iterator[tuple[bytes, list[int]]]:
    """``data`` (a tape: a header line, then rows whose first column is the time) cut
    into one CSV per bar time, each with the header, in file order, with the line in
    ``data`` of each of its lines (the header's first). Nothing is checked here: the
    runtime validates each append (and names a bad line: of the CSV it was given)."""
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if not lines:
        return
    header = lines[0]
    rows = [(number, line) for number, line in enumerate(lines[1:], 2) if line.strip()]
    group: list[str] = []
    where: list[int] = [1]
    for number, row in rows:
        if group and row.split(",", 1)[0] != group[-1].split(",", 1)[0]:
            yield (header + "".join(group)).encode("utf-8"), where
            group, where = [], [1]
        group.append(row if row.endswith("\n") else row + "\n")
        where.append(number)
    if group:
        yield (header + "".join(group)).encode("utf-8"), where
