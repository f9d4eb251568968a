"""What a model reads of a step counts in the number's own form: the frame's last bars
("1 bar remaining"), a one-bar history, a one-submission session's record."""

from __future__ import annotations

from kestrel_protocol import ProtocolModel
from kestrel_protocol.surface import compact_text
from kestrel_sdk import Kestrel


def _text(result: ProtocolModel) -> str:
    """The text the MCP faces send a model for ``result``."""
    text = compact_text(result, result.to_json())
    assert text is not None
    return text


def test_one_is_said_in_the_singular() -> None:
    with Kestrel(store="memory:") as kestrel:
        session = kestrel.open("acme-trend")
        remaining = session.frame().frame.clock.remaining
        assert remaining is not None
        step = session.submit(f"advance {remaining - 1}")
        assert ", 1 bar remaining" in _text(step)
        history = session.history(1)
        assert ": 1 bar\n" in _text(history)
        record = session.close()
        assert "after 1 submission\n" in _text(record)
