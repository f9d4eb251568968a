"""Nothing served names the real world (issue 46): imported titles name no dates, a
scenario the runtime seals is served under an opaque title (its title told the regime:
"crash"), and ``kestrel scenario new --sealed`` makes a sealed scenario whose title and
description name neither its dates nor its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import scenario_from_file


def _goog() -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name("GOOG.csv")


def test_an_imported_scenario_s_default_title_names_no_dates(tmp_path: Path) -> None:
    imported = scenario_from_file(_goog(), "goog")
    assert imported.scenario.title == "GOOG daily"
    assert "2004" not in imported.scenario.title
    assert "2013" not in imported.scenario.title


def test_a_scenario_the_runtime_seals_is_served_under_an_opaque_title(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path / "home", sealed=["acme-crash"])
    shipped = runtime.index.get("acme-crash")
    assert shipped is not None
    assert "crash" in shipped.scenario.title.lower()
    served = runtime.scenario("alice", "acme-crash")
    assert served.title == "Sealed scenario"
    assert served.root == shipped.scenario.root  # the commitment is unchanged
    entry = next(e for e in runtime.catalog().to_json()["scenarios"] if e["id"] == "acme-crash")
    assert entry["title"] == "Sealed scenario"
    assert entry["root"] == shipped.scenario.root
    trend = next(e for e in runtime.catalog().to_json()["scenarios"] if e["id"] == "acme-trend")
    assert trend["title"] == "ACME daily, trending up"  # unsealed: as it always was

    async def faces() -> str:
        sdk = create_sdk(local_transport(runtime=runtime))
        catalog = (await sdk.call("kestrel_catalog")).to_json()
        scenario = (await sdk.call("kestrel_scenario", scenario="acme-crash")).to_json()
        return json.dumps([catalog, scenario])

    assert shipped.scenario.title not in anyio.run(faces)
    runtime.shutdown()


def test_scenario_new_sealed_makes_a_sealed_scenario_with_a_neutral_title(tmp_path: Path) -> None:
    env = {**os.environ, "KESTREL_HOME": str(tmp_path / "home")}
    env.pop("KESTREL_CATALOG_PATH", None)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()"]
    made = subprocess.run(
        [
            *command,
            "scenario",
            "new",
            "q1",
            "--from",
            str(_goog()),
            "--sealed",
            "--out",
            str(tmp_path / "cat" / "q1"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    loaded = load_catalog([tmp_path / "cat"]).get("q1")
    assert loaded is not None
    assert loaded.sealed
    scenario = loaded.scenario
    assert scenario.title == "Sealed daily scenario"
    for text in (scenario.title, scenario.description):
        assert "2004" not in text
        assert "2013" not in text
