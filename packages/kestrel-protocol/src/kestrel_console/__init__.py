"""The console scripts' entry points: ``kestrel``, ``kestrel-mcp``, ``kestrel-door`` and
``kestrel-secrets`` (docs/cli.md).

Each script loads its command line here, inside one rule: Ctrl-C while Python is still
loading it (the first second or so of any command) exits 130, quietly, as a shell
expects of an interrupted command, never with a traceback of module loading. Once
loaded, the command's own convention (``kestrel_sdk.cli_convention``) reports what ends
it. This module imports nothing of Kestrel's at its top, so that the rule holds from the
first import on: it is a module of its own, beside ``kestrel_protocol`` (whose loading
is part of what it covers).
"""

from __future__ import annotations

import importlib

__all__ = ["INTERRUPTED_EXIT", "kestrel", "kestrel_door", "kestrel_mcp", "kestrel_secrets"]

INTERRUPTED_EXIT = 130
"""128 + SIGINT: what a shell reports for a command Ctrl-C stopped."""


def _start(target: str) -> None:
    """Load ``module:function`` and call it; Ctrl-C while loading exits 130 quietly."""
    module, _, name = target.partition(":")
    try:
        main = getattr(importlib.import_module(module), name)
    except KeyboardInterrupt:
        raise SystemExit(INTERRUPTED_EXIT) from None
    main()


def kestrel() -> None:
    """The ``kestrel`` console script."""
    _start("kestrel_sdk.cli:main")


def kestrel_mcp() -> None:
    """The ``kestrel-mcp`` console script."""
    _start("kestrel_mcp.cli:main")


def kestrel_door() -> None:
    """The ``kestrel-door`` console script."""
    _start("kestrel_door.cli:main")


def kestrel_secrets() -> None:
    """The ``kestrel-secrets`` console script."""
    _start("kestrel_secrets.cli:main")
