"""The stdio transport, end to end in a subprocess: framing, isolation, limits, shutdown."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).resolve().parent / "acme_server.py"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _open_call(rid: int) -> dict[str, Any]:
    """``tools/call`` opening the acme script's one session (``ks_fake1``)."""
    return _tool_call(rid, "kestrel_session_open", {"scenario": "acme-trend"})


def _submit_call(rid: int | str, source: str) -> dict[str, Any]:
    """``tools/call`` submitting ``source`` (the acme script reads it as a cue) to it."""
    return _tool_call(rid, "kestrel_session_submit", {"sessionId": "ks_fake1", "source": source})


def _tool_call(rid: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


class Peer:
    """A raw line-oriented JSON-RPC client on a server subprocess."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            line = await self.stdout.receive_until(b"\n", 64 * 1024 * 1024)
        message: dict[str, Any] = json.loads(line)
        return message

    async def stderr_text(self) -> str:
        assert self.process.stderr is not None
        chunks = []
        with anyio.move_on_after(5):
            async for chunk in self.process.stderr:
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")


async def start(*args: str) -> Peer:
    process = await anyio.open_process([sys.executable, str(SERVER), *args])
    peer = Peer(process)
    await peer.send(INIT)
    # the first answer waits for the interpreter to start and import the stack: on a new
    # machine (no bytecode cache yet) under load that alone can take over 10 s
    assert (await peer.receive(timeout=120))["result"]["protocolVersion"] == "2025-11-25"
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return peer


async def stop(peer: Peer) -> None:
    if peer.process.returncode is None:
        peer.process.kill()
    await peer.process.aclose()


async def test_stdout_carries_protocol_only_logs_and_prints_go_to_stderr() -> None:
    peer = await start()
    try:
        await peer.send(_open_call(1))
        assert (await peer.receive())["id"] == 1
        await peer.send(_submit_call(2, "print"))
        response = await peer.receive()
        assert response["id"] == 2
        assert response["result"]["structuredContent"]["ok"] is True
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        with anyio.fail_after(5):
            await peer.process.wait()
        rest = b""
        with anyio.move_on_after(2):
            try:
                while True:
                    rest += await peer.stdout.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                pass
        stderr = await peer.stderr_text()
        assert "a log line from deep inside the runtime" in stderr
        assert "stray print from deep inside the runtime" in stderr
        assert rest == b""
    finally:
        await stop(peer)


async def test_every_stdout_line_is_a_json_rpc_response() -> None:
    process = await anyio.open_process([sys.executable, str(SERVER)])
    lines = [
        json.dumps(INIT),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps(_open_call(1)),
        json.dumps(_submit_call(2, "print")),
        "",
        "   ",
    ]
    assert process.stdin is not None
    await process.stdin.send(("\n".join(lines) + "\n").encode())
    await process.stdin.aclose()
    assert process.stdout is not None
    out = b""
    with anyio.fail_after(10):
        async for chunk in process.stdout:
            out += chunk
        await process.wait()
    await process.aclose()
    messages = [json.loads(line) for line in out.decode().splitlines()]
    assert [m["id"] for m in messages] == [0, 1, 2]
    assert all(m["jsonrpc"] == "2.0" for m in messages)


async def test_notifications_write_nothing() -> None:
    peer = await start()
    try:
        for message in (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}},
            {"jsonrpc": "2.0", "method": "notifications/who/knows"},
        ):
            await peer.send(message)
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    finally:
        await stop(peer)


async def test_a_line_past_16_mib_is_refused_and_the_server_keeps_going() -> None:
    peer = await start()
    try:
        huge = (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
            + b"x" * (16 * 1024 * 1024)
            + b'"}}\n'
        )
        await peer.send_raw(huge)
        refused = await peer.receive(timeout=30)
        assert refused["error"]["code"] == -32700
        assert "16 MiB" in refused["error"]["message"]
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert (await peer.receive())["id"] == 2
        # Just under the limit is fine.
        pad = 16 * 1024 * 1024 - 200
        big = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"' + b"y" * pad + b'"}}\n'
        await peer.send_raw(big)
        assert (await peer.receive(timeout=30)) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        await stop(peer)


async def test_requests_complete_concurrently() -> None:
    """A held submit does not hold up the ping behind it; it ends when released."""
    peer = await start()
    try:
        await peer.send(_open_call(1))
        await peer.receive()
        await peer.send(_submit_call("slow", "slow"))  # held until the release below
        await peer.send({"jsonrpc": "2.0", "id": "fast", "method": "ping"})
        first = await peer.receive()
        assert first["id"] == "fast"
        await peer.send(_submit_call("release", "release"))
        answered = {(await peer.receive())["id"], (await peer.receive())["id"]}
        assert answered == {"slow", "release"}
    finally:
        await stop(peer)


async def test_a_request_behind_a_slow_one_in_the_same_write_is_not_held_up() -> None:
    """Both lines arrive in one chunk: the one behind the waiting call is still answered
    first (the worker answering the slow call does not keep the rest of the chunk)."""
    peer = await start()
    try:
        await peer.send(_open_call(1))
        await peer.receive()
        both = [_submit_call("slow", "slow"), {"jsonrpc": "2.0", "id": "fast", "method": "ping"}]
        await peer.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in both))
        first = await peer.receive()
        assert first["id"] == "fast"
        await peer.send(_submit_call("release", "release"))
        answered = {(await peer.receive())["id"], (await peer.receive())["id"]}
        assert answered == {"slow", "release"}
    finally:
        await stop(peer)


async def test_a_cancelled_request_gets_no_response() -> None:
    peer = await start()
    try:
        await peer.send(_open_call(1))
        await peer.receive()
        await peer.send(_submit_call(5, "slow"))  # held until the release below
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 5, "reason": "user"},
            }
        )
        await peer.send(_submit_call(7, "release"))
        assert (await peer.receive())["id"] == 7
        await peer.send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert (await peer.receive())["id"] == 6  # 5, answered in between, would come first
    finally:
        await stop(peer)


async def test_eof_ends_cleanly() -> None:
    peer = await start()
    assert peer.process.stdin is not None
    await peer.process.stdin.aclose()
    with anyio.fail_after(5):
        code = await peer.process.wait()
    assert code == 0
    await stop(peer)


async def test_sigterm_ends_cleanly_even_mid_request() -> None:
    peer = await start()
    try:
        await peer.send(_open_call(1))
        await peer.receive()
        await peer.send(_submit_call(2, "slow"))  # held: never released
        await peer.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert (await peer.receive())["id"] == 3  # the held submit was read before it
        peer.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(5):
            code = await peer.process.wait()
        assert code == 0
        stderr = await peer.stderr_text()
        assert "Traceback" not in stderr
    finally:
        await stop(peer)


def _process_cpu(pid: int) -> float:
    """Seconds of CPU the process has run, all its threads (Linux's ``/proc``)."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
            total += int(stat.read().split()[0])
    return total / 1e9


class _Pipe:
    """A blocking line client on an acme_server.py subprocess, for threads."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        assert self.call(INIT)["result"]["protocolVersion"] == "2025-11-25"

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()
        response: dict[str, Any] = json.loads(self.stdout.readline())
        return response

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads CPU time from /proc")
def test_a_client_that_pauses_between_requests_costs_no_spinning() -> None:
    """A 5 ms spin window and a client pausing 20 ms before each of 30 pings: were the
    server to poll through its window after every response, that alone would be 150 ms
    of CPU; it stops polling once a request does not come within the window."""
    pipe = _Pipe("--spin-us", "5000")
    try:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        pipe.call(ping)
        before = _process_cpu(pipe.process.pid)
        for _ in range(30):
            time.sleep(0.02)
            assert pipe.call(ping)["result"] == {}
        spent = _process_cpu(pipe.process.pid) - before
        assert spent < 0.075, f"the server ran {spent * 1000:.0f} ms of CPU for 30 pings"
    finally:
        pipe.close()


def test_sigterm_ends_a_server_whose_client_never_pauses() -> None:
    """A client that sends its next request the moment it has a response keeps the
    server polling; the server still lets its event loop run, so SIGTERM is seen."""
    pipe = _Pipe("--spin-us", "50000")
    going = threading.Event()
    answered = [0]

    def hammer() -> None:
        with contextlib.suppress(OSError, ValueError):  # the server went away: done
            while True:
                pipe.call({"jsonrpc": "2.0", "id": answered[0], "method": "ping"})
                answered[0] += 1
                if answered[0] == 200:
                    going.set()

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    try:
        assert going.wait(60), "the client's pings were not answered"
        pipe.process.send_signal(signal.SIGTERM)
        assert pipe.process.wait(timeout=5) == 0
    finally:
        pipe.close()
        thread.join(timeout=10)


def _line(message: dict[str, Any]) -> bytes:
    """One stdio line, as the writer frames it."""
    from kestrel_protocol.surface import frame_bytes

    return frame_bytes(message, b"\n")


def _plain_frame(message: dict[str, Any]) -> bytes:
    """json's text of ``message`` in UTF-8 (a lone surrogate as its escape, ``\\ud800``)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
    frame = text.encode("utf-8", "backslashreplace")
    assert json.loads(frame.decode("utf-8")) == json.loads(text)  # valid UTF-8, same JSON
    return frame


@pytest.mark.parametrize(
    ("float_free", "given_bytes"), [(False, False), (False, True), (True, False), (True, True)]
)
@pytest.mark.parametrize("surrogate", ["", "\ud800"])
@pytest.mark.parametrize("is_error", [False, True])
@pytest.mark.parametrize("text", [None, 'time,close\n"q",1\n'])
@pytest.mark.parametrize("request_id", [7, 'a"b\u2028', None, 2**70, -(2**80)])
def test_spliced_tool_result_frames_equal_the_plain_encoding_byte_for_byte(  # noqa: PLR0917
    float_free: bool,
    given_bytes: bool,
    surrogate: str,
    is_error: bool,
    text: str | None,
    request_id: int | str | None,
) -> None:
    """Spliced from the result's one text (given as bytes or not), or written whole by
    orjson (a float-free result, the ``fast`` extra), the frame is json's bytes; what
    orjson declines (a lone surrogate, an id past 64 bits) is spliced as text."""
    from kestrel_protocol.surface import ToolResult, frame_bytes, json_text

    structured: dict[str, Any] = {
        "kind": "kestrel.frame",
        "zFlag": f'ü✓ \u2028 "q"\\ \x00 \x1f\x7f\t{surrogate}',
        "n": [1, -2, None, True, False, {"deep": []}, 2**63 - 1, -(2**63)],
    }
    encoded = json_text(structured)
    utf8 = encoded.encode("utf-8", "backslashreplace") if given_bytes else None
    result = ToolResult(
        structured, text, is_error=is_error, encoded=encoded, utf8=utf8, float_free=float_free
    )
    first = {"jsonrpc": "2.0", "id": request_id, "result": result}
    assert _line(first) == _plain_frame(first)
    assert frame_bytes(first) + b"\n" == _plain_frame(first)  # a door's body
    plain = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    assert result.structured_bytes() == plain.encode("utf-8", "backslashreplace")  # /v1's body
    result["resultType"] = "complete"  # a 2026-07-28 result gains members after isError
    result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "kestrel"}}
    message = {"jsonrpc": "2.0", "id": request_id, "result": result}
    line = _line(message)
    assert line == _plain_frame(message)
    assert line.count(b"\n") == 1
    assert frame_bytes(message) == line[:-1]  # a door's body: the same bytes, no newline


