"""One setting chooses the store on every face: ``--store URL`` or ``$KESTREL_STORE``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kestrel_door import IssuedTokens, open_door_store
from kestrel_door.cli import door_group
from kestrel_mcp import cli as mcp_cli
from kestrel_protocol.store import StoreLocation, store_location
from kestrel_sdk.cli import cli as kestrel_cli

TREND = Path(__file__).resolve().parents[2] / "examples" / "trend.kes"


def test_store_urls_and_their_default() -> None:
    env = {"KESTREL_HOME": "/srv/k"}
    assert store_location(None, env=env) == StoreLocation("sqlite", path=Path("/srv/k/kestrel.db"))
    assert store_location(None, "/h", env=env).path == Path("/h/kestrel.db")
    chosen = store_location(None, env={**env, "KESTREL_STORE": "sqlite:////data/k.db"})
    assert chosen.path == Path("/data/k.db")
    assert chosen.door_path == Path("/data/door.db")
    assert store_location("sqlite:///rel/k.db", env=env).path == Path.cwd() / "rel/k.db"
    pg = store_location("postgresql://kestrel:s3cret@db:5432/kestrel", env=env)
    assert (pg.kind, pg.dsn) == ("postgresql", "postgresql://kestrel:s3cret@db:5432/kestrel")
    assert str(pg) == "postgresql://kestrel:***@db:5432/kestrel"  # printable: no password
    assert store_location("postgres://db/k", env=env).kind == "postgresql"
    memory = store_location(None, env={**env, "KESTREL_STORE": "memory:"})
    assert (memory.kind, str(memory)) == ("memory", "memory:")
    for bad, why in [
        ("mysql://db/k", "is not sqlite:///PATH, postgresql://… or memory:"),
        ("memory:x", "is not sqlite:///PATH, postgresql://… or memory:"),
        ("sqlite:///data/", "names a directory"),
        ("sqlite:///data/door.db", "door.db is the door's own file"),
    ]:
        with pytest.raises(ValueError, match=why):
            store_location(bad, env=env)
    with pytest.raises(ValueError, match="'redis://x' is not sqlite"):
        store_location(None, env={"KESTREL_STORE": "redis://x"})


def test_kestrel_runs_on_the_store_it_is_given(tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "runs.db"
    home = tmp_path / "home"
    run = CliRunner().invoke(
        kestrel_cli,
        [
            "--home",
            str(home),
            "--store",
            f"sqlite:///{db}",
            "run",
            str(TREND),
            "--scenario",
            "acme-trend",
        ],
    )
    assert run.exit_code == 0, run.output
    assert db.exists()
    assert not (home / "kestrel.db").exists()
    bad = CliRunner().invoke(kestrel_cli, ["--store", "mysql://x/y", "catalog"])
    assert bad.exit_code == 3
    assert bad.stderr.strip().splitlines() == [
        "kestrel: BACKEND_UNAVAILABLE: store URL 'mysql://x/y' is not sqlite:///PATH, "
        "postgresql://… or memory:"
    ]


def test_kestrel_mcp_takes_the_store_from_flag_parent_or_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        mcp_cli,
        "_run",
        lambda settings, log, spin_us, principal, scenarios: seen.update(store=settings.store),
    )
    CliRunner().invoke(mcp_cli.main, ["--store", "sqlite:///a.db"])
    assert seen["store"] == "sqlite:///a.db"
    CliRunner().invoke(kestrel_cli, ["--store", "sqlite:///b.db", "mcp"])
    assert seen["store"] == "sqlite:///b.db"
    monkeypatch.setenv("KESTREL_STORE", "sqlite:///c.db")
    CliRunner().invoke(mcp_cli.main, [])
    assert seen["store"] == "sqlite:///c.db"


def _issue(args: list[str], env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(
        door_group,
        [*args, "token", "issue", "--principal", "alice", "--scope", "kestrel:read"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


def test_kestrel_door_token_issue_writes_to_the_chosen_store(
    tmp_path: Path, postgres_dsn: str
) -> None:
    by_flag = _issue(["--home", str(tmp_path), "--store", postgres_dsn])
    by_env = _issue(["--home", str(tmp_path)], env={"KESTREL_STORE": postgres_dsn})
    records = open_door_store(postgres_dsn)
    try:
        tokens = IssuedTokens(records)
        for token in (by_flag, by_env):
            grant = asyncio.run(tokens.verify(token))
            assert grant is not None
            assert grant.principal == "alice"
        assert len(tokens.list()) == 2
    finally:
        records.close()
    assert not (tmp_path / "door.db").exists()  # nothing went to the home's SQLite file
    listed = CliRunner().invoke(door_group, ["--store", postgres_dsn, "token", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert listed.output.count('"principal": "alice"') == 2


def test_kestrel_runs_on_a_memory_store_and_leaves_nothing_behind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    args = ["--home", str(home), "--store", "memory:", "run", str(TREND)]
    run = CliRunner().invoke(kestrel_cli, [*args, "--scenario", "acme-trend"])
    assert run.exit_code == 0, run.output
    assert not home.exists() or not any(p.name.startswith("kestrel.db") for p in home.iterdir())
    on_disk = CliRunner().invoke(
        kestrel_cli, ["--home", str(home), "run", str(TREND), "--scenario", "acme-trend"]
    )
    assert on_disk.exit_code == 0, on_disk.output
    assert run.output == on_disk.output  # the same session, the same roots, on either store
    assert (home / "kestrel.db").exists()


def test_kestrel_door_refuses_a_memory_store_saying_why(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        door_group, ["--home", str(tmp_path), "--store", "memory:", "token", "list"]
    )
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        "kestrel: BACKEND_UNAVAILABLE: store memory:: the door keeps its tokens, audit and "
        "vouchers where other processes read them (kestrel-door token ...); use "
        "sqlite:///PATH or postgresql://…"
    ]
    assert list(tmp_path.iterdir()) == []


def test_kestrel_door_names_a_bad_store_clearly(tmp_path: Path) -> None:
    result = CliRunner().invoke(door_group, ["--store", "mysql://x/y", "token", "list"])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        "kestrel: BACKEND_UNAVAILABLE: store URL 'mysql://x/y' is not sqlite:///PATH, "
        "postgresql://… or memory:"
    ]
    gone = CliRunner().invoke(
        door_group,
        ["--store", "postgresql://kestrel@127.0.0.1:9/none?connect_timeout=2", "token", "list"],
    )
    assert gone.exit_code == 3
    assert "kestrel: BACKEND_UNAVAILABLE: the store postgresql://kestrel@127.0.0.1:9/none" in (
        gone.stderr
    )
