"""Each port is a runtime-checkable Protocol whose docstring states its contract."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import pytest
from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    Offer,
    OperationResumption,
    Payment,
    Proof,
    Scenario,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    ValidationReport,
    VerificationReport,
)
from kestrel_protocol.ports import (
    ArtifactStore,
    Grant,
    GrantVerifier,
    LiveTurn,
    RunContext,
    SecretStore,
    SecretWrite,
    SessionGate,
    Transport,
    TurnCredentialPort,
    TurnTools,
)

PORTS: list[type[Any]] = [
    Transport,
    TurnTools,
    TurnCredentialPort,
    GrantVerifier,
    SecretStore,
    ArtifactStore,
    SessionGate,
]


class _Tools:
    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return {"content": [], "isError": False}


CTX = RunContext(venue="harness", presence="absent", principal="p1")


class _Credentials:
    async def resolve(self, token: str) -> LiveTurn | None:
        return LiveTurn(CTX, _Tools()) if token == "good" else None


class _Verifier:
    async def verify(self, token: str) -> Grant | None:
        return None


class _Secrets:
    @property
    def location(self) -> str:
        return "keyring:kestrel"

    def set(self, key: str, value: str) -> SecretWrite:
        return SecretWrite(key, self.location)

    def unset(self, key: str) -> SecretWrite:
        return SecretWrite(key, self.location, removed=True)

    def names(self) -> list[str]:
        return []

    def reveal(self, key: str) -> str | None:
        return None


class _Artifacts:
    def put(self, obj: Mapping[str, Any]) -> str:
        return "sha256:" + "0" * 64

    def get(self, root: str) -> dict[str, Any] | None:
        return None

    def has(self, root: str) -> bool:
        return False


class _Gate:
    def check(self, principal: str, scenario: str, payment: Payment | None) -> Offer | None:
        return None


class _Transport:
    async def catalog(self) -> Catalog:
        raise NotImplementedError

    async def scenario(self, scenario_id: str) -> Scenario:
        raise NotImplementedError

    async def tape(self, scenario_id: str) -> str:
        raise NotImplementedError

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        raise NotImplementedError

    async def open_session(
        self, scenario: str, label: str | None = None, payment: Payment | None = None
    ) -> SessionOpened:
        raise NotImplementedError

    async def submit(self, session_id: str, source: str) -> SessionResponse:
        raise NotImplementedError

    async def frame(self, session_id: str) -> Delivery:
        raise NotImplementedError

    async def blotter(self, session_id: str) -> Blotter:
        raise NotImplementedError

    async def close(self, session_id: str) -> SessionRecord:
        raise NotImplementedError

    async def grade(self, session_id: str) -> GradeResult | OperationResumption:
        raise NotImplementedError

    async def resume(self, token: str) -> GradeResult | OperationResumption:
        raise NotImplementedError

    async def artifact(self, root: str) -> dict[str, Any]:
        raise NotImplementedError

    async def verify(self, grade: GradeResult) -> VerificationReport:
        raise NotImplementedError

    async def proof(self, session_id: str, embed_tape: bool = False) -> Proof:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


CONFORMING: list[tuple[type[Any], object]] = [
    (Transport, _Transport()),
    (TurnTools, _Tools()),
    (TurnCredentialPort, _Credentials()),
    (GrantVerifier, _Verifier()),
    (SecretStore, _Secrets()),
    (ArtifactStore, _Artifacts()),
    (SessionGate, _Gate()),
]


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.__name__)
def test_port_is_a_runtime_checkable_protocol_with_a_contract(port: type[Any]) -> None:
    assert getattr(port, "_is_protocol", False)
    assert getattr(port, "_is_runtime_protocol", False)
    doc = inspect.getdoc(port) or ""
    assert len(doc.split()) >= 15, f"{port.__name__} has no contract docstring"
    assert any(word in doc for word in ("never", "Never", "returns", "raises", "idempotent"))


@pytest.mark.parametrize(("port", "impl"), CONFORMING, ids=lambda v: getattr(v, "__name__", ""))
def test_a_minimal_conforming_class_passes_isinstance(port: type[Any], impl: object) -> None:
    assert isinstance(impl, port)


@pytest.mark.parametrize(("port", "impl"), CONFORMING, ids=lambda v: getattr(v, "__name__", ""))
def test_an_unrelated_object_is_not_a_port(port: type[Any], impl: object) -> None:
    assert not isinstance(object(), port)
    others = [other for other, candidate in CONFORMING if candidate is not impl]
    # a class lacking the port's methods does not pass for it (e.g. a gate is no store)
    assert any(not isinstance(impl, other) for other in others)


def test_key_contracts_are_stated() -> None:
    resolve_doc = inspect.getdoc(TurnCredentialPort.resolve) or ""
    assert "Never raises" in resolve_doc
    secrets_doc = inspect.getdoc(SecretStore) or ""
    assert "no method returns a value to a face" in secrets_doc
    assert "raises" in (inspect.getdoc(Transport) or "")
    assert "Never raises" in (inspect.getdoc(GrantVerifier.verify) or "")


async def _resolve(port: TurnCredentialPort, token: str) -> LiveTurn | None:
    return await port.resolve(token)


@pytest.mark.anyio
async def test_ports_are_used_through_their_protocol_type() -> None:
    turn = await _resolve(_Credentials(), "good")
    assert turn is not None
    assert turn.ctx.principal == "p1"
    assert await turn.tools.call("kestrel_catalog", {}) == {"content": [], "isError": False}
    assert await _resolve(_Credentials(), "garbage") is None


def test_value_types_are_immutable() -> None:
    grant = Grant(principal="p1", scopes=frozenset({"kestrel:read"}), kind="oauth")
    with pytest.raises(AttributeError):
        grant.principal = "p2"  # type: ignore[misc]
    assert CTX.scopes == frozenset()
    assert SecretWrite("KEY", "/x/.env").to_json() == {"key": "KEY", "path": "/x/.env"}
    assert SecretWrite("KEY", "/x/.env", removed=False).to_json()["removed"] is False
