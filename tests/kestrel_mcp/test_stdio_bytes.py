"""The stdio face's response bytes, pinned: the same requests give the same bytes.

``python -m kestrel_mcp`` on a fresh home answers a fixed script of requests in both
protocol eras (tool results, a frame, resource reads, a refusal, invalid arguments, a
lone surrogate, protocol errors, the listings); every line it writes must equal, byte for
byte, the line recorded in ``stdio_transcript.jsonl``. Kestrel is deterministic, so the
transcript holds on any machine; only the package version in ``serverInfo`` and the
listed tools are filled in (the tools as the registry declares them: a tool added to the
surface needs no re-recording, while the way ``tools/list`` writes them stays pinned).
A change that alters a response (a new field, a reworded message) must re-record it
deliberately: ``python tests/kestrel_mcp/test_stdio_bytes.py`` rewrites the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TRANSCRIPT = Path(__file__).with_name("stdio_transcript.jsonl")
SID = "ks_p55breiebqsipqlkpirsfwserq"
"""The id of the first session a fresh home opens on acme-trend (ids are derived)."""
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _call(name: str, arguments: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"method": "tools/call", "params": params}


def _submit(source: Any, sid: str = SID, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return _call("kestrel_session_submit", {"sessionId": sid, "source": source}, meta)


SCRIPT: list[dict[str, Any] | bytes] = [
    {
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bytes", "version": "1"},
        },
    },
    {"method": "notifications/initialized"},
    {"method": "tools/list"},
    _call("kestrel_session_open", {"scenario": "acme-trend", "label": "bytes \u2713 \u00fc"}),
    _submit("advance"),
    _submit("buy 1 ACME\nadvance 1\n"),
    _call("kestrel_session_frame", {"sessionId": SID}),
    _call("kestrel_session_history", {"sessionId": SID, "bars": 3}),
    _submit("advance", sid="ks_nope"),  # a refusal: a result with isError
    _submit("buy -1 ACME\n"),  # INVALID_SOURCE
    _submit(5),  # invalid arguments: -32602
    _submit("a\ud800b"),  # a lone surrogate: -32602
    _call("kestrel_session_submit", {"sessionId": SID}),  # a missing argument
    _call("kestrel_nope", {}),  # an unknown tool
    {"method": "resources/read", "params": {"uri": "kestrel://catalog/scenarios/acme-trend"}},
    {"method": "resources/read", "params": {"uri": "kestrel://catalog/scenarios/nope"}},
    {"method": "ping"},
    {"method": "no/such/method"},
    b'{"jsonrpc": "2.0", "id": 99, "method": ',  # a parse error
    b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',  # an invalid request
    {"method": "server/discover", "params": {"_meta": MODERN}},
    _submit("advance", meta=MODERN),
    _submit("advance", sid="ks_nope", meta=MODERN),
    _submit(["advance"], meta=MODERN),
    {
        "method": "resources/read",
        "params": {"uri": "kestrel://catalog/scenarios/nope", "_meta": MODERN},
    },
    {"method": "resources/read", "params": {"uri": "kestrel://catalog", "_meta": MODERN}},
    {"method": "prompts/list", "params": {"_meta": MODERN}},
    {"method": "logging/setLevel", "params": {"level": "debug"}},
    _submit("advance", meta={"progressToken": "p1"}),
    _call("kestrel_session_close", {"sessionId": SID}),
    _call("kestrel_grade", {"sessionId": SID}, meta={"progressToken": 7}),
]


def _frames() -> list[bytes]:
    """The request lines: ids count up from 1, a string id every fifth request."""
    lines: list[bytes] = []
    for number, step in enumerate(SCRIPT, start=1):
        if isinstance(step, bytes):
            lines.append(step + b"\n")
            continue
        message: dict[str, Any] = {"jsonrpc": "2.0"}
        if not step["method"].startswith("notifications/"):
            message["id"] = f'id "{number}"' if number % 5 == 0 else number
        message.update(step)
        lines.append(json.dumps(message).encode() + b"\n")
    return lines


def _expects_response(line: bytes) -> bool:
    return b'"notifications/' not in line


def _run_script(home: Path) -> list[bytes]:
    """Each request sent after the previous one is answered; the raw lines it wrote."""
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    env.pop("KESTREL_REMOTE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "kestrel_mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    written: list[bytes] = []
    try:
        for line in _frames():
            process.stdin.write(line)
            process.stdin.flush()
            if _expects_response(line):
                written.append(process.stdout.readline())
        process.stdin.close()
        written.extend(process.stdout.readlines())  # anything else it wrote before EOF
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return written


def _server_info(version: str | None = None) -> bytes:
    """``serverInfo`` as written; with ``version``, the recorded placeholder."""
    from kestrel_mcp.server import SERVER_INFO

    info = SERVER_INFO if version is None else {**SERVER_INFO, "version": version}
    return json.dumps(info, separators=(",", ":")).encode()


def _tools(placeholder: bool = False) -> bytes:
    """The ``tools`` of ``tools/list`` as written: the surface's listed tools and the
    server's own (its secret tools); with ``placeholder``, the recorded stand-in."""
    from kestrel_mcp.secrets import SecretTools, secret_tools
    from kestrel_protocol.surface import SURFACE

    if placeholder:
        return b'"{TOOLS}"'
    listings = list(SURFACE.plus(secret_tools(SecretTools())).listings)
    return json.dumps(listings, separators=(",", ":"), ensure_ascii=False).encode()


def _fill(recorded: bytes) -> bytes:
    """The recorded transcript with the version and the tools filled in."""
    recorded = recorded.replace(_server_info("{VERSION}"), _server_info())
    return recorded.replace(_tools(placeholder=True), _tools())


def _blank(written: bytes) -> bytes:
    """What is recorded for ``written``: the version and the tools left as stand-ins."""
    blanked = written.replace(_server_info(), _server_info("{VERSION}"))
    assert blanked.count(_tools()) == 1, "the tools/list response lists the surface's tools"
    return blanked.replace(_tools(), _tools(placeholder=True))


def test_every_response_is_byte_identical_to_the_recorded_transcript(tmp_path: Path) -> None:
    written = _run_script(tmp_path / "home")
    recorded = _fill(TRANSCRIPT.read_bytes())
    recorded_lines = recorded.splitlines(keepends=True)
    assert len(written) == len(recorded_lines)
    for number, (got, want) in enumerate(zip(written, recorded_lines, strict=True), start=1):
        assert got == want, f"response {number} differs"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        lines = _run_script(Path(scratch) / "home")
    TRANSCRIPT.write_bytes(_blank(b"".join(lines)))
    print(f"recorded {len(lines)} responses in {TRANSCRIPT}")
