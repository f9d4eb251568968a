"""Fuzz: hostile frames into ``handle_frame`` over the real runtime.

Promise (issue 7.1, spec 8): ``handle_frame`` never raises; a well-formed request gets
exactly one response carrying its id; a notification gets none; every response is a
valid JSON-RPC 2.0 response (strict JSON); and no frame, however hostile, reaches an
unexpected fault (-32603).
"""

from __future__ import annotations

import collections
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_mcp import KestrelMcpServer, create_kestrel_mcp_server
from kestrel_sdk import local_transport

INTERNAL_ERROR = -32603
BATCH = 25


async def _open(server: KestrelMcpServer, label: str) -> str:
    response = await server.handle(
        {
            "jsonrpc": "2.0",
            "id": "open",
            "method": "tools/call",
            "params": {
                "name": "kestrel_session_open",
                "arguments": {"scenario": "acme-trend", "label": label},
            },
        }
    )
    assert response is not None
    return str(response["result"]["structuredContent"]["sessionId"])


async def _check_batch(
    rs: ModuleType,
    server: KestrelMcpServer,
    batch: list[tuple[str, Any, bytes]],
    seen: collections.Counter[str],
) -> None:
    for kind, message, raw in batch:
        response = await server.handle_frame(raw)
        seen["frames"] += 1
        if kind == "request":
            assert response is not None, message
            assert response["id"] == message["id"], (message, response)
        elif kind == "notification":
            assert response is None, (message, response)
        if response is None:
            seen["no response"] += 1
            continue
        rs.check_response(response)
        if isinstance(message, dict) and rs.is_request(message):
            assert response["id"] == message["id"], (message, response)
        if "error" in response:
            code = response["error"]["code"]
            assert code != INTERNAL_ERROR, (raw[:300], response)
            seen[f"error {code}"] += 1
        elif response["result"].get("isError"):
            refusal = response["result"]["structuredContent"]["refusal"]
            seen[f"refusal {refusal['code']}"] += 1
        else:
            seen["result"] += 1


def _fuzz(rs: ModuleType, strat: ModuleType, tmp_path: Path, examples: int) -> None:
    server = create_kestrel_mcp_server(local_transport(home=tmp_path / "home"))
    seen: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    with anyio.from_thread.start_blocking_portal() as portal:
        known = [portal.call(_open, server, "a"), portal.call(_open, server, "b")]

        frames = strat.frames(known, server.surface.listed)

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.lists(frames, min_size=BATCH, max_size=BATCH))
        def run(batch: list[tuple[str, Any, bytes]]) -> None:
            portal.call(_check_batch, rs, server, batch, seen)

        run()
        portal.call(server.transport.aclose)
    elapsed = time.perf_counter() - started
    print(
        f"\nhandle_frame fuzz: {seen['frames']} frames in {elapsed:.1f}s "
        f"({seen['frames'] / elapsed:.0f}/s); "
        + ", ".join(f"{k}={v}" for k, v in seen.most_common())
    )
    assert seen["frames"] >= examples * BATCH * 0.95
    # The fuzz reached the runtime: results, refusals and each protocol error class.
    assert seen["result"] > 0
    assert any(k.startswith("refusal ") for k in seen)
    for code in (-32700, -32600, -32601, -32602):
        assert seen[f"error {code}"] > 0, seen


def test_handle_frame_fuzz_20k(rs: ModuleType, strat: ModuleType, tmp_path: Path) -> None:
    _fuzz(rs, strat, tmp_path, examples=820)  # 820 x 25 = 20,500 frames


@pytest.mark.slow
def test_handle_frame_fuzz_long(rs: ModuleType, strat: ModuleType, tmp_path: Path) -> None:
    _fuzz(rs, strat, tmp_path, examples=10_000)  # 250,000 frames


def test_exact_calls_reach_every_tool_stdio_lists(strat: ModuleType, tmp_path: Path) -> None:
    """The fuzz's well-formed calls aim at every tool the server lists (the registry's,
    a tool added to it included), each with its required arguments and no unknown one."""
    server = create_kestrel_mcp_server(local_transport(home=tmp_path / "home"))
    listed = {tool.name: tool for tool in server.surface.listed}
    called: set[str] = set()

    @settings(max_examples=600, derandomize=True, database=None)
    @given(strat.exact_tool_calls(["ks_" + "a" * 26]))
    def draw(request: dict[str, Any]) -> None:
        name, arguments = request["params"]["name"], request["params"]["arguments"]
        fields = listed[name].arguments.model_fields.values()
        required = {f.alias for f in fields if f.is_required()}
        assert required <= set(arguments) <= {f.alias for f in fields}, (name, arguments)
        called.add(name)

    draw()
    assert called == set(listed)
