"""``--remote URL`` finds the door's token by one rule on both command lines:
``$KESTREL_API_TOKEN``, else the operator's secret store of the same home (the OS keyring
or ``~/.kestrel/.env``, where ``kestrel secrets set KESTREL_API_TOKEN`` keeps it). With
neither, ``kestrel`` and ``kestrel-mcp`` refuse alike, before connecting, naming both
places and the command that stores one; the token is never printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doors import serve_door

KEYRING = {
    "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
    "KESTREL_SECRET_STORE": "keyring",
}
"""A real (file-backed) keyring, as ``tests/kestrel_secrets`` exercises it."""


def _script(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _operator(home: Path, **extra: str) -> dict[str, str]:
    """An operator's environment: ``HOME`` is ``home`` (so ``~/.kestrel`` is under it), no
    Kestrel variable set, in particular no ``KESTREL_API_TOKEN``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    return env | {"HOME": str(home), "COLUMNS": "200"} | extra


def _run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, input=stdin, capture_output=True, text=True, timeout=120, env=env, check=False
    )


@pytest.mark.parametrize("store", ["file", "keyring"])
def test_kestrel_remote_uses_the_token_the_operator_stored(tmp_path: Path, store: str) -> None:
    """The token only in the secret store (``~/.kestrel/.env``, or the keyring): ``kestrel
    --remote DOOR`` lists the door's catalog and opens a session, where it used to be
    refused by the door for want of ``$KESTREL_API_TOKEN``."""
    me = tmp_path / "me"
    env = _operator(me, **(KEYRING if store == "keyring" else {}))
    with serve_door(tmp_path / "door") as door:
        kept = _run(
            [_script("kestrel"), "secrets", "set", "KESTREL_API_TOKEN", "--stdin"],
            env,
            stdin=door.token,
        )
        assert kept.returncode == 0, kept.stderr
        dotenv = me / ".kestrel" / ".env"
        assert dotenv.exists() is (store == "file")
        catalog = _run([_script("kestrel"), "--remote", door.url, "catalog", "--json"], env)
        sessions = _run([_script("kestrel"), "--remote", door.url, "sessions", "--json"], env)
    assert catalog.returncode == 0, catalog.stderr
    assert "acme-trend" in {s["id"] for s in json.loads(catalog.stdout)["scenarios"]}
    assert sessions.returncode == 0, sessions.stderr
    for done in (kept, catalog, sessions):
        assert door.token not in done.stdout + done.stderr


def test_without_a_token_both_command_lines_refuse_alike(tmp_path: Path) -> None:
    """No ``$KESTREL_API_TOKEN`` and none stored: ``kestrel --remote`` and ``kestrel-mcp
    --remote`` say the same line, exit 2, naming both places and how to store one, before
    trying the door (``kestrel`` used to go on and fail on the connection)."""
    env = _operator(tmp_path / "me")
    url = "http://127.0.0.1:9"
    cli = _run([_script("kestrel"), "--remote", url, "catalog"], env)
    mcp = _run([_script("kestrel-mcp"), "--remote", url], env)
    said = []
    for done in (cli, mcp):
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        [line] = done.stderr.splitlines()
        assert line.startswith(f"kestrel: USAGE: --remote {url} needs the door's token: "), line
        assert "KESTREL_API_TOKEN is not set" in line
        assert "the secret store holds no KESTREL_API_TOKEN" in line
        assert "kestrel secrets set KESTREL_API_TOKEN" in line
        said.append(line.split(" (see '")[0])  # each names its own --help
    assert said[0] == said[1]


def test_without_kestrel_secrets_installed_the_refusal_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK does not depend on kestrel-secrets: where it is absent, ``kestrel --remote``
    with no ``$KESTREL_API_TOKEN`` is refused saying the store could not be read, and why."""
    from click.testing import CliRunner
    from kestrel_sdk.cli import cli

    monkeypatch.setitem(sys.modules, "kestrel_secrets", None)  # import raises ImportError
    done = CliRunner().invoke(
        cli, ["--home", str(tmp_path), "--remote", "http://127.0.0.1:9", "catalog"]
    )
    assert done.exit_code == 2, done.output
    assert "KESTREL_API_TOKEN is not set and kestrel-secrets" in done.stderr
    assert "is not installed" in done.stderr
