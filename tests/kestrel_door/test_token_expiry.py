"""Issued tokens expire; a trial never outlives the token that minted it.

A real ``kestrel-door serve`` on loopback, its store SQLite (``door.db`` in its home) or
PostgreSQL (``$KESTREL_STORE``). A token past its expiry is refused on ``/v1`` and
``/mcp`` exactly as a token the door never issued is (status, ``WWW-Authenticate``,
body): the caller learns nothing of whether it existed. The door's clock is a seam
(:class:`~kestrel_door.IssuedTokens` takes ``now``), so a token issued "two hours ago"
for an hour is expired now, without waiting.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import ISSUED_TOKEN_PREFIX, DoorStore, IssuedTokens, open_door_store
from kestrel_door.bearers import bearer_digest, mint_bearer
from kestrel_door.cli import door_group
from kestrel_door.expiry import rfc3339, time_of
from kestrel_protocol.store import TokenEntry

from tests.doors import SCOPES, Door, answers, serve_door

pytestmark = pytest.mark.anyio

UNKNOWN = ISSUED_TOKEN_PREFIX + "A" * 43  # well formed, never issued


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every door and door command of the test on one store of each kind."""
    if request.param == "postgresql":
        dsn: str = request.getfixturevalue("postgres_dsn")
        monkeypatch.setenv("KESTREL_STORE", dsn)
    else:
        monkeypatch.delenv("KESTREL_STORE", raising=False)
    return str(request.param)


def _cli(home: Path, *args: str) -> str:
    done = CliRunner().invoke(door_group, ["--home", str(home), *args])
    assert done.exit_code == 0, done.output
    return done.output


def _issue(home: Path, *expiry: str) -> str:
    return _cli(home, "token", "issue", "--principal", "evaluator", "--scope", SCOPES, *expiry)


def _listed(home: Path) -> dict[str, dict[str, object]]:
    rows = json.loads(_cli(home, "token", "list", "--json"))
    return {str(r["id"]): r for r in rows}


def _issued_long_ago(home: Path, principal: str) -> tuple[str, str]:
    """A token issued two hours ago for an hour (the door's clock set back): its id and
    the token, expired now."""
    records = open_door_store(None, home)
    try:
        then = IssuedTokens(records, now=lambda: time.time() - 7_200)
        row, token = then.issue(principal, SCOPES.split(), lifetime_s=3_600)
    finally:
        records.close()
    return row.id, token


def _answers(door: Door, token: str) -> list[tuple[int, str | None, bytes]]:
    """Status, ``WWW-Authenticate`` and body of ``GET /v1/catalog`` and an MCP
    ``tools/list`` with ``token``."""
    return [
        (r.status_code, r.headers.get("www-authenticate"), r.content) for r in answers(door, token)
    ]


def _mint(door: Door, parent: str, **body: object) -> httpx.Response:
    return httpx.post(
        f"{door.url}/v1/trials",
        json={"trial": "run-1", **body},
        headers={"Authorization": f"Bearer {parent}"},
        timeout=30,
    )


