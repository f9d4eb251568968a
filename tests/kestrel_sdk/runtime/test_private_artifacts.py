"""Whose artifact a root is: the session that made it, so that session's principal.

A principal's reads by root (``Runtime.artifact(root, principal)``, a shared runtime's
transports) find only the artifacts of its own sessions, open or closed, across a
restart; another's is refused exactly as a root never stored, corrupt rows included.
The operator (no principal: the CLI, stdio MCP on one's own home) reads everything.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from kestrel_protocol import GradeResult, KestrelError, RefusalCode, root_of
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime import Runtime

pytestmark = pytest.mark.anyio

NOWHERE = "sha256:" + "0" * 64


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def runtime(home: Path) -> Iterator[Runtime]:
    rt = Runtime(home)
    yield rt
    rt.shutdown()


def _refusal(runtime: Runtime, root: str, principal: str | None) -> dict[str, object]:
    with pytest.raises(KestrelError) as err:
        runtime.artifact(root, principal)
    assert err.value.code == RefusalCode.UNKNOWN_ARTIFACT
    return err.value.refusal.to_json()


def _as_missing(refusal: dict[str, object], root: str) -> str:
    """The refusal with ``root`` written as the never-stored root."""
    return str(refusal).replace(root, NOWHERE)


def _graded(runtime: Runtime, principal: str, label: str) -> dict[str, str]:
    opened = runtime.open_session(principal, "acme-trend", label)
    assert opened.session_id is not None
    sid = opened.session_id
    pentad = runtime.submit(principal, sid, "buy 10 ACME\nadvance 3\n").model().pentad.root
    record = runtime.close(principal, sid)
    grade = runtime.grade(principal, sid)
    assert isinstance(grade, GradeResult)
    return {
        "pentad": pentad,
        "frame": record.head,
        "blotter": record.blotter_root,
        "record": record.root,
        "grade": grade.root,
    }


def test_a_principal_reads_its_own_artifacts_only_and_across_a_restart(
    runtime: Runtime, home: Path
) -> None:
    alice = _graded(runtime, "alice", "a")
    missing = _as_missing(_refusal(runtime, NOWHERE, "bob"), NOWHERE)
    for kind, root in alice.items():
        assert runtime.artifact(root, "alice") == runtime.artifact(root), kind
        assert _as_missing(_refusal(runtime, root, "bob"), root) == missing, kind
    runtime.shutdown()
    again = Runtime(home)
    try:
        for kind, root in alice.items():
            assert root_of(again.artifact(root, "alice")) == root, kind
            assert _as_missing(_refusal(again, root, "bob"), root) == missing, kind
            assert again.artifact(root) == again.artifact(root, "alice")  # the operator
    finally:
        again.shutdown()


def test_the_pentads_of_an_open_session_are_its_principals(runtime: Runtime) -> None:
    opened = runtime.open_session("alice", "acme-trend", "open")
    assert opened.session_id is not None
    root = runtime.submit("alice", opened.session_id, "advance 2\n").model().pentad.root
    assert runtime.artifact(root, "alice")["seq"] == 1
    assert _as_missing(_refusal(runtime, root, "bob"), root) == _as_missing(
        _refusal(runtime, NOWHERE, "bob"), NOWHERE
    )


def test_a_corrupt_row_of_another_principal_is_missing_not_corrupt(
    runtime: Runtime, home: Path
) -> None:
    alice = _graded(runtime, "alice", "c")
    with sqlite3.connect(home / "kestrel.db") as conn:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b"{}", alice["record"]))
    assert _refusal(runtime, alice["record"], "alice")["detail"] == {
        "root": alice["record"],
        "status": "corrupt",
    }
    assert _refusal(runtime, alice["record"], "bob")["detail"] == {
        "root": alice["record"],
        "status": "missing",
    }


async def test_shared_runtime_transports_are_private_and_an_owning_one_reads_all(
    home: Path,
) -> None:
    owner_transport = local_transport(home=home)
    runtime = owner_transport.runtime  # type: ignore[attr-defined]
    owner = create_sdk(owner_transport)
    alice = create_sdk(local_transport(principal="alice", runtime=runtime))
    bob = create_sdk(local_transport(principal="bob", runtime=runtime))
    operator_view = create_sdk(
        local_transport(principal="bob", runtime=runtime, own_artifacts=False)
    )
    try:
        session = (await alice.open_session("acme-trend", "t")).session
        assert session is not None
        await session.submit("advance 1\n")
        await session.close()
        grade = await alice.grade(session.id)
        assert isinstance(grade, GradeResult)
        assert (await alice.artifact(grade.root))["root"] == grade.root
        assert (await owner.artifact(grade.root))["root"] == grade.root
        assert (await operator_view.artifact(grade.root))["root"] == grade.root
        with pytest.raises(KestrelError) as err:
            await bob.artifact(grade.root)
        assert err.value.code == RefusalCode.UNKNOWN_ARTIFACT
        with pytest.raises(KestrelError) as err:
            await bob.proof_of_grade(grade.root)
        assert err.value.refusal.to_json()["message"] == f"no artifact {grade.root}"
        assert (await owner.proof_of_grade(grade.root)).grade.root == grade.root
        assert (await alice.verify(grade)).ok
        assert not (await bob.verify(grade)).ok
    finally:
        for transport in (alice, bob, operator_view, owner):
            await transport.aclose()
