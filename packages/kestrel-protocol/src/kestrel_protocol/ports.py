"""The ports of the hexagon: what adapters implement and composition roots wire.

Each port is a ``typing.Protocol``; its docstring is its contract. Adapters depend on
these and on nothing of each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .model import ProtocolModel
from .objects.offer import Offer
from .objects.session import Payment
from .wire import Wire

if TYPE_CHECKING:
    from .surface.arguments import Arguments
    from .surface.declare import Tool

__all__ = [
    "ArtifactStore",
    "FeedWaiter",
    "Grant",
    "GrantVerifier",
    "LiveTurn",
    "RunContext",
    "SecretStore",
    "SecretWrite",
    "SessionGate",
    "Transport",
    "TurnCredentialPort",
    "TurnTools",
]


@runtime_checkable
class Transport(Protocol):
    """How a caller reaches a runtime: in-process (local), over HTTP (remote), or a
    script standing in for it (:class:`kestrel_protocol.testing.ScriptedTransport`).

    ``invoke`` runs one tool of the surface with arguments its model already checked
    (``tool.parse`` or ``tool.bind``) and returns the protocol object the runtime
    produced, one of the tool's ``results``, or that object as its JSON text
    (:class:`~kestrel_protocol.wire.Wire`: a face splices the text, a caller reading the
    object builds it); a typed refusal raises a ``KestrelError``
    subclass carrying its code. A transport is bound to one principal; sessions of
    another principal are ``UNKNOWN_SESSION`` to it. A remote caller's transport (the
    door's) reads by root only that principal's artifacts: another's is
    ``UNKNOWN_ARTIFACT`` exactly as a root never stored; an operator's transport on
    their own home reads every one.
    """

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        """Run ``tool`` with ``arguments``; its result (an object or its text), or a
        ``KestrelError``."""
        ...

    async def aclose(self) -> None:
        """Release what the transport holds (a runtime it owns, an HTTP client)."""
        ...


@dataclass(frozen=True, slots=True)
class RunContext:
    """Who is acting, from where: the accountability context of one call."""

    venue: Literal["mcp", "http", "sdk", "cli", "harness"]
    presence: Literal["present", "absent"]
    principal: str
    scopes: frozenset[str] = field(default_factory=frozenset)


@runtime_checkable
class TurnTools(Protocol):
    """A turn's own tool surface. Guard, approval, audit and transcript all happen inside.

    Contract: ``call`` returns an MCP ``CallToolResult`` as JSON data and never raises for
    a refusal (that is a result with ``isError: true``).
    """

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run tool ``name``; returns an MCP ``CallToolResult`` as JSON data. Never raises
        for a refusal (that is a result with ``isError: true``)."""
        ...


@dataclass(frozen=True, slots=True)
class LiveTurn:
    """One live turn as the door sees it: its own context and its own tools."""

    ctx: RunContext
    tools: TurnTools


@runtime_checkable
class TurnCredentialPort(Protocol):
    """Resolves a presented bearer to the live turn it names.

    Contract: ``resolve`` returns the :class:`LiveTurn` or ``None`` and never raises;
    a credential is valid only while its turn is live.
    """

    async def resolve(self, token: str) -> LiveTurn | None:
        """The live turn, or ``None``. Never raises: garbage is simply not a credential."""
        ...


@dataclass(frozen=True, slots=True)
class Grant:
    """What a verified bearer (issued token or OAuth access token) grants."""

    principal: str
    scopes: frozenset[str]
    kind: Literal["issued", "oauth"]
    scenarios: frozenset[str] | None = None
    """The only scenarios of the catalog this grant sees and trades (a trial's, minted for
    one sample); ``None`` for the whole catalog."""
    token_id: str | None = None
    """The issued token's id (the parent of the trials it mints); ``None`` for OAuth."""
    expires_at: str | None = None
    """When the issued token stops being accepted (RFC 3339 UTC, to the second): a trial it
    mints ends no later. ``None``: it never expires, or an OAuth grant (whose access token
    is refreshed: a trial it mints ends by its own expiry or revoke)."""


@runtime_checkable
class GrantVerifier(Protocol):
    """Verifies a bearer token (issued token or OAuth access token) into a :class:`Grant`.

    Contract: returns ``None`` for anything that is not a valid token for this verifier
    (expired, wrong audience, garbage); never raises for bad input and never logs the token.
    """

    async def verify(self, token: str) -> Grant | None:
        """The grant, or ``None`` when the token is not valid for this verifier.
        Never raises for bad input, and never logs the token."""
        ...


@dataclass(frozen=True, slots=True)
class SecretWrite:
    """What a secret write reports: the key and where it went, never the value."""

    key: str
    path: str
    removed: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "path": self.path}
        if self.removed is not None:
            out["removed"] = self.removed
        return out


@runtime_checkable
class SecretStore(Protocol):
    """The operator's paper-only secrets.

    Contract: no method returns a value to a face; ``reveal`` exists only for local
    composition roots (e.g. to read a remote API token) and must never be exposed as
    a verb. Keys are checked by ``check_operator_secret_key`` before any write.
    """

    @property
    def location(self) -> str:
        """Where values live (a file path or ``keyring:<service>``)."""
        ...

    def set(self, key: str, value: str) -> SecretWrite: ...
    def unset(self, key: str) -> SecretWrite: ...
    def names(self) -> list[str]: ...
    def reveal(self, key: str) -> str | None: ...


@runtime_checkable
class ArtifactStore(Protocol):
    """Content-addressed storage of protocol objects.

    ``put`` stores canonical bytes under their root and is idempotent; ``get`` returns
    the object verbatim, or ``None`` when absent; a stored row whose bytes no longer
    match its root is reported as corrupt and never served.
    """

    def put(self, obj: Mapping[str, Any]) -> str: ...
    def get(self, root: str) -> dict[str, Any] | None: ...
    def has(self, root: str) -> bool: ...


@runtime_checkable
class SessionGate(Protocol):
    """Decides whether ``principal`` may open a session now.

    Returns ``None`` to let the open proceed, or an :class:`Offer` that gates it. A
    presented payment that is not valid raises a ``PAYMENT_INVALID`` refusal.
    Called before the session exists; a gate never changes runtime semantics.
    """

    def check(self, principal: str, scenario: str, payment: Payment | None) -> Offer | None: ...


@runtime_checkable
class FeedWaiter(Protocol):
    """Waits for a forward scenario's tape to grow (``advance 1 wait 30s``).

    Contract: ``wait`` returns ``True`` as soon as the scenario's tape holds at least
    ``bars_needed`` bars (published by any process on the store) or its feed is frozen
    (the tape grows no more: the submission then stands down at its end), ``False`` when
    ``seconds`` pass first. It is the composition root's: the runtime never reads a
    clock, so the waiting (and its wall clock) lives outside it.
    """

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool: ...
