"""Engine benchmark: Kestrel through the SDK vs backtesting.py on ``minute-200k``.

Run: ``uv run python benchmarks/engine.py [--runs 3] [--bars 199999]``.

(a) SMA(20) cross, 10 shares, long-only: one ``advance 1`` per bar through
    ``create_sdk(local_transport())`` (a temp home, so persistence is included), against
    backtesting.py's same strategy (signal on closes, market orders filled at the next
    open, commission 0.001, ``trade_on_close=False``). Reports steps/s, the peer's bars/s,
    the ratio and both final equities, which must agree within 0.01 %. Both sides compare
    close × 20 with the 20-close sum in integer cents, so a tie (close exactly on its
    SMA) is a tie on both sides; a float mean would turn some ties into crossings.
(b) four resting orders that never fill, then one ``advance N``: bars/s, against
    backtesting.py running the same four never-filling orders.

Medians of ``--runs`` runs. Ratios are Kestrel ÷ peer (higher is better for Kestrel).
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


def peer(df: pd.DataFrame, strategy: type[Strategy]) -> tuple[float, float]:
    """(bars/s, final equity) of backtesting.py on ``df``."""
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
        start = time.perf_counter()
        stats = bt.run()
        elapsed = time.perf_counter() - start
    return len(df) / elapsed, float(stats["Equity Final [$]"])


def _cents(mark: str) -> int:
    whole, _, frac = mark.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


async def kestrel_sma(steps: int) -> tuple[float, Decimal, int]:
    """(steps/s, final equity, steps) of the SMA-cross agent through the SDK."""
    with tempfile.TemporaryDirectory() as home:
        async with create_sdk(local_transport(home=home)) as sdk:
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
            start = time.perf_counter()
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
                long = bool(positions) and positions[0].qty > 0
                if response.disposition == "stood-down" or frame.clock.remaining == 0:
                    break
                close = _cents(frame.marks[SYMBOL])
                if len(window) == WINDOW:
                    running -= window[0]
                window.append(close)
                running += close
            elapsed = time.perf_counter() - start
            await session.close()
            return done / elapsed, Decimal(frame.account.equity), done


async def kestrel_resting(bars: int) -> float:
    """bars/s of one ``advance`` over four resting orders that never fill."""
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
            start = time.perf_counter()
            response = await session.submit(f"advance {bars}")
            elapsed = time.perf_counter() - start
            processed = response.delivery.frame.clock.bar - 0
            await session.close()
            return processed / elapsed


def median_of(runs: int, fn: Callable[[], Any]) -> list[Any]:
    return [fn() for _ in range(runs)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bars", type=int, default=199_999, help="bars to advance (≤ 199999)")
    args = parser.parse_args(argv)
    loaded = load_catalog().get(SCENARIO)
    assert loaded is not None
    tape = loaded.tape  # parse once, outside the timings
    steps = min(args.bars, len(tape) - 1)
    df = tape_frame(tape, steps + 1)

    a_runs = median_of(args.runs, lambda: anyio.run(kestrel_sma, steps))
    p_runs = median_of(args.runs, lambda: peer(df, SmaCross))
    k_steps = statistics.median(r[0] for r in a_runs)
    k_equity = a_runs[-1][1]
    p_bars = statistics.median(r[0] for r in p_runs)
    p_equity = Decimal(str(p_runs[-1][1]))
    diff = abs(k_equity - p_equity) / p_equity * 100

    b_runs = median_of(args.runs, lambda: anyio.run(kestrel_resting, steps))
    pb_runs = median_of(args.runs, lambda: peer(df, Resting))
    k_bars = statistics.median(b_runs)
    pb_bars = statistics.median(r[0] for r in pb_runs)

    print(f"minute-200k, {steps} bars, median of {args.runs} runs")
    print("(a) SMA(20) cross, 10 shares, one `advance 1` per bar through the SDK")
    print(f"    kestrel   {k_steps:12,.0f} steps/s   final equity {k_equity:.2f}")
    print(f"    backtest  {p_bars:12,.0f} bars/s    final equity {p_equity:.2f}")
    print(f"    ratio     {k_steps / p_bars:12.2f}x          equity diff {diff:.5f} %")
    print("(b) four resting never-filling orders, one `advance N`")
    print(f"    kestrel   {k_bars:12,.0f} bars/s")
    print(f"    backtest  {pb_bars:12,.0f} bars/s (same four orders)")
    print(f"    ratio     {k_bars / pb_bars:12.2f}x   (vs (a)'s peer {k_bars / p_bars:.2f}x)")
    ok = diff <= Decimal("0.01")
    if not ok:
        print("FAIL: final equities differ by more than 0.01 %", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
