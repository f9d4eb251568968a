from __future__ import annotations

from kestrel_protocol.mcp import (
    CLIENT_CAPABILITIES_KEY,
    HANDSHAKE_VERSIONS,
    MODERN_REMOVED_METHODS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION_KEY,
    declares_modern,
    meta_of,
)


def test_handshake_versions_run_oldest_to_latest() -> None:
    # ``initialize`` falls back to the last one, so the order is the contract.
    assert list(HANDSHAKE_VERSIONS) == sorted(HANDSHAKE_VERSIONS)


def test_modern_era_is_disjoint_from_the_handshake_era() -> None:
    assert MODERN_VERSIONS
    assert not set(MODERN_VERSIONS) & set(HANDSHAKE_VERSIONS)


def test_modern_era_removed_the_handshake_and_subscriptions() -> None:
    assert {"initialize", "ping", "resources/subscribe"} <= MODERN_REMOVED_METHODS
    assert "tools/list" not in MODERN_REMOVED_METHODS


def test_meta_of_reads_params_meta_only_when_both_are_objects() -> None:
    assert meta_of({"_meta": {"a": 1}}) == {"a": 1}
    assert meta_of({"_meta": []}) is None
    assert meta_of({}) is None
    assert meta_of(["_meta"]) is None
    assert meta_of(None) is None


def test_a_request_is_modern_only_when_its_meta_names_a_modern_version() -> None:
    assert declares_modern({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}})
    assert not declares_modern({"_meta": {PROTOCOL_VERSION_KEY: "2025-11-25"}})
    assert not declares_modern({"_meta": {PROTOCOL_VERSION_KEY: ["2026-07-28"]}})
    assert not declares_modern({"_meta": {CLIENT_CAPABILITIES_KEY: {}}})
    assert not declares_modern({"protocolVersion": "2026-07-28"})
    assert not declares_modern("2026-07-28")
