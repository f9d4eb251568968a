"""A malformed JSON-RPC message is refused the same on every MCP face, naming its fault.

``kestrel-mcp`` on stdio and the door's ``/mcp`` run in their own processes (a real
pipe, a real HTTP server on loopback) and get the same messages. Each one that carries
an ``id`` is answered with the same code, the same message and the same ``id`` on both.
A message without an ``id`` is never answered on stdio, and never acted on unless it is
a well-formed notification. On HTTP, where every POST gets an answer, a notification (a
JSON-RPC 2.0 message naming a method) is ``202`` however malformed, as the door acts on
none, and any other message without an ``id`` is a ``400`` with the same wording.
A request whose answer echoes a lone surrogate (in its ``id``, its method, a tool's,
prompt's or resource's name) is answered in UTF-8 all the same, the same bytes on both.
Bytes that are not one JSON value in UTF-8 are a parse error on both, in the same words.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.doors import Door
from tests.stdio_pipe import Stdio

ID_MUST = 'member "id" must be a string or an integer, not '

# (message, the id its refusal carries, the refusal's message)
WITH_ID: list[tuple[Any, Any, str]] = [
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, ID_MUST + "null"),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, ID_MUST + "true"),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, ID_MUST + "1.5"),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None, ID_MUST + "an object"),
    ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, ID_MUST + "an array"),
    ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3, 'member "jsonrpc" must be "2.0"'),
    ({"id": "no-version", "method": "ping"}, "no-version", 'member "jsonrpc" must be "2.0"'),
    ({"jsonrpc": "2.0", "id": 4, "method": 5}, 4, 'member "method" must be a non-empty string'),
    ({"jsonrpc": "2.0", "id": 5, "method": ""}, 5, 'member "method" must be a non-empty string'),
    (
        {"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"},
        6,
        'member "params" must be an object or an array',
    ),
    (
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": None},
        7,
        'member "params" must be an object or an array',
    ),
    ({"jsonrpc": "2.0", "id": 8}, 8, "not a request, notification or response"),
    ("a string", None, "a message must be a JSON object"),
    (17, None, "a message must be a JSON object"),
]

# (message, the door's answer: its refusal's message, or None for 202)
WITHOUT_ID: list[tuple[Any, str | None]] = [
    ({"jsonrpc": "1.0", "method": "notifications/initialized"}, 'member "jsonrpc" must be "2.0"'),
    ({"method": "notifications/initialized"}, 'member "jsonrpc" must be "2.0"'),
    ({"jsonrpc": "2.0", "method": 5}, 'member "method" must be a non-empty string'),
    # JSON-RPC 2.0 naming a method: a notification, however malformed (202, acted on by none)
    ({"jsonrpc": "2.0", "method": ""}, None),
    ({"jsonrpc": "2.0", "method": "notifications/progress", "params": "bad"}, None),
]


# (a request holding a lone surrogate the answer echoes, the code it is refused with)
ECHOED: list[tuple[dict[str, Any], int]] = [
    ({"jsonrpc": "2.0", "id": "q\ud800", "method": "nope"}, -32601),
    ({"jsonrpc": "2.0", "id": 1, "method": "nope/\udfff"}, -32601),
    (
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "k\ud800"}},
        -32602,
    ),
    (
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "p\udbff"}},
        -32602,
    ),
    (
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "x:\udc00"}},
        -32002,
    ),
]


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
VALIDATE = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"kestrel_validate",'
# (bytes that are no JSON text in UTF-8, the parse error's words)
UNREADABLE: list[tuple[bytes, str]] = [
    (b"\xef\xbb\xbf" + PING, "Parse error: invalid JSON"),  # a byte order mark first
    (PING.decode().encode("utf-16"), "Parse error: invalid UTF-8"),  # another encoding
    (VALIDATE + b'"arguments":{"source":"buy 1 ACME \xff"}}}', "Parse error: invalid UTF-8"),
    # a lone surrogate's bytes (CESU-8): JSON may escape one (\ud800), UTF-8 holds none
    (VALIDATE + b'"arguments":{"source":"\xed\xa0\x80"}}}', "Parse error: invalid UTF-8"),
    (VALIDATE + b'"arguments":{"source":"advance 1","wait":NaN}}}', "Parse error: invalid JSON"),
    (
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":-Infinity}}',
        "Parse error: invalid JSON",
    ),
    (b'{"jsonrpc":"2.0","id":4,', "Parse error: invalid JSON"),
]


def _post(door: Door, message: Any) -> httpx.Response:
    return httpx.post(
        door.url + "/mcp",
        content=json.dumps(message),
        headers={
            "Authorization": f"Bearer {door.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )


@pytest.mark.parametrize(("message", "request_id", "why"), WITH_ID)
def test_a_malformed_request_is_refused_alike_on_stdio_and_the_door(
    stdio_and_door: tuple[Stdio, Door], message: Any, request_id: Any, why: str
) -> None:
    stdio, door = stdio_and_door
    on_stdio = stdio.call(message)
    on_door = _post(door, message)
    expected = {"code": -32600, "message": why}
    assert (on_stdio["id"], on_stdio["error"]) == (request_id, expected)
    assert (on_door.json()["id"], on_door.json()["error"]) == (request_id, expected)
    assert on_door.status_code == (400 if request_id is None else 200)


@pytest.mark.parametrize(("message", "why"), WITHOUT_ID)
def test_a_malformed_message_without_an_id_is_never_answered_on_stdio(
    stdio_and_door: tuple[Stdio, Door], message: Any, why: str | None
) -> None:
    stdio, door = stdio_and_door
    stdio.send(message)
    # the next line on the pipe is the ping's answer: the message got none
    assert stdio.call({"jsonrpc": "2.0", "id": "after", "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": "after",
        "result": {},
    }
    on_door = _post(door, message)  # where every POST is answered
    if why is None:
        assert (on_door.status_code, on_door.content) == (202, b"")
    else:
        assert on_door.status_code == 400
        assert on_door.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": why},
        }


def test_a_well_formed_notification_is_taken_on_both(stdio_and_door: tuple[Stdio, Door]) -> None:
    stdio, door = stdio_and_door
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    stdio.send(note)
    assert stdio.call({"jsonrpc": "2.0", "id": "next", "method": "ping"})["id"] == "next"
    assert _post(door, note).status_code == 202


@pytest.mark.parametrize(("message", "code"), ECHOED)
def test_a_lone_surrogate_an_answer_echoes_is_sent_as_utf8_alike(
    stdio_and_door: tuple[Stdio, Door], message: dict[str, Any], code: int
) -> None:
    stdio, door = stdio_and_door
    on_stdio = stdio.line(message)
    on_door = _post(door, message).content
    assert on_stdio == on_door
    answer = json.loads(on_stdio.decode("utf-8"))  # strict: JSON on the wire is UTF-8
    assert answer["id"] == message["id"]  # the same id, its lone surrogate escaped
    assert answer["error"]["code"] == code
    assert b"\\ud" in on_stdio  # its escape, \udxxx


@pytest.mark.parametrize(
    ("raw", "why"),
    UNREADABLE,
    ids=["bom", "utf-16", "invalid-byte", "surrogate-bytes", "nan", "infinity", "cut-short"],
)
def test_bytes_that_are_no_json_in_utf8_are_a_parse_error_alike(
    stdio_and_door: tuple[Stdio, Door], raw: bytes, why: str
) -> None:
    stdio, door = stdio_and_door
    stdio.stdin.write(raw + b"\n")
    stdio.stdin.flush()
    on_stdio = json.loads(stdio.stdout.readline())
    on_door = httpx.post(
        door.url + "/mcp",
        content=raw,
        headers={
            "Authorization": f"Bearer {door.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    expected = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": why}}
    assert on_stdio == expected
    assert (on_door.status_code, on_door.json()) == (400, expected)
