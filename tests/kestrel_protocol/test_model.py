"""The model base: money and ratio rounding, root strings, the root builder and checker,
the JSON text of an object."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from kestrel_protocol import (
    Conformance,
    ConformanceCheck,
    Offer,
    ProtocolModel,
    RootMismatchError,
    ScenarioRef,
    canonical_json,
    money,
    ratio,
    root_of,
)
from pydantic import ValidationError


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("1.005", "1.00"),  # half-even: to the even cent
        ("1.015", "1.02"),
        ("1.025", "1.02"),
        ("2.5", "2.50"),
        ("-3.125", "-3.12"),
        ("-0.001", "0.00"),  # no negative zero on the wire
        ("123456789.999", "123456790.00"),
    ],
)
def test_money_rounds_to_the_cent_half_even(value: str, text: str) -> None:
    assert money(Decimal(value)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("0.123456785", "0.12345678"),
        ("0.123456795", "0.12345680"),
        ("1", "1.00000000"),
        ("0", "0.00000000"),
        ("-0.000000001", "0.00000000"),
        ("-1.5", "-1.50000000"),
    ],
)
def test_ratio_rounds_to_eight_places_half_even(value: str, text: str) -> None:
    assert ratio(Decimal(value)) == text


@pytest.mark.parametrize(
    "root",
    ["sha256:" + "A" * 64, "sha1:" + "a" * 64, "sha256:" + "a" * 63, "a" * 64, ""],
)
def test_root_members_must_be_sha256_lower_hex(root: str) -> None:
    with pytest.raises(ValidationError, match="is not a root"):
        ScenarioRef(id="acme", root=root)


def _checks() -> list[ConformanceCheck]:
    return [ConformanceCheck(id="flat-at-end", passed=True, detail="flat")]


def test_with_root_binds_the_root_of_the_content() -> None:
    built = Conformance.with_root(checks=_checks())
    assert built.root == root_of(
        {"checks": [{"id": "flat-at-end", "passed": True, "detail": "flat"}]}
    )
    assert Conformance.parse(built.canonical()) == built


def test_constructor_verifies_the_root_however_members_are_given() -> None:
    root = Conformance.with_root(checks=_checks()).root
    # python names, nested model instances: the same object, the same root
    assert Conformance(checks=_checks(), root=root).root == root
    with pytest.raises(ValidationError, match="root does not verify"):
        Conformance(checks=[], root=root)


def test_root_mismatch_error_carries_both_roots() -> None:
    offer = Offer.with_root(
        offer_id="of_1",
        scenario="acme",
        amount="1.00",
        currency="USD",
        description="d",
        expires_at="2026-01-01T00:00:00Z",
        accepts=["voucher"],
    )
    data = {**offer.to_json(), "amount": "2.00"}
    with pytest.raises(ValidationError) as caught:
        Offer.parse(data)
    cause = caught.value.errors()[0]["ctx"]["error"]
    assert isinstance(cause, RootMismatchError)
    assert (cause.kind, cause.expected, cause.found) == ("kestrel.offer", root_of(data), offer.root)


def test_parse_accepts_data_text_and_bytes() -> None:
    built = Conformance.with_root(checks=_checks())
    data = built.to_json()
    text = canonical_json(data)
    assert Conformance.parse(data) == Conformance.parse(text) == Conformance.parse(text.decode())


def test_strict_types_refuse_coercion() -> None:
    with pytest.raises(ValidationError):
        ConformanceCheck.parse({"id": "x", "passed": "true", "detail": "d"})
    with pytest.raises(ValidationError):
        ScenarioRef.parse({"id": 7, "root": "sha256:" + "0" * 64})


class _Texted(ProtocolModel):
    label: str
    count: int
    parts: tuple[dict[str, Any], ...] = ()
    note: str | None = None


@pytest.mark.parametrize(
    "label",
    ["plain", 'quote " backslash \\ é ✓ \u2028 \x7f', "controls \x00\x01\x1f\t\n", "\U0001f600"],
)
def test_to_json_text_is_the_compact_json_of_to_json(label: str) -> None:
    obj = _Texted(
        label=label, count=-(2**60), parts=({"k": [True, None, "é"]},), extraMember={"x": 1}
    )
    assert obj.to_json_text() == json.dumps(
        obj.to_json(), ensure_ascii=False, separators=(",", ":")
    )


def test_to_json_text_of_a_lone_surrogate_is_still_the_compact_json() -> None:
    obj = _Texted(label="a\ud800b", count=1)
    assert obj.to_json_text() == json.dumps(
        obj.to_json(), ensure_ascii=False, separators=(",", ":")
    )
    assert "note" not in obj.to_json_text()  # only the members it carries
