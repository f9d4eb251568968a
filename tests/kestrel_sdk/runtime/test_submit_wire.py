"""A submission's response is written as JSON text around the frame's canonical text
(``Runtime.submit``); no object is built unless a caller asks.

The attack: the text a face splices must be exactly a valid ``SessionResponse`` (its
pentad's root and its delivery's frame root verify when pydantic validates the text),
carry the same JSON value as the object a caller reads, and name in its pentad the
frame root the previous response delivered, on every kind of step: flat bars, fills,
refusals in between, brackets, a stand-down with a reason that needs escaping, a
session on a scenario sealed after it opened (served without the tape's length).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, SessionResponse, Wire
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

SOURCES = [
    "advance 1",
    "buy 10 ACME\nadvance 1",
    "sell 3 ACME limit 1 tif gtc\nadvance 2",
    "buy 5 ACME take 500 loss 1\nadvance 3",
    "cancel nothing",  # refused: changes nothing, the next pentad follows the last frame
    "advance 2",
    'stand down "a \\"quoted\\" reason ✓"',
]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    rt = Runtime(tmp_path, store=open_runtime_store("memory:", tmp_path))
    yield rt
    rt.shutdown()


def _check(wire: Wire[SessionResponse], prev: str) -> str:
    validated = SessionResponse.model_validate_json(wire.text)  # roots verified
    assert wire.model() == validated
    assert wire.model().to_json() == validated.to_json() == json.loads(wire.text)
    data = wire.to_json()  # made from the response's values: the same members, in order
    assert json.dumps(data, ensure_ascii=False) == json.dumps(
        json.loads(wire.text), ensure_ascii=False
    )
    assert validated.pentad.prev == prev
    return validated.delivery.frame_root


def test_every_response_text_is_the_object_with_its_roots(runtime: Runtime) -> None:
    sid = runtime.open_session("p", "acme-trend").session_id
    assert sid is not None
    prev = runtime.frame("p", sid).model().frame_root
    stood = None
    refused = []
    for source in SOURCES:
        try:
            wire = runtime.submit("p", sid, source)
        except KestrelError:
            refused.append(source)
            continue
        prev = _check(wire, prev)
        stood = wire.model().stand_down
    assert refused == ["cancel nothing"]
    assert stood is not None
    assert stood.detail == 'a "quoted" reason ✓'
    assert runtime.frame("p", sid).model().frame_root == prev


def test_a_session_sealed_after_it_opened_is_served_without_the_tapes_length(
    tmp_path: Path,
) -> None:
    store = open_runtime_store("memory:", tmp_path)
    open_rt = Runtime(tmp_path, store=store)
    sid = open_rt.open_session("p", "acme-trend").session_id
    assert sid is not None
    whole = open_rt.submit("p", sid, "advance 1").model()
    assert whole.delivery.frame.clock.remaining is not None
    sealed_rt = Runtime(tmp_path, store=store, sealed=["acme-trend"])
    wire = sealed_rt.submit("p", sid, "advance 1")
    data = json.loads(wire.text)
    assert "remaining" not in data["delivery"]["frame"]["clock"]
    assert json.dumps(wire.to_json()) == json.dumps(data)  # the frame as served
    assert wire.model().delivery.frame.clock.remaining is None
    # the root is still the whole frame's (the served part cannot be checked against it)
    unsealed = Runtime(tmp_path, store=store).frame("p", sid).model()
    assert wire.model().delivery.frame_root == unsealed.frame_root
    assert unsealed.frame.clock.bar == 2
    # read again, the frame is the step's as served, byte for byte, open and closed
    stepped = wire.text.split('"delivery":{"frame":', 1)[1].rsplit(',"frameRoot":', 1)[0]
    read = sealed_rt.frame("p", sid).text
    assert read == f'{{"frame":{stepped},"frameRoot":"{unsealed.frame_root}"}}'
    assert sealed_rt.news("p", sid).clock.remaining is None  # the reads' clock as served
    assert sealed_rt.history("p", sid, 2).clock.remaining is None
    sealed_rt.close("p", sid)
    closed = json.loads(sealed_rt.frame("p", sid).text)
    assert "remaining" not in closed["frame"]["clock"]
    assert closed["frame"]["status"] == "closed"


def test_a_response_read_after_its_session_moved_on_is_the_response_it_answered(
    runtime: Runtime,
) -> None:
    # The SDK reads a response's object, made when first asked for: from the engine's
    # values while the session is still at that step, else from the text. A response
    # read late (after later steps of its session and of another session) must be the
    # response its text validates to, members set and all, exactly as one read at once;
    # and reading one must not change another's.
    sid = runtime.open_session("p", "acme-trend").session_id
    other = runtime.open_session("p", "acme-trend", label="other").session_id
    assert sid is not None
    assert other is not None
    held: list[Wire[SessionResponse]] = []
    sources = [s for s in SOURCES if s != "cancel nothing"][:-1] * 3
    for i, source in enumerate(sources):
        wire = runtime.submit("p", sid, source)
        held.append(wire)
        if i % 3 == 0:
            wire.model()  # read at once; the others only after the session moved on
        runtime.submit("p", other, "advance 1")
    for late in held:
        validated = SessionResponse.model_validate_json(late.text)
        made = late.model()
        assert made == validated
        assert made.to_json() == validated.to_json() == json.loads(late.text)
        frame = made.delivery.frame
        assert frame.to_json() == validated.delivery.frame.to_json()
        assert frame.model_fields_set == validated.delivery.frame.model_fields_set
        assert frame.clock.model_fields_set == validated.delivery.frame.clock.model_fields_set
    assert [w.model().pentad.seq for w in held] == list(range(1, len(held) + 1))
