"""The shared tool functions: exact result shapes, the same refusals as the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_secrets import (
    SECRET_KEY_INVALID_MESSAGE,
    SECRET_KEY_LIVE_MESSAGE,
    DotenvSecretStore,
    SecretStoreError,
    secret_tool_list,
    secret_tool_set,
    secret_tool_unset,
)


def test_results_have_exactly_the_spec_members_and_no_value(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / ".env")
    path = str(tmp_path / ".env")
    assert secret_tool_set(store, "B_KEY", "canary-tool") == {"key": "B_KEY", "path": path}
    secret_tool_set(store, "A_KEY", "x")
    assert secret_tool_list(store) == {"keys": ["A_KEY", "B_KEY"], "path": path}
    assert secret_tool_unset(store, "B_KEY") == {"key": "B_KEY", "path": path, "removed": True}
    assert secret_tool_unset(store, "B_KEY") == {"key": "B_KEY", "path": path, "removed": False}


@pytest.mark.parametrize(
    ("key", "code", "message"),
    [
        ("ALPACA_LIVE_KEY", "SECRET_KEY_LIVE", SECRET_KEY_LIVE_MESSAGE),
        ("bad key", "SECRET_KEY_INVALID", SECRET_KEY_INVALID_MESSAGE),
        (42, "SECRET_KEY_INVALID", SECRET_KEY_INVALID_MESSAGE),
    ],
)
def test_tool_refusals_are_the_single_sourced_ones(
    key: object, code: str, message: str, tmp_path: Path
) -> None:
    store = DotenvSecretStore(tmp_path / ".env")
    with pytest.raises(SecretStoreError) as on_set:
        secret_tool_set(store, key, "v")
    assert (on_set.value.code, on_set.value.message) == (code, message)
    if code == "SECRET_KEY_LIVE":  # removing one an operator wrote by hand is allowed
        assert secret_tool_unset(store, key)["removed"] is False
    else:
        with pytest.raises(SecretStoreError) as on_unset:
            secret_tool_unset(store, key)
        assert (on_unset.value.code, on_unset.value.message) == (code, message)
    assert not (tmp_path / ".env").exists()


def test_a_non_string_value_is_refused_before_writing(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / ".env")
    with pytest.raises(SecretStoreError):
        secret_tool_set(store, "A", 123)
    assert not (tmp_path / ".env").exists()
