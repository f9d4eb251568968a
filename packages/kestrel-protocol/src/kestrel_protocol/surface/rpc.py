"""The JSON-RPC error an MCP method raises, and how a refusal becomes one."""

from __future__ import annotations

from typing import Any

from ..errors import KestrelError
from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, error_response
from .results import ArgumentError

__all__ = ["RpcError"]


class RpcError(Exception):
    """A method that fails as a protocol error: answered as JSON-RPC ``error``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def of_argument(cls, exc: ArgumentError) -> RpcError:
        """-32602 with the refusal (``INVALID_ARGUMENT``, message, detail) as ``data``."""
        return cls(INVALID_PARAMS, exc.message, {"refusal": exc.refusal.to_json()})

    @classmethod
    def of_refusal(cls, exc: KestrelError, what: str = "the call") -> RpcError:
        """A refusal outside ``tools/call`` (no result shape to live in): -32603 naming it."""
        if isinstance(exc, ArgumentError):
            return cls.of_argument(exc)
        return cls(
            INTERNAL_ERROR,
            f"Kestrel refused {what}: {exc.code}: {exc.message}",
            {"refusal": exc.refusal.to_json()},
        )

    def response(self, request_id: Any) -> dict[str, Any]:
        return error_response(request_id, self.code, self.message, self.data).to_json()
