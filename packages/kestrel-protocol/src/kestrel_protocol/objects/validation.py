"""The result of validating Kestrel source without applying it."""

from __future__ import annotations

from typing import Literal

from ..model import ProtocolModel

__all__ = ["Diagnostic", "ValidationReport"]


class Diagnostic(ProtocolModel):
    """A located finding in a source: 1-based line and column, a K-code."""

    line: int
    column: int
    code: str
    severity: Literal["error", "warning"]
    message: str


class ValidationReport(ProtocolModel):
    """``ok`` is true when no diagnostic is an error."""

    kind: Literal["kestrel.validation"] = "kestrel.validation"
    ok: bool
    statements: int
    diagnostics: list[Diagnostic]
