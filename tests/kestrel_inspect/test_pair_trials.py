"""A pair's sample trades as a trial that sees only its own scenario, over ``kestrel-mcp``
and through a door: the disguised sample's agent cannot list the catalog, find the
labelled twin and open it at its own bar.

The harness's own path (``KestrelConnection.trial``, as the agent makes it at its start,
then the MCP client the agent's tools use) on a catalog holding backtesting.py's GOOG
(``goog``) and its disguised twin (``tape-q7``). On the previous harness both samples
were served the whole catalog (``goog`` beside ``tape-q7``) and opened either.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from inspect_ai.model import ModelName
from inspect_ai.solver import TaskState
from kestrel_door.cli import door_group
from kestrel_inspect import KestrelConnection

from tests.doors import Door, serve_door
from tests.kestrel_door.test_trial_scenarios import ABSENT, DISGUISED, LABELLED, write_pair

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pair") / "catalog"
    write_pair(path)
    return path


def _state(scenario: str) -> TaskState:
    """The state of the pair's sample ``scenario`` (as ``kestrel_trading`` makes it)."""
    return TaskState(
        ModelName("kestrel/momentum"),
        scenario,
        1,
        "",
        [],
        metadata={"scenario": scenario, "pair": [LABELLED, DISGUISED]},
        sample_uuid=uuid.uuid4().hex,
    )


async def _sees_and_trades_only(connection: KestrelConnection, scenario: str) -> None:
    """The sample ``scenario``'s trial: its catalog is ``scenario`` alone, the other twin
    is refused as an id the catalog lacks, and ``scenario`` opens."""
    other = DISGUISED if scenario == LABELLED else LABELLED
    trial = await connection.trial(_state(scenario), fresh=True)
    async with connection.client(trial) as client:
        listed = await client.call_tool("kestrel_catalog", {})
        assert [s["id"] for s in listed.structured_content["scenarios"]] == [scenario]
        twin = await client.call_tool("kestrel_session_open", {"scenario": other})
        absent = await client.call_tool("kestrel_session_open", {"scenario": ABSENT})
        assert twin.is_error
        assert absent.is_error
        assert '"UNKNOWN_SCENARIO"' in json.dumps(twin.structured_content)
        assert json.dumps(twin.structured_content).replace(other, ABSENT) == json.dumps(
            absent.structured_content
        )
        opened = await client.call_tool("kestrel_session_open", {"scenario": scenario})
        assert opened.is_error is False, opened.content
    assert trial.scenarios == (scenario,)


async def test_over_kestrel_mcp_each_sample_sees_only_its_scenario(
    catalog: Path, tmp_path: Path
) -> None:
    connection = KestrelConnection(home=str(tmp_path / "kestrel"), catalog_paths=(str(catalog),))
    for scenario in (LABELLED, DISGUISED):
        await _sees_and_trades_only(connection, scenario)
    trial = await connection.trial(_state(DISGUISED))
    args = connection.stdio_parameters(trial).args
    assert args[args.index("--scenario") + 1] == DISGUISED


@pytest.fixture(scope="module")
def door(catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KESTREL_CATALOG_PATH", str(catalog))
        with serve_door(tmp_path_factory.mktemp("door"), principal="evaluator") as served:
            yield served


async def test_through_a_door_each_sample_is_minted_for_its_scenario(
    door: Door, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(door.token)
    connection = KestrelConnection(door=door.url, token_file=str(token_file))
    for scenario in (LABELLED, DISGUISED):
        await _sees_and_trades_only(connection, scenario)
    listed = CliRunner().invoke(door_group, ["--home", str(door.home), "token", "list", "--json"])
    rows: list[dict[str, Any]] = json.loads(listed.output)
    trials = {r["principal"].split("/trial-")[1].split("-e1-")[0]: r for r in rows[1:]}
    assert {k: v["scenarios"] for k, v in trials.items()} == {
        LABELLED: [LABELLED],
        DISGUISED: [DISGUISED],
    }
