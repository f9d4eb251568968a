"""Serve the MCP face over stdio on the fake transport (for subprocess tests).

Usage: python fake_server.py [--newer] [--grade-steps N] [--spin-us N]
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
    spec = importlib.util.spec_from_file_location("fake_transport", here / "fake_transport.py")
    assert spec is not None
    assert spec.loader is not None
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    steps = int(sys.argv[sys.argv.index("--grade-steps") + 1]) if "--grade-steps" in sys.argv else 0
    spin_us = int(sys.argv[sys.argv.index("--spin-us") + 1]) if "--spin-us" in sys.argv else None
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    transport = fake.FakeTransport(newer="--newer" in sys.argv, grade_steps=steps)
    server = create_kestrel_mcp_server(transport, secret_store=fake.MemorySecretStore)
    if spin_us is None:
        anyio.run(serve_stdio, server)
    else:
        anyio.run(partial(serve_stdio, server, spin=spin_us / 1_000_000))


if __name__ == "__main__":
    main()
