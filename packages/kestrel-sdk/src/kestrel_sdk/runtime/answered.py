"""A submission's response as the step left it: the values it is made of, its JSON text,
its JSON data and its object each made only when asked for (:class:`kestrel_protocol.Wire`).

A face splices the text (written around the frame's canonical text, members in the
order the object dumps them) and reads the data (the frame's text read, the rest the
values themselves); the SDK reads the object, made from the same values (the frame's
from the engine's, :mod:`.engine.frame_models`). None is made on the step.
"""

from __future__ import annotations

from typing import Any, Final, final

from kestrel_protocol import SessionResponse, StandDown, Wire
from kestrel_protocol.wire import data_builder, own_data

from .engine.step import Step
from .engine.wire import quote
from .frame_values import FrameValues
from .models import pentad_body
from .pentads import MEDIA_TYPE, quoted

__all__ = ["Answered"]

_new_response: Final = data_builder(SessionResponse)
"""The response, its pentad and its delivery in one call (the frame, the pentad's body
and a stand-down are objects already)."""


@final
class Answered(Wire[SessionResponse]):
    """The response to submission ``seq`` of session ``sid``: its pentad (``prev``,
    ``source``, ``root``), the step the engine made (``step``: its frame and
    stand-down), the frame's text as served (``frame``: the step's own text, or a copy
    without the tape's length) and the frame's root."""

    __slots__ = (
        "_frame",
        "_frame_root",
        "_prev",
        "_root",
        "_seq",
        "_sid",
        "_source",
        "_step",
    )

    def __init__(  # noqa: PLR0917 - the step's values, positionally: every step makes one
        self,
        sid: str,
        seq: int,
        prev: str,
        source: str,
        root: str,
        step: Step,
        frame: str,
        frame_root: str,
    ) -> None:
        super().__init__(SessionResponse)
        self._sid = sid
        self._seq = seq
        self._prev = prev
        self._source = source
        self._root = root
        self._step = step
        self._frame = frame
        self._frame_root = frame_root

    def make_text(self) -> str:
        pentad = (
            f'{{"root":"{self._root}","session":{quoted(self._sid)},"seq":{self._seq},'
            f'"prev":"{self._prev}",'
            f'"body":{{"mediaType":"{MEDIA_TYPE}","bytes":{quoted(self._source)}}}}}'
        )
        delivery = f'{{"frame":{self._frame},"frameRoot":"{self._frame_root}"}}'
        stood = self._step.stand_down
        if stood is None:
            return f'{{"ok":true,"disposition":"applied","pentad":{pentad},"delivery":{delivery}}}'
        return (
            f'{{"ok":true,"disposition":"stood-down","pentad":{pentad},"delivery":{delivery}'
            f',"standDown":{{"reason":{quote(stood.reason)},"detail":{quote(stood.detail)}}}}}'
        )

    def to_json(self) -> dict[str, Any]:
        """The response as JSON data, members in the text's order: only the frame's text
        is read (the pentad's roots, source and session are the values themselves)."""
        pentad = {
            "root": self._root,
            "session": self._sid,
            "seq": self._seq,
            "prev": self._prev,
            "body": {"mediaType": MEDIA_TYPE, "bytes": self._source},
        }
        delivery = {"frame": own_data(self._frame), "frameRoot": self._frame_root}
        stood = self._step.stand_down
        if stood is None:
            return {"ok": True, "disposition": "applied", "pentad": pentad, "delivery": delivery}
        return {
            "ok": True,
            "disposition": "stood-down",
            "pentad": pentad,
            "delivery": delivery,
            "standDown": {"reason": stood.reason, "detail": stood.detail},
        }

    def make(self) -> SessionResponse:
        step = self._step
        if self._frame is not step.text:  # served otherwise than made (sealed)
            return super().make()
        pentad = {
            "session": self._sid,
            "seq": self._seq,
            "prev": self._prev,
            "body": pentad_body(self._source),
            "root": self._root,
        }
        delivery = {"frame": step.frame, "frameRoot": self._frame_root}
        stood = step.stand_down
        if stood is None:
            return _new_response(
                {"ok": True, "disposition": "applied", "pentad": pentad, "delivery": delivery}
            )
        return _new_response(
            {
                "ok": True,
                "disposition": "stood-down",
                "pentad": pentad,
                "delivery": delivery,
                "standDown": stood,
            }
        )

    @property
    def frame_root(self) -> str:
        """The root of the frame the step made."""
        return self._frame_root

    @property
    def stand_down(self) -> StandDown | None:
        """Why the session stood down in this step (``None``: it did not)."""
        return self._step.stand_down

    def values(self) -> FrameValues:
        """The frame's plain values as served (what a training loop reads; no object)."""
        if self._frame is not self._step.text:  # served otherwise than made (sealed)
            return FrameValues.of(self.model().delivery.frame)
        return self._step.values()
