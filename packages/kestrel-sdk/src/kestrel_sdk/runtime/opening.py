"""Opening a session: resuming an open one by its label, answering with the gate's
offer, or opening a new one under the principal's next free label
(:meth:`.service.Runtime.open_session`)."""

from __future__ import annotations

from kestrel_protocol import KestrelError, Payment, RefusalCode, SessionOpened
from kestrel_protocol.ports import SessionGate
from kestrel_protocol.store import RuntimeStore, SessionRow

from .catalog import ServedCatalog
from .feed import Feeds, bar_not_published
from .horizon import Horizons
from .ids import session_id

__all__ = ["SessionOpening"]


class SessionOpening:
    """Opens the sessions of one runtime."""

    def __init__(
        self,
        store: RuntimeStore,
        served: ServedCatalog,
        feeds: Feeds,
        horizons: Horizons,
        gate: SessionGate | None,
    ) -> None:
        self._store = store
        self._served = served
        self._feeds = feeds
        self._horizons = horizons
        self.gate = gate

    def open(
        self,
        principal: str,
        scenario: str,
        label: str | None = None,
        payment: Payment | None = None,
    ) -> SessionOpened:
        """The session opened (see :meth:`.service.Runtime.open_session`)."""
        loaded = self._served.loaded(scenario)
        root = loaded.scenario.root
        if loaded.forward and not len(self._feeds.trading(scenario).tape):
            raise bar_not_published("bar 0", 0)  # a session opens on its first bar
        if label is not None:
            sid = session_id(principal, root, label)
            row = self._store.session(sid)
            if row is not None:
                if row.status == "closed":
                    raise KestrelError(
                        RefusalCode.SESSION_CLOSED,
                        f"session {sid} (label {label!r}) is closed; open another label",
                        {"session": sid, "label": label},
                    )
                head = self._store.head(sid)
                if head is not None and head.seq == 0:  # a process may have died opening it
                    self._horizons.resumed(principal, loaded.id, root, sid)
                return SessionOpened(gated=False, session_id=sid)
        if self.gate is not None:
            offer = self.gate.check(principal, scenario, payment)
            if offer is not None:
                return SessionOpened(gated=True, payment=offer)
        while True:
            chosen = label if label is not None else self._next_label(principal, root)
            sid = session_id(principal, root, chosen)
            row = SessionRow(sid, principal, loaded.id, root, chosen, "open", None, None)
            if self._store.insert_session(row):
                if not self._served.sealed(loaded.id):
                    self._store.note_unsealed(sid)
                self._horizons.opened(principal, loaded.id, root, sid)
                return SessionOpened(gated=False, session_id=sid)
            if label is not None:  # a concurrent open of the same label won the race
                return self.open(principal, scenario, label, payment)

    def _next_label(self, principal: str, scenario_root: str) -> str:
        used = self._store.labels(principal, scenario_root)
        n = 1
        while str(n) in used:
            n += 1
        return str(n)
