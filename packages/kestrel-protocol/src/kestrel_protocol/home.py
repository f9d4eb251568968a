"""Where Kestrel keeps its files: one rule for every package that reads or writes them.

The runtime's database, the door's database and voucher key, the secrets file and the
demo's reports all live in one directory; were each package to resolve it on its own,
a small difference (``~`` expanded in one, not in another) would split one operator's
state across two directories.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["kestrel_home"]


def kestrel_home(
    home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """``home`` if given, else ``$KESTREL_HOME`` (when non-empty), else ``~/.kestrel``.

    ``~`` is expanded and a relative path is made absolute against the working directory
    (so a process that later changes directory keeps the same home), but symlinks are
    not resolved: a symlinked home keeps the name the operator gave it.
    """
    if home is None:
        value = (os.environ if env is None else env).get("KESTREL_HOME")
        home = value if value else Path.home() / ".kestrel"
    return Path(os.path.abspath(Path(home).expanduser()))
