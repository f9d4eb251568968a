"""Serve kestrel-mcp over stdio on a real local runtime whose grade waits at most
``--grade-budget`` seconds per call (for subprocess tests of progress).

Usage: python budget_server.py HOME --grade-budget SECONDS

The real grade is paused after each replayed pentad until a resumption has reported
that progress (which the server then sends as ``notifications/progress``): on a fast
machine (the compiled engine replays 100,000 bars in milliseconds) a grade would
otherwise finish between two polls, and whether the client sees rising progress would
be a race.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import anyio
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio
from kestrel_protocol import OperationResumption
from kestrel_protocol.ports import Transport
from kestrel_protocol.surface import Tool
from kestrel_sdk import local_transport
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.engine import compute_grade


def _hold_until_reported(transport: Transport) -> None:
    """Watch resumptions at the transport (a Python object on either engine: the
    compiled ``Runtime`` takes no instance attributes) and hold the grade there."""
    reported = threading.Condition()
    shown = [0]  # the most progress a resumption has reported
    invoke = transport.invoke

    async def reporting_invoke(tool: Tool, arguments: Any) -> Any:
        result = await invoke(tool, arguments)
        resumed = tool.runs is not None and tool.runs.method == "resume"
        if resumed and isinstance(result, OperationResumption):
            with reported:
                shown[0] = max(shown[0], result.progress.done)
                reported.notify_all()
        return result

    def held_grade(loaded: Any, record: Any, pentads: Any, progress: Any, **kwargs: Any) -> Any:
        def told(done: int, total: int) -> None:
            progress(done, total)
            with reported:
                if done > 0 and not reported.wait_for(lambda: shown[0] >= done, 60):
                    raise RuntimeError(f"no resumption reported the grade's {done} bars")

        return compute_grade(loaded, record, pentads, told, **kwargs)

    setattr(transport, "invoke", reporting_invoke)  # noqa: B010 (an instance's method)
    setattr(grading_module, "compute_grade", held_grade)  # noqa: B010


def main() -> None:
    home = sys.argv[1]
    budget = float(sys.argv[sys.argv.index("--grade-budget") + 1])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    transport = local_transport(runtime=Runtime(home, grade_budget=budget))
    _hold_until_reported(transport)
    server = create_kestrel_mcp_server(transport, secrets=False)
    anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
