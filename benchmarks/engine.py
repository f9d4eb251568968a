"""Engine benchmark: Kestrel through the SDK vs backtesting.py on ``minute-200k``.

Run: ``uv run python benchmarks/engine.py [--runs 3] [--bars 199999] [--stores sqlite,memory]``.

(a) SMA(20) cross, 10 shares, long-only: one ``advance 1`` per bar through
    ``create_sdk(local_transport(store=...))`` on each store of ``--stores``: ``sqlite``
    (the default store, in a temp home: a committed transaction per step) and ``memory``
    (``memory:``, the store for training loops and sweeps), against
    backtesting.py's same strategy (signal on closes, market orders filled at the next
    open, commission 0.001, ``trade_on_close=False``). Reports steps/s, the peer's bars/s,
    the ratio and both final equities, which must agree within 0.01 %. Both sides compare
    close × 20 with the 20-close sum in integer cents, so a tie (close exactly on its
    SMA) is a tie on both sides; a float mean would turn some ties into crossings.
(b) four resting orders that never fill, then one ``advance N``: bars/s, against
    backtesting.py running the same four never-filling orders.
(c) the rest of (a)'s episode: the session's close (its record and every pentad stored)
    and its grade (a replay of every step, then the metrics), in process CPU per step of
    the session; then the whole episode (steps, close, grade) in steps/s against
    backtesting.py's run, which computes its statistics too.

Medians of ``--runs`` runs. Ratios are Kestrel ÷ peer (higher is better for Kestrel),
by wall clock and by process CPU time (the second is robust when other work shares the
machine's cores). Kestrel's runs and the peer's alternate (K, P, K, P, ...), and each
pair's ratio is printed too, with their median: on a shared virtual machine whose speed
drifts by half within minutes, a pair run back to back sees the same machine, where a
block of Kestrel runs followed by a block of the peer's may not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections import deque
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import anyio
import numpy as np
import pandas as pd  # type: ignore[import-untyped]
from backtesting import Backtest, Strategy  # type: ignore[import-untyped]
from backtesting.lib import crossover  # type: ignore[import-untyped]
from kestrel_protocol import SessionFrame
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.model import Tape

SCENARIO = "minute-200k"
SYMBOL = "ACME"
WINDOW = 20
QTY = 10
CASH = 100_000
COMMISSION = 0.001


def tape_frame(tape: Tape, bars: int) -> pd.DataFrame:
    """The first ``bars`` bars as the OHLCV DataFrame backtesting.py expects."""
    cols = tape.columns[SYMBOL]
    unit = 10**tape.scale
    index = pd.DatetimeIndex([t.rstrip("Z") for t in tape.times[:bars]])
    return pd.DataFrame(
        {
            "Open": [v / unit for v in cols.open[:bars]],
            "High": [v / unit for v in cols.high[:bars]],
            "Low": [v / unit for v in cols.low[:bars]],
            "Close": [v / unit for v in cols.close[:bars]],
            "Volume": list(cols.volume[:bars]),
        },
        index=index,
    )


def _cents_array(values: Any) -> Any:
    return np.round(np.asarray(values, dtype=float) * 100)


def _window_sum(values: Any) -> Any:
    """Σ of the last WINDOW closes in cents: SMA × WINDOW, exact in floats (integers)."""
    return pd.Series(_cents_array(values)).rolling(WINDOW).sum().to_numpy()


def _scaled_close(values: Any) -> Any:
    """Close in cents × WINDOW, comparable exactly with :func:`_window_sum`."""
    return _cents_array(values) * WINDOW


class SmaCross(Strategy):  # type: ignore[misc]
    """Close crossing its SMA(20), compared exactly (a float mean can flip a tie)."""

    def init(self) -> None:
        self.total = self.I(_window_sum, self.data.Close)
        self.scaled = self.I(_scaled_close, self.data.Close)

    def next(self) -> None:
        if crossover(self.scaled, self.total):
            if not self.position:
                self.buy(size=QTY)
        elif crossover(self.total, self.scaled) and self.position:
            self.position.close()


class Resting(Strategy):  # type: ignore[misc]
    def init(self) -> None:
        pass

    def next(self) -> None:
        if len(self.data) == 1:
            self.buy(size=1, limit=0.01)
            self.buy(size=1, stop=1_000_000)
            self.sell(size=1, limit=1_000_000)
            self.sell(size=1, stop=0.01)


class Clock:
    """Wall and process-CPU time since creation: CPU rates are robust on a busy machine."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def rates(self, count: int) -> tuple[float, float]:
        wall = time.perf_counter() - self.wall
        cpu = time.process_time() - self.cpu
        return count / wall, count / max(cpu, 1e-9)


