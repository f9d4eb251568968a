"""Every protocol object kind is lossless, immutable, rooted and strict about decimals."""

from __future__ import annotations

import json
from typing import Any, Protocol, TypeVar

import pytest
from kestrel_protocol import (
    Delivery,
    Envelope,
    FrameEvent,
    GradeResult,
    Metrics,
    Proof,
    ProtocolModel,
    SelfRooted,
    SessionFrame,
    SessionOpened,
    SessionResponse,
    VerificationReport,
    canonical_json,
    root_of,
)
from pydantic import ValidationError

M = TypeVar("M", bound=ProtocolModel)


class Pick(Protocol):
    """The ``sample_of`` fixture: the sample of one kind."""

    def __call__(self, cls: type[M]) -> M: ...


UNKNOWN = {"nested": [1, "ünï", None, {"deep": True, "list": []}], "\U0001f600": ""}


def _same(model: ProtocolModel, data: dict[str, Any]) -> None:
    assert model.to_json() == data
    assert model.canonical() == canonical_json(data)
    assert root_of(model) == root_of(data)


def test_parse_then_dump_keeps_bytes_and_root(sample: ProtocolModel) -> None:
    data = sample.to_json()
    cls = type(sample)
    for source in (data, canonical_json(data), json.dumps(data, indent=2), json.dumps(data)):
        parsed = cls.parse(source)
        _same(parsed, data)
        assert parsed == sample


