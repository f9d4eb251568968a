"""The tool table: names, descriptions, annotations and schemas of every Kestrel tool.

Names use underscores because Claude Desktop and claude.ai check every tool name
against ``^[a-zA-Z0-9_-]{1,64}$`` and withhold the whole server when one fails; the
seed's dotted spellings stay accepted by ``tools/call`` as unlisted aliases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    OperationResumption,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    ValidationReport,
)
from pydantic import BaseModel

from .arguments import (
    CatalogArgs,
    GradeArgs,
    OpenArgs,
    ResumeArgs,
    SecretKeyArgs,
    SecretSetArgs,
    SessionArgs,
    SubmitArgs,
    ValidateArgs,
)
from .schemas import input_schema, output_schema, union_output_schema
from .secrets import SecretNames, SecretRemoved, SecretWritten

__all__ = ["SECRET_TOOLS", "TOOLS", "ToolSpec", "tool_aliases"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as ``tools/list`` shows it, plus what its arguments parse into."""

    name: str
    alias: str
    title: str
    description: str
    args: type[BaseModel]
    output: dict[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool

    def listing(self) -> dict[str, Any]:
        """The MCP ``Tool`` object."""
        annotations: dict[str, Any] = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "openWorldHint": False,
        }
        if not self.read_only:
            annotations["destructiveHint"] = self.destructive
            annotations["idempotentHint"] = self.idempotent
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input_schema(self.args),
            "outputSchema": self.output,
            "annotations": annotations,
        }


_GRADE_OR_OPERATION = union_output_schema(
    GradeResult,
    OperationResumption,
    description=(
        "A kestrel.grade, or a kestrel.operation when grading is still running "
        "(call kestrel_operation_resume with its token)."
    ),
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="kestrel_catalog",
        alias="kestrel.catalog",
        title="Kestrel catalog",
        description=(
            "List the scenarios you can open a session on (id, symbols, interval, bars) and "
            "the four Kestrel statement kinds with their syntax and an example."
        ),
        args=CatalogArgs,
        output=output_schema(Catalog),
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_validate",
        alias="kestrel.validate",
        title="Validate Kestrel source",
        description=(
            "Check Kestrel source without applying it. Returns a kestrel.validation report with "
            "line/column diagnostics (K1xx syntax; with a scenario also K2xx symbol/tick/lot)."
        ),
        args=ValidateArgs,
        output=output_schema(ValidationReport),
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_session_open",
        alias="kestrel.session.open",
        title="Open a paper-trading session",
        description=(
            "Open a session on a scenario; bar 0 is complete. Returns {gated:false, sessionId} "
            "(pass sessionId to every session tool) or {gated:true, payment: offer} when the "
            "open needs payment (retry with payment:{offerId, voucher}). The label of an open "
            "session resumes it."
        ),
        args=OpenArgs,
        output=output_schema(SessionOpened),
        read_only=False,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        name="kestrel_session_submit",
        alias="kestrel.session.submit",
        title="Submit Kestrel statements",
        description=(
            "Apply Kestrel source to a session atomically (all statements or none). Returns "
            "the submit response: the pentad that binds it and the new frame (clock, marks, "
            "account, positions, open orders, events). disposition 'stood-down' means the "
            "session stopped (stand down, max drawdown or end of tape)."
        ),
        args=SubmitArgs,
        output=output_schema(SessionResponse),
        read_only=False,
        destructive=False,
        idempotent=False,
    ),
    ToolSpec(
        name="kestrel_session_frame",
        alias="kestrel.session.frame",
        title="Current frame",
        description="The session's latest frame and its root, without changing anything.",
        args=SessionArgs,
        output=output_schema(Delivery),
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_session_blotter",
        alias="kestrel.session.blotter",
        title="Blotter",
        description="Every order (open and closed) and every fill of the session so far.",
        args=SessionArgs,
        output=output_schema(Blotter),
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_session_close",
        alias="kestrel.session.close",
        title="Close a session",
        description=(
            "Close the session for good (no more submits) and store its record; returns the "
            "kestrel.session record (pentad roots, head frame root, blotter root)."
        ),
        args=SessionArgs,
        output=output_schema(SessionRecord),
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    ToolSpec(
        name="kestrel_grade",
        alias="kestrel.grade",
        title="Grade a session",
        description=(
            "Grade a session (normally after kestrel_session_close): metrics (pnl, return, "
            "max drawdown, sharpe, fees, exposure, turnover) and conformance checks, verifiable "
            "from its artifacts. A long grade "
            "returns a kestrel.operation; continue it with kestrel_operation_resume."
        ),
        args=GradeArgs,
        output=_GRADE_OR_OPERATION,
        read_only=False,
        destructive=False,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_operation_resume",
        alias="kestrel.operation.resume",
        title="Resume an operation",
        description=(
            "Continue a long operation by its token (wait resumeAfterMs first). Returns the "
            "finished result or another kestrel.operation."
        ),
        args=ResumeArgs,
        output=_GRADE_OR_OPERATION,
        read_only=False,
        destructive=False,
        idempotent=True,
    ),
)

SECRET_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="kestrel_secrets_set",
        alias="kestrel.secrets.set",
        title="Set an operator secret",
        description=(
            "Store a paper-only operator secret in the local store. Answers with the key and "
            "where it is stored, never the value. Keys naming LIVE are refused."
        ),
        args=SecretSetArgs,
        output=output_schema(SecretWritten),
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_secrets_unset",
        alias="kestrel.secrets.unset",
        title="Remove an operator secret",
        description="Remove a secret from the local store; says whether it was there.",
        args=SecretKeyArgs,
        output=output_schema(SecretRemoved),
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="kestrel_secrets_list",
        alias="kestrel.secrets.list",
        title="List operator secrets",
        description="The names of the stored secrets and where they live (never a value).",
        args=CatalogArgs,
        output=output_schema(SecretNames),
        read_only=True,
        destructive=False,
        idempotent=True,
    ),
)


def tool_aliases(specs: tuple[ToolSpec, ...]) -> dict[str, ToolSpec]:
    """Every accepted call name (listed and dotted) to its tool."""
    table: dict[str, ToolSpec] = {}
    for spec in specs:
        table[spec.name] = spec
        table[spec.alias] = spec
    return table
