"""Refusal codes are docs/spec.md §6's closed list (with §13's INVALID_ARGUMENT, the sealed
scenarios' SCENARIO_SEALED and §15's BAR_NOT_PUBLISHED); one exception base."""

from __future__ import annotations

import pytest
from kestrel_protocol import KestrelError, Refusal, RefusalCode
from pydantic import ValidationError

SPEC_CODES = [
    "INVALID_SOURCE",
    "LIMIT_EXCEEDED",
    "UNKNOWN_SCENARIO",
    "UNKNOWN_SESSION",
    "SESSION_CLOSED",
    "SESSION_STOOD_DOWN",
    "UNKNOWN_ARTIFACT",
    "UNKNOWN_OPERATION",
    "FORBIDDEN",
    "PAYMENT_INVALID",
    "APPROVAL_REQUIRED",
    "SECRET_KEY_INVALID",
    "SECRET_KEY_LIVE",
    "SECRET_STORE_UNAVAILABLE",
    "BACKEND_UNAVAILABLE",
    "INVALID_ARGUMENT",
    "SCENARIO_SEALED",
    "BAR_NOT_PUBLISHED",
]


def test_refusal_codes_are_exactly_the_spec_list() -> None:
    assert [code.value for code in RefusalCode] == SPEC_CODES
    assert all(code.name == code.value for code in RefusalCode)


def test_refusal_codes_are_strings_on_the_wire() -> None:
    refusal = Refusal(code=RefusalCode.UNKNOWN_SESSION, message="no session ks_1")
    assert refusal.to_json() == {
        "code": "UNKNOWN_SESSION",
        "message": "no session ks_1",
        "detail": {},
    }


class UnknownSession(KestrelError):
    """A typed error of some package, sharing the one base."""


def test_kestrel_error_carries_code_message_and_detail() -> None:
    error = KestrelError(RefusalCode.LIMIT_EXCEEDED, "qty 5000 > max 1000", {"max": 1000})
    assert error.code == "LIMIT_EXCEEDED"
    assert type(error.code) is str
    assert error.message == "qty 5000 > max 1000"
    assert error.detail == {"max": 1000}
    assert str(error) == "LIMIT_EXCEEDED: qty 5000 > max 1000"
    assert "LIMIT_EXCEEDED" in repr(error)


def test_detail_defaults_to_empty_and_is_a_copy() -> None:
    assert KestrelError("FORBIDDEN", "no").detail == {}
    given = {"scope": "kestrel:trade"}
    error = KestrelError("FORBIDDEN", "no", given)
    given["scope"] = "changed"
    assert error.detail == {"scope": "kestrel:trade"}


def test_error_converts_to_the_wire_refusal_and_back() -> None:
    error = UnknownSession("UNKNOWN_SESSION", "no session ks_9", {"session": "ks_9"})
    refusal = error.refusal
    assert refusal.to_json() == {
        "code": "UNKNOWN_SESSION",
        "message": "no session ks_9",
        "detail": {"session": "ks_9"},
    }
    back = UnknownSession.from_refusal(Refusal.model_validate(refusal.to_json()))
    assert type(back) is UnknownSession
    assert (back.code, back.message, back.detail) == (error.code, error.message, error.detail)


def test_a_code_from_a_newer_backend_round_trips() -> None:
    refusal = Refusal.model_validate(
        {"code": "SOMETHING_NEW", "message": "m", "detail": {}, "hint": "retry later"}
    )
    assert KestrelError.from_refusal(refusal).code == "SOMETHING_NEW"
    assert refusal.to_json()["hint"] == "retry later"  # unknown members are kept


def test_refusal_needs_a_code_and_is_immutable() -> None:
    with pytest.raises(ValidationError):
        Refusal(code="", message="m")
    with pytest.raises(ValidationError):
        Refusal.model_validate({"message": "m"})
    refusal = Refusal(code="FORBIDDEN", message="m")
    with pytest.raises(ValidationError, match="frozen"):
        refusal.code = "OTHER"  # type: ignore[misc]