def peer(df: pd.DataFrame, strategy: type[Strategy]) -> tuple[float, float, float]:
    """(bars/s wall, bars/s CPU, final equity) of backtesting.py on ``df``."""
    bt = Backtest(
        df,
        strategy,
        cash=CASH,
        commission=COMMISSION,
        trade_on_close=False,
        exclusive_orders=False,
        finalize_trades=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clock = Clock()
        stats = bt.run()
        wall, cpu = clock.rates(len(df))
    return wall, cpu, float(stats["Equity Final [$]"])


def _cents(mark: str) -> int:
    whole, _, frac = mark.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


STORES = {"sqlite": None, "memory": "memory:"}
"""The stores (a) runs on: the name on the command line, the ``store=`` it passes."""


async def kestrel_sma(steps: int, store: str) -> tuple[float, float, Decimal, float, float]:
    """(steps/s wall, steps/s CPU, final equity, close and grade CPU seconds) of the
    SMA-cross agent through the SDK on ``store`` (a name of :data:`STORES`)."""
    with tempfile.TemporaryDirectory() as home:
        async with create_sdk(local_transport(home=home, store=STORES[store])) as sdk:
            opened = await sdk.open_session(SCENARIO)
            assert opened.session is not None
            session = opened.session
            frame: SessionFrame = (await session.frame()).frame
            close = _cents(frame.marks[SYMBOL])
            window: deque[int] = deque([close], maxlen=WINDOW)
            running = close
            prev: tuple[int, int] | None = None
            long = False
            done = 0
            submit = session.submit
            clock = Clock()
            while done < steps:
                order = ""
                if len(window) == WINDOW:
                    now = (close * WINDOW, running)
                    if prev is not None:
                        if prev[0] < prev[1] and now[0] > now[1]:
                            if not long:
                                order = f"buy {QTY} {SYMBOL}\n"
                        elif prev[0] > prev[1] and now[0] < now[1] and long:
                            order = f"sell {QTY} {SYMBOL}\n"
                    prev = now
                response = await submit(order + "advance 1")
                done += 1
                frame = response.delivery.frame
                positions = frame.positions
                long = bool(positions) and int(positions[0].qty) > 0
                if response.disposition == "stood-down" or frame.clock.remaining == 0:
                    break
                close = _cents(frame.marks[SYMBOL])
                if len(window) == WINDOW:
                    running -= window[0]
                window.append(close)
                running += close
            wall, cpu = clock.rates(done)
            closing = time.process_time()
            await session.close()
            grading = time.process_time()
            graded = await sdk.grade_until_done(session.id)
            assert graded.kind == "kestrel.grade"
            done_at = time.process_time()
            equity = Decimal(frame.account.equity)
            return wall, cpu, equity, grading - closing, done_at - grading


async def kestrel_resting(bars: int) -> tuple[float, float]:
    """(bars/s wall, bars/s CPU) of one ``advance`` over four resting orders."""
    with tempfile.TemporaryDirectory() as home:
        async with create_sdk(local_transport(home=home)) as sdk:
            opened = await sdk.open_session(SCENARIO)
            assert opened.session is not None
            session = opened.session
            await session.submit(
                f"buy 1 {SYMBOL} limit 0.01 tif gtc\n"
                f"buy 1 {SYMBOL} stop 1000000 tif gtc\n"
                f"sell 1 {SYMBOL} limit 1000000 tif gtc\n"
                f"sell 1 {SYMBOL} stop 0.01 tif gtc\n"
            )
            clock = Clock()
            response = await session.submit(f"advance {bars}")
            rates = clock.rates(response.delivery.frame.clock.bar)
            await session.close()
            return rates


def alternate(
    runs: int, ours: Callable[[], Any], theirs: Callable[[], Any]
) -> tuple[list[Any], list[Any]]:
    """``runs`` results of each, run in pairs back to back (ours, then theirs)."""
    mine: list[Any] = []
    peers: list[Any] = []
    for _ in range(runs):
        mine.append(ours())
        peers.append(theirs())
    return mine, peers


def pair_ratios(mine: list[Any], peers: list[Any], index: int) -> str:
    """Each pair's ratio of member ``index`` (a rate), and their median."""
    ratios = [m[index] / p[index] for m, p in zip(mine, peers, strict=True)]
    shown = " ".join(f"{r:.2f}x" for r in ratios)
    return f"{shown} (median {statistics.median(ratios):.2f}x)"


def sma(store: str, runs: int, steps: int, df: pd.DataFrame) -> bool:
    """Run and print (a) and (c) on ``store``; whether the final equities agree."""
    a_runs, p_runs = alternate(
        runs, lambda: anyio.run(kestrel_sma, steps, store), lambda: peer(df, SmaCross)
    )
    k_wall, k_cpu = (statistics.median(r[i] for r in a_runs) for i in (0, 1))
    p_wall, p_cpu = (statistics.median(r[i] for r in p_runs) for i in (0, 1))
    k_equity = a_runs[-1][2]
    close_us = statistics.median(r[3] for r in a_runs) / steps * 1e6
    grade_us = statistics.median(r[4] for r in a_runs) / steps * 1e6
    episode = 1 / (1 / k_cpu + (close_us + grade_us) / 1e6)
    p_equity = Decimal(str(p_runs[-1][2]))
    diff = abs(k_equity - p_equity) / p_equity * 100
    print(f"(a) SMA(20) cross, 10 shares, one `advance 1` per bar through the SDK, {store} store")
    print(f"    kestrel   {k_wall:12,.0f} | {k_cpu:12,.0f} steps/s   equity {k_equity:.2f}")
    print(f"    backtest  {p_wall:12,.0f} | {p_cpu:12,.0f} bars/s    equity {p_equity:.2f}")
    print(
        f"    ratio     {k_wall / p_wall:11.2f}x | {k_cpu / p_cpu:11.2f}x"
        f"            equity diff {diff:.5f} %"
    )
    print(f"    pairs, by CPU: {pair_ratios(a_runs, p_runs, 1)}")
    print(f"(c) the rest of (a)'s episode, process CPU per step of the session, {store} store")
    print(f"    close {close_us:8.1f} us   grade {grade_us:8.1f} us")
    print(
        f"    episode   {episode:12,.0f} steps/s (steps, close, grade) vs backtest"
        f" {p_cpu:12,.0f}: {episode / p_cpu:.2f}x"
    )
    if diff > Decimal("0.01"):
        print(f"FAIL ({store}): final equities differ by more than 0.01 %", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bars", type=int, default=199_999, help="bars to advance (≤ 199999)")
    parser.add_argument(
        "--stores", default="sqlite,memory", help="(a)'s stores, comma-separated: sqlite, memory"
    )
    args = parser.parse_args(argv)
    stores = [name.strip() for name in args.stores.split(",") if name.strip()]
    if not stores or any(name not in STORES for name in stores):
        parser.error(f"--stores: comma-separated names of {', '.join(STORES)}")
    loaded = load_catalog().get(SCENARIO)
    assert loaded is not None
    tape = loaded.tape  # parse once, outside the timings
    steps = min(args.bars, len(tape) - 1)
    df = tape_frame(tape, steps + 1)

    print(f"minute-200k, {steps} bars, median of {args.runs} runs (wall clock | process CPU)")
    ok = True
    for store in stores:
        ok = sma(store, args.runs, steps, df) and ok

    b_runs, pb_runs = alternate(
        args.runs, lambda: anyio.run(kestrel_resting, steps), lambda: peer(df, Resting)
    )
    b_wall, b_cpu = (statistics.median(r[i] for r in b_runs) for i in (0, 1))
    pb_wall, pb_cpu = (statistics.median(r[i] for r in pb_runs) for i in (0, 1))
    print("(b) four resting never-filling orders, one `advance N`")
    print(f"    kestrel   {b_wall:12,.0f} | {b_cpu:12,.0f} bars/s")
    print(f"    backtest  {pb_wall:12,.0f} | {pb_cpu:12,.0f} bars/s (same four orders)")
    print(f"    ratio     {b_wall / pb_wall:11.2f}x | {b_cpu / pb_cpu:11.2f}x")
    print(f"    pairs, by CPU: {pair_ratios(b_runs, pb_runs, 1)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
