"""Transports: the runtime in-process, or a door over HTTP."""

from __future__ import annotations

from .local import LocalTransport, local_transport
from .remote import RemoteTransport, remote_transport

__all__ = ["LocalTransport", "RemoteTransport", "local_transport", "remote_transport"]
