"""Serve kestrel-mcp over stdio on a real local runtime whose grade waits at most
``--grade-budget`` seconds per call (for subprocess tests of progress).

Usage: python budget_server.py HOME --grade-budget SECONDS
"""

from __future__ import annotations

import logging
import sys

import anyio
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio
from kestrel_sdk import local_transport
from kestrel_sdk.runtime import Runtime


def main() -> None:
    home = sys.argv[1]
    budget = float(sys.argv[sys.argv.index("--grade-budget") + 1])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    runtime = Runtime(home, grade_budget=budget)
    server = create_kestrel_mcp_server(local_transport(runtime=runtime), secrets=False)
    anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
