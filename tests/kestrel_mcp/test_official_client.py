"""The official ``mcp`` 2.x client drives the whole workflow over stdio, in every mode.

``legacy`` is the initialize handshake at 2025-11-25, ``auto`` probes ``server/discover``
and adopts 2026-07-28, and ``2026-07-28`` speaks the modern envelope without a probe.
The ``local`` backend is the real ``kestrel-mcp`` over ``local_transport`` in a temp
home; ``acme`` is the scripted runtime behind the shipped ``ScriptedTransport`` (which
also returns unknown members).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import canonical_json, root_of
from kestrel_protocol.surface import COMPACT_TEXT
from mcp import Client, StdioServerParameters
from mcp_types import ResourceTemplateReference

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
MODES = ["legacy", "auto", "2026-07-28"]


def server_params(backend: str, home: Path) -> StdioServerParameters:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    if backend == "acme":
        return StdioServerParameters(
            command=sys.executable,
            args=[str(HERE / "acme_server.py"), "--newer", "--grade-steps", "1"],
            env=env,
        )
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


def model_text(data: dict[str, Any]) -> str | None:
    """The compact text of a session step's or a grade's result (a model reads it in
    place of the JSON), or ``None`` for any other result."""
    for kind, render in COMPACT_TEXT.items():
        try:
            kind.parse(data)
        except ValueError:
            continue
        return render(data)
    return None


def structured(result: Any) -> dict[str, Any]:
    """The structured content, checked to be exactly what the one text content says: a
    session step's or a grade's compact text, else the object's JSON."""
    assert len(result.content) == 1
    text = result.content[0].text
    data: dict[str, Any] = result.structured_content
    compact = model_text(data)
    if compact is not None:
        assert text == compact
        return data
    assert json.loads(text) == data
    assert canonical_json(json.loads(text)) == canonical_json(data)
    return data


@pytest.mark.parametrize("backend", ["acme", "local"])
@pytest.mark.parametrize("mode", MODES)
async def test_full_workflow(mode: str, backend: str, tmp_path: Path) -> None:
    async with Client(
        server_params(backend, tmp_path / "home"), mode=mode, read_timeout_seconds=60
    ) as client:
        expected_version = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.protocol_version == expected_version
        if mode != "2026-07-28":
            assert client.server_info is not None
            assert client.server_info.name == "kestrel"
            assert client.instructions is not None
            assert "stand down" in client.instructions

        tools = (await client.list_tools()).tools
        assert "kestrel_session_submit" in [tool.name for tool in tools]

        catalog = structured(await client.call_tool("kestrel_catalog", {}))
        assert catalog["kind"] == "kestrel.catalog"
        assert root_of(catalog) == catalog["root"]
        assert "acme-trend" in [s["id"] for s in catalog["scenarios"]]

        report = structured(
            await client.call_tool(
                "kestrel_validate", {"source": "buy 10 ACME\nadvance 5\n", "scenario": "acme-trend"}
            )
        )
        assert report["ok"] is True

        opened = structured(
            await client.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
        )
        assert opened["gated"] is False
        session_id = opened["sessionId"]

        submitted = structured(
            await client.call_tool(
                "kestrel_session_submit",
                {"sessionId": session_id, "source": "buy 10 ACME\nadvance 5\n"},
            )
        )
        assert submitted["ok"] is True
        assert submitted["disposition"] == "applied"
        assert root_of(submitted["pentad"]) == submitted["pentad"]["root"]
        assert root_of(submitted["delivery"]["frame"]) == submitted["delivery"]["frameRoot"]
        if backend == "acme":  # a newer backend's unknown members reach the client unchanged
            assert submitted["futureMember"] == {"nested": [1, "two", None, True]}
            assert submitted["delivery"]["frame"]["zFlag"] == "ü✓"

        refused = await client.call_tool(
            "kestrel_session_submit", {"sessionId": session_id, "source": "bogus 1 ACME"}
        )
        assert refused.is_error is True
        assert refused.structured_content is not None
        assert refused.structured_content["refusal"]["code"] == "INVALID_SOURCE"

        frame = structured(
            await client.call_tool("kestrel_session_frame", {"sessionId": session_id})
        )
        assert frame == submitted["delivery"]

        blotter = structured(
            await client.call_tool("kestrel_session_blotter", {"sessionId": session_id})
        )
        assert blotter["kind"] == "kestrel.blotter"
        assert root_of(blotter) == blotter["root"]

        record = structured(
            await client.call_tool("kestrel_session_close", {"sessionId": session_id})
        )
        assert record["kind"] == "kestrel.session"
        assert record["pentads"] == [submitted["pentad"]["root"]]

        graded = structured(await client.call_tool("kestrel_grade", {"sessionId": session_id}))
        for _ in range(50):
            if graded["kind"] != "kestrel.operation":
                break
            graded = structured(
                await client.call_tool("kestrel_operation_resume", {"token": graded["token"]})
            )
        assert graded["kind"] == "kestrel.grade"
        assert graded["record"] == record["root"]
        assert root_of(graded) == graded["root"]

        artifact = await client.read_resource(f"kestrel://artifacts/{record['root']}")
        assert json.loads(artifact.contents[0].text) == record  # type: ignore[union-attr]

        completion = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="kestrel://catalog/scenarios/{id}"),
            {"name": "id", "value": "acme-t"},
        )
        assert completion.completion.values == ["acme-trend"]

        written = structured(
            await client.call_tool(
                "kestrel_secrets_set", {"key": "PAPER_BROKER_KEY", "value": "canary-value-42"}
            )
        )
        assert written["key"] == "PAPER_BROKER_KEY"
        listed = structured(await client.call_tool("kestrel_secrets_list", {}))
        assert "PAPER_BROKER_KEY" in listed["keys"]
        removed = structured(
            await client.call_tool("kestrel_secrets_unset", {"key": "PAPER_BROKER_KEY"})
        )
        assert removed["removed"] is True
        live = await client.call_tool("kestrel_secrets_set", {"key": "LIVE_KEY", "value": "x"})
        assert live.is_error is True
        assert "canary-value-42" not in json.dumps([written, listed, removed])