@pytest.mark.parametrize("float_free", [False, True])
@pytest.mark.parametrize(
    "change",
    ["text", "block", "order", "members", "structured", "float member", "float in block"],
)
def test_a_tool_result_changed_after_it_was_built_is_framed_as_it_now_is(
    change: str, float_free: bool
) -> None:
    """Whatever a face changed, the frame is json's bytes of the result as it now is
    (a float among the changes is json's ``1e-07``, not orjson's ``1e-7``)."""
    from kestrel_protocol.surface import ToolResult, frame_bytes

    result = ToolResult({"ok": True, "n": 1}, float_free=float_free)
    if change == "text":
        result["content"][0]["text"] = "replaced"
    elif change == "block":
        result["content"].append({"type": "text", "text": "second"})
    elif change == "order":
        result["content"][0] = {"text": result["content"][0]["text"], "type": "text"}
    elif change == "members":  # the same objects, in another order
        result["content"] = result.pop("content")
        result["isError"] = True
    elif change == "structured":
        result["structuredContent"] = {"ok": False, "ratio": 1e-7}
    elif change == "float member":
        result["ttlMs"] = 1e-7
    else:
        result["content"][0]["priority"] = 1e-7
    message = {"jsonrpc": "2.0", "id": 1, "result": result}
    assert _line(message) == _plain_frame(message)
    assert frame_bytes(message) + b"\n" == _plain_frame(message)
    body = json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":"))
    assert result.structured_bytes() == body.encode()


def test_a_client_that_goes_away_ends_the_server_quietly() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        assert process.stdin is not None
        process.stdout.close()  # the client stops reading: its end of the pipe is gone
        for request_id in range(3):
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}).encode()
                + b"\n"
            )
            process.stdin.flush()
            time.sleep(0.05)
        # stdin is still open: the broken stdout alone ends it (the deadline covers a cold start)
        code = process.wait(timeout=60)
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
        assert code == 0
        assert "Traceback" not in stderr
        assert "BrokenPipeError" not in stderr
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
