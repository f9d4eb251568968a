"""A frame's plain values (what a training loop reads of a step) are equal exactly when
every value is: a gym that compares two steps' values, or a test that compares the
engine's values with a frame object's, must see any one member that differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kestrel_sdk.runtime.frame_values import FrameValues
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

MEMBERS: dict[str, Any] = {
    "session": "ks_1",
    "bar": 7,
    "time": "2024-01-02T14:30:00Z",
    "status": "open",
    "cash": "99000.00",
    "equity": "100012.50",
    "positions": {"ACME": 10},
    "marks": {"ACME": "101.25"},
    "events": ("accepted", "fill"),
}
OTHER: dict[str, Any] = {
    "session": "ks_2",
    "bar": 8,
    "time": "2024-01-02T14:31:00Z",
    "status": "stood-down",
    "cash": "99000.01",
    "equity": "100012.51",
    "positions": {"ACME": 11},
    "marks": {"ACME": "101.26"},
    "events": ("accepted",),
}


def test_values_are_equal_exactly_when_every_member_is() -> None:
    values = FrameValues(**MEMBERS)
    assert values == FrameValues(**dict(MEMBERS))
    for name, other in OTHER.items():
        changed = FrameValues(**{**MEMBERS, name: other})
        assert changed != values, name
        assert getattr(changed, name) == other
    members: object = MEMBERS
    assert values != members  # not a dict of them
    with pytest.raises(TypeError):
        hash(values)  # its dicts are not hashable: neither is it
    shown = repr(values)
    assert all(f"{name}={value!r}" in shown for name, value in MEMBERS.items())


def test_a_steps_values_are_its_frames_and_differ_from_the_next_ones(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path, store=open_runtime_store("memory:", tmp_path))
    try:
        sid = runtime.open_session("p", "acme-trend").session_id
        assert sid is not None
        first = runtime.submit("p", sid, "buy 10 ACME\nadvance 1")
        values = first.values()  # from the engine's state, no object made
        assert values == FrameValues.of(first.model().delivery.frame)
        assert values.positions == {"ACME": 10}
        assert values.events == ("accepted", "fill")
        second = runtime.submit("p", sid, "advance 1").values()
        assert second != values
        assert second.bar == values.bar + 1
        assert first.values() == values  # read again after the session moved on
    finally:
        runtime.shutdown()
