"""Transports: the runtime in-process, or a door over HTTP."""

from __future__ import annotations

from .local import LocalTransport, local_transport

__all__ = ["LocalTransport", "local_transport"]
