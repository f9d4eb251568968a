"""Every port of ``kestrel_protocol.ports`` is met by the workspace's real adapter.

The ports are runtime-checkable Protocols; these checks bind each one to the adapter
the composition roots plug in, so renaming or dropping a method on either side fails
here (the adapters' behaviour is tested in their own packages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from kestrel_door import (
    DoorStore,
    DoorTurnTools,
    IssuedTokens,
    JwtGrantVerifier,
    TurnCredentials,
    VoucherGate,
    VoucherSigner,
)
from kestrel_protocol.ports import (
    ArtifactStore,
    GrantVerifier,
    RunContext,
    SecretStore,
    SessionGate,
    Transport,
    TurnCredentialPort,
    TurnTools,
)
from kestrel_sdk.runtime.stores.sqlite import SqliteStore
from kestrel_secrets import DotenvSecretStore


def _adapters(home: Path) -> list[tuple[type[Any], object]]:
    door = DoorStore(home / "door.db")
    ctx = RunContext(venue="harness", presence="absent", principal="p1")
    return [
        (TurnTools, DoorTurnTools(ctx, cast(Transport, object()))),
        (TurnCredentialPort, TurnCredentials()),
        (GrantVerifier, IssuedTokens(door)),
        (
            GrantVerifier,
            JwtGrantVerifier(
                issuer="https://issuer.test", jwks_url="https://issuer.test/jwks", audiences=["k"]
            ),
        ),
        (SessionGate, VoucherGate(door, VoucherSigner(b"k" * 32), daily_quota=1)),
        (ArtifactStore, SqliteStore(home / "kestrel")),
        (SecretStore, DotenvSecretStore(home / ".env")),
    ]


def test_each_port_is_met_by_its_adapter_and_by_no_other(tmp_path: Path) -> None:
    adapters = _adapters(tmp_path)
    for port, adapter in adapters:
        assert isinstance(adapter, port), f"{type(adapter).__name__} is no {port.__name__}"
        for other, _ in adapters:
            if other is not port:
                assert not isinstance(adapter, other), f"{type(adapter).__name__} {other}"
    store = next(a for p, a in adapters if p is ArtifactStore)
    cast(SqliteStore, store).close()
