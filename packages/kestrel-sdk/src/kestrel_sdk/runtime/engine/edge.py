"""A forward session's edge: the last published bar of a tape that grows.

On a forward scenario (:mod:`..feed`) the engine trades up to the last bar it holds and
never stands down for reaching it: an advance that asks for a bar past the clock stands
down ``end-of-tape`` only when it starts at the tape's last bar, which the runtime lets
happen once the tape is frozen (before, :func:`unpublished` finds the bar and the
submission is refused ``BAR_NOT_PUBLISHED``, nothing applied). A ``tif day`` order's day
ends at the first bar of a later day, which may not be published when it is placed: it
is expired when that bar is processed (before matching there), so whether the edge lay
at the day's last bar never changes what a session did. Both rules depend only on bars
at or before the clock, so a replay on the frozen tape reproduces every frame.

Every frame of a forward session carries the root of the tape's prefix up to its clock
(:func:`forward_roots`), so its root binds the bars the session was shown.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..catalog.forward_tape import bar_epoch, prefix_link
from ..catalog.model import LoadedScenario
from ..catalog.tapes import render_tape
from ..catalog.terms import INTERVAL_SECONDS
from ..lang.syntax import Advance, StandDownStatement, Statement

__all__ = ["forward_roots", "unpublished"]


def forward_roots(loaded: LoadedScenario) -> Sequence[str]:
    """The root of the prefix ending with each bar of a forward scenario's tape: the
    declared prefix's root for its bars, then the chain over each appended bar (those
    the feed read with the bars when it has them, else computed from the tape)."""
    known = loaded.prefix_roots
    if known is not None and len(known) == len(loaded.tape):
        return known
    forward = loaded.scenario.forward_tape
    assert forward is not None
    tape = loaded.tape
    lines = render_tape(tape).splitlines(keepends=True)[1:]
    width = len(tape.symbols)
    roots = [forward.head] * min(forward.bars, len(tape))
    prev = forward.head
    for index in range(forward.bars, len(tape)):
        prev = prefix_link(index, prev, "".join(lines[index * width : (index + 1) * width]))
        roots.append(prev)
    loaded.prefix_roots = roots
    return roots


def unpublished(
    statements: Sequence[Statement], clock: int, last: int, times: Sequence[str], interval: str
) -> tuple[str, int] | None:
    """The first bar ``statements`` would advance to that is past ``last`` (the edge),
    named as the source names it, with the bars the tape must hold for it (for ``advance
    to T``, enough bars an ``interval`` apart to reach ``T``: a gap in the tape reaches
    it sooner); ``None`` when every one is published."""
    for st in statements:
        if isinstance(st, StandDownStatement):
            break
        if not isinstance(st, Advance):
            continue
        if st.to is not None:
            if st.to > times[last]:
                step = INTERVAL_SECONDS[interval]
                ahead = -(-(bar_epoch(st.to) - bar_epoch(times[last])) // step)
                return f"the bar at {st.to}", last + 1 + ahead
            clock = max(clock, bisect_right(times, st.to) - 1)
        else:
            wanted = clock + (st.count or 1)
            if wanted > last:
                return f"bar {wanted}", wanted + 1
            clock = wanted
    return None
