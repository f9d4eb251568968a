"""What the stores keep of forward tapes: a tape's published bars and how far it has
grown (the runtime's store), and when each submission of a forward session reached the
door (the door's records). Re-exported by :mod:`.store`, whose ports use them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Arrival", "FeedBar", "FeedConflict", "FeedStatus"]


class FeedConflict(Exception):
    """An append of bars to a forward tape found a bar index taken (another process
    appended first) or the feed frozen. Nothing was written; the caller re-reads the
    feed and decides again."""


@dataclass(frozen=True, slots=True)
class FeedBar:
    """One published bar of a forward tape, as stored.

    ``index`` is the bar's index in the whole tape (a declared prefix's bars come
    first); ``rows`` its canonical tape rows (every symbol of ``time``, LF-ended);
    ``prefix_root`` the root of the tape's prefix ending with it (the chain of
    :mod:`kestrel_sdk.runtime.feed`); ``published_at`` and ``visible_by`` the UTC text
    of the caller's clock (the door's), read by the store as the last thing before the
    commit that makes the bar visible and as the first thing after it: the bar became
    visible between the two (``""`` on a bar not stored yet; ``visible_by`` ``""`` too
    while the second read is not written, or on a bar stored before it was kept), outside
    every root.
    """

    index: int
    time: str
    rows: str
    prefix_root: str
    published_at: str
    visible_by: str = ""


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """How far a forward tape has grown: its bars, the last one's time and the prefix
    root ending with it, and whether the window is over (``frozen``) and the tape
    published (``unsealed``). A store counts the bars it holds (``bars`` is the last
    index + 1; ``""`` times and roots when it holds none); the runtime's status counts
    the declared prefix too."""

    bars: int
    last_time: str
    prefix_root: str
    frozen: bool
    unsealed: bool


@dataclass(frozen=True, slots=True)
class Arrival:
    """When submission ``seq`` of a session on a forward scenario reached the door (its
    clock, read before the runtime call) and the clock bar the submission left the
    session at. Kept by the door, outside every root."""

    seq: int
    arrived_at: str
    clock: int
