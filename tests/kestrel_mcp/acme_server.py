"""Serve the MCP face over stdio on the scripted transport (for subprocess tests).

Usage: python acme_server.py [--newer] [--grade-steps N] [--spin-us N]
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from functools import partial
from pathlib import Path

import anyio
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio


def main() -> None:
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("acme_script", here / "acme_script.py")
    assert spec is not None
    assert spec.loader is not None
    acme = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(acme)
    steps = int(sys.argv[sys.argv.index("--grade-steps") + 1]) if "--grade-steps" in sys.argv else 0
    spin_us = int(sys.argv[sys.argv.index("--spin-us") + 1]) if "--spin-us" in sys.argv else None
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    transport, _ = acme.scripted(newer="--newer" in sys.argv, grade_steps=steps)
    server = create_kestrel_mcp_server(transport, secret_store=acme.MemorySecretStore)
    if spin_us is None:
        anyio.run(serve_stdio, server)
    else:
        anyio.run(partial(serve_stdio, server, spin=spin_us / 1_000_000))


if __name__ == "__main__":
    main()
