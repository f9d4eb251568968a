"""The CLI as an operator meets it: real subprocesses, real files, no value ever shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_secrets import DotenvSecretStore, secrets_group
from kestrel_secrets import cli as cli_module
from keyrings.alt.file import PlaintextKeyring  # type: ignore[import-untyped]

CANARY = "kc-7f3a9c41-canary-\u00e9\U0001f600"
OPERATOR_FILE = b"# operator: keep this comment\nALPACA_KEY_ID=PK-OLD\n"


def _run(
    *args: str, stdin: str | bytes = b"", env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "kestrel_secrets", *args],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def _home() -> Path:
    return Path(os.environ["KESTREL_HOME"])


def _files_under(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_canary_set_through_the_cli_shows_up_only_in_the_store() -> None:
    runs = [
        _run("-v", "set", "CANARY_TOKEN", "--stdin", stdin=CANARY + "\n"),
        _run("-v", "set", "OTHER", "--stdin", stdin="plain"),
        _run("-v", "list"),
        _run("-v", "list", "--json"),
        _run("-v", "path"),
        _run("-v", "path", "--json"),
        _run("-v", "set", "CANARY_TOKEN", "--stdin", "--json", stdin=CANARY),
        _run("-v", "set", "ALPACA_LIVE_KEY", "--stdin", stdin=CANARY),
        _run("-v", "set", "bad key", "--stdin", stdin=CANARY),
        _run("-v", "set", f"CANARY_TOKEN={CANARY}"),
        _run("-v", "set", "CANARY_TOKEN", CANARY),
        _run("-v", "unset", "OTHER"),
        _run("-v", "unset", "OTHER", "--json"),
        _run("-v", "list"),
    ]
    codes = [r.returncode for r in runs]
    assert codes == [0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 2, 0, 0, 0]
    for run in runs:
        assert CANARY.encode() not in run.stdout
        assert CANARY.encode() not in run.stderr
        assert b"Traceback" not in run.stderr
    assert b"DEBUG kestrel_secrets: set CANARY_TOKEN" in runs[0].stderr  # logging was on
    assert runs[2].stdout == b"CANARY_TOKEN\nOTHER\n"
    assert runs[-1].stdout == b"CANARY_TOKEN\n"
    store = _home() / ".env"
    assert DotenvSecretStore(store).reveal("CANARY_TOKEN") == CANARY
    found = [p for p, data in _files_under(_home()).items() if CANARY.encode() in data]
    assert found == [store]


def test_set_alpaca_live_key_is_refused_and_the_file_is_byte_identical() -> None:
    home = _home()
    home.mkdir(mode=0o700)
    (home / ".env").write_bytes(OPERATOR_FILE)
    (home / ".env").chmod(0o600)
    before = _files_under(home)
    run = _run("set", "ALPACA_LIVE_KEY", "--stdin", stdin="PK-LIVE-123")
    assert run.returncode != 0
    assert run.stderr.decode().startswith("kestrel: SECRET_KEY_LIVE: ")
    assert run.stdout == b""
    assert _files_under(home) == before


def test_unset_removes_a_live_key_the_operator_wrote_into_dotenv_by_hand() -> None:
    home = _home()
    home.mkdir(mode=0o700)
    (home / ".env").write_bytes(OPERATOR_FILE + b"ALPACA_LIVE_KEY=PK-LIVE-by-hand\n")
    (home / ".env").chmod(0o600)
    refused = _run("set", "ALPACA_LIVE_KEY", "--stdin", stdin="PK-LIVE-123")
    assert refused.returncode != 0
    assert b"SECRET_KEY_LIVE" in refused.stderr
    run = _run("unset", "ALPACA_LIVE_KEY", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["removed"] is True
    assert (home / ".env").read_bytes() == OPERATOR_FILE
    assert b"PK-LIVE" not in run.stdout + run.stderr + refused.stdout + refused.stderr


def test_an_invalid_key_is_refused_with_its_code_and_nothing_is_created() -> None:
    run = _run("set", "alpaca_key", "--stdin", stdin="v")
    assert run.returncode == 1
    assert run.stderr.decode().startswith("kestrel: SECRET_KEY_INVALID: ")
    assert not _home().exists()


@pytest.mark.parametrize("argv", [["set", "TOKEN", "s3cret-argv"], ["set", "TOKEN=s3cret-argv"]])
def test_a_value_on_argv_is_refused_with_a_clear_error(argv: list[str]) -> None:
    run = _run(*argv, stdin="ignored")
    assert run.returncode == 2
    err = run.stderr.decode()
    assert "refusing to take a secret value from the command line" in err
    assert "--stdin" in err
    assert "s3cret-argv" not in err
    assert not _home().exists()


def test_set_unset_list_path_round_trip_with_home_option(tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"
    run = _run("--home", str(home), "set", "ALPACA_KEY_ID", "--stdin", stdin="PK-1\r\n")
    assert run.returncode == 0
    assert run.stdout.decode() == f"set ALPACA_KEY_ID in {home / '.env'}\n"
    assert DotenvSecretStore(home / ".env").reveal("ALPACA_KEY_ID") == "PK-1"
    listed = _run("--home", str(home), "list", "--json")
    assert json.loads(listed.stdout) == {"keys": ["ALPACA_KEY_ID"], "path": str(home / ".env")}
    path = _run("--home", str(home), "path")
    assert path.stdout.decode() == f"{home / '.env'}\n"
    assert path.stderr.decode().startswith("store: file (KESTREL_SECRET_STORE=auto: ")
    gone = _run("--home", str(home), "unset", "ALPACA_KEY_ID")
    assert gone.stdout.decode() == f"removed ALPACA_KEY_ID from {home / '.env'}\n"
    again = _run("--home", str(home), "unset", "ALPACA_KEY_ID")
    assert again.returncode == 0
    assert again.stdout.decode() == f"ALPACA_KEY_ID was not set in {home / '.env'}\n"
    assert not _home().exists()


@pytest.mark.parametrize("stdin", [b"", b"\n", b"\r\n"])
def test_an_empty_value_on_stdin_is_refused_and_keeps_the_old_value(stdin: bytes) -> None:
    assert _run("set", "TOKEN", "--stdin", stdin="good").returncode == 0
    run = _run("set", "TOKEN", "--stdin", stdin=stdin)
    assert run.returncode == 2
    assert "empty" in run.stderr.decode()
    assert DotenvSecretStore(_home() / ".env").reveal("TOKEN") == "good"


def test_keyring_mode_without_a_backend_is_refused() -> None:
    run = _run("list", env={"KESTREL_SECRET_STORE": "keyring"})
    assert run.returncode == 3
    assert run.stderr.decode().startswith("kestrel: SECRET_STORE_UNAVAILABLE: ")
    assert "KESTREL_SECRET_STORE=file" in run.stderr.decode()


def test_the_cli_with_a_real_file_backed_keyring_keeps_values_out_of_kestrel_home() -> None:
    env = {
        "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
        "KESTREL_SECRET_STORE": "keyring",
    }
    set_run = _run("-v", "set", "CANARY_TOKEN", "--stdin", stdin=CANARY, env=env)
    assert set_run.returncode == 0, set_run.stderr
    assert set_run.stdout == b"set CANARY_TOKEN in keyring:kestrel\n"
    listed = _run("list", "--json", env=env)
    assert json.loads(listed.stdout) == {"keys": ["CANARY_TOKEN"], "path": "keyring:kestrel"}
    path = _run("path", env=env)
    assert path.stdout == b"keyring:kestrel\n"
    assert b"configured explicitly" in path.stderr
    for run in (set_run, listed, path):
        assert CANARY.encode() not in run.stdout + run.stderr
    assert PlaintextKeyring().get_password("kestrel", "CANARY_TOKEN") == CANARY
    assert not (_home() / ".env").exists()
    assert not any(CANARY.encode() in data for data in _files_under(_home()).values())
    assert _run("unset", "CANARY_TOKEN", env=env).returncode == 0
    assert PlaintextKeyring().get_password("kestrel", "CANARY_TOKEN") is None


def test_the_hidden_prompt_asks_twice_and_stores_the_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cli_module, "_stdin_is_tty", lambda: True)
    result = CliRunner().invoke(
        secrets_group, ["--home", str(tmp_path), "set", "TOKEN"], input="hidden-v\nhidden-v\n"
    )
    assert result.exit_code == 0, result.output
    assert "hidden-v" not in result.output
    assert DotenvSecretStore(tmp_path / ".env").reveal("TOKEN") == "hidden-v"


def test_without_a_terminal_set_asks_for_stdin(tmp_path: Path) -> None:
    result = CliRunner().invoke(secrets_group, ["--home", str(tmp_path), "set", "TOKEN"])
    assert result.exit_code == 2
    assert "--stdin" in result.output
    assert not (tmp_path / ".env").exists()


def _mounted(home: Path, *args: str, stdin: str | None = None) -> Result:
    """``kestrel --home HOME secrets ARGS``: the real kestrel CLI, the plugin mounted from
    its entry point."""
    from kestrel_sdk.cli import cli as kestrel

    return CliRunner().invoke(kestrel, ["--home", str(home), "secrets", *args], input=stdin)


def test_mounted_under_kestrel_it_uses_the_global_home(tmp_path: Path) -> None:
    result = _mounted(tmp_path, "set", "A", "--stdin", stdin="1")
    assert result.exit_code == 0, result.output
    assert DotenvSecretStore(tmp_path / ".env").reveal("A") == "1"


def test_mounted_under_kestrel_a_refusal_is_still_one_line_and_exit_1(tmp_path: Path) -> None:
    result = _mounted(tmp_path, "unset", "alpaca_key")
    assert result.exit_code == 1
    assert result.stderr.startswith("kestrel: SECRET_KEY_INVALID: ")
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_it_is_registered_as_a_kestrel_cli_plugin_and_a_script() -> None:
    (plugin,) = [ep for ep in entry_points(group="kestrel.cli") if ep.name == "secrets"]
    assert plugin.load() is secrets_group
    script = Path(sys.executable).parent / "kestrel-secrets"
    run = subprocess.run([script, "path"], capture_output=True, check=False, timeout=60)
    assert run.returncode == 0
    assert run.stdout.decode() == f"{_home() / '.env'}\n"
