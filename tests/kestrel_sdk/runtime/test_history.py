"""History: exactly the tape's last N bars up to the clock bar, never a bar after it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime import Runtime

pytestmark = pytest.mark.anyio

CSV_PATH = (
    Path(__file__).parents[3] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data/pairs-kx"
) / "tape.csv"


def _csv_rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(CSV_PATH.read_text("utf-8"))))


def _as_csv(bar: dict[str, object]) -> dict[str, str]:
    return {k: str(bar[k]) for k in ("time", "symbol", "open", "high", "low", "close", "volume")}


async def test_history_is_the_csv_rows_up_to_the_clock(tmp_path: Path) -> None:
    rows = _csv_rows()
    symbols = sorted({r["symbol"] for r in rows})
    times = sorted({r["time"] for r in rows})
    async with create_sdk(local_transport(tmp_path)) as sdk:
        opened = await sdk.open_session("pairs-kx")
        assert opened.session is not None
        session = opened.session
        first = await session.history(5)
        assert [_as_csv(b.to_json()) for b in first.bars] == rows[: len(symbols)]  # bar 0 only
        await session.submit("advance 40")
        for n in (1, 7, 41, 1000):
            got = await session.history(n)
            clock = got.clock.bar
            assert clock == 40
            assert got.clock.time == times[40]
            want = [r for r in rows if times[max(0, clock - n + 1)] <= r["time"] <= times[clock]]
            assert [_as_csv(b.to_json()) for b in got.bars] == want
            assert max(b.time for b in got.bars) == got.clock.time
        one = await session.history(3, symbols[1])
        assert [_as_csv(b.to_json()) for b in one.bars] == [
            r for r in rows if r["symbol"] == symbols[1] and times[38] <= r["time"] <= times[40]
        ]
        frame = (await session.frame()).frame
        for symbol, bar in frame.bars.items():
            row = next(r for r in rows if r["symbol"] == symbol and r["time"] == times[40])
            assert (bar.open, bar.high, bar.low, bar.close, str(bar.volume)) == (
                row["open"],
                row["high"],
                row["low"],
                row["close"],
                row["volume"],
            )
            assert frame.marks[symbol] == bar.close
        await session.close()  # a closed session's history ends at its head's clock
        assert (await session.history(2)).bars[-1].time == times[40]


async def test_history_refuses_bad_counts_and_unknown_symbols(tmp_path: Path) -> None:
    async with create_sdk(local_transport(tmp_path)) as sdk:
        opened = await sdk.open_session("acme-trend")
        assert opened.session is not None
        for bad in (0, 1001):
            with pytest.raises(KestrelError) as caught:
                await opened.session.history(bad)
            assert caught.value.code == "INVALID_ARGUMENT"
            assert "bars" in caught.value.message
        with pytest.raises(KestrelError) as caught:
            await opened.session.history(3, "NOPE")
        assert caught.value.code == "INVALID_ARGUMENT"
        assert "NOPE" in caught.value.message
        assert "ACME" in caught.value.message


def test_runtime_history_checks_its_count(tmp_path: Path) -> None:
    rt = Runtime(tmp_path)
    sid = rt.open_session("local", "acme-trend").session_id
    assert sid is not None
    with pytest.raises(KestrelError, match="bars must be 1 to 1000"):
        rt.history("local", sid, 0)
    rt.shutdown()
