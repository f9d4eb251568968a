"""When a forward bar's publication stamp is read, against when another process can see
the bar, on SQLite and a real PostgreSQL (issue 48, session 16).

An append writes its bars, reads the caller's clock (the door's) as its last statement
and commits. Another OS process appends here and is held, by events, after reading its
stamp and before its commit; this process looks meanwhile. What the order means for the
door's signed order of events (a decision is on time when it arrived before its bar's
stamp):

* the bar is never visible before its stamp: every reader sees it only after the commit,
  which follows the stamp, so a decision made once the bar could be seen arrived after
  the stamp and is named late (never hidden);
* the stamp precedes an instant at which the bar still could not be seen, by the
  commit's own duration: a submission arriving in that instant decided before its bar
  and is named late. One stamp cannot close both: read after the commit, a bar could be
  traded before its stamp (a late decision passed) unless no session traded an
  unstamped bar, and then the stamp's own commit makes the bar visible, after the stamp,
  as now. docs/door.md says so.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kestrel_door.arrivals import door_time
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog

AT = "2026-12-01T14:31:02.000000Z"

HELD = """
import sys
from kestrel_door.arrivals import door_time
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

runtime = Runtime(sys.argv[1], [sys.argv[2]], store=open_runtime_store(sys.argv[3]))


def held() -> str:  # the append's last statement: its bars are written, not committed
    at = door_time()
    print(at, flush=True)
    sys.stdin.readline()  # until the other process has looked
    return at


runtime.append_bars("fwd-live", sys.argv[4].encode(), clock=held)
"""


def test_a_bar_is_seen_only_after_its_stamp_which_precedes_it_by_the_commit_alone(
    tmp_path: Path, store_url: str
) -> None:
    forward_catalog(tmp_path)
    runtime = Runtime(
        tmp_path / "home", [tmp_path / "catalog"], store=open_runtime_store(store_url)
    )
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
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
        seen = [bar for bar, _, _ in runtime.feed_published(SCENARIO_ID)]
        looked = door_time()  # an agent's submission arriving now: the bar is not visible
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(60) == 0
    finally:
        other.kill()
    assert (held, seen) == (1, [0])  # bar 1 stamped, and unseen here until its commit
    published = runtime.feed_published(SCENARIO_ID)
    assert published[1][0] == 1
    assert published[1][2] == stamp  # the stamp read before the commit
    assert stamp < looked  # it precedes an instant at which the bar could not be seen
    runtime.shutdown()
