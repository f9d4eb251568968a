"""The SDK's typed methods for the tools ``client.py`` does not write by hand.

Generated from the surface (``kestrel_protocol.surface.SURFACE``) by
``uv run python -m kestrel_sdk.generate``: do not edit. ``tests/test_surface.py`` fails
while it is stale.
"""

from __future__ import annotations

from typing import Any

from kestrel_protocol import ProtocolModel

__all__ = ["SdkToolMethods", "SessionToolMethods"]


class SdkToolMethods:
    """Typed methods of ``KestrelSdk``, one a tool."""

    async def run(self, method: str, **arguments: Any) -> ProtocolModel:
        raise NotImplementedError


class SessionToolMethods:
    """Typed methods of ``KestrelSession``, one a tool (the session is its own)."""

    async def run(self, method: str, **arguments: Any) -> ProtocolModel:
        raise NotImplementedError
