"""``POST /v1/verify`` of a re-rooted grade whose members name other artifacts is a
verification report naming the member, never a 500 (issue 45).

A grade whose ``record`` was edited to name another kind of the caller's own artifacts
(a frame, a pentad, a blotter, a grade) and re-rooted made the door answer 500: the
artifact was parsed as a session record. Each such grade, and the other edits tried
around it (a record that is missing, another principal's, another session's; a session,
scenario or head that is not the record's), is answered ``ok: false`` with the first
mismatch, the same on ``/v1``, the SDK's remote transport, the runtime in-process and
``kestrel verify`` (which crashed ``INTERNAL: ValidationError``).
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
import httpx
import pytest
from click.testing import CliRunner
from kestrel_protocol import GradeResult, SessionRecord, SessionResponse, root_of
from kestrel_protocol.surface import SURFACE
from kestrel_sdk import remote_transport
from kestrel_sdk.cli import cli

from .conftest import BASE, Kit, asgi_client

pytestmark = pytest.mark.anyio

NOWHERE = "sha256:" + "0" * 64


def _rerooted(grade: dict[str, Any], **changes: Any) -> dict[str, Any]:
    data = {k: v for k, v in grade.items() if k != "root"} | changes
    return data | {"root": root_of(data)}


async def _graded(client: httpx.AsyncClient, label: str) -> dict[str, Any]:
    """A session traded, closed and graded over ``/v1``: the roots it made."""
    opened = await client.post("/v1/sessions", json={"scenario": "acme-trend", "label": label})
    sid = opened.json()["sessionId"]
    submitted = await client.post(
        f"/v1/sessions/{sid}/submit", json={"source": "buy 10 ACME\nadvance 5\n"}
    )
    pentad = SessionResponse.parse(submitted.json()).pentad.root
    record = SessionRecord.parse((await client.post(f"/v1/sessions/{sid}/close")).json())
    grade = (await client.post(f"/v1/sessions/{sid}/grade")).json()
    GradeResult.parse(grade)
    return {
        "session": sid,
        "pentad": pentad,
        "frame": record.head,
        "blotter": record.blotter_root,
        "record": record.root,
        "grade": grade,
    }


async def test_a_grade_naming_other_artifacts_is_a_mismatch_never_a_500(kit: Kit) -> None:
    app = kit.runtime_app()
    async with (
        asgi_client(app, kit.token("alice")) as alice,
        asgi_client(app, kit.token("bob")) as bob,
    ):
        mine = await _graded(alice, "one")
        another = await _graded(alice, "two")
        theirs = await _graded(bob, "three")
        grade = mine["grade"]
        edits: dict[str, tuple[dict[str, Any], str, str]] = {
            # record -> (the edit, the mismatch's field, what it says was found)
            "record is a frame": ({"record": mine["frame"]}, "record", "a kestrel.frame object"),
            "record is a blotter": (
                {"record": mine["blotter"]},
                "record",
                "a kestrel.blotter object",
            ),
            "record is a grade": (
                {"record": grade["root"]},
                "record",
                "a kestrel.grade object",
            ),
            "record is a pentad": (
                {"record": mine["pentad"]},
                "record",
                "an object that is not a kestrel.session record",
            ),
            "record is missing": (
                {"record": NOWHERE},
                "record",
                "missing or corrupt in the artifact store",
            ),
            "record is bob's": (
                {"record": theirs["record"]},
                "record",
                "missing or corrupt in the artifact store",
            ),
            "record is another session's": (
                {"record": another["record"]},
                "session",
                grade["session"],
            ),
            "head is a pentad": ({"head": mine["pentad"]}, "head", mine["pentad"]),
            "session is another": ({"session": another["session"]}, "session", another["session"]),
        }
        transport = remote_transport(BASE, None, client=alice)
        tool = SURFACE.tool("kestrel_verify")
        runtime = kit.runtimes[0].runtime
        for name, (changes, field, found) in edits.items():
            bad = _rerooted(grade, **changes)
            resp = await alice.post("/v1/verify", json={"grade": bad})
            assert resp.status_code == 200, (name, resp.status_code, resp.text)
            report = resp.json()
            assert report["kind"] == "kestrel.verification", name
            assert report["ok"] is False, name
            assert report["grade"] == bad["root"], name
            assert report["mismatch"]["field"] == field, (name, report)
            assert report["mismatch"]["found"] == found, (name, report)
            # the same report through the SDK's remote transport and in-process
            remote = await transport.invoke(tool, tool.parse({"grade": bad}))
            assert remote.to_json() == report, name
            local = runtime.verify(GradeResult.parse(bad), "alice")
            assert local.to_json() == report, name
        # the grade as made still verifies
        honest = await alice.post("/v1/verify", json={"grade": grade})
        assert honest.json()["ok"] is True

    # `kestrel verify GRADE` on the home fails the same way, as a failed check (exit 1)
    framed = kit.home / "framed.json"
    framed.write_text(json.dumps(_rerooted(grade, record=mine["frame"])), encoding="utf-8")
    args = ["--home", str(kit.home / "runtime"), "verify", str(framed)]
    ran = await anyio.to_thread.run_sync(CliRunner().invoke, cli, args)  # it runs its own loop
    assert ran.exit_code == 1, ran.output
    assert ran.stderr.strip().splitlines() == [
        "kestrel: CHECK_FAILED: verification failed: record: expected a kestrel.session "
        f"record at {mine['frame']}, found a kestrel.frame object"
    ]
