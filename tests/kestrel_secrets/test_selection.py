"""KESTREL_SECRET_STORE picks the store, and the choice says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import RefusalCode
from kestrel_secrets import (
    DotenvSecretStore,
    KeyringSecretStore,
    SecretStoreError,
    open_secret_store,
    select_secret_store,
)
from keyring.backend import KeyringBackend


def test_file_mode_uses_the_given_home(tmp_path: Path) -> None:
    choice = select_secret_store(tmp_path / "h", {"KESTREL_SECRET_STORE": "file"})
    assert isinstance(choice.store, DotenvSecretStore)
    assert choice.kind == "file"
    assert choice.store.location == str(tmp_path / "h" / ".env")
    assert choice.to_json()["store"] == "file"


def test_home_falls_back_to_kestrel_home_then_dot_kestrel(tmp_path: Path) -> None:
    env = {"KESTREL_SECRET_STORE": "file", "KESTREL_HOME": str(tmp_path / "kh")}
    assert open_secret_store(env=env).location == str(tmp_path / "kh" / ".env")
    assert open_secret_store(env={"KESTREL_SECRET_STORE": "file"}).location == str(
        Path.home() / ".kestrel" / ".env"
    )


@pytest.mark.parametrize("mode", [None, "", "auto", " AUTO "])
def test_auto_without_a_usable_keyring_falls_back_to_the_file_and_says_so(
    mode: str | None, tmp_path: Path
) -> None:
    env = {} if mode is None else {"KESTREL_SECRET_STORE": mode}
    choice = select_secret_store(tmp_path, env)
    assert choice.kind == "file"
    assert choice.mode == "auto"
    assert "no recommended OS keyring backend" in choice.reason
    assert "file store" in choice.reason


def test_auto_with_a_recommended_keyring_uses_it(
    memory_keyring: KeyringBackend, tmp_path: Path
) -> None:
    choice = select_secret_store(tmp_path, {"KESTREL_SECRET_STORE": "auto"})
    assert isinstance(choice.store, KeyringSecretStore)
    assert choice.kind == "keyring"
    assert choice.store.location == "keyring:kestrel"
    assert "recommended" in choice.reason
    choice.store.set("A", "1")
    assert memory_keyring.get_password("kestrel", "A") == "1"
    assert (tmp_path / ".keyring-index.lock").exists()
    assert not (tmp_path / ".env").exists()


def test_keyring_mode_refuses_rather_than_writing_a_file(tmp_path: Path) -> None:
    with pytest.raises(SecretStoreError) as info:
        select_secret_store(tmp_path, {"KESTREL_SECRET_STORE": "keyring"})
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "KESTREL_SECRET_STORE=file" in info.value.message
    assert not tmp_path.joinpath(".env").exists()


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SecretStoreError) as info:
        select_secret_store(tmp_path, {"KESTREL_SECRET_STORE": "vault"})
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "keyring, file or auto" in info.value.message
