"""What the faces read of a session: its head frame, its history, its news and its
blotter; and a stored artifact. Each is served as the session's scenario is: a sealed
one's frames, histories and artifacts come without ``clock.remaining`` (:mod:`.sealed`).

None of these reads moves a horizon: each shows nothing the session's own clock has not
reached (the whole tape is :meth:`~.service.Runtime.tape`'s, which does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kestrel_protocol import (
    Blotter,
    Delivery,
    History,
    KestrelError,
    NewsPage,
    RefusalCode,
    SessionFrame,
    SessionRecord,
    Wire,
)
from kestrel_protocol.canonical import canonical_json
from kestrel_protocol.surface import HISTORY_MAX

from .catalog import ServedCatalog
from .engine.wire import builder
from .history import history_bars
from .live import LiveSession, LiveSessions
from .news_reads import news_page
from .sealed import sealed_frame, sealed_frame_data, sealed_frame_text, sealed_history

__all__ = ["SessionReads"]

_new_delivery = builder(Delivery)


class SessionReads:
    """Reads the sessions of one runtime: ``served`` says which scenarios are sealed,
    ``record`` gives a closed session's record and ``artifact`` reads a stored object by
    root (of a principal's sessions only, when one is given; refusing one not served)."""

    def __init__(
        self,
        sessions: LiveSessions,
        served: ServedCatalog,
        record: Callable[[LiveSession], SessionRecord],
        artifact: Callable[[str, str | None], dict[str, Any]],
    ) -> None:
        self._sessions = sessions
        self._served = served
        self._record = record
        self._artifact = artifact

    def frame(self, principal: str, sid: str) -> Wire[Delivery]:
        """The head frame and its root, as served: as JSON text around the frame's
        canonical text (what its root hashes, spliced by every face, as a step's
        response is); the object is made only for a caller that reads it."""
        with self._sessions.locked(principal, sid) as live:
            engine = live.engine
            root = live.frame_root
            text = None if engine is None else engine.frame_text()
            scenario = live.loaded.scenario.id  # the frame's own (the engine writes it)
        if text is None:  # closed: its head as the store holds it (bytes that hash to root)
            text = canonical_json(self._artifact(root, None)).decode("utf-8")
        if self._served.sealed(scenario):
            text = sealed_frame_text(text)
        return Wire(Delivery, f'{{"frame":{text},"frameRoot":"{root}"}}')

    def head(self, principal: str, sid: str) -> Delivery:
        """The head frame and its root.

        Neither is re-hashed: an open session's root was computed from this very frame
        when it was made (or replayed), and a closed session's head is read through the
        store, which serves only bytes that hash to their root. An agent may call this
        on every step.
        """
        with self._sessions.locked(principal, sid) as live:
            if live.engine is not None:
                members = {"frame": live.engine.frame(), "frame_root": live.frame_root}
                return _new_delivery(members)
            head = live.frame_root
        members = {"frame": SessionFrame.parse(self._artifact(head, None)), "frame_root": head}
        return _new_delivery(members)

    def history(self, principal: str, sid: str, bars: int, symbol: str | None) -> History:
        """The last ``bars`` bars of the session's tape up to and including its clock bar
        (its head frame's), never a bar after it."""
        if not 1 <= bars <= HISTORY_MAX:
            raise KestrelError(
                RefusalCode.INVALID_ARGUMENT,
                f"bars must be 1 to {HISTORY_MAX}, not {bars}",
                {"bars": bars},
            )
        frame = self.head(principal, sid).frame
        tape = self._sessions.get(principal, sid).loaded.tape
        rows = history_bars(tape, frame.clock.bar, bars, symbol)
        history = History(
            session=sid, scenario=frame.scenario, clock=frame.clock, symbol=symbol, bars=rows
        )
        return sealed_history(history) if self._served.sealed(frame.scenario.id) else history

    def news(
        self, principal: str, sid: str, limit: int, before: str | None, symbol: str | None
    ) -> NewsPage:
        """The news items visible at the session's clock (:mod:`.news_reads`)."""
        frame = self.head(principal, sid).frame
        if self._served.sealed(frame.scenario.id):  # its clock as served
            frame = sealed_frame(frame)
        loaded = self._sessions.get(principal, sid).loaded
        return news_page(
            loaded, sid, frame.scenario, frame.clock, limit=limit, before=before, symbol=symbol
        )

    def blotter(self, principal: str, sid: str) -> Blotter:
        """An open session's blotter from its engine, a closed one's from the store."""
        with self._sessions.locked(principal, sid) as live:
            if live.engine is not None:
                return live.engine.blotter()
        return Blotter.parse(self._artifact(self._record(live).blotter_root, None))

    def blotter_size(self, principal: str, sid: str) -> int | None:
        """Orders plus fills in an open session's blotter (what building it may cost),
        ``None`` for a closed one (its blotter is read from the store)."""
        with self._sessions.locked(principal, sid) as live:
            engine = live.engine
            return None if engine is None else len(engine.orders) + len(engine.fills)

    def artifact(self, root: str, reader: str | None) -> dict[str, Any]:
        """A stored object, verbatim (of ``reader``'s sessions only, when given); a frame
        of a sealed scenario without ``clock.remaining``."""
        found = self._artifact(root, reader)
        scenario = found.get("scenario")
        if isinstance(scenario, dict) and self._served.sealed(str(scenario.get("id"))):
            return sealed_frame_data(found)
        return found
