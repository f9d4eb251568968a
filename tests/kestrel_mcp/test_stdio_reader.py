"""How the stdio server takes its input: in order, bounded, from a pipe or a file."""

from __future__ import annotations

import fcntl
import json
import os
import struct
import termios
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio
from kestrel_mcp.stdio_io import _READ_AHEAD, _YIELD_SECONDS, Reader

from tests.kestrel_mcp.test_stdio import INIT

pytestmark = pytest.mark.anyio


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe whose read end is ``fd``."""
    out = fcntl.ioctl(fd, termios.FIONREAD, struct.pack("i", 0))
    return int(struct.unpack("i", out)[0])


async def _settle() -> None:
    """Let the loop run a few iterations (each polls the descriptor once)."""
    for _ in range(5):
        await anyio.sleep(0)


async def test_a_client_writing_faster_than_the_server_reads_is_held_in_the_pipe() -> None:
    read_end, write_end = os.pipe()
    reader = Reader(read_end)
    try:
        assert await _first(reader, write_end) == b"chunk 0\n"
        # nobody reads: the server takes at most _READ_AHEAD chunks, the rest stays in
        # the pipe for the kernel to push back on the client
        for i in range(1, 3 * _READ_AHEAD):
            os.write(write_end, f"chunk {i}\n".encode())
            await _settle()
        assert _unread(read_end) > 0
        os.close(write_end)
        write_end = -1
        got = b""
        while chunk := await reader.read():
            got += chunk
        assert got == b"".join(f"chunk {i}\n".encode() for i in range(1, 3 * _READ_AHEAD))
        assert await reader.read() == b""  # and EOF stays EOF
    finally:
        reader.close()
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


async def _first(reader: Reader, write_end: int) -> bytes:
    async with anyio.create_task_group() as group:
        got: list[bytes] = []

        async def read() -> None:
            got.append(await reader.read())

        group.start_soon(read)
        await _settle()
        os.write(write_end, b"chunk 0\n")
    return got[0]


async def test_a_cancelled_read_loses_no_input() -> None:
    read_end, write_end = os.pipe()
    reader = Reader(read_end)
    try:
        with anyio.move_on_after(0.05):
            await reader.read()  # nothing comes: cancelled while waiting
        os.write(write_end, b"after\n")
        with anyio.fail_after(5):
            assert await reader.read() == b"after\n"
    finally:
        reader.close()
        os.close(read_end)
        os.close(write_end)


def _responses(data: bytes) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in map(json.loads, data.splitlines())}


async def test_a_burst_of_requests_in_one_write_is_answered_whole(acme: ModuleType) -> None:
    server = create_kestrel_mcp_server(acme.scripted()[0], secret_store=acme.MemorySecretStore)
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    lines = [INIT] + [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1, 201)]
    os.write(stdin_write, b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    os.close(stdin_write)
    with anyio.fail_after(20):
        await serve_stdio(server, stdin_fd=stdin_read, stdout_fd=stdout_write)
    os.close(stdout_write)
    os.close(stdin_read)
    with os.fdopen(stdout_read, "rb") as out:
        answered = _responses(out.read())
    assert sorted(answered, key=int) == list(range(201))
    assert all(answered[i]["result"] == {} for i in range(1, 201))


async def test_requests_from_a_regular_file_are_answered(acme: ModuleType, tmp_path: Path) -> None:
    """stdin redirected from a file (``< requests.jsonl``) cannot be polled: still served."""
    server = create_kestrel_mcp_server(acme.scripted()[0], secret_store=acme.MemorySecretStore)
    requests = tmp_path / "requests.jsonl"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    requests.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, ping)))
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        with anyio.fail_after(20):
            await serve_stdio(server, stdin_fd=stdin.fileno(), stdout_fd=stdout.fileno())
    answered = _responses(answers.read_bytes())
    assert answered[0]["result"]["protocolVersion"] == "2025-11-25"
    assert answered[1]["result"] == {}


async def test_input_a_spin_took_first_never_blocks_the_loop() -> None:
    """The loop can find stdin readable and queue its read, and a spinning read take the
    input before that read runs: the queued read must then not block the loop (it did:
    the server hung with a request in flight, its timer and thread callbacks unrun)."""
    read_end, write_end = os.pipe()
    reader = Reader(read_end, spin=0.05)
    valve = threading.Timer(3.0, os.write, (write_end, b"valve\n"))  # unblocks a hung read
    try:
        assert await _first(reader, write_end) == b"chunk 0\n"  # watching, polling on
        # The next read yields to the loop first (it has not for _YIELD_SECONDS): the
        # loop then sees the input written meanwhile and queues its read behind the
        # reader, whose spin takes the input first.
        await anyio.sleep(2 * _YIELD_SECONDS)
        os.write(write_end, b"chunk 1\n")
        assert await reader.read() == b"chunk 1\n"
        valve.start()
        started = time.monotonic()
        await anyio.sleep(0.01)  # the queued read runs now
        # A blocked read would hold the loop until the valve writes, 3 s in.
        assert time.monotonic() - started < 2.0, "a read blocked the event loop"
    finally:
        valve.cancel()
        reader.close()
        os.close(read_end)
        os.close(write_end)
