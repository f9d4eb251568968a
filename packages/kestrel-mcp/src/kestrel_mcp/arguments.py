"""The argument shapes of the tools; their JSON Schemas are the tools' ``inputSchema``.

Unknown arguments are refused (``additionalProperties: false``): an agent that writes
``session_id`` for ``sessionId`` learns it at once instead of acting on a default.
"""

from __future__ import annotations

from kestrel_protocol import Payment
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "CatalogArgs",
    "GradeArgs",
    "OpenArgs",
    "ResumeArgs",
    "SecretKeyArgs",
    "SecretSetArgs",
    "SessionArgs",
    "SubmitArgs",
    "ValidateArgs",
]


class _Args(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=False,
        validate_by_alias=True,
    )


class CatalogArgs(_Args):
    """No arguments: the catalog of this process."""


class ValidateArgs(_Args):
    """Kestrel source to check, optionally against a scenario (symbols, ticks, lots)."""

    source: str = Field(description="Kestrel source, one statement per line.")
    scenario: str | None = Field(
        default=None, description="A scenario id; adds the symbol/tick/lot checks."
    )


class OpenArgs(_Args):
    """Open (or, with the label of an open session, resume) a session."""

    scenario: str = Field(description="A scenario id from kestrel_catalog, e.g. acme-trend.")
    label: str | None = Field(
        default=None,
        description="Names the session; the same label resumes it. Omit for the next free one.",
    )
    payment: Payment | None = Field(
        default=None, description="Only for a gated open: {offerId, voucher} for the offer."
    )


class SessionArgs(_Args):
    """A session by its id."""

    session_id: str = Field(description="The sessionId returned by kestrel_session_open.")


class SubmitArgs(_Args):
    """Kestrel source applied atomically to a session."""

    session_id: str = Field(description="The sessionId returned by kestrel_session_open.")
    source: str = Field(
        description="Kestrel statements, one per line, e.g. 'buy 10 ACME\\nadvance 5'."
    )


class GradeArgs(SessionArgs):
    """Grade a closed session."""


class ResumeArgs(_Args):
    """Continue a long operation."""

    token: str = Field(description="The token of a kestrel.operation result.")


class SecretSetArgs(_Args):
    """Store a paper-only operator secret."""

    key: str = Field(description="Upper-case name, [A-Z_][A-Z0-9_]*; never one naming LIVE.")
    value: str = Field(description="The value; it is stored, never echoed back.")


class SecretKeyArgs(_Args):
    """A secret by name."""

    key: str = Field(description="Upper-case name, [A-Z_][A-Z0-9_]*.")
