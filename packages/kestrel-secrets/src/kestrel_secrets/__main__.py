"""``python -m kestrel_secrets``: the ``kestrel-secrets`` script without an install step."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
