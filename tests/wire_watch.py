"""What a face did with a submit's response: the text the runtime answered, and every
protocol object built or dumped while it was served (for the splice tests of each face)."""

from __future__ import annotations

from typing import Any

import pytest
from kestrel_protocol import ProtocolModel, SessionResponse, Wire
from kestrel_sdk.runtime.service import Runtime

__all__ = ["WireWatch"]


class WireWatch:
    """Records :meth:`Runtime.submit`'s texts, the classes of the protocol objects
    dumped (``to_json``) and those built from a :class:`Wire` (``model``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        self.dumped: list[str] = []
        self.built: list[str] = []
        submit = Runtime.submit
        to_json = ProtocolModel.to_json
        model = Wire.model

        def recorded(runtime: Runtime, *args: Any, **kwargs: Any) -> Wire[SessionResponse]:
            wire = submit(runtime, *args, **kwargs)
            self.texts.append(wire.text)
            return wire

        def dumping(obj: ProtocolModel) -> dict[str, Any]:
            self.dumped.append(type(obj).__name__)
            return to_json(obj)

        def building(wire: Wire[Any]) -> Any:
            self.built.append(wire.cls.__name__)
            return model(wire)

        monkeypatch.setattr(Runtime, "submit", recorded)
        monkeypatch.setattr(ProtocolModel, "to_json", dumping)
        monkeypatch.setattr(Wire, "model", building)

    @property
    def responses_made(self) -> int:
        """How many ``SessionResponse`` objects were dumped or built."""
        return (self.dumped + self.built).count("SessionResponse")

    def clear(self) -> None:
        self.texts.clear()
        self.dumped.clear()
        self.built.clear()
