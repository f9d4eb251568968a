"""``local_transport``: the runtime in-process. (To be implemented by the runtime work.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kestrel_protocol.ports import SessionGate, Transport

__all__ = ["local_transport"]


def local_transport(
    home: str | Path | None = None,
    catalog_paths: list[str | Path] | None = None,
    principal: str = "local",
    gate: SessionGate | None = None,
    **options: Any,
) -> Transport:
    """The runtime in-process; state persists in ``$KESTREL_HOME/kestrel.db``."""
    raise NotImplementedError("local_transport is being built")
