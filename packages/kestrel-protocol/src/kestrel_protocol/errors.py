"""Refusal codes and the one exception base every Kestrel package's typed errors share.

Every face (SDK, CLI, MCP, HTTP) reports a refusal with the same three members, so a
caller can switch on ``code`` whichever way it reached Kestrel.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["KestrelError", "Refusal", "RefusalCode"]


class RefusalCode(StrEnum):
    """The closed list of refusal codes of docs/spec.md §6 (and §13); faces never invent others."""

    INVALID_SOURCE = "INVALID_SOURCE"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    UNKNOWN_SCENARIO = "UNKNOWN_SCENARIO"
    UNKNOWN_SESSION = "UNKNOWN_SESSION"
    SESSION_CLOSED = "SESSION_CLOSED"
    SESSION_STOOD_DOWN = "SESSION_STOOD_DOWN"
    UNKNOWN_ARTIFACT = "UNKNOWN_ARTIFACT"
    UNKNOWN_OPERATION = "UNKNOWN_OPERATION"
    FORBIDDEN = "FORBIDDEN"
    PAYMENT_INVALID = "PAYMENT_INVALID"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    SECRET_KEY_INVALID = "SECRET_KEY_INVALID"
    SECRET_KEY_LIVE = "SECRET_KEY_LIVE"
    SECRET_STORE_UNAVAILABLE = "SECRET_STORE_UNAVAILABLE"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    """Arguments that do not fit the call (docs/spec.md §13): MCP -32602, HTTP 400, on
    every face."""
    SCENARIO_SEALED = "SCENARIO_SEALED"
    """A sealed scenario's tape: no face serves it (HTTP 403)."""
    BAR_NOT_PUBLISHED = "BAR_NOT_PUBLISHED"
    """A forward scenario's next bar is not published yet: retryable (``detail.retryable``
    is true); nothing was applied (HTTP 409)."""


class Refusal(BaseModel):
    """The wire shape of a typed refusal: ``{code, message, detail}`` on every face."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)

    code: str = Field(min_length=1)
    message: str
    detail: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The refusal as a JSON object, members in a stable order."""
        return self.model_dump(mode="json")


class KestrelError(Exception):
    """Base of every typed Kestrel refusal raised in Python.

    ``code`` is a plain string (normally a :class:`RefusalCode` value) so that a code
    from a newer backend still round-trips through an older client.
    """

    def __init__(self, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = str(code)
        self.message = message
        self.detail: dict[str, Any] = dict(detail or {})

    @property
    def refusal(self) -> Refusal:
        """This error as the wire object every face sends."""
        return Refusal(code=self.code, message=self.message, detail=self.detail)

    @classmethod
    def from_refusal(cls, refusal: Refusal) -> KestrelError:
        """Rebuild a typed error (of the calling subclass) from a received refusal."""
        return cls(refusal.code, refusal.message, refusal.detail)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"
