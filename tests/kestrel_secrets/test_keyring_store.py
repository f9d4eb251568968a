"""KeyringSecretStore: values in the keyring, a reserved name index, honest failures."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import keyring
import pytest
from kestrel_protocol import RefusalCode
from kestrel_protocol.ports import SecretStore, SecretWrite
from kestrel_secrets import (
    INDEX_ENTRY,
    KEY_GRAMMAR,
    KeyringSecretStore,
    SecretStoreError,
    keyring_backend_status,
)
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyrings.alt.file import PlaintextKeyring  # type: ignore[import-untyped]


def test_the_index_entry_can_never_be_a_key() -> None:
    assert re.fullmatch(KEY_GRAMMAR, INDEX_ENTRY) is None


def test_set_list_reveal_unset_with_an_in_memory_backend(memory_keyring: KeyringBackend) -> None:
    store = KeyringSecretStore()
    assert isinstance(store, SecretStore)
    assert store.backend is memory_keyring
    assert store.location == "keyring:kestrel"
    assert store.set("ALPACA_KEY_ID", "PK-1") == SecretWrite("ALPACA_KEY_ID", "keyring:kestrel")
    store.set("ALPACA_SECRET", 'multi\nline "q" $X')
    store.set("ALPACA_KEY_ID", "PK-2")
    assert store.names() == ["ALPACA_KEY_ID", "ALPACA_SECRET"]
    assert memory_keyring.get_password("kestrel", "ALPACA_KEY_ID") == "PK-2"
    assert store.reveal("ALPACA_SECRET") == 'multi\nline "q" $X'
    assert (
        memory_keyring.get_password("kestrel", INDEX_ENTRY) == '["ALPACA_KEY_ID", "ALPACA_SECRET"]'
    )
    assert store.unset("ALPACA_KEY_ID") == SecretWrite(
        "ALPACA_KEY_ID", "keyring:kestrel", removed=True
    )
    assert store.unset("ALPACA_KEY_ID").removed is False
    assert store.names() == ["ALPACA_SECRET"]
    assert memory_keyring.get_password("kestrel", "ALPACA_KEY_ID") is None


def test_another_service_is_a_separate_namespace(memory_keyring: KeyringBackend) -> None:
    KeyringSecretStore().set("A", "1")
    other = KeyringSecretStore("kestrel-test")
    assert other.location == "keyring:kestrel-test"
    assert other.names() == []
    assert other.reveal("A") is None


def test_refused_keys_touch_nothing(memory_keyring: Any) -> None:
    store = KeyringSecretStore()
    for key, code in (("ALPACA_LIVE_KEY", "SECRET_KEY_LIVE"), (INDEX_ENTRY, "SECRET_KEY_INVALID")):
        with pytest.raises(SecretStoreError) as info:
            store.set(key, "v")
        assert info.value.code == code
    with pytest.raises(SecretStoreError) as info:
        store.unset(INDEX_ENTRY)
    assert info.value.code == "SECRET_KEY_INVALID"
    assert memory_keyring.entries == {}


def test_a_live_key_put_in_the_keyring_by_hand_can_be_removed(memory_keyring: Any) -> None:
    memory_keyring.set_password("kestrel", "ALPACA_LIVE_KEY", "pasted-by-hand")
    store = KeyringSecretStore()
    with pytest.raises(SecretStoreError) as info:
        store.set("ALPACA_LIVE_KEY", "v")
    assert info.value.code == "SECRET_KEY_LIVE"
    assert store.unset("ALPACA_LIVE_KEY").removed is True
    assert memory_keyring.get_password("kestrel", "ALPACA_LIVE_KEY") is None


def test_a_set_that_does_not_read_back_is_not_reported_as_success(memory_keyring: Any) -> None:
    memory_keyring.tamper = "something else"
    store = KeyringSecretStore()
    with pytest.raises(SecretStoreError) as info:
        store.set("TOKEN", "canary-readback")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "canary-readback" not in str(info.value)
    assert "TOKEN" in info.value.message
    memory_keyring.tamper = None
    assert store.names() == []


def test_a_corrupt_index_is_reported_not_guessed(memory_keyring: KeyringBackend) -> None:
    memory_keyring.set_password("kestrel", INDEX_ENTRY, "{not json")
    with pytest.raises(SecretStoreError) as info:
        KeyringSecretStore().names()
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert INDEX_ENTRY in info.value.message


@pytest.mark.parametrize("backend", [fail.Keyring, null.Keyring])
def test_no_recommended_backend_is_secret_store_unavailable(
    backend: type[KeyringBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    keyring.set_keyring(backend())
    assert keyring_backend_status()[0] is None
    with pytest.raises(SecretStoreError) as info:
        KeyringSecretStore()
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "no recommended OS keyring backend" in info.value.message
    assert "KESTREL_SECRET_STORE=file" in info.value.message
    with pytest.raises(SecretStoreError):
        KeyringSecretStore(backend=backend())


def test_a_non_recommended_backend_needs_the_operator_to_choose_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keyring.set_keyring(PlaintextKeyring())
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    backend, why = keyring_backend_status()
    assert backend is None
    assert "PlaintextKeyring" in why
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    backend, why = keyring_backend_status()
    assert isinstance(backend, PlaintextKeyring)
    assert "explicitly" in why


def test_a_real_file_backed_keyring_in_a_temporary_home(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = Path.home()
    assert home.is_relative_to(tmp_path_factory.getbasetemp())  # the conftest's temporary HOME
    store = KeyringSecretStore(backend=PlaintextKeyring(), lock_path=tmp_path / "k.lock")
    store.set("ALPACA_KEY_ID", "PK-file-backed")
    store.set("ALPACA_SECRET", "s3cr3t with spaces")
    # A fresh backend and store read what the first one wrote to disk.
    again = KeyringSecretStore(backend=PlaintextKeyring())
    assert again.names() == ["ALPACA_KEY_ID", "ALPACA_SECRET"]
    assert again.reveal("ALPACA_SECRET") == "s3cr3t with spaces"
    keyring_file = Path(PlaintextKeyring().file_path)
    assert keyring_file.is_relative_to(home)
    assert keyring_file.is_file()
    assert again.unset("ALPACA_KEY_ID").removed is True
    assert KeyringSecretStore(backend=PlaintextKeyring()).names() == ["ALPACA_SECRET"]
    assert PlaintextKeyring().get_password("kestrel", "ALPACA_KEY_ID") is None


def test_a_failing_backend_is_unavailable_by_type_not_by_message(memory_keyring: Any) -> None:
    def explode(service: str, username: str, password: str) -> None:
        raise keyring.errors.KeyringLocked("locked; value was canary-in-backend-message")

    memory_keyring.set_password = explode
    with pytest.raises(SecretStoreError) as info:
        KeyringSecretStore().set("TOKEN", "canary-in-backend-message")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "KeyringLocked" in info.value.message
    assert "canary" not in str(info.value)
    assert info.value.__cause__ is None
