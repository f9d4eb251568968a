"""The composition root: ``kestrel-mcp``, ``kestrel mcp``, and choosing the transport."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import click
import kestrel_sdk
import pytest
from click.testing import CliRunner
from kestrel_mcp import cli
from kestrel_protocol.settings import KestrelSettings

INIT = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
)


def test_kestrel_remote_env_selects_the_remote_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_remote(
        base_url: str | None = None, token: str | None = None, client: Any = None
    ) -> Any:
        seen.update(base_url=base_url, token=token)
        raise SystemExit(0)

    monkeypatch.setattr(kestrel_sdk, "remote_transport", fake_remote, raising=False)
    monkeypatch.setenv("KESTREL_REMOTE", "http://127.0.0.1:8787")
    monkeypatch.setenv("KESTREL_API_TOKEN", "kt_from_env")
    result = CliRunner().invoke(cli.main, [])
    assert result.exit_code == 0
    assert seen == {"base_url": "http://127.0.0.1:8787", "token": "kt_from_env"}


def test_remote_token_falls_back_to_the_secret_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kestrel_secrets import open_secret_store

    monkeypatch.setenv("KESTREL_SECRET_STORE", "file")
    open_secret_store(tmp_path).set("KESTREL_API_TOKEN", "kt_from_store")
    seen: dict[str, Any] = {}

    def fake_remote(
        base_url: str | None = None, token: str | None = None, client: Any = None
    ) -> Any:
        seen.update(base_url=base_url, token=token)
        return object()

    monkeypatch.setattr(kestrel_sdk, "remote_transport", fake_remote, raising=False)
    cli.build_transport(KestrelSettings.resolve(home=tmp_path, remote="http://127.0.0.1:8787"))
    assert seen == {"base_url": "http://127.0.0.1:8787", "token": "kt_from_store"}


@pytest.mark.parametrize(
    "argv",
    [
        [str(Path(sys.executable).with_name("kestrel-mcp")), "--home", "{home}"],
        [str(Path(sys.executable).with_name("kestrel")), "--home", "{home}", "mcp"],
        [sys.executable, "-m", "kestrel_mcp", "--home", "{home}"],
    ],
)
def test_every_entry_point_serves_stdio(argv: list[str], tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    done = subprocess.run(
        [arg.replace("{home}", home) for arg in argv],
        input=INIT + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "kestrel"


def test_kestrel_mcp_takes_home_from_the_parent_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kestrel_sdk.cli import cli as kestrel_cli

    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        cli,
        "_run",
        lambda settings, log, spin_us, principal, scenarios: seen.update(
            remote=settings.remote, home=settings.home
        ),
    )
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "from-env"))
    result = CliRunner().invoke(kestrel_cli, ["--home", str(tmp_path / "from-flag"), "mcp"])
    assert result.exit_code == 0, result.output
    assert seen["home"] == tmp_path / "from-flag"
    result = CliRunner().invoke(
        kestrel_cli, ["--home", str(tmp_path / "p"), "mcp", "--home", str(tmp_path / "c")]
    )
    assert seen["home"] == tmp_path / "c"


def test_the_spin_window_is_an_option_of_both_entry_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kestrel_sdk.cli import cli as kestrel_cli

    seen: list[int] = []
    monkeypatch.setattr(
        cli, "_run", lambda settings, log, spin_us, principal, scenarios: seen.append(spin_us)
    )
    assert CliRunner().invoke(cli.main, []).exit_code == 0
    assert CliRunner().invoke(cli.main, ["--spin-us", "0"]).exit_code == 0
    assert CliRunner().invoke(kestrel_cli, ["mcp", "--spin-us", "250"]).exit_code == 0
    assert seen == [1000, 0, 250]
    refused = CliRunner().invoke(cli.main, ["--spin-us", "-1"])
    assert refused.exit_code == 2
    assert "--spin-us" in refused.output


def test_a_harness_names_the_local_principal_the_agent_cannot(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--principal`` (or ``$KESTREL_PRINCIPAL``) on both entry points: whom the local
    runtime's sessions belong to, so that each run of an agent has its own horizon. A door
    names the principal by its token: the two together are refused."""
    from kestrel_sdk.cli import cli as kestrel_cli

    seen: list[str | None] = []
    monkeypatch.setattr(
        cli, "_run", lambda settings, log, spin_us, principal, scenarios: seen.append(principal)
    )
    monkeypatch.delenv("KESTREL_PRINCIPAL", raising=False)
    assert CliRunner().invoke(cli.main, []).exit_code == 0
    assert CliRunner().invoke(cli.main, ["--principal", "local/trial-a-e1"]).exit_code == 0
    assert CliRunner().invoke(kestrel_cli, ["mcp", "--principal", "local/trial-b"]).exit_code == 0
    monkeypatch.setenv("KESTREL_PRINCIPAL", "local/trial-c")
    assert CliRunner().invoke(cli.main, []).exit_code == 0
    assert seen == [None, "local/trial-a-e1", "local/trial-b", "local/trial-c"]
    remote = KestrelSettings.resolve(home=tmp_path, remote="http://127.0.0.1:8787")
    with pytest.raises(click.UsageError, match="a door names the principal by its token"):
        cli.build_transport(remote, "local/trial-a")
    local = cli.build_transport(KestrelSettings.resolve(home=tmp_path), "local/trial-a")
    try:
        assert getattr(local, "principal", None) == "local/trial-a"
    finally:
        anyio.run(local.aclose)


