"""Where Kestrel keeps its operator files: ``$KESTREL_HOME``, else ``~/.kestrel``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kestrel_protocol import kestrel_home as shared_kestrel_home

__all__ = ["kestrel_home"]


def kestrel_home(
    home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The Kestrel home directory: ``home`` if given, else ``$KESTREL_HOME``, else ``~/.kestrel``.

    The rule is ``kestrel_protocol.kestrel_home``'s (the runtime and the door share it);
    here the path is also made absolute, but not resolved, so a symlinked home keeps the
    name the operator gave it.
    """
    return Path(os.path.abspath(shared_kestrel_home(home, env)))
