"""Secrets across faces: the canary, concurrent writers, LIVE refusal parity.

Promise (issue 7.4, spec 9/12): no face returns a secret value, and no secret or bearer
token appears in any response, log line, audit row or database file: a random canary
is stored through the CLI and the MCP tool, a canary bearer token drives the door
(directly and through ``kestrel-mcp --remote``), and every byte each process wrote is
searched. Writers in several processes at once (CLI and MCP) lose nothing. The CLI and
the MCP tool refuse bad keys with the same code and the same message.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from tests.doors import MCP_HEADERS


def _kestrel(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_script("kestrel"), "--home", str(home), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KESTREL_HOME": str(home)},
        check=False,
    )


def _script(name: str) -> list[str]:
    """The installed console script, as an operator runs it."""
    path = Path(sys.executable).parent / name
    return [str(path)] if path.exists() else [sys.executable, "-m", name.replace("-", "_")]


def _files_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _refusal_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr  # one clear line, no traceback
    assert lines[0].startswith("kestrel: "), lines[0]  # the CLIs' one refusal convention
    return lines[0].removeprefix("kestrel: ")


def test_canary_never_leaves_the_store(rs: ModuleType, tmp_path: Path) -> None:
    home = tmp_path / "home"
    door_home = tmp_path / "door"
    home.mkdir()
    door_home.mkdir()
    canary = "canary-" + secrets.token_hex(16)
    outputs: list[str] = []

    # --- CLI
    for args, stdin in [
        (("secrets", "set", "CANARY_ONE", "--stdin"), canary),
        (("secrets", "set", "CANARY_ONE", "--stdin"), canary + "-2"),
        (("secrets", "set", "MY_LIVE_KEY", "--stdin"), canary),
        (("secrets", "set", "bad key", "--stdin"), canary),
        (("secrets", "list"), None),
        (("secrets", "path"), None),
        (("secrets", "unset", "CANARY_ONE"), None),
        (("secrets", "set", "CANARY_ONE", "--stdin"), canary),
    ]:
        done = _kestrel(home, *args, stdin=stdin)
        outputs += [done.stdout, done.stderr]
    assert "CANARY_ONE" in _kestrel(home, "secrets", "list").stdout

    # --- MCP over stdio, local runtime, debug logging
    agent = rs.McpStdio(home, tmp_path / "mcp-local.log")
    agent.initialize()
    lines = [
        agent.call("kestrel_secrets_set", key="CANARY_TWO", value=canary),
        agent.call("kestrel_secrets_set", key="MY_LIVE_TOKEN", value=canary),
        agent.call("kestrel_secrets_set", key="lower", value=canary),
        agent.call("kestrel_secrets_list"),
        agent.call("kestrel_catalog"),
        agent.request("resources/list"),
        agent.request("tools/list"),
        agent.call("kestrel_secrets_unset", key="CANARY_TWO"),
    ]
    assert agent.close() == 0
    outputs += [json.dumps(line) for line in lines]
    assert "CANARY_ONE" in json.dumps(lines[3])

    # --- the door, driven with a canary bearer token directly and via kestrel-mcp --remote
    token = rs.issue_token(door_home, "alice")
    bad_token = "kestrel_tok_" + secrets.token_urlsafe(32)
    with rs.door_process(door_home) as door:
        auth = {"Authorization": f"Bearer {token}", **MCP_HEADERS}
        calls: list[httpx.Response] = [
            httpx.get(door.base + "/v1/catalog", headers=auth),
            httpx.post(door.base + "/v1/sessions", json={"scenario": "acme-trend"}, headers=auth),
            httpx.post(
                door.base + "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {
                        "name": "kestrel_secrets_set",
                        "arguments": {"key": "CANARY_THREE", "value": canary},
                    },
                },
                headers=auth,
            ),
            httpx.post(
                door.base + "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "kestrel_validate", "arguments": {"source": "advance"}},
                },
                headers=auth,
            ),
            httpx.get(door.base + "/v1/catalog", headers={"Authorization": f"Bearer {bad_token}"}),
        ]
        secret_call = calls[2].json()
        assert "error" in secret_call or secret_call["result"].get("isError"), secret_call
        assert calls[4].status_code == 401
        outputs += [r.text + json.dumps(dict(r.headers)) for r in calls]

        # The token reaches kestrel-mcp --remote through the operator's secret store.
        assert (
            _kestrel(home, "secrets", "set", "KESTREL_API_TOKEN", "--stdin", stdin=token).returncode
            == 0
        )
        remote_log = tmp_path / "mcp-remote.log"
        env = {k: v for k, v in os.environ.items() if k != "KESTREL_API_TOKEN"}
        env["KESTREL_HOME"] = str(home)
        with remote_log.open("ab") as err:
            proc = subprocess.run(
                [*_script("kestrel-mcp"), "--remote", door.base, "--log-level", "debug"],
                input="\n".join(
                    json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p})
                    for i, p in enumerate(
                        [
                            {"name": "kestrel_catalog", "arguments": {}},
                            {
                                "name": "kestrel_session_open",
                                "arguments": {"scenario": "acme-trend", "label": "r"},
                            },
                        ]
                    )
                ).encode()
                + b"\n",
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                timeout=120,
                check=False,
            )
        remote_out = proc.stdout.decode()
        answers = [json.loads(line) for line in remote_out.splitlines()]
        assert len(answers) == 2
        opened = next(a for a in answers if a["id"] == 1)["result"]
        assert not opened.get("isError"), opened  # the token worked, through the store
        outputs.append(remote_out)

        # A wrong token through kestrel-mcp: refused, and not repeated anywhere either.
        env["KESTREL_API_TOKEN"] = bad_token
        with remote_log.open("ab") as err:
            proc = subprocess.run(
                [*_script("kestrel-mcp"), "--remote", door.base, "--log-level", "debug"],
                input=b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
                b'{"name":"kestrel_catalog","arguments":{}}}\n',
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                timeout=120,
                check=False,
            )
        refused = json.loads(proc.stdout)
        assert refused["result"]["isError"] is True, refused
        outputs.append(proc.stdout.decode())

        # The kestrel CLI against the door (its token comes from the environment).
        for bearer, ok in ((token, True), (bad_token, False)):
            cli = subprocess.run(
                [*_script("kestrel"), "--remote", door.base, "catalog", "--json"],
                capture_output=True,
                text=True,
                timeout=120,
                env={**env, "KESTREL_API_TOKEN": bearer},
                check=False,
            )
            assert (cli.returncode == 0) is ok, cli.stderr
            outputs += [cli.stdout, cli.stderr]
    outputs.append(door.log())
    audit = subprocess.run(
        [*_script("kestrel-door"), "--home", str(door_home), "audit", "--json", "--limit", "1000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    rows = json.loads(audit)
    assert len(rows) >= 3  # the calls were audited
    outputs.append(audit)

    for text in outputs:
        assert canary not in text
        assert token not in text
        assert bad_token not in text
    for name, data in {**_files_under(door_home), **_files_under(tmp_path)}.items():
        if name == str(home / ".env"):
            continue  # the store itself: the one place the values live
        assert canary.encode() not in data, name
        assert token.encode() not in data, name
        assert bad_token.encode() not in data, name
    stored = (home / ".env").read_text()
    assert canary in stored
    assert token in stored


def test_concurrent_writers_across_processes_lose_nothing(rs: ModuleType, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    writers, keys_each = 6, 5

    def cli_writer(w: int) -> list[int]:
        return [
            _kestrel(
                home, "secrets", "set", f"CLI_{w}_{k}", "--stdin", stdin=f"v{w}.{k}"
            ).returncode
            for k in range(keys_each)
        ]

    def mcp_writer(w: int) -> list[bool]:
        agent = rs.McpStdio(home, tmp_path / f"mcp-{w}.log")
        agent.initialize()
        results = [
            not agent.call("kestrel_secrets_set", key=f"MCP_{w}_{k}", value=f"m{w}.{k}").get(
                "isError"
            )
            for k in range(keys_each * 3)
        ]
        assert agent.close() == 0
        return results

    with ThreadPoolExecutor(max_workers=writers + 2) as pool:
        cli = [pool.submit(cli_writer, w) for w in range(writers)]
        mcp = [pool.submit(mcp_writer, w) for w in range(2)]
        assert all(code == 0 for f in cli for code in f.result())
        assert all(ok for f in mcp for ok in f.result())

    listed = set(_kestrel(home, "secrets", "list").stdout.split())
    expected = {f"CLI_{w}_{k}" for w in range(writers) for k in range(keys_each)}
    expected |= {f"MCP_{w}_{k}" for w in range(2) for k in range(keys_each * 3)}
    assert expected <= listed, sorted(expected - listed)
    from kestrel_secrets import open_secret_store

    store = open_secret_store(str(home))
    for w in range(writers):
        for k in range(keys_each):
            assert store.reveal(f"CLI_{w}_{k}") == f"v{w}.{k}"
    for w in range(2):
        for k in range(keys_each * 3):
            assert store.reveal(f"MCP_{w}_{k}") == f"m{w}.{k}"
    assert not list(home.glob(".env.*.tmp"))  # no temporaries left behind


def test_live_refusal_parity_cli_and_mcp(rs: ModuleType, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    agent = rs.McpStdio(home, tmp_path / "mcp.log")
    agent.initialize()
    seen: dict[str, Any] = {}
    for key in ["MY_LIVE_KEY", "LIVE", "ALIVE_AND_WELL", "bad key", "1ABC", "live_key", ""]:
        for verb in ("set", "unset"):
            args = (
                ("secrets", "set", key, "--stdin") if verb == "set" else ("secrets", "unset", key)
            )
            done = _kestrel(home, *args, stdin="x")
            tool = "kestrel_secrets_set" if verb == "set" else "kestrel_secrets_unset"
            arguments = {"key": key, "value": "x"} if verb == "set" else {"key": key}
            result = agent.call(tool, **arguments)
            if verb == "unset" and "LIVE" in key and key.isupper() and " " not in key:
                # Only set refuses a LIVE name; unset removes one an operator wrote by hand,
                # and both faces agree that it succeeds.
                assert done.returncode == 0, (key, done.stderr)
                assert result["isError"] is False, result
                continue
            assert done.returncode != 0, (key, verb)
            assert result["isError"] is True, result
            refusal = result["structuredContent"]["refusal"]
            assert _refusal_line(done) == f"{refusal['code']}: {refusal['message']}", key
            seen[refusal["code"]] = seen.get(refusal["code"], 0) + 1
    assert agent.close() == 0
    assert set(seen) == {"SECRET_KEY_LIVE", "SECRET_KEY_INVALID"}
    assert "LIVE" not in _kestrel(home, "secrets", "list").stdout
