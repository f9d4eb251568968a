"""Where Kestrel keeps its operator files: ``$KESTREL_HOME``, else ``~/.kestrel``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["kestrel_home"]


def kestrel_home(
    home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The Kestrel home directory: ``home`` if given, else ``$KESTREL_HOME``, else ``~/.kestrel``.

    The path is made absolute but not resolved, so a symlinked home keeps the name
    the operator gave it.
    """
    environ = os.environ if env is None else env
    if home is not None:
        chosen = Path(home)
    elif environ.get("KESTREL_HOME"):
        chosen = Path(environ["KESTREL_HOME"])
    else:
        chosen = Path("~") / ".kestrel"
    return Path(os.path.abspath(chosen.expanduser()))
