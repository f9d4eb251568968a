from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group

from tests.loopback import free_port, wait_for_http


def _run(home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(door_group, ["--home", str(home), *args])
    return result.exit_code, result.output


def test_token_issue_list_revoke(tmp_path: Path) -> None:
    code, out = _run(
        tmp_path,
        "token",
        "issue",
        "--principal",
        "alice",
        "--scope",
        "kestrel:read",
        "--scope",
        "kestrel:trade",
    )
    assert code == 0, out
    token = out.strip().splitlines()[-1]
    assert token.startswith("kestrel_tok_")
    assert out.count(token) == 1
    code, listed = _run(tmp_path, "token", "list", "--json")
    rows = json.loads(listed)
    assert [(r["principal"], r["scopes"]) for r in rows] == [
        ("alice", ["kestrel:read", "kestrel:trade"])
    ]
    assert token not in listed
    assert token.encode() not in (tmp_path / "door.db").read_bytes()
    code, out = _run(tmp_path, "token", "revoke", rows[0]["id"])
    assert code == 0
    code, out = _run(tmp_path, "token", "revoke", rows[0]["id"])
    assert code == 1
    code, out = _run(tmp_path, "token", "issue", "--principal", "bob", "--scope", "admin")
    assert code != 0
    assert "unknown scope" in out


def test_scopes_after_one_flag(tmp_path: Path) -> None:
    code, out = _run(
        tmp_path, "token", "issue", "--principal", "p", "--scope", "kestrel:read", "kestrel:grade"
    )
    assert code == 0, out
    _, listed = _run(tmp_path, "token", "list", "--json")
    assert json.loads(listed)[0]["scopes"] == ["kestrel:grade", "kestrel:read"]


def test_voucher_issue_prints_it_last(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "voucher", "issue", "--ttl", "60")
    assert code == 0
    assert out.strip().splitlines()[-1].startswith("kv1.")


def test_audit_and_approval_verbs(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "audit", "--json")
    assert code == 0
    assert json.loads(out) == []
    code, out = _run(
        tmp_path, "approval", "grant", "--principal", "alice", "--tool", "kestrel_session_open"
    )
    assert code == 0


def test_serve_subprocess_end_to_end(tmp_path: Path) -> None:
    _, out = _run(tmp_path, "token", "issue", "--principal", "alice", "--scope", "kestrel:read")
    token = out.strip().splitlines()[-1]
    port = free_port()
    env = {**os.environ, "KESTREL_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kestrel_door.cli import main; main()",
            "serve",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        meta = wait_for_http(base + "/.well-known/oauth-protected-resource", proc)
        assert meta.json()["resource"] == base
        assert httpx.get(base + "/v1/catalog").status_code == 401
        resp = httpx.get(base + "/v1/catalog", headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 200, resp.text
        assert resp.json()["kind"] == "kestrel.catalog"
        mcp = httpx.post(
            base + "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
            },
        )
        names = [t["name"] for t in mcp.json()["result"]["tools"]]
        assert "kestrel_catalog" in names
        assert not [n for n in names if "secrets" in n]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert token.encode() not in err


def test_kestrel_door_plugin_honours_the_root_home(tmp_path: Path) -> None:
    from kestrel_sdk.cli import cli

    result = CliRunner().invoke(
        cli,
        [
            *("--home", str(tmp_path / "h"), "door", "token", "issue"),
            *("--principal", "p", "--scope", "kestrel:read"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].startswith("kestrel_tok_")
    assert (tmp_path / "h" / "door.db").exists()


def test_serve_refuses_to_seal_a_scenario_not_in_the_catalog(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        door_group,
        ["--home", str(tmp_path), "serve", "--seal", "acme-trend", "--seal", "nope"],
    )
    assert result.exit_code == 2, result.output
    assert "--seal" in result.output
    assert "no scenario 'nope' in the catalog" in result.output


@pytest.mark.parametrize(
    ("seal", "said"),
    [
        ("nope=tape-1", "no scenario 'nope' in the catalog"),
        ("acme-crash=acme-trend", "cannot serve 'acme-crash' as 'acme-trend': that id is taken"),
        ("acme-crash=Tape_9", "the served id 'Tape_9' must be lower-case letters"),
        ("acme-crash=", "expected SCENARIO or SCENARIO=SERVED_ID"),
        ("acme-crash=acme-crash", "the served id must differ from the scenario's"),
        ("acme-crash=tape-1 --seal acme-chop=tape-1", "the served id 'tape-1' is named by more"),
    ],
)
def test_serve_refuses_a_seal_under_a_served_id_it_cannot_serve(
    tmp_path: Path, seal: str, said: str
) -> None:
    seals = seal.split()  # a second --seal when the case has one
    result = CliRunner().invoke(door_group, ["--home", str(tmp_path), "serve", "--seal", *seals])
    assert result.exit_code == 2, result.output
    assert "--seal" in result.output
    assert said in " ".join(result.output.split()), result.output


_DOOR = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]


def test_serve_on_a_taken_port_says_so_without_claiming_to_serve(tmp_path: Path) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        done = subprocess.run(
            [*_DOOR, "serve", "--port", str(port)],
            env={**os.environ, "KESTREL_HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        taken.close()
    assert done.returncode != 0
    assert "serving" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"kestrel: BACKEND_UNAVAILABLE: cannot listen on 127.0.0.1:{port}: ")
    )


def test_serve_says_a_scenario_sealed_under_its_own_id_keeps_it(tmp_path: Path) -> None:
    """``--seal acme-chop`` serves the id ``acme-chop`` (which tells "choppy"): the door
    says so (and that its root, binding a description an agent can guess, tells the
    tape's length to a search) and how to serve it under a neutral id; ``--seal
    acme-crash=tape-9`` does not need saying. (A taken port stops the door once the
    seals are checked.)"""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        seals = ("--seal", "acme-chop", "--seal", "acme-crash=tape-9")
        done = subprocess.run(
            [*_DOOR, "serve", "--port", str(port), *seals],
            env={**os.environ, "KESTREL_HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        taken.close()
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "--seal acme-chop serves it under its own id" in said, done.stderr
    assert "--seal acme-chop=NEUTRAL_ID serves it under a neutral id" in said
    # its description is public: the root then tells the tape's length to a search
    assert "search out the tape's length" in said
    assert "acme-crash" not in said


def test_files_the_runtime_creates_under_a_home_are_private(tmp_path: Path) -> None:
    from kestrel_sdk.cli import cli as kestrel_cli

    home = tmp_path / "home"
    program = tmp_path / "p.kes"
    program.write_text('buy 1 ACME\nadvance 3\nstand down "flat"\n', "utf-8")
    ran = CliRunner().invoke(
        kestrel_cli, ["--home", str(home), "run", str(program), "--scenario", "acme-trend"]
    )
    assert ran.exit_code == 0, ran.output
    _run(home, "token", "issue", "--principal", "alice", "--scope", "kestrel:read")
    _run(home, "voucher", "issue")
    made = [home, *home.rglob("*")]
    assert any(p.name == "kestrel.db" for p in made)
    assert any(p.name == "door.db" for p in made)
    for path in made:
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
