"""Proofs in the runtime: what one holds, that it verifies from itself alone, and that any
changed member is named."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import KestrelError, Proof, RefusalCode
from kestrel_sdk.runtime import Runtime, verify_proof
from kestrel_sdk.runtime.catalog import CatalogIndex, build_loaded_scenario, load_catalog
from kestrel_sdk.runtime.catalog.objects import catalog_object

SOURCES = ("buy 10 ACME\nadvance 5\n", "sell 10 ACME\nbuy 5 ACME\nadvance 3\n")
SHIPPED = load_catalog([])


def _session(runtime: Runtime, scenario: str = "acme-trend") -> str:
    opened = runtime.open_session("alice", scenario)
    assert opened.session_id is not None
    for source in SOURCES:
        runtime.submit("alice", opened.session_id, source)
    return opened.session_id


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    rt = Runtime(tmp_path / "home")
    yield rt
    rt.shutdown()


def test_a_proof_holds_the_sessions_objects_and_verifies_from_itself(
    runtime: Runtime, tmp_path: Path
) -> None:
    sid = _session(runtime)
    proved = runtime.proof("alice", sid)  # its canonical text, the object made when asked
    proof = proved.model()
    assert proved.text.encode("utf-8") == proof.canonical() == Proof.parse(proved.text).canonical()
    grade = runtime.grade("alice", sid)
    assert proof.grade == grade
    assert proof.record.root == proof.grade.record
    assert proof.head.clock.bar == 8
    assert proof.blotter.root == proof.record.blotter_root
    assert [p.root for p in proof.pentads] == proof.record.pentads
    assert [p.body.bytes for p in proof.pentads] == list(SOURCES)
    assert (proof.scenario.id, proof.embedded) == ("acme-trend", None)
    assert Proof.parse(proof.to_json()).root == proof.root

    report = verify_proof(SHIPPED, proof.to_json())
    assert (report.ok, report.proof, report.grade) == (True, proof.root, grade.root)

    other = Runtime(tmp_path / "other-home")  # the same sources anywhere: the same proof
    try:
        assert other.proof("alice", _session(other)).text == proved.text
    finally:
        other.shutdown()


Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


def _repeat_last(path: str) -> Mutation:
    """The list at ``path`` with its last item again (a fill, order or check twice)."""

    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[key]
        target[last].append(copy.deepcopy(target[last][-1]))

    return mutate


def _swap_first_two(path: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[key]
        target[last][0], target[last][1] = target[last][1], target[last][0]

    return mutate


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (_set("pentads.1.body.bytes", "sell 10 ACME\nadvance 3\n"), "pentads[1].root"),
        (_set("pentads.0.prev", "sha256:" + "1" * 64), "pentads[0].prev"),
        (_set("grade.metrics.winRate", "0.00000000"), "grade.metrics.winRate"),
        (_set("grade.metrics.trades", 7), "grade.metrics.trades"),
        (_set("head.account.equity", "1.00"), "head.account.equity"),
        (_set("record.label", "2"), "record.root"),
        (_set("blotter.orders.0.qty", 11), "blotter.orders[o1].qty"),
        (_set("scenario.tapeRoot", "sha256:" + "2" * 64), "scenario.tapeRoot"),
        (_set("root", "sha256:" + "3" * 64), "root"),
        (_set("comment", "trust me"), "comment"),
        # a member the root does not cover as presented: an item twice, items reordered,
        # a number where JSON has true (Python's 1 == True)
        (_repeat_last("blotter.fills"), "blotter.fills"),
        (_repeat_last("grade.conformance.checks"), "grade.conformance.checks"),
        (_swap_first_two("blotter.orders"), "blotter.orders[0].id"),
        (
            _set("grade.conformance.checks.0.passed", 1),
            "grade.conformance.checks[chain-intact].passed",
        ),
        (_set("pentads.0.seq", True), "pentads[0].seq"),
        (_set("version", True), "version"),
    ],
)
def test_a_changed_member_is_named(runtime: Runtime, mutate: Mutation, field: str) -> None:
    data = runtime.proof("alice", _session(runtime)).to_json()
    changed = copy.deepcopy(data)
    mutate(changed)
    report = verify_proof(SHIPPED, changed)
    assert not report.ok
    assert report.mismatch is not None
    assert report.mismatch.field == field


def test_a_scenario_neither_in_the_catalog_nor_embedded_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    tiny = build_loaded_scenario(
        [("10.00", "10.50", "9.50", "10.20", 1000)] * 12, scenario_id="tiny"
    )
    index = CatalogIndex(catalog_object([tiny.scenario]), {"tiny": tiny}, [])
    runtime = Runtime(tmp_path / "home", catalog=index)
    try:
        opened = runtime.open_session("alice", "tiny")
        assert opened.session_id is not None
        runtime.submit("alice", opened.session_id, "buy 5 ACME\nadvance 4\n")
        plain = runtime.proof("alice", opened.session_id).to_json()
        embedded = runtime.proof("alice", opened.session_id, embed_tape=True).model()
    finally:
        runtime.shutdown()
    with pytest.raises(KestrelError) as refused:
        verify_proof(SHIPPED, plain)
    assert refused.value.code == RefusalCode.UNKNOWN_SCENARIO
    assert f"tiny ({tiny.scenario.root})" in refused.value.message
    assert refused.value.detail == {"scenario": "tiny", "root": tiny.scenario.root}

    assert embedded.embedded is not None
    assert embedded.embedded.tape.startswith("time,symbol,open,high,low,close,volume\n")
    assert verify_proof(SHIPPED, embedded.to_json()).ok

    data = embedded.to_json()
    data["embedded"]["tape"] = data["embedded"]["tape"].replace("10.20", "10.25", 1)
    tampered_tape = verify_proof(SHIPPED, data)
    assert tampered_tape.mismatch is not None
    assert tampered_tape.mismatch.field == "embedded.scenario.tape.root"

    data = embedded.to_json()
    data["embedded"]["scenario"]["fees"]["bps"] = "0"
    tampered_terms = verify_proof(SHIPPED, data)
    assert tampered_terms.mismatch is not None
    assert tampered_terms.mismatch.field == "embedded.scenario.root"

    data = embedded.to_json()
    data["embedded"]["scenario"]["account"]["cash"] = "-5"
    invalid = verify_proof(SHIPPED, data)
    assert invalid.mismatch is not None
    assert invalid.mismatch.field == "embedded"
    assert "cash" in invalid.mismatch.found


def test_not_a_proof_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"kestrel\.proof"):
        verify_proof(SHIPPED, {"kind": "kestrel.grade"})
