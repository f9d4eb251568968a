"""When a forward bar's publication is stamped, against when another process can see the
bar, on SQLite and a real PostgreSQL, and the verdict the door's signed order of events
gives a decision arriving meanwhile (issue 48, sessions 16 and 17).

An append writes its bars, reads the caller's clock (the door's) as its last statement
and commits. Another OS process appends here and is held, by events, after reading that
stamp and before its commit; this process looks meanwhile, and an agent's submission
arrives then (the door's clock read here): the bar cannot be seen, so that agent decided
before it. With the stamp alone (session 16), the statement said the bar was published
before the submission arrived, and ``verify --trust`` named it late: an honest agent
wronged. The store now reads the clock again once the append has committed
(``visible_by``: every process can see the bar by then); the bar became visible between
the two reads, so a submission arriving between them is neither on time nor late: its
order is unconfirmed, said so in the words a late one is named with. One arriving before
the first read is on time, one after the second late, as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kestrel_door.arrivals import door_time, forward_submissions
from kestrel_door.feeds import RuntimeFeeds
from kestrel_protocol.store_feed import Arrival
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.trust import NotAttested, check_order

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_time,
    bars,
    forward_catalog,
)

AT = "2026-12-01T14:31:02.000000Z"

HELD = """
import sys
from kestrel_door.arrivals import door_time
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

runtime = Runtime(sys.argv[1], [sys.argv[2]], store=open_runtime_store(sys.argv[3]))
reads = []


def held() -> str:  # the append's clock: first read with its bars written, not committed
    reads.append(door_time())
    if len(reads) == 1:
        print(reads[0], flush=True)
        sys.stdin.readline()  # until the other process has looked
    return reads[-1]


runtime.append_bars("fwd-live", sys.argv[4].encode(), clock=held)
"""


def _verdict(runtime: Runtime, arrived_at: str) -> str:
    """What ``verify --trust``'s order check says of a session whose one submission,
    from bar 0 into bar 1, reached the door at ``arrived_at``, as the door signs it."""
    published = RuntimeFeeds(runtime).published(SCENARIO_ID)
    submissions = forward_submissions([Arrival(1, arrived_at, 1)], published, 1)
    assert submissions[0]["bar"] == 1
    predicate = {"forward": True, "submissions": submissions}
    try:
        order = check_order(predicate, {"pentads": [{}]})
    except NotAttested as exc:
        return f"late: {exc}"
    assert order is not None
    return f"unconfirmed: {order.unconfirmed[0]}" if order.unconfirmed else "on time"


def test_a_decision_arriving_while_its_bar_is_unseen_is_not_named_late(
    tmp_path: Path, store_url: str
) -> None:
    forward_catalog(tmp_path)
    runtime = Runtime(
        tmp_path / "home", [tmp_path / "catalog"], store=open_runtime_store(store_url)
    )
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    early = door_time()  # a submission arriving before the other process appends
    command = [sys.executable, "-c", HELD, str(tmp_path / "other"), str(tmp_path / "catalog")]
    other = subprocess.Popen(
        [*command, store_url, bars(1).decode()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdin is not None
    assert other.stdout is not None
    try:
        stamp = other.stdout.readline().strip()  # the other process has read its stamp
        assert stamp, "the other process did not append"
        held = runtime.feed_status(SCENARIO_ID).bars  # what a session here could trade
        seen = [bar for bar, *_ in runtime.feed_published(SCENARIO_ID)]
        looked = door_time()  # an agent's submission arriving now: the bar is not visible
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(60) == 0
    finally:
        other.kill()
    late = door_time()  # a submission arriving once the append has returned
    assert (held, seen) == (1, [0])  # bar 1 stamped, and unseen here until its commit
    assert stamp < looked < late
    said = _verdict(runtime, looked)
    assert said.startswith("unconfirmed: "), said  # was: named late, though it was unseen
    (_, _, published_at, visible_by) = runtime.feed_published(SCENARIO_ID)[1]
    assert published_at == stamp < looked < visible_by < late  # read before and after
    assert _verdict(runtime, early) == "on time"
    assert said == (
        "unconfirmed: statement.predicate.submissions[seq 1]: expected a decision made "
        f"before its bar 1 was published ({stamp}), found submission 1 arrived at {looked}, "
        f"while the bar was being published ({stamp}, visible by {visible_by}): whether "
        "it could be seen then is unknown"
    )
    assert _verdict(runtime, late) == (
        "late: statement.predicate.submissions[seq 1]: expected a decision made before its "
        f"bar 1 was published ({stamp}), found submission 1 arrived at {late}, once the bar "
        "could be seen"
    )
    runtime.shutdown()


def test_the_memory_store_reads_the_clock_before_and_after_a_bar_is_visible(
    tmp_path: Path,
) -> None:
    """In one process, a reader of the memory store takes its lock: the bar is visible
    once the append lets the lock go; the first read is taken holding it, the second
    after."""
    store = open_runtime_store("memory:")
    runtime = Runtime(tmp_path / "home", [forward_catalog(tmp_path)], store=store)
    reads: list[list[int]] = []

    def clock() -> str:
        reads.append([bar for bar, *_ in runtime.feed_published(SCENARIO_ID)])
        return f"2026-12-01T14:31:0{len(reads)}.000000Z"

    runtime.append_bars(SCENARIO_ID, bars(0), clock=clock)
    assert reads == [[], [0]]  # first read before bar 0 could be seen, second after
    assert runtime.feed_published(SCENARIO_ID) == [
        (0, bar_time(0), "2026-12-01T14:31:01.000000Z", "2026-12-01T14:31:02.000000Z")
    ]
    runtime.shutdown()
