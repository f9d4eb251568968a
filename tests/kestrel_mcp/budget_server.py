"""Serve kestrel-mcp over stdio on a real local runtime whose grade waits at most
``--grade-budget`` seconds per call (for subprocess tests of progress).

Usage: python budget_server.py HOME --grade-budget SECONDS

The real grade is paused after its first replayed pentad until a resumption has
reported that progress (which the server then sends as ``notifications/progress``):
on a fast machine a short grade would otherwise finish between two polls, and whether
the client sees rising progress would be a race.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import anyio
from kestrel_mcp import create_kestrel_mcp_server, serve_stdio
from kestrel_protocol import OperationResumption
from kestrel_sdk import local_transport
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.engine import compute_grade


def _hold_until_reported(runtime: Runtime) -> None:
    reported = threading.Event()
    resume = runtime.resume

    def reporting_resume(*args: Any, **kwargs: Any) -> Any:
        result = resume(*args, **kwargs)
        if isinstance(result, OperationResumption) and result.progress.done > 0:
            reported.set()
        return result

    def held_grade(loaded: Any, record: Any, pentads: Any, progress: Any, **kwargs: Any) -> Any:
        def told(done: int, total: int) -> None:
            progress(done, total)
            if done > 0 and not reported.wait(60):
                raise RuntimeError("no resumption reported the grade's progress")

        return compute_grade(loaded, record, pentads, told, **kwargs)

    setattr(runtime, "resume", reporting_resume)  # noqa: B010 (an instance's method)
    setattr(grading_module, "compute_grade", held_grade)  # noqa: B010


def main() -> None:
    home = sys.argv[1]
    budget = float(sys.argv[sys.argv.index("--grade-budget") + 1])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    runtime = Runtime(home, grade_budget=budget)
    _hold_until_reported(runtime)
    server = create_kestrel_mcp_server(local_transport(runtime=runtime), secrets=False)
    anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
