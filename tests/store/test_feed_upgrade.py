"""A store from before a forward tape's bars kept the clock read after their append
committed (``visible_by``; SQLite's schema 10, PostgreSQL's 6) is upgraded in place when
opened (issue 48, session 17).

Made here as that code left it (bars appended, then the column dropped and the schema
version set back), it is opened by this code: every bar is kept with its
``published_at``, the tape is served and traded, a new append is stamped both before and
after its commit, and a decision about an old bar arriving after its stamp is said
unconfirmed (no read after its commit was kept), never named late on a time the store
never read.
"""

from __future__ import annotations

from pathlib import Path

from kestrel_door.arrivals import forward_submissions
from kestrel_door.feeds import RuntimeFeeds
from kestrel_protocol.store_feed import Arrival
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.trust import check_order

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_time,
    bars,
    forward_catalog,
)
from tests.store.conftest import raw_sql

OLD = {"sqlite": ("schema", "10"), "postgresql": ("runtime", "6")}
FIRST, SECOND, THIRD = (f"2026-12-01T14:3{n}:00.000000Z" for n in (1, 2, 3))
AFTER_FIRST = "2026-12-01T14:31:00.500000Z"


def _old_store(url: str, catalog: Path, home: Path) -> None:
    """Bars 0 and 1 appended at ``FIRST``, bar 2 at ``SECOND``, in a store as the code
    before ``visible_by`` left it."""
    runtime = Runtime(home, [catalog], store=open_runtime_store(url))
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: FIRST)
    runtime.append_bars(SCENARIO_ID, bars(2), clock=lambda: SECOND)
    runtime.shutdown()
    raw = raw_sql(url)
    raw("ALTER TABLE {feed_bars} DROP COLUMN visible_by", ())
    key, version = OLD["sqlite" if url.startswith("sqlite:") else "postgresql"]
    raw("UPDATE {meta} SET value = ? WHERE key = ?", (version, key))


def test_a_store_from_before_visible_by_keeps_every_bar_and_answers(
    store_url: str, tmp_path: Path
) -> None:
    catalog = forward_catalog(tmp_path)
    _old_store(store_url, catalog, tmp_path / "home")
    runtime = Runtime(tmp_path / "home", [catalog], store=open_runtime_store(store_url))
    try:
        assert runtime.feed_published(SCENARIO_ID) == [
            (0, bar_time(0), FIRST, ""),
            (1, bar_time(1), FIRST, ""),
            (2, bar_time(2), SECOND, ""),
        ]
        assert runtime.feed_status(SCENARIO_ID).bars == 3
        opened = runtime.open_session("alice", SCENARIO_ID, "after")
        assert opened.session_id is not None
        runtime.submit("alice", opened.session_id, "advance 2")  # its bars are traded
        runtime.append_bars(SCENARIO_ID, bars(3), clock=lambda: THIRD)
        assert runtime.feed_published(SCENARIO_ID)[3] == (3, bar_time(3), THIRD, THIRD)

        published = RuntimeFeeds(runtime).published(SCENARIO_ID)
        submissions = forward_submissions([Arrival(1, AFTER_FIRST, 1)], published, 1)
        assert submissions == [
            {"seq": 1, "arrivedAt": AFTER_FIRST, "bar": 1, "barPublishedAt": FIRST}
        ]
        order = check_order({"forward": True, "submissions": submissions}, {"pentads": [{}]})
        assert order is not None
        assert order.decisions == 0
        assert order.unconfirmed == (
            "statement.predicate.submissions[seq 1]: expected a decision made before its "
            f"bar 1 was published ({FIRST}), found submission 1 arrived at {AFTER_FIRST}, "
            f"while the bar was being published ({FIRST}; the door read no time after its "
            "commit): whether it could be seen then is unknown",
        )
    finally:
        runtime.shutdown()
