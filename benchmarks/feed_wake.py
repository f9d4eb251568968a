"""Publish-to-wake latency of ``advance 1 wait``'s waiter on PostgreSQL (issue 47).

    uv run python benchmarks/feed_wake.py [--bars 200] [--every 50] [--waiters 3]

A throwaway PostgreSQL cluster (``tests/postgres.py``); a publisher process appends one
bar every ``--every`` ms through the store's own append (``PostgresStore.append_feed``,
the one every face uses) and prints when each append had committed; in this process
``--waiters`` threads each wait for bar after bar, as test_forward_live's agents do
(each calls ``wait`` for the next bar as soon as the last returned), and note when they
woke. Two waiters are measured in turn:

- *poll*: the waiter before this change, re-reading ``feed_state`` every 20 ms;
- *notify*: ``kestrel_sdk.transports.feed_waiter.StoreFeedWaiter`` (one ``LISTEN``
  connection per process, woken by the append's ``NOTIFY``).

Printed per waiter: the latency from a bar's commit to a waiter's return (p50, p90, p99,
max; milliseconds, by the wall clock of the one machine), the store reads per second
of waiting, and the share of wakes that came after the next bar was already published
(a decision sent then is late whatever the agent does: a floor on the late share of
test_forward_live's setting).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the tests' helpers (postgres)

from kestrel_protocol.store import FeedBar, RuntimeStore  # noqa: E402
from kestrel_sdk.runtime.stores import open_runtime_store  # noqa: E402
from kestrel_sdk.transports.feed_waiter import StoreFeedWaiter  # noqa: E402

from tests import postgres  # noqa: E402

SCENARIO = "bench-forward"
PUBLISHER = """
import sys, time
from kestrel_protocol.store import FeedBar
from kestrel_sdk.runtime.stores import open_runtime_store
store = open_runtime_store(sys.argv[1])
first, bars, every = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
time.sleep(1.0)
for k in range(first, first + bars):
    store.append_feed("bench-forward", [FeedBar(k, f"t{k}", "r\\n", "p", "T")], lambda: "T")
    print(k, time.time(), flush=True)
    time.sleep(every)
"""


class PollWaiter:
    """The waiter before this change: ``feed_state`` read every 20 ms."""

    def __init__(self, store: RuntimeStore) -> None:
        self._store = store
        self.reads = 0

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while True:
            self.reads += 1
            state = self._store.feed_state(scenario_id)
            if state is not None and state.bars >= bars_needed:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(0.02, left))


class CountedWaiter(StoreFeedWaiter):
    """The waiter of this change, its store reads counted."""

    reads = 0

    def _enough(self, scenario_id: str, bars_needed: int) -> bool:
        self.reads += 1
        return super()._enough(scenario_id, bars_needed)


def _run(dsn: str, kind: str, first: int, *, bars: int, every: float, waiters: int) -> None:
    store = open_runtime_store(dsn)
    if first == 0:
        store.append_feed(SCENARIO, [FeedBar(0, "t0", "r\n", "p", "T")], lambda: "T")
        first = 1
    waiter = PollWaiter(store) if kind == "poll" else CountedWaiter(store)
    woke: list[dict[int, float]] = [{} for _ in range(waiters)]

    def agent(n: int) -> None:
        for k in range(first, first + bars):
            if waiter.wait(SCENARIO, k + 1, 30.0):
                woke[n][k] = time.time()

    command = [sys.executable, "-c", PUBLISHER, dsn, str(first), str(bars), str(every)]
    publisher = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    threads = [threading.Thread(target=agent, args=(n,)) for n in range(waiters)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    out, _ = publisher.communicate()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    published = {int(k): float(at) for k, at in (line.split() for line in out.splitlines())}
    latencies = [1000 * (w[k] - published[k]) for w in woke for k in w]
    late = sum(1 for w in woke for k in w if k + 1 in published and w[k] >= published[k + 1])
    q = statistics.quantiles(latencies, n=100)
    print(
        f"{kind:6} wakes {len(latencies)}: p50 {q[49]:.1f} ms, p90 {q[89]:.1f}, "
        f"p99 {q[98]:.1f}, max {max(latencies):.1f}; store reads/s {waiter.reads / elapsed:.0f}; "
        f"woke after the next bar: {100 * late / len(latencies):.1f} %"
    )
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bars", type=int, default=200)
    parser.add_argument("--every", type=float, default=50.0, help="ms between two bars")
    parser.add_argument("--waiters", type=int, default=3)
    args = parser.parse_args()
    with postgres.cluster() as cluster:
        dsn = cluster.schema()
        first = 0
        for kind in ("poll", "notify", "poll", "notify"):
            _run(dsn, kind, first, bars=args.bars, every=args.every / 1000, waiters=args.waiters)
            first = first + args.bars + (1 if first == 0 else 0)


if __name__ == "__main__":
    main()
