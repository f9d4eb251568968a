"""Fuzz over HTTP: hostile frames into ``/mcp``, and schemathesis against ``/v1/openapi.json``.

Promise (issue 7.1, spec 10): the door over the real runtime, on loopback, never
answers 5xx; on ``/mcp`` a well-formed request gets exactly one JSON-RPC response
carrying its id, a notification gets 202 and no body, every body is valid JSON-RPC and
no frame reaches an unexpected fault (-32603). On ``/v1``, schemathesis generates
requests from the door's own OpenAPI document, schema-valid and schema-violating: no
5xx, every status and content type documented, every body matches its schema.
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

INTERNAL_ERROR = -32603
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
BATCH = 10


@pytest.fixture
def door(rs: ModuleType, tmp_path: Path) -> Iterator[Any]:
    """``kestrel-door serve`` on loopback over the real runtime; its log must stay clean."""
    with rs.door_process(tmp_path) as served:
        yield served
        assert served.proc.poll() is None, "the door died"
    assert "Traceback" not in served.log(), served.log()[-3000:]


def _open(client: httpx.Client, label: str) -> str:
    opened = client.post("/v1/sessions", json={"scenario": "acme-trend", "label": label})
    assert opened.status_code == 200, opened.text
    return str(opened.json()["sessionId"])


def _check_mcp(
    rs: ModuleType, kind: str, message: Any, raw: bytes, response: httpx.Response
) -> str:
    assert response.status_code < 500, (raw[:300], response.status_code, response.text[:300])
    if kind == "notification":
        assert response.status_code == 202, (message, response.text)
        assert response.content == b""
        return "202"
    if response.status_code == 202:
        assert kind != "request", message
        return "202"
    body = response.json()
    answers = body if isinstance(body, list) else [body]
    for answer in answers:
        rs.check_response(answer)
        if "error" in answer:
            assert answer["error"]["code"] != INTERNAL_ERROR, (raw[:300], answer)
    if kind == "request":
        assert isinstance(body, dict), body
        assert body["id"] == message["id"], (message, body)
        if "error" in body:
            return f"error {body['error']['code']}"
        return "refusal" if body["result"].get("isError") else "result"
    return f"status {response.status_code}"


def _fuzz_mcp(rs: ModuleType, strat: ModuleType, door: Any, examples: int) -> None:
    token = door.token("fuzzer")
    seen: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    with httpx.Client(
        base_url=door.base,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
        timeout=60,
    ) as client:
        known = [_open(client, "a"), _open(client, "b")]
        modern = {"MCP-Protocol-Version": "2026-07-28"}

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=NO_SHRINK,  # each failure already names its raw frame; shrinking over
            # HTTP would take minutes
        )
        @given(
            st.lists(st.tuples(strat.frames(known), st.booleans()), min_size=BATCH, max_size=BATCH)
        )
        def run(batch: list[tuple[tuple[str, Any, bytes], bool]]) -> None:
            for (kind, message, raw), use_modern in batch:
                headers: dict[str, str] = {}
                if use_modern and isinstance(message, dict):
                    params = message.get("params")
                    meta = params.get("_meta") if isinstance(params, dict) else None
                    if isinstance(meta, dict):  # only a modern-shaped message says modern
                        headers = dict(modern)
                        method = message.get("method")
                        name = params.get("name") or params.get("uri")  # type: ignore[union-attr]
                        for header, value in (("Mcp-Method", method), ("Mcp-Name", name)):
                            if isinstance(value, str) and value.isascii() and value.isprintable():
                                headers[header] = value
                response = client.post("/mcp", content=raw, headers=headers)
                seen[_check_mcp(rs, kind, message, raw, response)] += 1
                seen["frames"] += 1

        run()
    elapsed = time.perf_counter() - started
    print(
        f"\n/mcp HTTP fuzz: {seen['frames']} frames in {elapsed:.1f}s; "
        + ", ".join(f"{k}={v}" for k, v in seen.most_common())
    )
    assert seen["frames"] >= examples * BATCH * 0.95
    assert seen["result"] > 0
    assert seen["refusal"] > 0


def test_mcp_http_fuzz(rs: ModuleType, strat: ModuleType, door: Any) -> None:
    _fuzz_mcp(rs, strat, door, examples=500)  # 5,000 frames


@pytest.mark.slow
def test_mcp_http_fuzz_long(rs: ModuleType, strat: ModuleType, door: Any) -> None:
    _fuzz_mcp(rs, strat, door, examples=6_000)  # 60,000 frames


# ---------------------------------------------------------------- schemathesis on /v1

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def _schemathesis(door: Any, examples: int) -> None:
    token = door.token("schemathesis")
    auth = {"Authorization": f"Bearer {token}"}
    document = httpx.get(door.base + "/v1/openapi.json", headers=auth)
    assert document.status_code == 200
    schema = schemathesis.openapi.from_dict(document.json())
    with httpx.Client(base_url=door.base, headers=auth) as client:
        sid = _open(client, "st")
        client.post(f"/v1/sessions/{sid}/submit", json={"source": "buy 5 ACME\nadvance 3"})
    failures: dict[str, str] = {}
    tally: collections.Counter[str] = collections.Counter()
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 14  # every /v1 route is documented
    started = time.perf_counter()
    for operation in operations:
        strategies = [
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        ]
        if "{id}" in operation.path:  # also aim at a real, open session
            strategies.append(
                operation.as_strategy(GenerationMode.POSITIVE, path_parameters={"id": sid})
            )
        for strategy in strategies:

            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                phases=NO_SHRINK,
            )
            @given(strategy)
            def run(case: Any) -> None:
                response = case.call(base_url=door.base, headers=auth, timeout=60)
                tally[f"{response.status_code // 100}xx"] += 1
                for check in CHECKS:
                    try:
                        case.validate_response(response, checks=[check])
                    except Exception as exc:  # collect every kind, then fail once
                        op = case.operation
                        key = f"{op.method.upper()} {op.path} {check.__name__}"
                        failures.setdefault(key, f"{response.status_code}: {exc}"[:600])

            run()
    elapsed = time.perf_counter() - started
    print(
        f"\nschemathesis /v1: {len(operations)} operations, {sum(tally.values())} requests "
        f"in {elapsed:.1f}s; " + ", ".join(f"{k}={v}" for k, v in sorted(tally.items()))
    )
    assert not failures, json.dumps(failures, indent=1)
    assert tally["5xx"] == 0


def test_v1_schemathesis(door: Any) -> None:
    _schemathesis(door, examples=25)


@pytest.mark.slow
def test_v1_schemathesis_long(door: Any) -> None:
    _schemathesis(door, examples=400)
