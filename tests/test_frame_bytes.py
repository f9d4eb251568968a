"""A frame is sent as one text on every face: its canonical JSON, what its root hashes.

A step's response splices the frame's canonical text (RFC 8785: members in canonical
order); the frame tool, ``/v1``'s frame and a closed session's head must send the same
bytes, not the object's fields in declaration order, so that anyone can hash what they
were sent and find its ``frameRoot``, and a frame read after a step is byte for byte the
frame the step answered. ``kestrel-mcp`` runs on a real pipe, the door on loopback.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx
from kestrel_protocol.canonical import canonical_json

from tests.doors import Door
from tests.stdio_pipe import Stdio

_DECODER = json.JSONDecoder()


def _member(raw: bytes, key: str) -> tuple[bytes, Any]:
    """The text of the first object member ``key`` in ``raw`` as it was sent, and its
    value."""
    text = raw.decode("utf-8")
    start = text.index(f'"{key}":') + len(key) + 3
    value, end = _DECODER.raw_decode(text, start)
    return text[start:end].encode("utf-8"), value


def _sent_frame(raw: bytes) -> tuple[bytes, str]:
    """The frame a raw answer carries (a response's delivery's, or a delivery's), as
    sent, and the ``frameRoot`` beside it."""
    frame, _ = _member(raw, "frame")
    _, root = _member(raw, "frameRoot")
    return frame, root


def _assert_canonical_and_rooted(frame: bytes, root: str) -> None:
    assert frame == canonical_json(json.loads(frame))
    assert root == "sha256:" + hashlib.sha256(frame).hexdigest()


def _call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


def test_stdio_sends_the_frame_it_answered_a_step_with_when_the_frame_is_read(
    stdio_and_door: tuple[Stdio, Door],
) -> None:
    stdio, _ = stdio_and_door
    opened = stdio.call(_call(1, "kestrel_session_open", {"scenario": "acme-trend"}))
    sid = opened["result"]["structuredContent"]["sessionId"]
    first, first_root = _sent_frame(
        stdio.line(_call(2, "kestrel_session_frame", {"sessionId": sid}))
    )
    _assert_canonical_and_rooted(first, first_root)
    step = stdio.line(
        _call(3, "kestrel_session_submit", {"sessionId": sid, "source": "buy 3 ACME\nadvance 2"})
    )
    stepped, stepped_root = _sent_frame(step)
    read, read_root = _sent_frame(stdio.line(_call(4, "kestrel_session_frame", {"sessionId": sid})))
    assert (read, read_root) == (stepped, stepped_root)
    _assert_canonical_and_rooted(read, read_root)
    stdio.call(_call(5, "kestrel_session_close", {"sessionId": sid}))
    closed, closed_root = _sent_frame(
        stdio.line(_call(6, "kestrel_session_frame", {"sessionId": sid}))
    )
    _assert_canonical_and_rooted(closed, closed_root)
    assert json.loads(closed)["status"] == "closed"


def test_the_doors_faces_send_the_frame_a_step_answered_when_it_is_read(
    stdio_and_door: tuple[Stdio, Door],
) -> None:
    _, door = stdio_and_door
    auth = {"Authorization": f"Bearer {door.token}"}
    mcp = {**auth, "Accept": "application/json, text/event-stream"}

    def post(number: int, name: str, arguments: dict[str, Any]) -> bytes:
        answer = httpx.post(door.url + "/mcp", json=_call(number, name, arguments), headers=mcp)
        assert answer.status_code == 200, answer.text
        return answer.content

    opened = json.loads(post(1, "kestrel_session_open", {"scenario": "acme-trend"}))
    sid = opened["result"]["structuredContent"]["sessionId"]
    stepped = _sent_frame(
        post(2, "kestrel_session_submit", {"sessionId": sid, "source": "buy 2 ACME\nadvance 3"})
    )
    _assert_canonical_and_rooted(*stepped)
    assert _sent_frame(post(3, "kestrel_session_frame", {"sessionId": sid})) == stepped
    on_v1 = httpx.get(f"{door.url}/v1/sessions/{sid}/frame", headers=auth)
    assert on_v1.status_code == 200, on_v1.text
    assert _sent_frame(on_v1.content) == stepped
