"""How ``kestrel run`` sends a program (one submission, or :mod:`.plan`'s chunks), and
``--wait DURATION``: trade a forward scenario's window as its bars come.

On a forward scenario (its tape grows while agents trade) a submission that needs a bar
not yet published is refused ``BAR_NOT_PUBLISHED`` (retryable; nothing applied). With
``--wait``, each submission of the run asks the runtime to wait for its bars (the
submit's own ``wait``, at most :data:`WAIT_PER_SUBMISSION` seconds a call, as ``advance
1 wait 30s`` does) and is sent again after each such refusal, until its bars are
published, the feed is frozen (the submission then applies, standing down
``end-of-tape`` past the tape's end) or the run has waited ``DURATION`` in all; then the
refusal is the run's, the session left open as it stands. Nothing else changes: the same
submissions, so the same pentads and roots as a run that never had to wait; on any other
scenario nothing is ever waited for.
"""

from __future__ import annotations

from typing import Final

import anyio
from kestrel_protocol import SessionResponse

from ..client import KestrelSession
from ..errors import SdkError
from .plan import LONG_RUN_BARS, Chunk, estimate_bars, plan_chunks
from .show import progress_bar, stdout

__all__ = ["WAIT_PER_SUBMISSION", "send_program", "submit_waiting"]

WAIT_PER_SUBMISSION: Final = 300.0
"""The longest wait one submit asks for (the submit tool's own bound)."""


async def submit_waiting(
    session: KestrelSession, source: str, deadline: float | None
) -> SessionResponse:
    """``session.submit(source)``; with a ``deadline`` (:func:`anyio.current_time`), sent
    again after each retryable ``BAR_NOT_PUBLISHED``, each submit waiting for its bars,
    until it applies or the deadline has passed (then that refusal is raised)."""
    if deadline is None:
        return await session.submit(source)
    while True:
        left = deadline - anyio.current_time()
        try:
            return await session.submit(source, wait=min(max(left, 0.001), WAIT_PER_SUBMISSION))
        except SdkError as exc:
            retryable = exc.code == "BAR_NOT_PUBLISHED" and exc.detail.get("retryable")
            if not retryable or anyio.current_time() >= deadline:
                raise


async def send_program(
    session: KestrelSession, source: str, atomic: bool, quiet: bool, wait: float | None
) -> None:
    """Send ``source`` on ``session``: one submission, or the chunks of a long program
    (:mod:`.plan`) with a progress bar; with ``wait``, the submissions wait for their bars
    that many seconds in all."""
    deadline = None if not wait else anyio.current_time() + wait
    estimate = estimate_bars(source)
    if atomic or estimate < LONG_RUN_BARS:
        chunks = [Chunk(source, estimate)]
    else:
        chunks = plan_chunks(source)
    if len(chunks) == 1:
        if quiet:
            await submit_waiting(session, source, deadline)
        else:
            with stdout().status("running" if wait is None else "running (waiting for bars)"):
                await submit_waiting(session, source, deadline)
        return
    opening = (await session.frame()).frame.clock
    total = (estimate if opening.remaining is None else min(estimate, opening.remaining)) or None
    progress = progress_bar("bars", quiet)
    with progress:
        task = progress.add_task("run", total=total)
        for chunk in chunks:
            response = await submit_waiting(session, chunk.source, deadline)
            progress.update(task, completed=response.delivery.frame.clock.bar - opening.bar)
            if response.disposition == "stood-down":
                break