def test_members_are_camel_case_on_the_wire(samples: list[ProtocolModel]) -> None:
    def keys(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [k for k, v in value.items() for k in [k, *keys(v)]]
        if isinstance(value, list):
            return [k for item in value for k in keys(item)]
        return []

    # SessionFrame.marks is keyed by symbol; every other key is a member name.
    all_keys = {k for s in samples for k in keys(s.to_json())} - {"ACME"}
    assert {"avgPrice", "frameRoot", "statementKinds", "resumeAfterMs", "return"} <= all_keys
    assert [k for k in all_keys if "_" in k or not k[0].islower()] == []


def _with_unknowns(model: ProtocolModel) -> dict[str, Any]:
    """``model``'s JSON with an unknown member in it and in every nested object, re-rooted."""
    data = model.to_json()
    for name, field in type(model).model_fields.items():
        if name not in model.model_fields_set:
            continue
        alias = field.alias or name
        value = getattr(model, name)
        if isinstance(value, ProtocolModel):
            data[alias] = _with_unknowns(value)
        elif isinstance(value, list) and value and isinstance(value[0], ProtocolModel):
            data[alias] = [_with_unknowns(item) for item in value]
    data["zFutureMember"] = UNKNOWN
    if isinstance(model, Delivery):
        data["frameRoot"] = root_of(data["frame"])
    if isinstance(model, SelfRooted):
        data["root"] = root_of(data)
    return data


def test_unknown_members_survive_byte_for_byte(sample: ProtocolModel) -> None:
    data = _with_unknowns(sample)
    parsed = type(sample).parse(canonical_json(data))
    _same(parsed, data)
    # An object that declares no member (an Artifact) holds every member as its own.
    declared = bool(type(sample).model_fields)
    assert parsed.model_extra == ({"zFutureMember": UNKNOWN} if declared else data)
    if isinstance(parsed, SelfRooted):
        assert parsed.root == data["root"] != getattr(sample, "root", None)


def test_unknown_members_are_kept_in_nested_objects(sample_of: Pick) -> None:
    frame = SessionFrame.parse(_with_unknowns(sample_of(SessionFrame)))
    assert frame.clock.model_extra == {"zFutureMember": UNKNOWN}
    assert frame.positions[0].model_extra == {"zFutureMember": UNKNOWN}
    assert frame.to_json()["events"][1]["zFutureMember"] == UNKNOWN


def test_models_are_immutable(sample: ProtocolModel) -> None:
    name = next(iter(type(sample).model_fields or sample.model_extra or ()))
    with pytest.raises(ValidationError, match="frozen"):
        setattr(sample, name, getattr(sample, name))


# --- decimal strings ----------------------------------------------------------------


def test_decimal_members_are_found(decimal_cases: list[tuple[ProtocolModel, str]]) -> None:
    found = {(type(s).__name__, m) for s, m in decimal_cases}
    assert len(found) >= 30
    assert {("Offer", "amount"), ("Metrics", "return"), ("Position", "avgPrice")} <= found


@pytest.mark.parametrize(
    "bad", [1.5, 15, "1e5", "abc", "01.5", "1.", ".5", "+1", " 1", "1,5", "NaN"]
)
def test_decimal_members_refuse_non_decimal_strings(
    decimal_case: tuple[ProtocolModel, str], bad: object
) -> None:
    sample, member = decimal_case
    data = {**sample.to_json(), member: bad}
    with pytest.raises(ValidationError) as caught:
        type(sample).parse(data)
    errors = caught.value.errors()
    assert [e["loc"] for e in errors] == [(member,)], errors
    assert member in str(caught.value)


@pytest.mark.parametrize("good", ["0", "-3.25", "101.25", "0.00000000", "1000000000000.01"])
def test_decimal_members_accept_decimal_strings(sample_of: Pick, good: str) -> None:
    data = {**sample_of(Metrics).to_json(), "sharpe": good}
    assert Metrics.parse(data).to_json()["sharpe"] == good


@pytest.mark.parametrize("good", [0, 120000, "0", "4761", "2012.25343589", "0.5"])
def test_a_volume_is_a_whole_number_or_its_exact_decimal_string(
    sample_of: Pick, good: object
) -> None:
    frame = sample_of(SessionFrame).to_json()
    frame["bars"]["ACME"]["volume"] = good
    parsed = SessionFrame.parse(frame)
    assert parsed.bars["ACME"].volume == good
    assert canonical_json(parsed) == canonical_json(frame)  # the same JSON type, kept


@pytest.mark.parametrize("bad", [1.5, 2.0, True, -1, "-1.5", "1e5", "NaN", "01.5", ".5", " 1"])
def test_a_volume_is_never_a_float_a_sign_or_an_exponent(sample_of: Pick, bad: object) -> None:
    frame = sample_of(SessionFrame).to_json()
    frame["bars"]["ACME"]["volume"] = bad
    with pytest.raises(ValidationError) as caught:
        SessionFrame.parse(frame)
    assert [e["loc"] for e in caught.value.errors()] == [("bars", "ACME", "volume")]
    assert "is not a volume" in str(caught.value)


def test_nested_decimal_errors_name_the_path(sample_of: Pick) -> None:
    frame = sample_of(SessionFrame).to_json()
    frame["marks"]["ACME"] = "1e5"
    frame["positions"][0]["avgPrice"] = 101.1
    with pytest.raises(ValidationError) as caught:
        SessionFrame.parse(frame)
    assert {e["loc"] for e in caught.value.errors()} == {
        ("marks", "ACME"),
        ("positions", 0, "avgPrice"),
    }


# --- roots --------------------------------------------------------------------------


def test_wrong_root_names_expected_and_found(rooted: SelfRooted) -> None:
    sample = rooted
    forged = "sha256:" + "f" * 64
    data = {**sample.to_json(), "root": forged}
    with pytest.raises(ValidationError) as caught:
        type(sample).parse(canonical_json(data))
    message = str(caught.value)
    assert f"expected {sample.root}" in message
    assert f"found {forged}" in message


def test_tampered_content_fails_its_root(rooted: SelfRooted) -> None:
    sample = rooted
    data = {**sample.to_json(), "addedLater": "x"}
    with pytest.raises(ValidationError, match="root does not verify") as caught:
        type(sample).parse(data)
    assert f"found {sample.root}" in str(caught.value)
    assert f"expected {root_of(data)}" in str(caught.value)


def test_nested_root_is_verified_too(sample_of: Pick) -> None:
    response = sample_of(SessionResponse).to_json()
    response["pentad"]["seq"] = 2
    with pytest.raises(ValidationError, match="root does not verify"):
        SessionResponse.parse(response)


def test_delivery_frame_root_is_verified(sample_of: Pick) -> None:
    delivery = sample_of(Delivery)
    assert delivery.frame_root == root_of(delivery.frame)
    data = delivery.to_json()
    data["frame"]["clock"]["bar"] = 2
    with pytest.raises(ValidationError) as caught:
        Delivery.parse(data)
    message = str(caught.value)
    assert f"found {delivery.frame_root}" in message
    assert f"expected {root_of(data['frame'])}" in message


def test_with_root_ignores_a_given_root(sample_of: Pick) -> None:
    grade = sample_of(GradeResult)
    members = {name: getattr(grade, name) for name in GradeResult.model_fields}
    members["root"] = "sha256:" + "0" * 64
    rebuilt = GradeResult.with_root(**members)
    assert rebuilt.root == grade.root == root_of(grade)


# --- absent stays absent, null stays null -------------------------------------------


@pytest.mark.parametrize(
    ("cls", "data", "member"),
    [
        (FrameEvent, {"type": "accepted", "bar": 3}, "qty"),
        (FrameEvent, {"type": "accepted", "bar": 3}, "reason"),
        (
            VerificationReport,
            {"kind": "kestrel.verification", "ok": True, "grade": "g"},
            "mismatch",
        ),
        (SessionOpened, {"gated": False, "sessionId": "ks_1"}, "payment"),
    ],
)
def test_absent_stays_absent_and_null_stays_null(
    cls: type[ProtocolModel], data: dict[str, Any], member: str
) -> None:
    absent = cls.parse(data)
    assert member not in absent.to_json()
    present_null = cls.parse({**data, member: None})
    assert present_null.to_json()[member] is None
    assert root_of(absent) == root_of(data)
    assert root_of(present_null) == root_of({**data, member: None}) != root_of(data)


def test_stand_down_absent_unless_stood_down(sample_of: Pick) -> None:
    response = sample_of(SessionResponse)
    data = response.to_json()
    assert data["standDown"] == {"reason": "statement", "detail": "done for the day"}
    applied = {**data, "disposition": "applied"}
    del applied["standDown"]
    assert "standDown" not in SessionResponse.parse(applied).to_json()


def test_defaults_with_a_value_are_dumped() -> None:
    # ``kind`` and ``state`` are part of every such object even when built without them.
    event = FrameEvent(type="closed", bar=9)
    assert event.to_json() == {"type": "closed", "bar": 9}
    report = VerificationReport(ok=True, grade="sha256:" + "a" * 64)
    assert report.to_json() == {"kind": "kestrel.verification", "ok": True, "grade": report.grade}


def test_wrong_kind_is_refused() -> None:
    with pytest.raises(ValidationError, match="kind"):
        VerificationReport.parse({"kind": "kestrel.grade", "ok": True, "grade": "g"})


@pytest.mark.parametrize(
    ("extra", "words"),
    [(1.5, ["zExtra", "float"]), ({"deep": [2**60]}, ["zExtra", "safe range"])],
)
def test_unknown_members_must_be_canonical_json_too(
    sample_of: Pick, extra: object, words: list[str]
) -> None:
    data = {**sample_of(FrameEvent).to_json(), "zExtra": extra}
    with pytest.raises(ValidationError) as caught:
        FrameEvent.parse(data)
    for word in words:
        assert word in str(caught.value)


def test_a_proofs_attestation_is_outside_its_root(samples: list[Any]) -> None:
    """The door's signed statement travels in the proof without changing its root: the
    same proof with or without it has one root, and parses either way."""
    proof = next(s for s in samples if isinstance(s, Proof))
    envelope = next(s for s in samples if isinstance(s, Envelope))
    attested = Proof.parse({**proof.to_json(), "attestation": envelope.to_json()})
    assert attested.root == proof.root
    assert attested.to_json()["attestation"] == envelope.to_json()
    assert attested.rooted_json() == proof.to_json()
    tampered = {**proof.to_json(), "blotter": {**proof.to_json()["blotter"], "orders": []}}
    with pytest.raises(ValueError, match="root"):
        Proof.parse({**tampered, "attestation": envelope.to_json()})
