"""The forward-tape part of the ``RuntimeStore`` contract, on SQLite, PostgreSQL and
memory alike: a batch of bars is published all or none, an index taken by another writer
is refused with nothing written, a frozen feed takes no bar, and a second process on the
same database sees at once what the first published."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from kestrel_protocol.store import RuntimeStore
from kestrel_protocol.store_feed import FeedBar, FeedConflict, FeedStatus
from kestrel_sdk.runtime.stores import open_runtime_store

ROOT = "sha256:" + "b" * 64


AT = "2026-12-01T10:00:00Z"


def _bar(index: int, published_at: str = "", close: str = "100.00") -> FeedBar:
    """Bar ``index`` as given to an append, or as stored once stamped ``published_at``
    by a clock that read it both before the commit and after."""
    time = f"2026-12-01T10:{index:02d}:00Z"
    rows = f"{time},ACME,100.00,101.00,99.00,{close},500\n"
    return FeedBar(index, time, rows, ROOT, published_at, published_at)


def _at(at: str = AT) -> Callable[[], str]:
    return lambda: at


def _never() -> str:
    raise AssertionError("a batch refused read the clock")


@pytest.fixture
def store(runtime_store_url: str) -> Iterator[RuntimeStore]:
    opened = open_runtime_store(runtime_store_url)
    yield opened
    opened.close()


def test_a_batch_is_published_in_order_and_read_from_an_index(store: RuntimeStore) -> None:
    assert store.feed_state("fwd") is None
    assert store.feed_bars("fwd") == []
    store.append_feed("fwd", [_bar(0), _bar(1)], _at())
    store.append_feed("fwd", [_bar(2)], _at("2026-12-01T10:02:01Z"))
    assert store.feed_bars("fwd") == [_bar(0, AT), _bar(1, AT), _bar(2, "2026-12-01T10:02:01Z")]
    assert [bar.index for bar in store.feed_bars("fwd", after=1)] == [1, 2]
    assert store.feed_state("fwd") == FeedStatus(3, "2026-12-01T10:02:00Z", ROOT, False, False)
    assert store.feed_bars("other") == []  # per scenario


def test_a_batch_is_stamped_before_its_commit_and_after_it(store: RuntimeStore) -> None:
    readings: list[tuple[str, list[int]]] = []

    def clock() -> str:  # what this store showed when its clock was read
        readings.append((f"2026-12-01T10:00:0{7 + len(readings)}.000001Z", []))
        readings[-1][1].extend(bar.index for bar in store.feed_bars("fwd"))
        return readings[-1][0]

    store.append_feed("fwd", [_bar(0)], _at())
    store.append_feed("fwd", [_bar(1), _bar(2)], clock)
    # two readings (a batch refused reads none: _never below): the first as the last
    # thing before the commit (test_stamp_order: unseen by another process), the second
    # once the batch could be seen
    assert [at for at, _ in readings] == [
        "2026-12-01T10:00:07.000001Z",
        "2026-12-01T10:00:08.000001Z",
    ]
    assert readings[1][1] == [0, 1, 2]
    stored = [(bar.published_at, bar.visible_by) for bar in store.feed_bars("fwd")]
    first, second = (at for at, _ in readings)
    assert stored == [(AT, AT), (first, second), (first, second)]


def test_a_batch_meeting_a_taken_index_writes_nothing(store: RuntimeStore) -> None:
    store.append_feed("fwd", [_bar(0), _bar(1)], _at())
    with pytest.raises(FeedConflict):  # another writer published bar 1 first
        store.append_feed("fwd", [_bar(1, close="100.50"), _bar(2), _bar(3)], _never)
    assert [bar.index for bar in store.feed_bars("fwd")] == [0, 1]
    assert store.feed_bars("fwd")[1] == _bar(1, AT)  # the first publication stands


def test_a_frozen_feed_takes_no_bar_and_its_flags_are_kept(store: RuntimeStore) -> None:
    store.append_feed("fwd", [_bar(0)], _at())
    store.set_feed_state("fwd", frozen=True)
    with pytest.raises(FeedConflict):
        store.append_feed("fwd", [_bar(1)], _never)
    assert store.feed_state("fwd") == FeedStatus(1, _bar(0).time, ROOT, True, False)
    store.set_feed_state("fwd", unsealed=True)  # only the flag given changes
    assert store.feed_state("fwd") == FeedStatus(1, _bar(0).time, ROOT, True, True)
    store.set_feed_state("empty", frozen=True)  # a feed frozen before any bar
    assert store.feed_state("empty") == FeedStatus(0, "", "", True, False)


OTHER = """
import sys
from kestrel_protocol.store_feed import FeedBar
from kestrel_sdk.runtime.stores import open_runtime_store
store = open_runtime_store(sys.argv[1])
bar = FeedBar(int(sys.argv[2]), "T", "rows\\n", "R", "P")
store.append_feed("fwd", [bar], lambda: "P")
store.close()
"""


def test_a_process_sees_at_once_what_another_published(store_url: str) -> None:
    store = open_runtime_store(store_url)  # SQLite and PostgreSQL: a memory store is one process's
    store.append_feed("fwd", [_bar(0)], _at())
    for index in (1, 2):
        subprocess.run([sys.executable, "-c", OTHER, store_url, str(index)], check=True)
        assert [bar.index for bar in store.feed_bars("fwd")] == list(range(index + 1))
    assert store.feed_bars("fwd", after=2) == [FeedBar(2, "T", "rows\n", "R", "P", "P")]
    with pytest.raises(FeedConflict):  # and an index it took is refused here
        store.append_feed("fwd", [_bar(2)], _never)
    store.close()
