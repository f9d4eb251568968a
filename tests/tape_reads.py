"""An instrument for a door's process: every request for a published forward tape counted.

:func:`install` (run in the door's process before it serves: ``serve_door(setup=…)``)
wraps the runtime's :meth:`~kestrel_sdk.runtime.Runtime.published_tape`, which the door's
``GET /v1/feeds/{id}/tape`` calls once a request, so that each call first appends the
scenario's id as a line to :data:`TAPE_READS` in the door's home; :func:`tape_reads`
reads them back in the test's process.
"""

from __future__ import annotations

from pathlib import Path

from kestrel_sdk.runtime import Runtime

__all__ = ["TAPE_READS", "install", "setup", "tape_reads"]

TAPE_READS = "tape.reads"
"""The file (in the door's home) a line is appended to per request for a tape."""


def install(home: str) -> None:
    """Count, in ``home``'s :data:`TAPE_READS`, every request for a published tape."""
    served = Runtime.published_tape

    def counted(runtime: Runtime, scenario_id: str) -> str:
        with (Path(home) / TAPE_READS).open("a", encoding="utf-8") as reads:
            reads.write(scenario_id + "\n")
        return served(runtime, scenario_id)

    Runtime.published_tape = counted  # type: ignore[method-assign,assignment]


def setup(home: Path) -> str:
    """The ``setup`` for :func:`tests.doors.serve_door` that installs the count."""
    return f"import tests.tape_reads as reads; reads.install({str(home)!r})"


def tape_reads(home: Path) -> list[str]:
    """The scenario of every request for a tape the door in ``home`` has answered."""
    path = home / TAPE_READS
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
