"""A trial sees and trades only its sample's scenarios (``POST /v1/trials`` with
``scenarios``): a pair's disguised sample cannot find its labelled twin.

A real ``kestrel-door serve`` on loopback whose catalog holds backtesting.py's GOOG
(``goog``) and its disguised twin (``tape-q7``), as ``-T pairs=goog,tape-q7`` trades them.
A trial minted for ``tape-q7`` lists only it (tools, resources, completion, ``/v1``),
is refused ``goog`` on every face exactly as an id the catalog lacks (the refusal does
not confirm the twin exists), and trades ``tape-q7``; a trial minted without
``scenarios`` sees the whole catalog as before. On the previous door every one of these
agents saw ``goog`` beside ``tape-q7`` and opened it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference

from tests.doors import Door, serve_door

LABELLED, DISGUISED = "goog", "tape-q7"
ABSENT = "tape-zz"  # an id no catalog has, as long as "goog"'s twin id is
SECRET = bytes(range(32))
_RUNS = itertools.count(1)


def write_pair(catalog: Path) -> None:
    """``goog`` (backtesting.py's GOOG, imported) and ``tape-q7``, its disguised twin."""
    import backtesting.test  # type: ignore[import-untyped]

    goog = Path(backtesting.test.__file__).with_name("GOOG.csv")
    scenario_from_file(goog, LABELLED).write(catalog / LABELLED)
    source = load_catalog([catalog]).get(LABELLED)
    assert source is not None
    disguise_scenario(source, DISGUISED, SECRET).write(catalog / DISGUISED)


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    root = tmp_path_factory.mktemp("pair-door")
    write_pair(root / "catalog")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KESTREL_CATALOG_PATH", str(root / "catalog"))
        with serve_door(root / "door", principal="evaluator") as served:
            yield served


def _mint(door: Door, name: str, **extra: Any) -> httpx.Response:
    return httpx.post(
        f"{door.url}/v1/trials",
        json={"trial": name, **extra},
        headers={"Authorization": f"Bearer {door.token}"},
        timeout=60,
    )


def _token(door: Door, name: str, **extra: Any) -> str:
    made = _mint(door, name, **extra)
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def _as_absent(data: Any, named: str) -> str:
    """``data`` as JSON text, the id ``named`` written as :data:`ABSENT`: what it reads
    when the id asked for was one no catalog has."""
    return json.dumps(data, sort_keys=True).replace(named, ABSENT)


@pytest.fixture
async def trial(door: Door) -> AsyncIterator[tuple[Any, str]]:
    """An official MCP client of ``/mcp`` as a trial minted for ``tape-q7`` only, and the
    trial's token (for ``/v1``)."""
    token = _token(door, f"sample-tape-q7-{next(_RUNS)}", scenarios=[DISGUISED])
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(door.url + "/mcp", http_client=http)
    async with http, Client(transport, mode="auto", read_timeout_seconds=300) as mcp:
        yield mcp, token


async def _refused(call: Any) -> Any:
    """What a call answered: its result, or the MCP error it raised."""
    try:
        result = await call
    except MCPError as exc:
        return {"error": exc.error.model_dump(mode="json", exclude_none=True)}
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.anyio
async def test_a_trial_for_the_twin_lists_only_it(trial: tuple[Any, str], door: Door) -> None:
    client, token = trial
    catalog = await client.call_tool("kestrel_catalog", {})
    assert [s["id"] for s in catalog.structured_content["scenarios"]] == [DISGUISED]
    resources = [r.uri for r in (await client.list_resources()).resources]
    assert not [u for u in resources if LABELLED in u]
    assert f"kestrel://catalog/scenarios/{DISGUISED}" in resources
    ref = PromptReference(type="ref/prompt", name="kestrel_trade_scenario")
    offered = await client.complete(ref, {"name": "scenario", "value": ""})
    assert offered.completion.values == [DISGUISED]
    listed = httpx.get(f"{door.url}/v1/catalog", headers=_auth(token), timeout=60)
    assert [s["id"] for s in listed.json()["scenarios"]] == [DISGUISED]
    # the catalog shown is a rooted kestrel.catalog of its own (not the whole catalog's root)
    assert listed.json()["root"] == catalog.structured_content["root"]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.anyio
async def test_the_twin_is_refused_on_every_face_as_an_id_the_catalog_lacks(
    trial: tuple[Any, str], door: Door
) -> None:
    client, token = trial
    calls: dict[str, Callable[[str], Awaitable[Any]]] = {
        "kestrel_validate": lambda sid: client.call_tool(
            "kestrel_validate", {"source": "advance 1", "scenario": sid}
        ),
        "kestrel_session_open": lambda sid: client.call_tool(
            "kestrel_session_open", {"scenario": sid, "label": "peek"}
        ),
        "resource": lambda sid: client.read_resource(f"kestrel://catalog/scenarios/{sid}"),
        "tape resource": lambda sid: client.read_resource(
            f"kestrel://catalog/scenarios/{sid}/tape"
        ),
        "prompt": lambda sid: client.get_prompt("kestrel_trade_scenario", {"scenario": sid}),
    }
    for face, call in calls.items():
        twin = await _refused(call(LABELLED))
        absent = await _refused(call(ABSENT))
        assert "UNKNOWN_SCENARIO" in json.dumps(twin) or "not found" in json.dumps(twin), face
        assert _as_absent(twin, LABELLED) == json.dumps(absent, sort_keys=True), face
    for path in ("", "/tape"):
        twin_http = httpx.get(
            f"{door.url}/v1/catalog/scenarios/{LABELLED}{path}",
            headers=_auth(token),
            timeout=60,
        )
        absent_http = httpx.get(
            f"{door.url}/v1/catalog/scenarios/{ABSENT}{path}",
            headers=_auth(token),
            timeout=60,
        )
        assert twin_http.status_code == absent_http.status_code == 404
        assert _as_absent(twin_http.json(), LABELLED) == json.dumps(
            absent_http.json(), sort_keys=True
        )
    opened = httpx.post(
        f"{door.url}/v1/sessions",
        json={"scenario": LABELLED},
        headers=_auth(token),
        timeout=60,
    )
    assert opened.status_code == 404
    assert opened.json()["refusal"]["code"] == "UNKNOWN_SCENARIO"


@pytest.mark.anyio
async def test_the_trial_trades_its_own_scenario(trial: tuple[Any, str]) -> None:
    client, _ = trial
    opened = await client.call_tool("kestrel_session_open", {"scenario": DISGUISED})
    assert opened.is_error is False, opened.content
    sid = opened.structured_content["sessionId"]
    stepped = await client.call_tool(
        "kestrel_session_submit", {"sessionId": sid, "source": "advance 5"}
    )
    assert stepped.is_error is False, stepped.content
    assert stepped.structured_content["delivery"]["frame"]["clock"]["bar"] == 5
    history = await client.call_tool("kestrel_session_history", {"sessionId": sid, "bars": 3})
    assert history.is_error is False, history.content
    graded = await client.call_tool("kestrel_grade", {"sessionId": sid})
    assert graded.structured_content["scenario"]["id"] == DISGUISED


def test_a_trial_minted_without_scenarios_sees_the_whole_catalog(door: Door) -> None:
    token = _token(door, "unconfined")
    listed = httpx.get(f"{door.url}/v1/catalog", headers=_auth(token), timeout=60)
    ids = {s["id"] for s in listed.json()["scenarios"]}
    assert {LABELLED, DISGUISED} <= ids
    opened = httpx.post(
        f"{door.url}/v1/sessions", json={"scenario": LABELLED}, headers=_auth(token), timeout=60
    )
    assert opened.status_code == 200, opened.text


def test_a_mint_naming_an_unknown_scenario_is_refused_naming_it(door: Door) -> None:
    before = _tokens(door)
    unknown = _mint(door, "typo", scenarios=[DISGUISED, "tape-q8"])
    assert unknown.status_code == 404, unknown.text
    refusal = unknown.json()["refusal"]
    assert refusal["code"] == "UNKNOWN_SCENARIO"
    assert "'tape-q8'" in refusal["message"]
    assert refusal["detail"] == {"where": "scenarios", "scenario": "tape-q8"}
    for bad in ([], "tape-q7", [DISGUISED, 7], [""]):
        shaped = _mint(door, "bad", scenarios=bad)
        assert shaped.status_code == 400, shaped.text
        assert shaped.json()["refusal"]["code"] == "INVALID_ARGUMENT"
        assert shaped.json()["refusal"]["detail"] == {"where": "scenarios"}
    assert _tokens(door) == before  # nothing minted
    made = _mint(door, "kept", scenarios=[DISGUISED])
    assert made.json()["scenarios"] == [DISGUISED]
    listed = {r["principal"]: r for r in _tokens(door)}
    assert listed["evaluator/trial-kept"]["scenarios"] == [DISGUISED]
    assert "scenarios" not in listed["evaluator"]  # the evaluator's own: the whole catalog


def _tokens(door: Door) -> list[dict[str, Any]]:
    done = CliRunner().invoke(door_group, ["--home", str(door.home), "token", "list", "--json"])
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(done.output)
    return rows
