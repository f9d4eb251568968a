"""The key rules: one function decides, with the same code and message everywhere."""

from __future__ import annotations

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_secrets import (
    SECRET_KEY_INVALID_MESSAGE,
    SECRET_KEY_LIVE_MESSAGE,
    SecretStoreError,
    check_operator_secret_key,
    check_secret_value,
)


@pytest.mark.parametrize(
    "key",
    ["ALPACA_KEY_ID", "A", "_", "_PRIVATE", "KEY_2", "X9", "LIV", "LIVID_X", "L_I_V_E"],
)
def test_valid_paper_keys_pass_unchanged(key: str) -> None:
    assert check_operator_secret_key(key) == key


@pytest.mark.parametrize(
    "key",
    [
        "",
        "lower",
        "Mixed_Case",
        "1LEADING_DIGIT",
        "9",
        "WITH SPACE",
        " LEADING",
        "TRAILING ",
        "TAB\tKEY",
        "NEWLINE\n",
        "DASH-KEY",
        "DOT.KEY",
        "KEY=VALUE",
        "\u0410PI_KEY",  # Cyrillic capital A
        "\uff21PI_KEY",  # fullwidth A
        "K\u0415Y",  # Cyrillic capital IE
        "\u0130",  # dotted capital I
        "É",
        "live",
        "alpaca_live_key",
        "LIVE-KEY",
    ],
)
def test_malformed_keys_are_secret_key_invalid(key: str) -> None:
    with pytest.raises(SecretStoreError) as info:
        check_operator_secret_key(key)
    assert info.value.code == RefusalCode.SECRET_KEY_INVALID
    assert info.value.message == SECRET_KEY_INVALID_MESSAGE


@pytest.mark.parametrize("key", ["LIVE", "ALPACA_LIVE_KEY", "X_LIVE", "LIVEKEY", "OLIVE", "_LIVE_"])
def test_keys_naming_live_are_secret_key_live(key: str) -> None:
    with pytest.raises(SecretStoreError) as info:
        check_operator_secret_key(key)
    assert info.value.code == RefusalCode.SECRET_KEY_LIVE
    assert info.value.message == SECRET_KEY_LIVE_MESSAGE
    assert info.value.detail == {"key": key}


@pytest.mark.parametrize("key", [None, 7, b"KEY", ["KEY"]])
def test_non_string_keys_are_secret_key_invalid(key: object) -> None:
    with pytest.raises(SecretStoreError) as info:
        check_operator_secret_key(key)
    assert info.value.code == RefusalCode.SECRET_KEY_INVALID


def test_invalid_key_refusal_does_not_echo_the_key() -> None:
    with pytest.raises(SecretStoreError) as info:
        check_operator_secret_key("TOKEN=hunter2-canary")
    assert "hunter2-canary" not in str(info.value)
    assert "hunter2-canary" not in repr(info.value)
    assert "hunter2-canary" not in str(info.value.refusal.to_json())


def test_refusals_are_kestrel_errors_with_the_wire_shape() -> None:
    with pytest.raises(KestrelError) as info:
        check_operator_secret_key("X_LIVE")
    assert info.value.refusal.to_json() == {
        "code": "SECRET_KEY_LIVE",
        "message": SECRET_KEY_LIVE_MESSAGE,
        "detail": {"key": "X_LIVE"},
    }


def test_values_with_an_unpaired_surrogate_are_refused_without_echo() -> None:
    with pytest.raises(SecretStoreError) as info:
        check_secret_value("canary-\ud800")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "canary" not in str(info.value)
    assert check_secret_value("ok \U0001f600 \x00") == "ok \U0001f600 \x00"
