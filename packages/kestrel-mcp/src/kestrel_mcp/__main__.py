"""``python -m kestrel_mcp``: the same as the ``kestrel-mcp`` console script."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
