"""A submission's response as the step left it: the values it is made of, its JSON text
and its object each made only when asked for (:class:`kestrel_protocol.Wire`).

A face splices the text (written around the frame's canonical text, members in the
order the object dumps them); the SDK reads the object, made from the same values (the
frame's from the engine's, :mod:`.engine.frame_models`). Neither is made on the step.
"""

from __future__ import annotations

from typing import Any, Final, final

from kestrel_protocol import Delivery, Pentad, SessionResponse, StandDown, Wire

from .engine.step import Shown
from .engine.wire import builder, quote
from .models import pentad_body
from .pentads import MEDIA_TYPE, quoted

__all__ = ["Answered"]

_new_pentad: Final = builder(Pentad)
_new_delivery: Final = builder(Delivery)
_new_response: Final = builder(SessionResponse)


@final
class Answered(Wire[SessionResponse]):
    """The response to submission ``seq`` of session ``sid``: its pentad (``prev``,
    ``source``, ``root``), the frame the engine made (``shown``) as served (``frame``,
    its text; the engine's own when ``served_as_made``), its root, the stand-down."""

    __slots__ = (
        "_frame",
        "_frame_root",
        "_prev",
        "_root",
        "_seq",
        "_shown",
        "_sid",
        "_source",
        "_stand_down",
    )

    def __init__(  # noqa: PLR0917 - the step's values, positionally: every step makes one
        self,
        sid: str,
        seq: int,
        prev: str,
        source: str,
        root: str,
        shown: Shown,
        frame: str,
        frame_root: str,
        stand_down: StandDown | None,
    ) -> None:
        super().__init__(SessionResponse)
        self._sid = sid
        self._seq = seq
        self._prev = prev
        self._source = source
        self._root = root
        self._shown = shown
        self._frame = frame
        self._frame_root = frame_root
        self._stand_down = stand_down

    def write(self) -> str:
        pentad = (
            f'{{"root":"{self._root}","session":{quoted(self._sid)},"seq":{self._seq},'
            f'"prev":"{self._prev}",'
            f'"body":{{"mediaType":"{MEDIA_TYPE}","bytes":{quoted(self._source)}}}}}'
        )
        delivery = f'{{"frame":{self._frame},"frameRoot":"{self._frame_root}"}}'
        stood = self._stand_down
        if stood is None:
            return f'{{"ok":true,"disposition":"applied","pentad":{pentad},"delivery":{delivery}}}'
        return (
            f'{{"ok":true,"disposition":"stood-down","pentad":{pentad},"delivery":{delivery}'
            f',"standDown":{{"reason":{quote(stood.reason)},"detail":{quote(stood.detail)}}}}}'
        )

    def make(self) -> SessionResponse:
        if self._frame is not self._shown.text:  # served otherwise than made (sealed)
            return super().make()
        pentad = {
            "session": self._sid,
            "seq": self._seq,
            "prev": self._prev,
            "body": pentad_body(self._source),
            "root": self._root,
        }
        members: dict[str, Any] = {
            "ok": True,
            "disposition": "applied" if self._stand_down is None else "stood-down",
            "pentad": _new_pentad(pentad),
            "delivery": _new_delivery({"frame": self._shown.frame, "frame_root": self._frame_root}),
        }
        if self._stand_down is not None:
            members["stand_down"] = self._stand_down
        return _new_response(members)