def test_a_harness_names_the_scenarios_a_run_may_see(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--scenario ID`` (repeatable) on both entry points: the only scenarios the process
    serves (a pair's disguised run is not shown its labelled twin)."""
    from kestrel_sdk.cli import cli as kestrel_cli

    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        cli, "_run", lambda settings, log, spin_us, principal, scenarios: seen.append(scenarios)
    )
    assert CliRunner().invoke(cli.main, []).exit_code == 0
    assert CliRunner().invoke(cli.main, ["--scenario", "tape-q7"]).exit_code == 0
    args = ["mcp", "--scenario", "a", "--scenario", "b"]
    assert CliRunner().invoke(kestrel_cli, args).exit_code == 0
    assert seen == [(), ("tape-q7",), ("a", "b")]


def test_a_scenario_the_catalog_lacks_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--scenario ID`` of no scenario is refused before serving (exit 3,
    ``UNKNOWN_SCENARIO`` naming it and where it was looked for, as ``kestrel run
    --scenario`` refuses it), on both entry points, not served as an empty catalog."""
    from kestrel_sdk.cli import cli as kestrel_cli

    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    mine = tmp_path / "mine"
    mine.mkdir()
    home = ["--home", str(tmp_path / "home")]
    runs: list[tuple[Any, list[str], str]] = [
        (cli.main, [*home, "--scenario", "acme-trend", "--scenario", "nope"], "shipped scenarios"),
        (kestrel_cli, ["mcp", *home, "--scenario", "nope"], "--catalog-path DIR"),
        (cli.main, [*home, "--catalog-path", str(mine), "--scenario", "nope"], str(mine)),
    ]
    for command, args, where in runs:
        done = CliRunner().invoke(command, args)
        assert done.exit_code == 3, done.output
        assert "kestrel: UNKNOWN_SCENARIO: no scenario 'nope'" in done.output
        assert "looked in" in done.output
        assert where in done.output


def test_a_secret_store_that_refuses_says_why_the_remote_token_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The token is in a ``.env`` that is a symlink (refused, by design): the start is
    refused telling the operator the store's reason (and which store), not only an
    exception's class name; the value is never shown, and no transport is made."""
    target = tmp_path / "elsewhere.env"
    target.write_text("KESTREL_API_TOKEN=kt_canary_value\n", encoding="utf-8")
    target.chmod(0o600)
    (tmp_path / ".env").symlink_to(target)
    monkeypatch.setenv("KESTREL_SECRET_STORE", "file")
    monkeypatch.delenv("KESTREL_API_TOKEN", raising=False)
    made: list[str | None] = []

    def fake_remote(
        base_url: str | None = None, token: str | None = None, client: Any = None
    ) -> Any:
        made.append(token)
        return object()

    monkeypatch.setattr(kestrel_sdk, "remote_transport", fake_remote, raising=False)
    with pytest.raises(click.UsageError) as refused:
        cli.build_transport(KestrelSettings.resolve(home=tmp_path, remote="http://127.0.0.1:8787"))
    said = refused.value.message
    assert made == []
    assert "SECRET_STORE_UNAVAILABLE" in said
    assert f"{tmp_path / '.env'} is a symlink" in said
    assert "kt_canary_value" not in said


def test_a_remote_without_a_token_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--remote URL`` with no ``KESTREL_API_TOKEN`` and none in the secret store exits 2
    at start on both entry points, naming where it looked and how to get one, rather than
    serving an MCP host a server whose every tool call the door refuses."""
    from kestrel_sdk.cli import cli as kestrel_cli

    monkeypatch.setenv("KESTREL_SECRET_STORE", "file")
    monkeypatch.delenv("KESTREL_API_TOKEN", raising=False)
    monkeypatch.setattr(
        kestrel_sdk, "remote_transport", lambda **_: pytest.fail("a transport was made")
    )
    home = ["--home", str(tmp_path)]
    for command, args in (
        (cli.main, [*home, "--remote", "http://127.0.0.1:9"]),
        (kestrel_cli, [*home, "--remote", "http://127.0.0.1:9", "mcp"]),
    ):
        done = CliRunner().invoke(command, args)
        assert done.exit_code == 2, done.output
        assert "--remote http://127.0.0.1:9 needs the door's token" in done.output
        assert "the secret store holds no KESTREL_API_TOKEN" in done.output
        assert "kestrel secrets set KESTREL_API_TOKEN" in done.output