def test_an_expired_token_is_refused_exactly_as_an_unknown_one(store: str, tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        expired_id, expired = _issued_long_ago(door.home, "evaluator")
        unknown = _answers(door, UNKNOWN)
        assert [status for status, _, _ in unknown] == [401, 401]
        assert all('error="invalid_token"' in str(header) for _, header, _ in unknown)
        assert _answers(door, expired) == unknown  # no hint that it ever existed
        assert [a[0] for a in _answers(door, door.token)] == [200, 200]  # default: 90 days

        row = _listed(door.home)[expired_id]
        assert row["revokedAt"] is None
        assert time_of(str(row["expiresAt"])) < time.time()
        line = next(ln for ln in _cli(door.home, "token", "list").splitlines() if expired_id in ln)
        assert f"  expired  expires {row['expiresAt']}" in line
        # revoking it still works (and says so): nothing about it was lost
        assert _cli(door.home, "token", "revoke", expired_id).startswith(f"revoked {expired_id}")


def test_a_stored_expiry_that_is_no_time_is_refused_as_an_unknown_token(
    store: str, tmp_path: Path
) -> None:
    """Another hand wrote a token's ``expires_at`` (no time, or one without its offset):
    the door refuses the token as any unusable one (401, not 503), names it by id in its
    log once, and ``token list`` shows the value as stored; revoking it still works."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        planted = {}
        records = open_door_store(None, door.home)
        try:
            for n, stamp in enumerate(("next tuesday", "2099-01-01T00:00:00")):
                token = mint_bearer(ISSUED_TOKEN_PREFIX)
                entry = TokenEntry(
                    f"tk_bad{n}", "evaluator", SCOPES, None, "2026-01-01T00:00:00Z", None,
                    None, None, stamp,
                )  # fmt: skip
                records.add_token(entry, bearer_digest(token))
                planted[entry.id] = (stamp, token)
        finally:
            records.close()
        unknown = _answers(door, UNKNOWN)
        for _, token in planted.values():
            assert _answers(door, token) == unknown  # twice each: one answer per face
            assert _answers(door, token) == unknown
        assert [a[0] for a in _answers(door, door.token)] == [200, 200]

        listed = _listed(door.home)
        lines = _cli(door.home, "token", "list").splitlines()
        for token_id, (stamp, _) in planted.items():
            assert listed[token_id]["expiresAt"] == stamp  # nothing stored lost or mended
            line = next(ln for ln in lines if token_id in ln)
            assert f"  refused (its expiry is not a time)  expires {stamp}" in line
            assert _cli(door.home, "token", "revoke", token_id).startswith(f"revoked {token_id}")
        assert door.process is not None
        assert door.process.stderr is not None
        door.process.terminate()
        door.process.wait(timeout=10)
        log = door.process.stderr.read().decode()
    for token_id, (stamp, token) in planted.items():
        assert log.count(f"issued token {token_id} is refused") == 1, log
        assert repr(stamp) in log
        assert token not in log


def test_a_trial_never_outlives_the_token_that_minted_it(store: str, tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        issued = _issue(door.home, "--expires-in", "1h")
        parent_id, parent = issued.split()[1], issued.split()[-1]
        until = str(_listed(door.home)[parent_id]["expiresAt"])
        assert f"expires {until}; shown once:" in issued
        assert time.time() + 3_500 < time_of(until) <= time.time() + 3_600

        longer = _mint(door, parent, expiresIn=86_400)
        assert longer.status_code == 201, longer.text
        assert longer.json()["expiresAt"] == until  # capped, and the answer says so
        as_parent = _mint(door, parent)
        assert as_parent.json()["expiresAt"] == until
        shorter = _mint(door, parent, expiresIn=60)
        assert time.time() < time_of(shorter.json()["expiresAt"]) <= time.time() + 60
        listed = _listed(door.home)
        for trial in (longer, as_parent, shorter):
            row = listed[trial.json()["tokenId"]]
            assert (row["parent"], row["expiresAt"]) == (parent_id, trial.json()["expiresAt"])
            assert [a[0] for a in _answers(door, trial.json()["token"])] == [200, 200]

        for bad in ("1h", 0, -5, True, 10**12):
            refused = _mint(door, parent, expiresIn=bad)
            assert refused.status_code == 400, bad
            assert refused.json()["refusal"]["detail"]["where"] == "expiresIn"

        forever = _issue(door.home, "--expires-in", "never")
        assert "never expires; shown once:" in forever
        unbounded = _mint(door, forever.split()[-1])
        assert unbounded.json()["expiresAt"] is None
        bounded = _mint(door, forever.split()[-1], expiresIn=600)
        assert time_of(bounded.json()["expiresAt"]) <= time.time() + 600


async def test_a_token_is_accepted_until_its_expiry_then_refused(tmp_path: Path) -> None:
    clock = [1_800_000_000.0]
    tokens = IssuedTokens(DoorStore(tmp_path / "door.db"), now=lambda: clock[0])
    row, token = tokens.issue("alice", ["kestrel:read", "kestrel:trials"], lifetime_s=3_600)
    assert row.expires_at == rfc3339(clock[0] + 3_600)
    grant = await tokens.verify(token)
    assert grant is not None
    assert grant.expires_at == row.expires_at
    trial, trial_token, _ = tokens.issue_trial(
        "alice", "a", ["kestrel:read"], parent=row.id, lifetime_s=86_400, not_after=row.expires_at
    )
    assert trial.expires_at == row.expires_at
    clock[0] += 3_599
    assert await tokens.verify(token) is not None
    assert await tokens.verify(trial_token) is not None
    clock[0] += 1
    assert await tokens.verify(token) is None
    assert await tokens.verify(trial_token) is None
    assert [tokens.expired(r) for r in tokens.list()] == [True, True]


def test_token_issue_names_a_bad_expiry(tmp_path: Path) -> None:
    issue = [
        "--home",
        str(tmp_path),
        "token",
        "issue",
        "--principal",
        "p",
        "--scope",
        "kestrel:read",
    ]
    for args, says in [
        (["--expires-in", "5x"], "--expires-in"),
        (["--expires-in", "99999w"], "up to ten years"),
        (["--expires-at", "2027-01-31T00:00:00"], "UTC offset"),
        (["--expires-at", "2020-01-01T00:00:00Z"], "is not after now"),
        (["--expires-in", "1h", "--expires-at", "2099-01-01T00:00:00Z"], "not both"),
    ]:
        done = CliRunner().invoke(door_group, [*issue, *args])
        assert done.exit_code == 2, (args, done.output)
        assert says in done.output, (args, done.output)
    assert CliRunner().invoke(door_group, ["--home", str(tmp_path), "token", "list"]).output == ""
    at = CliRunner().invoke(door_group, [*issue, "--expires-at", "2099-01-31T02:00:00+02:00"])
    assert "expires 2099-01-31T00:00:00Z; shown once:" in at.output
